use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    let r = &x;
    x * 2.0 + r.sin()
}

fn main() {}
