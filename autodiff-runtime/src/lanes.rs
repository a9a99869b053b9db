//! [`Lanes`]: the tangent of vector forward mode, the derivatives of one number along `K`
//! directions at once. `#[grad(jacobian)]` carries one beside each value to get every
//! column of a Jacobian in one forward pass.

use core::ops::{Add, Mul, Neg, Sub};

/// `K` derivatives of one number, one per direction.
///
/// ```
/// use autodiff_runtime::Lanes;
/// let t = Lanes::<3>::unit(1) * 2.0 + Lanes::unit(2);
/// assert_eq!(t.0, [0.0, 2.0, 1.0]);
/// assert_eq!((-t).0, [-0.0, -2.0, -1.0]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lanes<const K: usize>(pub [f64; K]);

impl<const K: usize> Lanes<K> {
    /// No derivative along any direction.
    pub const ZERO: Self = Lanes([0.0; K]);

    /// The derivative of a number that is the `i`-th direction: one in lane `i`.
    #[must_use]
    pub fn unit(i: usize) -> Self {
        let mut lanes = [0.0; K];
        lanes[i] = 1.0;
        Lanes(lanes)
    }
}

impl<const K: usize> Add for Lanes<K> {
    type Output = Self;

    #[inline]
    fn add(mut self, other: Self) -> Self {
        for (x, y) in self.0.iter_mut().zip(other.0) {
            *x += y;
        }
        self
    }
}

impl<const K: usize> Sub for Lanes<K> {
    type Output = Self;

    #[inline]
    fn sub(mut self, other: Self) -> Self {
        for (x, y) in self.0.iter_mut().zip(other.0) {
            *x -= y;
        }
        self
    }
}

impl<const K: usize> Neg for Lanes<K> {
    type Output = Self;

    #[inline]
    fn neg(mut self) -> Self {
        for x in &mut self.0 {
            *x = -*x;
        }
        self
    }
}

impl<const K: usize> Mul<f64> for Lanes<K> {
    type Output = Self;

    #[inline]
    fn mul(mut self, factor: f64) -> Self {
        for x in &mut self.0 {
            *x *= factor;
        }
        self
    }
}
