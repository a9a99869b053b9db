use autodiff::prelude::*;
use num_traits::Float;

// A function generic over its float type computes in `T` alone.
#[grad]
fn weighted<T: Float>(x: T, weights: &[f64]) -> T {
    x * x * T::from(weights.len()).unwrap()
}

fn main() {
    let _ = weighted_grad(1.0f64, &[1.0]);
}
