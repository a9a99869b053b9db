//! The rules, generic over [`Real`] (`f64` or `f32`): each computes in the type it is
//! given (`generic::tanh(0.5f32)` is `f32` arithmetic throughout). Code that `#[grad]`
//! generates calls these; [`rules`](super) has the same rules for `f64`, for people.
//!
//! ```
//! use autodiff_runtime::rules::generic;
//! let (value, d_dx): (f32, f32) = generic::tanh(0.5f32);
//! assert_eq!(value, 0.5f32.tanh());
//! assert_eq!(d_dx, 1.0 - value * value);
//! ```

use crate::Real;

/// `-x`. Partial: `-1`.
#[inline]
#[must_use]
pub fn neg<R: Real>(x: R) -> (R, R) {
    (-x, -R::ONE)
}

/// `x + y`. Partials: `(1, 1)`.
#[inline]
#[must_use]
pub fn add<R: Real>(x: R, y: R) -> (R, R, R) {
    (x + y, R::ONE, R::ONE)
}

/// `x - y`. Partials: `(1, -1)`.
#[inline]
#[must_use]
pub fn sub<R: Real>(x: R, y: R) -> (R, R, R) {
    (x - y, R::ONE, -R::ONE)
}

/// `x * y`. Partials: `(y, x)`.
#[inline]
#[must_use]
pub fn mul<R: Real>(x: R, y: R) -> (R, R, R) {
    (x * y, y, x)
}

/// `x / y`. Partials: `(1/y, -(x/y)/y)`.
#[inline]
#[must_use]
pub fn div<R: Real>(x: R, y: R) -> (R, R, R) {
    let value = x / y;
    let inv = R::ONE / y;
    (value, inv, -value * inv)
}

/// `x.recip()`. Partial: `-1/x²`.
#[inline]
#[must_use]
pub fn recip<R: Real>(x: R) -> (R, R) {
    let value = x.recip();
    (value, -value * value)
}

/// `x.powi(n)`. Partial: `n·xⁿ⁻¹` (0 for `n = 0`).
#[inline]
#[must_use]
pub fn powi<R: Real>(x: R, n: i32) -> (R, R) {
    let value = x.powi(n);
    let partial = match n {
        0 => R::ZERO,
        // `n - 1` would overflow: xⁿ⁻¹ = xⁿ / x.
        i32::MIN => R::from_i32(n) * (value / x),
        _ => R::from_i32(n) * x.powi(n - 1),
    };
    (value, partial)
}

/// `x.powf(y)`. Partials: `(y·x^(y-1), xʸ·ln x)`.
///
/// When only one argument carries a gradient, [`powf_wrt_base`] and [`powf_wrt_exp`]
/// compute just the partial that is needed (so a constant exponent never evaluates `ln x`).
#[inline]
#[must_use]
pub fn powf<R: Real>(x: R, y: R) -> (R, R, R) {
    let value = x.powf(y);
    (value, powf_partial_base(x, y), powf_partial_exp(x, value))
}

/// `x.powf(y)` with the partial with respect to the base only: `(xʸ, y·x^(y-1))`.
#[inline]
#[must_use]
pub fn powf_wrt_base<R: Real>(x: R, y: R) -> (R, R) {
    (x.powf(y), powf_partial_base(x, y))
}

/// `x.powf(y)` with the partial with respect to the exponent only: `(xʸ, xʸ·ln x)`.
#[inline]
#[must_use]
pub fn powf_wrt_exp<R: Real>(x: R, y: R) -> (R, R) {
    let value = x.powf(y);
    (value, powf_partial_exp(x, value))
}

#[inline]
fn powf_partial_base<R: Real>(x: R, y: R) -> R {
    if y == R::ZERO {
        R::ZERO
    } else {
        y * x.powf(y - R::ONE)
    }
}

#[inline]
fn powf_partial_exp<R: Real>(x: R, value: R) -> R {
    // x^y · ln x; a zero value (x = 0, y > 0) contributes nothing rather than 0 · -inf.
    if value == R::ZERO {
        R::ZERO
    } else {
        value * x.ln()
    }
}

