use autodiff::prelude::*;

// The tests build autodiff without its `rayon` feature.
#[grad(wrt(w), parallel)]
fn loss(w: f64, xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..xs.len() {
        total += (w * xs[i]).sin();
    }
    total
}

fn main() {
    let _ = loss_grad(1.0, &[1.0, 2.0]);
}
