//! [`Differentiable`]: the types `#[grad]` differentiates as a whole — `f64`, arrays and
//! vectors of them, and structs that derive the trait — with the flat view an optimizer
//! needs.

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

/// A type whose numbers can be differentiated: `f64`, `f32`, `[T; N]`, `Vec<T>` of such
/// `T`, tuples of them, and structs with `#[derive(Differentiable)]`. The flat view is of
/// `f64`s (an `f32` is the `f64` of the same value).
///
/// A `#[grad]` function with a parameter `m: &Model` (or `m: Model`) returns the partial
/// with respect to `m` as a `Model` holding the adjoints, made with [`zero_like`] and
/// filled in place. The trait also gives the flat view of the differentiable numbers that
/// an optimizer works with, in field declaration order, outermost first:
///
/// ```
/// use autodiff_runtime::Differentiable;
///
/// let mut w = [[1.0, 2.0], [3.0, 4.0]];
/// let g = [[0.5, 0.5], [1.0, -1.0]];
/// w.add_scaled(-0.1, &g); // one gradient step
/// assert_eq!(w.to_flat_vec(), vec![0.95, 1.95, 2.9, 4.1]);
/// assert_eq!(w.param_count(), 4);
/// ```
///
/// The derive treats integer and `bool` fields, and fields marked
/// `#[differentiable(skip)]`, as constants: [`zero_like`] copies them (they must be
/// `Clone`), and the flat view leaves them out.
///
/// [`zero_like`]: Differentiable::zero_like
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a type #[grad] can differentiate",
    label = "not `f64`, an array or `Vec` of them, or a struct deriving `Differentiable`",
    note = "add `#[derive(autodiff::Differentiable)]` to the struct, or mark a constant \
            field `#[differentiable(skip)]`"
)]
pub trait Differentiable {
    /// A value of the same shape with every differentiable number `0.0` and every constant
    /// field copied from `self`.
    #[must_use]
    fn zero_like(&self) -> Self
    where
        Self: Sized;

    /// `self += alpha * other`, number by number (constants are left alone). A gradient
    /// descent step is `model.add_scaled(-rate, &gradient)`.
    ///
    /// # Panics
    /// If a vector in `other` has another length than the same vector in `self`.
    fn add_scaled(&mut self, alpha: f64, other: &Self);

    /// The number of differentiable numbers.
    fn param_count(&self) -> usize;

    /// Calls `f` with each differentiable number, in the order of the flat view.
    fn for_each_param(&self, f: &mut dyn FnMut(f64));

    /// Calls `f` with a mutable reference to each differentiable number, in the order of
    /// the flat view.
    fn for_each_param_mut(&mut self, f: &mut dyn FnMut(&mut f64));

    /// The differentiable numbers, flattened.
    #[cfg(feature = "alloc")]
    #[must_use]
    fn to_flat_vec(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.param_count());
        self.for_each_param(&mut |x| out.push(x));
        out
    }

    /// Overwrites the differentiable numbers from a flat slice (the inverse of
    /// [`to_flat_vec`](Differentiable::to_flat_vec)).
    ///
    /// # Panics
    /// If `flat.len()` is not [`param_count`](Differentiable::param_count).
    fn copy_from_flat(&mut self, flat: &[f64]) {
        assert_eq!(
            flat.len(),
            self.param_count(),
            "copy_from_flat: the slice has {} numbers, the value {}",
            flat.len(),
            self.param_count()
        );
        let mut values = flat.iter();
        self.for_each_param_mut(&mut |x| {
            if let Some(value) = values.next() {
                *x = *value;
            }
        });
    }
}

impl Differentiable for f64 {
    #[inline]
    fn zero_like(&self) -> Self {
        0.0
    }

    #[inline]
    fn add_scaled(&mut self, alpha: f64, other: &Self) {
        *self += alpha * other;
    }

    #[inline]
    fn param_count(&self) -> usize {
        1
    }

    fn for_each_param(&self, f: &mut dyn FnMut(f64)) {
        f(*self);
    }

    fn for_each_param_mut(&mut self, f: &mut dyn FnMut(&mut f64)) {
        f(self);
    }
}

/// An `f32` is seen through the `f64` of the same value: its flat view is of `f64`s (exact),
/// and a number written back rounds to the nearest `f32`. Structs of `f32` fields are
/// differentiated in functions of `f32`, whose partials are `f32`s throughout.
impl Differentiable for f32 {
    #[inline]
    fn zero_like(&self) -> Self {
        0.0
    }

