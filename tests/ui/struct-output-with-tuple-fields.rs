use autodiff::prelude::*;

#[derive(Differentiable)]
pub struct Body {
    pub pos: (f64, f64),
    pub mass: f64,
}

// A struct output whose field is a tuple: not yet, one error under the return type.
#[grad(jacobian)]
fn body(x: f64) -> Body {
    Body {
        pos: (x, x * x),
        mass: x,
    }
}

fn main() {}
