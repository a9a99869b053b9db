use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    x.powi(x as i32)
}

fn main() {}
