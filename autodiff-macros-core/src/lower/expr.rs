//! Expressions: literals, reads, operators, methods, calls, casts.

use super::*;

impl Lowering {
    // ----- expressions -------------------------------------------------------------------

    /// An expression whose value must be an `f64`.
    pub(super) fn real(&mut self, expr: &Expr) -> NodeId {
        let node = self.expr(expr);
        self.expect_real(node, expr)
    }

    /// Lowers an expression to the node holding its value.
    pub(super) fn expr(&mut self, expr: &Expr) -> NodeId {
        if let Some(node) = self.opaque_expr(expr) {
            return node;
        }
        match expr {
            Expr::Lit(lit) => self.literal(&lit.lit),
            Expr::Path(path) if path.qself.is_none() => {
                if let Some(ident) = path.path.get_ident() {
                    if let Some(var) = self.scopes.lookup(ident) {
                        if self.opaque.contains(&var) {
                            return self.opaque_read(ident);
                        }
                        if self.named_closures.contains_key(&var) {
                            return self.error(
                                ident,
                                format!(
                                    "`{ident}` is a closure: #[grad] calls it (`{ident}(x)`) \
                                     but does not pass it on"
                                ),
                            );
                        }
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
                    None if matches!(base, Expr::Path(p) if p.qself.is_none())
                        || (self.constant_self
                            && matches!(base, Expr::Field(f) if fields::on_self(f))) =>
                    {
                        // `TABLE[i]`: an element of a constant array.
                        let indices = match self.index_nodes(&index_exprs) {
                            Ok(indices) => indices,
                            Err(poisoned) => return poisoned,
                        };
                        let table = base.to_token_stream();
                        let span = index.bracket_token.span.join();
                        self.push(
                            NodeKind::ConstElement { table, indices },
                            Num::Unknown,
                            span,
                        )
                    }
                    None if matches!(base, Expr::MethodCall(_)) => self.error(
                        base,
                        "#[grad] indexes slices, arrays and local arrays (`w[i]`), not the \
                         result of a method; collecting an iterator is not supported: reduce \
                         it with `.sum()` or `.fold(..)`, or write a loop",
                    ),
                    // A field of a parameter whose type was rejected: reported there.
                    None if self.of_rejected(base) => {
                        self.poisoned(index.bracket_token.span.join())
                    }
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
                UnOp::Deref(_) => {
                    // `*x` of an item of `xs.iter()`: the value itself.
                    self.expr(&unary.expr)
                }
                _ => self.error(unary.op, "this operator is not supported by #[grad]"),
            },
            Expr::Binary(binary) => self.binary(binary),
            Expr::MethodCall(call) => {
                let name = call.method.to_string();
                match name.as_str() {
                    "sum" | "product" | "fold" => return self.reduction(call),
                    "len" | "is_empty" if call.args.is_empty() => {
                        let span = call.method.span();
                        let mut len = self
                            .sequence_var(&call.receiver)
                            .map(|var| self.len_of(var, span));
                        // `w[i].len()` of a row: its constant length, or a row's of run-time
                        // length.
                        if let (None, Expr::Index(index)) = (len, control::strip(&call.receiver)) {
                            len = self.row_length(index, span);
                        }
                        if let Some(len) = len {
                            if name == "len" {
                                return len;
                            }
                            // `xs.is_empty()`: `xs.len() == 0`.
                            let zero = self.push(NodeKind::Const(quote!(0usize)), Num::Int, span);
                            let kind = NodeKind::Infix {
                                op: quote!(==),
                                lhs: len,
                                rhs: zero,
                            };
                            return self.push(kind, Num::Bool, span);
                        }
                    }
                    test if ops::TESTS.contains(&test) && call.args.is_empty() => {
                        let arg = self.real(&call.receiver);
                        let method = call.method.clone();
                        return self.push(
                            NodeKind::Test { method, arg },
                            Num::Bool,
                            call.method.span(),
                        );
                    }
                    _ => {}
                }
                if self.rejected_root(&call.receiver) {
                    // A method of a parameter whose type was rejected: reported there.
                    return self.poisoned(call.method.span());
                }
                if let Some(turbofish) = &call.turbofish {
                    return self.error(turbofish, "#[grad] does not support turbofish arguments");
                }
                if self.is_struct(&call.receiver) {
                    // `self.g(x)`, `self.layer.g(x)`: a method of a differentiable struct.
                    let callee = crate::ir::Callee::Method(call.method.clone());
                    let args: Vec<&Expr> = std::iter::once(&*call.receiver)
                        .chain(call.args.iter())
                        .collect();
                    return self.pullback(callee, &args, 1, call.method.span());
                }
                let Some(op) = ops::method(&name) else {
                    return self.unknown_method(call);
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
                let var = self.declare_named(None, VarKind::Real, Vec::new(), Num::Real);
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
                "#[grad] supports closures as arguments of iterator adapters (`.map(|x| …)`, \
                 `.filter(..)`, `.fold(init, |acc, x| …)`) and bound to a name and called \
                 (`let sq = |t: f64| t * t; sq(a)`)",
            ),
            Expr::Macro(mac) => self.error(
                &mac.mac,
                "#[grad] cannot look inside macro calls; write the expression out",
            ),
            Expr::Match(expr) => {
                let span = expr.match_token.span;
                let var = self.temporary(span);
                self.match_expr(expr, Some(var));
                self.read_var(var, span)
            }
            Expr::Loop(expr) => self.loop_value(expr),
            Expr::ForLoop(expr) => self.error(
                expr.for_token,
                "a `for` loop has no value; use it as a statement",
            ),
            Expr::While(expr) => self.error(
                expr.while_token,
                "a `while` loop has no value; use it as a statement",
            ),
            Expr::Break(expr) => self.break_expr(expr),
            Expr::Continue(expr) => self.continue_expr(expr),
            Expr::Return(ret) => self.return_expr(ret),
            Expr::Let(expr) => self.error(
                expr,
                "#[grad] does not support `if let` and `while let` (patterns such as \
                 `Some(..)` are out of its scope); compute the value outside the #[grad] \
                 function, or test a `bool`",
            ),
            Expr::Reference(reference) if reference.mutability.is_none() => {
                // `&x` of an `f64` read: the value itself.
                self.expr(&reference.expr)
            }
            Expr::Reference(reference) => self.error(
                reference,
                "#[grad] follows a write through `&mut` inside a body only as a call that \
                 is a statement of its own (`step(&mut y, dt);`), whose callee returns \
                 nothing or its value is dropped; write the update in this function, or \
                 return the new value from the callee (`y = step(y, dt);`)",
            ),
            // `bounds(n).0`: a field of a constant call's value.
            Expr::Field(field)
                if matches!(control::strip(&field.base), Expr::Call(call)
                    if matches!(&*call.func, Expr::Path(_)) && self.constant_arguments(call)) =>
            {
                let Expr::Call(call) = control::strip(&field.base) else {
                    return self.poisoned(field.member.span());
                };
                let member = &field.member;
                self.constant_call(call, quote!(.#member))
            }
            Expr::Field(field) if self.constant_self && fields::on_self(field) => {
                // A field of a constant `self`: a constant of the type the compiler knows.
                self.push(
                    NodeKind::Const(field.to_token_stream()),
                    Num::Unknown,
                    field.span(),
                )
            }
            Expr::Field(field) if self.of_rejected(&field.base) => {
                // A field of a parameter whose type was rejected: reported once, there.
                self.poisoned(field.span())
            }
            Expr::Field(field) => self.error(
                field,
                "#[grad] reads the fields of struct parameters that derive `Differentiable` \
                 (`m.w[i]`, `m.layer.b`), not other fields: pass the value as a parameter",
            ),
            Expr::Tuple(tuple) => self.error(
                tuple,
                "#[grad] takes tuples apart where they are written (`let (a, b) = (x, y);`) and \
                 returns them from a function's last expression, but does not keep one in a \
                 variable",
            ),
            Expr::Array(array) => self.error(
                array,
                "#[grad] takes an array literal as a `let` value (`let v = [a, b, c];`) or as \
                 the argument of a call in a statement (`g([a, b])`), not here: bind it by \
                 `let` first",
            ),
            // `const { 2.0 * PI }`: a constant computed as written (the conversion of a
            // constant in a function generic over its float type, see `generic::twin`).
            Expr::Const(constant) => self.push(
                NodeKind::Const(constant.to_token_stream()),
                Num::Unknown,
                constant.const_token.span,
            ),
            Expr::Repeat(array) => self.error(
                array,
                "a local array must be bound by `let` (`let mut h = [0.0; N];`)",
            ),
            Expr::Range(range) => self.error(range, "a range is only a `for` loop's bounds"),
            Expr::Struct(expr) => self.error(
                expr,
                "#[grad] supports a struct literal bound by `let` (`let p = Pair { a: x, b: y };`, \
                 then read by field or destructured), without `..rest`; not as a value \
                 returned, passed or used in place",
            ),
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

    pub(super) fn binary(&mut self, binary: &syn::ExprBinary) -> NodeId {
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
                // A remainder of numbers is the table's `rem`; of integers, index
                // arithmetic.
                let lhs = self.expr(&binary.left);
                let rhs = self.expr(&binary.right);
                if self.nodes[lhs].num == Num::Real || self.nodes[rhs].num == Num::Real {
                    return match ops::operator("%", 2) {
                        Some(op) => {
                            let exprs = [&*binary.left, &*binary.right];
                            self.op(op, vec![lhs, rhs], &exprs, binary.op.span())
                        }
                        None => self.poisoned(binary.op.span()),
                    };
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
                     supported: `+ - * / %`, unary `-`, `+= -= *= /= %=`, comparisons, `&&`, `||`",
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

    /// Whether an expression (`p`, `p.0`, `p.a[i]`) reads a parameter whose type was
    /// rejected.
    fn of_rejected(&self, expr: &Expr) -> bool {
        match control::strip(expr) {
            Expr::Field(field) => self.of_rejected(&field.base),
            Expr::Index(index) => self.of_rejected(&index.expr),
            Expr::Path(path) => path
                .path
                .get_ident()
                .and_then(|ident| self.scopes.lookup(ident))
                .is_some_and(|var| self.silent.contains(&var)),
            _ => false,
        }
    }

    pub(super) fn int_num(&self, lhs: NodeId, rhs: NodeId) -> Num {
        if self.nodes[lhs].num == Num::Int && self.nodes[rhs].num == Num::Int {
            Num::Int
        } else {
            Num::Unknown
        }
    }

    pub(super) fn cast(&mut self, cast: &syn::ExprCast) -> NodeId {
        let arg = self.expr(&cast.expr);
        let float = self.float;
        if float.is(&cast.ty) {
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
            let real = self.real_name();
            return self.error(
                &cast.ty,
                format!(
                    "this #[grad] function computes in `{real}`: it supports `as {real}` and \
                     conversions of constants to integer types"
                ),
            );
        }
        let num = if float.is(&cast.ty) {
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

    pub(super) fn literal(&mut self, lit: &Lit) -> NodeId {
        match lit {
            Lit::Float(float)
                if float.suffix().is_empty() || float.suffix() == self.real_name() =>
            {
                self.push(
                    NodeKind::Const(float.to_token_stream()),
                    Num::Real,
                    float.span(),
                )
            }
            Lit::Float(float) => {
                let message = format!(
                    "#[grad] computes in `{}`: drop the suffix",
                    self.real_name()
                );
                self.error(float, message)
            }
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
    pub(super) fn call(&mut self, call: &syn::ExprCall) -> NodeId {
        if let Expr::Path(path) = &*call.func {
            let named = path.path.get_ident().and_then(|i| self.closure_named(i));
            if let Some(named) = named {
                return self.call_named_closure(named, call);
            }
        }
        let path = match &*call.func {
            Expr::Path(path) if path.qself.is_none() => &path.path,
            func => {
                return self.error(
                    func,
                    "#[grad] can call only functions named by a path (`g(x)`, `module::g(x)`)",
                )
            }
        };
        // Generic arguments (`dot::<T, 3>(a, b)`) stay on the name: `dot_grad::<T, 3>`.
        let Some(last) = path.segments.last() else {
            return self.poisoned(call.paren_token.span.join());
        };
        let name = last.ident.to_string();

        if matches!(name.as_str(), "Some" | "Ok" | "Err") && path.segments.len() == 1 {
            return self.error(
                path,
                "#[grad] computes with `f64`s, integers and `bool`s, not `Option` or `Result`; \
                 compute such values outside the #[grad] function",
            );
        }
        if name == "stop_gradient" {
            if call.args.len() != 1 {
                return self.error(call, "`stop_gradient` takes one argument");
            }
            let arg = self.real(&call.args[0]);
            return self.push(NodeKind::StopGradient(arg), Num::Real, last.ident.span());
        }

        // `f64::tanh(x)` (also `::core::primitive::f64::tanh(x)`), `F64Ext::relu(x)` (also
        // `autodiff::F64Ext::relu(x)`).
        let owner = path
            .segments
            .len()
            .checked_sub(2)
            .map(|i| &path.segments[i].ident);
        let float_path = crate::types::float_of_associated(path);
        let is_method_path = float_path.is_some() || owner.is_some_and(|owner| owner == "F64Ext");
        if float_path.is_some_and(|float| float != self.float) {
            let real = self.real_name();
            let owner = &path.segments[path.segments.len() - 2];
            return self.error(
                owner,
                format!("this #[grad] function computes in `{real}`: write `{real}::{name}`"),
            );
        }
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

        if call.args.iter().any(|arg| self.is_whole(arg)) {
            let callee = crate::ir::Callee::Path(path.clone());
            let args: Vec<&Expr> = call.args.iter().collect();
            return self.pullback(callee, &args, 1, last.ident.span());
        }
        if self.constant_arguments(call) {
            return self.constant_call(call, TokenStream::new());
        }
        let args: Vec<NodeId> = call.args.iter().map(|expr| self.call_value(expr)).collect();
        if args.iter().any(|&arg| self.nodes[arg].num.passed_as_is()) {
            // An integer, a flag or an opaque constant among numbers (`g(x, n)`,
            // `g(x, name)`): through the callee's pullback, which takes them (its partials
            // are those of the numbers only).
            let args = args.into_iter().map(crate::ir::CallArg::Value).collect();
            let callee = crate::ir::Callee::Path(path.clone());
            return self.push(
                NodeKind::Pullback {
                    callee,
                    args,
                    outputs: 1,
                },
                Num::Real,
                last.ident.span(),
            );
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

    /// Whether every argument of `call` reads no `f64` variable of the function (only
    /// integers, `bool`s, constants of other types, literals and `const`s): then the
    /// call's value is a constant.
    pub(super) fn constant_arguments(&self, call: &syn::ExprCall) -> bool {
        call.args.iter().all(|arg| !self.reads_numbers(arg))
    }

    /// Whether `expr` may read an `f64` variable of the function. A length reads none
    /// (`usize::min(k, xs.len() - 1)`).
    fn reads_numbers(&self, expr: &Expr) -> bool {
        match expr {
            Expr::MethodCall(call)
                if call.args.is_empty() && (call.method == "len" || call.method == "is_empty") =>
            {
                false
            }
            Expr::Binary(binary) => {
                self.reads_numbers(&binary.left) || self.reads_numbers(&binary.right)
            }
            Expr::Index(index) => {
                self.reads_numbers(&index.expr) || self.reads_numbers(&index.index)
            }
            Expr::Paren(paren) => self.reads_numbers(&paren.expr),
            Expr::Lit(_) => false,
            _ => !self.variables_all(&expr.to_token_stream(), &mut |var| {
                self.vars[var].kind != VarKind::Real
            }),
        }
    }

    /// `path(args) field`, with constant arguments: a constant, computed as written.
    pub(super) fn constant_call(&mut self, call: &syn::ExprCall, field: TokenStream) -> NodeId {
        let args = call.args.iter().map(|arg| self.call_value(arg)).collect();
        let function = call.func.to_token_stream();
        let span = call.paren_token.span.join();
        self.push(
            NodeKind::Intrinsic {
                function,
                args,
                field,
            },
            Num::Unknown,
            span,
        )
    }

    /// A method from the table applied to `exprs` (the receiver first).
    pub(super) fn method(
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
        let args: Vec<NodeId> = exprs.iter().map(|expr| self.expr(expr)).collect();
        let nums = || args.iter().map(|&a| self.nodes[a].num);
        if matches!(op.name, "min" | "max")
            && nums().any(|num| num == Num::Int)
            && nums().all(|num| num != Num::Real)
        {
            // `n.min(k)` of integers (`rows[i].len().min(3)`): integer arithmetic.
            let function = Ident::new(op.name, Span::call_site());
            let kind = NodeKind::Intrinsic {
                function: quote!(::core::cmp::#function),
                args,
                field: TokenStream::new(),
            };
            return self.push(kind, Num::Int, span);
        }
        self.op(op, args, exprs, span)
    }

    /// An operation node, after checking each argument's kind against the table.
    /// Operators on integers and constants of unknown type are integer arithmetic
    /// (`N + 1`); an integer mixed with an `f64` is an error, as in Rust.
    ///
    /// `span` is the operator's or the method name's: a cheap span to keep (the span of a
    /// whole expression would walk all its tokens, at every level of nesting).
    pub(super) fn op(
        &mut self,
        op: &'static Op,
        args: Vec<NodeId>,
        exprs: &[&Expr],
        span: Span,
    ) -> NodeId {
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
    pub(super) fn expect_real(&mut self, node: NodeId, expr: &Expr) -> NodeId {
        self.expect_real_node(node, expr)
    }

    /// `node` where an `f64` is required, with the error at `span`.
    pub(super) fn expect_real_at(&mut self, node: NodeId, span: Span) -> NodeId {
        match self.nodes[node].num {
            Num::Int | Num::Bool | Num::Opaque => {
                self.error_at(span, "expected an `f64` value here")
            }
            Num::Real | Num::Unknown => node,
        }
    }

    pub(super) fn expect_real_node(&mut self, node: NodeId, tokens: &impl ToTokens) -> NodeId {
        match self.nodes[node].num {
            Num::Int => self.error(
                tokens,
                "expected an `f64`, found an integer: write a float literal such as `2.0`, \
                 or convert with `as f64`",
            ),
            Num::Bool => self.error(tokens, "expected an `f64`, found a boolean"),
            Num::Opaque => self.error(
                tokens,
                "expected an `f64`, found a constant of another type",
            ),
            Num::Real | Num::Unknown => node,
        }
    }

    /// The slice or array variable (or alias of a window) an expression names, if any.
    pub(super) fn sequence_var(&self, expr: &Expr) -> Option<VarId> {
        let Expr::Path(path) = control::strip(expr) else {
            return None;
        };
        let var = self.scopes.lookup(path.path.get_ident()?)?;
        let v = &self.vars[var];
        (v.slice || !v.dims.is_empty()).then_some(var)
    }

    /// An error for a method outside the table: for iterator methods, the forms that work.
    fn unknown_method(&mut self, call: &syn::ExprMethodCall) -> NodeId {
        let name = call.method.to_string();
        const ITERATOR: &[&str] = &[
            "iter",
            "into_iter",
            "map",
            "filter",
            "zip",
            "enumerate",
            "rev",
            "step_by",
            "skip",
            "take",
            "copied",
            "cloned",
            "windows",
            "chunks",
            "chunks_exact",
        ];
        const REDUCTIONS: &[&str] = &[
            "max_by",
            "min_by",
            "reduce",
            "count",
            "last",
            "nth",
            "any",
            "all",
            "position",
            "find",
            "collect",
            "for_each",
            "scan",
            "flat_map",
            "max_by_key",
            "min_by_key",
        ];
        // In an iterator chain, the first link that is not supported is the one to report.
        let mut links = Vec::new();
        let mut current: &Expr = &call.receiver;
        while let Expr::MethodCall(inner) = control::strip(current) {
            links.push(inner);
            current = &inner.receiver;
        }
        let in_chain = links
            .iter()
            .any(|link| ITERATOR.contains(&link.method.to_string().as_str()));
        if in_chain {
            let first_bad = links.iter().rev().find(|link| {
                let name = link.method.to_string();
                !ITERATOR.contains(&name.as_str())
            });
            let (bad, bad_name) = match first_bad {
                Some(link) => (&link.method, link.method.to_string()),
                None => (&call.method, name.clone()),
            };
            let message = format!(
                "#[grad] does not support `.{bad_name}(..)` in an iterator chain; a chain \
                 ends in `.sum()`, `.sum::<f64>()`, `.product()` or `.fold(init, |acc, x| …)` \
                 (for a maximum: `.fold(f64::NEG_INFINITY, |m, x| m.max(x))`), or is the \
                 iterable of a `for` loop"
            );
            return self.error(bad, message);
        }
        let message = if ITERATOR.contains(&name.as_str()) {
            format!(
                "an iterator chain (`.{name}(..)`) must end in `.sum()`, `.sum::<f64>()`, \
                 `.product()` or `.fold(init, |acc, x| …)`, or be the iterable of a `for` loop"
            )
        } else if REDUCTIONS.contains(&name.as_str()) {
            format!(
                "#[grad] does not support `.{name}(..)`; reduce with `.sum()`, `.product()` \
                 or `.fold(init, |acc, x| …)` (for a maximum: \
                 `.fold(f64::NEG_INFINITY, |m, x| m.max(x))`), or write a `for` loop"
            )
        } else {
            format!(
                "`{name}` is not a method #[grad] can differentiate; supported: {}",
                ops::method_names()
            )
        };
        self.error(&call.method, message)
    }
}

impl Lowering {
    /// Whether an expression names a struct parameter or a struct field of one.
    fn is_struct(&self, expr: &Expr) -> bool {
        match control::strip(expr) {
            Expr::Path(path) => path
                .path
                .get_ident()
                .and_then(|ident| self.scopes.lookup(ident))
                .is_some_and(|var| self.structs.contains(&var) && self.vars[var].is_param),
            Expr::Reference(reference) => self.is_struct(&reference.expr),
            // An element of a collection of structs, `m·layers·[l]`.
            Expr::Index(index) => match control::strip(&index.expr) {
                Expr::Path(path) => path
                    .path
                    .get_ident()
                    .and_then(|ident| self.scopes.lookup(ident))
                    .is_some_and(|var| self.element_struct(var)),
                _ => false,
            },
            _ => false,
        }
    }

    /// Whether `var` stands for the elements of a collection of structs as wholes.
    fn element_struct(&self, var: VarId) -> bool {
        let v = &self.vars[var];
        self.structs.contains(&var) && v.is_param && (v.slice || !v.dims.is_empty())
    }

    /// Whether a call argument is passed whole: a struct, or an array or slice parameter
    /// (or a row of one) with fewer indices than it has dimensions.
    pub(super) fn is_whole(&self, expr: &Expr) -> bool {
        self.whole_arg(expr).is_some()
    }

    /// A call argument passed whole, taken apart; `None` for a number.
    fn whole_arg<'e>(&self, arg: &'e Expr) -> Option<WholeArg<'e>> {
        let (expr, reference, deref) = whole_expr(arg);
        let (base, indices) = split_index(expr);
        let Expr::Path(path) = control::strip(base) else {
            return None;
        };
        let ident = path.path.get_ident()?;
        let var = self.scopes.lookup(ident)?;
        let rank = |v: &Var| v.dims.len() + usize::from(v.slice);
        let whole = if self.element_struct(var) {
            indices.len() == 1
        } else if self.structs.contains(&var) {
            self.vars[var].is_param && indices.is_empty()
        } else if let Some(alias) = self.aliases.get(&var) {
            alias.offset.is_none()
                && alias.prefix.len() + indices.len() < rank(&self.vars[alias.var])
        } else {
            rank(&self.vars[var]) > indices.len()
        };
        // `*w` of a reference parameter is passed as written. A row bound by a loop (an
        // alias of `xs[i]`) is passed as `&xs[i]` when the argument as written is a
        // reference (`row` bound by `for row in xs.iter()`, `&row`), else as `xs[i]`
        // (`*row`, or `row` bound by `for &row in xs`).
        // An element of a collection of structs is passed as written (`&m.layers[l]`,
        // or `ps[i]` to a parameter taken by value), and lent as a method's receiver
        // (`m.layers[l].g(x)`, see `pullback`).
        let (reference, deref) = match self.aliases.get(&var) {
            _ if self.element_struct(var) => (reference, false),
            Some(alias) if indices.is_empty() => (
                alias.refs + usize::from(reference) > usize::from(deref),
                false,
            ),
            Some(_) => (reference, false),
            None => (reference, deref && indices.is_empty()),
        };
        whole.then(|| WholeArg {
            ident: ident.clone(),
            var,
            indices,
            reference,
            deref,
        })
    }

    /// A call with arguments passed whole, differentiated through its pullback.
    fn pullback(
        &mut self,
        callee: crate::ir::Callee,
        args: &[&Expr],
        outputs: usize,
        span: Span,
    ) -> NodeId {
        let mut lowered = Vec::with_capacity(args.len());
        let method = matches!(callee, crate::ir::Callee::Method(_));
        for (k, &arg) in args.iter().enumerate() {
            let Some(WholeArg {
                ident,
                var,
                indices: index_exprs,
                mut reference,
                deref,
            }) = self.whole_arg(arg)
            else {
                let node = self.call_value(arg);
                lowered.push(crate::ir::CallArg::Value(node));
                continue;
            };
            // A field or an element of a collection as the receiver (`m.layer.forward(x)`,
            // `m.layers[l].g(x)`) is lent, as method syntax lends it: forward mode passes
            // its tangent as `&self`'s, a reference.
            if method && k == 0 && (ident.to_string().contains('·') || self.element_struct(var)) {
                reference = true;
            }
            let place = if self.element_struct(var) {
                let indices = match self.index_nodes(&index_exprs) {
                    Ok(indices) => indices,
                    Err(poisoned) => return poisoned,
                };
                Place { var, indices }
            } else if self.structs.contains(&var) {
                Place {
                    var,
                    indices: Vec::new(),
                }
            } else {
                let indices = match self.index_nodes(&index_exprs) {
                    Ok(indices) => indices,
                    Err(poisoned) => return poisoned,
                };
                let place = if self.aliases.contains_key(&var) {
                    self.alias_place(var, &indices, ident.span())
                } else {
                    Some(Place { var, indices })
                };
                let Some(place) = place else {
                    return self.poisoned(ident.span());
                };
                let v = &self.vars[place.var];
                if (!v.is_param || v.mutable) && v.slice {
                    let name = ident.to_string().replace('·', ".");
                    return self.error(
                        arg,
                        format!(
                            "#[grad] does not pass a local vector whole to a call yet (the \
                             sweep would keep a copy of `{name}` as it was at the call); pass \
                             its elements, a slice parameter, or a local array"
                        ),
                    );
                }
                place
            };
            lowered.push(crate::ir::CallArg::Whole {
                place,
                reference,
                deref,
            });
        }
        self.push(
            NodeKind::Pullback {
                callee,
                args: lowered,
                outputs,
            },
            Num::Real,
            span,
        )
    }
}

impl Lowering {
    /// An argument of a call passed by value: an opaque parameter (`name`, `op`, also
    /// `&name` or `*name`) or a string literal as it is, a constant that holds no number;
    /// anything else as an expression.
    fn call_value(&mut self, arg: &Expr) -> NodeId {
        let bare = match control::strip(arg) {
            Expr::Reference(reference) if reference.mutability.is_none() => &*reference.expr,
            Expr::Unary(unary) if matches!(unary.op, UnOp::Deref(_)) => &*unary.expr,
            expr => expr,
        };
        let opaque = match control::strip(bare) {
            Expr::Lit(lit) => matches!(lit.lit, syn::Lit::Str(_)),
            Expr::Path(path) if path.qself.is_none() => path
                .path
                .get_ident()
                .and_then(|ident| self.scopes.lookup(ident))
                .is_some_and(|var| self.opaque.contains(&var)),
            _ => false,
        };
        if opaque {
            return self.push(NodeKind::Const(quote!((#arg))), Num::Opaque, arg.span());
        }
        self.expr(arg)
    }
}

/// An argument passed whole (see [`Lowering::whole_arg`]).
struct WholeArg<'e> {
    /// Its name.
    ident: Ident,
    /// Its variable.
    var: VarId,
    /// Its index expressions, fewer than its dimensions.
    indices: Vec<&'e Expr>,
    /// Passed as `&place`.
    reference: bool,
    /// Written `*name`.
    deref: bool,
}

/// The expression an argument passes whole, whether it is passed by reference, and
/// whether it is dereferenced: `&w[j]` → (`w[j]`, true, false), `*x` → (`x`, false, true).
fn whole_expr(expr: &Expr) -> (&Expr, bool, bool) {
    match control::strip(expr) {
        Expr::Reference(r) if r.mutability.is_none() => (control::strip(&r.expr), true, false),
        Expr::Unary(unary) if matches!(unary.op, UnOp::Deref(_)) => {
            (control::strip(&unary.expr), false, true)
        }
        expr => (expr, false, false),
    }
}

impl Lowering {
    /// `h(x)` or `self.h(x)` returning a tuple of `outputs` `f64`s, for `let (a, b) = …`.
    pub(super) fn tuple_call(&mut self, call: &Expr, outputs: usize) -> Option<NodeId> {
        match call {
            Expr::Call(call) => {
                let Expr::Path(path) = &*call.func else {
                    self.error(
                        &call.func,
                        "#[grad] can call only functions named by a path",
                    );
                    return None;
                };
                if path.qself.is_some() {
                    self.error(
                        path,
                        "#[grad] can call only functions named by a path (`g(x)`, \
                         `module::g(x)`), not by a qualified path",
                    );
                    return None;
                }
                let span = call.paren_token.span.join();
                let callee = crate::ir::Callee::Path(path.path.clone());
                let args: Vec<&Expr> = call.args.iter().collect();
                Some(self.pullback(callee, &args, outputs, span))
            }
            Expr::MethodCall(call) if self.is_struct(&call.receiver) => {
                let callee = crate::ir::Callee::Method(call.method.clone());
                let args: Vec<&Expr> = std::iter::once(&*call.receiver)
                    .chain(call.args.iter())
                    .collect();
                Some(self.pullback(callee, &args, outputs, call.method.span()))
            }
            other => {
                self.error(
                    other,
                    "#[grad] unpacks the tuple returned by a `#[grad]` function or method of \
                     a differentiable struct (`let (a, b) = h(x);`)",
                );
                None
            }
        }
    }
}

impl Lowering {
    /// The nodes of index expressions, or (after reporting a non-integer one) a poisoned
    /// node to stand for the whole expression.
    fn index_nodes(&mut self, exprs: &[&Expr]) -> Result<Vec<NodeId>, NodeId> {
        let mut indices = Vec::with_capacity(exprs.len());
        for index in exprs {
            let node = self.expr(index);
            if matches!(self.nodes[node].num, Num::Real | Num::Bool) {
                return Err(self.error(index, "an index must be an integer (`usize`)"));
            }
            indices.push(node);
        }
        Ok(indices)
    }
}
