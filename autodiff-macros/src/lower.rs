//! Lowering: the user's `syn::ItemFn` → [`Function`], a list of nodes in evaluation order.
//!
//! ```text
//! fn f(x: f64) -> f64 {          %0 = param x
//!     let mut y = x * 2.0;        %1 = const 2.0      %2 = op mul(%0, %1)
//!     y += x.sin();               %3 = op sin(%0)     %4 = op add(%2, %3)
//!     y                           output %4
//! }
//! ```
//!
//! Local variables disappear: a name maps to the node that holds its current value, so
//! shadowing, `let mut`, reassignment and `+=` are all just a new mapping. Everything this
//! step cannot lower is recorded as an error under the user's tokens and lowering goes on,
//! so one compile reports every problem in the function.

use crate::args::GradArgs;
use crate::errors::Errors;
use crate::ir::{Body, Function, Node, NodeId, NodeKind, Num, Param};
use crate::ops::{self, Arg, Op};
use proc_macro2::Span;
use quote::{quote, ToTokens};
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::{
    BinOp, Block, Expr, FnArg, Ident, Item, ItemFn, Lit, Local, Pat, Path, ReturnType, Stmt, Type,
    UnOp,
};

const STRAIGHT_LINE: &str = "#[grad] differentiates straight-line code for now; \
     for a kink use `max`, `min`, `abs`, `relu` or `clamp`";

/// Lowers a function. Returns every error found in it at once.
pub fn lower(original: ItemFn, args: &GradArgs) -> syn::Result<Function> {
    let mut errors = Errors::default();
    let mut params = signature(&original, args, &mut errors);
    let mut lowering = Lowering {
        nodes: Vec::new(),
        scopes: Scopes::default(),
        items: Vec::new(),
        constant_uses: Vec::new(),
        errors,
    };
    for (index, param) in params.iter_mut().enumerate() {
        param.node = lowering.push(NodeKind::Param(index), Num::Real, param.ident.span());
        lowering.bind(&param.ident, Some(param.node));
    }
    let output = lowering.function_body(&original.block);
    let Lowering {
        nodes,
        items,
        constant_uses,
        errors,
        ..
    } = lowering;
    let wrt = match &args.wrt {
        Some(names) => names
            .iter()
            .filter_map(|name| params.iter().position(|p| p.ident == *name))
            .collect(),
        None => (0..params.len()).collect(),
    };
    errors.finish(Function {
        original,
        params,
        wrt,
        items,
        constant_uses,
        body: Body { nodes, output },
    })
}

/// Checks the signature: `fn name(a: f64, …) -> f64`, nothing else.
fn signature(item: &ItemFn, args: &GradArgs, errors: &mut Errors) -> Vec<Param> {
    let sig = &item.sig;
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

    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(receiver) => errors.at(
                receiver,
                "#[grad] does not support methods with a `self` receiver yet; \
                 write a free function that takes the fields it needs as `f64`",
            ),
            FnArg::Typed(typed) => {
                if !is_f64(&typed.ty) {
                    errors.at(&typed.ty, "#[grad] parameters must have type `f64`");
                }
                match &*typed.pat {
                    Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                        params.push(Param {
                            ident: pat.ident.clone(),
                            node: 0,
                            wrt: args.wrt.is_none(),
                        });
                    }
                    pat => errors.at(
                        pat,
                        "#[grad] parameters must be plain names (`x: f64`), not patterns",
                    ),
                }
            }
        }
    }

    if let Some(wrt) = &args.wrt {
        for (position, name) in wrt.iter().enumerate() {
            if wrt[..position].contains(name) {
                errors.at(name, format!("`{name}` is named twice in `wrt`"));
            } else if let Some(param) = params.iter_mut().find(|p| p.ident == *name) {
                param.wrt = true;
            } else {
                errors.at(
                    name,
                    format!("`wrt` names `{name}`, which is not a parameter"),
                );
            }
        }
    }
    params
}

