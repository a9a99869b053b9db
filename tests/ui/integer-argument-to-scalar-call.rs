use autodiff::prelude::*;

#[grad]
fn scaled(x: f64, k: usize) -> f64 {
    x * k as f64
}

#[grad]
fn caller(x: f64) -> f64 {
    scaled(x, 3)
}

fn main() {}
