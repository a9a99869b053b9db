//! `Σ tanh(x[i]·x[i+1])` over 50 inputs. The `#[grad]` and `symdiff` forms are written
//! out in [`written_out`](crate::written_out).

use autodiff::prelude::*;
use autodiff_fwd::{Float, FT};

use crate::drive::{self, Dual};
use crate::written_out::{tanh_chain_generated, tanh_chain_primal, tanh_chain_symdiff_gradient};
use crate::{Symdiff, Workload};

/// Inputs.
const N: usize = 50;

/// By hand.
pub fn hand_written(x: &[f64; N]) -> (f64, [f64; N]) {
    let mut f = 0.0;
    let mut g = [0.0; N];
    for i in 0..N - 1 {
        let t = (x[i] * x[i + 1]).tanh();
        f += t;
        let d = 1.0 - t * t;
        g[i] += d * x[i + 1];
        g[i + 1] += d * x[i];
    }
    (f, g)
}

/// On `Value`s.
pub fn with_value(x: &[Value]) -> Value {
    let mut f = (&x[0] * &x[1]).tanh();
    for i in 1..N - 1 {
        f += (&x[i] * &x[i + 1]).tanh();
    }
    f
}

/// On a `Tape`.
pub fn with_tape<'t>(x: &[Var<'t>]) -> Var<'t> {
    let mut f = (x[0] * x[1]).tanh();
    for i in 1..N - 1 {
        f += (x[i] * x[i + 1]).tanh();
    }
    f
}

/// On `num-dual` numbers.
pub fn with_dual<D: Dual>(x: &[D]) -> D {
    let mut f = (x[0] * x[1]).tanh();
    for i in 1..N - 1 {
        f += (x[i] * x[i + 1]).tanh();
    }
    f
}

/// On the `reverse` crate's tape.
pub fn with_reverse<'t>(x: &[reverse::Var<'t>]) -> reverse::Var<'t> {
    let mut f = (x[0] * x[1]).tanh();
    for i in 1..N - 1 {
        f = f + (x[i] * x[i + 1]).tanh();
    }
    f
}

/// On the `autodiff` 0.7 crate's forward numbers.
pub fn with_autodiff_fwd(x: &[FT<f64>]) -> FT<f64> {
    let mut f = (x[0] * x[1]).tanh();
    for i in 1..N - 1 {
        f += (x[i] * x[i + 1]).tanh();
    }
    f
}

/// Every contender.
#[must_use]
pub fn workload() -> Workload<N> {
    Workload {
        name: "tanh_chain",
        formula: "sum of tanh(x[i]*x[i+1]), 50 inputs, written out",
        point: std::array::from_fn(|i| 1.2 * (0.7 * i as f64 + 0.3).sin()),
        primal: tanh_chain_primal,
        generated: tanh_chain_generated,
        hand_written,
        value: |x| drive::value(x, with_value),
        tape: |x| drive::tape(x, with_tape),
        finite_differences: |x| drive::finite_differences(x, tanh_chain_primal),
        num_dual_passes: |x| drive::num_dual_passes(x, with_dual),
        num_dual_vector: |x| drive::num_dual_vector(x, with_dual),
        reverse: |x| drive::reverse(x, with_reverse),
        autodiff_fwd: |x| drive::autodiff_fwd(x, with_autodiff_fwd),
        symdiff: Symdiff::Rewritten(
            |x| (f64::NAN, tanh_chain_symdiff_gradient(x)),
            "tanh written as 1 - 2/(exp(2z) + 1)",
        ),
        forward: crate::Forward {
            generated: crate::written_out::tanh_chain_jvp_arrays,
            num_dual: |x, t| drive::num_dual_tangent(x, t, with_dual),
        },
    }
}
