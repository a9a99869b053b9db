//! Derivative rules: one function per elementary operation.
//!
//! Each rule returns the primal value followed by the local partial derivative with
//! respect to each `f64` argument, in argument order:
//!
//! ```
//! use autodiff_runtime::rules;
//! let (value, d_dx) = rules::tanh(0.5);
//! assert_eq!(value, 0.5f64.tanh());
//! assert!((d_dx - (1.0 - value * value)).abs() < 1e-15);
//!
//! let (value, d_dx, d_dy) = rules::mul(3.0, 4.0);
//! assert_eq!((value, d_dx, d_dy), (12.0, 4.0, 3.0));
//! ```
//!
//! The value is always computed exactly as the corresponding `f64` operation of the
//! standard library computes it (the same call, the same order), so code differentiated by
//! `#[grad]` returns the same value, bit for bit, as the function it came from. The
//! generated code, [`Value`](crate::Value) and [`Tape`](crate::Tape) all call these rules,
//! so the three engines agree bit for bit on every operation.
//!
//! # Subgradients at kinks
//! Where an operation is not differentiable, the rule returns a fixed, documented
//! subgradient:
//! - [`relu`]: `relu'(0) = 0`.
//! - [`abs`]: `abs'(0) = 0`.
//! - [`max`] and [`min`]: on a tie the first argument receives the whole adjoint
//!   (partials `(1, 0)`).
//! - [`floor`], [`ceil`], [`round`], [`trunc`], [`signum`]: derivative 0 everywhere
//!   (the jumps are ignored).
//!
//! Outside an operation's domain the partials follow IEEE arithmetic (`NaN` or
//! infinities), exactly like the value.

/// `-x`. Partial: `-1`.
#[inline]
#[must_use]
pub fn neg(x: f64) -> (f64, f64) {
    (-x, -1.0)
}

/// `x + y`. Partials: `(1, 1)`.
#[inline]
#[must_use]
pub fn add(x: f64, y: f64) -> (f64, f64, f64) {
    (x + y, 1.0, 1.0)
}

/// `x - y`. Partials: `(1, -1)`.
#[inline]
#[must_use]
pub fn sub(x: f64, y: f64) -> (f64, f64, f64) {
    (x - y, 1.0, -1.0)
}

/// `x * y`. Partials: `(y, x)`.
#[inline]
#[must_use]
pub fn mul(x: f64, y: f64) -> (f64, f64, f64) {
    (x * y, y, x)
}

/// `x / y`. Partials: `(1/y, -(x/y)/y)`.
#[inline]
#[must_use]
pub fn div(x: f64, y: f64) -> (f64, f64, f64) {
    let value = x / y;
    let inv = 1.0 / y;
    (value, inv, -value * inv)
}

/// `x.recip()`. Partial: `-1/x²`.
#[inline]
#[must_use]
pub fn recip(x: f64) -> (f64, f64) {
    let value = x.recip();
    (value, -value * value)
}

/// `x.powi(n)`. Partial: `n·xⁿ⁻¹` (0 for `n = 0`).
#[inline]
#[must_use]
pub fn powi(x: f64, n: i32) -> (f64, f64) {
    let value = x.powi(n);
    let partial = match n {
        0 => 0.0,
        // `n - 1` would overflow: xⁿ⁻¹ = xⁿ / x.
        i32::MIN => f64::from(n) * (value / x),
        _ => f64::from(n) * x.powi(n - 1),
    };
    (value, partial)
}

/// `x.powf(y)`. Partials: `(y·x^(y-1), xʸ·ln x)`.
///
/// When only one argument carries a gradient, [`powf_wrt_base`] and [`powf_wrt_exp`]
/// compute just the partial that is needed (so a constant exponent never evaluates `ln x`).
#[inline]
#[must_use]
pub fn powf(x: f64, y: f64) -> (f64, f64, f64) {
    let value = x.powf(y);
    (value, powf_partial_base(x, y), powf_partial_exp(x, value))
}

/// `x.powf(y)` with the partial with respect to the base only: `(xʸ, y·x^(y-1))`.
#[inline]
#[must_use]
pub fn powf_wrt_base(x: f64, y: f64) -> (f64, f64) {
    (x.powf(y), powf_partial_base(x, y))
}

/// `x.powf(y)` with the partial with respect to the exponent only: `(xʸ, xʸ·ln x)`.
#[inline]
#[must_use]
pub fn powf_wrt_exp(x: f64, y: f64) -> (f64, f64) {
    let value = x.powf(y);
    (value, powf_partial_exp(x, value))
}

#[inline]
fn powf_partial_base(x: f64, y: f64) -> f64 {
    if y == 0.0 {
        0.0
    } else {
        y * x.powf(y - 1.0)
    }
}

#[inline]
fn powf_partial_exp(x: f64, value: f64) -> f64 {
    // x^y · ln x; a zero value (x = 0, y > 0) contributes nothing rather than 0 · -inf.
    if value == 0.0 {
        0.0
    } else {
        value * x.ln()
    }
}

