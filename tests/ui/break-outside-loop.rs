use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    let y = x * 2.0;
    if y > 1.0 {
        break;
    }
    y
}

fn main() {}
