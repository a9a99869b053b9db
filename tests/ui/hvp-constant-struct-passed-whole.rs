use autodiff::prelude::*;

#[derive(Differentiable)]
pub struct Anchor {
    pub k: f64,
}

#[grad(hvp)]
fn energy(s: &Anchor, x: f64) -> f64 {
    s.k * x * x
}

// Second order through a call that passes whole a struct left out of `wrt(..)`: not
// yet, one error under the call.
#[grad(hvp, wrt(x))]
fn work(s: &Anchor, x: f64) -> f64 {
    energy(s, x) * x
}

fn main() {}
