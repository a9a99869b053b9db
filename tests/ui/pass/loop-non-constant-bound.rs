use autodiff::prelude::*;

#[grad]
fn f(x: f64, n: usize) -> f64 {
    let mut acc = 0.0;
    for _ in 0..n {
        acc += x;
    }
    acc
}

fn main() {}
