use autodiff::prelude::*;

#[derive(Differentiable)]
pub struct Inner {
    pub a: f64,
}

#[derive(Differentiable)]
pub struct Outer {
    pub inner: Inner,
    pub b: f64,
}

#[grad(jacobian)]
fn outer(x: f64) -> Outer {
    Outer {
        inner: Inner { a: x },
        b: x * x,
    }
}

fn main() {}
