use autodiff::prelude::*;
use nalgebra::Vector3;

// A method of nalgebra outside the supported ones: one error under it, and the caller of
// `angle_between_grad` sees no second error.
#[grad]
fn angle_between(a: &Vector3<f64>, b: &Vector3<f64>) -> f64 {
    a.angle(b)
}

fn main() {
    let a = Vector3::new(1.0, 0.0, 0.0);
    let b = Vector3::new(0.0, 1.0, 0.0);
    let (value, d_a, d_b) = angle_between_grad(&a, &b);
    println!("{value} {d_a} {d_b}");
}
