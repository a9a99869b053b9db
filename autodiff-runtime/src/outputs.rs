//! Several outputs of a called function, as a tuple (`(f64, f64)`) or an array
//! (`[f64; 2]`): code that `#[grad]` generates for `let (a, b) = h(x);` or
//! `let v: [f64; 2] = h(x);` cannot see which the callee returns, so it reads its outputs,
//! and makes the seeds of its pullback, through these. Not a public API.

/// Outputs as a tuple.
pub trait Outputs {
    /// The tuple of the outputs.
    type Tuple;
    /// The outputs as a tuple.
    fn tuple(self) -> Self::Tuple;
}

/// A seed (or tangent) of the callee's output type, made from a tuple.
pub trait FromTuple<T> {
    /// The value holding the tuple's numbers.
    fn from_tuple(tuple: T) -> Self;
}

/// The outputs of a call as a tuple.
#[inline]
pub fn tuple<O: Outputs>(outputs: O) -> O::Tuple {
    outputs.tuple()
}

/// The value and tangent of a call's forward mode, each as a tuple.
#[inline]
pub fn pair<A: Outputs, B: Outputs>((value, tangent): (A, B)) -> (A::Tuple, B::Tuple) {
    (value.tuple(), tangent.tuple())
}

/// A seed of whatever output type the callee's pullback takes.
#[inline]
pub fn seed<S: FromTuple<T>, T>(tuple: T) -> S {
    S::from_tuple(tuple)
}

macro_rules! outputs {
    ($($n:literal => ($($k:tt),+);)+) => {$(
        impl<R: Copy> Outputs for [R; $n] {
            type Tuple = ($(outputs!(@ty $k R),)+);
            #[inline]
            fn tuple(self) -> Self::Tuple {
                ($(self[$k],)+)
            }
        }
        impl<R: Copy> Outputs for ($(outputs!(@ty $k R),)+) {
            type Tuple = Self;
            #[inline]
            fn tuple(self) -> Self {
                self
            }
        }
        impl<R: Copy> FromTuple<($(outputs!(@ty $k R),)+)> for [R; $n] {
            #[inline]
            fn from_tuple(tuple: ($(outputs!(@ty $k R),)+)) -> Self {
                [$(tuple.$k),+]
            }
        }
        impl<R: Copy> FromTuple<($(outputs!(@ty $k R),)+)> for ($(outputs!(@ty $k R),)+) {
            #[inline]
            fn from_tuple(tuple: Self) -> Self {
                tuple
            }
        }
    )+};
    (@ty $k:tt $r:ident) => { $r };
}

outputs! {
    2 => (0, 1);
    3 => (0, 1, 2);
    4 => (0, 1, 2, 3);
    5 => (0, 1, 2, 3, 4);
    6 => (0, 1, 2, 3, 4, 5);
    7 => (0, 1, 2, 3, 4, 5, 6);
    8 => (0, 1, 2, 3, 4, 5, 6, 7);
    9 => (0, 1, 2, 3, 4, 5, 6, 7, 8);
    10 => (0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    11 => (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
    12 => (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
    13 => (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
    14 => (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13);
    15 => (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
    16 => (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

/// The value and tangent of a call's forward mode, of `n` numbers each, as one tuple of
/// `2n`: the values, then the tangents. The hidden tangent function of a function of
/// several outputs returns this, so that a caller's second order reads its `2n` outputs
/// as it reads any call's.
pub trait Joined {
    /// The tuple of the `2n` numbers.
    type Flat;
    /// The values, then the tangents.
    fn joined(self) -> Self::Flat;
}

/// The `2n` outputs of a call, the values and then their tangents, split in two tuples.
pub trait Halves {
    /// A tuple of `n` numbers.
    type Half;
    /// The values, and the tangents.
    fn halves(self) -> (Self::Half, Self::Half);
}

/// The value and tangent of a call of several outputs, as one tuple (see [`Joined`]).
#[inline]
pub fn joined<P: Joined>(pair: P) -> P::Flat {
    pair.joined()
}

/// A tuple of values and tangents, split (see [`Halves`]).
#[inline]
pub fn halves<F: Halves>(flat: F) -> (F::Half, F::Half) {
    flat.halves()
}

macro_rules! joined {
    ($($n:literal => ($($k:tt),+) ($($j:tt),+);)+) => {$(
        impl<R: Copy> Joined for ([R; $n], [R; $n]) {
            type Flat = ($(outputs!(@ty $k R),)+ $(outputs!(@ty $j R),)+);
            #[inline]
            fn joined(self) -> Self::Flat {
                ($(self.0[$k],)+ $(self.1[$k],)+)
            }
        }
        impl<R: Copy> Joined for (($(outputs!(@ty $k R),)+), ($(outputs!(@ty $k R),)+)) {
            type Flat = ($(outputs!(@ty $k R),)+ $(outputs!(@ty $j R),)+);
            #[inline]
            fn joined(self) -> Self::Flat {
                ($((self.0).$k,)+ $((self.1).$k,)+)
            }
        }
        impl<R: Copy> Halves for ($(outputs!(@ty $k R),)+ $(outputs!(@ty $j R),)+) {
            type Half = ($(outputs!(@ty $k R),)+);
            #[inline]
            fn halves(self) -> (Self::Half, Self::Half) {
                (($(self.$k,)+), ($(self.$j,)+))
            }
        }
    )+};
}

joined! {
    2 => (0, 1) (2, 3);
    3 => (0, 1, 2) (3, 4, 5);
    4 => (0, 1, 2, 3) (4, 5, 6, 7);
    5 => (0, 1, 2, 3, 4) (5, 6, 7, 8, 9);
    6 => (0, 1, 2, 3, 4, 5) (6, 7, 8, 9, 10, 11);
    7 => (0, 1, 2, 3, 4, 5, 6) (7, 8, 9, 10, 11, 12, 13);
    8 => (0, 1, 2, 3, 4, 5, 6, 7) (8, 9, 10, 11, 12, 13, 14, 15);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_and_tuples_read_alike() {
        assert_eq!(tuple([1.0, 2.0, 3.0]), (1.0, 2.0, 3.0));
        assert_eq!(tuple((1.0, 2.0)), (1.0, 2.0));
        let array: [f64; 2] = seed((4.0, 5.0));
        assert_eq!(array, [4.0, 5.0]);
        let same: (f32, f32) = seed((4.0_f32, 5.0_f32));
        assert_eq!(same, (4.0, 5.0));
        assert_eq!(pair(([1.0, 2.0], (3.0, 4.0))), ((1.0, 2.0), (3.0, 4.0)));
    }

    #[test]
    fn values_and_tangents_join_and_split() {
        let flat = joined(([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]));
        assert_eq!(flat, (1.0, 2.0, 3.0, 4.0, 5.0, 6.0));
        assert_eq!(joined(((1.0, 2.0), (3.0, 4.0))), (1.0, 2.0, 3.0, 4.0));
        assert_eq!(halves(flat), ((1.0, 2.0, 3.0), (4.0, 5.0, 6.0)));
    }
}
