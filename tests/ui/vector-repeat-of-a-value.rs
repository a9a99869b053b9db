use autodiff::prelude::*;

// A local vector starts from a constant: one error, and none at the vector's uses.
#[grad]
fn f(xs: &[f64]) -> f64 {
    let n = xs.len();
    let mut v = vec![xs[0]; n];
    for i in 0..n {
        v[i] = xs[i] * xs[i];
    }
    v[0] + v[n - 1]
}

fn main() {}
