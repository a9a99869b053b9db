// User names that look like generated ones, and a shadowed prelude: the generated code
// must still resolve its own names and the user's.
#![allow(dead_code, non_camel_case_types, unused_imports)]

use ::autodiff::prelude::*;

// Shadow prelude items and names the generated code might use.
struct Option;
struct Some;
struct None;
struct Ok;
struct Result;
struct Vec;
mod core {}
mod std {}
mod rules {}
mod autodiff {}
fn drop() {}
fn unreachable() {}

// Constants named like generated slots without their prefix, and with it.
const primal_3: f64 = 100.0;
const adjoint_0: f64 = 1.0;

#[grad]
fn f(primal_0: f64, adjoint_1: f64, partial_2_0: f64) -> f64 {
    let primal_2 = primal_0 * adjoint_1;
    let adjoint_2 = primal_2.tanh() + partial_2_0;
    let partial_3_0 = adjoint_2 * primal_3;
    let __primal_5 = partial_3_0 * adjoint_0; // a local with a generated slot's exact name
    __primal_5 + primal_2 * adjoint_2
}

fn main() {
    check_same_names();
    let (x, y, z) = (0.3, -0.7, 1.1);
    let (value, dx, dy, dz) = f_grad(x, y, z);
    assert_eq!(value, f(x, y, z));
    let p = x * y;
    let a = p.tanh() + z;
    let dt = 1.0 - p.tanh() * p.tanh();
    // value = a·100 + p·a, with a = tanh(p) + z and p = x·y
    let dp = (100.0 + p) * dt + a;
    assert!((dx - dp * y).abs() < 1e-12);
    assert!((dy - dp * x).abs() < 1e-12);
    assert!((dz - (100.0 + p)).abs() < 1e-12);
}

// A parameter named like its function, and like another function's gradient.
#[grad]
fn sq(sq: f64) -> f64 {
    sq * sq
}

#[grad]
fn uses_sq(sq_grad: f64) -> f64 {
    sq(sq_grad) + 1.0
}

fn check_same_names() {
    assert_eq!(sq_grad(3.0), (9.0, 6.0));
    assert_eq!(uses_sq_grad(3.0), (10.0, 6.0));
}
