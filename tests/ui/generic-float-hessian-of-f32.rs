use autodiff::prelude::*;
use num_traits::Float;

#[grad(hvp, hessian)]
fn rosenbrock<T: Float>(x: T, y: T) -> T {
    let a = T::one() - x;
    let b = y - x * x;
    a * a + T::from(100.0).unwrap() * b * b
}

fn main() {
    // `_hessian` computes in `f64`; `f32` has `_hvp`.
    let _ = rosenbrock_hvp(1.0f32, 2.0, 1.0, 0.0);
    let _ = rosenbrock_hessian(1.0f32, 2.0);
}
