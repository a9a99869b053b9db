use autodiff::prelude::*;

#[derive(Differentiable)]
struct Layer {
    w: [f64; 2],
}

// `&mut` parameters are not supported: one error, under the type, and none under the
// reads of its fields.
#[grad(wrt(x))]
fn predict(m: &mut Layer, x: f64) -> f64 {
    m.w[0] * x + m.w[1]
}

fn main() {}
