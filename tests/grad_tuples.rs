//! Tuples: `let (a, b) = (…, …);`, helpers that return tuples (differentiated through their
//! pullback, one seed per output), and tuple parameters.

use autodiff::prelude::*;

#[grad]
fn swap_and_mix(x: f64, y: f64) -> f64 {
    let (a, b) = (x * y, x + y);
    // The values are computed before the names are bound: this swaps.
    let (a, b) = (b, a);
    let (c, _) = (a.sin(), b.exp());
    a * b + c
}

#[test]
fn tuple_lets() {
    let (x, y) = (0.7, -1.3);
    let (value, dx, dy) = swap_and_mix_grad(x, y);
    assert_eq!(value.to_bits(), swap_and_mix(x, y).to_bits());
    // a = x + y, b = x y, c = sin(x + y): f = (x + y) x y + sin(x + y).
    let expected_dx = y * (x + y) + x * y + (x + y).cos();
    let expected_dy = x * (x + y) + x * y + (x + y).cos();
    assert!((dx - expected_dx).abs() < 1e-12);
    assert!((dy - expected_dy).abs() < 1e-12);
}

/// Polar to Cartesian: two outputs.
#[grad]
fn to_cartesian(r: f64, theta: f64) -> (f64, f64) {
    (r * theta.cos(), r * theta.sin())
}

#[test]
fn the_pullback_takes_one_seed_per_output() {
    let (r, theta) = (2.0, 0.6);
    let (mut dr, mut dtheta) = (0.0, 0.0);
    let value = to_cartesian_vjp(r, theta, (1.0, 0.0), &mut dr, &mut dtheta);
    assert_eq!(value, to_cartesian(r, theta));
    // The first row of the Jacobian.
    assert!((dr - theta.cos()).abs() < 1e-15);
    assert!((dtheta + r * theta.sin()).abs() < 1e-15);
    let (mut dr, mut dtheta) = (0.0, 0.0);
    to_cartesian_vjp(r, theta, (0.5, -2.0), &mut dr, &mut dtheta);
    assert!((dr - (0.5 * theta.cos() - 2.0 * theta.sin())).abs() < 1e-15);
    assert!((dtheta - (-0.5 * r * theta.sin() - 2.0 * r * theta.cos())).abs() < 1e-14);
}

/// Unpacks the helper's outputs, uses one twice and the other once, inside a loop.
#[grad]
fn spiral_length(r0: f64, turn: f64, steps: usize) -> f64 {
    let mut total = 0.0;
    let (mut px, mut py) = to_cartesian(r0, 0.0);
    for k in 1..=steps {
        let angle = turn * k as f64;
        let (x, y) = to_cartesian(r0 + 0.1 * angle, angle);
        total += ((x - px) * (x - px) + (y - py) * (y - py)).sqrt();
        px = x;
        py = y;
    }
    total
}

#[test]
fn tuple_results_in_a_loop_against_finite_differences() {
    let (r0, turn) = (1.5, 0.3);
    let (value, dr0, dturn) = spiral_length_grad(r0, turn, 12);
    assert_eq!(value.to_bits(), spiral_length(r0, turn, 12).to_bits());
    let h = 1e-6;
    let numeric_r0 =
        (spiral_length(r0 + h, turn, 12) - spiral_length(r0 - h, turn, 12)) / (2.0 * h);
    let numeric_turn =
        (spiral_length(r0, turn + h, 12) - spiral_length(r0, turn - h, 12)) / (2.0 * h);
    assert!((dr0 - numeric_r0).abs() < 1e-7, "{dr0} vs {numeric_r0}");
    assert!(
        (dturn - numeric_turn).abs() < 1e-7,
        "{dturn} vs {numeric_turn}"
    );
}

/// The same spiral on the `Tape` engine.
#[test]
fn tuple_results_agree_with_the_tape() {
    let (r0, turn) = (0.8, -0.45);
    let tape = Tape::new();
    let (r, t) = (tape.var(r0), tape.var(turn));
    let (mut px, mut py) = (r * 1.0, r * 0.0);
    let mut total = tape.var(0.0);
    for k in 1..=7 {
        let angle = t * k as f64;
        let radius = r + angle * 0.1;
        let (x, y) = (radius * angle.cos(), radius * angle.sin());
        total += ((x - px) * (x - px) + (y - py) * (y - py)).sqrt();
        px = x;
        py = y;
    }
    let grads = total.gradient();
    let (value, dr0, dturn) = spiral_length_grad(r0, turn, 7);
    assert!((value - total.value()).abs() < 1e-12);
    assert!((dr0 - grads.wrt(r)).abs() < 1e-12);
    assert!((dturn - grads.wrt(t)).abs() < 1e-12);
}