/// `x.sqrt()`. Partial: `1/(2√x)`.
#[inline]
#[must_use]
pub fn sqrt<R: Real>(x: R) -> (R, R) {
    let value = x.sqrt();
    (value, R::HALF / value)
}

/// `x.cbrt()`. Partial: `1/(3·∛x²)`.
#[inline]
#[must_use]
pub fn cbrt<R: Real>(x: R) -> (R, R) {
    let value = x.cbrt();
    (value, R::ONE / (R::from_i32(3) * value * value))
}

/// `x.exp()`. Partial: `eˣ`.
#[inline]
#[must_use]
pub fn exp<R: Real>(x: R) -> (R, R) {
    let value = x.exp();
    (value, value)
}

/// `x.exp2()`. Partial: `2ˣ·ln 2`.
#[inline]
#[must_use]
pub fn exp2<R: Real>(x: R) -> (R, R) {
    let value = x.exp2();
    (value, value * R::LN_2)
}

/// `x.exp_m1()`. Partial: `eˣ`.
#[inline]
#[must_use]
pub fn exp_m1<R: Real>(x: R) -> (R, R) {
    // Not `value + 1`: for x < 0 that cancels, and loses every digit below x ≈ -37.
    (x.exp_m1(), x.exp())
}

/// `x.ln()`. Partial: `1/x`.
#[inline]
#[must_use]
pub fn ln<R: Real>(x: R) -> (R, R) {
    (x.ln(), x.recip())
}

/// `x.ln_1p()`. Partial: `1/(1+x)`.
#[inline]
#[must_use]
pub fn ln_1p<R: Real>(x: R) -> (R, R) {
    (x.ln_1p(), (R::ONE + x).recip())
}

/// `x.log2()`. Partial: `1/(x·ln 2)`.
#[inline]
#[must_use]
pub fn log2<R: Real>(x: R) -> (R, R) {
    (x.log2(), (x * R::LN_2).recip())
}

/// `x.log10()`. Partial: `1/(x·ln 10)`.
#[inline]
#[must_use]
pub fn log10<R: Real>(x: R) -> (R, R) {
    (x.log10(), (x * R::LN_10).recip())
}

/// `x.log(base)`. Partials: `(1/(x·ln b), -log_b(x)/(b·ln b))`.
#[inline]
#[must_use]
pub fn log<R: Real>(x: R, base: R) -> (R, R, R) {
    let value = x.log(base);
    let ln_base = base.ln();
    (value, (x * ln_base).recip(), -value / (base * ln_base))
}

/// `x.sin()`. Partial: `cos x`.
#[inline]
#[must_use]
pub fn sin<R: Real>(x: R) -> (R, R) {
    (x.sin(), x.cos())
}

/// `x.cos()`. Partial: `-sin x`.
#[inline]
#[must_use]
pub fn cos<R: Real>(x: R) -> (R, R) {
    (x.cos(), -x.sin())
}

/// `x.tan()`. Partial: `1 + tan²x`.
#[inline]
#[must_use]
pub fn tan<R: Real>(x: R) -> (R, R) {
    let value = x.tan();
    (value, R::ONE + value * value)
}

/// `x.asin()`. Partial: `1/√(1-x²)`.
#[inline]
#[must_use]
pub fn asin<R: Real>(x: R) -> (R, R) {
    (x.asin(), (R::ONE - x * x).sqrt().recip())
}

/// `x.acos()`. Partial: `-1/√(1-x²)`.
#[inline]
#[must_use]
pub fn acos<R: Real>(x: R) -> (R, R) {
    (x.acos(), -(R::ONE - x * x).sqrt().recip())
}

/// `x.atan()`. Partial: `1/(1+x²)`.
#[inline]
#[must_use]
pub fn atan<R: Real>(x: R) -> (R, R) {
    (x.atan(), (R::ONE + x * x).recip())
}

/// `y.atan2(x)` (the angle of the point `(x, y)`). Partials: `(x/(x²+y²), -y/(x²+y²))`,
/// with respect to `y` then `x`, the order of the arguments.
#[inline]
#[must_use]
pub fn atan2<R: Real>(y: R, x: R) -> (R, R, R) {
    let inv = (x * x + y * y).recip();
    (y.atan2(x), x * inv, -y * inv)
}

