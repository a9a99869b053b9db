//! Runtime of the [`autodiff`](https://docs.rs/autodiff-static) crate: the derivative
//! [`rules`] of every elementary operation, two dynamic reverse-mode engines built on
//! them, [`Value`] (a micrograd-style graph) and [`Tape`] (an arena whose creation order is
//! its topological order), and a gradient [`check`] against finite differences.
//!
//! Most users depend on the facade instead (package `autodiff-static`, library
//! `autodiff`), which re-exports this crate and adds the `#[grad]` attribute.
//!
//! # Features
//!
//! - `std` (default): the engines [`Value`] and [`Tape`], [`calc`], the gradient
//!   [`check`], and the thread-local pool of [`Workspace`]s. Implies `alloc`.
//! - `alloc`: [`Differentiable`] and [`Flat`] for `Vec`s, and workspaces for loops of
//!   run-time length (without `std`, each gradient call makes a new one).
//! - `libm`: the float functions `core` lacks, from the [`libm`](https://docs.rs/libm)
//!   crate, for `no_std` builds. With `std` on, `std`'s own methods are used.
//!
//! Without `std`, the crate is `no_std`, and either `libm` must be on or the build
//! stops with an error that says so. The [`rules`], [`Real`], [`F64Ext`],
//! [`Differentiable`] and [`Flat`] work the same in every configuration.
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;

#[cfg(not(any(feature = "std", feature = "libm")))]
compile_error!(
    "autodiff-runtime needs the float functions of `std` or of `libm`: \
     enable its `std` feature (the default) or, in a `no_std` build, its `libm` feature"
);

#[cfg(feature = "std")]
pub mod calc;
#[cfg(feature = "std")]
pub mod check;
mod differentiable;
mod error;
mod ext;
mod lanes;
pub mod loops;
#[cfg(feature = "alloc")]
mod matrix;
#[doc(hidden)]
pub mod missing;
#[doc(hidden)]
pub mod outputs;
#[doc(hidden)]
pub mod parallel;
mod real;
pub mod rules;
#[cfg(feature = "std")]
mod tape;
#[cfg(feature = "std")]
mod value;
mod workspace;

#[doc(hidden)]
pub use differentiable::numbers as differentiable_numbers;
#[doc(hidden)]
pub use differentiable::probe as differentiable_probe;
pub use differentiable::Differentiable;
#[doc(hidden)]
pub use differentiable::PartialOf;
pub use error::DomainError;
pub use ext::F64Ext;
pub use lanes::{Lanes, OneHot, SparseTangent, TwoHot};
#[cfg(feature = "alloc")]
pub use matrix::Matrix;
pub use real::Real;
#[cfg(feature = "std")]
pub use tape::{Gradient, Operand, Tape, Var};
#[cfg(feature = "std")]
pub use value::Value;
pub use workspace::Flat;
#[cfg(feature = "alloc")]
pub use workspace::{Rows, Workspace};

/// Returns `x` unchanged. Inside a `#[grad]` function the result is treated as a constant:
/// no gradient flows through it. Any type is accepted, so a function generic over its
/// float type (`T: num_traits::Float`) calls it too.
///
/// ```
/// # use autodiff_runtime::stop_gradient;
/// assert_eq!(stop_gradient(2.5), 2.5);
/// assert_eq!(stop_gradient(2.5f32), 2.5f32);
/// ```
#[inline]
#[must_use]
pub fn stop_gradient<R>(x: R) -> R {
    x
}
