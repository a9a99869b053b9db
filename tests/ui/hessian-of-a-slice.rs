use autodiff::prelude::*;

#[grad(hessian)]
fn norm(w: &[f64]) -> f64 {
    w.iter().map(|x| x * x).sum::<f64>()
}

fn main() {}
