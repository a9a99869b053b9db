use autodiff::prelude::*;

#[grad]
fn dot(w: &[f64], x: &[f64]) -> f64 {
    w.iter().zip(x).map(|(a, b)| a * b).sum()
}

// A subslice bound to a name is read in place; passed whole to a call, it is one error,
// under the argument.
#[grad]
fn tail_dot(w: &[f64], xs: &[f64]) -> f64 {
    let tail = &xs[1..];
    dot(w, tail) + tail[0]
}

// A window too.
#[grad]
fn window_dots(w: &[f64], xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for pair in xs.windows(2) {
        s += dot(w, pair);
    }
    s
}

fn main() {}
