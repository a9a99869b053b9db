use autodiff::prelude::*;

#[grad]
fn f(w: &[f64; 4], x: f64) -> f64 {
    let i = 1.0;
    w[i] * x
}

fn main() {}
