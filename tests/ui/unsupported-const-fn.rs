use autodiff::prelude::*;

#[grad]
const fn f(x: f64) -> f64 {
    x
}

fn main() {}