    #[inline]
    #[allow(clippy::cast_possible_truncation)]
    fn add_scaled(&mut self, alpha: f64, other: &Self) {
        *self = (f64::from(*self) + alpha * f64::from(*other)) as f32;
    }

    #[inline]
    fn param_count(&self) -> usize {
        1
    }

    fn for_each_param(&self, f: &mut dyn FnMut(f64)) {
        f(f64::from(*self));
    }

    #[allow(clippy::cast_possible_truncation)]
    fn for_each_param_mut(&mut self, f: &mut dyn FnMut(&mut f64)) {
        let mut wide = f64::from(*self);
        f(&mut wide);
        *self = wide as f32;
    }
}

/// What arrays and vectors do with their elements, in order.
mod elements {
    use super::Differentiable;

    pub fn add_scaled<T: Differentiable>(xs: &mut [T], alpha: f64, ys: &[T]) {
        for (x, y) in xs.iter_mut().zip(ys) {
            x.add_scaled(alpha, y);
        }
    }

    pub fn param_count<T: Differentiable>(xs: &[T]) -> usize {
        xs.iter().map(Differentiable::param_count).sum()
    }

    pub fn for_each<T: Differentiable>(xs: &[T], f: &mut dyn FnMut(f64)) {
        for x in xs {
            x.for_each_param(f);
        }
    }

    pub fn for_each_mut<T: Differentiable>(xs: &mut [T], f: &mut dyn FnMut(&mut f64)) {
        for x in xs {
            x.for_each_param_mut(f);
        }
    }
}

impl<T: Differentiable, const N: usize> Differentiable for [T; N] {
    #[inline]
    fn zero_like(&self) -> Self {
        core::array::from_fn(|i| self[i].zero_like())
    }

    #[inline]
    fn add_scaled(&mut self, alpha: f64, other: &Self) {
        elements::add_scaled(self, alpha, other);
    }

    fn param_count(&self) -> usize {
        elements::param_count(self)
    }

    fn for_each_param(&self, f: &mut dyn FnMut(f64)) {
        elements::for_each(self, f);
    }

    fn for_each_param_mut(&mut self, f: &mut dyn FnMut(&mut f64)) {
        elements::for_each_mut(self, f);
    }
}

#[cfg(feature = "alloc")]
impl<T: Differentiable> Differentiable for Vec<T> {
    fn zero_like(&self) -> Self {
        self.iter().map(Differentiable::zero_like).collect()
    }

    fn add_scaled(&mut self, alpha: f64, other: &Self) {
        assert_eq!(
            self.len(),
            other.len(),
            "add_scaled: vectors of lengths {} and {}",
            self.len(),
            other.len()
        );
        elements::add_scaled(self, alpha, other);
    }

    fn param_count(&self) -> usize {
        elements::param_count(self)
    }

    fn for_each_param(&self, f: &mut dyn FnMut(f64)) {
        elements::for_each(self, f);
    }

    fn for_each_param_mut(&mut self, f: &mut dyn FnMut(&mut f64)) {
        elements::for_each_mut(self, f);
    }
}

/// What the partial of a parameter is made from: a [`Differentiable`] value gives a
/// partial of its own type, a slice of them a `Vec`. Code that `#[grad]` generates uses it
/// for a parameter `ps: &[Particle]`, whose partial is a `Vec<Particle>`.
#[doc(hidden)]
pub trait PartialOf<P> {
    /// A zero partial of this value's shape.
    fn zero_partial(&self) -> P;
    /// How many numbers it holds.
    fn partial_count(&self) -> usize;
}

impl<T: Differentiable> PartialOf<T> for T {
    #[inline]
    fn zero_partial(&self) -> T {
        self.zero_like()
    }

    fn partial_count(&self) -> usize {
        self.param_count()
    }
}

#[cfg(feature = "alloc")]
impl<T: Differentiable> PartialOf<Vec<T>> for [T] {
    #[inline]
    fn zero_partial(&self) -> Vec<T> {
        self.iter().map(Differentiable::zero_like).collect()
    }

    fn partial_count(&self) -> usize {
        elements::param_count(self)
    }
}

