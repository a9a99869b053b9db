use autodiff::prelude::*;

#[grad]
fn f(xs: &[f64]) -> f64 {
    xs.iter().copied().reduce(f64::max).unwrap_or(0.0)
}

#[grad]
fn g(xs: &[f64]) -> f64 {
    let m: f64 = xs.iter().map(|x| x * 2.0).collect::<Vec<f64>>()[0];
    m
}

#[grad]
fn h(xs: &[f64]) -> f64 {
    xs.iter().filter(|x| **x > 0.0).enumerate().map(|(i, x)| i as f64 * x).sum()
}

// Windows of a window: one error, under the window.
#[grad]
fn windows_of_windows(xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for w in xs.windows(3) {
        for pair in w.windows(2) {
            s += pair[0] * pair[1];
        }
    }
    s
}

fn main() {}