/// Tuple parameters: read by position, with a partial of the same tuple type.
#[grad]
fn rotate_dot(point: (f64, f64), w: &([f64; 2], f64)) -> f64 {
    let (c, s) = (w.1.cos(), w.1.sin());
    let (x, y) = (c * point.0 - s * point.1, s * point.0 + c * point.1);
    w.0[0] * x + w.0[1] * y
}

#[test]
fn tuple_parameters() {
    let point = (0.8, -0.3);
    let w = ([1.5, -0.5], 0.4);
    let (value, d_point, d_w) = rotate_dot_grad(point, &w);
    assert_eq!(value.to_bits(), rotate_dot(point, &w).to_bits());
    let f = |v: &[f64]| rotate_dot((v[0], v[1]), &([v[2], v[3]], v[4]));
    let at = [point.0, point.1, w.0[0], w.0[1], w.1];
    let got = [d_point.0, d_point.1, d_w.0[0], d_w.0[1], d_w.1];
    for i in 0..5 {
        let h = 1e-6;
        let (mut up, mut down) = (at, at);
        up[i] += h;
        down[i] -= h;
        let numeric = (f(&up) - f(&down)) / (2.0 * h);
        assert!(
            (got[i] - numeric).abs() < 1e-8,
            "component {i}: {} vs {numeric}",
            got[i]
        );
    }
}

// ----- calls of functions returning arrays ----------------------------------------------

mod common;

/// A rotation, returning an array.
#[grad(jvp)]
fn rotate(y: [f64; 2], t: f64) -> [f64; 2] {
    [
        y[0] * t.cos() - y[1] * t.sin(),
        y[0] * t.sin() + y[1] * t.cos(),
    ]
}

/// Its result bound with a type, taken apart, and assigned back to an array.
#[grad(jvp)]
fn rotations(y: [f64; 2], t: f64) -> f64 {
    let a: [f64; 2] = rotate(y, t);
    let [c, d] = rotate(a, t * 0.5);
    let mut z: [f64; 2] = rotate(a, t);
    z = rotate(z, c);
    z[0] * z[1] + c * d
}

#[test]
fn calls_returning_arrays() {
    let (y, t) = ([1.0, 2.0], 0.3);
    let (value, dy, dt) = rotations_grad(y, t);
    assert_eq!(value.to_bits(), rotations(y, t).to_bits());
    let by_hand = |p: &[f64]| rotations([p[0], p[1]], p[2]);
    let numeric = common::fd_gradient(by_hand, &[y[0], y[1], t]);
    common::assert_all_close(&[dy[0], dy[1], dt], &numeric, 1e-8, "differences");
    let (_, tangent) = rotations_jvp(y, t, [1.0, -0.5], 2.0);
    common::assert_close(tangent, dy[0] - 0.5 * dy[1] + 2.0 * dt, 1e-13, "jvp");
}

/// Calls whose arguments read no number of the function are constants, computed as
/// written, taken apart or kept in an array as the others are.
#[grad(jvp)]
fn constant_rotations(y: [f64; 2], t: f64) -> f64 {
    let [c, _] = rotate([1.5, 0.5], 0.25);
    let v: [f64; 2] = rotate([2.0, 0.0], 0.5);
    let mut z = y;
    let before = z[0] * t;
    z = rotate([0.5, 1.0], 1.0);
    let mut w = y;
    w = rotate(w, t);
    c * y[0] + v[0] * t + v[1] * y[1] * y[1] + z[0] * t * t + w[1] + before
}