/// Tuples of differentiable values, as `#[grad]` parameters: `p: (f64, f64)`.
macro_rules! tuple_impls {
    ($(($($name:ident $index:tt),+))*) => {$(
        impl<$($name: Differentiable),+> Differentiable for ($($name,)+) {
            #[inline]
            fn zero_like(&self) -> Self {
                ($(self.$index.zero_like(),)+)
            }

            #[inline]
            fn add_scaled(&mut self, alpha: f64, other: &Self) {
                $(self.$index.add_scaled(alpha, &other.$index);)+
            }

            fn param_count(&self) -> usize {
                0 $(+ self.$index.param_count())+
            }

            fn for_each_param(&self, f: &mut dyn FnMut(f64)) {
                $(self.$index.for_each_param(f);)+
            }

            fn for_each_param_mut(&mut self, f: &mut dyn FnMut(&mut f64)) {
                $(self.$index.for_each_param_mut(f);)+
            }
        }
    )*};
}

tuple_impls! {
    (A 0)
    (A 0, B 1)
    (A 0, B 1, C 2)
    (A 0, B 1, C 2, D 3)
    (A 0, B 1, C 2, D 3, E 4)
    (A 0, B 1, C 2, D 3, E 4, F 5)
}

/// Code that `#[grad]` generates for a method marked alone (whose `self` it treats as a
/// constant) uses these to reject, at compile time, a `self` whose type derives
/// [`Differentiable`]: the user meant to differentiate it, which needs `#[grad]` on the
/// `impl` block too. Not a public API.
#[doc(hidden)]
pub mod probe {
    use super::Differentiable;
    use core::marker::PhantomData;

    /// Stands for the type of `self`.
    pub struct SelfProbe<T: ?Sized>(PhantomData<T>);

    impl<T: ?Sized> SelfProbe<T> {
        /// The probe of `T`.
        #[must_use]
        pub fn new() -> Self {
            SelfProbe(PhantomData)
        }
    }

    impl<T: ?Sized> Default for SelfProbe<T> {
        fn default() -> Self {
            Self::new()
        }
    }

    /// The type of `self` derives `Differentiable`.
    pub struct DerivesDifferentiable;
    /// The type of `self` does not: it is a constant, as the method asks.
    pub struct NotDifferentiable;

    /// Chosen by method resolution when `T: Differentiable` (a method on `SelfProbe<T>`
    /// itself is found before one on `&SelfProbe<T>`).
    pub trait Derives {
        /// What the type of `self` is.
        fn probe(&self) -> DerivesDifferentiable {
            DerivesDifferentiable
        }
    }
    impl<T: Differentiable> Derives for SelfProbe<T> {}

    /// Chosen otherwise.
    pub trait DoesNotDerive {
        /// What the type of `self` is.
        fn probe(&self) -> NotDifferentiable {
            NotDifferentiable
        }
    }
    impl<T: ?Sized> DoesNotDerive for &SelfProbe<T> {}

    /// Implemented only for [`NotDifferentiable`].
    #[diagnostic::on_unimplemented(
        message = "#[grad] on a method alone treats `self` as a constant, but its type derives \
                   `Differentiable`",
        label = "`self` would get no partial here",
        note = "put `#[grad]` on the `impl` block too, to differentiate with respect to \
                `self`: `#[grad] impl Model {{ #[grad] fn loss(&self, …) … }}`",
        note = "or keep `self` constant on purpose by naming the other parameters: \
                `#[grad(wrt(x, …))]`"
    )]
    pub trait ConstantSelf {}
    impl ConstantSelf for NotDifferentiable {}

    /// Compiles only for a `self` that is meant to be a constant.
    pub fn constant_self<P: ConstantSelf>(_: P) {}

    /// Compiles only for a type that implements [`Differentiable`]: what `#[grad]` asks of
    /// the type of a struct parameter before it reads the struct's fields.
    pub fn differentiable<T: Differentiable + ?Sized>() {}

    /// `T: Primitive<R>` holds only for `T` = `R`.
    #[diagnostic::on_unimplemented(
        message = "#[grad] takes `{Real}` here for the primitive type, but it names `{Self}`",
        label = "not the primitive `{Real}`",
        note = "#[grad] reads types as written; in a module where `{Real}` names another \
                type, write the primitive type as `::core::primitive::{Real}`"
    )]
    pub trait Primitive<Real: ?Sized> {}
    impl<T: ?Sized> Primitive<T> for T {}

    /// Compiles only when `T`, a type written `f64` (or `f32`) in a `#[grad]` signature, is
    /// the primitive type `Real` that the generated code computes in.
    pub fn primitive<T: Primitive<Real> + ?Sized, Real: ?Sized>() {}
}

#[cfg(test)]
mod tests {
    use super::Differentiable;

