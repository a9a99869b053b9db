use autodiff::prelude::*;

#[grad]
fn inner(x: f64) -> f64 {
    x.sin()
}

// Second order through a call needs second order in the callee (`hvp` or `hessian`).
#[grad(hvp)]
fn outer(x: f64, y: f64) -> f64 {
    inner(x * y) + y
}

fn main() {}
