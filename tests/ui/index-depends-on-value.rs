use autodiff::prelude::*;

#[grad]
fn f(w: &[f64; 4], x: f64) -> f64 {
    w[x as usize] * x
}

fn main() {}
