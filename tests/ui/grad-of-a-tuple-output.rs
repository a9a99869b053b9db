use autodiff::prelude::*;

#[grad]
fn polar(r: f64, theta: f64) -> (f64, f64) {
    (r * theta.cos(), r * theta.sin())
}

fn main() {
    let (_value, _dr, _dtheta) = polar_grad(1.0, 0.5);
}
