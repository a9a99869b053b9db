use autodiff::prelude::*;

#[grad(wrt(b))]
fn f(a: f64, b: f64) -> f64 {
    a.frobnicate() * b
}

fn main() {
    // Only the unsupported method is reported: `f_grad` returns (value, ∂f/∂b).
    let (_value, _db) = f_grad(1.0, 2.0);
}
