use autodiff::prelude::*;

// `parallel` splits a loop over samples across threads; this function has none that
// qualifies (the loop also writes `count`, declared outside it).
#[grad(wrt(w), parallel)]
fn loss(w: f64, xs: &[f64]) -> f64 {
    let mut total = 0.0;
    let mut count = 0;
    for i in 0..xs.len() {
        total += (w * xs[i]).sin();
        count += 1;
    }
    total / count as f64
}

fn main() {
    let _ = loss_grad(1.0, &[1.0, 2.0]);
}
