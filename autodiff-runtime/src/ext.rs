//! [`F64Ext`]: the scalar functions that machine learning code uses and `std` lacks.

use crate::Real;

/// Extra methods on `f64` and `f32`, so that a function using them is still plain Rust
/// and `#[grad]` can differentiate it. (The name is the one the API promised when only
/// `f64` was supported; the same methods exist for `f32`.)
///
/// ```
/// use autodiff_runtime::F64Ext;
/// assert_eq!((-2.0f64).relu(), 0.0);
/// assert_eq!(3.0f64.relu(), 3.0);
/// assert_eq!(0.0f64.sigmoid(), 0.5);
/// assert_eq!((-2.0f32).relu(), 0.0);
/// assert_eq!(0.0f32.sigmoid(), 0.5);
/// ```
pub trait F64Ext: Copy {
    /// `max(self, 0)`. A `NaN` input gives `NaN`.
    #[must_use]
    fn relu(self) -> Self;
    /// The logistic function `1/(1+e^-self)`.
    #[must_use]
    fn sigmoid(self) -> Self;
}

impl F64Ext for f64 {
    #[inline]
    fn relu(self) -> f64 {
        relu(self)
    }

    #[inline]
    fn sigmoid(self) -> f64 {
        sigmoid(self)
    }
}

impl F64Ext for f32 {
    #[inline]
    fn relu(self) -> f32 {
        relu(self)
    }

    #[inline]
    fn sigmoid(self) -> f32 {
        sigmoid(self)
    }
}

/// `max(x, 0)`, `NaN` for `NaN`: [`F64Ext::relu`] in any [`Real`] type.
#[inline]
pub(crate) fn relu<R: Real>(x: R) -> R {
    if x > R::ZERO || x.is_nan() {
        x
    } else {
        R::ZERO
    }
}

/// `1/(1+e⁻ˣ)`: [`F64Ext::sigmoid`] in any [`Real`] type.
#[inline]
pub(crate) fn sigmoid<R: Real>(x: R) -> R {
    R::ONE / (R::ONE + (-x).exp())
}
