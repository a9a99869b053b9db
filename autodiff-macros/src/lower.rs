//! Lowering: the user's `syn::ItemFn` → [`Function`], statements over variables whose
//! expressions are graphs of nodes.
//!
//! ```text
//! fn f(x: f64) -> f64 {          var0 x (param)
//!     let mut y = x * 2.0;        let var1 y = %2        %0 = read var0  %1 = 2.0  %2 = mul
//!     y += x.sin();               var1 = %6              %3 = read var1  %4 = read var0
//!                                                        %5 = sin(%4)    %6 = add(%3, %5)
//!     y                           return %7              %7 = read var1
//! }
//! ```
//!
//! Names resolve to variables through nested scopes, so shadowing gives a new variable and
//! assignment writes the existing one. Blocks used as values are flattened into the
//! enclosing statements (every variable has its own slot, so nothing clashes), and an `if`
//! used as a value becomes a temporary assigned in both branches. Everything this step
//! cannot lower is recorded as an error under the user's tokens and lowering goes on, so
//! one compile reports every problem in the function.

use crate::args::GradArgs;
use crate::errors::Errors;
use crate::ir::{
    Block, Function, Node, NodeId, NodeKind, Num, Param, Place, Stmt, Var, VarId, VarKind,
};
use crate::ops::{self, Arg, Op};
use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, FnArg, Ident, Item, ItemFn, Lit, Local, Pat, Path, ReturnType, Type, UnOp};

const SUPPORTED_FLOW: &str = "#[grad] supports `if`/`else` and `for` loops over constant ranges";

/// Lowers a function. Returns every error found in it at once.
pub fn lower(original: ItemFn, args: &GradArgs) -> syn::Result<Function> {
    let mut lowering = Lowering::default();
    let params = lowering.signature(&original, args);
    lowering.function_body(&original.block);
    let wrt = match &args.wrt {
        Some(names) => names
            .iter()
            .filter_map(|name| params.iter().position(|p| p.ident == *name))
            .collect(),
        None => (0..params.len()).filter(|&i| params[i].wrt).collect(),
    };
    let Lowering {
        vars,
        nodes,
        mut blocks,
        items,
        constant_uses,
        errors,
        ..
    } = lowering;
    errors.finish(Function {
        original,
        params,
        wrt,
        items,
        vars,
        nodes,
        body: blocks.pop().unwrap_or_default(),
        constant_uses,
    })
}

/// Whether a type is written `f64`.
pub fn is_f64(ty: &Type) -> bool {
    matches!(ty, Type::Path(path) if path.qself.is_none() && path.path.is_ident("f64"))
}

/// Whether a type is a primitive integer type.
fn is_integer(ty: &Type) -> bool {
    const INTEGERS: &[&str] = &[
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
    ];
    matches!(ty, Type::Path(path) if path.qself.is_none()
        && INTEGERS.iter().any(|name| path.path.is_ident(name)))
}

fn is_bool(ty: &Type) -> bool {
    matches!(ty, Type::Path(path) if path.qself.is_none() && path.path.is_ident("bool"))
}

/// The dimensions of `[f64; N]`, `[[f64; M]; N]`, … (outermost first), or `None` for
/// another type.
fn array_dims(ty: &Type) -> Option<Vec<TokenStream>> {
    match ty {
        Type::Array(array) => {
            let mut dims = vec![array.len.to_token_stream()];
            if is_f64(&array.elem) {
                Some(dims)
            } else {
                dims.extend(array_dims(&array.elem)?);
                Some(dims)
            }
        }
        Type::Paren(paren) => array_dims(&paren.elem),
        Type::Group(group) => array_dims(&group.elem),
        _ => None,
    }
}

/// Local names in nested block scopes, each mapped to its variable. Lookups are hashed, so
/// a body with thousands of `let`s lowers in linear time.
#[derive(Default)]
struct Scopes {
    /// For each name, its variables from the outermost scope to the innermost.
    bindings: HashMap<String, Vec<VarId>>,
    /// For each open block, the names it declared.
    declared: Vec<Vec<String>>,
}

impl Scopes {
    fn push(&mut self) {
        self.declared.push(Vec::new());
    }

    fn pop(&mut self) {
        for name in self.declared.pop().unwrap_or_default() {
            if let Some(stack) = self.bindings.get_mut(&name) {
                stack.pop();
            }
        }
    }

    fn bind(&mut self, ident: &Ident, var: VarId) {
        let name = ident.to_string();
        self.bindings.entry(name.clone()).or_default().push(var);
        if let Some(scope) = self.declared.last_mut() {
            scope.push(name);
        }
    }

    fn lookup(&self, ident: &Ident) -> Option<VarId> {
        self.bindings.get(&ident.to_string())?.last().copied()
    }
}

#[derive(Default)]
struct Lowering {
    vars: Vec<Var>,
    /// For reads of each variable: what kind of number they give.
    var_nums: Vec<Num>,
    nodes: Vec<Node>,
    scopes: Scopes,
    /// Blocks under construction, innermost last.
    blocks: Vec<Block>,
    /// Nodes of statements under construction, innermost last.
    pending: Vec<Vec<NodeId>>,
    items: Vec<Item>,
    constant_uses: Vec<(NodeId, syn::Error)>,
    errors: Errors,
}

