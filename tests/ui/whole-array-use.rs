use autodiff::prelude::*;

// A copy into a new local (`let v = w;`) and an assignment of a whole array (`v = w;`)
// are supported; an array chosen by a condition is not.
#[grad]
fn f(w: [f64; 4], u: [f64; 4]) -> f64 {
    let mut v = [0.0; 4];
    let first = v[0];
    v = w;
    v = if v[0] > 0.0 { w } else { u };
    v[0] + first
}

fn main() {}
