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

fn main() {}