/// `x.sinh()`. Partial: `cosh x`.
#[inline]
#[must_use]
pub fn sinh<R: Real>(x: R) -> (R, R) {
    (x.sinh(), x.cosh())
}

/// `x.cosh()`. Partial: `sinh x`.
#[inline]
#[must_use]
pub fn cosh<R: Real>(x: R) -> (R, R) {
    (x.cosh(), x.sinh())
}

/// `x.tanh()`. Partial: `1 - tanh²x`.
#[inline]
#[must_use]
pub fn tanh<R: Real>(x: R) -> (R, R) {
    let value = x.tanh();
    (value, R::ONE - value * value)
}

/// `x.asinh()`. Partial: `1/√(x²+1)`.
#[inline]
#[must_use]
pub fn asinh<R: Real>(x: R) -> (R, R) {
    (x.asinh(), (x * x + R::ONE).sqrt().recip())
}

/// `x.acosh()`. Partial: `1/√(x²-1)`.
#[inline]
#[must_use]
pub fn acosh<R: Real>(x: R) -> (R, R) {
    (x.acosh(), (x * x - R::ONE).sqrt().recip())
}

/// `x.atanh()`. Partial: `1/(1-x²)`.
#[inline]
#[must_use]
pub fn atanh<R: Real>(x: R) -> (R, R) {
    (x.atanh(), (R::ONE - x * x).recip())
}

/// `x.abs()`. Partial: `sign x`, with the subgradient `abs'(0) = 0`.
#[inline]
#[must_use]
pub fn abs<R: Real>(x: R) -> (R, R) {
    let partial = if x > R::ZERO {
        R::ONE
    } else if x < R::ZERO {
        -R::ONE
    } else {
        R::ZERO
    };
    (x.abs(), partial)
}

/// `x.relu()` = `max(x, 0)`. Partial: 1 for `x > 0`, else 0 (subgradient `relu'(0) = 0`).
#[inline]
#[must_use]
pub fn relu<R: Real>(x: R) -> (R, R) {
    (
        crate::ext::relu(x),
        if x > R::ZERO { R::ONE } else { R::ZERO },
    )
}

/// `x.sigmoid()` = `1/(1+e⁻ˣ)`. Partial: `σ(x)·(1-σ(x))`.
#[inline]
#[must_use]
pub fn sigmoid<R: Real>(x: R) -> (R, R) {
    let value = crate::ext::sigmoid(x);
    (value, value * (R::ONE - value))
}

/// `x.max(y)`. Partials: `(1, 0)` when `x >= y` (a tie goes to the first argument),
/// else `(0, 1)`. As in `f64::max`, a `NaN` argument is ignored: the other one gets the
/// adjoint.
#[inline]
#[must_use]
pub fn max<R: Real>(x: R, y: R) -> (R, R, R) {
    let first = x >= y || y.is_nan();
    (x.max(y), R::from_bool(first), R::from_bool(!first))
}

/// `x.min(y)`. Partials: `(1, 0)` when `x <= y` (a tie goes to the first argument),
/// else `(0, 1)`. As in `f64::min`, a `NaN` argument is ignored: the other one gets the
/// adjoint.
#[inline]
#[must_use]
pub fn min<R: Real>(x: R, y: R) -> (R, R, R) {
    let first = x <= y || y.is_nan();
    (x.min(y), R::from_bool(first), R::from_bool(!first))
}

/// `x.hypot(y)` = `√(x²+y²)`. Partials: `(x/h, y/h)`.
#[inline]
#[must_use]
pub fn hypot<R: Real>(x: R, y: R) -> (R, R, R) {
    let value = x.hypot(y);
    let inv = value.recip();
    (value, x * inv, y * inv)
}

/// `x.mul_add(a, b)` = `x·a + b` with one rounding. Partials: `(a, x, 1)`.
#[inline]
#[must_use]
pub fn mul_add<R: Real>(x: R, a: R, b: R) -> (R, R, R, R) {
    (x.mul_add(a, b), a, x, R::ONE)
}

/// `x.floor()`. Partial: 0 (piecewise constant).
#[inline]
#[must_use]
pub fn floor<R: Real>(x: R) -> (R, R) {
    (x.floor(), R::ZERO)
}

