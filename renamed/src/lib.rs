//! A user's crate whose `Cargo.toml` names the facade `ad`: every path the generated code
//! takes into it must be `::ad::…`, found from the manifest, or the one
//! `#[grad(crate = path)]` names.

use ad::prelude::*;

/// The facade again under a path of this crate, for `crate = path`.
pub use ad as differentiation;

/// A model whose partial is a value of its type.
#[derive(Clone, Debug, Differentiable)]
pub struct Line {
    /// Slope.
    pub a: f64,
    /// Intercept.
    pub b: f64,
}

/// Squared error of a line through the points; differentiated by `Line`, with its
/// forward mode, Jacobian-free second order and all.
#[grad(jvp, hvp, wrt(line))]
pub fn fit(line: &Line, xs: &[f64], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        total += (line.a * x + line.b - y).powi(2);
    }
    total
}

/// Residuals of an exponential decay, with their Jacobian (a run-time sized output).
#[grad(jacobian, wrt(p))]
pub fn residuals(p: [f64; 2], t: &[f64], y: &[f64]) -> Vec<f64> {
    t.iter()
        .zip(y)
        .map(|(&t, &y)| p[0] * (-p[1] * t).exp() - y)
        .collect()
}

/// The facade named explicitly, through a re-export of this crate.
#[grad(hessian, crate = crate::differentiation)]
pub fn rosenbrock(x: [f64; 2]) -> f64 {
    100.0 * (x[1] - x[0] * x[0]).powi(2) + (1.0 - x[0]).powi(2)
}

/// The same, as a string, the way serde spells it.
#[grad(crate = "::ad")]
pub fn softplus(x: f64) -> f64 {
    x.exp().ln_1p()
}

/// A method of a struct, in an `impl` block.
#[derive(Clone, Debug, Differentiable)]
#[differentiable(crate = crate::differentiation)]
pub struct Spring {
    /// Stiffness.
    pub k: f64,
}

#[grad]
impl Spring {
    /// Energy at extension `x`.
    #[grad]
    pub fn energy(&self, x: f64) -> f64 {
        0.5 * self.k * x * x
    }
}
