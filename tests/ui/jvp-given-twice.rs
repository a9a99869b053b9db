use autodiff::prelude::*;

#[grad(jvp, wrt(x), jvp)]
fn f(x: f64, y: f64) -> f64 {
    x * y
}

fn main() {}
