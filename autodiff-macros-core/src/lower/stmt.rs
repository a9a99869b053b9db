//! Statements: `let`, assignments, `if`, blocks.

use super::control::strip as strip_expr;
use super::iter::expr_span;
use super::*;

/// What becomes of the tail expression of a list of statements.
#[derive(Clone, Copy)]
pub(super) enum Tail {
    /// A statement block: there is none.
    Discard,
    /// A block used as a value: the tail is the value.
    Value,
    /// The function body when it may `return` early: the tail is the result.
    Return,
}

impl Lowering {
    // ----- statements --------------------------------------------------------------------

    /// The statements of a block (scoped), and its tail value when `needs_value`.
    pub(super) fn block_value(&mut self, block: &syn::Block, needs_value: bool) -> Option<NodeId> {
        self.scopes.push();
        let span = block.brace_token.span.join();
        let tail = if needs_value {
            Tail::Value
        } else {
            Tail::Discard
        };
        let mut value = self.statements(&block.stmts, tail, span);
        self.scopes.pop();
        if needs_value && value.is_none() {
            value = Some(self.error(block, "this block must end with the value it produces"));
        }
        value
    }

    /// The statements of a loop body, in the current scope, with no value.
    pub(super) fn block_statements(&mut self, stmts: &[syn::Stmt]) {
        let span = Span::call_site();
        self.statements(stmts, Tail::Discard, span);
    }

    /// Statements in order. After one that may set a control flag (`break`, `continue`,
    /// `return`), the rest run under `if !flag { … }`.
    pub(super) fn statements(
        &mut self,
        stmts: &[syn::Stmt],
        tail: Tail,
        span: Span,
    ) -> Option<NodeId> {
        for (position, stmt) in stmts.iter().enumerate() {
            let last = position + 1 == stmts.len();
            if last {
                if let syn::Stmt::Expr(expr, None) = stmt {
                    if !is_statement_only(expr) {
                        match tail {
                            Tail::Value => return Some(self.expr(expr)),
                            Tail::Return => {
                                self.assign_result(expr);
                                return None;
                            }
                            Tail::Discard => {}
                        }
                    }
                }
            }
            let before = self.flags_set.len();
            self.statement(stmt);
            let rest = &stmts[position + 1..];
            if rest.is_empty() {
                break;
            }
            let live = self.live_flags(before);
            if live.is_empty() {
                continue;
            }
            // The rest runs only while no flag is set.
            let temp = matches!(tail, Tail::Value).then(|| self.temporary(span));
            let (cond, nodes) = self.collect(|this| this.none_set(&live, span));
            let then = self.nested_block(|this| {
                let value = this.statements(rest, tail, span);
                if let (Some(temp), Some(value)) = (temp, value) {
                    let (value, nodes) = this.collect(|this| this.expect_real_at(value, span));
                    this.assign_var(temp, value, nodes);
                }
            });
            self.emit(Stmt::If {
                cond,
                nodes,
                then,
                otherwise: Vec::new(),
            });
            return temp.map(|temp| self.read_var(temp, span));
        }
        None
    }

    /// `result = value` for the function's tail when it may also `return` early.
    fn assign_result(&mut self, expr: &Expr) {
        let Some((result, _)) = self.early_return else {
            return;
        };
        let before = self.flags_set.len();
        let (value, nodes) = self.collect(|this| this.real(expr));
        let assign = Stmt::Assign {
            place: Place {
                var: result,
                indices: Vec::new(),
            },
            value,
            nodes,
        };
        self.emit_unless_left(before, assign, expr_span(expr));
    }

    /// `var = value` for a whole variable.
    pub(super) fn assign_var(&mut self, var: VarId, value: NodeId, nodes: Vec<NodeId>) {
        self.emit(Stmt::Assign {
            place: Place {
                var,
                indices: Vec::new(),
            },
            value,
            nodes,
        });
    }

    pub(super) fn statement(&mut self, stmt: &syn::Stmt) {
        match stmt {
            syn::Stmt::Local(local) => self.local(local),
            syn::Stmt::Item(item @ (Item::Const(_) | Item::Use(_))) => {
                self.items.push(item.clone());
            }
            syn::Stmt::Item(item) => {
                self.error(
                    item,
                    "#[grad] supports only `const` and `use` items inside the function; \
                     move other items out of it",
                );
            }
            syn::Stmt::Macro(mac) => {
                self.error(
                    &mac.mac,
                    "#[grad] cannot look inside macro calls; write the expression out",
                );
            }
            syn::Stmt::Expr(expr, _) => self.expr_statement(expr),
        }
    }

    pub(super) fn expr_statement(&mut self, expr: &Expr) {
        match expr {
            Expr::Assign(assign) => {
                if !self.array_assignment_statement(assign) {
                    self.assignment(&assign.left, None, &assign.right);
                }
            }
            Expr::Binary(binary) if compound_operator(&binary.op).is_some() => {
                self.assignment(&binary.left, Some(binary), &binary.right);
            }
            Expr::Block(block) if block.label.is_none() => {
                self.block_value(&block.block, false);
            }
            Expr::If(expr_if) => self.if_statement(expr_if, None),
            Expr::ForLoop(for_loop) => self.for_loop(for_loop),
            Expr::While(expr) => self.while_loop(expr),
            Expr::Loop(expr) => self.loop_expr(expr, None),
            Expr::Match(expr) => self.match_expr(expr, None),
            Expr::Break(expr) => {
                self.break_expr(expr);
            }
            Expr::Continue(expr) => {
                self.continue_expr(expr);
            }
            Expr::Return(expr) => {
                self.return_expr(expr);
            }
            Expr::MethodCall(call) if call.method == "push" => self.push_statement(call),
            // `step(&mut y, dt);`: `y = __step_inplace(y, dt);` (see `written`).
            Expr::Call(call) if self.written_call(call) => {}
            Expr::Paren(paren) => self.expr_statement(&paren.expr),
            Expr::Group(group) => self.expr_statement(&group.expr),
            expr => {
                // Evaluated for its own sake (a call may have effects); the value is dropped.
                let ((), nodes) = self.collect(|this| {
                    this.expr(expr);
                });
                self.emit(Stmt::Eval { nodes });
            }
        }
    }

