use autodiff::prelude::*;

#[grad(hvp)]
fn dot(u: &[f64; 2], v: &[f64; 2]) -> f64 {
    u[0] * v[0] + u[1] * v[1]
}

#[grad(hvp)]
fn outer(w: [f64; 2], x: f64) -> f64 {
    let v = [x, x * x];
    dot(&w, &v)
}

fn main() {}
