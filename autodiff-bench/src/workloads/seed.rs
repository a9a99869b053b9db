//! The seed example, `(a·b + c)²`: 3 inputs, 3 operations.

use autodiff::prelude::*;
use autodiff_fwd::{Float, FT};
use symdiff::gradient;

use crate::drive::{self, Dual};
use crate::{Symdiff, Workload};

/// The primal; `#[grad]` adds `seed_grad`.
#[grad(jvp)]
pub fn seed(a: f64, b: f64, c: f64) -> f64 {
    (a * b + c).powi(2)
}

/// For `symdiff`.
#[gradient(var = x, dim = 3)]
pub fn seed_symdiff(x: &[f64]) -> f64 {
    (x[0] * x[1] + x[2]).powi(2)
}

/// By hand.
pub fn hand_written(x: &[f64; 3]) -> (f64, [f64; 3]) {
    let [a, b, c] = *x;
    let u = a * b + c;
    let du = 2.0 * u;
    (u * u, [du * b, du * a, du])
}

/// On `Value`s.
pub fn with_value(x: &[Value]) -> Value {
    (&x[0] * &x[1] + &x[2]).powi(2)
}

/// On a `Tape`.
pub fn with_tape<'t>(x: &[Var<'t>]) -> Var<'t> {
    (x[0] * x[1] + x[2]).powi(2)
}

/// On `num-dual` numbers.
pub fn with_dual<D: Dual>(x: &[D]) -> D {
    (x[0] * x[1] + x[2]).powi(2)
}

/// On the `reverse` crate's tape.
pub fn with_reverse<'t>(x: &[reverse::Var<'t>]) -> reverse::Var<'t> {
    (x[0] * x[1] + x[2]).powi(2)
}

/// On the `autodiff` 0.7 crate's forward numbers.
pub fn with_autodiff_fwd(x: &[FT<f64>]) -> FT<f64> {
    (x[0] * x[1] + x[2]).powi(2)
}

/// Every contender.
#[must_use]
pub fn workload() -> Workload<3> {
    Workload {
        name: "seed",
        formula: "(a*b + c)^2, 3 inputs",
        point: [0.5, -1.5, 2.0],
        primal: |x| seed(x[0], x[1], x[2]),
        generated: |x| {
            let (value, da, db, dc) = seed_grad(x[0], x[1], x[2]);
            (value, [da, db, dc])
        },
        hand_written,
        value: |x| drive::value(x, with_value),
        tape: |x| drive::tape(x, with_tape),
        finite_differences: |x| drive::finite_differences(x, |x| seed(x[0], x[1], x[2])),
        num_dual_passes: |x| drive::num_dual_passes(x, with_dual),
        num_dual_vector: |x| drive::num_dual_vector(x, with_dual),
        reverse: |x| drive::reverse(x, with_reverse),
        autodiff_fwd: |x| drive::autodiff_fwd(x, with_autodiff_fwd),
        symdiff: Symdiff::Same(|x| (f64::NAN, seed_symdiff_gradient(x))),
        forward: crate::Forward {
            generated: |x, t| seed_jvp(x[0], x[1], x[2], t[0], t[1], t[2]),
            num_dual: |x, t| drive::num_dual_tangent(x, t, with_dual),
        },
    }
}