    /// `target = value`, or `target op= value` when `compound` is given.
    pub(super) fn assignment(
        &mut self,
        target: &Expr,
        compound: Option<&syn::ExprBinary>,
        value: &Expr,
    ) {
        let before = self.flags_set.len();
        let (assigned, nodes) = self.collect(|this| {
            let place = this.place(target)?;
            let var = place.var;
            let rhs = if this.vars[var].kind == VarKind::Real {
                this.real(value)
            } else {
                let rhs = this.expr(value);
                let promote = this.vars[var].kind == VarKind::Int
                    && this.var_nums[var] == Num::Unknown
                    && this.nodes[rhs].num == Num::Real;
                if promote {
                    // `let mut y = PI; y += x;`: the constant was an `f64` after all.
                    this.vars[var].kind = VarKind::Real;
                    this.var_nums[var] = Num::Real;
                    if this.loop_bodies > 0 {
                        // Statements before this one in the loop read it as a constant;
                        // the function is lowered again with it a number from the start.
                        if let Some(key) = this.declaration.get(&var) {
                            this.promoted_in_loops.push(key.clone());
                        }
                    }
                } else if this.nodes[rhs].num == Num::Real {
                    this.error(
                        value,
                        "this variable holds an integer or a `bool`, not an `f64`",
                    );
                    return None;
                } else {
                    // A counter: the sweep can no longer compute its value again.
                    this.vars[var].stable = false;
                }
                rhs
            };
            this.vars[var].reassigned = true;
            let value = match compound {
                None => rhs,
                Some(binary) => {
                    let symbol = compound_operator(&binary.op)?;
                    let span = binary.op.span();
                    let num = this.var_nums[var];
                    let current = this.push(NodeKind::Read(place.clone()), num, span);
                    if num == Num::Real {
                        let op = ops::operator(symbol, 2)?;
                        let exprs = [&*binary.left, &*binary.right];
                        this.op(op, vec![current, rhs], &exprs, span)
                    } else {
                        this.int_op(symbol, current, rhs, span)
                    }
                }
            };
            Some((place, value))
        });
        if let Some((place, value)) = assigned {
            let assign = Stmt::Assign {
                place,
                value,
                nodes,
            };
            self.emit_unless_left(before, assign, expr_span(target));
        }
    }

    /// Emits `stmt`, under `if !flag` when evaluating it set a control flag (`s += if c {
    /// break } else { x }` must not change `s` once the loop is left).
    pub(super) fn emit_unless_left(&mut self, before: usize, stmt: Stmt, span: Span) {
        let live = self.live_flags(before);
        if live.is_empty() {
            return self.emit(stmt);
        }
        let (cond, nodes) = self.collect(|this| this.none_set(&live, span));
        self.emit(Stmt::If {
            cond,
            nodes,
            then: vec![stmt],
            otherwise: Vec::new(),
        });
    }

    /// The variable or array element an assignment writes.
    pub(super) fn place(&mut self, target: &Expr) -> Option<Place> {
        let (base, index_exprs) = split_index(target);
        let ident = match base {
            Expr::Path(path) if path.qself.is_none() => path.path.get_ident(),
            _ => None,
        };
        let Some(ident) = ident else {
            if self.rejected_root(target) {
                return None; // a write through a rejected `&mut` parameter: reported once
            }
            self.error(
                target,
                "#[grad] can assign only to local variables and their elements (`x`, `h[i]`)",
            );
            return None;
        };
        let Some(var) = self.scopes.lookup(ident) else {
            self.error(
                ident,
                format!("`{ident}` is not a local variable of this function"),
            );
            return None;
        };
        self.indexed(var, ident, &index_exprs, target)
    }

    /// Whether `target` (`m.w[i]`, `self.w`) is rooted at a parameter whose type was
    /// rejected, or at a `self` that was.
    pub(super) fn rejected_root(&self, target: &Expr) -> bool {
        let mut root = target;
        loop {
            root = match root {
                Expr::Field(field) => &field.base,
                Expr::Index(index) => &index.expr,
                Expr::Paren(paren) => &paren.expr,
                Expr::Group(group) => &group.expr,
                Expr::Unary(unary) => &unary.expr,
                Expr::Reference(reference) => &reference.expr,
                Expr::MethodCall(call) => &call.receiver,
                _ => break,
            };
        }
        let Expr::Path(path) = root else {
            return false;
        };
        match path.path.get_ident() {
            Some(ident) if ident == "self" => self.self_rejected,
            Some(ident) => self
                .scopes
                .lookup(ident)
                .is_some_and(|var| self.silent.contains(&var)),
            None => false,
        }
    }

