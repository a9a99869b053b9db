//! A user's crate with `#[grad]` functions, methods and a raw identifier, for checking
//! what tools see of the generated code:
//!
//! - `cargo doc` with `RUSTDOCFLAGS="-D warnings"`: every generated function's doc
//!   comment links to its original, also in `impl` blocks and for raw identifiers;
//! - `python3 tooling/rust_analyzer.py`: rust-analyzer resolves `energy_grad` and
//!   `loss_grad` to the `#[grad]` functions (go to definition), completes them, and shows
//!   their doc comments on hover.
//!
//! It also checks, with `cargo clippy -- -D warnings`, that the generated functions of a
//! library need no lint allowances of their user: `missing_docs` and clippy's pedantic
//! lints are on.
#![forbid(unsafe_code)]
#![warn(missing_docs, clippy::pedantic)]

use autodiff::prelude::*;

/// The energy of a spring of stiffness `k` stretched by `x`.
#[must_use]
#[grad]
pub fn energy(x: f64, k: f64) -> f64 {
    0.5 * k * x * x
}

/// A linear model.
#[derive(Differentiable, Clone, Debug)]
pub struct Linear {
    /// The weights.
    pub w: [f64; 2],
    /// The bias.
    pub b: f64,
}

#[grad]
impl Linear {
    /// The squared error on one sample.
    #[must_use]
    #[grad]
    pub fn loss(&self, x: [f64; 2], y: f64) -> f64 {
        (self.w[0] * x[0] + self.w[1] * x[1] + self.b - y).powi(2)
    }

    /// A method whose name is a keyword.
    #[must_use]
    #[grad]
    pub fn r#match(&self, x: f64) -> f64 {
        self.b * x
    }
}

/// A function whose name is a keyword, with an array parameter (so it has a pullback).
#[must_use]
#[grad]
pub fn r#type(x: f64, w: &[f64; 2]) -> f64 {
    (x * w[0]).tanh() + w[1]
}

/// The mean of the squares of `xs` (a slice: its sweep is in `mean_square_grad_into`).
#[must_use]
#[grad]
#[allow(clippy::cast_precision_loss)] // lengths far below 2⁵³
pub fn mean_square(xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        total += x * x;
    }
    total / xs.len() as f64
}

/// The prediction of `model` at `x` (a struct parameter, passed on whole to a method).
#[must_use]
#[grad]
pub fn predict(model: &Linear, x: [f64; 2]) -> f64 {
    model.r#match(x[0]) + model.w[1] * x[1]
}

/// Calls the generated functions the way a user does.
pub fn train_step(model: &mut Linear, x: [f64; 2], y: f64) -> f64 {
    let (stiffness_energy, _dx, _dk) = energy_grad(0.1, 2.0);
    let (loss, grad, _dx, _dy) = model.loss_grad(x, y);
    model.add_scaled(-0.1, &grad);
    loss + stiffness_energy
}
