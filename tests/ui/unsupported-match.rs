use autodiff::prelude::*;

#[grad]
fn f(x: f64, n: f64) -> f64 {
    match n as i32 {
        0 => x,
        _ => x * x,
    }
}

fn main() {}
