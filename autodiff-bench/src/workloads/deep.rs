//! A deep chain with heavy sharing: 200 `let`s, each using the previous two values,
//! `v0 = x0`, `v1 = x1`, `v[k+2] = sin(v[k+1]·v[k]) + x[k % 4]`, returning `v201`. Written
//! out for `#[grad]` in [`written_out`](crate::written_out); `symdiff` cannot compile it.

use autodiff::prelude::*;
use autodiff_fwd::{Float, FT};

use crate::drive::{self, Dual};
use crate::written_out::{deep_generated, deep_primal};
use crate::{Symdiff, Workload};

/// Inputs.
const N: usize = 4;
/// `let`s.
const LETS: usize = 200;

/// By hand: a forward loop that keeps each value and `cos` of each product, then a
/// reverse loop over the same steps.
pub fn hand_written(x: &[f64; N]) -> (f64, [f64; N]) {
    let mut v = [0.0; LETS + 2];
    let mut cos = [0.0; LETS];
    v[0] = x[0];
    v[1] = x[1];
    for k in 0..LETS {
        let m = v[k + 1] * v[k];
        v[k + 2] = m.sin() + x[k % N];
        cos[k] = m.cos();
    }
    let mut adjoint = [0.0; LETS + 2];
    let mut g = [0.0; N];
    adjoint[LETS + 1] = 1.0;
    for k in (0..LETS).rev() {
        let a = adjoint[k + 2];
        g[k % N] += a;
        let am = a * cos[k];
        adjoint[k + 1] += am * v[k];
        adjoint[k] += am * v[k + 1];
    }
    g[0] += adjoint[0];
    g[1] += adjoint[1];
    (v[LETS + 1], g)
}

/// On `Value`s.
pub fn with_value(x: &[Value]) -> Value {
    let (mut older, mut old) = (x[0].clone(), x[1].clone());
    for k in 0..LETS {
        let new = (&old * &older).sin() + &x[k % N];
        older = std::mem::replace(&mut old, new);
    }
    old
}

/// On a `Tape`.
pub fn with_tape<'t>(x: &[Var<'t>]) -> Var<'t> {
    let (mut older, mut old) = (x[0], x[1]);
    for k in 0..LETS {
        (older, old) = (old, (old * older).sin() + x[k % N]);
    }
    old
}

/// On `num-dual` numbers.
pub fn with_dual<D: Dual>(x: &[D]) -> D {
    let (mut older, mut old) = (x[0], x[1]);
    for k in 0..LETS {
        (older, old) = (old, (old * older).sin() + x[k % N]);
    }
    old
}

/// On the `reverse` crate's tape.
pub fn with_reverse<'t>(x: &[reverse::Var<'t>]) -> reverse::Var<'t> {
    let (mut older, mut old) = (x[0], x[1]);
    for k in 0..LETS {
        (older, old) = (old, (old * older).sin() + x[k % N]);
    }
    old
}

/// On the `autodiff` 0.7 crate's forward numbers.
pub fn with_autodiff_fwd(x: &[FT<f64>]) -> FT<f64> {
    let (mut older, mut old) = (x[0], x[1]);
    for k in 0..LETS {
        (older, old) = (old, (old * older).sin() + x[k % N]);
    }
    old
}

/// Every contender.
#[must_use]
pub fn workload() -> Workload<N> {
    Workload {
        name: "deep",
        formula: "200 lets, each using the previous two: v = sin(v1*v2) + x[k%4], 4 inputs",
        point: [0.3, -0.7, 0.5, 0.4],
        primal: deep_primal,
        generated: deep_generated,
        hand_written,
        value: |x| drive::value(x, with_value),
        tape: |x| drive::tape(x, with_tape),
        finite_differences: |x| drive::finite_differences(x, deep_primal),
        num_dual_passes: |x| drive::num_dual_passes(x, with_dual),
        num_dual_vector: |x| drive::num_dual_vector(x, with_dual),
        reverse: |x| drive::reverse(x, with_reverse),
        autodiff_fwd: |x| drive::autodiff_fwd(x, with_autodiff_fwd),
        symdiff: Symdiff::Unsupported(
            "does not compile: symdiff's time grows exponentially with such a chain",
        ),
        forward: crate::Forward {
            generated: crate::written_out::deep_jvp_arrays,
            num_dual: |x, t| drive::num_dual_tangent(x, t, with_dual),
        },
    }
}
