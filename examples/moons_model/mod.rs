//! micrograd's `demo.ipynb` model: the two-moons data set, an MLP with 2 inputs, two
//! hidden layers of 16 ReLU units and a linear output (337 parameters), and the max-margin
//! loss with L2 regularization — written once as a `#[grad]` function, once by hand with
//! backpropagation, and once on the `Value` engine.
//!
//! Shared by `examples/moons.rs` and `tests/moons.rs`.
#![allow(dead_code)]
// `#[grad]` code indexes arrays with loop variables (iterators are not differentiated), and
// the other versions are written the same way so they can be compared line by line.
#![allow(clippy::needless_range_loop)]

use autodiff::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Normal};

/// Inputs per sample.
pub const INPUTS: usize = 2;
/// Units per hidden layer.
pub const HIDDEN: usize = 16;
/// Training samples.
pub const SAMPLES: usize = 100;
/// Where each layer's parameters start in the flat parameter array. A unit's weights come
/// first, then its bias.
pub const L1: usize = 0;
/// Second hidden layer.
pub const L2: usize = L1 + HIDDEN * (INPUTS + 1);
/// Output unit.
pub const L3: usize = L2 + HIDDEN * (HIDDEN + 1);
/// All parameters: 16·3 + 16·17 + 17 = 337.
pub const PARAMS: usize = L3 + HIDDEN + 1;
/// The weight of the L2 penalty.
pub const ALPHA: f64 = 1e-4;

/// The data set: two interleaving half circles, noise 0.1 (scikit-learn's `make_moons`,
/// as in micrograd's demo), labels ±1.
pub fn moons(seed: u64) -> ([[f64; 2]; SAMPLES], [f64; SAMPLES]) {
    let mut rng = StdRng::seed_from_u64(seed);
    let noise = Normal::new(0.0, 0.1).expect("a valid standard deviation");
    let half = SAMPLES / 2;
    let mut xs = [[0.0; 2]; SAMPLES];
    let mut ys = [0.0; SAMPLES];
    for k in 0..half {
        let t = std::f64::consts::PI * k as f64 / (half - 1) as f64;
        xs[k] = [t.cos(), t.sin()];
        ys[k] = -1.0;
        xs[half + k] = [1.0 - t.cos(), 1.0 - t.sin() - 0.5];
        ys[half + k] = 1.0;
    }
    for x in &mut xs {
        x[0] += noise.sample(&mut rng);
        x[1] += noise.sample(&mut rng);
    }
    (xs, ys)
}

/// micrograd's initialization: weights uniform in [-1, 1], biases 0.
pub fn init(seed: u64) -> [f64; PARAMS] {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut p = [0.0; PARAMS];
    let layers = [(L1, INPUTS), (L2, HIDDEN), (L3, HIDDEN)];
    for (start, fan_in) in layers {
        let units = if start == L3 { 1 } else { HIDDEN };
        for j in 0..units {
            for i in 0..fan_in {
                p[start + j * (fan_in + 1) + i] = rng.random_range(-1.0..1.0);
            }
        }
    }
    p
}

/// The training loss: mean hinge loss `relu(1 - y·score)` plus `ALPHA · Σ p²`.
#[grad(wrt(p), hvp)]
pub fn loss(p: &[f64; PARAMS], xs: &[[f64; 2]; SAMPLES], ys: &[f64; SAMPLES]) -> f64 {
    let mut data_loss = 0.0;
    for s in 0..SAMPLES {
        let mut h1 = [0.0; HIDDEN];
        for j in 0..HIDDEN {
            let unit = L1 + j * (INPUTS + 1);
            let mut act = p[unit + INPUTS];
            for i in 0..INPUTS {
                act += p[unit + i] * xs[s][i];
            }
            h1[j] = act.relu();
        }
        let mut h2 = [0.0; HIDDEN];
        for j in 0..HIDDEN {
            let unit = L2 + j * (HIDDEN + 1);
            let mut act = p[unit + HIDDEN];
            for k in 0..HIDDEN {
                act += p[unit + k] * h1[k];
            }
            h2[j] = act.relu();
        }
        let mut score = p[L3 + HIDDEN];
        for k in 0..HIDDEN {
            score += p[L3 + k] * h2[k];
        }
        data_loss += (1.0 - ys[s] * score).relu();
    }
    let mut penalty = 0.0;
    for q in 0..PARAMS {
        penalty += p[q] * p[q];
    }
    data_loss / (SAMPLES as f64) + ALPHA * penalty
}

