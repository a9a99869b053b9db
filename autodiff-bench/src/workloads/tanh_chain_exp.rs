//! The tanh chain with `tanh(z)` written `1 - 2/(e^(2z) + 1)` for every contender: the
//! formula `symdiff` has to be given (it has no `tanh`), so that `#[grad]` and symdiff
//! are compared on the same arithmetic. The `#[grad]` form is written out in
//! [`written_out`](crate::written_out); symdiff's is `tanh_chain_symdiff`.

use autodiff::prelude::*;
use autodiff_fwd::{Float, FT};

use crate::drive::{self, Dual};
use crate::written_out::{
    tanh_chain_exp_generated, tanh_chain_exp_primal, tanh_chain_symdiff_gradient,
};
use crate::{Symdiff, Workload};

/// Inputs.
const N: usize = 50;

/// By hand: `t = 1 - 2/q` with `q = e^(2z) + 1`, so `dt/dz = 4·e^(2z)/q²`.
pub fn hand_written(x: &[f64; N]) -> (f64, [f64; N]) {
    let mut f = 0.0;
    let mut g = [0.0; N];
    for i in 0..N - 1 {
        let e = (2.0 * (x[i] * x[i + 1])).exp();
        let q = e + 1.0;
        f += 1.0 - 2.0 / q;
        let d = 4.0 * e / (q * q);
        g[i] += d * x[i + 1];
        g[i + 1] += d * x[i];
    }
    (f, g)
}

/// On `Value`s.
pub fn with_value(x: &[Value]) -> Value {
    let term = |i: usize| 1.0 - 2.0 / ((2.0 * (&x[i] * &x[i + 1])).exp() + 1.0);
    let mut f = term(0);
    for i in 1..N - 1 {
        f += term(i);
    }
    f
}

/// On a `Tape`.
pub fn with_tape<'t>(x: &[Var<'t>]) -> Var<'t> {
    let term = |i: usize| 1.0 - 2.0 / ((2.0 * (x[i] * x[i + 1])).exp() + 1.0);
    let mut f = term(0);
    for i in 1..N - 1 {
        f += term(i);
    }
    f
}

/// On `num-dual` numbers.
pub fn with_dual<D: Dual>(x: &[D]) -> D {
    let term = |i: usize| D::from(1.0) - D::from(2.0) / (((x[i] * x[i + 1]) * 2.0).exp() + 1.0);
    let mut f = term(0);
    for i in 1..N - 1 {
        f += term(i);
    }
    f
}

/// On the `reverse` crate's tape. `2.0 / q` is written `2.0 * q.recip()`: reverse 0.2.2
/// gives `c / x` the partial `-1/x` instead of `-c/x²`, a wrong gradient for any `c ≠ 1`.
pub fn with_reverse<'t>(x: &[reverse::Var<'t>]) -> reverse::Var<'t> {
    let term = |i: usize| 1.0 - 2.0 * ((2.0 * (x[i] * x[i + 1])).exp() + 1.0).recip();
    let mut f = term(0);
    for i in 1..N - 1 {
        f = f + term(i);
    }
    f
}

/// On the `autodiff` 0.7 crate's forward numbers.
pub fn with_autodiff_fwd(x: &[FT<f64>]) -> FT<f64> {
    let term = |i: usize| 1.0_f64 - 2.0_f64 / ((2.0_f64 * (x[i] * x[i + 1])).exp() + 1.0);
    let mut f = term(0);
    for i in 1..N - 1 {
        f += term(i);
    }
    f
}

/// Every contender.
#[must_use]
pub fn workload() -> Workload<N> {
    Workload {
        name: "tanh_chain_exp",
        formula: "tanh_chain with tanh(z) written 1 - 2/(exp(2z) + 1) for everyone, \
                  symdiff's formula",
        point: std::array::from_fn(|i| 1.2 * (0.7 * i as f64 + 0.3).sin()),
        primal: tanh_chain_exp_primal,
        generated: tanh_chain_exp_generated,
        hand_written,
        value: |x| drive::value(x, with_value),
        tape: |x| drive::tape(x, with_tape),
        finite_differences: |x| drive::finite_differences(x, tanh_chain_exp_primal),
        num_dual_passes: |x| drive::num_dual_passes(x, with_dual),
        num_dual_vector: |x| drive::num_dual_vector(x, with_dual),
        reverse: |x| drive::reverse(x, with_reverse),
        autodiff_fwd: |x| drive::autodiff_fwd(x, with_autodiff_fwd),
        symdiff: Symdiff::Same(|x| (f64::NAN, tanh_chain_symdiff_gradient(x))),
        forward: crate::Forward {
            generated: crate::written_out::tanh_chain_exp_jvp_arrays,
            num_dual: |x, t| drive::num_dual_tangent(x, t, with_dual),
        },
    }
}
