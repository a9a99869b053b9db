//! Functions whose generated code would trip lints if it were careless, in a public module
//! of a crate that denies warnings, clippy's pedantic lints and `missing_docs` (so every
//! generated function needs its doc comment): `mut` and unread `_` parameters, a name
//! ending in `_` and upper-case parameters, many parameters (the buffers of `_grad_into`
//! and `_vjp` double them), a slice, a struct, and methods with `self` differentiated or
//! constant.

use super::{assert_gradient, assert_near};
use ::autodiff::prelude::*;

/// `mut` parameters, a scalar and an array, changed in the body.
#[must_use]
#[grad(jvp)]
pub fn mutable(mut x: f64, mut w: [f64; 2]) -> f64 {
    x *= 2.0;
    w[0] += x;
    w[0] * w[1]
}

/// A parameter that the body does not read, named so.
#[must_use]
#[grad(jvp)]
pub fn ignores(x: f64, _unused: f64) -> f64 {
    x.sin()
}

/// A name that ends in `_` (its gradient is `trailing__grad`), and upper-case parameters.
#[must_use]
#[grad(jvp)]
#[allow(non_snake_case)] // the user's own names
pub fn trailing_(X: f64, W: &[f64; 2]) -> f64 {
    (X * W[0]).tanh() + W[1]
}

/// Five parameters: `five_grad_into` takes ten, `five_vjp` eleven.
#[must_use]
#[grad(jvp)]
pub fn five(alpha: f64, beta: f64, gamma: f64, delta: f64, w: &[f64; 2]) -> f64 {
    alpha * beta + gamma * delta + w[0] * w[1]
}

/// A slice: the sweep is in `sum_of_squares_grad_into`, which checks the buffer's length.
#[must_use]
#[grad(jvp)]
pub fn sum_of_squares(xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        total += x * x;
    }
    total
}

/// A model whose one number is differentiated.
#[derive(Differentiable, Clone, Debug)]
pub struct Scale {
    /// The factor.
    pub k: f64,
}

#[grad]
impl Scale {
    /// `k·x²`, differentiated in `self` and `x`.
    #[must_use]
    #[grad(jvp)]
    pub fn apply(&self, x: f64) -> f64 {
        self.k * x * x
    }
}

/// Settings, a constant.
#[derive(Debug)]
pub struct Settings {
    /// An exponent.
    pub power: i32,
}

impl Settings {
    /// `x` to the power of `self.power`: a method marked alone, `self` a constant.
    #[must_use]
    #[grad(jvp)]
    pub fn raise(&self, x: f64) -> f64 {
        x.powi(self.power)
    }
}

#[test]
fn mut_and_unread_parameters() {
    let (x, w) = (0.3, [0.5, -1.5]);
    let (value, dx, dw) = mutable_grad(x, w);
    assert_eq!(value.to_bits(), mutable(x, w).to_bits());
    assert_near("∂mutable/∂x", dx, 2.0 * w[1]);
    assert_near("∂mutable/∂w0", dw[0], w[1]);
    assert_near("∂mutable/∂w1", dw[1], w[0] + 2.0 * x);

    let (value, dx, dunused) = ignores_grad(0.7, 3.0);
    assert_eq!(value.to_bits(), ignores(0.7, 3.0).to_bits());
    assert_near("∂ignores/∂x", dx, 0.7_f64.cos());
    assert_near("∂ignores/∂_unused", dunused, 0.0);
}

#[test]
fn names_made_from_the_users() {
    let (x, w) = (0.4, [1.2, -0.3]);
    let (value, dx, dw) = trailing__grad(x, &w);
    assert_eq!(value.to_bits(), trailing_(x, &w).to_bits());
    let sech2 = 1.0 - (x * w[0]).tanh().powi(2);
    assert_near("∂trailing_/∂X", dx, w[0] * sech2);
    assert_near("∂trailing_/∂W0", dw[0], x * sech2);
    assert_near("∂trailing_/∂W1", dw[1], 1.0);
}

