use autodiff::prelude::*;

#[grad]
fn euler(y: &mut [f64; 2], dt: f64) {
    y[0] += dt * y[1];
    y[1] -= dt * y[0];
}

// `euler(&mut y, dt);` is followed as `y = <what euler leaves in y>`. What is not, one
// error each: the value of such a call used, an element written through (`&mut y[0]`).
#[grad]
fn energy(y0: [f64; 2], dt: f64) -> f64 {
    let mut y = y0;
    euler(&mut y, dt);
    let _ = euler(&mut y, dt);
    y[0] * y[0] + y[1] * y[1]
}

#[grad]
fn element(y0: [f64; 2], dt: f64) -> f64 {
    let mut y = [[0.0; 2]; 2];
    y[0][1] = y0[1];
    euler(&mut y[0], dt);
    y[0][0]
}

fn main() {}
