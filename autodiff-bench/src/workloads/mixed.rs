//! A mixed transcendental function of 4 inputs,
//! `tanh(a·b + c)·eᵈ / (1 + a²) + ln(b² + 1)`.

use autodiff::prelude::*;
use autodiff_fwd::{Float, FT};
use symdiff::gradient;

use crate::drive::{self, Dual};
use crate::{Symdiff, Workload};

/// The primal; `#[grad]` adds `mixed_grad`.
#[grad(jvp)]
pub fn mixed(a: f64, b: f64, c: f64, d: f64) -> f64 {
    (a * b + c).tanh() * d.exp() / (1.0 + a * a) + (b * b + 1.0).ln()
}

/// For `symdiff`, with `tanh(z)` written `1 - 2 / (e^(2z) + 1)` (it has no `tanh`).
#[gradient(var = x, dim = 4)]
pub fn mixed_symdiff(x: &[f64]) -> f64 {
    let z = x[0] * x[1] + x[2];
    (1.0 - 2.0 / ((2.0 * z).exp() + 1.0)) * x[3].exp() / (1.0 + x[0] * x[0])
        + (x[1] * x[1] + 1.0).ln()
}

/// By hand.
pub fn hand_written(x: &[f64; 4]) -> (f64, [f64; 4]) {
    let [a, b, c, d] = *x;
    let t = (a * b + c).tanh();
    let e = d.exp();
    let q = 1.0 + a * a;
    let s = b * b + 1.0;
    let r = t * e / q;
    // ∂r/∂t = e/q, ∂r/∂e = t/q, ∂r/∂q = -r/q.
    let dz = (1.0 - t * t) * (e / q);
    let dq = -r / q;
    (
        r + s.ln(),
        [dz * b + dq * 2.0 * a, dz * a + 2.0 * b / s, dz, r],
    )
}

/// On `Value`s.
///
/// # Panics
/// Never: `b² + 1 > 0`.
pub fn with_value(x: &[Value]) -> Value {
    let (a, b, c, d) = (&x[0], &x[1], &x[2], &x[3]);
    let ln = (b * b + 1.0).log().expect("b² + 1 > 0");
    (a * b + c).tanh() * d.exp() / (1.0 + a * a) + ln
}

/// On a `Tape`.
pub fn with_tape<'t>(x: &[Var<'t>]) -> Var<'t> {
    let [a, b, c, d] = [x[0], x[1], x[2], x[3]];
    (a * b + c).tanh() * d.exp() / (1.0 + a * a) + (b * b + 1.0).ln()
}

/// On `num-dual` numbers.
pub fn with_dual<D: Dual>(x: &[D]) -> D {
    let [a, b, c, d] = [x[0], x[1], x[2], x[3]];
    (a * b + c).tanh() * d.exp() / (a * a + 1.0) + (b * b + 1.0).ln()
}

/// On the `reverse` crate's tape.
pub fn with_reverse<'t>(x: &[reverse::Var<'t>]) -> reverse::Var<'t> {
    let [a, b, c, d] = [x[0], x[1], x[2], x[3]];
    (a * b + c).tanh() * d.exp() / (1.0 + a * a) + (b * b + 1.0).ln()
}

/// On the `autodiff` 0.7 crate's forward numbers.
pub fn with_autodiff_fwd(x: &[FT<f64>]) -> FT<f64> {
    let [a, b, c, d] = [x[0], x[1], x[2], x[3]];
    (a * b + c).tanh() * d.exp() / (1.0 + a * a) + (b * b + 1.0).ln()
}

/// Every contender.
#[must_use]
pub fn workload() -> Workload<4> {
    Workload {
        name: "mixed",
        formula: "tanh(a*b + c) * exp(d) / (1 + a*a) + ln(b*b + 1), 4 inputs",
        point: [0.7, -1.3, 0.4, 0.25],
        primal: |x| mixed(x[0], x[1], x[2], x[3]),
        generated: |x| {
            let (value, da, db, dc, dd) = mixed_grad(x[0], x[1], x[2], x[3]);
            (value, [da, db, dc, dd])
        },
        hand_written,
        value: |x| drive::value(x, with_value),
        tape: |x| drive::tape(x, with_tape),
        finite_differences: |x| drive::finite_differences(x, |x| mixed(x[0], x[1], x[2], x[3])),
        num_dual_passes: |x| drive::num_dual_passes(x, with_dual),
        num_dual_vector: |x| drive::num_dual_vector(x, with_dual),
        reverse: |x| drive::reverse(x, with_reverse),
        autodiff_fwd: |x| drive::autodiff_fwd(x, with_autodiff_fwd),
        symdiff: Symdiff::Rewritten(
            |x| (f64::NAN, mixed_symdiff_gradient(x)),
            "tanh written as 1 - 2/(exp(2z) + 1)",
        ),
        forward: crate::Forward {
            generated: |x, t| mixed_jvp(x[0], x[1], x[2], x[3], t[0], t[1], t[2], t[3]),
            num_dual: |x, t| drive::num_dual_tangent(x, t, with_dual),
        },
    }
}
