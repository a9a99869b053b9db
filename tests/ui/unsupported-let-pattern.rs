use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    let (a, (b, _)) = (x, (x, x));
    a * b
}

fn main() {}
