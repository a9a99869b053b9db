use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    x * 2.0f32 as f64
}

fn main() {}
