use autodiff::prelude::*;

#[derive(Differentiable)]
struct Model {
    w: [f64; 2],
}

// Struct and tuple parameters are supported in functions of `f64` only.
#[grad]
fn loss(m: &Model, p: (f32, f32), x: f32) -> f32 {
    p.0 * x + p.1 * m.w[0] as f32
}

fn main() {}
