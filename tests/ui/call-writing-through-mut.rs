use autodiff::prelude::*;

#[grad]
fn euler(y: &mut [f64; 2], dt: f64) {
    y[0] += dt * y[1];
    y[1] -= dt * y[0];
}

// A call that writes through `&mut` inside a `#[grad]` body is not followed yet.
#[grad]
fn energy(y0: [f64; 2], dt: f64) -> f64 {
    let mut y = y0;
    euler(&mut y, dt);
    y[0] * y[0] + y[1] * y[1]
}

fn main() {}
