use autodiff::prelude::*;
use nalgebra::Vector2;

// A `while` condition is evaluated at each turn: a nalgebra value computed in it has no
// place to be computed once.
#[grad]
fn approach(p: Vector2<f64>, goal: Vector2<f64>) -> f64 {
    let mut q = p;
    let mut steps = 0.0;
    while (goal - q).norm() > 0.1 {
        q += (goal - q) * 0.5;
        steps += 1.0;
    }
    q.x * steps
}

fn main() {
    println!("{:?}", approach_grad(Vector2::zeros(), Vector2::new(1.0, 1.0)));
}
