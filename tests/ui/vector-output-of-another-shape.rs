use autodiff::prelude::*;

#[grad(jacobian)]
fn pair(x: f64) -> [f64; 3] {
    [x, x * x]
}

fn main() {}
