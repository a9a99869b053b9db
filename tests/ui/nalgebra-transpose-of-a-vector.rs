use autodiff::prelude::*;
use nalgebra::Vector3;

// A vector's transpose, a row vector, is not among the supported shapes; the error is
// under `transpose` and says what works (here `a.dot(&b)`).
#[grad]
fn inner(a: Vector3<f64>, b: Vector3<f64>) -> f64 {
    (a.transpose() * b)[0]
}

fn main() {
    println!("{:?}", inner_grad(Vector3::zeros(), Vector3::zeros()));
}
