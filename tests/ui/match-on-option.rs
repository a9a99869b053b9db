use autodiff::prelude::*;

#[grad]
fn f(x: f64, k: i32) -> f64 {
    match Some(k) {
        Some(0) => x,
        _ => x * x,
    }
}

fn main() {}
