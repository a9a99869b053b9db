//! The body rewritten in arrays: each value of a nalgebra type becomes the array that
//! stands for it ([`Shape::array_type`]), and each operation on such values the code
//! that computes it element by element, which the pipeline differentiates as it does any
//! code over arrays.
//!
//! Operations whose sizes are integers are written out (`a + b` of two `Vector3`s is
//! `[a[0] + b[0], a[1] + b[1], a[2] + b[2]]`); with a size named by a const generic
//! parameter they are loops that fill a local array. An operand that is not a name is
//! first bound to one by a `let` before the statement (so it is computed once); inside
//! a `while` condition, evaluated again at each turn, that is an error.

use crate::errors::Errors;
use crate::nalgebra::shape::Shape;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
use std::collections::HashMap;
use syn::{BinOp, Block, Expr, Ident, Pat, Stmt, Type, UnOp};

mod build;
mod expr;
mod iter;
mod ops;

use build::filled_with;

/// The rewriting of one function's body.
pub struct Rewriter {
    /// The type of the numbers (`f64`).
    pub(super) real: Type,
    /// The shapes of the variables in scope, innermost scope last.
    pub(super) scopes: Vec<HashMap<String, Shape>>,
    /// The parameters that are slices of nalgebra values, with their elements' shape.
    pub(super) slices: HashMap<String, Shape>,
    /// What cannot be rewritten.
    pub errors: Errors,
    /// How many temporaries and loop variables have been named.
    pub(super) counter: usize,
}

/// Statements to place before the statement being rewritten, or `None` where there is no
/// such place (a `while` condition).
pub(super) type Pre = Option<Vec<Stmt>>;

impl Rewriter {
    /// A rewriter whose outer scope holds the parameters' shapes.
    pub fn new(
        real: Type,
        params: HashMap<String, Shape>,
        slices: HashMap<String, Shape>,
    ) -> Rewriter {
        Rewriter {
            real,
            scopes: vec![params],
            slices,
            errors: Errors::default(),
            counter: 0,
        }
    }

    pub(super) fn fresh(&mut self, stem: &str) -> Ident {
        self.counter += 1;
        format_ident!("__nalgebra_{}_{}", stem, self.counter)
    }

    pub(super) fn lookup(&self, name: &str) -> Shape {
        self.scopes
            .iter()
            .rev()
            .find_map(|scope| scope.get(name))
            .cloned()
            .unwrap_or(Shape::Scalar)
    }

