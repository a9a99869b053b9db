//! Expressions: each rewritten in place, with its shape; the operations of nalgebra values
//! are in [`super::ops`].

use super::build::at;
use super::{twin_ident, Pre, Rewriter};
use crate::nalgebra::shape::Shape;
use quote::{quote, ToTokens};
use std::collections::HashMap;
use syn::visit_mut::VisitMut;
use syn::{BinOp, Block, Expr, UnOp};

impl Rewriter {
    /// Rewrites `expr` in place; its shape. Statements its operands need go to `pre`.
    pub fn expr(&mut self, expr: &mut Expr, pre: &mut Pre) -> Shape {
        match expr {
            Expr::Path(path) => match path.path.get_ident() {
                Some(ident) => self.lookup(&ident.to_string()),
                None => Shape::Scalar,
            },
            Expr::Lit(_) => Shape::Scalar,
            Expr::Paren(paren) => self.expr(&mut paren.expr, pre),
            Expr::Group(group) => self.expr(&mut group.expr, pre),
            Expr::Reference(reference) => self.expr(&mut reference.expr, pre),
            Expr::Unary(unary) => {
                let shape = self.expr(&mut unary.expr, pre);
                match (&unary.op, shape.is_array()) {
                    (_, false) => Shape::Scalar,
                    (UnOp::Neg(_), true) => {
                        let a = self.operand((*unary.expr).clone(), pre);
                        let a = a.to_token_stream();
                        *expr = self.build(&shape, pre, |i, j| {
                            let x = at(&a, &shape, i, j);
                            quote!(-#x)
                        });
                        shape
                    }
                    (UnOp::Deref(_), true) => {
                        *expr = (*unary.expr).clone();
                        shape
                    }
                    _ => self.unsupported(expr, &shape),
                }
            }
            Expr::Binary(binary) => {
                let left = self.expr(&mut binary.left, pre);
                let right = self.expr(&mut binary.right, pre);
                if !left.is_array() && !right.is_array() {
                    return Shape::Scalar;
                }
                let (lhs, rhs) = ((*binary.left).clone(), (*binary.right).clone());
                let (rewritten, shape) = match self.binary(binary.op, lhs, &left, rhs, &right, pre)
                {
                    Some(done) => done,
                    None => {
                        let unknown = matches!(binary.op, BinOp::Add(_) | BinOp::Sub(_))
                            && left.is_array() != right.is_array();
                        let message = if unknown {
                            format!(
                                "#[grad] sees `{}` of {} and {}: where the number is a \
                                 nalgebra value whose type it cannot see (a constant, a \
                                 struct's field, a call without a `let` of its type), build \
                                 it in the function (`Vector3::new(..)`) or write its type on \
                                 a `let`",
                                binary.op.to_token_stream(),
                                left.describe(),
                                right.describe()
                            )
                        } else {
                            format!(
                                "#[grad] does not support `{}` of {} and {} (supported: `+` \
                                 and `-` of the same shape, `*` of a matrix and a vector or \
                                 matrix, `*` and `/` by a number)",
                                binary.op.to_token_stream(),
                                left.describe(),
                                right.describe()
                            )
                        };
                        self.errors.at(binary.op, message);
                        return Shape::Scalar;
                    }
                };
                *expr = rewritten;
                shape
            }
            Expr::Index(index) => {
                if let Some(element) = self.slice_of(&index.expr) {
                    // `pts[i]`: a row of the slice of arrays.
                    self.expr(&mut index.index, pre);
                    return element;
                }
                let shape = self.expr(&mut index.expr, pre);
                self.expr(&mut index.index, pre);
                match shape {
                    Shape::Scalar => Shape::Scalar,
                    Shape::Vector { .. } | Shape::Dynamic { .. } => {
                        let base = self.operand((*index.expr).clone(), pre);
                        *index.expr = syn::parse_quote!(#base);
                        Shape::Scalar
                    }
                    Shape::Matrix { .. } => {
                        let base = self.operand((*index.expr).clone(), pre);
                        match &*index.index {
                            Expr::Tuple(tuple) if tuple.elems.len() == 2 => {
                                let (i, j) = (&tuple.elems[0], &tuple.elems[1]);
                                *expr = syn::parse_quote!(#base[#j][#i]);
                            }
                            other => {
                                self.errors
                                    .at(other, "#[grad] reads a matrix's elements as `m[(i, j)]`");
                            }
                        }
                        Shape::Scalar
                    }
                }
            }
            Expr::Field(field) => {
                let shape = self.expr(&mut field.base, pre);
                let syn::Member::Named(member) = &field.member else {
                    return Shape::Scalar;
                };
                match (&shape, member.to_string().as_str()) {
                    (Shape::Vector { len, point }, "coords") if *point => {
                        *expr = (*field.base).clone();
                        Shape::Vector {
                            len: len.clone(),
                            point: false,
                        }
                    }
                    (Shape::Vector { .. }, name @ ("x" | "y" | "z" | "w")) => {
                        let i = match name {
                            "x" => 0usize,
                            "y" => 1,
                            "z" => 2,
                            _ => 3,
                        };
                        let base = self.operand((*field.base).clone(), pre);
                        *expr = syn::parse_quote!(#base[#i]);
                        Shape::Scalar
                    }
                    (Shape::Scalar, _) => Shape::Scalar,
                    (shape, _) => self.unsupported(expr, &shape.clone()),
                }
            }
            Expr::MethodCall(call) => {
                if let Some(shape) = self.iterator_method(call, pre) {
                    return shape;
                }
                let shape = self.expr(&mut call.receiver, pre);
                let args: Vec<Shape> = call
                    .args
                    .iter_mut()
                    .map(|arg| self.expr(arg, pre))
                    .collect();
                if !shape.is_array() {
                    if let Some(arg) = args.iter().position(Shape::is_array) {
                        return self.passed(&call.args[arg], &args[arg]);
                    }
                    return Shape::Scalar;
                }
                match self.method(call, &shape, &args, pre) {
                    Some((rewritten, shape)) => {
                        *expr = rewritten;
                        shape
                    }
                    None if call.method == "transpose" => {
                        self.errors.at(
                            &call.method,
                            "#[grad] does not support row vectors, such as a vector's \
                             transpose; for `aᵀ·b` write `a.dot(&b)`, for `a·bᵀ` build the \
                             matrix with `Matrix3::new(..)`",
                        );
                        Shape::Scalar
                    }
                    None if matches!(
                        call.method.to_string().as_str(),
                        "dot" | "cross" | "component_mul" | "component_div"
                    ) && args.first().is_some_and(|arg| !arg.same_lengths(&shape)) =>
                    {
                        let message = format!(
                            "#[grad] sees `.{}(..)` of {} and {}: the argument must be a \
                             vector of the same length (a value whose type #[grad] cannot see, \
                             a constant or a struct's field, reads as a number: build it in \
                             the function or write its type on a `let`)",
                            call.method,
                            shape.describe(),
                            args.first().map(Shape::describe).unwrap_or_default()
                        );
                        self.errors.at(&call.method, message);
                        Shape::Scalar
                    }
                    None => {
                        let name = call.method.to_string();
                        self.errors.at(
                            &call.method,
                            format!(
                                "#[grad] does not support `.{name}(..)` of {}; supported: \
                                 dot, norm, norm_squared, magnitude, magnitude_squared, \
                                 normalize, cross, transpose, sum, component_mul, \
                                 component_div, scale, column",
                                shape.describe()
                            ),
                        );
                        Shape::Scalar
                    }
                }
            }
            Expr::Call(call) => {
                let args: Vec<Shape> = call
                    .args
                    .iter_mut()
                    .map(|arg| self.expr(arg, pre))
                    .collect();
                if let Expr::Path(path) = &*call.func {
                    if let Some((shape, function)) =
                        crate::nalgebra::shape::of_constructor(&path.path)
                    {
                        let args: Vec<Expr> = call.args.iter().cloned().collect();
                        return match self.constructor(shape, &function, &args, &path.path, pre) {
                            Some((rewritten, shape)) => {
                                *expr = rewritten;
                                shape
                            }
                            None => Shape::Scalar,
                        };
                    }
                }
                if args.iter().any(Shape::is_array) {
                    // A `#[grad]` function of nalgebra's types: its twin in arrays, with
                    // what the pipeline generated for it.
                    match &mut *call.func {
                        Expr::Path(path) if path.qself.is_none() => {
                            if let Some(last) = path.path.segments.last_mut() {
                                last.ident = twin_ident(&last.ident);
                            }
                        }
                        _ => {
                            let arg = args.iter().position(Shape::is_array).unwrap_or(0);
                            return self.passed(&call.args[arg], &args[arg]);
                        }
                    }
                }
                Shape::Scalar
            }
            Expr::If(expr_if) => {
                self.expr(&mut expr_if.cond, pre);
                let then = self.block(&mut expr_if.then_branch);
                if let Some((_, otherwise)) = &mut expr_if.else_branch {
                    // An `else if`'s condition, computed before the `if` (it has no
                    // effects, and nothing it reads changes unless the first branch runs).
                    self.expr(otherwise, pre);
                }
                if then.is_array() {
                    self.errors.at(
                        expr_if.if_token,
                        "#[grad] computes an `if` whose value is a nalgebra type only as a \
                         statement: declare the value before (`let mut v = …;`) and assign \
                         it in the branches",
                    );
                }
                Shape::Scalar
            }
            Expr::Block(block) => {
                let shape = self.block(&mut block.block);
                if shape.is_array() {
                    self.errors.push(syn::Error::new(
                        block.block.brace_token.span.join(),
                        "#[grad] does not support a block whose value is a nalgebra type: \
                         compute the value with `let`s before it",
                    ));
                }
                Shape::Scalar
            }
            Expr::While(expr_while) => {
                let mut none: Pre = None;
                self.expr(&mut expr_while.cond, &mut none);
                self.block(&mut expr_while.body);
                Shape::Scalar
            }
            Expr::ForLoop(expr_for) => {
                let yielded = self.yields(&expr_for.expr);
                self.expr(&mut expr_for.expr, pre);
                self.scopes.push(HashMap::new());
                self.bind_numbers(&expr_for.pat);
                if let Some(yielded) = &yielded {
                    self.bind_pattern(&expr_for.pat, yielded);
                }
                self.block(&mut expr_for.body);
                self.scopes.pop();
                Shape::Scalar
            }
            Expr::Loop(expr_loop) => {
                self.block(&mut expr_loop.body);
                Shape::Scalar
            }
            Expr::Closure(closure) => {
                self.closure(closure, None);
                Shape::Scalar
            }
            Expr::Match(expr_match) => {
                self.expr(&mut expr_match.expr, pre);
                for arm in &mut expr_match.arms {
                    if let Some((_, guard)) = &mut arm.guard {
                        let mut none: Pre = None;
                        self.expr(guard, &mut none);
                    }
                    let shape = self.with_own_statements(&mut arm.body);
                    if shape.is_array() {
                        self.errors.at(
                            &arm.body,
                            "#[grad] computes a `match` whose value is a nalgebra type only \
                             as a statement: declare the value before and assign it in the arms",
                        );
                    }
                }
                Shape::Scalar
            }
            _ => {
                // Anything else: its operands, in place.
                let mut children = Children {
                    rewriter: self,
                    pre,
                };
                syn::visit_mut::visit_expr_mut(&mut children, expr);
                Shape::Scalar
            }
        }
    }

    /// Rewrites `body`, which has no statement before it of its own (a closure's body, a
    /// match arm): the statements its operands need make it a block. Its shape.
    fn with_own_statements(&mut self, body: &mut Expr) -> Shape {
        let mut inner = Some(Vec::new());
        let shape = self.expr(body, &mut inner);
        let stmts = inner.unwrap_or_default();
        if !stmts.is_empty() {
            let value = &*body;
            *body = syn::parse_quote!({ #(#stmts)* #value });
        }
        shape
    }

    /// A closure: its parameters are numbers, but for the one at `element.0`, which takes
    /// what the iterator yields (`element.1`); its value must be a number.
    pub(super) fn closure(
        &mut self,
        closure: &mut syn::ExprClosure,
        element: Option<(usize, &super::iter::Yield)>,
    ) {
        self.scopes.push(HashMap::new());
        for input in &closure.inputs {
            self.bind_numbers(input);
        }
        if let Some((position, yielded)) = element {
            if let Some(pat) = closure.inputs.iter().nth(position) {
                let pat = pat.clone();
                self.bind_pattern(&pat, yielded);
            }
        }
        let shape = self.with_own_statements(&mut closure.body);
        self.scopes.pop();
        if shape.is_array() {
            self.errors.at(
                &closure.body,
                "#[grad] does not support closures whose value is a nalgebra type",
            );
        }
    }

    /// The error for a nalgebra value passed to what is not a function's path.
    pub(super) fn passed(&mut self, arg: &Expr, shape: &Shape) -> Shape {
        self.errors.at(
            arg,
            format!(
                "#[grad] passes nalgebra values (this is {}) to functions named by a path, \
                 `#[grad]` functions of nalgebra's types; pass its elements, or call this \
                 outside the #[grad] function",
                shape.describe()
            ),
        );
        Shape::Scalar
    }

    pub(super) fn unsupported(&mut self, expr: &Expr, shape: &Shape) -> Shape {
        self.errors.at(
            expr,
            format!(
                "#[grad] does not support this use of {} (see the guide's nalgebra section)",
                shape.describe()
            ),
        );
        Shape::Scalar
    }
}

/// Visits the direct operands of an expression with the rewriter.
struct Children<'a> {
    rewriter: &'a mut Rewriter,
    pre: &'a mut Pre,
}

impl VisitMut for Children<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        self.rewriter.expr(expr, self.pre);
    }

    fn visit_block_mut(&mut self, block: &mut Block) {
        self.rewriter.block(block);
    }
}