    /// `var[i][j]…`: checks the number of indices and lowers them to integer nodes.
    pub(super) fn indexed(
        &mut self,
        var: VarId,
        ident: &Ident,
        index_exprs: &[&Expr],
        whole: &Expr,
    ) -> Option<Place> {
        if self.silent.contains(&var) {
            return None; // a parameter whose type was rejected: reported once already
        }
        let name = ident.to_string().replace('·', ".");
        if let Some(collection) = name
            .strip_suffix('.')
            .filter(|_| self.structs.contains(&var))
        {
            self.error(
                whole,
                format!(
                    "an element of `{collection}` is a struct: #[grad] reads its fields and \
                     passes it whole to calls (`g(p, x)`, `p.g(x)`), but does not keep it or \
                     use it otherwise"
                ),
            );
            return None;
        }
        if self.structs.contains(&var) && self.collections.contains_key(&name) {
            self.error(
                whole,
                format!(
                    "`{name}` is a collection of structs: #[grad] reads the fields of its \
                     elements (`{name}[i].field`, `p.field` in `for p in &{name}` or after \
                     `let p = &{name}[i];`) and its `.len()`, but does not use it or its \
                     elements otherwise"
                ),
            );
            return None;
        }
        if self.structs.contains(&var) {
            self.error(
                whole,
                format!(
                    "`{ident}` is a struct: #[grad] reads its fields (`{ident}.field`, \
                     `{ident}.field[i]`) and passes it whole to calls (`g({ident}, x)`, \
                     `{ident}.g(x)`), but does not copy it or use it otherwise"
                ),
            );
            return None;
        }
        let v = &self.vars[var];
        let dims = v.dims.len() + usize::from(v.slice);
        let ident = ident.to_string().replace('·', ".");
        if index_exprs.len() != dims {
            let local = dims == 0 && !v.is_param && v.kind == VarKind::Real;
            if local {
                // Reported at its first use only.
                self.silent.push(var);
            }
            let message = if local {
                // A local read as an array: maybe bound to a call's result without its type,
                // which a macro cannot see.
                format!(
                    "`{ident}` is not an array: #[grad] sees a local as an array when it is \
                     built as one (`[0.0; N]`, `[a, b]`, a copy) or declared with its type; \
                     for what a function returns, write the type: \
                     `let {ident}: [f64; 2] = h(x);` or `let [a, b] = h(x);`"
                )
            } else if dims == 0 {
                format!("`{ident}` is not an array")
            } else if self
                .aliases
                .get(&var)
                .is_some_and(|alias| alias.offset.is_some())
            {
                // A window, chunk or subslice bound to a name, used whole.
                format!(
                    "`{ident}` is part of a sequence (a window, chunk or subslice): #[grad] \
                     reads its numbers (`{ident}[i]`, `{ident}.iter()`, `{ident}.len()`) but \
                     does not pass it whole to a call yet; pass the whole sequence and the \
                     range's start"
                )
            } else {
                format!(
                    "`{ident}` has {dims} dimension(s): #[grad] reads and writes arrays one \
                     element at a time (`{ident}{}`)",
                    "[i]".repeat(dims)
                )
            };
            self.error(whole, message);
            return None;
        }
        let mut indices = Vec::with_capacity(dims);
        for index in index_exprs {
            let node = self.expr(index);
            match self.nodes[node].num {
                Num::Int | Num::Unknown => indices.push(node),
                Num::Real | Num::Bool | Num::Opaque => {
                    self.error(
                        index,
                        "an index must be an integer (`usize`): a loop variable, an integer \
                         parameter or local, a constant, or arithmetic on them",
                    );
                    return None;
                }
            }
        }
        if self.aliases.contains_key(&var) {
            let span = ident.span();
            return self.alias_place(var, &indices, span);
        }
        Some(Place { var, indices })
    }

    /// The place an alias (`x` of `for x in xs`, `w` of `xs.windows(2)`) indexed by
    /// `indices` stands for in its slice or array.
    pub(super) fn alias_place(
        &mut self,
        alias: VarId,
        indices: &[NodeId],
        span: Span,
    ) -> Option<Place> {
        let alias = self.aliases.get(&alias)?.clone();
        let mut place = Vec::new();
        for &prefix in &alias.prefix {
            place.push(self.read_var(prefix, span));
        }
        let mut rest = indices.iter().copied();
        if let Some(offset) = alias.offset {
            let first = rest.next()?;
            let offset = self.read_var(offset, span);
            place.push(self.int_op("+", offset, first, span));
        }
        place.extend(rest);
        Some(Place {
            var: alias.var,
            indices: place,
        })
    }

    /// Whether a type is a reference to a row of numbers, `&[f64]` or `&Vec<f64>`.
    fn is_row_type(&self, ty: &syn::Type) -> bool {
        let Type::Reference(reference) = ty else {
            return false;
        };
        match &*reference.elem {
            Type::Slice(slice) => self.float.is(&slice.elem),
            elem => is_vec_of(elem, self.float),
        }
    }

    /// `let s = r;` (or `&r`) of a name bound to a row or window (`for r in rows`), or of
    /// a slice parameter: `s` names the same numbers. Whether `expr` is one.
    fn alias_local(&mut self, ident: Option<&Ident>, expr: &Expr) -> bool {
        let Expr::Path(path) = super::control::strip_shared(expr) else {
            return false;
        };
        let Some(var) = path.path.get_ident().and_then(|i| self.scopes.lookup(i)) else {
            return false;
        };
        let v = &self.vars[var];
        let slice_param = v.slice && v.is_param && !v.mutable && !self.structs.contains(&var);
        if !self.aliases.contains_key(&var) && !slice_param {
            return false;
        }
        if let Some(ident) = ident {
            self.scopes.bind(ident, var);
        }
        true
    }

