use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    let g = |t: f64| t * x;
    g(2.0)
}

fn main() {}
