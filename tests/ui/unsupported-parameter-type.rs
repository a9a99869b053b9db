use autodiff::prelude::*;

#[grad]
fn f(x: f64, n: f32) -> f64 {
    x * 2.0
}

fn main() {}