impl Lowering {
    // ----- signature -------------------------------------------------------------------

    /// Checks the signature and declares one variable per parameter.
    fn signature(&mut self, item: &ItemFn, args: &GradArgs) -> Vec<Param> {
        let sig = &item.sig;
        let errors = &mut self.errors;
        if let Some(token) = &sig.constness {
            errors.at(token, "#[grad] does not support `const fn`");
        }
        if let Some(token) = &sig.asyncness {
            errors.at(token, "#[grad] does not support `async fn`");
        }
        if let Some(token) = &sig.unsafety {
            errors.at(token, "#[grad] does not support `unsafe fn`");
        }
        if let Some(abi) = &sig.abi {
            errors.at(abi, "#[grad] does not support `extern` functions");
        }
        if !sig.generics.params.is_empty() {
            errors.at(
                &sig.generics,
                "#[grad] does not support generic functions; write the function for `f64`",
            );
        }
        if let Some(clause) = &sig.generics.where_clause {
            errors.at(clause, "#[grad] does not support `where` clauses");
        }
        if let Some(variadic) = &sig.variadic {
            errors.at(variadic, "#[grad] does not support variadic functions");
        }
        match &sig.output {
            ReturnType::Type(_, ty) if is_f64(ty) => {}
            ReturnType::Type(_, ty) => errors.at(ty, "a #[grad] function must return `f64`"),
            ReturnType::Default => errors.at(
                &sig.ident,
                "a #[grad] function must return `f64`: add `-> f64`",
            ),
        }

        self.scopes.push();
        self.blocks.push(Vec::new());
        let mut params = Vec::new();
        for input in &sig.inputs {
            let typed = match input {
                FnArg::Receiver(receiver) => {
                    self.errors.at(
                        receiver,
                        "#[grad] does not support methods with a `self` receiver yet; \
                         write a free function that takes the fields it needs",
                    );
                    continue;
                }
                FnArg::Typed(typed) => typed,
            };
            let (ident, mutable) = match &*typed.pat {
                Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                    (pat.ident.clone(), pat.mutability.is_some())
                }
                pat => {
                    self.errors.at(
                        pat,
                        "#[grad] parameters must be plain names (`x: f64`), not patterns",
                    );
                    continue;
                }
            };
            let ty = &*typed.ty;
            let referenced = match ty {
                Type::Reference(reference) if reference.mutability.is_none() => &*reference.elem,
                ty => ty,
            };
            let (kind, dims, num) = if is_f64(ty) {
                (VarKind::Real, Vec::new(), Num::Real)
            } else if let Some(dims) = array_dims(referenced) {
                (VarKind::Real, dims, Num::Real)
            } else if is_integer(ty) {
                (VarKind::Int, Vec::new(), Num::Int)
            } else if is_bool(ty) {
                (VarKind::Bool, Vec::new(), Num::Bool)
            } else {
                self.errors.at(
                    ty,
                    "#[grad] parameters must be `f64`, `[f64; N]` or `&[f64; N]` (also \
                     nested), or integers and `bool` (constants)",
                );
                continue;
            };
            let var = self.declare(&ident, kind, dims, num);
            self.vars[var].is_param = true;
            self.vars[var].mutable = mutable;
            let differentiable = kind == VarKind::Real;
            params.push(Param {
                ident,
                ty: ty.clone(),
                var,
                wrt: differentiable && args.wrt.is_none(),
            });
        }

