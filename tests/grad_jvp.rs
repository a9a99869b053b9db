//! Forward mode, `#[grad(jvp)]`: `f_jvp(p…, t_p…) -> (value, tangent)`. Each function is
//! checked three ways at several points and directions: the value equals the original's
//! bit for bit, the tangent equals the gradient's dot product with the direction (the
//! reverse sweep, `_grad` or `_vjp`), and it matches a central finite difference along the
//! direction.
#![allow(clippy::needless_range_loop)] // the loops are written the way users write them

use autodiff::prelude::*;

mod common;
use common::assert_close;

/// The derivative of `f` at `x` along `t` by a central difference.
fn fd_along(f: impl Fn(&[f64]) -> f64, x: &[f64], t: &[f64]) -> f64 {
    let h = 1e-6;
    let at = |s: f64| -> Vec<f64> { x.iter().zip(t).map(|(x, t)| x + s * t).collect() };
    (f(&at(h)) - f(&at(-h))) / (2.0 * h)
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(a, b)| a * b).sum()
}

/// Directions to try: each axis, and a mixed one.
fn directions(n: usize) -> Vec<Vec<f64>> {
    let mut out: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| f64::from(u8::from(i == j))).collect())
        .collect();
    out.push((0..n).map(|j| 0.5 - 0.3 * j as f64).collect());
    out
}

/// Checks a tangent against the gradient's dot product and a central difference.
#[track_caller]
fn check(tangent: f64, gradient: &[f64], f: impl Fn(&[f64]) -> f64, x: &[f64], t: &[f64]) {
    assert_close(
        tangent,
        dot(gradient, t),
        1e-12,
        "tangent against the reverse sweep",
    );
    assert_close(
        tangent,
        fd_along(f, x, t),
        1e-6,
        "tangent against finite differences",
    );
}

// ----- scalars: shared sub-expressions, reused variables, every operation ----------------

#[grad(jvp)]
fn shared(x: f64, y: f64) -> f64 {
    let s = x * y;
    let mut acc = s.tanh() + s * x;
    acc *= acc;
    acc -= y;
    acc / y.exp() + s
}

#[test]
fn shared_sub_expressions_and_reused_variables() {
    for point in [[0.3, 0.7], [-1.2, 0.4], [2.0, -0.5]] {
        let (value, dx, dy) = shared_grad(point[0], point[1]);
        for t in directions(2) {
            let (v, tangent) = shared_jvp(point[0], point[1], t[0], t[1]);
            assert_eq!(v.to_bits(), shared(point[0], point[1]).to_bits());
            assert_eq!(v.to_bits(), value.to_bits());
            check(tangent, &[dx, dy], |p| shared(p[0], p[1]), &point, &t);
        }
    }
}

#[grad(jvp)]
fn every_operation(x: f64, y: f64, z: f64) -> f64 {
    let a = x + y - z * x / y;
    let b = -a + x.recip() + x.powi(3) + x.powf(y) + x.powf(2.0) + 2.0f64.powf(y);
    let c = x.sqrt() + x.cbrt() + y.exp() + y.exp2() + y.exp_m1();
    let d = x.ln() + x.ln_1p() + x.log2() + x.log10() + x.log(y + 2.0);
    let e = z.sin() + z.cos() + z.tan() + (z * 0.5).asin() + (z * 0.5).acos() + z.atan();
    let f = y.atan2(x) + z.sinh() + z.cosh() + z.tanh() + z.asinh() + (x + 1.5).acosh();
    let g = (z * 0.5).atanh() + z.abs() + z.relu() + z.sigmoid() + x.max(y) + x.min(y);
    let h = x.hypot(z) + x.mul_add(y, z) + z.clamp(-0.5, 0.5) + y.clamp(x, 2.0 * x);
    let i = z.to_degrees() * 0.01 + z.to_radians() + x.floor() + y.ceil() + z.round();
    let j = z.trunc() + y.signum() + x.clamp(z, y);
    a * b + c - d * e + f * g + h + i * j
}

