use autodiff::prelude::*;

#[grad]
fn f(x: f64, y: f64) -> f64 {
    let n = y as i32;
    x.powi(n) + x.powi(y.round() as i32 + 1)
}

fn main() {}
