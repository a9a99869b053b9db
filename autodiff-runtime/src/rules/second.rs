//! Second partial derivatives of the rules, for second order on a [`Tape`](crate::Tape)
//! ([`Tape::hvp`](crate::Tape::hvp), [`Tape::hessian`](crate::Tape::hessian)).
//!
//! A function of one argument returns `f''(x)`; a function of two returns the three
//! distinct entries of its symmetric local Hessian, `[∂²f/∂x², ∂²f/∂x∂y, ∂²f/∂y²]`, in
//! the order of the arguments of its rule. Operations that are linear in their operands
//! (`+`, `-`, negation, unit conversions) or piecewise linear or constant (`abs`, `relu`,
//! `max`, `min`, `clamp`, `floor`, …) have none: their second partials are 0 everywhere
//! (at a kink, the one-sided value). `x * y` has the constant mixed partial 1, as has
//! `x.mul_add(a, b)` between `x` and `a`.
//!
//! The value and the first partials are the rules' ([`rules`](super)); these only add
//! the curvature. Where a first partial is defined by a convention at a point (`powi` and
//! `powf` with exponent 0 or 1, `powf` at a zero base), the second partial follows the
//! same convention, so that `x.powi(2)` at `x = 0` has the second derivative 2, not
//! `NaN`.
//!
//! ```
//! use autodiff_runtime::rules::second;
//! assert_eq!(second::powi(0.0, 2), 2.0);
//! let [xx, xy, yy] = second::hypot(3.0, 4.0);
//! assert_eq!((xx, xy, yy), (16.0 / 125.0, -12.0 / 125.0, 9.0 / 125.0));
//! ```

use std::f64::consts::{LN_10, LN_2};

/// `(1/x)'' = 2/x³`.
#[must_use]
pub fn recip(x: f64) -> f64 {
    let r = x.recip();
    2.0 * r * r * r
}

/// `(xⁿ)'' = n(n-1)·xⁿ⁻²`, and 0 for `n` of 0 or 1 (where the formula is `0·∞` at 0).
#[must_use]
pub fn powi(x: f64, n: i32) -> f64 {
    match n {
        0 | 1 => 0.0,
        _ => {
            let factor = f64::from(n) * (f64::from(n) - 1.0);
            match n.checked_sub(2) {
                Some(m) => factor * x.powi(m),
                None => factor * (x.powi(n) / (x * x)),
            }
        }
    }
}

/// `(x^c)''` with respect to the base, for a constant exponent `c`: `c(c-1)·x^(c-2)`, and 0
/// for `c` of 0 or 1.
#[must_use]
pub fn powf_wrt_base(x: f64, c: f64) -> f64 {
    if c == 0.0 || c == 1.0 {
        0.0
    } else {
        c * (c - 1.0) * x.powf(c - 2.0)
    }
}

/// `x^y` in both arguments: `[y(y-1)·x^(y-2), x^(y-1)·(1 + y·ln x), x^y·ln²x]`. At a zero
/// base, where the rule's partial with respect to `y` is 0, the second partials that
/// involve `y` are 0 too (for `y > 1`, their limits).
#[must_use]
pub fn powf(x: f64, y: f64) -> [f64; 3] {
    let xx = powf_wrt_base(x, y);
    if x == 0.0 {
        return [xx, 0.0, 0.0];
    }
    let ln = x.ln();
    let xy = if y == 0.0 {
        x.recip()
    } else {
        x.powf(y - 1.0) * y.mul_add(ln, 1.0)
    };
    [xx, xy, x.powf(y) * ln * ln]
}

/// `(√x)'' = -1/(4·x·√x)`.
#[must_use]
pub fn sqrt(x: f64) -> f64 {
    -0.25 / (x * x.sqrt())
}

/// `(∛x)'' = -2/(9·∛x⁵)`.
#[must_use]
pub fn cbrt(x: f64) -> f64 {
    let c = x.cbrt();
    -2.0 / (9.0 * c.powi(5))
}

/// `(eˣ)'' = eˣ`.
#[must_use]
pub fn exp(x: f64) -> f64 {
    x.exp()
}

/// `(2ˣ)'' = 2ˣ·ln²2`.
#[must_use]
pub fn exp2(x: f64) -> f64 {
    x.exp2() * (LN_2 * LN_2)
}

/// `(eˣ - 1)'' = eˣ`.
#[must_use]
pub fn exp_m1(x: f64) -> f64 {
    x.exp()
}

/// `(ln x)'' = -1/x²`.
#[must_use]
pub fn ln(x: f64) -> f64 {
    -1.0 / (x * x)
}

/// `(ln(1+x))'' = -1/(1+x)²`.
#[must_use]
pub fn ln_1p(x: f64) -> f64 {
    let s = 1.0 + x;
    -1.0 / (s * s)
}

