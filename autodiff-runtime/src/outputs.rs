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
}
