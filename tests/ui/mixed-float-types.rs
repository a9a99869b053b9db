use autodiff::prelude::*;

// A #[grad] function computes in one float type: its return type says which.
#[grad]
fn f(x: f32, y: f64, w: &[[f64; 2]]) -> f32 {
    x * y as f32 + w[0][0] as f32
}

// Without a float return type, the first float parameter says which.
#[grad]
fn g(x: f64, y: &[f32]) -> (f64, f64) {
    (x, x * y[0] as f64)
}

fn main() {}