#[test]
fn every_operation_of_the_table() {
    // Away from kinks: the comparisons and roundings keep their outcome within the
    // finite-difference step.
    for point in [[0.7, 1.3, 0.4], [1.6, 0.9, -0.3], [0.45, 1.1, 0.15]] {
        let (value, dx, dy, dz) = every_operation_grad(point[0], point[1], point[2]);
        for t in directions(3) {
            let (v, tangent) = every_operation_jvp(point[0], point[1], point[2], t[0], t[1], t[2]);
            assert_eq!(v.to_bits(), value.to_bits());
            check(
                tangent,
                &[dx, dy, dz],
                |p| every_operation(p[0], p[1], p[2]),
                &point,
                &t,
            );
        }
    }
}

#[grad(jvp, wrt(y))]
fn only_y(x: f64, y: f64, n: i32, on: bool) -> f64 {
    let base = if on { x * y } else { x + y };
    base.powi(n) + stop_gradient(y) * x
}

#[test]
fn wrt_integers_bools_and_stop_gradient() {
    let (x, y) = (0.8, 1.3);
    for on in [true, false] {
        let (value, dy) = only_y_grad(x, y, 3, on);
        let (v, tangent) = only_y_jvp(x, y, 3, on, 1.0);
        assert_eq!(v.to_bits(), value.to_bits());
        assert_close(tangent, dy, 1e-14, "wrt(y) against the reverse sweep");
        // stop_gradient(y) * x contributes nothing: the closed form of the rest.
        let (base, dbase) = if on { (x * y, x) } else { (x + y, 1.0) };
        assert_close(
            tangent,
            3.0 * base * base * dbase,
            1e-14,
            "wrt(y), closed form",
        );
    }
}

// ----- arrays, loops, control flow ------------------------------------------------------

#[grad(jvp)]
fn arrays(w: [f64; 3], m: &[[f64; 2]; 3], x: f64) -> f64 {
    let mut hidden = [0.0; 3];
    for j in 0..3 {
        hidden[j] = (w[j] * x + m[j][0] - m[j][1] * w[j]).tanh();
    }
    let mut out = 0.0;
    for h in hidden {
        out += h * h;
    }
    out * x
}

#[test]
fn arrays_and_constant_loops() {
    let w = [0.3, -0.8, 1.1];
    let m = [[0.2, 0.5], [-0.4, 0.9], [0.7, -0.1]];
    let x = 0.6;
    let (value, dw, dm, dx) = arrays_grad(w, &m, x);
    let flat = |p: &[f64]| {
        arrays(
            [p[0], p[1], p[2]],
            &[[p[3], p[4]], [p[5], p[6]], [p[7], p[8]]],
            p[9],
        )
    };
    let point = [
        w[0], w[1], w[2], m[0][0], m[0][1], m[1][0], m[1][1], m[2][0], m[2][1], x,
    ];
    let gradient = [
        dw[0], dw[1], dw[2], dm[0][0], dm[0][1], dm[1][0], dm[1][1], dm[2][0], dm[2][1], dx,
    ];
    for t in directions(10) {
        let tw = [t[0], t[1], t[2]];
        let tm = [[t[3], t[4]], [t[5], t[6]], [t[7], t[8]]];
        let (v, tangent) = arrays_jvp(w, &m, x, tw, &tm, t[9]);
        assert_eq!(v.to_bits(), value.to_bits());
        check(tangent, &gradient, flat, &point, &t);
    }
}

#[grad(jvp)]
fn control(x: f64, y: f64, limit: usize) -> f64 {
    let mut acc = x;
    let mut k = 0;
    while k < limit {
        if acc > 3.0 {
            break;
        }
        acc = acc * 1.5 + y.sin();
        k += 1;
    }
    let scaled = match k {
        0 => acc,
        1 | 2 => acc * y,
        _ => acc / y,
    };
    if scaled < 0.0 {
        return -scaled * x;
    }
    let mut total = 0.0;
    loop {
        total += scaled;
        if total > 2.0 * scaled.abs() {
            break total + y;
        }
    }
}