        if let Some(wrt) = &args.wrt {
            for (position, name) in wrt.iter().enumerate() {
                if wrt[..position].contains(name) {
                    self.errors
                        .at(name, format!("`{name}` is named twice in `wrt`"));
                } else if let Some(param) = params.iter_mut().find(|p| p.ident == *name) {
                    if self.vars[param.var].kind == VarKind::Real {
                        param.wrt = true;
                    } else {
                        self.errors.at(
                            name,
                            format!("`{name}` is not an `f64` parameter: it has no gradient"),
                        );
                    }
                } else {
                    self.errors.at(
                        name,
                        format!("`wrt` names `{name}`, which is not a parameter"),
                    );
                }
            }
        }
        params
    }

    // ----- building blocks ---------------------------------------------------------------

    fn declare(&mut self, ident: &Ident, kind: VarKind, dims: Vec<TokenStream>, num: Num) -> VarId {
        self.vars.push(Var {
            kind,
            dims,
            is_param: false,
            reassigned: false,
            mutable: false,
        });
        self.var_nums.push(num);
        let var = self.vars.len() - 1;
        self.scopes.bind(ident, var);
        var
    }

    fn push(&mut self, kind: NodeKind, num: Num, span: Span) -> NodeId {
        self.nodes.push(Node { kind, num, span });
        let id = self.nodes.len() - 1;
        if let Some(pending) = self.pending.last_mut() {
            pending.push(id);
        }
        id
    }

    /// A stand-in value after an error, so lowering can go on and find more errors.
    fn poisoned(&mut self, span: Span) -> NodeId {
        self.push(NodeKind::Const(quote!(0.0)), Num::Unknown, span)
    }

    fn error(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) -> NodeId {
        let span = tokens
            .to_token_stream()
            .into_iter()
            .next()
            .map(|t| t.span());
        self.errors.at(tokens, message);
        self.poisoned(span.unwrap_or_else(Span::call_site))
    }

    fn emit(&mut self, stmt: Stmt) {
        if let Some(block) = self.blocks.last_mut() {
            block.push(stmt);
        }
    }

    /// Runs `f` collecting the nodes it creates, for one statement.
    fn collect<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> (T, Vec<NodeId>) {
        self.pending.push(Vec::new());
        let value = f(self);
        let nodes = self.pending.pop().unwrap_or_default();
        (value, nodes)
    }

    /// Lowers `body` into a new block of its own (a loop body or a branch).
    fn nested_block(&mut self, body: impl FnOnce(&mut Self)) -> Block {
        self.blocks.push(Vec::new());
        self.scopes.push();
        body(self);
        self.scopes.pop();
        self.blocks.pop().unwrap_or_default()
    }

    // ----- statements --------------------------------------------------------------------

    /// The function body: statements, then a tail expression or a final `return expr;`.
    fn function_body(&mut self, block: &syn::Block) {
        let Some((last, init)) = block.stmts.split_last() else {
            self.error(
                block,
                "a #[grad] function must return a value: end the body with an expression",
            );
            return;
        };
        for stmt in init {
            self.statement(stmt);
        }
        let value = match last {
            syn::Stmt::Expr(Expr::Return(ret), _) => match &ret.expr {
                Some(value) => Some(&**value),
                None => {
                    self.error(ret, "`return` needs a value");
                    None
                }
            },
            syn::Stmt::Expr(expr, None) if !is_statement_only(expr) => Some(expr),
            stmt => {
                self.statement(stmt);
                self.error(
                    stmt,
                    "a #[grad] function must end with the value it returns \
                     (a tail expression or `return expr;`)",
                );
                None
            }
        };
        if let Some(value) = value {
            let (value, nodes) = self.collect(|this| this.real(value));
            self.emit(Stmt::Return { value, nodes });
        }
    }

    /// The statements of a block (scoped), and its tail value when `needs_value`.
    fn block_value(&mut self, block: &syn::Block, needs_value: bool) -> Option<NodeId> {
        self.scopes.push();
        let mut value = None;
        for (position, stmt) in block.stmts.iter().enumerate() {
            let last = position + 1 == block.stmts.len();
            match stmt {
                syn::Stmt::Expr(expr, None) if last && needs_value && !is_statement_only(expr) => {
                    value = Some(self.expr(expr));
                }
                stmt => self.statement(stmt),
            }
        }
        self.scopes.pop();
        if needs_value && value.is_none() {
            value = Some(self.error(block, "this block must end with the value it produces"));
        }
        value
    }

    fn statement(&mut self, stmt: &syn::Stmt) {
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

    fn expr_statement(&mut self, expr: &Expr) {
        match expr {
            Expr::Assign(assign) => self.assignment(&assign.left, None, &assign.right),
            Expr::Binary(binary) if compound_operator(&binary.op).is_some() => {
                self.assignment(&binary.left, Some(binary), &binary.right);
            }
            Expr::Block(block) if block.label.is_none() => {
                self.block_value(&block.block, false);
            }
            Expr::If(expr_if) => self.if_statement(expr_if, None),
            Expr::ForLoop(for_loop) => self.for_loop(for_loop),
            Expr::Paren(paren) => self.expr_statement(&paren.expr),
            Expr::Group(group) => self.expr_statement(&group.expr),
            Expr::Return(ret) => {
                self.error(
                    ret,
                    "`return` is supported only as the last statement of the function",
                );
            }
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
    fn assignment(&mut self, target: &Expr, compound: Option<&syn::ExprBinary>, value: &Expr) {
        let (assigned, nodes) = self.collect(|this| {
            let place = this.place(target)?;
            if this.vars[place.var].kind != VarKind::Real {
                this.error(
                    target,
                    "integer and boolean variables cannot be changed in #[grad] code; \
                     use a `for` loop variable or a new `let`",
                );
                return None;
            }
            this.vars[place.var].reassigned = true;
            let rhs = this.real(value);
            let value = match compound {
                None => rhs,
                Some(binary) => {
                    let symbol = compound_operator(&binary.op)?;
                    let op = ops::operator(symbol, 2)?;
                    let current =
                        this.push(NodeKind::Read(place.clone()), Num::Real, binary.op.span());
                    let exprs = [&*binary.left, &*binary.right];
                    this.op(op, vec![current, rhs], &exprs, binary.op.span())
                }
            };
            Some((place, value))
        });
        if let Some((place, value)) = assigned {
            self.emit(Stmt::Assign {
                place,
                value,
                nodes,
            });
        }
    }

    /// The variable or array element an assignment writes.
    fn place(&mut self, target: &Expr) -> Option<Place> {
        let (base, index_exprs) = split_index(target);
        let ident = match base {
            Expr::Path(path) if path.qself.is_none() => path.path.get_ident(),
            _ => None,
        };
        let Some(ident) = ident else {
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

    /// `var[i][j]…`: checks the number of indices and lowers them to integer nodes.
    fn indexed(
        &mut self,
        var: VarId,
        ident: &Ident,
        index_exprs: &[&Expr],
        whole: &Expr,
    ) -> Option<Place> {
        let dims = self.vars[var].dims.len();
        if index_exprs.len() != dims {
            let message = if dims == 0 {
                format!("`{ident}` is not an array")
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
                Num::Int | Num::Unknown if self.recomputable(node) => indices.push(node),
                Num::Int | Num::Unknown | Num::Real | Num::Bool => {
                    self.error(
                        index,
                        "an index must be an integer computed from loop variables, integer \
                         parameters and constants",
                    );
                    return None;
                }
            }
        }
        Some(Place { var, indices })
    }

    fn local(&mut self, local: &Local) {
        let (pat, ty) = match &local.pat {
            Pat::Type(typed) => (&*typed.pat, Some(&*typed.ty)),
            pat => (pat, None),
        };
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
        if let Some(ty) = ty {
            if !(is_f64(ty) || is_integer(ty) || is_bool(ty) || array_dims(ty).is_some()) {
                self.error(
                    ty,
                    "#[grad] locals must be `f64`, `f64` arrays, or integers and `bool` \
                     (constants)",
                );
                return;
            }
        }
        let Some(init) = &local.init else {
            // `let x;` (or `let x: f64;`): declared now, assigned later.
            if let Some(ty) = ty.filter(|ty| !is_f64(ty)) {
                self.error(ty, "a `let` without a value must be an `f64`");
            }
            let ident = ident.unwrap_or_else(|| Ident::new("unnamed", Span::call_site()));
            let var = self.declare(&ident, VarKind::Real, Vec::new(), Num::Real);
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

        // `[0.0; N]`, `[[0.0; M]; N]`: a local array.
        if let Expr::Repeat(_) = &*init.expr {
            let ((dims, value), nodes) = self.collect(|this| this.array_init(&init.expr));
            if let (Some(dims), Some(value)) = (dims, value) {
                let ident = ident.unwrap_or_else(|| Ident::new("unnamed", Span::call_site()));
                let var = self.declare(&ident, VarKind::Real, dims, Num::Real);
                self.vars[var].mutable = mutable;
                self.emit(Stmt::Let {
                    var,
                    value: Some(value),
                    nodes,
                });
            }
            return;
        }

        let (value, nodes) = self.collect(|this| {
            let value = this.expr(&init.expr);
            this.declared_type(value, ty, &init.expr)
        });
        let num = self.nodes[value].num;
        let kind = match num {
            Num::Real => VarKind::Real,
            Num::Bool => VarKind::Bool,
            Num::Int | Num::Unknown => {
                if !self.recomputable(value) {
                    self.error(
                        &init.expr,
                        "an integer local must be computed from loop variables, integer \
                         parameters and constants (the reverse sweep recomputes it)",
                    );
                    return;
                }
                VarKind::Int
            }
        };
        let ident = ident.unwrap_or_else(|| Ident::new("unnamed", Span::call_site()));
        let var = self.declare(&ident, kind, Vec::new(), num);
        self.vars[var].mutable = mutable;
        self.emit(Stmt::Let {
            var,
            value: Some(value),
            nodes,
        });
    }

    /// `[c; N]` or `[[c; M]; N]` with a constant `c`: the dimensions and the constant node.
    fn array_init(&mut self, expr: &Expr) -> (Option<Vec<TokenStream>>, Option<NodeId>) {
        let mut dims = Vec::new();
        let mut current = expr;
        while let Expr::Repeat(repeat) = current {
            dims.push(repeat.len.to_token_stream());
            current = &repeat.expr;
        }
        let element = self.expr(current);
        let constant = matches!(self.nodes[element].kind, NodeKind::Const(_))
            && self.nodes[element].num != Num::Int;
        if !constant {
            self.error(
                current,
                "a local array starts from a constant (`[0.0; N]`); assign its elements after",
            );
            return (None, None);
        }
        let value = self.push(
            NodeKind::Const(expr.to_token_stream()),
            Num::Real,
            expr.span(),
        );
        (Some(dims), Some(value))
    }

    /// Applies the type written in `let name: ty = value;`.
    fn declared_type(&mut self, value: NodeId, ty: Option<&Type>, expr: &Expr) -> NodeId {
        match ty {
            None => value,
            Some(ty) if is_f64(ty) => self.expect_real(value, expr),
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

    fn recomputable(&self, node: NodeId) -> bool {
        crate::ir::recomputable(&self.nodes, &self.vars, node)
    }

    /// `if cond { … } else { … }` as a statement, or, with `result`, as the value assigned
    /// to that variable in every branch.
    fn if_statement(&mut self, expr_if: &syn::ExprIf, result: Option<VarId>) {
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
    fn branch(&mut self, block: &syn::Block, result: Option<VarId>) {
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
                    self.emit(Stmt::Assign {
                        place: Place {
                            var,
                            indices: Vec::new(),
                        },
                        value,
                        nodes,
                    });
                }
            }
        }
    }

    /// A condition: a comparison, `&&`, `||`, `!`, or a boolean variable.
    fn condition(&mut self, expr: &Expr) -> NodeId {
        let node = self.expr(expr);
        if self.nodes[node].num != Num::Bool {
            return self.error(expr, "expected a condition (a comparison or a `bool`)");
        }
        node
    }

    /// `for i in start..end { … }` with constant bounds.
    fn for_loop(&mut self, for_loop: &syn::ExprForLoop) {
        if let Some(label) = &for_loop.label {
            self.error(label, "#[grad] does not support loop labels");
        }
        let ident = match &*for_loop.pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => pat.ident.clone(),
            Pat::Wild(wild) => Ident::new("index", wild.span()),
            pat => {
                self.error(pat, "the loop variable must be a name (`for i in 0..N`)");
                return;
            }
        };
        let range = match &*for_loop.expr {
            Expr::Range(range) => range,
            other => {
                self.error(
                    other,
                    "#[grad] loops run over a constant range: `for i in 0..N` or `0..=N`",
                );
                return;
            }
        };
        let (Some(start), Some(end)) = (&range.start, &range.end) else {
            self.error(
                range,
                "the range of a #[grad] loop needs both bounds: `0..N`",
            );
            return;
        };
        let mut constant = true;
        for bound in [&**start, &**end] {
            if !self.is_constant_expr(bound) {
                self.error(
                    bound,
                    "a loop bound must be a constant (a literal, a `const`, or integer \
                     arithmetic on them): the forward pass keeps one slot per iteration on \
                     the stack",
                );
                constant = false;
            }
        }
        if !constant {
            return;
        }
        let inclusive = matches!(range.limits, syn::RangeLimits::Closed(_));
        self.blocks.push(Vec::new());
        self.scopes.push();
        let var = self.declare(&ident, VarKind::Int, Vec::new(), Num::Int);
        self.block_value(&for_loop.body, false);
        self.scopes.pop();
        let body = self.blocks.pop().unwrap_or_default();
        self.emit(Stmt::For {
            var,
            start: start.to_token_stream(),
            end: end.to_token_stream(),
            inclusive,
            body,
        });
    }

    /// Whether an expression is a compile-time integer constant: literals, paths that are
    /// not local variables, and arithmetic on them.
    fn is_constant_expr(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Lit(lit) => matches!(lit.lit, Lit::Int(_)),
            Expr::Path(path) => match path.path.get_ident() {
                Some(ident) => self.scopes.lookup(ident).is_none(),
                None => path.qself.is_none(),
            },
            Expr::Paren(paren) => self.is_constant_expr(&paren.expr),
            Expr::Group(group) => self.is_constant_expr(&group.expr),
            Expr::Binary(binary) => {
                matches!(
                    binary.op,
                    BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_) | BinOp::Rem(_)
                ) && self.is_constant_expr(&binary.left)
                    && self.is_constant_expr(&binary.right)
            }
            Expr::Cast(cast) => is_integer(&cast.ty) && self.is_constant_expr(&cast.expr),
            _ => false,
        }
    }

    // ----- expressions -------------------------------------------------------------------

    /// An expression whose value must be an `f64`.
    fn real(&mut self, expr: &Expr) -> NodeId {
        let node = self.expr(expr);
        self.expect_real(node, expr)
    }

    /// Lowers an expression to the node holding its value.
    fn expr(&mut self, expr: &Expr) -> NodeId {
        match expr {
            Expr::Lit(lit) => self.literal(&lit.lit),
            Expr::Path(path) if path.qself.is_none() => {
                if let Some(ident) = path.path.get_ident() {
                    if let Some(var) = self.scopes.lookup(ident) {
                        return match self.indexed(var, ident, &[], expr) {
                            Some(place) => {
                                let num = self.var_nums[var];
                                self.push(NodeKind::Read(place), num, ident.span())
                            }
                            None => self.poisoned(ident.span()),
                        };
                    }
                }
                if has_generic_args(&path.path) {
                    return self.error(path, "#[grad] does not support generic arguments here");
                }
                // Not a local: a `const`, a static or an associated constant (`f64::EPSILON`).
                self.push(
                    NodeKind::Const(path.to_token_stream()),
                    Num::Unknown,
                    path.span(),
                )
            }
            Expr::Index(index) => {
                let (base, index_exprs) = split_index(expr);
                let ident = match base {
                    Expr::Path(path) if path.qself.is_none() => path.path.get_ident(),
                    _ => None,
                };
                let var = ident.and_then(|ident| Some((ident, self.scopes.lookup(ident)?)));
                match var {
                    Some((ident, var)) => match self.indexed(var, ident, &index_exprs, expr) {
                        Some(place) => {
                            let num = self.var_nums[var];
                            self.push(NodeKind::Read(place), num, index.bracket_token.span.join())
                        }
                        None => self.poisoned(ident.span()),
                    },
                    None => self.error(
                        base,
                        "#[grad] indexes only array parameters and local arrays (`w[i]`)",
                    ),
                }
            }
            Expr::Paren(paren) => self.expr(&paren.expr),
            Expr::Group(group) => self.expr(&group.expr),
            Expr::Unary(unary) => match unary.op {
                UnOp::Neg(_) => match ops::operator("-", 1) {
                    Some(op) => {
                        let arg = self.expr(&unary.expr);
                        self.op(op, vec![arg], &[&*unary.expr], unary.op.span())
                    }
                    None => self.poisoned(unary.op.span()),
                },
                UnOp::Not(_) => {
                    let arg = self.condition(&unary.expr);
                    self.push(NodeKind::Not(arg), Num::Bool, unary.op.span())
                }
                UnOp::Deref(_) => self.error(
                    unary,
                    "#[grad] does not support dereferencing; read elements of array \
                     parameters directly (`w[i]`)",
                ),
                _ => self.error(unary.op, "this operator is not supported by #[grad]"),
            },
            Expr::Binary(binary) => self.binary(binary),
            Expr::MethodCall(call) => {
                if let Some(turbofish) = &call.turbofish {
                    return self.error(turbofish, "#[grad] does not support turbofish arguments");
                }
                let name = call.method.to_string();
                let Some(op) = ops::method(&name) else {
                    return self.error(
                        &call.method,
                        format!(
                            "`{name}` is not a method #[grad] can differentiate; supported: {}",
                            ops::method_names()
                        ),
                    );
                };
                let exprs: Vec<&Expr> = std::iter::once(&*call.receiver)
                    .chain(call.args.iter())
                    .collect();
                self.method(op, &exprs, call, call.method.span())
            }
            Expr::Call(call) => self.call(call),
            Expr::Cast(cast) => self.cast(cast),
            Expr::Block(block) if block.label.is_none() => self
                .block_value(&block.block, true)
                .unwrap_or_else(|| self.poisoned(block.block.brace_token.span.join())),
            Expr::Block(block) => self.error(block, "#[grad] does not support labeled blocks"),
            Expr::If(expr_if) => {
                // A value: a temporary assigned in every branch, then read.
                let ident = Ident::new("if_value", expr_if.if_token.span);
                let var = self.declare(&ident, VarKind::Real, Vec::new(), Num::Real);
                self.vars[var].reassigned = true;
                self.emit(Stmt::Let {
                    var,
                    value: None,
                    nodes: Vec::new(),
                });
                self.if_statement(expr_if, Some(var));
                let place = Place {
                    var,
                    indices: Vec::new(),
                };
                self.push(NodeKind::Read(place), Num::Real, expr_if.if_token.span)
            }
            Expr::Unsafe(block) => self.error(
                block.unsafe_token,
                "#[grad] does not support `unsafe` blocks",
            ),
            Expr::Closure(closure) => self.error(
                closure,
                "#[grad] does not support closures; write a separate #[grad] function and call it",
            ),
            Expr::Macro(mac) => self.error(
                &mac.mac,
                "#[grad] cannot look inside macro calls; write the expression out",
            ),
            Expr::Match(expr) => self.error(
                expr.match_token,
                format!("`match` is not supported: {SUPPORTED_FLOW}"),
            ),
            Expr::ForLoop(expr) => self.error(
                expr.for_token,
                "a `for` loop has no value; use it as a statement",
            ),
            Expr::While(expr) => self.error(
                expr.while_token,
                format!("`while` loops are not supported: {SUPPORTED_FLOW}"),
            ),
            Expr::Loop(expr) => self.error(
                expr.loop_token,
                format!("`loop` is not supported: {SUPPORTED_FLOW}"),
            ),
            Expr::Break(expr) => self.error(
                expr,
                format!("`break` is not supported: {SUPPORTED_FLOW} that run to the end"),
            ),
            Expr::Continue(expr) => self.error(
                expr,
                format!("`continue` is not supported: {SUPPORTED_FLOW} that run to the end"),
            ),
            Expr::Return(ret) => self.error(
                ret,
                "`return` is supported only as the last statement of the function",
            ),
            Expr::Reference(reference) => self.error(
                reference,
                "#[grad] does not support references; use the value itself",
            ),
            Expr::Field(field) => self.error(
                field,
                "#[grad] does not support field access; pass the field as a parameter",
            ),
            Expr::Tuple(tuple) => self.error(
                tuple,
                "#[grad] does not support tuples; values are single `f64`s",
            ),
            Expr::Array(array) => self.error(
                array,
                "#[grad] builds local arrays from a constant (`[0.0; N]`), then assigns elements",
            ),
            Expr::Repeat(array) => self.error(
                array,
                "a local array must be bound by `let` (`let mut h = [0.0; N];`)",
            ),
            Expr::Range(range) => self.error(range, "a range is only a `for` loop's bounds"),
            Expr::Struct(expr) => self.error(expr, "#[grad] does not support struct expressions"),
            Expr::Assign(assign) => self.error(
                assign,
                "an assignment has no value; write it as a statement of its own",
            ),
            expr => self.error(
                expr,
                "#[grad] does not support this expression; supported: `f64` literals and \
                 constants, locals, array elements, `+ - * /`, unary `-`, f64 methods, \
                 comparisons, calls of #[grad] functions, `stop_gradient(..)`, blocks, `if`",
            ),
        }
    }

    fn binary(&mut self, binary: &syn::ExprBinary) -> NodeId {
        if compound_operator(&binary.op).is_some() {
            return self.error(
                binary,
                "an assignment has no value; write it as a statement of its own",
            );
        }
        let symbol = match binary.op {
            BinOp::Add(_) => "+",
            BinOp::Sub(_) => "-",
            BinOp::Mul(_) => "*",
            BinOp::Div(_) => "/",
            BinOp::Rem(_) => {
                // Integer remainder for indices; on f64 it is not differentiable here.
                let lhs = self.expr(&binary.left);
                let rhs = self.expr(&binary.right);
                if self.nodes[lhs].num == Num::Real || self.nodes[rhs].num == Num::Real {
                    return self.error(
                        binary.op,
                        "`%` is supported on integers (indices) only; #[grad] does not \
                         differentiate `f64` remainders",
                    );
                }
                let op = binary.op.to_token_stream();
                let num = self.int_num(lhs, rhs);
                return self.push(NodeKind::Infix { op, lhs, rhs }, num, binary.op.span());
            }
            BinOp::Lt(_)
            | BinOp::Le(_)
            | BinOp::Gt(_)
            | BinOp::Ge(_)
            | BinOp::Eq(_)
            | BinOp::Ne(_) => {
                let lhs = self.expr(&binary.left);
                let rhs = self.expr(&binary.right);
                for (node, expr) in [(lhs, &binary.left), (rhs, &binary.right)] {
                    if self.nodes[node].num == Num::Bool {
                        self.error(expr, "#[grad] compares numbers, not booleans");
                    }
                }
                let op = binary.op.to_token_stream();
                return self.push(
                    NodeKind::Infix { op, lhs, rhs },
                    Num::Bool,
                    binary.op.span(),
                );
            }
            BinOp::And(_) | BinOp::Or(_) => {
                let lhs = self.condition(&binary.left);
                let rhs = self.condition(&binary.right);
                let op = binary.op.to_token_stream();
                return self.push(
                    NodeKind::Infix { op, lhs, rhs },
                    Num::Bool,
                    binary.op.span(),
                );
            }
            _ => {
                return self.error(
                    binary.op,
                    "this operator is not supported by #[grad]; \
                     supported: `+ - * /`, unary `-`, `+= -= *= /=`, comparisons, `&&`, `||`",
                )
            }
        };
        let lhs = self.expr(&binary.left);
        let rhs = self.expr(&binary.right);
        match ops::operator(symbol, 2) {
            Some(op) => {
                let exprs = [&*binary.left, &*binary.right];
                self.op(op, vec![lhs, rhs], &exprs, binary.op.span())
            }
            None => self.poisoned(binary.op.span()),
        }
    }

    fn int_num(&self, lhs: NodeId, rhs: NodeId) -> Num {
        if self.nodes[lhs].num == Num::Int && self.nodes[rhs].num == Num::Int {
            Num::Int
        } else {
            Num::Unknown
        }
    }

    fn cast(&mut self, cast: &syn::ExprCast) -> NodeId {
        let arg = self.expr(&cast.expr);
        if is_f64(&cast.ty) {
            if self.nodes[arg].num == Num::Real {
                return arg; // `x as f64` of an f64 is x itself.
            }
        } else if is_integer(&cast.ty) {
            self.constant_uses.push((
                arg,
                syn::Error::new_spanned(
                    cast,
                    "converting a differentiated value to an integer loses its \
                     gradient; wrap it in `stop_gradient(..)` if that is intended",
                ),
            ));
        } else {
            return self.error(
                &cast.ty,
                "#[grad] supports `as f64` and conversions of constants to integer types",
            );
        }
        let num = if is_f64(&cast.ty) {
            Num::Real
        } else {
            Num::Int
        };
        self.push(
            NodeKind::Cast {
                arg,
                ty: (*cast.ty).clone(),
            },
            num,
            cast.as_token.span,
        )
    }

    fn literal(&mut self, lit: &Lit) -> NodeId {
        match lit {
            Lit::Float(float) if matches!(float.suffix(), "" | "f64") => self.push(
                NodeKind::Const(float.to_token_stream()),
                Num::Real,
                float.span(),
            ),
            Lit::Float(float) => self.error(float, "#[grad] computes in `f64`: drop the suffix"),
            Lit::Int(int) => {
                self.push(NodeKind::Const(int.to_token_stream()), Num::Int, int.span())
            }
            Lit::Bool(boolean) => self.push(
                NodeKind::Const(boolean.to_token_stream()),
                Num::Bool,
                boolean.span(),
            ),
            lit => self.error(lit, "#[grad] supports only numeric and boolean literals"),
        }
    }

    /// `f(args)`: `stop_gradient`, an `f64`/`F64Ext` method in path form, or a user function.
    fn call(&mut self, call: &syn::ExprCall) -> NodeId {
        let path = match &*call.func {
            Expr::Path(path) if path.qself.is_none() => &path.path,
            func => {
                return self.error(
                    func,
                    "#[grad] can call only functions named by a path (`g(x)`, `module::g(x)`)",
                )
            }
        };
        if has_generic_args(path) {
            return self.error(
                path,
                "#[grad] does not support calls with generic arguments",
            );
        }
        let Some(last) = path.segments.last() else {
            return self.poisoned(call.paren_token.span.join());
        };
        let name = last.ident.to_string();

        if name == "stop_gradient" {
            if call.args.len() != 1 {
                return self.error(call, "`stop_gradient` takes one argument");
            }
            let arg = self.real(&call.args[0]);
            return self.push(NodeKind::StopGradient(arg), Num::Real, last.ident.span());
        }

        let is_method_path = path.segments.len() == 2
            && (path.segments[0].ident == "f64" || path.segments[0].ident == "F64Ext");
        if is_method_path {
            return match ops::method(&name) {
                Some(op) => {
                    let exprs: Vec<&Expr> = call.args.iter().collect();
                    self.method(op, &exprs, call, last.ident.span())
                }
                None => self.error(
                    &last.ident,
                    format!(
                        "`{name}` is not a method #[grad] can differentiate; supported: {}",
                        ops::method_names()
                    ),
                ),
            };
        }

        let mut args = Vec::with_capacity(call.args.len());
        for expr in &call.args {
            args.push(self.real(expr));
        }
        self.push(
            NodeKind::Call {
                path: path.clone(),
                args,
            },
            Num::Real,
            path.span(),
        )
    }

    /// A method from the table applied to `exprs` (the receiver first).
    fn method(
        &mut self,
        op: &'static Op,
        exprs: &[&Expr],
        call: &impl ToTokens,
        span: Span,
    ) -> NodeId {
        if exprs.len() != op.args.len() {
            return self.error(
                call,
                format!(
                    "`{}` takes {} argument(s) besides the receiver",
                    op.name,
                    op.args.len() - 1
                ),
            );
        }
        let args = exprs.iter().map(|expr| self.expr(expr)).collect();
        self.op(op, args, exprs, span)
    }

    /// An operation node, after checking each argument's kind against the table.
    /// Operators on integers and constants of unknown type are integer arithmetic
    /// (`N + 1`); an integer mixed with an `f64` is an error, as in Rust.
    ///
    /// `span` is the operator's or the method name's: a cheap span to keep (the span of a
    /// whole expression would walk all its tokens, at every level of nesting).
    fn op(&mut self, op: &'static Op, args: Vec<NodeId>, exprs: &[&Expr], span: Span) -> NodeId {
        let is_operator = matches!(op.syntax, ops::Syntax::Operator(_));
        let any_real = args.iter().any(|&a| self.nodes[a].num == Num::Real);
        let num = if is_operator && !any_real {
            if args.iter().all(|&a| self.nodes[a].num == Num::Int) {
                Num::Int
            } else {
                Num::Unknown
            }
        } else {
            Num::Real
        };
        let mut checked = Vec::with_capacity(args.len());
        for ((&arg, kind), expr) in args.iter().zip(op.args).zip(exprs) {
            checked.push(match kind {
                Arg::Real if num == Num::Real => self.expect_real(arg, expr),
                Arg::Int if self.nodes[arg].num == Num::Real => self.error(
                    expr,
                    format!(
                        "`{}` takes an integer (`i32`) here; for a real exponent use `powf`",
                        op.name
                    ),
                ),
                Arg::Int => {
                    self.constant_uses.push((
                        arg,
                        syn::Error::new_spanned(
                            expr,
                            format!(
                                "this argument of `{}` must be a constant integer, but it \
                                 depends on a differentiated parameter",
                                op.name
                            ),
                        ),
                    ));
                    arg
                }
                Arg::Real => arg,
            });
        }
        for (&arg, expr) in checked.iter().zip(exprs) {
            if self.nodes[arg].num == Num::Bool {
                return self.error(expr, "expected a number, found a boolean");
            }
        }
        self.push(NodeKind::Op { op, args: checked }, num, span)
    }

    /// `node` where an `f64` is required: an integer there is an error (Rust does not
    /// convert `2` to `2.0`).
    fn expect_real(&mut self, node: NodeId, expr: &Expr) -> NodeId {
        self.expect_real_node(node, expr)
    }

    fn expect_real_node(&mut self, node: NodeId, tokens: &impl ToTokens) -> NodeId {
        match self.nodes[node].num {
            Num::Int => self.error(
                tokens,
                "expected an `f64`, found an integer: write a float literal such as `2.0`, \
                 or convert with `as f64`",
            ),
            Num::Bool => self.error(tokens, "expected an `f64`, found a boolean"),
            Num::Real | Num::Unknown => node,
        }
    }
}

/// `a[i][j]` → (`a`, [`i`, `j`]); anything else → (itself, []).
fn split_index(expr: &Expr) -> (&Expr, Vec<&Expr>) {
    let mut indices = Vec::new();
    let mut current = expr;
    loop {
        match current {
            Expr::Index(index) => {
                indices.push(&*index.index);
                current = &index.expr;
            }
            Expr::Paren(paren) => current = &paren.expr,
            Expr::Group(group) => current = &group.expr,
            _ => break,
        }
    }
    indices.reverse();
    (current, indices)
}

/// Statements that have no value (`x = …`, `x += …`, `for …`).
fn is_statement_only(expr: &Expr) -> bool {
    match expr {
        Expr::Assign(_) | Expr::ForLoop(_) | Expr::While(_) => true,
        Expr::If(expr_if) => expr_if.else_branch.is_none(),
        Expr::Binary(binary) => compound_operator(&binary.op).is_some(),
        _ => false,
    }
}

/// The operator of a compound assignment (`+=` → `+`).
fn compound_operator(op: &BinOp) -> Option<&'static str> {
    match op {
        BinOp::AddAssign(_) => Some("+"),
        BinOp::SubAssign(_) => Some("-"),
        BinOp::MulAssign(_) => Some("*"),
        BinOp::DivAssign(_) => Some("/"),
        _ => None,
    }
}

fn has_generic_args(path: &Path) -> bool {
    path.segments
        .iter()
        .any(|segment| !segment.arguments.is_none())
}
