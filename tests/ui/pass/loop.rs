use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    let mut acc = x;
    loop {
        acc *= 0.5;
    }
}

fn main() {}
