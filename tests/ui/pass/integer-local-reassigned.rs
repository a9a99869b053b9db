use autodiff::prelude::*;

#[grad]
fn f(w: &[f64; 4]) -> f64 {
    let mut k = 0;
    let mut acc = 0.0;
    for i in 0..4 {
        acc += w[k] * w[i];
        k += 1;
    }
    acc
}

fn main() {}
