//! The 10-dimensional Rosenbrock function, `Σ 100·(x[i+1] - x[i]²)² + (1 - x[i])²`. The
//! `#[grad]` and `symdiff` forms are written out in [`written_out`](crate::written_out).

use autodiff::prelude::*;
use autodiff_fwd::{Float, FT};

use crate::drive::{self, Dual};
use crate::written_out::{rosenbrock_generated, rosenbrock_primal, rosenbrock_symdiff_gradient};
use crate::{Symdiff, Workload};

/// Dimensions.
const N: usize = 10;

/// By hand.
pub fn hand_written(x: &[f64; N]) -> (f64, [f64; N]) {
    let mut f = 0.0;
    let mut g = [0.0; N];
    for i in 0..N - 1 {
        let d = x[i + 1] - x[i] * x[i];
        let e = 1.0 - x[i];
        f += 100.0 * d * d + e * e;
        g[i] += -400.0 * d * x[i] - 2.0 * e;
        g[i + 1] += 200.0 * d;
    }
    (f, g)
}

/// On `Value`s.
pub fn with_value(x: &[Value]) -> Value {
    let mut f = 100.0 * (&x[1] - x[0].powi(2)).powi(2) + (1.0 - &x[0]).powi(2);
    for i in 1..N - 1 {
        f = f + 100.0 * (&x[i + 1] - x[i].powi(2)).powi(2) + (1.0 - &x[i]).powi(2);
    }
    f
}

/// On a `Tape`.
pub fn with_tape<'t>(x: &[Var<'t>]) -> Var<'t> {
    let mut f = 100.0 * (x[1] - x[0].powi(2)).powi(2) + (1.0 - x[0]).powi(2);
    for i in 1..N - 1 {
        f += 100.0 * (x[i + 1] - x[i].powi(2)).powi(2) + (1.0 - x[i]).powi(2);
    }
    f
}

/// On `num-dual` numbers.
pub fn with_dual<D: Dual>(x: &[D]) -> D {
    let term = |i: usize| (x[i + 1] - x[i].powi(2)).powi(2) * 100.0 + (D::from(1.0) - x[i]).powi(2);
    let mut f = term(0);
    for i in 1..N - 1 {
        f += term(i);
    }
    f
}

/// On the `reverse` crate's tape.
pub fn with_reverse<'t>(x: &[reverse::Var<'t>]) -> reverse::Var<'t> {
    let mut f = 100.0 * (x[1] - x[0].powi(2)).powi(2) + (1.0 - x[0]).powi(2);
    for i in 1..N - 1 {
        f = f + 100.0 * (x[i + 1] - x[i].powi(2)).powi(2) + (1.0 - x[i]).powi(2);
    }
    f
}

/// On the `autodiff` 0.7 crate's forward numbers.
pub fn with_autodiff_fwd(x: &[FT<f64>]) -> FT<f64> {
    let mut f = 100.0_f64 * (x[1] - x[0].powi(2)).powi(2) + (1.0_f64 - x[0]).powi(2);
    for i in 1..N - 1 {
        f += 100.0_f64 * (x[i + 1] - x[i].powi(2)).powi(2) + (1.0_f64 - x[i]).powi(2);
    }
    f
}

/// Every contender.
#[must_use]
pub fn workload() -> Workload<N> {
    Workload {
        name: "rosenbrock",
        formula: "Rosenbrock, 10 dimensions, written out",
        point: std::array::from_fn(|i| if i % 2 == 0 { -1.2 } else { 1.0 }),
        primal: rosenbrock_primal,
        generated: rosenbrock_generated,
        hand_written,
        value: |x| drive::value(x, with_value),
        tape: |x| drive::tape(x, with_tape),
        finite_differences: |x| drive::finite_differences(x, rosenbrock_primal),
        num_dual_passes: |x| drive::num_dual_passes(x, with_dual),
        num_dual_vector: |x| drive::num_dual_vector(x, with_dual),
        reverse: |x| drive::reverse(x, with_reverse),
        autodiff_fwd: |x| drive::autodiff_fwd(x, with_autodiff_fwd),
        symdiff: Symdiff::Same(|x| (f64::NAN, rosenbrock_symdiff_gradient(x))),
        forward: crate::Forward {
            generated: crate::written_out::rosenbrock_jvp_arrays,
            num_dual: |x, t| drive::num_dual_tangent(x, t, with_dual),
        },
    }
}
