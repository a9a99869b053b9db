//! [`Lanes`]: the tangent of vector forward mode, the derivatives of one number along `K`
//! directions at once. `#[grad(jacobian)]` carries one beside each value to get every
//! column of a Jacobian in one forward pass.
//!
//! When the directions are the basis of the differentiated numbers, most tangents near
//! the inputs are zero in all lanes but one or two: an input's own tangent is one in its
//! lane, `w * x[j]`'s is `w` in lane `j`. [`OneHot`] and [`TwoHot`] carry those with the
//! lanes that are structurally zero left out, so that their arithmetic costs one or two
//! operations, not `K`; a sum with a dense tangent adds into one or two lanes. The types
//! follow the expression, so the sparsity is known where the code is compiled: the
//! generated code never tests for it.
//!
//! `#[grad(hessian)]` carries them in reverse too: its one sweep over the tangent
//! function (vector reverse over vector forward) holds in lane `k` of each adjoint the
//! derivative of the `k`-th tangent output, so a tangent times a tangent and an adjoint
//! times a tangent are products lane by lane ([`Mul`] of two `Lanes`), and a number
//! times an adjoint scales every lane.

use core::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

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

    /// An adjoint with no contribution yet: `-0.0` in every lane, the exact identity of
    /// `+`, as a scalar adjoint starts.
    pub const NO_ADJOINT: Self = Lanes([-0.0; K]);

    /// One in every lane: the seed of a sweep that differentiates each lane's output.
    pub const ONES: Self = Lanes([1.0; K]);

    /// The derivative of a number that is the `i`-th direction: one in lane `i`.
    #[must_use]
    pub fn unit(i: usize) -> Self {
        let mut lanes = [0.0; K];
        lanes[i] = 1.0;
        Lanes(lanes)
    }
}

impl<const K: usize, T: SparseTangent<K>> Add<T> for Lanes<K> {
    type Output = Self;

    #[inline]
    fn add(mut self, other: T) -> Self {
        other.add_to(&mut self);
        self
    }
}

impl<const K: usize, T: SparseTangent<K>> Sub<T> for Lanes<K> {
    type Output = Self;

    #[inline]
    fn sub(mut self, other: T) -> Self {
        other.sub_from(&mut self);
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

impl<const K: usize> Default for Lanes<K> {
    /// [`Lanes::ZERO`].
    fn default() -> Self {
        Self::ZERO
    }
}

impl<const K: usize> Mul<Lanes<K>> for f64 {
    type Output = Lanes<K>;

    #[inline]
    fn mul(self, lanes: Lanes<K>) -> Lanes<K> {
        lanes * self
    }
}

/// Lane by lane: lane `k` of the product is the product of the lanes `k`.
///
/// ```
/// use autodiff_runtime::Lanes;
/// assert_eq!((Lanes([1.0, 2.0]) * Lanes([3.0, 4.0])).0, [3.0, 8.0]);
/// assert_eq!((2.0 * Lanes([3.0, 4.0])).0, [6.0, 8.0]);
/// ```
impl<const K: usize> Mul for Lanes<K> {
    type Output = Self;

    #[inline]
    fn mul(mut self, other: Self) -> Self {
        for (x, y) in self.0.iter_mut().zip(other.0) {
            *x *= y;
        }
        self
    }
}

impl<const K: usize, T: SparseTangent<K>> AddAssign<T> for Lanes<K> {
    #[inline]
    fn add_assign(&mut self, other: T) {
        other.add_to(self);
    }
}

impl<const K: usize, T: SparseTangent<K>> SubAssign<T> for Lanes<K> {
    #[inline]
    fn sub_assign(&mut self, other: T) {
        other.sub_from(self);
    }
}

/// A tangent of `K` lanes in some representation: [`Lanes`] itself, [`OneHot`] or
/// [`TwoHot`]. It adds itself into (or subtracts itself from) a dense one lane by lane,
/// touching only the lanes it holds.
pub trait SparseTangent<const K: usize>: Copy {
    /// `lanes += self`, in the lanes `self` holds.
    fn add_to(self, lanes: &mut Lanes<K>);
    /// `lanes -= self`, in the lanes `self` holds.
    fn sub_from(self, lanes: &mut Lanes<K>);
    /// The dense tangent: `self` with its structural zeros written out.
    #[must_use]
    fn dense(self) -> Lanes<K>;
}

impl<const K: usize> SparseTangent<K> for Lanes<K> {
    #[inline]
    fn add_to(self, lanes: &mut Lanes<K>) {
        for (x, y) in lanes.0.iter_mut().zip(self.0) {
            *x += y;
        }
    }

    #[inline]
    fn sub_from(self, lanes: &mut Lanes<K>) {
        for (x, y) in lanes.0.iter_mut().zip(self.0) {
            *x -= y;
        }
    }

    #[inline]
    fn dense(self) -> Lanes<K> {
        self
    }
}

/// A tangent that is zero in every lane but `lane`, where it is `value`: the tangent of
/// the `lane`-th differentiated number, and of what scales it.
///
/// ```
/// use autodiff_runtime::{Lanes, OneHot, SparseTangent};
/// let x = OneHot::<3>::unit(1);
/// let y = OneHot::<3>::unit(2);
/// assert_eq!((x * 2.0).dense().0, [0.0, 2.0, 0.0]);
/// assert_eq!((x * 2.0 + y).dense().0, [0.0, 2.0, 1.0]);
/// assert_eq!((Lanes([1.0; 3]) - x).0, [1.0, 0.0, 1.0]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OneHot<const K: usize> {
    /// The lane that is not structurally zero, below `K`.
    pub lane: usize,
    /// The derivative along that lane's direction.
    pub value: f64,
}

impl<const K: usize> OneHot<K> {
    /// The tangent of the `lane`-th direction's own number: one in lane `lane`.
    #[inline]
    #[must_use]
    pub fn unit(lane: usize) -> Self {
        OneHot { lane, value: 1.0 }
    }
}

impl<const K: usize> SparseTangent<K> for OneHot<K> {
    #[inline]
    fn add_to(self, lanes: &mut Lanes<K>) {
        lanes.0[self.lane] += self.value;
    }

