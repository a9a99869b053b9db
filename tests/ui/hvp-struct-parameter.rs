use autodiff::prelude::*;

#[derive(Differentiable)]
struct Model {
    w: f64,
}

#[grad(hvp)]
fn energy(m: &Model, x: f64) -> f64 {
    m.w * x * x
}

fn main() {}
