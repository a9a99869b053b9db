use autodiff::prelude::*;

#[derive(Differentiable)]
struct Layer {
    w: [f64; 2],
}

// A `&mut` parameter the function writes through is not supported (one it only reads
// is taken as `&`): one error, under the type, and none under the uses of its fields.
#[grad(wrt(x))]
fn predict(m: &mut Layer, x: f64) -> f64 {
    m.w[1] = 0.5 * x;
    m.w[0] * x + m.w[1]
}

fn main() {}
