use autodiff::prelude::*;

const P: (f64, f64) = (1.0, 2.0);

#[grad]
fn f(x: f64) -> f64 {
    x * P.0
}

fn main() {}