    pub(super) fn local(&mut self, local: &Local) {
        let (pat, ty) = match &local.pat {
            Pat::Type(typed) => (&*typed.pat, Some(&*typed.ty)),
            pat => (pat, None),
        };
        // `let [a, b] = h(x);` and `let v: [f64; 2] = h(x);` of a function returning an
        // array: its outputs unpacked as a tuple's are, then the array built of them.
        if let Some(init) = local.init.as_ref().filter(|init| init.diverge.is_none()) {
            if let Some(statements) = self.array_call(pat, ty, &init.expr) {
                for statement in &statements {
                    self.statement(statement);
                }
                return;
            }
        }
        if let (Pat::Slice(slice), Some(init)) = (pat, &local.init) {
            return self.destructure(slice, &init.expr);
        }
        // `let v: Vec<f64> = xs.iter().map(|x| …).collect();`: the loop that pushes each.
        if let (Pat::Ident(name), Some(init)) = (pat, &local.init) {
            if let Some((items, item, value)) = map_collect(strip_expr(&init.expr)) {
                if init.diverge.is_none() && name.by_ref.is_none() && name.subpat.is_none() {
                    let ident = &name.ident;
                    let statements: Vec<syn::Stmt> = if self.loop_bodies == 0 {
                        let new = self.collected_vec(items);
                        syn::parse_quote! {
                            let mut #ident = #new;
                            for #item in #items {
                                #ident.push(#value);
                            }
                        }
                    } else if let Some(of) = mapped_slice(items) {
                        // In a loop, where a vector cannot grow: one of the slice's length,
                        // assigned element by element.
                        let k = Ident::new("__autodiff_k", Span::call_site());
                        syn::parse_quote! {
                            let mut #ident = vec![0.0; #of.len()];
                            for (#k, #item) in #of.iter().enumerate() {
                                #ident[#k] = #value;
                            }
                        }
                    } else {
                        self.error(
                            &init.expr,
                            "#[grad] collects into a vector inside a loop only a slice mapped \
                             (`xs.iter().map(|&x| …).collect()`); outside loops, any chain",
                        );
                        return;
                    };
                    for statement in &statements {
                        self.statement(statement);
                    }
                    return;
                }
            }
        }
        if let (Pat::Tuple(tuple), Some(init)) = (pat, &local.init) {
            return self.untuple(tuple, &init.expr);
        }
        let mutable = matches!(pat, Pat::Ident(pat) if pat.mutability.is_some());
        let ident = match pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                Some(pat.ident.clone())
            }
            Pat::Wild(_) => None,
            pat => {
                self.error(
                    pat,
                    "#[grad] supports only `let name = …;` (no destructuring patterns)",
                );
                return;
            }
        };
        // `let r = &rows[i];` (also `let r: &[f64] = …`) of a row of run-time length, and
        // `let s = r;` of a row or slice bound to a name: the same numbers, read in place.
        if let Some(init) = local.init.as_ref().filter(|init| init.diverge.is_none()) {
            if ty.is_none_or(|ty| self.is_row_type(ty))
                && (self.row_local(ident.as_ref(), &init.expr)
                    || (!mutable && self.alias_local(ident.as_ref(), &init.expr))
                    || (!mutable && self.subslice_local(ident.as_ref(), &init.expr)))
            {
                return;
            }
        }
        if let Some(ty) = ty {
            let float = self.float;
            let known = float.is(ty)
                || is_integer(ty)
                || is_bool(ty)
                || array_dims(ty, float).is_some()
                || is_vec_of(ty, float);
            if !known {
                let real = self.real_name();
                self.error(
                    ty,
                    format!(
                        "#[grad] locals of this function must be `{real}`, `{real}` arrays, \
                         `Vec<{real}>`, or integers and `bool` (constants)"
                    ),
                );
                return;
            }
        }
        let Some(init) = &local.init else {
            // `let x;` (or `let x: f64;`): declared now, assigned later.
            if let Some(ty) = ty.filter(|ty| !self.float.is(ty)) {
                let message = format!("a `let` without a value must be an `{}`", self.real_name());
                self.error(ty, message);
            }
            let var = self.declare_named(ident.as_ref(), VarKind::Real, Vec::new(), Num::Real);
            self.vars[var].mutable = mutable;
            self.emit(Stmt::Let {
                var,
                value: None,
                nodes: Vec::new(),
            });
            return;
        };
        if let Some((else_token, _)) = &init.diverge {
            self.error(else_token, "#[grad] does not support `let … else`");
        }

        // `let sq = |t: f64| t * t;`: a closure, inlined where it is called.
        if let (Expr::Closure(closure), Some(ident)) = (strip_expr(&init.expr), ident.as_ref()) {
            self.named_closure(ident, closure);
            return;
        }

        // `let row = &rows[i];` of a parameter whose type was rejected: reported there,
        // and the local's uses are silent too.
        if self.rejected_root(&init.expr) {
            let var = self.declare_named(ident.as_ref(), VarKind::Real, Vec::new(), Num::Real);
            self.silent.push(var);
            return;
        }

        // `let v = w.to_vec();`: a local vector, a copy of `w`.
        if let Expr::MethodCall(call) = strip_expr(&init.expr) {
            if call.method == "to_vec" && call.args.is_empty() && call.turbofish.is_none() {
                self.vector_copy(ident.as_ref(), call);
                return;
            }
        }

        // A struct literal left after `literal::scalarize` (with `..rest`): one error,
        // and its fields' reads none.
        if let Expr::Struct(_) = strip_expr(&init.expr) {
            self.expr(&init.expr);
            let var = self.declare_named(ident.as_ref(), VarKind::Real, Vec::new(), Num::Real);
            self.silent.push(var);
            return;
        }

        // `let v = w;` of an array of numbers, `let row = h[t];` of a row of a 2-D array
        // or of a slice of arrays: a local array, a copy.
        // (`let row = &h[t];`: the same copy.)
        // (`let v = *w;` of a reference to an array: the same copy.)
        let copied = match super::control::strip_shared(&init.expr) {
            Expr::Unary(syn::ExprUnary {
                op: syn::UnOp::Deref(_),
                expr,
                ..
            }) => strip_expr(expr),
            expr => expr,
        };
        if let Some(dims) = self.copied_array(copied) {
            self.array_copy(ident.as_ref(), copied, &dims);
            return;
        }

        // `[a * b, c, 1.0]`: a local array, its elements assigned one by one.
        if let Expr::Array(array) = strip_expr(&init.expr) {
            self.array_literal(ident.as_ref(), array);
            return;
        }

        // `vec![0.0; n]` (or `std::vec!`, `alloc::vec!`): a local vector of run-time length.
        if let Expr::Macro(mac) = strip_expr(&init.expr) {
            if is_vec_macro(&mac.mac.path) {
                self.local_vector(ident.as_ref(), mac, mutable);
                return;
            }
        }

        // `Vec::new()`, `Vec::with_capacity(n)`: a vector filled by `push`.
        if let Expr::Call(call) = strip_expr(&init.expr) {
            if let Expr::Path(path) = &*call.func {
                let names: Vec<String> = path
                    .path
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect();
                let is_vec = names.len() >= 2 && names[names.len() - 2] == "Vec";
                let last = names.last().map(String::as_str);
                if is_vec && matches!(last, Some("new" | "with_capacity")) {
                    self.growing_vector(ident.as_ref(), call, mutable);
                    return;
                }
            }
        }

        // `[0.0; N]`, `[[0.0; M]; N]`: a local array.
        if let Expr::Repeat(_) = &*init.expr {
            let ((dims, value), nodes) = self.collect(|this| this.array_init(&init.expr));
            match (dims, value) {
                (Some(dims), Some(value)) => {
                    let var = self.declare_named(ident.as_ref(), VarKind::Real, dims, Num::Real);
                    self.vars[var].mutable = mutable;
                    self.emit(Stmt::Let {
                        var,
                        value: Some(value),
                        nodes,
                    });
                }
                // Rejected (reported): the name is still bound, so that its uses are not
                // reported again.
                (dims, _) => {
                    let dims = dims.unwrap_or_default();
                    let var = self.declare_named(ident.as_ref(), VarKind::Real, dims, Num::Real);
                    self.silent.push(var);
                }
            }
            return;
        }

        let errors = self.errors.count();
        let (value, nodes) = self.collect(|this| {
            let value = this.expr(&init.expr);
            this.declared_type(value, ty, &init.expr)
        });
        let num = self.nodes[value].num;
        let kind = kind_of(num);
        let stable = kind == VarKind::Int && !mutable && self.recomputable(value);
        let var = self.declare_named(ident.as_ref(), kind, Vec::new(), num);
        if self.errors.count() > errors {
            // Its value was reported: its uses are not reported again.
            self.silent.push(var);
        }
        self.vars[var].mutable = mutable;
        self.vars[var].stable = stable;
        self.emit(Stmt::Let {
            var,
            value: Some(value),
            nodes,
        });
    }

    /// `let mut v = vec![c; n];` with a constant element `c` (`0.0`, `[0.0; K]`).
    /// `let v = w.to_vec();` of a slice or array of numbers: written out as what it does,
    /// `let mut v = vec![0.0; w.len()];` and a loop that copies each element.
    fn vector_copy(&mut self, ident: Option<&Ident>, call: &syn::ExprMethodCall) {
        let receiver = strip_expr(&call.receiver);
        let var = self.named_var(receiver);
        let numbers = var.is_some_and(|var| {
            let var = &self.vars[var];
            let depth = var.dims.len() + usize::from(var.slice);
            var.kind == VarKind::Real && depth == 1
        });
        if !numbers {
            self.error(
                call,
                "#[grad] takes `.to_vec()` of a slice, array or vector of numbers named by a \
                 variable (`let v = w.to_vec();`)",
            );
            return;
        }
        let span = call.method.span();
        let mac: syn::ExprMacro = syn::parse_quote_spanned!(span=> vec![0.0; #receiver.len()]);
        self.local_vector(ident, &mac, true);
        if let Some(ident) = ident {
            let copy: syn::Stmt = syn::parse_quote_spanned! {span=>
                for __to_vec_index in 0..#receiver.len() {
                    #ident[__to_vec_index] = #receiver[__to_vec_index];
                }
            };
            self.statement(&copy);
        }
    }

    fn local_vector(&mut self, ident: Option<&Ident>, mac: &syn::ExprMacro, mutable: bool) {
        if !self.try_local_vector(ident, mac, mutable) {
            // Reported: the vector's uses are not reported again.
            let var = self.declare_named(ident, VarKind::Real, Vec::new(), Num::Real);
            self.vars[var].slice = true;
            self.silent.push(var);
        }
    }

    /// `let v = vec![c; n];`, or `false` after reporting why not.
    fn try_local_vector(
        &mut self,
        ident: Option<&Ident>,
        mac: &syn::ExprMacro,
        mutable: bool,
    ) -> bool {
        let tokens = &mac.mac.tokens;
        let Ok(repeat) = syn::parse2::<syn::ExprRepeat>(quote!([#tokens])) else {
            self.error(
                &mac.mac,
                "#[grad] supports `vec![c; n]` with a constant element, then element writes \
                 (`v[i] = …`); not a list of elements or `Vec::push`",
            );
            return false;
        };
        let (dims, element) = match &*repeat.expr {
            Expr::Repeat(_) => {
                let ((dims, value), _) = self.collect(|this| this.array_init(&repeat.expr));
                match (dims, value) {
                    (Some(dims), Some(_)) => (dims, Some(repeat.expr.to_token_stream())),
                    _ => return false,
                }
            }
            element => {
                let (node, _) = self.collect(|this| this.expr(element));
                let constant = matches!(self.nodes[node].kind, NodeKind::Const(_))
                    && self.nodes[node].num != Num::Int;
                if !constant {
                    self.error(
                        element,
                        "a local vector starts from a constant (`vec![0.0; n]`); assign its \
                         elements after",
                    );
                    return false;
                }
                (Vec::new(), Some(element.to_token_stream()))
            }
        };
        let span = mac.mac.path.span();
        self.needs_alloc(&mac.mac, "a local vector");
        let (value, nodes) = self.collect(|this| {
            let len = this.expr(&repeat.len);
            this.push(NodeKind::Vector { element, len }, Num::Real, span)
        });
        let len = match self.nodes[value].kind {
            NodeKind::Vector { len, .. } => len,
            _ => return false,
        };
        if matches!(self.nodes[len].num, Num::Real | Num::Bool) {
            self.error(
                &repeat.len,
                "the length of a vector is an integer (`usize`)",
            );
            return false;
        }
        if !self.recomputable(len) && self.loop_bodies > 0 {
            self.error(
                &repeat.len,
                "inside a loop, the length of a local vector must be computed from parameters, \
                 loop variables and constants (the reverse sweep sizes its adjoint again)",
            );
            return false;
        }
        let var = self.declare_named(ident, VarKind::Real, dims, Num::Real);
        self.vars[var].slice = true;
        self.vars[var].mutable = mutable;
        if self.loop_bodies > 0 {
            self.loop_vectors.push(var);
        }
        self.emit(Stmt::Let {
            var,
            value: Some(value),
            nodes,
        });
        true
    }

    /// `let [a, b, _] = w;` of an array: one `let` per named element, `let a = w[0];`.
    /// `let (a, b) = (x * y, x + y);`: every value is computed before any name is bound
    /// (the values read the variables the names had before). `let (a, b) = h(x);` of a
    /// function returning a tuple unpacks its result.
    fn untuple(&mut self, tuple: &syn::PatTuple, init: &Expr) {
        let message = "#[grad] binds the parts of a tuple to names or `_`";
        let Some(names) = self.part_names(&tuple.elems, message) else {
            return;
        };
        // `let (s, c) = x.sin_cos();`: the two operations of the table.
        if let Expr::MethodCall(call) = strip_expr(init) {
            if call.method == "sin_cos" && call.args.is_empty() && names.len() == 2 {
                let receiver = &call.receiver;
                let (sin, cos) = (
                    Ident::new("sin", call.method.span()),
                    Ident::new("cos", call.method.span()),
                );
                let pair: Expr = syn::parse_quote!(((#receiver).#sin(), (#receiver).#cos()));
                return self.untuple(tuple, &pair);
            }
        }
        match strip_expr(init) {
            Expr::Tuple(values) if values.elems.len() == names.len() => {
                let lowered: Vec<(NodeId, Vec<NodeId>)> = values
                    .elems
                    .iter()
                    .map(|value| self.collect(|this| this.expr(value)))
                    .collect();
                for (name, (value, nodes)) in names.into_iter().zip(lowered) {
                    let Some(name) = name else { continue };
                    let num = self.nodes[value].num;
                    let kind = kind_of(num);
                    let var = self.declare(&name.ident, kind, Vec::new(), num);
                    self.vars[var].mutable = name.mutability.is_some();
                    self.vars[var].stable = kind == VarKind::Int
                        && name.mutability.is_none()
                        && self.recomputable(value);
                    self.emit(Stmt::Let {
                        var,
                        value: Some(value),
                        nodes,
                    });
                }
            }
            Expr::Tuple(values) => {
                self.error(
                    values,
                    format!(
                        "this tuple has {} parts, the pattern {}",
                        values.elems.len(),
                        names.len()
                    ),
                );
            }
            // `let (lo, hi) = bounds(n);` with constant arguments: each part a constant.
            Expr::Call(call) if self.constant_call_of_path(call) => {
                self.constant_parts(names, call, |k| {
                    let member = syn::Index::from(k);
                    quote!(.#member)
                });
            }
            call @ (Expr::Call(_) | Expr::MethodCall(_)) => {
                let (value, nodes) = self.collect(|this| this.tuple_call(call, names.len()));
                let Some(value) = value else { return };
                let mut vars = Vec::with_capacity(names.len());
                for name in names {
                    let ident = name.map(|name| &name.ident);
                    let var = self.declare_named(ident, VarKind::Real, Vec::new(), Num::Real);
                    self.vars[var].mutable = name.is_some_and(|n| n.mutability.is_some());
                    vars.push(var);
                }
                self.emit(Stmt::Unpack { vars, value, nodes });
            }
            other => {
                self.error(
                    other,
                    "#[grad] takes apart a tuple written out (`let (a, b) = (x, y);`) or the \
                     result of a `#[grad]` function that returns one (`let (a, b) = h(x);`)",
                );
            }
        }
    }

    /// The names that the parts of a tuple or array pattern bind (`None` for `_`), or
    /// `None` after an error (`message`) under a part that is another pattern.
    pub(super) fn part_names<'p>(
        &mut self,
        parts: impl IntoIterator<Item = &'p Pat>,
        message: &str,
    ) -> Option<Vec<Option<&'p syn::PatIdent>>> {
        let mut names = Vec::new();
        for part in parts {
            match part {
                Pat::Ident(name) if name.subpat.is_none() && name.by_ref.is_none() => {
                    names.push(Some(name));
                }
                Pat::Wild(_) => names.push(None),
                other => {
                    self.error(other, message);
                    return None;
                }
            }
        }
        Some(names)
    }

    /// Whether `call` is a call of a function by its path whose arguments read no number
    /// of the function and pass nothing whole: a constant, computed as written.
    pub(super) fn constant_call_of_path(&self, call: &syn::ExprCall) -> bool {
        matches!(&*call.func, Expr::Path(_))
            && !call.args.iter().any(|arg| self.is_whole(arg))
            && self.constant_arguments(call)
    }

    /// `let (lo, hi) = bounds(n);` or `let [a, b] = h(1.0);` of a constant call: each
    /// named part a constant of its own (`part(k)` reads part `k` of the value).
    pub(super) fn constant_parts(
        &mut self,
        names: Vec<Option<&syn::PatIdent>>,
        call: &syn::ExprCall,
        part: impl Fn(usize) -> TokenStream,
    ) {
        for (k, name) in names.into_iter().enumerate() {
            let Some(name) = name else { continue };
            let (value, nodes) = self.collect(|this| this.constant_call(call, part(k)));
            let var = self.declare(&name.ident, VarKind::Int, Vec::new(), Num::Unknown);
            self.vars[var].mutable = name.mutability.is_some();
            self.vars[var].stable = name.mutability.is_none() && self.recomputable(value);
            self.emit(Stmt::Let {
                var,
                value: Some(value),
                nodes,
            });
        }
    }

    /// `let mut v = Vec::with_capacity(n);` (or `Vec::new()`), filled by `v.push(x)`. Its
    /// adjoint is sized by its final length: read at the end of the function, or saved at
    /// the end of the branch that declares it (a branch, or what runs after an early
    /// `return`). In a loop there would be one length per iteration: not supported.
    fn growing_vector(&mut self, ident: Option<&Ident>, call: &syn::ExprCall, mutable: bool) {
        self.needs_alloc(&call.func, "a local vector");
        if self.loop_bodies > 0 {
            self.error(
                call,
                "#[grad] supports a vector filled by `push` only outside loops (at the top of \
                 the function, in a branch, or after an early `return`); in a loop, use \
                 `vec![0.0; n]` and assign",
            );
            return;
        }
        let span = expr_span(&call.func);
        let (value, nodes) = self.collect(|this| {
            let len = match call.args.first() {
                Some(capacity) => this.expr(capacity),
                None => this.push(NodeKind::Const(quote!(0usize)), Num::Int, span),
            };
            this.push(NodeKind::Vector { element: None, len }, Num::Real, span)
        });
        let var = self.declare_named(ident, VarKind::Real, Vec::new(), Num::Real);
        self.vars[var].slice = true;
        self.vars[var].mutable = mutable;
        self.vars[var].reassigned = true;
        self.emit(Stmt::Let {
            var,
            value: Some(value),
            nodes,
        });
    }

    /// `v.push(x)` on a local vector.
    fn push_statement(&mut self, call: &syn::ExprMethodCall) {
        let span = call.method.span();
        let before = self.flags_set.len();
        let (pushed, nodes) = self.collect(|this| {
            let var = this.sequence_var(&call.receiver)?;
            let local = this.vars[var].slice && !this.vars[var].is_param;
            if !local || this.aliases.contains_key(&var) || call.args.len() != 1 {
                this.error(
                    call,
                    "#[grad] supports `push` of one `f64` onto a local vector",
                );
                return None;
            }
            if this.loop_vectors.contains(&var) {
                this.error(
                    call,
                    "#[grad] does not support `push` onto a vector declared in a loop; make it \
                     long enough with `vec![0.0; n]` and assign its elements",
                );
                return None;
            }
            let value = this.real(&call.args[0]);
            let index = this.len_of(var, span);
            Some(Place {
                var,
                indices: vec![index],
            })
            .map(|place| (place, value))
        });
        if let Some((place, value)) = pushed {
            let push = Stmt::Push {
                place,
                value,
                nodes,
            };
            self.emit_unless_left(before, push, span);
        }
    }

    /// Applies the type written in `let name: ty = value;`.
    pub(super) fn declared_type(
        &mut self,
        value: NodeId,
        ty: Option<&Type>,
        expr: &Expr,
    ) -> NodeId {
        match ty {
            None => value,
            Some(ty) if self.float.is(ty) => self.expect_real(value, expr),
            Some(ty) if is_integer(ty) => {
                let span = self.nodes[value].span;
                let arg = value;
                self.push(
                    NodeKind::Typed {
                        arg,
                        ty: ty.clone(),
                    },
                    Num::Int,
                    span,
                )
            }
            Some(_) => value,
        }
    }

    pub(super) fn recomputable(&self, node: NodeId) -> bool {
        crate::ir::recomputable(&self.nodes, &self.vars, node)
    }

    /// `if cond { … } else { … }` as a statement, or, with `result`, as the value assigned
    /// to that variable in every branch.
    pub(super) fn if_statement(&mut self, expr_if: &syn::ExprIf, result: Option<VarId>) {
        let (cond, nodes) = self.collect(|this| this.condition(&expr_if.cond));
        let then = self.nested_block(|this| this.branch(&expr_if.then_branch, result));
        let otherwise = match &expr_if.else_branch {
            None => {
                if result.is_some() {
                    self.error(expr_if, "an `if` used as a value needs an `else`");
                }
                Vec::new()
            }
            Some((_, else_expr)) => self.nested_block(|this| match &**else_expr {
                Expr::If(nested) => this.if_statement(nested, result),
                Expr::Block(block) => this.branch(&block.block, result),
                other => {
                    this.error(other, "expected a block after `else`");
                }
            }),
        };
        self.emit(Stmt::If {
            cond,
            nodes,
            then,
            otherwise,
        });
    }

    /// The body of a branch; with `result`, its tail value is assigned to that variable.
    pub(super) fn branch(&mut self, block: &syn::Block, result: Option<VarId>) {
        match result {
            None => {
                self.block_value(block, false);
            }
            Some(var) => {
                let (value, nodes) = self.collect(|this| {
                    let value = this.block_value(block, true);
                    value.map(|v| this.expect_real_node(v, block))
                });
                if let Some(value) = value {
                    self.assign_var(var, value, nodes);
                }
            }
        }
    }

    /// A condition: a comparison, `&&`, `||`, `!`, or a boolean variable.
    pub(super) fn condition(&mut self, expr: &Expr) -> NodeId {
        let node = self.expr(expr);
        if matches!(expr, Expr::Let(_)) {
            return node; // already reported as `if let`
        }
        if !matches!(self.nodes[node].num, Num::Bool | Num::Unknown) {
            return self.error(expr, "expected a condition (a comparison or a `bool`)");
        }
        node
    }
}

/// `vec`, or its path `std::vec`, `alloc::vec` (with or without a leading `::`), as a
/// module without the prelude writes it.
fn is_vec_macro(path: &Path) -> bool {
    let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    match names.as_slice() {
        [name] => name == "vec" && path.leading_colon.is_none(),
        [krate, name] => matches!(krate.as_str(), "std" | "alloc") && name == "vec",
        _ => false,
    }
}

/// `items.map(|pat| value).collect()` (also `collect::<Vec<_>>()`): the iterator, the
/// closure's pattern (without a type) and its body.
pub(super) fn map_collect(expr: &Expr) -> Option<(&Expr, &Pat, &Expr)> {
    let Expr::MethodCall(collect) = expr else {
        return None;
    };
    let Expr::MethodCall(map) = &*collect.receiver else {
        return None;
    };
    if collect.method != "collect" || !collect.args.is_empty() || map.method != "map" {
        return None;
    }
    let [Expr::Closure(closure)] = map.args.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let [pat] = closure.inputs.iter().collect::<Vec<_>>()[..] else {
        return None;
    };
    let pat = match pat {
        Pat::Type(typed) => &*typed.pat,
        pat => pat,
    };
    Some((&map.receiver, pat, &closure.body))
}

impl Lowering {
    /// The vector that `items.map(…).collect()` pushes into: `Vec::with_capacity(n)` where
    /// the number of items is known before the loop (see [`Self::exact_len`]), so that
    /// pushing never reallocates, as `collect` itself does not; else `Vec::new()`.
    pub(super) fn collected_vec(&self, items: &Expr) -> Expr {
        match self.exact_len(items) {
            Some(len) => syn::parse_quote!(Vec::with_capacity(#len)),
            None => syn::parse_quote!(Vec::new()),
        }
    }

    /// The number of items of an iterator chain, as an expression of `len()`s: slices named
    /// by a variable (`xs`, `&xs`, `xs.iter()`), `zip` of two such chains (the shorter),
    /// and the adapters that keep the number (`map`, `enumerate`, `rev`, `copied`,
    /// `cloned`). `None` for anything else (`filter`, a range, an array).
    fn exact_len(&self, items: &Expr) -> Option<TokenStream> {
        let slice = |e: &Expr| -> Option<TokenStream> {
            let Expr::Path(path) = strip_expr(e) else {
                return None;
            };
            let ident = path.path.get_ident()?;
            let var = self.scopes.lookup(ident)?;
            self.vars[var].slice.then(|| quote!(#ident.len()))
        };
        match strip_expr(items) {
            Expr::Reference(reference) => slice(&reference.expr),
            Expr::MethodCall(call) => match (call.method.to_string().as_str(), call.args.len()) {
                ("iter", 0) => slice(&call.receiver),
                ("map", 1) | ("enumerate" | "rev" | "copied" | "cloned", 0) => {
                    self.exact_len(&call.receiver)
                }
                ("zip", 1) => {
                    let a = self.exact_len(&call.receiver)?;
                    let b = self.exact_len(&call.args[0])?;
                    Some(quote!(#a.min(#b)))
                }
                _ => None,
            },
            e => slice(e),
        }
    }
}

/// `xs` of `xs.iter()`, `&xs` or `xs` (a slice named by a variable): the items of a
/// collect whose length is `xs.len()`.
fn mapped_slice(items: &Expr) -> Option<&Expr> {
    let named = |e: &Expr| matches!(strip_expr(e), Expr::Path(p) if p.path.get_ident().is_some());
    match strip_expr(items) {
        Expr::MethodCall(call) if call.method == "iter" && call.args.is_empty() => {
            named(&call.receiver).then_some(&*call.receiver)
        }
        Expr::Reference(reference) if named(&reference.expr) => Some(&*reference.expr),
        e if named(e) => Some(e),
        _ => None,
    }
}

/// Whether `ty` is `Vec<f64>` (of the function's float type), as a vector local may be
/// written: `let mut v: Vec<f64> = vec![0.0; n];`.
pub(super) fn is_vec_of(ty: &syn::Type, float: crate::ir::Float) -> bool {
    let syn::Type::Path(path) = ty else {
        return false;
    };
    let Some(last) = path.path.segments.last() else {
        return false;
    };
    let syn::PathArguments::AngleBracketed(arguments) = &last.arguments else {
        return false;
    };
    last.ident == "Vec"
        && arguments.args.len() == 1
        && matches!(arguments.args.first(), Some(syn::GenericArgument::Type(element)) if float.is(element))
}
