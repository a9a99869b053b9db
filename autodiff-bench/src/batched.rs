//! The moons network's loss and gradient as XLA computes them: the whole batch at once,
//! each layer a matrix product (`nalgebra`'s, which runs `matrixmultiply`'s SIMD kernels),
//! the backpropagation three more products per layer. This is the hand-written stand-in
//! for what `jax.jit(value_and_grad)` compiles the same math to, run in this process.
//!
//! It works for any hidden width `H` with the layout of the moons model
//! (`examples/moons_model`): two hidden layers of `H` ReLU units and a linear output, each
//! unit's weights followed by its bias in one flat parameter slice, the mean hinge loss
//! `relu(1 - y·score)` plus `ALPHA · Σ p²`. [`crate::wide`] uses it with `H = 256`.

use nalgebra::{DMatrix, DVector};

/// Inputs per sample.
const INPUTS: usize = 2;

/// The number of parameters of the network with hidden width `h`.
#[must_use]
pub const fn params(h: usize) -> usize {
    h * (INPUTS + 1) + h * (h + 1) + h + 1
}

/// Loss and gradient of the network of hidden width `h` over the samples, computed by
/// batches of matrix products. `alpha` weighs the L2 penalty.
///
/// # Panics
/// If `p` does not hold [`params`]`(h)` numbers or `xs` and `ys` differ in length.
#[must_use]
pub fn loss_and_gradient(
    h: usize,
    alpha: f64,
    p: &[f64],
    xs: &[[f64; 2]],
    ys: &[f64],
) -> (f64, Vec<f64>) {
    assert_eq!(p.len(), params(h));
    assert_eq!(xs.len(), ys.len());
    let n = xs.len();
    let (l2, l3) = (h * (INPUTS + 1), h * (INPUTS + 1) + h * (h + 1));
    // The layers as matrices: row j holds unit j's weights.
    let w1 = DMatrix::from_fn(h, INPUTS, |j, i| p[j * (INPUTS + 1) + i]);
    let b1 = DVector::from_fn(h, |j, _| p[j * (INPUTS + 1) + INPUTS]);
    let w2 = DMatrix::from_fn(h, h, |j, k| p[l2 + j * (h + 1) + k]);
    let b2 = DVector::from_fn(h, |j, _| p[l2 + j * (h + 1) + h]);
    let v = DVector::from_fn(h, |k, _| p[l3 + k]);
    let c = p[l3 + h];
    let x = DMatrix::from_fn(n, INPUTS, |s, i| xs[s][i]);

    // Forward, a sample per row.
    let mut z1 = &x * w1.transpose();
    for mut row in z1.row_iter_mut() {
        row += b1.transpose();
    }
    let a1 = z1.map(|z| z.max(0.0));
    let mut z2 = &a1 * w2.transpose();
    for mut row in z2.row_iter_mut() {
        row += b2.transpose();
    }
    let a2 = z2.map(|z| z.max(0.0));
    let score = &a2 * &v;
    let scale = 1.0 / n as f64;
    let mut data_loss = 0.0;
    let d_score = DVector::from_fn(n, |s, _| {
        let margin = 1.0 - ys[s] * (score[s] + c);
        data_loss += margin.max(0.0);
        if margin > 0.0 {
            -ys[s] * scale
        } else {
            0.0
        }
    });

    // Backward: through the output, the second layer, the first.
    let d_v = a2.transpose() * &d_score;
    let d_c = d_score.sum();
    let mut d_z2 = &d_score * v.transpose();
    d_z2.zip_apply(&z2, |d, z| {
        if z <= 0.0 {
            *d = 0.0;
        }
    });
    let d_w2 = d_z2.transpose() * &a1;
    let d_b2 = d_z2.row_sum();
    let mut d_z1 = &d_z2 * &w2;
    d_z1.zip_apply(&z1, |d, z| {
        if z <= 0.0 {
            *d = 0.0;
        }
    });
    let d_w1 = d_z1.transpose() * &x;
    let d_b1 = d_z1.row_sum();

    // Back to the flat layout, with the penalty.
    let mut grad: Vec<f64> = p.iter().map(|q| 2.0 * alpha * q).collect();
    for j in 0..h {
        for i in 0..INPUTS {
            grad[j * (INPUTS + 1) + i] += d_w1[(j, i)];
        }
        grad[j * (INPUTS + 1) + INPUTS] += d_b1[j];
        for k in 0..h {
            grad[l2 + j * (h + 1) + k] += d_w2[(j, k)];
        }
        grad[l2 + j * (h + 1) + h] += d_b2[j];
        grad[l3 + j] += d_v[j];
    }
    grad[l3 + h] += d_c;
    let penalty: f64 = p.iter().map(|q| q * q).sum();
    (data_loss * scale + alpha * penalty, grad)
}
