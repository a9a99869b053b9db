//! [`F64Ext`]: the scalar functions that machine learning code uses and `std` lacks.

/// Extra methods on `f64`, so that a function using them is still plain Rust and
/// `#[grad]` can differentiate it.
///
/// ```
/// use autodiff_runtime::F64Ext;
/// assert_eq!((-2.0f64).relu(), 0.0);
/// assert_eq!(3.0f64.relu(), 3.0);
/// assert_eq!(0.0f64.sigmoid(), 0.5);
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
        if self > 0.0 || self.is_nan() {
            self
        } else {
            0.0
        }
    }

    #[inline]
    fn sigmoid(self) -> f64 {
        1.0 / (1.0 + (-self).exp())
    }
}
