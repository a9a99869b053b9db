//! A tanh neuron: `tanh(Σ wᵢ·xᵢ + b)` with 8 inputs, 8 weights and a bias (17 inputs,
//! in the order `x0..x7, w0..w7, b`). The `#[grad]` and `symdiff` forms are written out
//! in [`written_out`](crate::written_out).

use autodiff::prelude::*;
use autodiff_fwd::{Float, FT};

use crate::drive::{self, Dual};
use crate::written_out::{neuron_generated, neuron_primal, neuron_symdiff_gradient};
use crate::{Symdiff, Workload};

/// Inputs (and weights).
const K: usize = 8;
/// All parameters: inputs, weights, bias.
const N: usize = 2 * K + 1;

/// By hand.
pub fn hand_written(p: &[f64; N]) -> (f64, [f64; N]) {
    let (x, w, b) = (&p[..K], &p[K..2 * K], p[2 * K]);
    let mut z = w[0] * x[0];
    for i in 1..K {
        z += w[i] * x[i];
    }
    let t = (z + b).tanh();
    let dz = 1.0 - t * t;
    let mut g = [0.0; N];
    for i in 0..K {
        g[i] = dz * w[i];
        g[K + i] = dz * x[i];
    }
    g[2 * K] = dz;
    (t, g)
}

/// On `Value`s.
pub fn with_value(p: &[Value]) -> Value {
    let (x, w, b) = (&p[..K], &p[K..2 * K], &p[2 * K]);
    let mut z = &w[0] * &x[0];
    for i in 1..K {
        z += &w[i] * &x[i];
    }
    (z + b).tanh()
}

/// On a `Tape`.
pub fn with_tape<'t>(p: &[Var<'t>]) -> Var<'t> {
    let (x, w, b) = (&p[..K], &p[K..2 * K], p[2 * K]);
    let mut z = w[0] * x[0];
    for i in 1..K {
        z += w[i] * x[i];
    }
    (z + b).tanh()
}

/// On `num-dual` numbers.
pub fn with_dual<D: Dual>(p: &[D]) -> D {
    let (x, w, b) = (&p[..K], &p[K..2 * K], p[2 * K]);
    let mut z = w[0] * x[0];
    for i in 1..K {
        z += w[i] * x[i];
    }
    (z + b).tanh()
}

/// On the `reverse` crate's tape.
pub fn with_reverse<'t>(p: &[reverse::Var<'t>]) -> reverse::Var<'t> {
    let (x, w, b) = (&p[..K], &p[K..2 * K], p[2 * K]);
    let mut z = w[0] * x[0];
    for i in 1..K {
        z = z + w[i] * x[i];
    }
    (z + b).tanh()
}

/// On the `autodiff` 0.7 crate's forward numbers.
pub fn with_autodiff_fwd(p: &[FT<f64>]) -> FT<f64> {
    let (x, w, b) = (&p[..K], &p[K..2 * K], p[2 * K]);
    let mut z = w[0] * x[0];
    for i in 1..K {
        z += w[i] * x[i];
    }
    (z + b).tanh()
}

/// Every contender.
#[must_use]
pub fn workload() -> Workload<N> {
    Workload {
        name: "neuron",
        formula: "tanh(w·x + b), 8 inputs + 8 weights + bias = 17 inputs",
        point: std::array::from_fn(|i| match i {
            _ if i < K => (0.9 * i as f64 + 0.4).sin(),
            _ if i < 2 * K => 0.3 * (1.3 * i as f64).cos(),
            _ => 0.1,
        }),
        primal: neuron_primal,
        generated: neuron_generated,
        hand_written,
        value: |x| drive::value(x, with_value),
        tape: |x| drive::tape(x, with_tape),
        finite_differences: |x| drive::finite_differences(x, neuron_primal),
        num_dual_passes: |x| drive::num_dual_passes(x, with_dual),
        num_dual_vector: |x| drive::num_dual_vector(x, with_dual),
        reverse: |x| drive::reverse(x, with_reverse),
        autodiff_fwd: |x| drive::autodiff_fwd(x, with_autodiff_fwd),
        symdiff: Symdiff::Rewritten(
            |x| (f64::NAN, neuron_symdiff_gradient(x)),
            "tanh written as 1 - 2/(exp(2z) + 1)",
        ),
        forward: crate::Forward {
            generated: crate::written_out::neuron_jvp_arrays,
            num_dual: |x, t| drive::num_dual_tangent(x, t, with_dual),
        },
    }
}
