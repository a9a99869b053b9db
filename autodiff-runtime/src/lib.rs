//! Runtime of the [`autodiff`](https://docs.rs/autodiff) crate: the derivative
//! [`rules`] of every elementary operation, two dynamic reverse-mode engines built on
//! them, [`Value`] (a micrograd-style graph) and [`Tape`] (an arena whose creation order is
//! its topological order), and a gradient [`check`] against finite differences.
//!
//! Most users depend on the `autodiff` facade instead, which re-exports this crate and adds
//! the `#[grad]` attribute.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod calc;
pub mod check;
mod differentiable;
mod error;
mod ext;
pub mod loops;
mod real;
pub mod rules;
mod tape;
mod value;
mod workspace;

#[doc(hidden)]
pub use differentiable::probe as differentiable_probe;
pub use differentiable::Differentiable;
pub use error::DomainError;
pub use ext::F64Ext;
pub use real::Real;
pub use tape::{Gradient, Operand, Tape, Var};
pub use value::Value;
pub use workspace::{Flat, Workspace};

/// Returns `x` unchanged. Inside a `#[grad]` function the result is treated as a constant:
/// no gradient flows through it.
///
/// ```
/// # use autodiff_runtime::stop_gradient;
/// assert_eq!(stop_gradient(2.5), 2.5);
/// assert_eq!(stop_gradient(2.5f32), 2.5f32);
/// ```
#[inline]
#[must_use]
pub fn stop_gradient<R: Real>(x: R) -> R {
    x
}
