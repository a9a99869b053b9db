use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    let y = if x > 0.0 { x };
    y
}

fn main() {}
