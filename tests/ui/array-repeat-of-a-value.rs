use autodiff::prelude::*;

// A local array starts from a constant: one error, and none at the array's uses.
#[grad]
fn f(w: [f64; 4]) -> f64 {
    let mut v = [w[1]; 4];
    v[0] += v[1];
    v[0] * w[0]
}

fn main() {}