#[test]
fn many_parameters() {
    let (p, w) = ([0.2, -0.7, 1.1, 0.4], [0.9, -0.6]);
    let (value, d_alpha, d_beta, d_gamma, d_delta, dw) = five_grad(p[0], p[1], p[2], p[3], &w);
    assert_eq!(value.to_bits(), five(p[0], p[1], p[2], p[3], &w).to_bits());
    let gradient = [d_alpha, d_beta, d_gamma, d_delta, dw[0], dw[1]];
    assert_gradient(
        "five",
        |q| five(q[0], q[1], q[2], q[3], &[q[4], q[5]]),
        &[p[0], p[1], p[2], p[3], w[0], w[1]],
        &gradient,
    );
    let mut buffers = [0.0; 4];
    let mut buffer_w = [0.0; 2];
    let [b0, b1, b2, b3] = &mut buffers;
    let into = five_grad_into(p[0], p[1], p[2], p[3], &w, b0, b1, b2, b3, &mut buffer_w);
    assert_eq!(into.to_bits(), value.to_bits());
    let got = [
        buffers[0],
        buffers[1],
        buffers[2],
        buffers[3],
        buffer_w[0],
        buffer_w[1],
    ];
    for (got, want) in got.iter().zip(gradient) {
        assert_near("five_grad_into", *got, want);
    }
    let mut pulled = [0.0; 4];
    let mut pulled_w = [0.0; 2];
    let [v0, v1, v2, v3] = &mut pulled;
    let seeded = five_vjp(
        p[0],
        p[1],
        p[2],
        p[3],
        &w,
        3.0,
        v0,
        v1,
        v2,
        v3,
        &mut pulled_w,
    );
    assert_eq!(seeded.to_bits(), value.to_bits());
    let got = [
        pulled[0],
        pulled[1],
        pulled[2],
        pulled[3],
        pulled_w[0],
        pulled_w[1],
    ];
    for (got, want) in got.iter().zip(gradient) {
        assert_near("five_vjp", *got, 3.0 * want);
    }
}

#[test]
fn slices_structs_and_methods() {
    let xs = [0.5, -2.0, 1.5];
    let (value, dxs) = sum_of_squares_grad(&xs);
    assert_eq!(value.to_bits(), sum_of_squares(&xs).to_bits());
    for (d, x) in dxs.iter().zip(xs) {
        assert_near("∂sum_of_squares/∂x", *d, 2.0 * x);
    }

    let scale = Scale { k: 1.5 };
    let (value, dscale, dx) = scale.apply_grad(0.8);
    assert_eq!(value.to_bits(), scale.apply(0.8).to_bits());
    assert_near("∂apply/∂k", dscale.k, 0.8 * 0.8);
    assert_near("∂apply/∂x", dx, 2.0 * 1.5 * 0.8);

    let settings = Settings { power: 3 };
    let (value, dx) = settings.raise_grad(1.3);
    assert_eq!(value.to_bits(), settings.raise(1.3).to_bits());
    assert_near("∂raise/∂x", dx, 3.0 * 1.3 * 1.3);
}

/// Residuals of a line through points, a vector output of run-time length: its `_vjp`,
/// `_jvp` and `_jacobian` (forward sweeps for two parameters and more points).
#[must_use]
#[grad(jacobian, wrt(line))]
pub fn line_residuals(line: [f64; 2], x: &[f64], y: &[f64]) -> Vec<f64> {
    x.iter()
        .zip(y)
        .map(|(&x, &y)| line[0] * x + line[1] - y)
        .collect()
}

/// A fixed-size output of more inputs than outputs (reverse sweeps), and a slice's block.
#[must_use]
#[grad(jacobian)]
pub fn summary(w: &[f64], shift: [f64; 3]) -> [f64; 2] {
    let mut out = [0.0; 2];
    for v in w {
        out[0] += v + shift[0];
        out[1] += v * v * shift[1] + shift[2];
    }
    out
}

#[test]
#[allow(clippy::needless_range_loop)] // indices of two arrays
fn vector_outputs_and_jacobians() {
    let (x, y) = ([0.0, 1.0, 2.0], [1.0, 2.5, 5.0]);
    let (value, j) = line_residuals_jacobian([2.0, 0.5], &x, &y);
    assert_eq!(value, line_residuals([2.0, 0.5], &x, &y));
    for i in 0..3 {
        assert_near("∂r/∂slope", j[i][0], x[i]);
        assert_near("∂r/∂offset", j[i][1], 1.0);
    }
    let w = [0.5, -1.0];
    let shift = [0.1, 2.0, 0.3];
    let (value, j_w, j_shift) = summary_jacobian(&w, shift);
    let expected = summary(&w, shift);
    assert_eq!(value.map(f64::to_bits), expected.map(f64::to_bits));
    for k in 0..2 {
        assert_near("∂out0/∂w", j_w[(0, k)], 1.0);
        assert_near("∂out1/∂w", j_w[(1, k)], 2.0 * w[k] * shift[1]);
    }
    assert_near("∂out1/∂shift1", j_shift[1][1], 0.25 + 1.0);
}
