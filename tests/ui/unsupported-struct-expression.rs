use autodiff::prelude::*;

struct P {
    x: f64,
}

#[grad]
fn f(x: f64) -> f64 {
    let p = P { x };
    x * 2.0
}

fn main() {}
