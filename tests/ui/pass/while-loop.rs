use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    let mut acc = x;
    while acc < 10.0 {
        acc *= 2.0;
    }
    acc
}

fn main() {}
