use autodiff::prelude::*;

fn norm(p: (f64, f64)) -> f64 {
    p.0.hypot(p.1)
}

// A tuple kept in a local is read by position, copied and destructured, not passed whole:
// one error under the use.
#[grad]
fn f(x: f64) -> f64 {
    let t = (x, 2.0 * x);
    let u = t;
    u.0 + t.1 + norm(t)
}

fn main() {}
