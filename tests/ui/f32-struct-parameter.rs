use autodiff::prelude::*;

#[derive(Differentiable)]
struct Model {
    w: [f64; 2],
}

// A function of `f32` differentiates structs of `f32` fields (and tuples of `f32`s):
// one error, under the struct's type.
#[grad]
fn loss(m: &Model, p: (f32, f32), x: f32) -> f32 {
    p.0 * x + p.1 * x * m.w[0] as f32
}

// The same for a collection of them, and for `self`.
#[grad]
fn total(ms: &[Model], x: f32) -> f32 {
    let mut t = x;
    for m in ms {
        t += m.w[1] as f32;
    }
    t
}

#[grad]
impl Model {
    #[grad]
    fn scaled(&self, x: f32) -> f32 {
        x * x
    }
}

#[derive(Differentiable)]
struct Mixed {
    a: f64,
    b: f32,
}

// A struct that mixes the two is differentiated by neither.
#[grad]
fn first(m: &Mixed) -> f64 {
    m.a * m.a
}

// And a struct output of the other float type, under the return type.
#[grad(jacobian)]
fn placed(x: [f32; 2]) -> Model {
    Model {
        w: [1.0, x[0] as f64],
    }
}

fn main() {}
