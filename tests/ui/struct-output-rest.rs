use autodiff::prelude::*;

#[derive(Differentiable)]
pub struct Pair {
    pub a: f64,
    pub b: f64,
}

const ZERO: Pair = Pair { a: 0.0, b: 0.0 };

#[grad]
fn pair(x: f64) -> Pair {
    Pair { a: x * x, ..ZERO }
}

fn main() {}
