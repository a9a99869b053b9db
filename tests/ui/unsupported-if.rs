use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    if x > 0.0 { x } else { -x }
}

fn main() {}
