use autodiff::prelude::*;

#[grad]
fn f(w: &[f64], x: f64) -> f64 {
    w[0] * x
}

fn main() {}
