use autodiff::prelude::*;

// A copy into a new local (`let v = w;`) is supported; assigning a whole array to an
// existing one is not.
#[grad]
fn f(w: [f64; 4]) -> f64 {
    let mut v = [0.0; 4];
    let first = v[0];
    v = w;
    v[0] + first
}

fn main() {}
