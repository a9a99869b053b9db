use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    let t = (x, 2.0 * x);
    x + 1.0
}

fn main() {}
