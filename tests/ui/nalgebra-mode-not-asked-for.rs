use autodiff::prelude::*;
use nalgebra::{Vector2, Vector3};

// A function of nalgebra's types without `jvp`: its `_jvp` is a stand-in of the user's
// types, whose one error says what to add.
#[grad]
fn field(x: &Vector3<f64>) -> Vector2<f64> {
    Vector2::new(x.x * x.y, x.z)
}

fn main() {
    let x = Vector3::new(1.0, 2.0, 3.0);
    let (value, tangent) = field_jvp(&x, &x);
    println!("{value} {tangent}");
}