/// `(log₂ x)'' = -1/(x²·ln 2)`.
#[must_use]
pub fn log2(x: f64) -> f64 {
    -1.0 / (x * x * LN_2)
}

/// `(log₁₀ x)'' = -1/(x²·ln 10)`.
#[must_use]
pub fn log10(x: f64) -> f64 {
    -1.0 / (x * x * LN_10)
}

/// `log_b x = ln x / ln b` in both arguments:
/// `[-1/(x²·ln b), -1/(x·b·ln²b), ln x·(ln b + 2)/(b²·ln³b)]`.
#[must_use]
pub fn log(x: f64, base: f64) -> [f64; 3] {
    let lb = base.ln();
    [
        -1.0 / (x * x * lb),
        -1.0 / (x * base * lb * lb),
        x.ln() * (lb + 2.0) / (base * base * lb * lb * lb),
    ]
}

/// `(log_b x)''` with respect to `x` for a constant base: `-1/(x²·ln b)`.
#[must_use]
pub fn log_wrt_x(x: f64, base: f64) -> f64 {
    -1.0 / (x * x * base.ln())
}

/// `(sin x)'' = -sin x`.
#[must_use]
pub fn sin(x: f64) -> f64 {
    -x.sin()
}

/// `(cos x)'' = -cos x`.
#[must_use]
pub fn cos(x: f64) -> f64 {
    -x.cos()
}

/// `(tan x)'' = 2·tan x·(1 + tan²x)`.
#[must_use]
pub fn tan(x: f64) -> f64 {
    let t = x.tan();
    2.0 * t * t.mul_add(t, 1.0)
}

/// `(asin x)'' = x/(1-x²)^(3/2)`.
#[must_use]
pub fn asin(x: f64) -> f64 {
    let s = 1.0 - x * x;
    x / (s * s.sqrt())
}

/// `(acos x)'' = -x/(1-x²)^(3/2)`.
#[must_use]
pub fn acos(x: f64) -> f64 {
    -asin(x)
}

/// `(atan x)'' = -2x/(1+x²)²`.
#[must_use]
pub fn atan(x: f64) -> f64 {
    let s = x.mul_add(x, 1.0);
    -2.0 * x / (s * s)
}

/// `y.atan2(x)` in both arguments, `y` first:
/// `[-2xy/r⁴, (y² - x²)/r⁴, 2xy/r⁴]` with `r² = x² + y²`.
#[must_use]
pub fn atan2(y: f64, x: f64) -> [f64; 3] {
    let r2 = x.mul_add(x, y * y);
    let r4 = r2 * r2;
    let xy = 2.0 * x * y / r4;
    [-xy, (y - x) * (y + x) / r4, xy]
}

/// `(sinh x)'' = sinh x`.
#[must_use]
pub fn sinh(x: f64) -> f64 {
    x.sinh()
}

/// `(cosh x)'' = cosh x`.
#[must_use]
pub fn cosh(x: f64) -> f64 {
    x.cosh()
}

/// `(tanh x)'' = -2·tanh x·(1 - tanh²x)`.
#[must_use]
pub fn tanh(x: f64) -> f64 {
    let t = x.tanh();
    -2.0 * t * (1.0 - t * t)
}

/// `(asinh x)'' = -x/(x²+1)^(3/2)`.
#[must_use]
pub fn asinh(x: f64) -> f64 {
    let s = x.mul_add(x, 1.0);
    -x / (s * s.sqrt())
}

/// `(acosh x)'' = -x/(x²-1)^(3/2)`.
#[must_use]
pub fn acosh(x: f64) -> f64 {
    let s = x.mul_add(x, -1.0);
    -x / (s * s.sqrt())
}

/// `(atanh x)'' = 2x/(1-x²)²`.
#[must_use]
pub fn atanh(x: f64) -> f64 {
    let s = 1.0 - x * x;
    2.0 * x / (s * s)
}

/// `σ(x)'' = σ(1-σ)(1-2σ)`.
#[must_use]
pub fn sigmoid(x: f64) -> f64 {
    let (s, d) = super::sigmoid(x);
    d * (1.0 - 2.0 * s)
}

/// `x.hypot(y)` in both arguments: `[y²/h³, -xy/h³, x²/h³]` with `h = √(x²+y²)`.
#[must_use]
pub fn hypot(x: f64, y: f64) -> [f64; 3] {
    let h = x.hypot(y);
    let h3 = h * h * h;
    [y * y / h3, -x * y / h3, x * x / h3]
}

