use autodiff::prelude::*;

#[grad]
fn rotate(y: [f64; 2], t: f64) -> [f64; 2] {
    [y[0] * t.cos() - y[1] * t.sin(), y[0] * t.sin() + y[1] * t.cos()]
}

// What a call returns is an array only when the `let` says so
// (`let b: [f64; 2] = rotate(y, t);`): a macro sees tokens, not the callee's type.
#[grad]
fn f(y: [f64; 2], t: f64) -> f64 {
    let b = rotate(y, t);
    b[0] * b[1]
}

fn main() {}