/// `x.sqrt()`. Partial: `1/(2√x)`.
#[inline]
#[must_use]
pub fn sqrt(x: f64) -> (f64, f64) {
    let value = x.sqrt();
    (value, 0.5 / value)
}

/// `x.cbrt()`. Partial: `1/(3·∛x²)`.
#[inline]
#[must_use]
pub fn cbrt(x: f64) -> (f64, f64) {
    let value = x.cbrt();
    (value, 1.0 / (3.0 * value * value))
}

/// `x.exp()`. Partial: `eˣ`.
#[inline]
#[must_use]
pub fn exp(x: f64) -> (f64, f64) {
    let value = x.exp();
    (value, value)
}

/// `x.exp2()`. Partial: `2ˣ·ln 2`.
#[inline]
#[must_use]
pub fn exp2(x: f64) -> (f64, f64) {
    let value = x.exp2();
    (value, value * core::f64::consts::LN_2)
}

/// `x.exp_m1()`. Partial: `eˣ`.
#[inline]
#[must_use]
pub fn exp_m1(x: f64) -> (f64, f64) {
    // Not `value + 1`: for x < 0 that cancels, and loses every digit below x ≈ -37.
    (x.exp_m1(), x.exp())
}

/// `x.ln()`. Partial: `1/x`.
#[inline]
#[must_use]
pub fn ln(x: f64) -> (f64, f64) {
    (x.ln(), x.recip())
}

/// `x.ln_1p()`. Partial: `1/(1+x)`.
#[inline]
#[must_use]
pub fn ln_1p(x: f64) -> (f64, f64) {
    (x.ln_1p(), (1.0 + x).recip())
}

/// `x.log2()`. Partial: `1/(x·ln 2)`.
#[inline]
#[must_use]
pub fn log2(x: f64) -> (f64, f64) {
    (x.log2(), (x * core::f64::consts::LN_2).recip())
}

/// `x.log10()`. Partial: `1/(x·ln 10)`.
#[inline]
#[must_use]
pub fn log10(x: f64) -> (f64, f64) {
    (x.log10(), (x * core::f64::consts::LN_10).recip())
}

/// `x.log(base)`. Partials: `(1/(x·ln b), -log_b(x)/(b·ln b))`.
#[inline]
#[must_use]
pub fn log(x: f64, base: f64) -> (f64, f64, f64) {
    let value = x.log(base);
    let ln_base = base.ln();
    (value, (x * ln_base).recip(), -value / (base * ln_base))
}

/// `x.sin()`. Partial: `cos x`.
#[inline]
#[must_use]
pub fn sin(x: f64) -> (f64, f64) {
    (x.sin(), x.cos())
}

/// `x.cos()`. Partial: `-sin x`.
#[inline]
#[must_use]
pub fn cos(x: f64) -> (f64, f64) {
    (x.cos(), -x.sin())
}

/// `x.tan()`. Partial: `1 + tan²x`.
#[inline]
#[must_use]
pub fn tan(x: f64) -> (f64, f64) {
    let value = x.tan();
    (value, 1.0 + value * value)
}

/// `x.asin()`. Partial: `1/√(1-x²)`.
#[inline]
#[must_use]
pub fn asin(x: f64) -> (f64, f64) {
    (x.asin(), (1.0 - x * x).sqrt().recip())
}

/// `x.acos()`. Partial: `-1/√(1-x²)`.
#[inline]
#[must_use]
pub fn acos(x: f64) -> (f64, f64) {
    (x.acos(), -(1.0 - x * x).sqrt().recip())
}

/// `x.atan()`. Partial: `1/(1+x²)`.
#[inline]
#[must_use]
pub fn atan(x: f64) -> (f64, f64) {
    (x.atan(), (1.0 + x * x).recip())
}

/// `y.atan2(x)` (the angle of the point `(x, y)`). Partials: `(x/(x²+y²), -y/(x²+y²))`,
/// with respect to `y` then `x`, the order of the arguments.
#[inline]
#[must_use]
pub fn atan2(y: f64, x: f64) -> (f64, f64, f64) {
    let inv = (x * x + y * y).recip();
    (y.atan2(x), x * inv, -y * inv)
}

/// `x.sinh()`. Partial: `cosh x`.
#[inline]
#[must_use]
pub fn sinh(x: f64) -> (f64, f64) {
    (x.sinh(), x.cosh())
}

/// `x.cosh()`. Partial: `sinh x`.
#[inline]
#[must_use]
pub fn cosh(x: f64) -> (f64, f64) {
    (x.cosh(), x.sinh())
}

/// `x.tanh()`. Partial: `1 - tanh²x`.
#[inline]
#[must_use]
pub fn tanh(x: f64) -> (f64, f64) {
    let value = x.tanh();
    (value, 1.0 - value * value)
}

/// `x.asinh()`. Partial: `1/√(x²+1)`.
#[inline]
#[must_use]
pub fn asinh(x: f64) -> (f64, f64) {
    (x.asinh(), (x * x + 1.0).sqrt().recip())
}