/// `x.ceil()`. Partial: 0 (piecewise constant).
#[inline]
#[must_use]
pub fn ceil<R: Real>(x: R) -> (R, R) {
    (x.ceil(), R::ZERO)
}

/// `x.round()`. Partial: 0 (piecewise constant).
#[inline]
#[must_use]
pub fn round<R: Real>(x: R) -> (R, R) {
    (x.round(), R::ZERO)
}

/// `x.trunc()`. Partial: 0 (piecewise constant).
#[inline]
#[must_use]
pub fn trunc<R: Real>(x: R) -> (R, R) {
    (x.trunc(), R::ZERO)
}

/// `x.signum()`. Partial: 0 (piecewise constant).
#[inline]
#[must_use]
pub fn signum<R: Real>(x: R) -> (R, R) {
    (x.signum(), R::ZERO)
}

/// The quotient `q` of `x = q·m + r` for a remainder `r`: an integer, computed as
/// `(x - r) / m` rounded to the nearest one, so that the rounding of the division does not
/// leave it a bit off. `0 - q` is then the remainder's partial with respect to `m`.
#[inline]
fn quotient<R: Real>(x: R, m: R, r: R) -> R {
    ((x - r) / m).round()
}

/// `x % m`, the remainder of the division truncated toward zero (of `x`'s sign).
/// Partials: `(1, -q)` with `q` the quotient, since `r = x - q·m` with `q` constant between
/// the jumps.
#[inline]
#[must_use]
pub fn rem<R: Real>(x: R, m: R) -> (R, R, R) {
    let r = x % m;
    (r, R::ONE, R::ZERO - quotient(x, m, r))
}

/// `x.rem_euclid(m)`, the least non-negative remainder. Partials: `(1, -q)` with `q` the
/// Euclidean quotient, as for [`rem`].
#[inline]
#[must_use]
pub fn rem_euclid<R: Real>(x: R, m: R) -> (R, R, R) {
    let r = x.rem_euclid(m);
    (r, R::ONE, R::ZERO - quotient(x, m, r))
}

/// `x.div_euclid(m)`. Partials: `(0, 0)` (piecewise constant).
#[inline]
#[must_use]
pub fn div_euclid<R: Real>(x: R, m: R) -> (R, R, R) {
    (x.div_euclid(m), R::ZERO, R::ZERO)
}

/// `x.fract()` = `x - x.trunc()`. Partial: 1.
#[inline]
#[must_use]
pub fn fract<R: Real>(x: R) -> (R, R) {
    (x.fract(), R::ONE)
}

/// `x.copysign(s)`: `|x|` with the sign of `s`. Partials: `(±1, 0)`, `1` where `x` and `s`
/// have the same sign bit (the value is `x`), `-1` where they differ (it is `-x`).
#[inline]
#[must_use]
pub fn copysign<R: Real>(x: R, s: R) -> (R, R, R) {
    let same = x.is_sign_negative() == s.is_sign_negative();
    let partial = if same { R::ONE } else { R::ZERO - R::ONE };
    (x.copysign(s), partial, R::ZERO)
}

/// `x.to_degrees()`. Partial: `180/π`.
#[inline]
#[must_use]
pub fn to_degrees<R: Real>(x: R) -> (R, R) {
    (x.to_degrees(), R::from_i32(180) / R::PI)
}

/// `x.to_radians()`. Partial: `π/180`.
#[inline]
#[must_use]
pub fn to_radians<R: Real>(x: R) -> (R, R) {
    (x.to_radians(), R::PI / R::from_i32(180))
}

/// `x.clamp(lo, hi)`. Partials with respect to `(x, lo, hi)`: `(1, 0, 0)` inside
/// `[lo, hi]` (its ends included: a tie goes to `x`), otherwise the bound that was hit
/// gets 1.
#[inline]
#[must_use]
pub fn clamp<R: Real>(x: R, lo: R, hi: R) -> (R, R, R, R) {
    let value = x.clamp(lo, hi);
    if x < lo {
        (value, R::ZERO, R::ONE, R::ZERO)
    } else if x > hi {
        (value, R::ZERO, R::ZERO, R::ONE)
    } else {
        (value, R::ONE, R::ZERO, R::ZERO)
    }
}