    #[test]
    fn flat_view_round_trips_in_declaration_order() {
        let mut v = vec![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
        assert_eq!(v.param_count(), 6);
        assert_eq!(v.to_flat_vec(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        v.copy_from_flat(&[6.0, 5.0, 4.0, 3.0, 2.0, 1.0]);
        assert_eq!(v, vec![[6.0, 5.0], [4.0, 3.0], [2.0, 1.0]]);
        let zero = v.zero_like();
        assert_eq!(zero, vec![[0.0; 2]; 3]);
    }

    #[test]
    fn add_scaled_is_an_axpy() {
        let mut x = [1.0, -2.0, 0.5];
        x.add_scaled(2.0, &[0.5, 1.0, -0.25]);
        assert_eq!(x, [2.0, 0.0, 0.0]);
        let mut s = 3.0;
        s.add_scaled(-0.5, &2.0);
        assert_eq!(s, 2.0);
    }

    #[test]
    #[should_panic(expected = "the slice has 2 numbers, the value 3")]
    fn copy_from_flat_checks_the_length() {
        let mut x = [0.0; 3];
        x.copy_from_flat(&[1.0, 2.0]);
    }
}

/// The numbers of a [`Differentiable`] value by their position in its flat view, for
/// the Jacobians that `#[grad(jacobian)]` generates of struct parameters (a basis
/// direction, a row of a block). Not a public API.
#[doc(hidden)]
pub mod numbers {
    use super::Differentiable;

    /// A copy of `x`'s numbers and constants, without `Clone`: `0 + 1·x`, exact.
    #[must_use]
    pub fn copy<T: Differentiable>(x: &T) -> T {
        let mut out = x.zero_like();
        out.add_scaled(1.0, x);
        out
    }

    /// The number of numbers (of the flat view).
    #[must_use]
    pub fn count<T: Differentiable + ?Sized>(x: &T) -> usize {
        x.param_count()
    }

    /// Sets the number at position `k` of the flat view to `value`.
    pub fn set<T: Differentiable + ?Sized, R: Number>(x: &mut T, k: usize, value: R) {
        let mut at = 0;
        x.for_each_param_mut(&mut |number| {
            if at == k {
                *number = value.to_f64();
            }
            at += 1;
        });
    }

    /// Sets every number to 0.
    pub fn clear<T: Differentiable + ?Sized>(x: &mut T) {
        x.for_each_param_mut(&mut |number| *number = 0.0);
    }

    /// `f64` or `f32`: where the numbers of a flat view (`f64`s) are written and read.
    pub trait Number: Copy {
        /// The number nearest `x`.
        fn from_f64(x: f64) -> Self;
        /// The same value as an `f64` (exact).
        fn to_f64(self) -> f64;
    }

    impl Number for f64 {
        #[inline]
        fn from_f64(x: f64) -> Self {
            x
        }

        #[inline]
        fn to_f64(self) -> f64 {
            self
        }
    }

    impl Number for f32 {
        #[inline]
        #[allow(clippy::cast_possible_truncation)]
        fn from_f64(x: f64) -> Self {
            x as f32
        }

        #[inline]
        fn to_f64(self) -> f64 {
            f64::from(self)
        }
    }

    /// Writes the numbers, in the order of the flat view, to the front of `out`.
    ///
    /// # Panics
    /// If `out` is shorter than the value's numbers.
    pub fn write<T: Differentiable + ?Sized, R: Number>(x: &T, out: &mut [R]) {
        let mut slots = out.iter_mut();
        x.for_each_param(&mut |number| {
            *slots.next().expect("a row holds every number") = R::from_f64(number);
        });
    }

    /// Reads the numbers, in the order of the flat view, from the front of `from`.
    ///
    /// # Panics
    /// If `from` is shorter than the value's numbers.
    pub fn read<T: Differentiable + ?Sized, R: Number>(x: &mut T, from: &[R]) {
        let mut slots = from.iter();
        x.for_each_param_mut(&mut |number| {
            *number = slots.next().expect("a row holds every number").to_f64();
        });
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn positions_follow_the_flat_view() {
            let mut x = [[1.0, 2.0], [3.0, 4.0]];
            super::set(&mut x, 2, 9.0);
            assert_eq!(x, [[1.0, 2.0], [9.0, 4.0]]);
            let mut row = [0.0; 4];
            super::write(&x, &mut row);
            assert_eq!(row, [1.0, 2.0, 9.0, 4.0]);
            assert_eq!(super::copy(&x), x);
            super::clear(&mut x);
            assert_eq!(x, [[0.0; 2]; 2]);
        }
    }
}
