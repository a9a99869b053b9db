//! The local partials of the table's operations written as expressions of table
//! operations, for forward mode.
//!
//! The reverse sweep takes partials from the rules (`rules::tanh(x) -> (value, partial)`).
//! Forward mode writes them out instead, with the same arithmetic as the rule
//! (`1 - y·y` for `tanh`, `y·(1 - y)` for `sigmoid`), so that a tangent equals the
//! rule's partial times the input's tangent bit for bit, and so that the tangent program
//! is itself made of operations `#[grad]` differentiates: its derivative is the second
//! derivative. Where the rule is piecewise constant (`abs`, `relu`, `max`, `clamp`, the
//! roundings) the partial is a branch on the operands, whose derivative is zero.
//!
//! ```text
//! y = x.tanh()          ∂y/∂x = 1.0 - y * y
//! y = x.powi(n)         ∂y/∂x = if n == 0 { 0.0 } else { (n as f64) * x.powi(n - 1) }
//! y = x.max(z)          ∂y/∂x = if x >= z || z != z { 1.0 } else { 0.0 }
//! ```

use crate::ir::Float;
use crate::ops::Op;
use proc_macro2::TokenStream;
use quote::quote;

/// The partial of `op`'s result `y` with respect to its `real`-th `f64` argument, given
/// the operands as written (`args`, the receiver first, integer arguments included) and
/// the result. `None` where the partial is the constant 1 or -1 or an operand (the table's
/// `Partial::One`, `MinusOne`, `Primal`), which the caller applies directly.
pub fn expression(
    op: &Op,
    real: usize,
    args: &[TokenStream],
    y: &TokenStream,
    float: Float,
) -> Option<TokenStream> {
    let x = args.first()?;
    let arg = |i: usize| args.get(i).cloned().unwrap_or_default();
    let ty = float;
    // `if cond { 1.0 } else { 0.0 }`: a partial that is piecewise 0 or 1.
    let indicator = |cond: TokenStream| quote!((if #cond { 1.0 } else { 0.0 }));
    Some(match (op.name, real) {
        ("div", 0) => {
            let d = arg(1);
            quote!((1.0 / #d))
        }
        ("div", _) => {
            let d = arg(1);
            quote!((-#y * (1.0 / #d)))
        }
        ("recip", _) => quote!((-#y * #y)),
        ("powi", _) => {
            let n = arg(1);
            quote!((if #n == 0 { 0.0 } else { (#n as #ty) * #x.powi(#n - 1) }))
        }
        ("powf", 0) => {
            let e = arg(1);
            quote!((if #e == 0.0 { 0.0 } else { #e * #x.powf(#e - 1.0) }))
        }
        ("powf", _) => quote!((if #y == 0.0 { 0.0 } else { #y * #x.ln() })),
        ("sqrt", _) => quote!((0.5 / #y)),
        ("cbrt", _) => quote!((1.0 / (3.0 * #y * #y))),
        ("exp", _) => quote!(#y),
        ("exp2", _) => {
            let ln2 = constant(float, "LN_2");
            quote!((#y * #ln2))
        }
        ("exp_m1", _) => quote!(#x.exp()),
        ("ln", _) => quote!(#x.recip()),
        ("ln_1p", _) => quote!((1.0 + #x).recip()),
        ("log2", _) => {
            let ln2 = constant(float, "LN_2");
            quote!((#x * #ln2).recip())
        }
        ("log10", _) => {
            let ln10 = constant(float, "LN_10");
            quote!((#x * #ln10).recip())
        }
        ("log", 0) => {
            let b = arg(1);
            quote!((#x * #b.ln()).recip())
        }
        ("log", _) => {
            let b = arg(1);
            quote!((-#y / (#b * #b.ln())))
        }
        ("sin", _) => quote!(#x.cos()),
        ("cos", _) => quote!((-#x.sin())),
        ("tan", _) => quote!((1.0 + #y * #y)),
        ("asin", _) => quote!((1.0 - #x * #x).sqrt().recip()),
        ("acos", _) => quote!((-(1.0 - #x * #x).sqrt().recip())),
        ("atan", _) => quote!((1.0 + #x * #x).recip()),
        // `y.atan2(x)`: the receiver is `y`.
        ("atan2", 0) => {
            let other = arg(1);
            quote!((#other * (#other * #other + #x * #x).recip()))
        }
        ("atan2", _) => {
            let other = arg(1);
            quote!((-#x * (#other * #other + #x * #x).recip()))
        }
        ("sinh", _) => quote!(#x.cosh()),
        ("cosh", _) => quote!(#x.sinh()),
        ("tanh", _) => quote!((1.0 - #y * #y)),
        ("asinh", _) => quote!((#x * #x + 1.0).sqrt().recip()),
        ("acosh", _) => quote!((#x * #x - 1.0).sqrt().recip()),
        ("atanh", _) => quote!((1.0 - #x * #x).recip()),
        ("abs", _) => quote!((if #x > 0.0 { 1.0 } else if #x < 0.0 { -1.0 } else { 0.0 })),
        ("relu", _) => indicator(quote!(#x > 0.0)),
        ("sigmoid", _) => quote!((#y * (1.0 - #y))),
        ("max", 0) => {
            let other = arg(1);
            indicator(quote!(#x >= #other || #other != #other))
        }
        ("max", _) => {
            let other = arg(1);
            indicator(quote!(!(#x >= #other || #other != #other)))
        }
        ("min", 0) => {
            let other = arg(1);
            indicator(quote!(#x <= #other || #other != #other))
        }
        ("min", _) => {
            let other = arg(1);
            indicator(quote!(!(#x <= #other || #other != #other)))
        }
        ("hypot", 0) => quote!((#x * #y.recip())),
        ("hypot", _) => {
            let other = arg(1);
            quote!((#other * #y.recip()))
        }
        ("clamp", 0) => {
            let (lo, hi) = (arg(1), arg(2));
            indicator(quote!(!(#x < #lo) && !(#x > #hi)))
        }
        ("clamp", 1) => {
            let lo = arg(1);
            indicator(quote!(#x < #lo))
        }
        ("clamp", _) => {
            let (lo, hi) = (arg(1), arg(2));
            indicator(quote!(!(#x < #lo) && #x > #hi))
        }
        // `x.mul_add(a, b)` = x·a + b.
        ("mul_add", 0) => arg(1),
        ("mul_add", 1) => x.clone(),
        ("mul_add", _) => quote!(1.0),
        ("floor" | "ceil" | "round" | "trunc" | "signum" | "div_euclid", _) => quote!(0.0),
        ("rem" | "rem_euclid" | "fract", 0) => quote!(1.0),
        // `r = x - q·m`: the quotient `(x - r)/m`, rounded to the integer it is.
        ("rem" | "rem_euclid", _) => {
            let m = arg(1);
            quote!((0.0 - ((#x - #y) / #m).round()))
        }
        ("copysign", 0) => {
            let sign = arg(1);
            quote!((if #x.is_sign_negative() == #sign.is_sign_negative() { 1.0 } else { -1.0 }))
        }
        ("copysign", _) => quote!(0.0),
        ("to_degrees", _) => {
            let pi = constant(float, "PI");
            quote!((180.0 / #pi))
        }
        ("to_radians", _) => {
            let pi = constant(float, "PI");
            quote!((#pi / 180.0))
        }
        // add, sub, neg, mul: a constant or an operand (the caller's).
        _ => return None,
    })
}

/// `::core::f64::consts::NAME` (or `f32`).
fn constant(float: Float, name: &str) -> TokenStream {
    let module = proc_macro2::Ident::new(float.name(), proc_macro2::Span::call_site());
    let name = proc_macro2::Ident::new(name, proc_macro2::Span::call_site());
    quote!(::core::#module::consts::#name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{Partial, OPS};

    /// Every partial the table computes by a rule is written out here.
    #[test]
    fn every_rule_partial_has_an_expression() {
        let args: Vec<TokenStream> = vec![quote!(a), quote!(b), quote!(c)];
        for op in OPS {
            for (real, partial) in op.partials.iter().enumerate() {
                let written = expression(op, real, &args, &quote!(y), Float::F64);
                match partial {
                    Partial::Rule(_) => assert!(written.is_some(), "{} has no partial", op.name),
                    _ => assert!(written.is_none(), "{} is the caller's", op.name),
                }
            }
        }
    }
}
