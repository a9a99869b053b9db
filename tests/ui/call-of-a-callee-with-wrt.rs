use autodiff::prelude::*;

#[grad(wrt(x))]
fn scale(x: f64, y: f64) -> f64 {
    x * y
}

// A call passing numbers goes through the callee's `_grad`, which has no partial for
// the number `wrt(..)` leaves out: one error that says so.
#[grad]
fn twice(x: f64, y: f64) -> f64 {
    scale(x, y) * x
}

fn main() {}
