use autodiff::prelude::*;

#[grad(jacobian)]
fn identity(p: [f64; 2]) -> [f64; 2] {
    p
}

fn main() {}
