use autodiff::prelude::*;

#[grad]
fn sum_of_squares(w: &[f64]) -> f64 {
    let mut total = 0.0;
    for k in 0..w.len() {
        total += w[k] * w[k];
    }
    total
}

fn main() {}
