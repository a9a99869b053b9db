use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    let positive = x > 0.0;
    x * 2.0
}

fn main() {}