/// `x.acosh()`. Partial: `1/√(x²-1)`.
#[inline]
#[must_use]
pub fn acosh(x: f64) -> (f64, f64) {
    (x.acosh(), (x * x - 1.0).sqrt().recip())
}

/// `x.atanh()`. Partial: `1/(1-x²)`.
#[inline]
#[must_use]
pub fn atanh(x: f64) -> (f64, f64) {
    (x.atanh(), (1.0 - x * x).recip())
}

/// `x.abs()`. Partial: `sign x`, with the subgradient `abs'(0) = 0`.
#[inline]
#[must_use]
pub fn abs(x: f64) -> (f64, f64) {
    let partial = if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    };
    (x.abs(), partial)
}

/// `x.relu()` = `max(x, 0)`. Partial: 1 for `x > 0`, else 0 (subgradient `relu'(0) = 0`).
#[inline]
#[must_use]
pub fn relu(x: f64) -> (f64, f64) {
    (crate::F64Ext::relu(x), if x > 0.0 { 1.0 } else { 0.0 })
}

/// `x.sigmoid()` = `1/(1+e⁻ˣ)`. Partial: `σ(x)·(1-σ(x))`.
#[inline]
#[must_use]
pub fn sigmoid(x: f64) -> (f64, f64) {
    let value = crate::F64Ext::sigmoid(x);
    (value, value * (1.0 - value))
}

/// `x.max(y)`. Partials: `(1, 0)` when `x >= y` (a tie goes to the first argument),
/// else `(0, 1)`. As in `f64::max`, a `NaN` argument is ignored: the other one gets the
/// adjoint.
#[inline]
#[must_use]
pub fn max(x: f64, y: f64) -> (f64, f64, f64) {
    let first = x >= y || y.is_nan();
    (
        x.max(y),
        f64::from(u8::from(first)),
        f64::from(u8::from(!first)),
    )
}

/// `x.min(y)`. Partials: `(1, 0)` when `x <= y` (a tie goes to the first argument),
/// else `(0, 1)`. As in `f64::min`, a `NaN` argument is ignored: the other one gets the
/// adjoint.
#[inline]
#[must_use]
pub fn min(x: f64, y: f64) -> (f64, f64, f64) {
    let first = x <= y || y.is_nan();
    (
        x.min(y),
        f64::from(u8::from(first)),
        f64::from(u8::from(!first)),
    )
}

/// `x.hypot(y)` = `√(x²+y²)`. Partials: `(x/h, y/h)`.
#[inline]
#[must_use]
pub fn hypot(x: f64, y: f64) -> (f64, f64, f64) {
    let value = x.hypot(y);
    let inv = value.recip();
    (value, x * inv, y * inv)
}

/// `x.mul_add(a, b)` = `x·a + b` with one rounding. Partials: `(a, x, 1)`.
#[inline]
#[must_use]
pub fn mul_add(x: f64, a: f64, b: f64) -> (f64, f64, f64, f64) {
    (x.mul_add(a, b), a, x, 1.0)
}

/// `x.floor()`. Partial: 0 (piecewise constant).
#[inline]
#[must_use]
pub fn floor(x: f64) -> (f64, f64) {
    (x.floor(), 0.0)
}

/// `x.ceil()`. Partial: 0 (piecewise constant).
#[inline]
#[must_use]
pub fn ceil(x: f64) -> (f64, f64) {
    (x.ceil(), 0.0)
}

/// `x.round()`. Partial: 0 (piecewise constant).
#[inline]
#[must_use]
pub fn round(x: f64) -> (f64, f64) {
    (x.round(), 0.0)
}

/// `x.trunc()`. Partial: 0 (piecewise constant).
#[inline]
#[must_use]
pub fn trunc(x: f64) -> (f64, f64) {
    (x.trunc(), 0.0)
}

/// `x.signum()`. Partial: 0 (piecewise constant).
#[inline]
#[must_use]
pub fn signum(x: f64) -> (f64, f64) {
    (x.signum(), 0.0)
}

/// `x.to_degrees()`. Partial: `180/π`.
#[inline]
#[must_use]
pub fn to_degrees(x: f64) -> (f64, f64) {
    (x.to_degrees(), 180.0 / core::f64::consts::PI)
}

/// `x.to_radians()`. Partial: `π/180`.
#[inline]
#[must_use]
pub fn to_radians(x: f64) -> (f64, f64) {
    (x.to_radians(), core::f64::consts::PI / 180.0)
}

/// `x.clamp(lo, hi)`. Partials with respect to `(x, lo, hi)`: `(1, 0, 0)` inside
/// `[lo, hi]` (its ends included: a tie goes to `x`), otherwise the bound that was hit
/// gets 1.
#[inline]
#[must_use]
pub fn clamp(x: f64, lo: f64, hi: f64) -> (f64, f64, f64, f64) {
    let value = x.clamp(lo, hi);
    if x < lo {
        (value, 0.0, 1.0, 0.0)
    } else if x > hi {
        (value, 0.0, 0.0, 1.0)
    } else {
        (value, 1.0, 0.0, 0.0)
    }
}
