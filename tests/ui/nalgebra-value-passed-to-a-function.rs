use autodiff::prelude::*;
use nalgebra::Vector2;

fn length(v: Vector2<f64>) -> f64 {
    v.norm()
}

// A nalgebra value passed to a function that is not `#[grad]`: the call goes to the
// function's twin in arrays and its pullback, which only `#[grad]` generates; rustc's
// error names the pullback, under the call.
#[grad]
fn stretched(x: f64, y: f64) -> f64 {
    let v = Vector2::new(x, 2.0 * y);
    length(v)
}

fn main() {
    println!("{:?}", stretched_grad(1.0, 2.0));
}
