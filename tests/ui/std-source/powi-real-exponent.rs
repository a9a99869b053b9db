use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    x.powi(2.0)
}

fn main() {}
