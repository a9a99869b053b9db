//! [`Real`]: the floating-point types the derivative [`rules`](crate::rules) are written
//! for, `f64` and `f32`.

use core::fmt::Debug;
use core::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, Sub, SubAssign};

mod sealed {
    /// Only `f64` and `f32` are [`Real`](super::Real).
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for f32 {}
}

/// A floating-point type that `#[grad]` and the [`rules`](crate::rules) compute in: `f64`
/// or `f32`. Sealed: no other type implements it.
///
/// Every method is the inherent method of the same name of the standard library's type
/// (`Real::tanh(x)` is `f64::tanh(x)` for an `f64`), so a rule computes its value exactly
/// as the operation it stands for, bit for bit, in the type it is given: an `f32` rule
/// runs in `f32`, never through `f64`.
///
/// Why a trait of our own rather than `num_traits::Float`: the rules need some forty
/// operations and five constants, and the promise that each is *the* standard library's
/// operation. `num-traits` implements its `Float` through `libm` when its `std` feature
/// is off (which any crate in a build can arrange), whose results may differ in the last
/// bit from `std`'s; and its `Float` is open to other types, for which that promise cannot
/// be made. A sealed trait of our own keeps the runtime free of dependencies, names
/// exactly what the rules use, and can grow without breaking anyone.
///
/// ```
/// use autodiff_runtime::{rules::generic, Real};
/// fn double_tanh<R: Real>(x: R) -> R {
///     let (value, _) = generic::tanh(x);
///     value + value
/// }
/// assert_eq!(double_tanh(0.5f32), 2.0 * 0.5f32.tanh());
/// assert_eq!(double_tanh(0.5f64), 2.0 * 0.5f64.tanh());
/// ```
pub trait Real:
    sealed::Sealed
    + Copy
    + Default
    + Debug
    + PartialEq
    + PartialOrd
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Rem<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
{
    /// `0.0`.
    const ZERO: Self;
    /// `1.0`.
    const ONE: Self;
    /// `0.5`.
    const HALF: Self;
    /// π.
    const PI: Self;
    /// ln 2.
    const LN_2: Self;
    /// ln 10.
    const LN_10: Self;
    /// The name of the type, `"f64"` or `"f32"`.
    const NAME: &'static str;

    /// The integer `n` in this type (rounded to the nearest `f32` beyond 2²⁴).
    fn from_i32(n: i32) -> Self;
    /// `0.0` or `1.0`.
    fn from_bool(b: bool) -> Self;
    /// Whether `self` is `NaN`.
    fn is_nan(self) -> bool;
    /// `1/self`.
    fn recip(self) -> Self;
    /// `self` to an integer power.
    fn powi(self, n: i32) -> Self;
    /// `self` to a real power.
    fn powf(self, n: Self) -> Self;
    /// The square root.
    fn sqrt(self) -> Self;
    /// The cube root.
    fn cbrt(self) -> Self;
    /// `eˢᵉˡᶠ`.
    fn exp(self) -> Self;
    /// `2ˢᵉˡᶠ`.
    fn exp2(self) -> Self;
    /// `eˢᵉˡᶠ - 1`, accurate near 0.
    fn exp_m1(self) -> Self;
    /// The natural logarithm.
    fn ln(self) -> Self;
    /// `ln(1 + self)`, accurate near 0.
    fn ln_1p(self) -> Self;
    /// The base-2 logarithm.
    fn log2(self) -> Self;
    /// The base-10 logarithm.
    fn log10(self) -> Self;
    /// The logarithm in base `base`.
    fn log(self, base: Self) -> Self;
    /// The sine.
    fn sin(self) -> Self;
    /// The cosine.
    fn cos(self) -> Self;
    /// The tangent.
    fn tan(self) -> Self;
    /// The arcsine.
    fn asin(self) -> Self;
    /// The arccosine.
    fn acos(self) -> Self;
    /// The arctangent.
    fn atan(self) -> Self;
    /// The angle of the point `(other, self)`.
    fn atan2(self, other: Self) -> Self;
    /// The hyperbolic sine.
    fn sinh(self) -> Self;
    /// The hyperbolic cosine.
    fn cosh(self) -> Self;
    /// The hyperbolic tangent.
    fn tanh(self) -> Self;
    /// The inverse hyperbolic sine.
    fn asinh(self) -> Self;
    /// The inverse hyperbolic cosine.
    fn acosh(self) -> Self;
    /// The inverse hyperbolic tangent.
    fn atanh(self) -> Self;
    /// The absolute value.
    fn abs(self) -> Self;
    /// The larger of two numbers, ignoring `NaN`.
    fn max(self, other: Self) -> Self;
    /// The smaller of two numbers, ignoring `NaN`.
    fn min(self, other: Self) -> Self;
    /// `√(self² + other²)`.
    fn hypot(self, other: Self) -> Self;
    /// `self·a + b` with one rounding.
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// The largest integer not above `self`.
    fn floor(self) -> Self;
    /// The smallest integer not below `self`.
    fn ceil(self) -> Self;
    /// The nearest integer, half-way cases away from 0.
    fn round(self) -> Self;
    /// The integer part.
    fn trunc(self) -> Self;
    /// The sign: `1.0`, `-1.0` or `NaN`.
    fn signum(self) -> Self;
    /// Radians to degrees.
    fn to_degrees(self) -> Self;
    /// Degrees to radians.
    fn to_radians(self) -> Self;
    /// `self` restricted to `[lo, hi]`.
    fn clamp(self, lo: Self, hi: Self) -> Self;
    /// Whether the sign bit is set (`-0.0` and negative numbers).
    fn is_sign_negative(self) -> bool;

    /// `self` with the sign of `sign`, as `f64::copysign`.
    #[inline]
    #[must_use]
    fn copysign(self, sign: Self) -> Self {
        if self.is_sign_negative() == sign.is_sign_negative() {
            self
        } else {
            -self
        }
    }
    /// The fractional part, `self - self.trunc()`, as `f64::fract`.
    #[inline]
    #[must_use]
    fn fract(self) -> Self {
        self - self.trunc()
    }
    /// The least non-negative remainder of `self / m`, as `f64::rem_euclid`.
    #[inline]
    #[must_use]
    fn rem_euclid(self, m: Self) -> Self {
        let r = self % m;
        if r < Self::ZERO {
            r + m.abs()
        } else {
            r
        }
    }
    /// The quotient of the Euclidean division, as `f64::div_euclid`.
    #[inline]
    #[must_use]
    fn div_euclid(self, m: Self) -> Self {
        let q = (self / m).trunc();
        if self % m < Self::ZERO {
            if m > Self::ZERO {
                q - Self::ONE
            } else {
                q + Self::ONE
            }
        } else {
            q
        }
    }
}