#[test]
fn calls_returning_arrays_of_constants() {
    let (y, t) = ([1.0, 2.0], 0.3);
    let (value, dy, dt) = constant_rotations_grad(y, t);
    assert_eq!(value.to_bits(), constant_rotations(y, t).to_bits());
    // By hand: the constant calls are numbers; w[1] = y0 sin t + y1 cos t.
    let [c, _] = rotate([1.5, 0.5], 0.25);
    let v = rotate([2.0, 0.0], 0.5);
    let z = rotate([0.5, 1.0], 1.0);
    let expected = [
        c + t.sin() + t,
        2.0 * v[1] * y[1] + t.cos(),
        v[0] + 2.0 * z[0] * t + y[0] * t.cos() - y[1] * t.sin() + y[0],
    ];
    common::assert_all_close(&[dy[0], dy[1], dt], &expected, 1e-14, "by hand");
    let by_hand = |p: &[f64]| constant_rotations([p[0], p[1]], p[2]);
    let numeric = common::fd_gradient(by_hand, &[y[0], y[1], t]);
    common::assert_all_close(&[dy[0], dy[1], dt], &numeric, 1e-8, "differences");
    let (_, tangent) = constant_rotations_jvp(y, t, [1.0, -0.5], 2.0);
    common::assert_close(tangent, dy[0] - 0.5 * dy[1] + 2.0 * dt, 1e-13, "jvp");
}

/// `let (s, c) = x.sin_cos();`, as rotations are written, in every mode.
#[grad(jvp, hvp)]
fn turned_x(angle: f64, x: f64, y: f64) -> f64 {
    let (s, c) = (2.0 * angle).sin_cos();
    c * x - s * y + s * c
}

#[test]
fn sin_cos_unpacked() {
    let (angle, x, y) = (0.4, 1.5, -0.7);
    let (value, d_angle, d_x, d_y) = turned_x_grad(angle, x, y);
    assert_eq!(value, turned_x(angle, x, y));
    let (s, c) = (2.0 * angle).sin_cos();
    common::assert_close(
        d_angle,
        2.0 * (-s * x - c * y + c * c - s * s),
        1e-14,
        "∂/∂angle",
    );
    assert_eq!((d_x, d_y), (c, -s));
    let (_, tangent) = turned_x_jvp(angle, x, y, 1.0, 0.0, 0.0);
    common::assert_close(tangent, d_angle, 1e-14, "jvp");
    let (_, _, _, _, hv_angle, _, _) = turned_x_hvp(angle, x, y, 1.0, 0.0, 0.0);
    let expected = 4.0 * (-c * x + s * y - 4.0 * s * c);
    common::assert_close(hv_angle, expected, 1e-13, "hvp");
}

/// A tuple kept in a local, read by position, updated, destructured later, with a nested
/// array and a shared sub-expression.
#[grad(jvp, hvp)]
fn kept(x: f64, y: f64) -> f64 {
    let s = x * y;
    let mut t = (s.sin(), [s, x + y], 2usize);
    t.0 += x * t.1[1];
    let (a, b, n) = t;
    let u = (a * b[0], b[1]);
    let mut w = u;
    w.1 += 0.0;
    a + u.0 * w.1 + b[0] * n as f64
}

#[test]
fn tuples_kept_in_locals() {
    let (x, y) = (0.7, -1.2);
    let (value, dx, dy) = kept_grad(x, y);
    assert_eq!(value, kept(x, y));
    // By hand: s = xy, a = sin s + x(x + y), b = [s, x + y].
    let s = x * y;
    let a = s.sin() + x * (x + y);
    let (da_dx, da_dy) = (s.cos() * y + 2.0 * x + y, s.cos() * x + x);
    // value = a + a·s·(x + y) + 2s.
    let f = |da: f64, ds: f64, dsum: f64| {
        da + da * s * (x + y) + a * ds * (x + y) + a * s * dsum + 2.0 * ds
    };
    common::assert_close(value, a + a * s * (x + y) + 2.0 * s, 1e-14, "value");
    common::assert_close(dx, f(da_dx, y, 1.0), 1e-13, "∂/∂x");
    common::assert_close(dy, f(da_dy, x, 1.0), 1e-13, "∂/∂y");
    autodiff::assert_gradient!(|&(x, y)| kept(x, y), |&(x, y)| kept_grad(x, y), &(x, y));
    let (_, tangent) = kept_jvp(x, y, 0.5, 2.0);
    common::assert_close(tangent, 0.5 * dx + 2.0 * dy, 1e-13, "jvp");
    let (_, gx, gy, _, _) = kept_hvp(x, y, 1.0, 0.0);
    assert_eq!((gx, gy), (dx, dy));
}
