use autodiff::prelude::*;

#[grad]
fn f(x: f64, n: char) -> f64 {
    x * 2.0
}

fn main() {}
