use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    x.midpoint(2.0) + x.sin()
}

fn main() {}
