//! The Jacobian workloads, shared by `examples/jacobian.rs` (side by side, interleaved)
//! and `benches/modes.rs` (criterion): a dense function of 10 inputs and 10 outputs and
//! least-squares residuals, each with its Jacobian written by hand.
#![allow(clippy::needless_range_loop)] // the loops are written the way users write them

use crate::drive::Dual;
use autodiff::prelude::*;

/// The dense function's inputs and outputs.
pub const N: usize = 10;

/// A fixed 10 × 10 weight table.
pub const W: [[f64; N]; N] = {
    let mut w = [[0.0; N]; N];
    let mut i = 0;
    while i < N {
        let mut j = 0;
        while j < N {
            w[i][j] = ((i * 7 + j * 3) % 11) as f64 / 11.0 - 0.45;
            j += 1;
        }
        i += 1;
    }
    w
};

/// `yᵢ = tanh(Σⱼ Wᵢⱼ·xⱼ) + xᵢ²`: every output depends on every input.
#[grad(jacobian)]
pub fn dense(x: [f64; N]) -> [f64; N] {
    let mut y = [0.0; N];
    for i in 0..N {
        let mut s = 0.0;
        for j in 0..N {
            s += W[i][j] * x[j];
        }
        y[i] = s.tanh() + x[i] * x[i];
    }
    y
}

/// The same function's Jacobian written out: `Jᵢⱼ = (1 − tanh²)·Wᵢⱼ + 2xᵢ·δᵢⱼ`.
pub fn dense_by_hand(x: [f64; N]) -> ([f64; N], [[f64; N]; N]) {
    let mut y = [0.0; N];
    let mut j = [[0.0; N]; N];
    for i in 0..N {
        let mut s = 0.0;
        for k in 0..N {
            s += W[i][k] * x[k];
        }
        let t = s.tanh();
        y[i] = t + x[i] * x[i];
        let d = 1.0 - t * t;
        for k in 0..N {
            j[i][k] = d * W[i][k];
        }
        j[i][i] += 2.0 * x[i];
    }
    (y, j)
}

/// The same function over any dual number, for `num-dual`.
pub fn dense_dual<D: Dual>(x: &[D]) -> [D; N] {
    std::array::from_fn(|i| {
        let mut s = D::zero();
        for j in 0..N {
            s += x[j] * D::from(W[i][j]);
        }
        s.tanh() + x[i] * x[i]
    })
}

/// Exponential decay residuals, Misra1a's model.
#[grad(jacobian, wrt(b))]
pub fn residuals(b: [f64; 2], x: &[f64], y: &[f64]) -> Vec<f64> {
    x.iter()
        .zip(y)
        .map(|(&x, &y)| b[0] * (1.0 - (-b[1] * x).exp()) - y)
        .collect()
}

/// The residuals' Jacobian written out: `[1 − e, b₁·x·e]` with `e = exp(−b₂·x)`.
pub fn residuals_by_hand(b: [f64; 2], x: &[f64], y: &[f64]) -> (Vec<f64>, Vec<[f64; 2]>) {
    let mut r = Vec::with_capacity(x.len());
    let mut j = Vec::with_capacity(x.len());
    for (&x, &y) in x.iter().zip(y) {
        let e = (-b[1] * x).exp();
        r.push(b[0] * (1.0 - e) - y);
        j.push([1.0 - e, b[0] * x * e]);
    }
    (r, j)
}
