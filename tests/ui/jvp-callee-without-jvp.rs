use autodiff::prelude::*;

#[grad]
fn inner(x: f64) -> f64 {
    x.sin()
}

// Forward mode calls the callee's forward mode, which `inner` does not generate.
#[grad(jvp)]
fn outer(x: f64) -> f64 {
    inner(x * 2.0) + x
}

fn main() {}