/// The items of `Real` that `core` has, the same with or without `std`.
macro_rules! real_core {
    ($t:ident) => {
        const ZERO: Self = 0.0;
        const ONE: Self = 1.0;
        const HALF: Self = 0.5;
        const PI: Self = core::$t::consts::PI;
        const LN_2: Self = core::$t::consts::LN_2;
        const LN_10: Self = core::$t::consts::LN_10;
        const NAME: &'static str = stringify!($t);

        #[inline]
        #[allow(clippy::cast_precision_loss, clippy::cast_lossless)]
        fn from_i32(n: i32) -> Self {
            n as $t
        }
        #[inline]
        fn from_bool(b: bool) -> Self {
            if b {
                1.0
            } else {
                0.0
            }
        }
        #[inline]
        fn is_nan(self) -> bool {
            <$t>::is_nan(self)
        }
        #[inline]
        fn is_sign_negative(self) -> bool {
            <$t>::is_sign_negative(self)
        }
        #[inline]
        fn recip(self) -> Self {
            <$t>::recip(self)
        }
        #[inline]
        fn to_degrees(self) -> Self {
            <$t>::to_degrees(self)
        }
        #[inline]
        fn to_radians(self) -> Self {
            <$t>::to_radians(self)
        }
        #[inline]
        fn max(self, other: Self) -> Self {
            <$t>::max(self, other)
        }
        #[inline]
        fn min(self, other: Self) -> Self {
            <$t>::min(self, other)
        }
        #[inline]
        fn clamp(self, lo: Self, hi: Self) -> Self {
            <$t>::clamp(self, lo, hi)
        }
    };
}

/// `Real` for `f64` and `f32` through `std`'s inherent methods.
#[cfg(feature = "std")]
macro_rules! real {
    ($t:ident) => {
        impl Real for $t {
            real_core!($t);

            #[inline]
            fn powi(self, n: i32) -> Self {
                <$t>::powi(self, n)
            }
            real!(@unary $t: sqrt cbrt exp exp2 exp_m1 ln ln_1p log2 log10 sin cos tan
                asin acos atan sinh cosh tanh asinh acosh atanh abs floor ceil round trunc
                signum);
            real!(@binary $t: powf log atan2 hypot);
            #[inline]
            fn mul_add(self, a: Self, b: Self) -> Self {
                <$t>::mul_add(self, a, b)
            }
        }
    };
    (@unary $t:ident: $($name:ident)*) => {$(
        #[inline]
        fn $name(self) -> Self {
            <$t>::$name(self)
        }
    )*};
    (@binary $t:ident: $($name:ident)*) => {$(
        #[inline]
        fn $name(self, other: Self) -> Self {
            <$t>::$name(self, other)
        }
    )*};
}