#[test]
fn while_break_match_early_return_and_loop_with_a_value() {
    for (x, y, limit) in [(0.4, 0.9, 5), (0.4, 0.9, 1), (-2.0, 0.7, 3), (1.0, -0.6, 0)] {
        let (value, dx, dy) = control_grad(x, y, limit);
        for t in directions(2) {
            let (v, tangent) = control_jvp(x, y, limit, t[0], t[1]);
            assert_eq!(v.to_bits(), value.to_bits());
            check(
                tangent,
                &[dx, dy],
                |p| control(p[0], p[1], limit),
                &[x, y],
                &t,
            );
        }
    }
}

// ----- slices, iterators, closures, vectors ---------------------------------------------

#[grad(jvp)]
fn mse(w: &[f64], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
    xs.iter()
        .zip(ys)
        .map(|(x, y)| (w[0] * x[0] + w[1] * x[1] + w[2] - y).powi(2))
        .sum::<f64>()
        / xs.len() as f64
}

#[grad(jvp, wrt(w))]
fn features(w: &[f64], xs: &[f64]) -> f64 {
    let mut squares = Vec::new();
    for (i, x) in xs.iter().enumerate() {
        squares.push((w[i % w.len()] * x).sin());
    }
    let mut total = 0.0;
    for pair in squares.windows(2) {
        total += pair[0] * pair[1];
    }
    total + squares.iter().map(|s| s * s).sum::<f64>()
}

/// A vector made with a capacity and filled by `push` (found by the random programs: its
/// tangents were pushed after as many zeros as the capacity).
#[grad(jvp)]
fn pushed(x: f64, y: f64) -> f64 {
    let mut v = Vec::with_capacity(4);
    for i in 0..3 {
        v.push((x / y.hypot(1.0)).to_radians() * i as f64);
    }
    v[1] * v[2] + v[0]
}

#[test]
fn slices_iterators_and_vectors() {
    let (value, dx, dy) = pushed_grad(0.7, -1.2);
    for t in directions(2) {
        let (v, tangent) = pushed_jvp(0.7, -1.2, t[0], t[1]);
        assert_eq!(v.to_bits(), value.to_bits());
        check(tangent, &[dx, dy], |p| pushed(p[0], p[1]), &[0.7, -1.2], &t);
    }

    let w = vec![0.3, -0.2, 0.5];
    let xs = [[1.0, 2.0], [0.5, -1.0], [-0.3, 0.8]];
    let ys = [1.0, 0.0, -0.5];
    let (value, dw, dxs, dys) = mse_grad(&w, &xs, &ys);
    let mut gradient = dw.clone();
    gradient.extend(dxs.iter().flatten());
    gradient.extend(&dys);
    let mut point = w.clone();
    point.extend(xs.iter().flatten());
    point.extend(ys);
    let flat = |p: &[f64]| {
        let rows: Vec<[f64; 2]> = p[3..9].chunks(2).map(|c| [c[0], c[1]]).collect();
        mse(&p[..3], &rows, &p[9..])
    };
    for t in directions(12) {
        let rows: Vec<[f64; 2]> = t[3..9].chunks(2).map(|c| [c[0], c[1]]).collect();
        let (v, tangent) = mse_jvp(&w, &xs, &ys, &t[..3], &rows, &t[9..]);
        assert_eq!(v.to_bits(), value.to_bits());
        check(tangent, &gradient, flat, &point, &t);
    }

    let xs = [0.4, -1.1, 0.7, 1.9, -0.2];
    let (value, dw) = features_grad(&w, &xs);
    for t in directions(3) {
        let (v, tangent) = features_jvp(&w, &xs, &t);
        assert_eq!(v.to_bits(), value.to_bits());
        check(tangent, &dw, |p| features(p, &xs), &w, &t);
    }
}

