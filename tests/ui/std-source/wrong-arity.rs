use autodiff::prelude::*;

#[grad]
fn f(x: f64, y: f64) -> f64 {
    x.max(y, 1.0) + x.tanh()
}

fn main() {}
