//! The operations of nalgebra values: operators, methods and constructors, each the code
//! that computes it element by element.

use super::build::{at, filled_with, small};
use super::{Pre, Rewriter};
use crate::nalgebra::shape::Shape;
use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::{BinOp, Expr};

impl Rewriter {
    /// `lhs op rhs` with at least one nalgebra operand; `None` if unsupported.
    pub(super) fn binary(
        &mut self,
        op: BinOp,
        lhs: Expr,
        left: &Shape,
        rhs: Expr,
        right: &Shape,
        pre: &mut Pre,
    ) -> Option<(Expr, Shape)> {
        use Shape::{Matrix, Scalar, Vector};
        match (op, left, right) {
            (BinOp::Add(_) | BinOp::Sub(_), _, _) if left.same_lengths(right) => {
                let shape = match (left, right, op) {
                    // point - point = vector; point + vector = point.
                    (Vector { len, point: true }, Vector { point: true, .. }, BinOp::Sub(_)) => {
                        Vector {
                            len: len.clone(),
                            point: false,
                        }
                    }
                    (Vector { len, point: a }, Vector { point: b, .. }, _) => Vector {
                        len: len.clone(),
                        point: *a || *b,
                    },
                    (shape, ..) => shape.clone(),
                };
                let a = self.operand(lhs, pre).to_token_stream();
                let b = self.operand(rhs, pre).to_token_stream();
                let built = self.build(&shape, pre, |i, j| {
                    let (x, y) = (at(&a, left, i, j), at(&b, right, i, j));
                    quote!(#x #op #y)
                });
                Some((built, shape))
            }
            (BinOp::Mul(_), Scalar, shape) | (BinOp::Mul(_) | BinOp::Div(_), shape, Scalar) => {
                let scalar_left = !left.is_array();
                let (array, scalar) = if scalar_left { (rhs, lhs) } else { (lhs, rhs) };
                let a = self.operand(array, pre).to_token_stream();
                let s = match pre {
                    Some(stmts) => {
                        let s = self.fresh("s");
                        stmts.push(syn::parse_quote!(let #s = #scalar;));
                        s.to_token_stream()
                    }
                    None => quote!((#scalar)),
                };
                let shape = shape.clone();
                let built = self.build(&shape, pre, |i, j| {
                    let x = at(&a, &shape, i, j);
                    if scalar_left {
                        quote!(#s * #x)
                    } else {
                        quote!(#x #op #s)
                    }
                });
                Some((built, shape))
            }
            (BinOp::Mul(_), Matrix { rows, cols }, Vector { len, point })
                if cols.to_string() == len.to_string() =>
            {
                let m = self.operand(lhs, pre).to_token_stream();
                let v = self.operand(rhs, pre).to_token_stream();
                // A matrix times a point is a point (a rotation of it).
                let shape = Vector {
                    len: rows.clone(),
                    point: *point,
                };
                let (left, right) = (left.clone(), right.clone());
                let built = self.product(&shape, cols, pre, |i, _, k| {
                    let (x, y) = (at(&m, &left, i, k), at(&v, &right, k, &quote!(0)));
                    quote!(#x * #y)
                });
                Some((built, shape))
            }
            (
                BinOp::Mul(_),
                Matrix { rows, cols },
                Matrix {
                    rows: inner,
                    cols: out,
                },
            ) if cols.to_string() == inner.to_string() => {
                let a = self.operand(lhs, pre).to_token_stream();
                let b = self.operand(rhs, pre).to_token_stream();
                let shape = Matrix {
                    rows: rows.clone(),
                    cols: out.clone(),
                };
                let (left, right) = (left.clone(), right.clone());
                let built = self.product(&shape, cols, pre, |i, j, k| {
                    let (x, y) = (at(&a, &left, i, k), at(&b, &right, k, j));
                    quote!(#x * #y)
                });
                Some((built, shape))
            }
            _ => None,
        }
    }

    /// A method of a nalgebra value; `None` if unsupported.
    pub(super) fn method(
        &mut self,
        call: &syn::ExprMethodCall,
        shape: &Shape,
        args: &[Shape],
        pre: &mut Pre,
    ) -> Option<(Expr, Shape)> {
        let name = call.method.to_string();
        let receiver = (*call.receiver).clone();
        let arg = |k: usize| -> Option<Expr> {
            let arg = call.args.iter().nth(k)?;
            Some(match arg {
                Expr::Reference(reference) => (*reference.expr).clone(),
                arg => arg.clone(),
            })
        };
        let elements = |shape: &Shape| -> Option<TokenStream> {
            match shape {
                Shape::Vector { len, .. } | Shape::Dynamic { len } => Some(len.clone()),
                _ => None,
            }
        };
        match (name.as_str(), args) {
            ("clone" | "to_owned" | "into_owned", []) => Some((receiver, shape.clone())),
            ("len", []) => Some((syn::parse_quote!(#receiver.len()), Shape::Scalar)),
            ("dot", [other]) if shape.same_lengths(other) => {
                let len = elements(shape)?;
                let a = self.operand(receiver, pre).to_token_stream();
                let b = self.operand(arg(0)?, pre).to_token_stream();
                let sum = self.dot(&len, pre, |k| quote!(#a[#k] * #b[#k]));
                Some((sum, Shape::Scalar))
            }
            ("norm_squared" | "magnitude_squared" | "norm" | "magnitude", []) => {
                let a = self.operand(receiver, pre).to_token_stream();
                // nalgebra's order: each column's `dot` with itself, then their sum.
                let squares = match shape {
                    Shape::Vector { len, .. } | Shape::Dynamic { len } => {
                        self.dot(len, pre, |k| quote!(#a[#k] * #a[#k]))
                    }
                    Shape::Matrix { rows, cols } => match small(cols) {
                        Some(c) => {
                            let rows = rows.clone();
                            let columns: Vec<Expr> = (0..c)
                                .map(|j| self.dot(&rows, pre, |i| quote!(#a[#j][#i] * #a[#j][#i])))
                                .collect();
                            syn::parse_quote!((#(#columns)+*))
                        }
                        None => self.reduce(shape, pre, |i, j| {
                            let x = at(&a, shape, i, j);
                            quote!(#x * #x)
                        }),
                    },
                    Shape::Scalar => return None,
                };
                let value = if name.ends_with("squared") {
                    squares
                } else {
                    syn::parse_quote!(#squares.sqrt())
                };
                Some((value, Shape::Scalar))
            }
            ("normalize", []) => {
                let len = elements(shape)?;
                let a = self.operand(receiver, pre).to_token_stream();
                let squares = self.dot(&len, pre, |k| quote!(#a[#k] * #a[#k]));
                let norm = self.fresh("norm");
                pre.as_mut()?
                    .push(syn::parse_quote!(let #norm = #squares.sqrt();));
                let shape = match shape {
                    Shape::Dynamic { .. } => shape.clone(),
                    _ => Shape::Vector { len, point: false },
                };
                let built = self.build(&shape, pre, |i, _| quote!(#a[#i] / #norm));
                Some((built, shape))
            }
            ("cross", [other])
                if shape.same_lengths(other) && small(&elements(shape)?) == Some(3) =>
            {
                let a = self.operand(receiver, pre).to_token_stream();
                let b = self.operand(arg(0)?, pre).to_token_stream();
                let built = syn::parse_quote!([
                    #a[1] * #b[2] - #a[2] * #b[1],
                    #a[2] * #b[0] - #a[0] * #b[2],
                    #a[0] * #b[1] - #a[1] * #b[0]
                ]);
                let shape = Shape::Vector {
                    len: quote!(3),
                    point: false,
                };
                Some((built, shape))
            }
            ("transpose", []) => {
                let Shape::Matrix { rows, cols } = shape else {
                    return None;
                };
                let a = self.operand(receiver, pre).to_token_stream();
                let transposed = Shape::Matrix {
                    rows: cols.clone(),
                    cols: rows.clone(),
                };
                let built = self.build(&transposed, pre, |i, j| quote!(#a[#i][#j]));
                Some((built, transposed))
            }
            ("sum", []) => {
                let a = self.operand(receiver, pre).to_token_stream();
                let sum = self.reduce(shape, pre, |i, j| at(&a, shape, i, j));
                Some((sum, Shape::Scalar))
            }
            ("component_mul" | "component_div", [other]) if shape.same_lengths(other) => {
                let op = if name == "component_mul" {
                    quote!(*)
                } else {
                    quote!(/)
                };
                let a = self.operand(receiver, pre).to_token_stream();
                let b = self.operand(arg(0)?, pre).to_token_stream();
                let result = match shape {
                    Shape::Vector { len, .. } => Shape::Vector {
                        len: len.clone(),
                        point: false,
                    },
                    shape => shape.clone(),
                };
                let (left, right) = (shape.clone(), other.clone());
                let built = self.build(&result, pre, |i, j| {
                    let (x, y) = (at(&a, &left, i, j), at(&b, &right, i, j));
                    quote!(#x #op #y)
                });
                Some((built, result))
            }
            ("column", [Shape::Scalar]) => {
                let Shape::Matrix { rows, .. } = shape else {
                    return None;
                };
                let a = self.operand(receiver, pre).to_token_stream();
                let j = arg(0)?;
                let column = Shape::Vector {
                    len: rows.clone(),
                    point: false,
                };
                let built = self.build(&column, pre, |i, _| quote!(#a[#j][#i]));
                Some((built, column))
            }
            ("scale", [Shape::Scalar]) => {
                let s = arg(0)?;
                let mul: Expr = syn::parse_quote!(#receiver * #s);
                let Expr::Binary(binary) = mul else {
                    return None;
                };
                self.binary(
                    binary.op,
                    *binary.left,
                    shape,
                    *binary.right,
                    &Shape::Scalar,
                    pre,
                )
            }
            _ => None,
        }
    }

    /// `Vector3::new(a, b, c)`, `Matrix3::new(…)` (rows first, as nalgebra takes them),
    /// `::zeros()`, `::identity()`, `Point3::new`; `None` (reported) if unsupported.
    pub(super) fn constructor(
        &mut self,
        shape: Option<Shape>,
        function: &str,
        args: &[Expr],
        path: &syn::Path,
        pre: &mut Pre,
    ) -> Option<(Expr, Shape)> {
        let dynamic = path
            .segments
            .iter()
            .rev()
            .nth(1)
            .is_some_and(|owner| owner.ident == "DVector");
        if dynamic && function == "zeros" && args.len() == 1 {
            let n = &args[0];
            return Some((
                syn::parse_quote!(vec![0.0; #n]),
                Shape::Dynamic { len: quote!(#n) },
            ));
        }
        let Some(shape) = shape else {
            self.errors.at(
                path,
                "#[grad] needs the size of a nalgebra value where it is built: write \
                 `SVector::<f64, 3>::zeros()`, or annotate the `let`",
            );
            return None;
        };
        let real = self.real.clone();
        let built: Expr = match (function, &shape) {
            ("new", Shape::Vector { len, .. }) if small(len) == Some(args.len()) => {
                syn::parse_quote!([#(#args),*])
            }
            ("new", Shape::Matrix { rows, cols })
                if small(rows)
                    .zip(small(cols))
                    .is_some_and(|(r, c)| r * c == args.len()) =>
            {
                let (r, c) = (small(rows)?, small(cols)?);
                let columns = (0..c).map(|j| {
                    let column = (0..r).map(|i| &args[i * c + j]);
                    quote!([#(#column),*])
                });
                syn::parse_quote!([#(#columns),*])
            }
            ("zeros", _) if args.is_empty() => {
                syn::parse2(filled_with(&shape, &quote!(0.0 as #real))).ok()?
            }
            ("identity", Shape::Matrix { .. }) if args.is_empty() => {
                let (one, zero) = (quote!(1.0 as #real), quote!(0.0 as #real));
                let built = self.build(&shape, pre, |i, j| {
                    if i.to_string() == j.to_string() {
                        one.clone()
                    } else if small(i).is_some() && small(j).is_some() {
                        zero.clone()
                    } else {
                        quote!(if #i == #j { #one } else { #zero })
                    }
                });
                if matches!(built, Expr::Path(_)) {
                    // Filled by loops: an `if` on the indices.
                    return Some((built, shape));
                }
                built
            }
            _ => {
                self.errors.at(
                    path,
                    format!(
                        "#[grad] builds nalgebra values with `::new(…)` (every element), \
                         `::zeros()` and `::identity()`, not `::{function}`"
                    ),
                );
                return None;
            }
        };
        Some((built, shape))
    }
}
