use autodiff::prelude::*;

#[derive(Differentiable)]
pub struct Part {
    pub pos: (f64, f64),
}

#[derive(Differentiable)]
pub struct Body {
    pub parts: Vec<Part>,
    pub mass: f64,
}

// A struct output whose field is a collection of structs: not yet, one error under the
// return type.
#[grad(jacobian)]
fn body(x: f64) -> Body {
    Body {
        parts: Vec::new(),
        mass: x,
    }
}

fn main() {}