// ----- calls, structs and methods, tuples, f32 ------------------------------------------

#[grad(jvp)]
fn square_plus(a: f64, b: f64) -> f64 {
    a * a + b
}

#[grad(jvp)]
fn dot3(u: &[f64; 3], v: [f64; 3]) -> f64 {
    u[0] * v[0] + u[1] * v[1] + u[2] * v[2]
}

#[grad(jvp)]
fn caller(w: [f64; 3], x: f64) -> f64 {
    let s = square_plus(x, w[0]);
    let v = [x, s, 1.0];
    let d = dot3(&w, v);
    let c = [1.0, 2.0, 3.0];
    square_plus(d, s) * dot3(&c, w)
}

#[test]
fn calls_to_annotated_functions_go_through_their_jvp() {
    let w = [0.4, -0.7, 1.2];
    let x = 0.9;
    let (value, dw, dx) = caller_grad(w, x);
    let gradient = [dw[0], dw[1], dw[2], dx];
    let point = [w[0], w[1], w[2], x];
    for t in directions(4) {
        let (v, tangent) = caller_jvp(w, x, [t[0], t[1], t[2]], t[3]);
        assert_eq!(v.to_bits(), value.to_bits());
        check(
            tangent,
            &gradient,
            |p| caller([p[0], p[1], p[2]], p[3]),
            &point,
            &t,
        );
    }
}

#[derive(Differentiable, Clone, Debug)]
pub struct Spring {
    pub k: f64,
    pub rest: [f64; 2],
    pub steps: usize,
}

#[grad]
impl Spring {
    #[grad(jvp)]
    fn energy(&self, x: f64) -> f64 {
        let mut e = 0.0;
        for i in 0..self.steps {
            let stretch = x * (i as f64 + 1.0) - self.rest[i % 2];
            e += 0.5 * self.k * stretch * stretch;
        }
        e
    }

    #[grad(jvp)]
    fn doubled(&self, x: f64) -> f64 {
        2.0 * self.energy(x) + self.k
    }
}

#[test]
fn methods_take_self_tangent_first() {
    let s = Spring {
        k: 3.0,
        rest: [0.2, -0.4],
        steps: 3,
    };
    let x = 0.7;
    let (value, ds, dx) = s.doubled_grad(x);
    let gradient = [ds.k, ds.rest[0], ds.rest[1], dx];
    let point = [s.k, s.rest[0], s.rest[1], x];
    let at = |p: &[f64]| Spring {
        k: p[0],
        rest: [p[1], p[2]],
        steps: 3,
    };
    for t in directions(4) {
        let (v, tangent) = s.doubled_jvp(x, &at(&t[..3]), t[3]);
        assert_eq!(v.to_bits(), value.to_bits());
        check(tangent, &gradient, |p| at(p).doubled(p[3]), &point, &t);
    }
}

#[grad(jvp)]
fn polar(r: f64, theta: f64) -> (f64, f64) {
    (r * theta.cos(), r * theta.sin())
}

#[test]
fn tuple_outputs_have_tuple_tangents() {
    let (r, theta) = (1.5, 0.6);
    let ((x, y), (tx, ty)) = polar_jvp(r, theta, 0.25, -0.5);
    assert_eq!((x, y), polar(r, theta));
    assert_close(
        tx,
        0.25 * theta.cos() + 0.5 * r * theta.sin(),
        1e-14,
        "x tangent",
    );
    assert_close(
        ty,
        0.25 * theta.sin() - 0.5 * r * theta.cos(),
        1e-14,
        "y tangent",
    );
}

/// `shared` on a `Tape`.
fn shared_on_tape<'t>(x: Var<'t>, y: Var<'t>) -> Var<'t> {
    let s = x * y;
    let mut acc = s.tanh() + s * x;
    acc *= acc;
    acc -= y;
    acc / y.exp() + s
}

