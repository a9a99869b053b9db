use autodiff::prelude::*;
use nalgebra::Vector2;

fn length(v: Vector2<f64>) -> f64 {
    v.norm()
}

// A nalgebra value passed to a function: the call's pullback would need the function's
// derivative in nalgebra's types, which is not generated yet.
#[grad]
fn stretched(x: f64, y: f64) -> f64 {
    let v = Vector2::new(x, 2.0 * y);
    length(v)
}

fn main() {
    println!("{:?}", stretched_grad(1.0, 2.0));
}
