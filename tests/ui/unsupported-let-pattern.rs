use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    let (a, b) = (x, x);
    a * b
}

fn main() {}