/// `x / y` in both arguments: `[0, -1/y², 2x/y³]`.
#[must_use]
pub fn div(x: f64, y: f64) -> [f64; 3] {
    let r = y.recip();
    [0.0, -r * r, 2.0 * x * r * r * r]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules;

    /// Central differences of a first partial, at two steps, agree with `second` to `tol`.
    fn check(name: &str, second: f64, first: impl Fn(f64) -> f64, x: f64) {
        let at = |h: f64| (first(x + h) - first(x - h)) / (2.0 * h);
        let (coarse, fine) = (at(1e-4), at(1e-5));
        let scale = second.abs().max(1.0);
        assert!(
            (coarse - fine).abs() < 1e-5 * scale,
            "{name} at {x}: differences unsettled"
        );
        assert!(
            (second - fine).abs() < 1e-6 * scale,
            "{name} at {x}: {second} against differences {fine}"
        );
    }

    #[test]
    fn unary_against_differences_of_the_first_partial() {
        type Unary = (&'static str, fn(f64) -> f64, fn(f64) -> (f64, f64));
        let table: [Unary; 24] = [
            ("recip", recip, rules::recip),
            ("sqrt", sqrt, rules::sqrt),
            ("cbrt", cbrt, rules::cbrt),
            ("exp", exp, rules::exp),
            ("exp2", exp2, rules::exp2),
            ("exp_m1", exp_m1, rules::exp_m1),
            ("ln", ln, rules::ln),
            ("ln_1p", ln_1p, rules::ln_1p),
            ("log2", log2, rules::log2),
            ("log10", log10, rules::log10),
            ("sin", sin, rules::sin),
            ("cos", cos, rules::cos),
            ("tan", tan, rules::tan),
            ("asin", asin, rules::asin),
            ("acos", acos, rules::acos),
            ("atan", atan, rules::atan),
            ("sinh", sinh, rules::sinh),
            ("cosh", cosh, rules::cosh),
            ("tanh", tanh, rules::tanh),
            ("asinh", asinh, rules::asinh),
            ("atanh", atanh, rules::atanh),
            ("sigmoid", sigmoid, rules::sigmoid),
            ("acosh", |x| acosh(x + 1.0), |x| rules::acosh(x + 1.0)),
            ("cbrt<0", |x| cbrt(-x), |x| (0.0, -rules::cbrt(-x).1)),
        ];
        for (name, second, rule) in table {
            for x in [0.3, 0.55, 0.8] {
                check(name, second(x), |x| rule(x).1, x);
            }
        }
        for n in [-3, -1, 0, 1, 2, 3, 7] {
            check("powi", powi(0.7, n), |x| rules::powi(x, n).1, 0.7);
        }
        for c in [-1.5, 0.0, 0.5, 1.0, 2.0, 2.5] {
            check(
                "powf_wrt_base",
                powf_wrt_base(0.7, c),
                |x| rules::powf_wrt_base(x, c).1,
                0.7,
            );
        }
        check(
            "log_wrt_x",
            log_wrt_x(0.7, 3.0),
            |x| rules::log(x, 3.0).1,
            0.7,
        );
    }

    #[test]
    fn binary_against_differences_of_the_first_partials() {
        type Binary = (
            &'static str,
            fn(f64, f64) -> [f64; 3],
            fn(f64, f64) -> (f64, f64, f64),
        );
        let table: [Binary; 5] = [
            ("div", div, rules::div),
            ("powf", powf, rules::powf),
            ("log", log, rules::log),
            ("atan2", atan2, rules::atan2),
            ("hypot", hypot, rules::hypot),
        ];
        for (name, second, rule) in table {
            for (x, y) in [(0.7, 2.5), (1.3, 0.4), (2.0, 3.0), (0.6, 0.0)] {
                if (name == "log" || name == "div") && y == 0.0 {
                    continue;
                }
                let [xx, xy, yy] = second(x, y);
                check(name, xx, |x| rule(x, y).1, x);
                check(name, xy, |y| rule(x, y).1, y);
                check(name, xy, |x| rule(x, y).2, x);
                check(name, yy, |y| rule(x, y).2, y);
            }
        }
    }

    #[test]
    fn conventions_at_special_points() {
        // (x²)'' at 0 is 2, not NaN (a reverse-mode Hessian of NaNs in other tools).
        assert_eq!(powi(0.0, 2), 2.0);
        assert_eq!(powf_wrt_base(0.0, 2.0), 2.0);
        assert_eq!(powi(0.0, 1), 0.0);
        assert_eq!(powf_wrt_base(0.0, 1.0), 0.0);
        assert_eq!(powf(0.0, 3.0), [0.0, 0.0, 0.0]);
        assert_eq!(powi(2.0, i32::MIN), 0.0);
        // y = 0: ∂/∂y of y·x^(y-1) is x⁻¹.
        assert_eq!(powf(2.0, 0.0)[1], 0.5);
    }
}
