use autodiff::prelude::*;

#[derive(Differentiable, Clone, Copy, Debug)]
pub struct Inner {
    pub c: f64,
    pub v: [f64; 2],
}

#[derive(Differentiable, Clone, Debug)]
pub struct S {
    pub w: [f64; 2],
    pub i1: Inner,
}

#[grad]
fn h0(x: f64, q: &Inner) -> f64 {
    q.c * x + q.v[1]
}

// A struct field of a collection's element is read by field (`ms[0].i1.c`); passed whole,
// it is one error under the path, and the rest of the function is not reported again.
#[grad]
fn f(x: f64, ms: &[S]) -> f64 {
    let a = ms[0].i1.c * x;
    a + h0(x, &ms[ms.len() - 1].i1) + ms[1].w[0]
}

fn main() {}
