use autodiff::prelude::*;

#[grad]
fn grow(x: &[f64]) -> f64 {
    let mut h = vec![0.0; x.len()];
    let mut total = 0.0;
    for k in 0..x.len() {
        h[k] = x[k] * x[k];
        let g = vec![0.0; h.len()];
        total += g[0] + h[k];
    }
    total
}

fn main() {}
