use autodiff::prelude::*;
use num_traits::Float;

#[grad(hvp, hessian)]
fn rosenbrock<T: Float>(x: T, y: T) -> T {
    let a = T::one() - x;
    let b = y - x * x;
    a * a + T::from(100.0).unwrap() * b * b
}

// Generic code that calls a generated function names its bound.
fn newton_step<T: Float>(x: T, y: T) -> T {
    let (value, _, _, _) = rosenbrock_hessian(x, y);
    value
}

fn main() {
    let _ = newton_step(1.0f64, 2.0);
    let _ = rosenbrock_hessian(1.0f32, 2.0);
}
