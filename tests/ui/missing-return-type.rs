use autodiff::prelude::*;

#[grad]
fn f(x: f64) {
    let _ = x;
}

fn main() {}
