//! The gradients of the `no_std` build (whose rules run on `libm`) against closed forms
//! and central differences computed with `std`.
//!
//! Values are compared with a tolerance, not bit for bit: linking `std` for the tests
//! gives the original functions `std`'s inherent `f64::tanh` and the like, while the
//! rules, built without `std`, use `libm`'s, which may differ in the last bit.

extern crate std;

use super::*;

fn assert_close(got: f64, want: f64, tolerance: f64, what: &str) {
    let scale = want.abs().max(1.0);
    assert!(
        (got - want).abs() <= tolerance * scale,
        "{what}: got {got}, want {want}"
    );
}

/// The central difference of `f` in its `i`-th argument.
fn central<const N: usize>(f: impl Fn([f64; N]) -> f64, at: [f64; N], i: usize) -> f64 {
    let h = 1e-6 * at[i].abs().max(1.0);
    let (mut plus, mut minus) = (at, at);
    plus[i] += h;
    minus[i] -= h;
    (f(plus) - f(minus)) / (2.0 * h)
}

#[test]
fn pendulum_against_its_closed_form() {
    let (theta, omega, length) = (0.7, -1.3, 2.0);
    let (value, d_theta, d_omega, d_length) = pendulum_energy_grad(theta, omega, length);
    let g = 9.81;
    let want = 0.5 * length * length * omega * omega + g * length * (1.0 - f64::cos(theta));
    assert_close(value, want, 1e-15, "value");
    assert_close(d_theta, g * length * f64::sin(theta), 1e-15, "∂/∂theta");
    assert_close(d_omega, length * length * omega, 1e-15, "∂/∂omega");
    let d = length * omega * omega + g * (1.0 - f64::cos(theta));
    assert_close(d_length, d, 1e-15, "∂/∂length");
}

#[test]
#[allow(clippy::needless_range_loop)] // indices into the flat and the nested layout
fn network_against_central_differences() {
    let mut w = [[0.0; 3]; 4];
    for (j, row) in w.iter_mut().enumerate() {
        for (i, weight) in row.iter_mut().enumerate() {
            *weight = 0.3 * (j as f64) - 0.2 * (i as f64) + 0.1;
        }
    }
    let v = [0.5, -0.4, 0.3, 0.2, 0.1];
    let x = [0.8, -0.6];
    let (value, d_w, d_v) = network_grad(&w, &v, x);
    assert_close(value, network(&w, &v, x), 1e-15, "value");
    let mut flat = [0.0; 17];
    for j in 0..4 {
        flat[3 * j..3 * j + 3].copy_from_slice(&w[j]);
    }
    flat[12..].copy_from_slice(&v);
    let f = |p: [f64; 17]| {
        let mut w = [[0.0; 3]; 4];
        for j in 0..4 {
            w[j].copy_from_slice(&p[3 * j..3 * j + 3]);
        }
        network(&w, &[p[12], p[13], p[14], p[15], p[16]], x)
    };
    for j in 0..4 {
        for i in 0..3 {
            let want = central(f, flat, 3 * j + i);
            assert_close(d_w[j][i], want, 1e-8, "∂/∂w");
        }
    }
    for (k, &d) in d_v.iter().enumerate() {
        assert_close(d, central(f, flat, 12 + k), 1e-8, "∂/∂v");
    }
}

#[test]
fn tracking_cost_against_central_differences() {
    let u = [1.0, 0.5, -0.2, 0.3, 0.8, -1.0, 0.0, 0.4];
    let (value, d_u) = tracking_cost_grad(&u, 0.25);
    assert_close(value, tracking_cost(&u, 0.25), 1e-15, "value");
    for (k, &d) in d_u.iter().enumerate() {
        let want = central(|u| tracking_cost(&u, 0.25), u, k);
        assert_close(d, want, 1e-8, "∂/∂u");
    }
}

/// [`every_op`] in `f64` with `std`'s functions: the reference.
fn every_op_std(p: [f64; 2]) -> f64 {
    let [x, y] = p;
    let a = x.sqrt() + x.exp() + x.ln() + x.powi(3) + x.powf(y) + x.exp2() + x.log2();
    let b = x.sin() * y.cos() + (0.5 * x).tan() + x.atan2(y) + x.hypot(y) + (x - y).abs();
    let c = (0.3 * x).asin() + (0.3 * y).acos() + x.atan() + x.sinh() + y.cosh() + x.tanh();
    let d = x.asinh() + (1.0 + y).acosh() + (0.5 * x).atanh() + x.cbrt() + x.exp_m1();
    let e = x.ln_1p() + x.log10() + x.log(y + 2.0) + x.max(y) + x.min(y) + x.mul_add(y, 1.0);
    let f = 1.0 / (1.0 + (-x).exp()) + (x - y).max(0.0) + x.recip() + x.to_degrees() * 0.01;
    let g = (3.0 * x) % 0.75 + (x - 2.0 * y).rem_euclid(1.3) + (4.0 * x).fract() + x.copysign(-y);
    a + b + c + d + e + f + g
}

#[test]
fn every_op_in_f32_against_std_in_f64() {
    for (x, y) in [(0.7f32, 0.4f32), (1.3, 0.9), (0.4, 1.6)] {
        let (value, dx, dy) = every_op_grad(x, y);
        assert_close(f64::from(value), f64::from(every_op(x, y)), 1e-6, "value");
        let at = [f64::from(x), f64::from(y)];
        let tolerance = 1e-5;
        assert_close(f64::from(value), every_op_std(at), tolerance, "value");
        assert_close(
            f64::from(dx),
            central(every_op_std, at, 0),
            tolerance,
            "∂/∂x",
        );
        assert_close(
            f64::from(dy),
            central(every_op_std, at, 1),
            tolerance,
            "∂/∂y",
        );
    }
}

/// The `libm` functions behind [`Real`] agree with `std`'s to the last bits.
#[test]
fn libm_real_agrees_with_std() {
    for x in [0.1f64, 0.5, 0.9, 1.7, 3.2] {
        let pairs = [
            (Real::tanh(x), x.tanh()),
            (Real::exp(x), x.exp()),
            (Real::ln(x), x.ln()),
            (Real::sqrt(x), x.sqrt()),
            (Real::powi(x, 5), x.powi(5)),
            (Real::powi(x, -3), x.powi(-3)),
            (Real::powf(x, 1.5), x.powf(1.5)),
            (Real::log(x, 3.0), x.log(3.0)),
            (Real::signum(-x), (-x).signum()),
            (Real::abs(-x), x),
        ];
        for (got, want) in pairs {
            assert_close(got, want, 4.0 * f64::EPSILON, "libm against std");
        }
    }
    assert!(Real::signum(f64::NAN).is_nan());
    assert_eq!(Real::powi(2.0f64, 10), 1024.0);
    assert_eq!(Real::powi(2.0f32, -2), 0.25);
}

#[cfg(feature = "alloc")]
#[test]
fn slices_with_alloc_against_central_differences() {
    let xs = [[0.5, 1.0], [-1.0, 0.25], [2.0, -0.5]];
    let ys = [1.0, -0.5, 0.75];
    let w = [0.3, -0.2, 0.1];
    let (value, d_w) = mean_squared_error_grad(&w, &xs, &ys);
    assert_close(value, mean_squared_error(&w, &xs, &ys), 1e-15, "value");
    assert_eq!(d_w.len(), 3);
    for (k, &d) in d_w.iter().enumerate() {
        let want = central(|w| mean_squared_error(&w, &xs, &ys), w, k);
        assert_close(d, want, 1e-8, "∂/∂w");
    }
}