    #[inline]
    fn sub_from(self, lanes: &mut Lanes<K>) {
        lanes.0[self.lane] -= self.value;
    }

    #[inline]
    fn dense(self) -> Lanes<K> {
        let mut lanes = Lanes::ZERO;
        lanes.0[self.lane] = self.value;
        lanes
    }
}

/// A tangent that is zero in every lane but two (which may be the same lane, then added):
/// the sum of two [`OneHot`]s, `x[i] * x[j]`'s.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TwoHot<const K: usize>(pub OneHot<K>, pub OneHot<K>);

impl<const K: usize> SparseTangent<K> for TwoHot<K> {
    #[inline]
    fn add_to(self, lanes: &mut Lanes<K>) {
        self.0.add_to(lanes);
        self.1.add_to(lanes);
    }

    #[inline]
    fn sub_from(self, lanes: &mut Lanes<K>) {
        self.0.sub_from(lanes);
        self.1.sub_from(lanes);
    }

    #[inline]
    fn dense(self) -> Lanes<K> {
        let mut lanes = self.0.dense();
        self.1.add_to(&mut lanes);
        lanes
    }
}

impl<const K: usize> Neg for OneHot<K> {
    type Output = Self;

    #[inline]
    fn neg(self) -> Self {
        OneHot {
            lane: self.lane,
            value: -self.value,
        }
    }
}

impl<const K: usize> Neg for TwoHot<K> {
    type Output = Self;

    #[inline]
    fn neg(self) -> Self {
        TwoHot(-self.0, -self.1)
    }
}

impl<const K: usize> Mul<f64> for OneHot<K> {
    type Output = Self;

    #[inline]
    fn mul(self, factor: f64) -> Self {
        OneHot {
            lane: self.lane,
            value: self.value * factor,
        }
    }
}

impl<const K: usize> Mul<f64> for TwoHot<K> {
    type Output = Self;

    #[inline]
    fn mul(self, factor: f64) -> Self {
        TwoHot(self.0 * factor, self.1 * factor)
    }
}

impl<const K: usize> Add for OneHot<K> {
    type Output = TwoHot<K>;

    #[inline]
    fn add(self, other: Self) -> TwoHot<K> {
        TwoHot(self, other)
    }
}

impl<const K: usize> Sub for OneHot<K> {
    type Output = TwoHot<K>;

    #[inline]
    fn sub(self, other: Self) -> TwoHot<K> {
        TwoHot(self, -other)
    }
}

/// `sparse ± dense`, and a sum of sparse tangents that would hold more than two lanes:
/// dense, `other`'s lanes (negated for `-`) with `self`'s added in.
macro_rules! dense_result {
    ($($lhs:ident + $rhs:ident),*) => {$(
        impl<const K: usize> Add<$rhs<K>> for $lhs<K> {
            type Output = Lanes<K>;

            #[inline]
            fn add(self, other: $rhs<K>) -> Lanes<K> {
                let mut lanes = other.dense();
                self.add_to(&mut lanes);
                lanes
            }
        }

        impl<const K: usize> Sub<$rhs<K>> for $lhs<K> {
            type Output = Lanes<K>;

            #[inline]
            fn sub(self, other: $rhs<K>) -> Lanes<K> {
                let mut lanes = (-other).dense();
                self.add_to(&mut lanes);
                lanes
            }
        }
    )*};
}

dense_result!(
    OneHot + Lanes,
    OneHot + TwoHot,
    TwoHot + Lanes,
    TwoHot + OneHot,
    TwoHot + TwoHot
);

impl<const K: usize> crate::rules::EdgeTangent<f64> for OneHot<K> {
    #[inline]
    fn through_edge(self, partial: f64) -> Self {
        OneHot {
            lane: self.lane,
            value: self.value.through_edge(partial),
        }
    }
}

impl<const K: usize> crate::rules::EdgeTangent<f64> for TwoHot<K> {
    #[inline]
    fn through_edge(self, partial: f64) -> Self {
        TwoHot(self.0.through_edge(partial), self.1.through_edge(partial))
    }
}
