//! Derivative rules: one function per elementary operation.
//!
//! Each rule returns the primal value followed by the local partial derivative with
//! respect to each real argument, in argument order:
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
//! These take and return `f64`. Each is the one implementation in [`generic`], which
//! computes in `f64` or `f32` (`generic::tanh(0.5f32)` is `f32` arithmetic throughout) and
//! which `#[grad]`-generated code calls.
//!
//! The value is always computed exactly as the corresponding operation of the standard
//! library computes it (the same call, the same order), so code differentiated by
//! `#[grad]` returns the same value, bit for bit, as the function it came from. The
//! generated code, [`Value`](crate::Value) and [`Tape`](crate::Tape) all call these rules,
//! so the three engines agree bit for bit on every operation.
//!
//! Their second partial derivatives, for second order on a `Tape`, are in `second` (with
//! the `std` feature, as the `Tape` is).
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

/// A tangent that a partial scales in forward mode: a number (`f64`, `f32`) or
/// [`Lanes`](crate::Lanes).
pub trait EdgeTangent<P>: Copy {
    /// `partial · self`, or `self` (a zero) when `self` is zero: see [`through_edge`].
    #[must_use]
    fn through_edge(self, partial: P) -> Self;
}

impl EdgeTangent<f64> for f64 {
    #[inline]
    fn through_edge(self, partial: f64) -> f64 {
        if self == 0.0 {
            self
        } else {
            partial * self
        }
    }
}

impl EdgeTangent<f32> for f32 {
    #[inline]
    fn through_edge(self, partial: f32) -> f32 {
        if self == 0.0 {
            self
        } else {
            partial * self
        }
    }
}

impl<const K: usize> EdgeTangent<f64> for crate::Lanes<K> {
    #[inline]
    fn through_edge(self, partial: f64) -> Self {
        crate::Lanes(self.0.map(|t| t.through_edge(partial)))
    }
}

/// The tangent of an operation whose partial can be infinite or `NaN` where its value is
/// finite (`sqrt` and `cbrt` at 0, `asin` and `acos` at ±1, `acosh` at 1, `hypot` and
/// `atan2` at the origin, `powf` at a zero base): `partial · tangent`, except that a
/// zero tangent gives zero. A number that does not move moves nothing, whatever the
/// partial; `0 · ∞` would make the whole directional derivative `NaN`. This is what
/// forward mode needs where a constant reaches such an operation through a call (its
/// tangent is zero, not absent) or a direction has zeros. (The reverse sweep leaves out
/// the adjoints of constants altogether.)
///
/// ```
/// use autodiff_runtime::rules::through_edge;
/// let partial = 1.0 / (2.0 * 0.0f64.sqrt()); // ∞: d√x/dx at 0
/// assert_eq!(through_edge(partial, 0.0), 0.0);
/// assert_eq!(through_edge(partial, 1e-3), f64::INFINITY);
/// assert_eq!(through_edge(0.25, 2.0), 0.5);
/// ```
#[inline]
#[must_use]
pub fn through_edge<T: EdgeTangent<P>, P>(partial: P, tangent: T) -> T {
    tangent.through_edge(partial)
}

pub mod generic;
#[cfg(feature = "std")]
pub mod second;

/// The `f64` entry points: each calls the rule of the same name in [`generic`].
macro_rules! f64_rules {
    ($($name:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*) => {$(
        #[doc = concat!("[`generic::", stringify!($name), "`] for `f64`.")]
        #[inline]
        #[must_use]
        pub fn $name($($arg: $ty),*) -> $ret {
            generic::$name($($arg),*)
        }
    )*};
}

f64_rules! {
    neg(x: f64) -> (f64, f64);
    add(x: f64, y: f64) -> (f64, f64, f64);
    sub(x: f64, y: f64) -> (f64, f64, f64);
    mul(x: f64, y: f64) -> (f64, f64, f64);
    div(x: f64, y: f64) -> (f64, f64, f64);
    recip(x: f64) -> (f64, f64);
    powi(x: f64, n: i32) -> (f64, f64);
    powf(x: f64, y: f64) -> (f64, f64, f64);
    powf_wrt_base(x: f64, y: f64) -> (f64, f64);
    powf_wrt_exp(x: f64, y: f64) -> (f64, f64);
    sqrt(x: f64) -> (f64, f64);
    cbrt(x: f64) -> (f64, f64);
    exp(x: f64) -> (f64, f64);
    exp2(x: f64) -> (f64, f64);
    exp_m1(x: f64) -> (f64, f64);
    ln(x: f64) -> (f64, f64);
    ln_1p(x: f64) -> (f64, f64);
    log2(x: f64) -> (f64, f64);
    log10(x: f64) -> (f64, f64);
    log(x: f64, base: f64) -> (f64, f64, f64);
    sin(x: f64) -> (f64, f64);
    cos(x: f64) -> (f64, f64);
    tan(x: f64) -> (f64, f64);
    asin(x: f64) -> (f64, f64);
    acos(x: f64) -> (f64, f64);
    atan(x: f64) -> (f64, f64);
    atan2(y: f64, x: f64) -> (f64, f64, f64);
    sinh(x: f64) -> (f64, f64);
    cosh(x: f64) -> (f64, f64);
    tanh(x: f64) -> (f64, f64);
    asinh(x: f64) -> (f64, f64);
    acosh(x: f64) -> (f64, f64);
    atanh(x: f64) -> (f64, f64);
    abs(x: f64) -> (f64, f64);
    relu(x: f64) -> (f64, f64);
    sigmoid(x: f64) -> (f64, f64);
    max(x: f64, y: f64) -> (f64, f64, f64);
    min(x: f64, y: f64) -> (f64, f64, f64);
    hypot(x: f64, y: f64) -> (f64, f64, f64);
    mul_add(x: f64, a: f64, b: f64) -> (f64, f64, f64, f64);
    floor(x: f64) -> (f64, f64);
    ceil(x: f64) -> (f64, f64);
    round(x: f64) -> (f64, f64);
    trunc(x: f64) -> (f64, f64);
    signum(x: f64) -> (f64, f64);
    rem(x: f64, m: f64) -> (f64, f64, f64);
    rem_euclid(x: f64, m: f64) -> (f64, f64, f64);
    div_euclid(x: f64, m: f64) -> (f64, f64, f64);
    fract(x: f64) -> (f64, f64);
    copysign(x: f64, s: f64) -> (f64, f64, f64);
    to_degrees(x: f64) -> (f64, f64);
    to_radians(x: f64) -> (f64, f64);
    clamp(x: f64, lo: f64, hi: f64) -> (f64, f64, f64, f64);
}
