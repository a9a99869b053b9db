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

fn apply(layer: &Layer, h: f64) -> f64 {
    (layer.w * h + layer.b).tanh()
}

// An element of a collection of structs is read by its fields; passing it whole to a
// call is one error, under the element.
#[grad]
fn forward(m: &Mlp, x: f64) -> f64 {
    let mut h = x;
    for layer in &m.layers {
        h = apply(layer, h) + layer.b;
    }
    h
}

fn main() {}
