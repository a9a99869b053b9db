use autodiff::prelude::*;

#[grad]
fn sum(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>()
}

// A local vector passed whole: the sweep would need a copy of a run-time length at each
// call. One error, under the argument. (Local arrays passed whole, in loops and branches
// too, compile: `tests/grad_calls.rs`.)
#[grad]
fn g(a: f64) -> f64 {
    let mut v = vec![0.0; 2];
    v[0] = a;
    v[1] = a * a;
    sum(&v)
}

fn main() {}
