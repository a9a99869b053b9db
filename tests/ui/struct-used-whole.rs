use autodiff::prelude::*;

#[derive(Differentiable, Clone)]
pub struct M {
    pub w: [f64; 2],
}

#[grad]
fn g(m: &M) -> f64 {
    m.w[0] * m.w[1]
}

#[grad]
fn f(m: &M, x: f64) -> f64 {
    let copy = m;
    g(m) * x + m.w[2 - 1] + m.missing
}

fn main() {}
