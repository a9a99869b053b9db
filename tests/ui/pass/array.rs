use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    let a = [x, x];
    x + 1.0
}

fn main() {}