#[test]
fn the_tape_agrees_in_forward_mode_and_in_its_jacobian() {
    for point in [[0.3, 0.7], [-1.2, 0.4]] {
        let tape = Tape::new();
        let (x, y) = (tape.var(point[0]), tape.var(point[1]));
        let out = shared_on_tape(x, y);
        for t in directions(2) {
            let (value, tangent) = shared_jvp(point[0], point[1], t[0], t[1]);
            assert_eq!(value, out.value());
            assert_close(tape.jvp(out, &[x, y], &t), tangent, 1e-14, "Tape::jvp");
        }
        // A second output: the Jacobian's rows are the two gradients.
        let other = (x - y).sin() * x;
        let jacobian = tape.jacobian(&[out, other], &[x, y]);
        let (_, dx, dy) = shared_grad(point[0], point[1]);
        assert_close(jacobian[0][0], dx, 1e-14, "J[0][0]");
        assert_close(jacobian[0][1], dy, 1e-14, "J[0][1]");
        let (a, b) = (point[0], point[1]);
        assert_close(
            jacobian[1][0],
            (a - b).cos() * a + (a - b).sin(),
            1e-14,
            "J[1][0]",
        );
        assert_close(jacobian[1][1], -(a - b).cos() * a, 1e-14, "J[1][1]");
    }
}

#[grad(jvp)]
fn single(x: f32, w: [f32; 2]) -> f32 {
    (w[0] * x).tanh() + w[1] * x * x
}

#[test]
fn f32_functions() {
    let (x, w) = (0.5f32, [0.8f32, -0.3]);
    let (value, dx, dw) = single_grad(x, w);
    let (v, tangent) = single_jvp(x, w, 1.0, [0.5, -2.0]);
    assert_eq!(v.to_bits(), value.to_bits());
    let expected = dx + 0.5 * dw[0] - 2.0 * dw[1];
    assert!((tangent - expected).abs() <= 1e-6 * expected.abs().max(1.0));
}

/// A callee whose partials are infinite or `NaN` at points where its value is finite.
#[grad(jvp)]
fn edges(a: f64, b: f64, c: f64) -> f64 {
    a.sqrt() + b.cbrt() * 2.0 + c.hypot(b) + (c + 1.0).acosh() + a.powf(0.5) + c.atan2(b)
}

/// A caller that passes constants where the callee's partials are infinite.
#[grad(jvp)]
fn calls_edges(x: f64) -> f64 {
    edges(0.0, x * x, 0.25) + edges(x, 0.0, 0.0) * 0.5 + edges(x, x, x)
}

#[test]
fn constants_at_the_edge_of_a_callee_give_no_nan() {
    for x in [0.3, 0.7, 1.4] {
        let (value, tangent) = calls_edges_jvp(x, 1.0);
        assert_eq!(value, calls_edges(x));
        let (_, gradient) = calls_edges_grad(x);
        assert!(tangent.is_finite(), "x = {x}: tangent {tangent}");
        assert_close(tangent, gradient, 1e-12, "tangent against the gradient");
        let fd = fd_along(|p| calls_edges(p[0]), &[x], &[1.0]);
        assert_close(tangent, fd, 1e-6, "tangent against a central difference");
    }
}

#[test]
fn a_direction_with_zeros_does_not_move_an_edge() {
    // ∂/∂a of √a is infinite at a = 0; the direction leaves `a` where it is.
    let (value, tangent) = edges_jvp(0.0, 0.5, 0.2, 0.0, 1.0, -1.0);
    assert_eq!(value, edges(0.0, 0.5, 0.2));
    let fd = fd_along(|p| edges(0.0, p[0], p[1]), &[0.5, 0.2], &[1.0, -1.0]);
    assert_close(tangent, fd, 1e-6, "tangent along (0, 1, -1)");
    // Moving `a` from 0 is infinitely steep, as it should be.
    let (_, steep) = edges_jvp(0.0, 0.5, 0.2, 1.0, 0.0, 0.0);
    assert_eq!(steep, f64::INFINITY);
}
