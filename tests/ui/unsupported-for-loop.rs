use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    let mut acc = 0.0;
    for _ in 0..3 {
        acc += x;
    }
    acc
}

fn main() {}