#[cfg(feature = "std")]
real!(f64);
#[cfg(feature = "std")]
real!(f32);

/// `Real` for `f64` and `f32` without `std`: what `core` has, and the rest from `libm`
/// (named per type: `tanh` and `tanhf`). Every function is named by its full path, so
/// none can resolve back to the trait's own method.
#[cfg(all(feature = "libm", not(feature = "std")))]
macro_rules! real_libm {
    ($t:ident { $($method:ident($($arg:ident),*) => $libm:ident,)* }) => {
        impl Real for $t {
            real_core!($t);

            #[inline]
            fn powi(self, n: i32) -> Self {
                powi!(self, n)
            }
            #[inline]
            fn log(self, base: Self) -> Self {
                Real::ln(self) / Real::ln(base)
            }
            #[inline]
            fn signum(self) -> Self {
                if <$t>::is_nan(self) {
                    <$t>::NAN
                } else if self.is_sign_negative() {
                    -1.0
                } else {
                    1.0
                }
            }
            $(
                #[inline]
                fn $method(self $(, $arg: Self)*) -> Self {
                    libm::$libm(self $(, $arg)*)
                }
            )*
        }
    };
}

/// `x` to the integer power `n` by repeated squaring, as `std`'s `powi` computes it when
/// it is not folded at compile time (the algorithm of compiler-rt's `__powidf2`).
#[cfg(all(feature = "libm", not(feature = "std")))]
macro_rules! powi {
    ($x:expr, $n:expr) => {{
        let (mut base, mut n, mut result) = ($x, $n, 1.0);
        let reciprocal = n < 0;
        loop {
            if n & 1 != 0 {
                result *= base;
            }
            n /= 2;
            if n == 0 {
                break;
            }
            base *= base;
        }
        if reciprocal {
            1.0 / result
        } else {
            result
        }
    }};
}

#[cfg(all(feature = "libm", not(feature = "std")))]
real_libm!(f64 {
    sqrt() => sqrt, cbrt() => cbrt, exp() => exp, exp2() => exp2, exp_m1() => expm1,
    ln() => log, ln_1p() => log1p, log2() => log2, log10() => log10,
    sin() => sin, cos() => cos, tan() => tan, asin() => asin, acos() => acos,
    atan() => atan, sinh() => sinh, cosh() => cosh, tanh() => tanh, asinh() => asinh,
    acosh() => acosh, atanh() => atanh, abs() => fabs, floor() => floor, ceil() => ceil,
    round() => round, trunc() => trunc,
    powf(n) => pow, atan2(other) => atan2, hypot(other) => hypot,
    mul_add(a, b) => fma,
});

#[cfg(all(feature = "libm", not(feature = "std")))]
real_libm!(f32 {
    sqrt() => sqrtf, cbrt() => cbrtf, exp() => expf, exp2() => exp2f, exp_m1() => expm1f,
    ln() => logf, ln_1p() => log1pf, log2() => log2f, log10() => log10f,
    sin() => sinf, cos() => cosf, tan() => tanf, asin() => asinf, acos() => acosf,
    atan() => atanf, sinh() => sinhf, cosh() => coshf, tanh() => tanhf, asinh() => asinhf,
    acosh() => acoshf, atanh() => atanhf, abs() => fabsf, floor() => floorf,
    ceil() => ceilf, round() => roundf, trunc() => truncf,
    powf(n) => powf, atan2(other) => atan2f, hypot(other) => hypotf,
    mul_add(a, b) => fmaf,
});

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::Real;

    /// Compares the provided methods with `std`'s on every pair of `xs`, as `$t`.
    macro_rules! against_std {
        ($t:ty, $xs:expr) => {
            for &x in &$xs {
                let x = x as $t;
                assert_eq!(Real::fract(x).to_bits(), x.fract().to_bits(), "fract({x})");
                for &m in &$xs {
                    let m = m as $t;
                    let pairs: [($t, $t); 3] = [
                        (Real::rem_euclid(x, m), x.rem_euclid(m)),
                        (Real::div_euclid(x, m), x.div_euclid(m)),
                        (Real::copysign(x, m), x.copysign(m)),
                    ];
                    for (ours, std) in pairs {
                        let same =
                            ours.to_bits() == std.to_bits() || (ours.is_nan() && std.is_nan());
                        assert!(same, "({x}, {m}): {ours} against std's {std}");
                    }
                }
            }
        };
    }

    /// The provided methods are `std`'s, bit for bit, on both float types: signed zeros,
    /// infinities and `NaN` included.
    #[test]
    fn provided_methods_are_std_s_bit_for_bit() {
        let xs = [
            0.0,
            -0.0,
            0.3,
            -0.3,
            2.5,
            -7.25,
            1e300,
            -1e-300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        against_std!(f64, xs);
        against_std!(f32, xs);
    }
}
