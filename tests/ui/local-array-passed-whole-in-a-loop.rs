use autodiff::prelude::*;

#[grad]
fn dot(w: &[f64; 2], x: &[f64; 2]) -> f64 {
    w[0] * x[0] + w[1] * x[1]
}

#[grad]
fn f(w: &[f64; 2], xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for &x in xs {
        let h = [x, x * x];
        total += dot(w, &h);
    }
    total
}

#[grad]
fn sum(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>()
}

#[grad]
fn g(a: f64) -> f64 {
    let mut v = vec![0.0; 2];
    v[0] = a;
    v[1] = a * a;
    sum(&v)
}

/// A `mut` parameter may change as a local array does: the same rule, with its own advice.
#[grad]
fn k(mut w: [f64; 2], x: f64) -> f64 {
    w[0] += x;
    if x > 0.0 {
        return dot(&w, &w);
    }
    x
}

fn main() {}
