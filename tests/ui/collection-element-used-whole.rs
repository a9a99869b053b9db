use autodiff::prelude::*;

#[derive(Differentiable, Clone)]
pub struct Layer {
    pub w: f64,
    pub b: f64,
}

#[derive(Differentiable, Clone)]
pub struct Mlp {
    pub layers: Vec<Layer>,
}

// An element of a collection of structs is read by its fields and passed to calls; kept
// in an array, it is one error, under the element.
#[grad]
fn forward(m: &Mlp, x: f64) -> f64 {
    let mut h = x;
    for layer in &m.layers {
        let kept = [layer];
        h = (kept[0].w * h).tanh() + layer.b;
    }
    h
}

fn main() {}