/// Whether a type is written `f64`.
fn is_f64(ty: &Type) -> bool {
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

struct Lowering {
    nodes: Vec<Node>,
    scopes: Scopes,
    items: Vec<Item>,
    constant_uses: Vec<(NodeId, syn::Error)>,
    errors: Errors,
}

/// Local names in nested block scopes, each mapped to the node holding its current value
/// (`None` for a `let x;` not assigned yet). Lookups are hashed, so a body with thousands
/// of `let`s lowers in linear time.
#[derive(Default)]
struct Scopes {
    /// For each name, its bindings from the outermost to the innermost.
    bindings: HashMap<String, Vec<Option<NodeId>>>,
    /// For each open block, the names it declared (innermost last).
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

    fn bind(&mut self, ident: &Ident, node: Option<NodeId>) {
        let name = ident.to_string();
        self.bindings.entry(name.clone()).or_default().push(node);
        if let Some(scope) = self.declared.last_mut() {
            scope.push(name);
        }
    }

    fn lookup(&self, ident: &Ident) -> Option<Option<NodeId>> {
        self.bindings.get(&ident.to_string())?.last().copied()
    }

    fn assign(&mut self, ident: &Ident, node: NodeId) -> bool {
        match self
            .bindings
            .get_mut(&ident.to_string())
            .and_then(|stack| stack.last_mut())
        {
            Some(slot) => {
                *slot = Some(node);
                true
            }
            None => false,
        }
    }
}

impl Lowering {
    fn push(&mut self, kind: NodeKind, num: Num, span: Span) -> NodeId {
        self.nodes.push(Node { kind, num, span });
        self.nodes.len() - 1
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

    fn bind(&mut self, ident: &Ident, node: Option<NodeId>) {
        self.scopes.bind(ident, node);
    }

    /// The binding of a local: `Some(None)` when declared but not assigned yet.
    fn lookup(&self, ident: &Ident) -> Option<Option<NodeId>> {
        self.scopes.lookup(ident)
    }

    /// Points the innermost binding of `ident` at a new node (assignment to a `mut` local).
    fn assign(&mut self, ident: &Ident, node: NodeId) -> bool {
        self.scopes.assign(ident, node)
    }

    /// The function body: statements, then a tail expression or a final `return expr;`.
    fn function_body(&mut self, block: &Block) -> NodeId {
        let (last, init) = match block.stmts.split_last() {
            Some(split) => split,
            None => {
                return self.error(
                    block,
                    "a #[grad] function must return a value: end the body with an expression",
                )
            }
        };
        for stmt in init {
            self.statement(stmt);
        }
        match last {
            Stmt::Expr(Expr::Return(ret), _) => match &ret.expr {
                Some(value) => self.expr(value),
                None => self.error(ret, "`return` needs a value"),
            },
            Stmt::Expr(expr, None) => self.expr(expr),
            stmt => {
                self.statement(stmt);
                self.error(
                    stmt,
                    "a #[grad] function must end with the value it returns \
                     (a tail expression or `return expr;`)",
                )
            }
        }
    }

    /// `{ stmts; tail }` in a new scope; the tail is optional when the value is unused.
    fn block(&mut self, block: &Block, needs_value: bool) -> Option<NodeId> {
        self.scopes.push();
        let mut value = None;
        for (position, stmt) in block.stmts.iter().enumerate() {
            let last = position + 1 == block.stmts.len();
            match stmt {
                Stmt::Expr(expr, None) if last && needs_value && !is_assignment(expr) => {
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

    fn statement(&mut self, stmt: &Stmt) {
        match stmt {
            Stmt::Local(local) => self.local(local),
            Stmt::Item(item @ (Item::Const(_) | Item::Use(_))) => self.items.push(item.clone()),
            Stmt::Item(item) => {
                self.error(
                    item,
                    "#[grad] supports only `const` and `use` items inside the function; \
                     move other items out of it",
                );
            }
            Stmt::Macro(mac) => {
                self.error(
                    &mac.mac,
                    "#[grad] cannot look inside macro calls; write the expression out",
                );
            }
            Stmt::Expr(expr, _) => self.expr_statement(expr),
        }
    }

    fn expr_statement(&mut self, expr: &Expr) {
        match expr {
            Expr::Assign(assign) => {
                let value = self.expr(&assign.right);
                self.assign_to(&assign.left, value);
            }
            Expr::Binary(binary) if compound_operator(&binary.op).is_some() => {
                let current = self.expr(&binary.left);
                let rhs = self.expr(&binary.right);
                let symbol = compound_operator(&binary.op).unwrap_or("+");
                let value = match ops::operator(symbol, 2) {
                    Some(op) => {
                        let exprs = [&*binary.left, &*binary.right];
                        self.op(op, vec![current, rhs], &exprs, binary.op.span())
                    }
                    None => self.poisoned(binary.op.span()),
                };
                self.assign_to(&binary.left, value);
            }
            Expr::Block(block) if block.label.is_none() => {
                self.block(&block.block, false);
            }
            Expr::Return(ret) => {
                self.error(
                    ret,
                    "`return` is supported only as the last statement of the function",
                );
            }
            expr => {
                // Evaluated for its own sake (a call may have side effects); the value is unused.
                self.expr(expr);
            }
        }
    }

    fn assign_to(&mut self, target: &Expr, value: NodeId) {
        let ident = match target {
            Expr::Path(path) if path.qself.is_none() => path.path.get_ident(),
            _ => None,
        };
        match ident {
            Some(ident) if self.assign(ident, value) => {}
            Some(ident) => {
                self.error(
                    ident,
                    format!("`{ident}` is not a local variable of this function"),
                );
            }
            None => {
                self.error(target, "#[grad] can assign only to local `f64` variables");
            }
        }
    }

    fn local(&mut self, local: &Local) {
        let (pat, ty) = match &local.pat {
            Pat::Type(typed) => (&*typed.pat, Some(&*typed.ty)),
            pat => (pat, None),
        };
        let value = match &local.init {
            // `let x;` (or `let x: f64;`): bound, assigned later.
            None => None,
            Some(init) => {
                if let Some((else_token, _)) = &init.diverge {
                    self.error(else_token, "#[grad] does not support `let … else`");
                }
                let value = self.expr(&init.expr);
                Some(self.declared_type(value, ty, &init.expr))
            }
        };
        if local.init.is_none() {
            if let Some(ty) = ty.filter(|ty| !is_f64(ty)) {
                self.error(ty, "a `let` without a value must be an `f64`");
            }
        }
        match pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                self.bind(&pat.ident, value);
            }
            Pat::Wild(_) => {}
            pat => {
                self.error(
                    pat,
                    "#[grad] supports only `let name = …;` (no destructuring patterns)",
                );
            }
        }
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
            Some(ty) => self.error(
                ty,
                "#[grad] locals must be `f64` (or an integer type for constants)",
            ),
        }
    }

    /// Lowers an expression to the node holding its value.
    fn expr(&mut self, expr: &Expr) -> NodeId {
        match expr {
            Expr::Lit(lit) => self.literal(&lit.lit),
            Expr::Path(path) if path.qself.is_none() => {
                if let Some(ident) = path.path.get_ident() {
                    match self.lookup(ident) {
                        Some(Some(node)) => return node,
                        Some(None) => {
                            return self.error(
                                ident,
                                format!("`{ident}` is read before it is assigned a value"),
                            )
                        }
                        None => {}
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
            Expr::Paren(paren) => self.expr(&paren.expr),
            Expr::Group(group) => self.expr(&group.expr),
            Expr::Unary(unary) => match unary.op {
                UnOp::Neg(_) => match ops::operator("-", 1) {
                    Some(op) => {
                        let arg = self.expr(&unary.expr);
                        self.op(op, vec![arg], &[&*unary.expr], unary.op.span())
                    }
                    None => self.poisoned(unary.span()),
                },
                UnOp::Deref(_) => self.error(
                    unary,
                    "#[grad] does not support dereferencing; parameters and locals are `f64` values",
                ),
                _ => self.error(
                    unary.op,
                    "this operator is not supported by #[grad]; supported: `+ - * /` and unary `-`",
                ),
            },
            Expr::Binary(binary) => {
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
                    BinOp::Lt(_)
                    | BinOp::Le(_)
                    | BinOp::Gt(_)
                    | BinOp::Ge(_)
                    | BinOp::Eq(_)
                    | BinOp::Ne(_)
                    | BinOp::And(_)
                    | BinOp::Or(_) => {
                        return self.error(
                            binary,
                            format!("comparisons and boolean logic are not supported yet: {STRAIGHT_LINE}"),
                        )
                    }
                    _ => {
                        return self.error(
                            binary.op,
                            "this operator is not supported by #[grad]; \
                             supported: `+ - * /`, unary `-` and `+= -= *= /=`",
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
                let exprs: Vec<&Expr> =
                    std::iter::once(&*call.receiver).chain(call.args.iter()).collect();
                self.method(op, &exprs, call, call.method.span())
            }
            Expr::Call(call) => self.call(call),
            Expr::Cast(cast) => {
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
                        "#[grad] supports `as f64` and casts of constants to integer types",
                    );
                }
                let num = if is_f64(&cast.ty) { Num::Real } else { Num::Int };
                self.push(
                    NodeKind::Cast {
                        arg,
                        ty: (*cast.ty).clone(),
                    },
                    num,
                    cast.as_token.span,
                )
            }
            Expr::Block(block) if block.label.is_none() => self
                .block(&block.block, true)
                .unwrap_or_else(|| self.poisoned(block.span())),
            Expr::Block(block) => self.error(block, "#[grad] does not support labeled blocks"),
            Expr::Unsafe(block) => {
                self.error(block.unsafe_token, "#[grad] does not support `unsafe` blocks")
            }
            Expr::Closure(closure) => self.error(
                closure,
                "#[grad] does not support closures; write a separate #[grad] function and call it",
            ),
            Expr::Macro(mac) => self.error(
                &mac.mac,
                "#[grad] cannot look inside macro calls; write the expression out",
            ),
            Expr::If(expr) => self.error(
                expr.if_token,
                format!("`if` is not supported yet: {STRAIGHT_LINE}"),
            ),
            Expr::Match(expr) => self.error(
                expr.match_token,
                format!("`match` is not supported yet: {STRAIGHT_LINE}"),
            ),
            Expr::ForLoop(expr) => {
                self.error(expr.for_token, format!("loops are not supported yet: {STRAIGHT_LINE}"))
            }
            Expr::While(expr) => self.error(
                expr.while_token,
                format!("loops are not supported yet: {STRAIGHT_LINE}"),
            ),
            Expr::Loop(expr) => self.error(
                expr.loop_token,
                format!("loops are not supported yet: {STRAIGHT_LINE}"),
            ),
            Expr::Return(ret) => self.error(
                ret,
                "`return` is supported only as the last statement of the function",
            ),
            Expr::Reference(reference) => self.error(
                reference,
                "#[grad] does not support references; use the `f64` value itself",
            ),
            Expr::Index(index) => self.error(
                index,
                "#[grad] does not support indexing yet; parameters and locals are `f64`",
            ),
            Expr::Field(field) => self.error(
                field,
                "#[grad] does not support field access; pass the field as an `f64` parameter",
            ),
            Expr::Tuple(tuple) => self.error(
                tuple,
                "#[grad] does not support tuples; values are single `f64`s",
            ),
            Expr::Array(array) => self.error(array, "#[grad] does not support arrays yet"),
            Expr::Repeat(array) => self.error(array, "#[grad] does not support arrays yet"),
            Expr::Struct(expr) => self.error(expr, "#[grad] does not support struct expressions"),
            Expr::Assign(assign) => self.error(
                assign,
                "an assignment has no value; write it as a statement of its own",
            ),
            expr => self.error(
                expr,
                "#[grad] does not support this expression; supported: `f64` literals and \
                 constants, locals, `+ - * /`, unary `-`, f64 methods, calls of #[grad] \
                 functions, `stop_gradient(..)` and blocks",
            ),
        }
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
            lit => self.error(lit, "#[grad] supports only numeric literals"),
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
            return self.poisoned(call.span());
        };
        let name = last.ident.to_string();

        if name == "stop_gradient" {
            if call.args.len() != 1 {
                return self.error(call, "`stop_gradient` takes one argument");
            }
            let arg = self.expr(&call.args[0]);
            let arg = self.expect_real(arg, &call.args[0]);
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
            let arg = self.expr(expr);
            args.push(self.expect_real(arg, expr));
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
        self.push(NodeKind::Op { op, args: checked }, num, span)
    }

    /// `node` where an `f64` is required: an integer there is an error (Rust does not
    /// convert `2` to `2.0`).
    fn expect_real(&mut self, node: NodeId, expr: &Expr) -> NodeId {
        if self.nodes[node].num == Num::Int {
            self.error(
                expr,
                "expected an `f64`, found an integer: write a float literal such as `2.0`",
            )
        } else {
            node
        }
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

fn is_assignment(expr: &Expr) -> bool {
    match expr {
        Expr::Assign(_) => true,
        Expr::Binary(binary) => compound_operator(&binary.op).is_some(),
        _ => false,
    }
}

fn has_generic_args(path: &Path) -> bool {
    path.segments
        .iter()
        .any(|segment| !segment.arguments.is_none())
}
