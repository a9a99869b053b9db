use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f32 {
    1.0
}

fn main() {}
