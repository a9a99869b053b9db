//! `#[grad]` in a `#![no_std]` crate without an allocator, as firmware uses it.
//!
//! The crate depends on `autodiff` with `default-features = false, features = ["libm"]`:
//! no `std`, no `alloc`, and the float functions `core` lacks come from `libm` through
//! [`autodiff::Real`], which the prelude brings into scope (so `theta.cos()` compiles
//! here as it does with `std`). The functions keep their operands in fixed-size arrays
//! and loop with constant bounds, so their gradients need no heap: there is none to
//! use. CI builds the crate for `thumbv7em-none-eabihf` (a Cortex-M4F) and runs its
//! tests on the host, where they compare the gradients with closed forms and central
//! differences.
//!
//! `size.sh` prints the machine-code size of each function and of its gradient on the
//! target.
#![no_std]
#![forbid(unsafe_code)]

#[cfg(feature = "alloc")]
extern crate alloc;

use autodiff::prelude::*;

/// The energy of a pendulum of length `length` at angle `theta` and angular velocity
/// `omega` (unit mass).
#[grad]
pub fn pendulum_energy(theta: f64, omega: f64, length: f64) -> f64 {
    let g = 9.81;
    0.5 * length * length * omega * omega + g * length * (1.0 - theta.cos())
}

/// A one-hidden-layer network on two inputs: `w[j] = [weight 0, weight 1, bias]` of
/// hidden unit `j`, and `v` the output weights and bias.
#[grad(wrt(w, v))]
pub fn network(w: &[[f64; 3]; 4], v: &[f64; 5], x: [f64; 2]) -> f64 {
    let mut out = v[4];
    for j in 0..4 {
        let hidden = (w[j][0] * x[0] + w[j][1] * x[1] + w[j][2]).tanh();
        out += v[j] * hidden;
    }
    out
}

/// The squared tracking error of a discretised point mass driven by the forces `u`, over
/// eight steps: the kind of objective a model-predictive controller minimises.
#[grad(wrt(u))]
pub fn tracking_cost(u: &[f64; 8], target: f64) -> f64 {
    let (mut position, mut velocity) = (0.0, 0.0);
    let mut cost = 0.0;
    for &force in u.iter() {
        velocity += 0.1 * (force - 0.5 * velocity);
        position += 0.1 * velocity;
        cost += (position - target).powi(2) + 1e-3 * force * force;
    }
    cost
}

/// Every kind of elementary operation once, in `f32`: the rules run on `libm` here.
#[grad]
pub fn every_op(x: f32, y: f32) -> f32 {
    let a = x.sqrt() + x.exp() + x.ln() + x.powi(3) + x.powf(y) + x.exp2() + x.log2();
    let b = x.sin() * y.cos() + (0.5 * x).tan() + x.atan2(y) + x.hypot(y) + (x - y).abs();
    let c = (0.3 * x).asin() + (0.3 * y).acos() + x.atan() + x.sinh() + y.cosh() + x.tanh();
    let d = x.asinh() + (1.0 + y).acosh() + (0.5 * x).atanh() + x.cbrt() + x.exp_m1();
    let e = x.ln_1p() + x.log10() + x.log(y + 2.0) + x.max(y) + x.min(y) + x.mul_add(y, 1.0);
    let f = x.sigmoid() + (x - y).relu() + x.recip() + x.to_degrees() * 0.01;
    let g = (3.0 * x) % 0.75 + (x - 2.0 * y).rem_euclid(1.3) + (4.0 * x).fract() + x.copysign(-y);
    a + b + c + d + e + f + g
}

/// The mean squared error of a linear model on samples of run-time number: with the
/// `alloc` feature only (the gradient of a slice is a `Vec`).
#[cfg(feature = "alloc")]
#[grad(wrt(w))]
pub fn mean_squared_error(w: &[f64], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        total += (w[0] * x[0] + w[1] * x[1] + w[2] - y).powi(2);
    }
    total / xs.len() as f64
}

/// One gradient-descent step on the forces `u`, as a controller runs it every cycle;
/// returns the cost before the step. (Each `*_step` function is what the generated
/// gradient compiles to on the target, and what `size.sh` measures.)
pub fn control_step(u: &mut [f64; 8], target: f64, rate: f64) -> f64 {
    let (cost, d_u) = tracking_cost_grad(u, target);
    for (u, d) in u.iter_mut().zip(d_u) {
        *u -= rate * d;
    }
    cost
}

/// One gradient-descent step on the network's parameters for the sample `(x, y)` under
/// the squared error; returns the network's output before the step.
pub fn network_step(w: &mut [[f64; 3]; 4], v: &mut [f64; 5], x: [f64; 2], y: f64) -> f64 {
    let (out, d_w, d_v) = network_grad(w, v, x);
    let scale = 0.01 * 2.0 * (out - y);
    for (row, d_row) in w.iter_mut().zip(d_w) {
        for (w, d) in row.iter_mut().zip(d_row) {
            *w -= scale * d;
        }
    }
    for (v, d) in v.iter_mut().zip(d_v) {
        *v -= scale * d;
    }
    out
}

/// The pendulum's energy and its gradient in one array.
pub fn pendulum_step(state: [f64; 3]) -> [f64; 4] {
    let (e, d_theta, d_omega, d_length) = pendulum_energy_grad(state[0], state[1], state[2]);
    [e, d_theta, d_omega, d_length]
}

/// [`every_op`] and its gradient.
pub fn every_op_step(x: f32, y: f32) -> [f32; 3] {
    let (value, dx, dy) = every_op_grad(x, y);
    [value, dx, dy]
}

#[cfg(test)]
mod tests;
