use autodiff::prelude::*;

#[grad(hvp)]
fn residuals(p: [f64; 2], x: &[f64]) -> Vec<f64> {
    x.iter().map(|x| p[0] * x + p[1]).collect()
}

fn main() {}