/// The loss over slices, written once and differentiated twice: as written, and with
/// `reassociate` (each sample's gradient preaccumulated, the sums in lanes).
macro_rules! loss_over_slices {
    ($(#[$doc:meta])* $name:ident, [$($args:tt)*]) => {
        $(#[$doc])*
        #[grad($($args)*)]
        pub fn $name(p: &[f64; PARAMS], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
            let mut data_loss = 0.0;
            for (x, &y) in xs.iter().zip(ys) {
                let mut h1 = [0.0; HIDDEN];
                for j in 0..HIDDEN {
                    let unit = L1 + j * (INPUTS + 1);
                    let mut act = p[unit + INPUTS];
                    for i in 0..INPUTS {
                        act += p[unit + i] * x[i];
                    }
                    h1[j] = act.relu();
                }
                let mut h2 = [0.0; HIDDEN];
                for j in 0..HIDDEN {
                    let unit = L2 + j * (HIDDEN + 1);
                    let mut act = p[unit + HIDDEN];
                    for k in 0..HIDDEN {
                        act += p[unit + k] * h1[k];
                    }
                    h2[j] = act.relu();
                }
                let mut score = p[L3 + HIDDEN];
                for k in 0..HIDDEN {
                    score += p[L3 + k] * h2[k];
                }
                data_loss += (1.0 - y * score).relu();
            }
            let mut penalty = 0.0;
            for q in 0..PARAMS {
                penalty += p[q] * p[q];
            }
            data_loss / (xs.len() as f64) + ALPHA * penalty
        }
    };
}

loss_over_slices!(
    /// The same training loss over a data set of any size, as a user with a real data
    /// set writes it: the samples are slices, and the loop over them runs `xs.len()`
    /// times (a run-time bound; the layers' loops keep their constant `HIDDEN` bounds).
    /// Its value is `loss`'s bit for bit on the same data; its gradient keeps the values
    /// of the sample loop on the gradient's reusable workspace instead of in stack arrays.
    loss_slices,
    [wrt(p)]
);
loss_over_slices!(
    /// [`loss_slices`] under `#[grad(reassociate)]`: the gradient of each sample is
    /// preaccumulated as the forward pass goes, so that nothing is kept per sample, and
    /// the layers' sums run in lanes. Its value and gradient are [`loss_slices`]'s up to
    /// the last bits.
    loss_slices_reassociate,
    [wrt(p), reassociate]
);

/// The same network as a Rust type, the way a user keeps a model: one field per layer's
/// weights and biases. `#[derive(Differentiable)]` lets `#[grad]` differentiate with
/// respect to it; the partial is an `Mlp` of the same shape.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Mlp {
    /// First hidden layer: one row of input weights per unit.
    pub w1: [[f64; INPUTS]; HIDDEN],
    /// First hidden layer's biases.
    pub b1: [f64; HIDDEN],
    /// Second hidden layer.
    pub w2: [[f64; HIDDEN]; HIDDEN],
    /// Second hidden layer's biases.
    pub b2: [f64; HIDDEN],
    /// The output unit's weights.
    pub w3: [f64; HIDDEN],
    /// The output unit's bias.
    pub b3: f64,
}

#[grad]
impl Mlp {
    /// The training loss of `loss_slices`, as a method: mean hinge loss plus the L2
    /// penalty, over a data set of any size. Same operations in the same order, so the
    /// same value bit for bit.
    #[grad(wrt(self))]
    pub fn loss(&self, xs: &[[f64; 2]], ys: &[f64]) -> f64 {
        let mut data_loss = 0.0;
        for (x, &y) in xs.iter().zip(ys) {
            let mut h1 = [0.0; HIDDEN];
            for j in 0..HIDDEN {
                let mut act = self.b1[j];
                for i in 0..INPUTS {
                    act += self.w1[j][i] * x[i];
                }
                h1[j] = act.relu();
            }
            let mut h2 = [0.0; HIDDEN];
            for j in 0..HIDDEN {
                let mut act = self.b2[j];
                for k in 0..HIDDEN {
                    act += self.w2[j][k] * h1[k];
                }
                h2[j] = act.relu();
            }
            let mut score = self.b3;
            for k in 0..HIDDEN {
                score += self.w3[k] * h2[k];
            }
            data_loss += (1.0 - y * score).relu();
        }
        // In the flat layout's order (a unit's weights, then its bias).
        let mut penalty = 0.0;
        for j in 0..HIDDEN {
            for i in 0..INPUTS {
                penalty += self.w1[j][i] * self.w1[j][i];
            }
            penalty += self.b1[j] * self.b1[j];
        }
        for j in 0..HIDDEN {
            for k in 0..HIDDEN {
                penalty += self.w2[j][k] * self.w2[j][k];
            }
            penalty += self.b2[j] * self.b2[j];
        }
        for k in 0..HIDDEN {
            penalty += self.w3[k] * self.w3[k];
        }
        penalty += self.b3 * self.b3;
        data_loss / (xs.len() as f64) + ALPHA * penalty
    }
}

impl Mlp {
    /// The model whose parameters are `p` in the flat layout of `loss`.
    pub fn from_flat(p: &[f64; PARAMS]) -> Mlp {
        let mut m = Mlp {
            w1: [[0.0; INPUTS]; HIDDEN],
            b1: [0.0; HIDDEN],
            w2: [[0.0; HIDDEN]; HIDDEN],
            b2: [0.0; HIDDEN],
            w3: [0.0; HIDDEN],
            b3: p[L3 + HIDDEN],
        };
        for j in 0..HIDDEN {
            let unit = L1 + j * (INPUTS + 1);
            m.w1[j].copy_from_slice(&p[unit..unit + INPUTS]);
            m.b1[j] = p[unit + INPUTS];
            let unit = L2 + j * (HIDDEN + 1);
            m.w2[j].copy_from_slice(&p[unit..unit + HIDDEN]);
            m.b2[j] = p[unit + HIDDEN];
        }
        m.w3.copy_from_slice(&p[L3..L3 + HIDDEN]);
        m
    }

    /// The parameters in the flat layout of `loss` (the inverse of `from_flat`).
    pub fn to_flat(&self) -> [f64; PARAMS] {
        let mut p = [0.0; PARAMS];
        for j in 0..HIDDEN {
            let unit = L1 + j * (INPUTS + 1);
            p[unit..unit + INPUTS].copy_from_slice(&self.w1[j]);
            p[unit + INPUTS] = self.b1[j];
            let unit = L2 + j * (HIDDEN + 1);
            p[unit..unit + HIDDEN].copy_from_slice(&self.w2[j]);
            p[unit + HIDDEN] = self.b2[j];
        }
        p[L3..L3 + HIDDEN].copy_from_slice(&self.w3);
        p[L3 + HIDDEN] = self.b3;
        p
    }
}

/// One forward pass through the network, keeping what backpropagation needs.
pub struct Activations {
    /// First hidden layer, before and after the ReLU.
    pub a1: [f64; HIDDEN],
    /// First hidden layer's outputs.
    pub h1: [f64; HIDDEN],
    /// Second hidden layer, before the ReLU.
    pub a2: [f64; HIDDEN],
    /// Second hidden layer's outputs.
    pub h2: [f64; HIDDEN],
    /// The output.
    pub score: f64,
}

/// The network on one input (plain `f64` code, the same operations as `loss`).
pub fn forward(p: &[f64; PARAMS], x: [f64; 2]) -> Activations {
    let mut out = Activations {
        a1: [0.0; HIDDEN],
        h1: [0.0; HIDDEN],
        a2: [0.0; HIDDEN],
        h2: [0.0; HIDDEN],
        score: 0.0,
    };
    for j in 0..HIDDEN {
        let unit = L1 + j * (INPUTS + 1);
        let mut act = p[unit + INPUTS];
        for i in 0..INPUTS {
            act += p[unit + i] * x[i];
        }
        out.a1[j] = act;
        out.h1[j] = act.relu();
    }
    for j in 0..HIDDEN {
        let unit = L2 + j * (HIDDEN + 1);
        let mut act = p[unit + HIDDEN];
        for k in 0..HIDDEN {
            act += p[unit + k] * out.h1[k];
        }
        out.a2[j] = act;
        out.h2[j] = act.relu();
    }
    out.score = p[L3 + HIDDEN];
    for k in 0..HIDDEN {
        out.score += p[L3 + k] * out.h2[k];
    }
    out
}

/// The network's score for one input.
pub fn score(p: &[f64; PARAMS], x: [f64; 2]) -> f64 {
    forward(p, x).score
}

/// The fraction of samples on the right side of the boundary.
pub fn accuracy(p: &[f64; PARAMS], xs: &[[f64; 2]; SAMPLES], ys: &[f64; SAMPLES]) -> f64 {
    let right = xs
        .iter()
        .zip(ys)
        .filter(|(x, y)| (score(p, **x) > 0.0) == (**y > 0.0))
        .count();
    right as f64 / SAMPLES as f64
}

/// The same loss and gradient, backpropagated by hand: what a careful programmer would
/// write without a tool (activations kept per sample, one backward pass per sample), with
/// the shortcuts such code takes: a sample whose hinge is inactive, and a unit whose ReLU
/// is off, skip their backward pass.
pub fn loss_backprop(
    p: &[f64; PARAMS],
    xs: &[[f64; 2]; SAMPLES],
    ys: &[f64; SAMPLES],
) -> (f64, [f64; PARAMS]) {
    backprop(p, xs, ys, true)
}

/// The hand-written backpropagation without its shortcuts: every sample and every unit
/// goes through the backward pass, multiplying by the ReLU's 0 or 1 — the same work as
/// the generated reverse sweep, which cannot know in advance which adjoints are zero.
pub fn loss_backprop_dense(
    p: &[f64; PARAMS],
    xs: &[[f64; 2]; SAMPLES],
    ys: &[f64; SAMPLES],
) -> (f64, [f64; PARAMS]) {
    backprop(p, xs, ys, false)
}

fn backprop(
    p: &[f64; PARAMS],
    xs: &[[f64; 2]; SAMPLES],
    ys: &[f64; SAMPLES],
    sparse: bool,
) -> (f64, [f64; PARAMS]) {
    let mut grad = [0.0; PARAMS];
    let mut data_loss = 0.0;
    let scale = 1.0 / SAMPLES as f64;
    for s in 0..SAMPLES {
        let x = xs[s];
        let act = forward(p, x);
        let margin = 1.0 - ys[s] * act.score;
        data_loss += margin.relu();
        if sparse && margin <= 0.0 {
            continue;
        }
        // d loss / d score = -y / SAMPLES where the hinge is active.
        let d_score = -ys[s] * scale * step(margin);
        grad[L3 + HIDDEN] += d_score;
        let mut d_h2 = [0.0; HIDDEN];
        for k in 0..HIDDEN {
            grad[L3 + k] += d_score * act.h2[k];
            d_h2[k] = d_score * p[L3 + k];
        }
        let mut d_h1 = [0.0; HIDDEN];
        for j in 0..HIDDEN {
            if sparse && act.a2[j] <= 0.0 {
                continue;
            }
            let unit = L2 + j * (HIDDEN + 1);
            let d_act = d_h2[j] * step(act.a2[j]);
            grad[unit + HIDDEN] += d_act;
            for k in 0..HIDDEN {
                grad[unit + k] += d_act * act.h1[k];
                d_h1[k] += d_act * p[unit + k];
            }
        }
        for j in 0..HIDDEN {
            if sparse && act.a1[j] <= 0.0 {
                continue;
            }
            let unit = L1 + j * (INPUTS + 1);
            let d_act = d_h1[j] * step(act.a1[j]);
            grad[unit + INPUTS] += d_act;
            for i in 0..INPUTS {
                grad[unit + i] += d_act * x[i];
            }
        }
    }
    let mut penalty = 0.0;
    for q in 0..PARAMS {
        penalty += p[q] * p[q];
        grad[q] += ALPHA * 2.0 * p[q];
    }
    (data_loss / SAMPLES as f64 + ALPHA * penalty, grad)
}

/// The ReLU's derivative: 1 for a positive input, else 0.
fn step(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else {
        0.0
    }
}

/// The same loss on the `Value` engine, micrograd style: builds the graph, runs
/// `backward()`, returns the loss and the gradient.
pub fn loss_value(
    p: &[f64; PARAMS],
    xs: &[[f64; 2]; SAMPLES],
    ys: &[f64; SAMPLES],
) -> (f64, [f64; PARAMS]) {
    let params: Vec<Value> = p.iter().map(|&x| Value::new(x)).collect();
    let mut data_loss = Value::new(0.0);
    for s in 0..SAMPLES {
        let h1: Vec<Value> = (0..HIDDEN)
            .map(|j| {
                let unit = L1 + j * (INPUTS + 1);
                let mut act = params[unit + INPUTS].clone();
                for i in 0..INPUTS {
                    act += &params[unit + i] * xs[s][i];
                }
                act.relu()
            })
            .collect();
        let h2: Vec<Value> = (0..HIDDEN)
            .map(|j| {
                let unit = L2 + j * (HIDDEN + 1);
                let mut act = params[unit + HIDDEN].clone();
                for k in 0..HIDDEN {
                    act += &params[unit + k] * &h1[k];
                }
                act.relu()
            })
            .collect();
        let mut score = params[L3 + HIDDEN].clone();
        for k in 0..HIDDEN {
            score += &params[L3 + k] * &h2[k];
        }
        data_loss += (1.0 - ys[s] * score).relu();
    }
    let mut penalty = Value::new(0.0);
    for q in &params {
        penalty += q * q;
    }
    let total = data_loss / (SAMPLES as f64) + ALPHA * penalty;
    total.backward();
    let mut grad = [0.0; PARAMS];
    for (g, q) in grad.iter_mut().zip(&params) {
        *g = q.grad();
    }
    (total.data(), grad)
}
