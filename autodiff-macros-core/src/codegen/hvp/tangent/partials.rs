//! The partials of the table's operations as table operations, for the tangent
//! transformation: they mirror the rules' arithmetic (`1 - y·y` for `tanh`), so the
//! reverse sweep differentiates them like any user's code.

use super::Transform;
use crate::ir::{NodeId, NodeKind, Num};
use crate::ops::Op;
use proc_macro2::{Span, TokenStream};
use quote::quote;

impl Transform<'_> {
    /// The partial of `op`'s result `y` (node `result`) with respect to its `real`-th
    /// `f64` argument, in table operations that mirror the rule's arithmetic.
    pub(super) fn partial(
        &mut self,
        op: &'static Op,
        args: &[NodeId],
        result: NodeId,
        real: usize,
        span: Span,
        out: &mut Vec<NodeId>,
    ) -> NodeId {
        let x = args[0];
        let other = args.get(1).copied().unwrap_or(x);
        let y = result;
        let real_type = self.source.real;
        macro_rules! op {
            ($name:literal, $($arg:expr),+) => {{
                let args = vec![$($arg),+];
                self.op($name, args, span, out)
            }};
        }
        match (op.name, real) {
            ("div", 0) => op!("recip", other),
            ("div", _) => {
                let neg = op!("neg", y);
                let inv = op!("recip", other);
                op!("mul", neg, inv)
            }
            ("recip", _) => {
                let neg = op!("neg", y);
                op!("mul", neg, y)
            }
            ("powi", _) => {
                // n·xⁿ⁻¹, and 0 for n = 0 as the rule has it (not 0·x⁻¹, NaN at x = 0).
                let n = other;
                let literal = match &self.nodes[n].kind {
                    NodeKind::Const(tokens) => tokens.to_string().parse::<i32>().ok(),
                    _ => None,
                };
                match literal {
                    Some(0) => self.real_constant("0.0", span, out),
                    Some(k) => {
                        let less = k.saturating_sub(1);
                        let less = self.push(NodeKind::Const(quote!(#less)), Num::Int, span, out);
                        let power = op!("powi", x, less);
                        let factor = self.real_constant(&format!("{k}.0"), span, out);
                        op!("mul", factor, power)
                    }
                    None => {
                        // An exponent known at run time: n - 1 + (n == 0) as i32, which is
                        // 0 for n = 0, so that the product is 0·x⁰ = 0.
                        let int = |this: &mut Self, tokens: TokenStream, out: &mut Vec<NodeId>| {
                            this.push(NodeKind::Const(tokens), Num::Int, span, out)
                        };
                        let infix = |this: &mut Self, op, lhs, rhs, num, out: &mut Vec<NodeId>| {
                            this.push(NodeKind::Infix { op, lhs, rhs }, num, span, out)
                        };
                        let (one, zero) = (int(self, quote!(1), out), int(self, quote!(0), out));
                        let less = infix(self, quote!(-), n, one, Num::Int, out);
                        let is_zero = infix(self, quote!(==), n, zero, Num::Bool, out);
                        let i32_type = syn::parse_quote!(::core::primitive::i32);
                        let bump = self.push(
                            NodeKind::Cast {
                                arg: is_zero,
                                ty: i32_type,
                            },
                            Num::Int,
                            span,
                            out,
                        );
                        let exponent = infix(self, quote!(+), less, bump, Num::Int, out);
                        let power = op!("powi", x, exponent);
                        let ty = syn::parse_quote!(#real_type);
                        let factor = self.push(NodeKind::Cast { arg: n, ty }, Num::Real, span, out);
                        op!("mul", factor, power)
                    }
                }
            }
            ("powf", 0) => {
                let one = self.real_constant("1.0", span, out);
                let less = op!("sub", other, one);
                let power = op!("powf", x, less);
                op!("mul", other, power)
            }
            ("powf", _) => {
                let ln = op!("ln", x);
                op!("mul", y, ln)
            }
            ("sqrt", _) => {
                let half = self.real_constant("0.5", span, out);
                op!("div", half, y)
            }
            ("cbrt", _) => {
                let three = self.real_constant("3.0", span, out);
                let one = self.real_constant("1.0", span, out);
                let t = op!("mul", three, y);
                let d = op!("mul", t, y);
                op!("div", one, d)
            }
            ("exp", _) => y,
            ("exp2", _) => {
                let ln2 = self.float_constant("LN_2", span, out);
                op!("mul", y, ln2)
            }
            ("exp_m1", _) => op!("exp", x),
            ("ln", _) => op!("recip", x),
            ("ln_1p", _) => {
                let one = self.real_constant("1.0", span, out);
                let s = op!("add", one, x);
                op!("recip", s)
            }
            ("log2" | "log10", _) => {
                let name = if op.name == "log2" { "LN_2" } else { "LN_10" };
                let ln = self.float_constant(name, span, out);
                let m = op!("mul", x, ln);
                op!("recip", m)
            }
            ("log", 0) => {
                let ln = op!("ln", other);
                let m = op!("mul", x, ln);
                op!("recip", m)
            }
            ("log", _) => {
                let ln = op!("ln", other);
                let m = op!("mul", other, ln);
                let neg = op!("neg", y);
                op!("div", neg, m)
            }
            ("sin", _) => op!("cos", x),
            ("cos", _) => {
                let s = op!("sin", x);
                op!("neg", s)
            }
            ("tan", _) => {
                let one = self.real_constant("1.0", span, out);
                let sq = op!("mul", y, y);
                op!("add", one, sq)
            }
            ("asin" | "acos", _) => {
                let one = self.real_constant("1.0", span, out);
                let sq = op!("mul", x, x);
                let d = op!("sub", one, sq);
                let r = op!("sqrt", d);
                let inv = op!("recip", r);
                if op.name == "acos" {
                    op!("neg", inv)
                } else {
                    inv
                }
            }
            ("atan", _) => {
                let one = self.real_constant("1.0", span, out);
                let sq = op!("mul", x, x);
                let s = op!("add", one, sq);
                op!("recip", s)
            }
            // `y.atan2(x)`: the receiver is `y`, the argument `x`.
            ("atan2", _) => {
                let xx = op!("mul", other, other);
                let yy = op!("mul", x, x);
                let s = op!("add", xx, yy);
                let inv = op!("recip", s);
                if real == 0 {
                    op!("mul", other, inv)
                } else {
                    let neg = op!("neg", x);
                    op!("mul", neg, inv)
                }
            }
            ("sinh", _) => op!("cosh", x),
            ("cosh", _) => op!("sinh", x),
            ("tanh", _) => {
                let one = self.real_constant("1.0", span, out);
                let sq = op!("mul", y, y);
                op!("sub", one, sq)
            }
            ("asinh" | "acosh", _) => {
                let one = self.real_constant("1.0", span, out);
                let sq = op!("mul", x, x);
                let d = if op.name == "asinh" {
                    op!("add", sq, one)
                } else {
                    op!("sub", sq, one)
                };
                let r = op!("sqrt", d);
                op!("recip", r)
            }
            ("atanh", _) => {
                let one = self.real_constant("1.0", span, out);
                let sq = op!("mul", x, x);
                let d = op!("sub", one, sq);
                op!("recip", d)
            }
            ("sigmoid", _) => {
                let one = self.real_constant("1.0", span, out);
                let d = op!("sub", one, y);
                op!("mul", y, d)
            }
            ("hypot", _) => {
                let inv = op!("recip", y);
                let which = if real == 0 { x } else { other };
                op!("mul", which, inv)
            }
            ("mul_add", 0) => other,
            ("mul_add", 1) => x,
            ("mul_add", _) => self.real_constant("1.0", span, out),
            // Piecewise constant: the rule's partial, whose derivative is zero.
            _ => self.push(
                NodeKind::RulePartial {
                    op,
                    args: args.to_vec(),
                    index: real,
                },
                Num::Real,
                span,
                out,
            ),
        }
    }
}
