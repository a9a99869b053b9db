use autodiff::prelude::*;

#[grad]
fn inner(x: f64) -> f64 {
    x.sin()
}

#[grad(hvp)]
fn outer(x: f64, y: f64) -> f64 {
    inner(x * y) + y
}

fn main() {
    // The stand-in keeps callers free of a second error.
    let _ = outer_hvp(1.0, 2.0, 1.0, 0.0);
}
