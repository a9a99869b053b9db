use autodiff::prelude::*;

#[grad(jvp)]
fn energy(x: f64, y: f64) -> f64 {
    x * x * y
}

#[grad(hessian)]
fn total(p: [f64; 2]) -> f64 {
    energy(p[0], p[1]) + p[0].sin()
}

fn main() {
    let _ = total_hessian([1.0, 2.0]);
}
