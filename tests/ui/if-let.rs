use autodiff::prelude::*;

#[grad]
fn f(x: f64, ys: &[f64]) -> f64 {
    if let Some(y) = ys.first() {
        x * y
    } else {
        x
    }
}

fn main() {}
