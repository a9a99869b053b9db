use autodiff::prelude::*;

// A function that returns nothing is differentiated through the `&mut` parameter it
// writes; this one writes two.
#[grad(jacobian)]
fn split(a: &mut [f64; 2], b: &mut f64, x: f64) {
    a[0] = x;
    *b = x * x;
}

fn main() {}
