//! Compile-time reverse-mode automatic differentiation.
//!
//! `#[grad]` on a plain `fn(f64, …) -> f64` keeps the function as written and generates
//! `<name>_grad(…) -> (value, ∂/∂p1, ∂/∂p2, …)` next to it: a forward pass that keeps each
//! operation's local partials in stack slots, then a reverse sweep emitted in static
//! reverse-topological order. No tape, no heap, no graph at run time.
//!
//! ```
//! use autodiff::prelude::*;
//!
//! #[grad]
//! fn f(x: f64, y: f64) -> f64 {
//!     (x * y).tanh() + x.powi(2)
//! }
//!
//! let (value, dx, dy) = f_grad(0.5, -1.0);
//! assert_eq!(value, f(0.5, -1.0));
//! let t = (0.5f64 * -1.0).tanh();
//! assert!((dx - ((1.0 - t * t) * -1.0 + 2.0 * 0.5)).abs() < 1e-12);
//! assert!((dy - (1.0 - t * t) * 0.5).abs() < 1e-12);
//! ```
//!
//! The same gradients are available at run time from two dynamic engines, [`Value`] and
//! [`Tape`], which share the derivative [`rules`] with the generated code.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

extern crate self as autodiff;

pub use autodiff_macros::{grad, Differentiable};
pub use autodiff_runtime::{
    calc, rules, stop_gradient, Differentiable, DomainError, F64Ext, Gradient, Operand, Real, Tape,
    Value, Var,
};

/// Everything a user of `#[grad]` and the engines needs: `use autodiff::prelude::*;`.
pub mod prelude {
    pub use crate::{grad, stop_gradient, Differentiable, F64Ext, Tape, Value, Var};
}

/// Paths used by code that `#[grad]` generates. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use autodiff_macros::__grad_resume as grad_resume;
    pub use autodiff_runtime::{loops, rules, Differentiable, F64Ext, Flat, Workspace};
}

/// The README's Rust examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

/// The Rust examples of `docs/f32.md`, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../docs/f32.md")]
struct F32Doctests;
