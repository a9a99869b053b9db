use autodiff::prelude::*;

#[derive(Differentiable)]
pub struct Pair {
    pub a: f64,
    pub b: f64,
}

#[grad]
fn pair(x: f64, y: f64) -> Pair {
    Pair { a: x * y, b: x + y }
}

fn main() {
    let _ = pair_grad(1.0, 2.0);
}
