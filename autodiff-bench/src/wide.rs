//! A wide network: the moons model with 256 units per hidden layer instead of 16
//! (2-256-256-1, 66,817 parameters), where each sample's second layer is a 256 × 256
//! matrix-vector product — the shape where XLA's matrix products are strongest.
//!
//! Three computations of the same loss and gradient: `#[grad]` on the loss written over
//! slices, as a user writes it ([`loss`]); the hand-written backpropagation, a sample at a
//! time, written like the moons model's ([`backprop`]); and the batched one, each layer a
//! matrix product over all samples ([`crate::batched`]).
#![allow(clippy::needless_range_loop)] // written the way `#[grad]` code is written

use autodiff::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Inputs per sample.
pub const INPUTS: usize = 2;
/// Units per hidden layer.
pub const WIDTH: usize = 256;
/// Where the second hidden layer's parameters start (each unit's weights, then its bias).
pub const L2: usize = WIDTH * (INPUTS + 1);
/// Where the output unit's parameters start.
pub const L3: usize = L2 + WIDTH * (WIDTH + 1);
/// All parameters.
pub const PARAMS: usize = L3 + WIDTH + 1;
/// The weight of the L2 penalty.
pub const ALPHA: f64 = 1e-4;

/// Weights uniform in `±1/√fan_in` (so that activations keep their scale through 256
/// units), biases 0.
#[must_use]
pub fn init(seed: u64) -> Vec<f64> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut p = vec![0.0; PARAMS];
    for (start, fan_in, units) in [(0, INPUTS, WIDTH), (L2, WIDTH, WIDTH), (L3, WIDTH, 1)] {
        let bound = 1.0 / (fan_in as f64).sqrt();
        for j in 0..units {
            for i in 0..fan_in {
                p[start + j * (fan_in + 1) + i] = rng.random_range(-bound..bound);
            }
        }
    }
    p
}

/// The loss, written once and differentiated twice: as written, and with its sums in
/// lanes (`reassociate`).
macro_rules! loss {
    ($(#[$doc:meta])* $name:ident, [$($args:tt)*]) => {
        $(#[$doc])*
        #[grad($($args)*)]
        pub fn $name(p: &[f64], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
            let mut data_loss = 0.0;
            for (x, &y) in xs.iter().zip(ys) {
                let mut h1 = [0.0; WIDTH];
                for j in 0..WIDTH {
                    let unit = j * (INPUTS + 1);
                    let mut act = p[unit + INPUTS];
                    for i in 0..INPUTS {
                        act += p[unit + i] * x[i];
                    }
                    h1[j] = act.relu();
                }
                let mut h2 = [0.0; WIDTH];
                for j in 0..WIDTH {
                    let unit = L2 + j * (WIDTH + 1);
                    let mut act = p[unit + WIDTH];
                    for k in 0..WIDTH {
                        act += p[unit + k] * h1[k];
                    }
                    h2[j] = act.relu();
                }
                let mut score = p[L3 + WIDTH];
                for k in 0..WIDTH {
                    score += p[L3 + k] * h2[k];
                }
                data_loss += (1.0 - y * score).relu();
            }
            let mut penalty = 0.0;
            for q in 0..p.len() {
                penalty += p[q] * p[q];
            }
            data_loss / (xs.len() as f64) + ALPHA * penalty
        }
    };
}

loss!(
    /// The training loss: mean hinge loss `relu(1 - y·score)` plus `ALPHA · Σ p²`.
    loss,
    [wrt(p)]
);
loss!(
    /// [`loss`] with its sums in lanes (`#[grad(reassociate)]`): each unit's activation,
    /// the score, the data loss and the penalty are summed in four partial sums.
    loss_lanes,
    [wrt(p), reassociate]
);
#[cfg(feature = "rayon")]
loss!(
    /// [`loss`] under `#[grad(parallel)]`: the sample loop in chunks on rayon's threads,
    /// each chunk's gradient preaccumulated (and its sums in lanes, as in [`loss_lanes`]).
    loss_parallel,
    [wrt(p), parallel]
);

/// The hand-written backpropagation, a sample at a time; `sparse` skips samples whose
/// hinge is inactive and units whose ReLU is off.
///
/// # Panics
/// If `p` does not hold [`PARAMS`] numbers.
#[must_use]
pub fn backprop(p: &[f64], xs: &[[f64; 2]], ys: &[f64], sparse: bool) -> (f64, Vec<f64>) {
    assert_eq!(p.len(), PARAMS);
    let mut grad = vec![0.0; PARAMS];
    let mut data_loss = 0.0;
    let scale = 1.0 / xs.len() as f64;
    let (mut a1, mut h1) = ([0.0; WIDTH], [0.0; WIDTH]);
    let (mut a2, mut h2) = ([0.0; WIDTH], [0.0; WIDTH]);
    for (x, &y) in xs.iter().zip(ys) {
        for j in 0..WIDTH {
            let unit = j * (INPUTS + 1);
            let mut act = p[unit + INPUTS];
            for i in 0..INPUTS {
                act += p[unit + i] * x[i];
            }
            a1[j] = act;
            h1[j] = act.max(0.0);
        }
        for j in 0..WIDTH {
            let unit = L2 + j * (WIDTH + 1);
            let mut act = p[unit + WIDTH];
            for k in 0..WIDTH {
                act += p[unit + k] * h1[k];
            }
            a2[j] = act;
            h2[j] = act.max(0.0);
        }
        let mut score = p[L3 + WIDTH];
        for k in 0..WIDTH {
            score += p[L3 + k] * h2[k];
        }
        let margin = 1.0 - y * score;
        data_loss += margin.max(0.0);
        if margin <= 0.0 && sparse {
            continue;
        }
        let d_score = if margin > 0.0 { -y * scale } else { 0.0 };
        grad[L3 + WIDTH] += d_score;
        let mut d_h1 = [0.0; WIDTH];
        for j in 0..WIDTH {
            grad[L3 + j] += d_score * h2[j];
            if sparse && a2[j] <= 0.0 {
                continue;
            }
            let d_act = if a2[j] > 0.0 {
                d_score * p[L3 + j]
            } else {
                0.0
            };
            let unit = L2 + j * (WIDTH + 1);
            grad[unit + WIDTH] += d_act;
            for k in 0..WIDTH {
                grad[unit + k] += d_act * h1[k];
                d_h1[k] += d_act * p[unit + k];
            }
        }
        for j in 0..WIDTH {
            if sparse && a1[j] <= 0.0 {
                continue;
            }
            let d_act = if a1[j] > 0.0 { d_h1[j] } else { 0.0 };
            let unit = j * (INPUTS + 1);
            grad[unit + INPUTS] += d_act;
            for i in 0..INPUTS {
                grad[unit + i] += d_act * x[i];
            }
        }
    }
    let mut penalty = 0.0;
    for q in 0..PARAMS {
        penalty += p[q] * p[q];
        grad[q] += 2.0 * ALPHA * p[q];
    }
    (data_loss * scale + ALPHA * penalty, grad)
}
