use autodiff::prelude::*;

#[derive(Differentiable)]
pub struct Pair {
    pub a: f64,
    pub b: f64,
}

#[grad(hvp)]
fn pair(x: f64, y: f64) -> Pair {
    Pair { a: x * y, b: x + y }
}

fn main() {}