    pub(super) fn bind(&mut self, name: String, shape: Shape) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name, shape);
        }
    }

    /// Rewrites a block in place, in a scope of its own; the shape of its tail value.
    pub fn block(&mut self, block: &mut Block) -> Shape {
        self.scopes.push(HashMap::new());
        let mut out = Vec::with_capacity(block.stmts.len());
        let mut tail = Shape::Scalar;
        for stmt in std::mem::take(&mut block.stmts) {
            let is_tail = matches!(stmt, Stmt::Expr(_, None));
            let (mut stmts, shape) = self.stmt(stmt);
            if is_tail {
                tail = shape;
            }
            out.append(&mut stmts);
        }
        block.stmts = out;
        self.scopes.pop();
        tail
    }

    /// One statement: what it becomes, preceded by the statements its operands need.
    pub(super) fn stmt(&mut self, stmt: Stmt) -> (Vec<Stmt>, Shape) {
        let mut pre = Some(Vec::new());
        match stmt {
            Stmt::Local(mut local) => {
                let declared = match &mut local.pat {
                    Pat::Type(typed) => {
                        let declared =
                            crate::nalgebra::shape::of_type(&typed.ty).map(|(shape, _)| shape);
                        if let Some(shape) = &declared {
                            *typed.ty = syn::parse2(shape.array_type(&self.real))
                                .unwrap_or_else(|_| (*typed.ty).clone());
                        }
                        declared
                    }
                    _ => None,
                };
                // `let r: Matrix3<f64> = rotation(angle);`: a function returning a nalgebra
                // value returns its array through its twin.
                if declared.is_some() {
                    if let Some(init) = &mut local.init {
                        if let Expr::Call(call) = &mut *init.expr {
                            if let Expr::Path(path) = &mut *call.func {
                                let constructor =
                                    crate::nalgebra::shape::of_constructor(&path.path).is_some();
                                if !constructor && path.qself.is_none() {
                                    if let Some(last) = path.path.segments.last_mut() {
                                        last.ident = twin_ident(&last.ident);
                                    }
                                }
                            }
                        }
                    }
                }
                // `let (s, d) = (a + b, a - b);`: one `let` per element, through
                // temporaries (so `let (a, b) = (b, a);` swaps).
                if let (Pat::Tuple(tuple), Some(init)) = (&local.pat, &local.init) {
                    if let Expr::Tuple(values) = &*init.expr {
                        if tuple.elems.len() == values.elems.len() && init.diverge.is_none() {
                            return (self.split_tuple(tuple, values), Shape::Scalar);
                        }
                    }
                }
                // `let mut acc: SVector<f64, N> = SVector::zeros();`: the size from the type.
                let built = match (&declared, local.init.as_mut()) {
                    (Some(shape), Some(init)) => match &*init.expr {
                        Expr::Call(call) => match &*call.func {
                            Expr::Path(path) => {
                                match crate::nalgebra::shape::of_constructor(&path.path) {
                                    Some((None, function)) => {
                                        let args: Vec<Expr> = call.args.iter().cloned().collect();
                                        let path = path.path.clone();
                                        self.constructor(
                                            Some(shape.clone()),
                                            &function,
                                            &args,
                                            &path,
                                            &mut pre,
                                        )
                                        .map(|(built, _)| built)
                                    }
                                    _ => None,
                                }
                            }
                            _ => None,
                        },
                        _ => None,
                    },
                    _ => None,
                };
                if let (Some(built), Some(init)) = (built, local.init.as_mut()) {
                    *init.expr = built;
                }
                let init = local
                    .init
                    .as_mut()
                    .map(|init| self.expr(&mut init.expr, &mut pre));
                // `let v = w;` of a vector of run-time length: a copy, `w.to_vec()`.
                if let (Some(Shape::Dynamic { .. }), Some(init)) = (&init, local.init.as_mut()) {
                    if let Expr::Path(path) = &*init.expr {
                        *init.expr = syn::parse_quote!(#path.to_vec());
                    }
                }
                // `let v: Vector3<f64>;`, assigned later: a local of zeros, assigned whole.
                if let (Some(shape), None) = (&declared, &local.init) {
                    let zeros = filled_with(shape, &quote!(0.0));
                    local.init = Some(syn::LocalInit {
                        eq_token: Default::default(),
                        expr: Box::new(syn::parse_quote!(#zeros)),
                        diverge: None,
                    });
                    make_mut(&mut local.pat);
                }
                let shape = declared.or(init).unwrap_or(Shape::Scalar);
                // `let v = w;` of a vector: a copy of its elements.
                if let Some(name) = pattern_name(&local.pat) {
                    let shape = match shape {
                        // A vector of run-time length: its own length from here on.
                        Shape::Dynamic { .. } => {
                            let ident = Ident::new(&name, Span::call_site());
                            Shape::Dynamic {
                                len: quote!(#ident.len()),
                            }
                        }
                        shape => shape,
                    };
                    self.bind(name, shape.clone());
                } else {
                    self.bind_numbers(&local.pat);
                    if shape.is_array() {
                        self.errors.at(
                            &local.pat,
                            format!(
                                "#[grad] binds {} to a name (`let v = …;`), not a pattern",
                                shape.describe()
                            ),
                        );
                    }
                }
                let mut out = pre.unwrap_or_default();
                out.push(Stmt::Local(local));
                (out, Shape::Scalar)
            }
            Stmt::Expr(expr, semi) => {
                if let Some(stmts) = self.assignment(&expr) {
                    return (stmts, Shape::Scalar);
                }
                let mut expr = expr;
                let shape = self.expr(&mut expr, &mut pre);
                let mut out = pre.unwrap_or_default();
                out.push(Stmt::Expr(expr, semi));
                (out, shape)
            }
            Stmt::Item(item) => (vec![Stmt::Item(item)], Shape::Scalar),
            Stmt::Macro(mac) => (vec![Stmt::Macro(mac)], Shape::Scalar),
        }
    }

    /// `let (a, b) = (x, y);` as `let t1 = x; let t2 = y; let a = t1; let b = t2;`,
    /// each rewritten.
    pub(super) fn split_tuple(
        &mut self,
        pats: &syn::PatTuple,
        values: &syn::ExprTuple,
    ) -> Vec<Stmt> {
        let mut out = Vec::new();
        let mut temporaries = Vec::new();
        for value in &values.elems {
            let name = self.fresh("t");
            let (stmts, _) = self.stmt(syn::parse_quote!(let #name = #value;));
            out.extend(stmts);
            temporaries.push(name);
        }
        for (pat, name) in pats.elems.iter().zip(temporaries) {
            let (stmts, _) = self.stmt(syn::parse_quote!(let #pat = #name;));
            out.extend(stmts);
        }
        out
    }

    /// `v = e;`, `v += e;`, `v -= e;`, `v *= s;`, `v /= s;` of a whole vector or matrix
    /// `v`: element by element. `None` for any other statement.
    pub(super) fn assignment(&mut self, expr: &Expr) -> Option<Vec<Stmt>> {
        let (lhs, rhs, op) = match expr {
            Expr::Assign(assign) => (&*assign.left, &*assign.right, None),
            Expr::Binary(binary)
                if matches!(
                    binary.op,
                    BinOp::AddAssign(_)
                        | BinOp::SubAssign(_)
                        | BinOp::MulAssign(_)
                        | BinOp::DivAssign(_)
                ) =>
            {
                (&*binary.left, &*binary.right, Some(binary.op))
            }
            _ => return None,
        };
        let lhs = match lhs {
            Expr::Unary(unary) if matches!(unary.op, UnOp::Deref(_)) => &*unary.expr,
            lhs => lhs,
        };
        let Expr::Path(path) = lhs else {
            return None;
        };
        let name = path.path.get_ident()?.clone();
        let shape = self.lookup(&name.to_string());
        if !shape.is_array() {
            return None;
        }
        let mut pre = Some(Vec::new());
        let mut rhs = rhs.clone();
        let rhs_shape = self.expr(&mut rhs, &mut pre);
        let scalar_op = matches!(op, Some(BinOp::MulAssign(_) | BinOp::DivAssign(_)));
        if scalar_op == rhs_shape.is_array() || (!scalar_op && !shape.same_lengths(&rhs_shape)) {
            let wanted = if scalar_op {
                "a number".to_string()
            } else {
                shape.describe()
            };
            self.errors.at(
                &rhs,
                format!(
                    "#[grad]: `{name}` is {}, and this is {}; expected {wanted}",
                    shape.describe(),
                    rhs_shape.describe()
                ),
            );
            return Some(Vec::new());
        }
        let mut stmts = pre.unwrap_or_default();
        let rhs = if scalar_op {
            let value = self.fresh("s");
            stmts.push(syn::parse_quote!(let #value = #rhs;));
            value.to_token_stream()
        } else {
            self.named(rhs, &mut stmts).to_token_stream()
        };
        let op = op.map(|op| op.to_token_stream()).unwrap_or(quote!(=));
        let lhs = name.to_token_stream();
        self.each(&shape, &mut stmts, |at| {
            let target = at(&lhs);
            let value = if scalar_op { rhs.clone() } else { at(&rhs) };
            quote!(#target #op #value;)
        });
        Some(stmts)
    }

    /// Places `stmts` before the statement being rewritten, or reports at `at` that there
    /// is no such place (a `while` condition, a match guard).
    pub(super) fn place(&mut self, stmts: Vec<Stmt>, pre: &mut Pre, at: impl ToTokens) {
        match pre {
            Some(pre) => pre.extend(stmts),
            None => self.errors.at(
                at,
                "#[grad] computes a nalgebra value with `let`s before the statement that \
                 uses it, which a `while` condition (evaluated at each turn) or a match guard \
                 does not have: bind it to a `let` inside the loop (`loop { let d = …; if … \
                 { break; } … }`) or in the arm",
            ),
        }
    }

    /// Binds `expr` (an array) to a name by a `let` in `stmts`, unless it is one.
    pub(super) fn named(&mut self, expr: Expr, stmts: &mut Vec<Stmt>) -> Ident {
        if let Expr::Path(path) = &expr {
            if let Some(ident) = path.path.get_ident() {
                return ident.clone();
            }
        }
        let name = self.fresh("v");
        stmts.push(syn::parse_quote!(let #name = #expr;));
        name
    }

    /// [`Rewriter::named`] for an operand: an error inside a `while` condition.
    pub(super) fn operand(&mut self, expr: Expr, pre: &mut Pre) -> Ident {
        match pre {
            Some(stmts) => self.named(expr, stmts),
            None => {
                if let Expr::Path(path) = &expr {
                    if let Some(ident) = path.path.get_ident() {
                        return ident.clone();
                    }
                }
                self.place(Vec::new(), &mut None, &expr);
                Ident::new("__nalgebra_error", Span::call_site())
            }
        }
    }
}

/// The name of the twin in arrays of a function of nalgebra's types, where the user wrote
/// `ident` (see [`super::twin`]).
pub(super) fn twin_ident(ident: &Ident) -> Ident {
    let name = ident.to_string();
    if name.ends_with("_nalgebra") {
        return ident.clone(); // named already
    }
    format_ident!("{}_nalgebra", ident, span = ident.span())
}

/// `mut` on the name a `let` binds.
pub(super) fn make_mut(pat: &mut Pat) {
    match pat {
        Pat::Ident(ident) => ident.mutability = Some(Default::default()),
        Pat::Type(typed) => make_mut(&mut typed.pat),
        _ => {}
    }
}

/// The name a `let` binds, `v` of `let v`, `let mut v`, `let v: T`.
pub(super) fn pattern_name(pat: &Pat) -> Option<String> {
    match pat {
        Pat::Ident(ident) if ident.subpat.is_none() => Some(ident.ident.to_string()),
        Pat::Type(typed) => pattern_name(&typed.pat),
        _ => None,
    }
}

pub(super) fn parse_stmts(tokens: TokenStream) -> Vec<Stmt> {
    syn::parse::Parser::parse2(Block::parse_within, tokens).unwrap_or_default()
}
