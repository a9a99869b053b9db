use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    let y = x;
    *&y + 1.0
}

fn main() {}
