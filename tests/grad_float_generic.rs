//! `#[grad]` on functions generic over their float type: `T: num_traits::Float` (or the
//! crate's own `Real`), one body for `f64` and `f32`.
//!
//! Each function is checked in both types: in `f64` bit for bit against the same body
//! written for `f64` (the macro differentiates the same code), against closed forms,
//! central differences and the `Tape` engine; in `f32` against the `f64` gradient to `f32`
//! precision.

mod common;

use autodiff::prelude::*;
use common::{assert_all_close, assert_close, fd_gradient};
use num_traits::{Float, FloatConst};
use std::iter::Sum;

/// Rosenbrock: constants through `T::one()` and `T::from(100.0).unwrap()`.
#[grad(jvp, hvp, hessian)]
fn rosenbrock<T: Float>(x: T, y: T) -> T {
    let a = T::one() - x;
    let b = y - x * x;
    a * a + T::from(100.0).unwrap() * b * b
}

/// The same body, written for `f64`.
#[grad(jvp, hvp, hessian)]
fn rosenbrock_f64(x: f64, y: f64) -> f64 {
    let a = 1.0 - x;
    let b = y - x * x;
    a * a + 100.0 * b * b
}

/// A slice of run-time length, a loop, a shared sub-expression (`e`), a variable reused
/// after reassignment (`s`) and a conversion of a length (`T::from(n)`).
#[grad(wrt(w))]
fn mse<T: Float>(w: &[T], xs: &[[T; 2]], ys: &[T]) -> T {
    let mut s = T::zero();
    for (x, &y) in xs.iter().zip(ys) {
        let e = (w[0] * x[0] + w[1] * x[1] + w[2]).tanh() - y;
        s = s + e * e + T::from(0.1).unwrap() * e.abs().sqrt();
    }
    s = s / T::from(xs.len()).unwrap();
    s * s + s
}

/// Const generics beside the float type, `Sum`, `FloatConst`, `<T as Float>::sqrt`,
/// `T::epsilon()`, and `where`.
#[grad(jvp, hvp)]
fn energy<T, const N: usize>(q: [T; N], k: &[T; N]) -> T
where
    T: Float + FloatConst + Sum,
{
    let kinetic = q.iter().zip(k).map(|(&a, &b)| a * a * b).sum::<T>();
    let potential = <T as Float>::sqrt(q[0] * q[0] + T::epsilon()) * T::PI();
    kinetic * T::from(0.5).unwrap() + potential.sin()
}

/// A generic caller of generic callees (one by turbofish), and integers among numbers.
#[grad(jvp, hvp)]
fn caller<T: Float + FloatConst + Sum>(x: T, y: T, n: usize) -> T {
    let q = [x, y];
    let k = [y, T::from(n).unwrap()];
    energy::<T, 2>(q, &k) + rosenbrock(x * y, x) / T::from(n * n).unwrap()
}

/// A function of `f64` calling the generic one.
#[grad]
fn concrete(x: f64, y: f64) -> f64 {
    rosenbrock(x.sin(), y) * x
}

/// The crate's own `Real`: `T::HALF`, `T::from_i32(..)`, `T::LN_2`.
mod own_real {
    use autodiff::prelude::*;
    use autodiff::Real;

    #[grad]
    pub fn real_bound<T: Real>(x: T, y: T) -> T {
        let z = x * y;
        let flag = T::from_bool(x > y);
        z * z * T::HALF + T::from_i32(3) * x.exp() - z.ln_1p() * T::LN_2 + flag * x
    }
}
use own_real::{real_bound, real_bound_grad};

/// Residuals of an exponential model: a vector output and its Jacobian.
#[grad(jacobian, wrt(p))]
fn residuals<T: Float>(p: [T; 2], t: &[T], y: &[T]) -> Vec<T> {
    t.iter()
        .zip(y)
        .map(|(&t, &y)| p[0] * (p[1] * t).exp() - y)
        .collect()
}

/// Conversions of constants computed as the original computes them (`2.0 * PI` in `f64`,
/// then cast; `0.1` rounded once), of variables (`n as f64 * 0.5`), of a const generic
/// parameter, and a method called through its trait (`Float::sqrt`).
#[grad]
fn conversions<T: Float, const N: usize>(x: T, w: [T; N], n: usize) -> T {
    let k = T::from(n as f64 * 0.5).unwrap();
    let scale = T::from(2.0 * PI * SCALE).unwrap() / T::from(N).unwrap();
    let mut total = T::from(0.1).unwrap() * x + Float::sqrt(x) * scale;
    for &wi in &w {
        total = total + wi * x.powf(k) * T::from(1.000_000_059_604_644_8).unwrap();
    }
    total
}

/// Local vectors written generically: `vec![T::zero(); n]` and `Vec<T>` filled by `push`.
#[grad]
fn weighted_squares<T: Float>(xs: &[T]) -> T {
    let n = xs.len();
    let mut squares = vec![T::zero(); n];
    let mut weights: Vec<T> = Vec::new();
    for i in 0..n {
        squares[i] = xs[i] * xs[i];
        weights.push(xs[i].sin());
    }
    let mut total = T::zero();
    for i in 0..n {
        total = total + squares[i] * weights[i];
    }
    total
}

/// Two outputs, unpacked by a caller whose arguments convert constants (the random
/// programs found `T::from(-0.5)` in such a call defined twice in the generated code).
#[grad(hvp)]
fn polar<T: Float>(x: T, y: T) -> (T, T) {
    ((x * x + y * y).sqrt(), y.atan2(x))
}

#[grad(hvp)]
fn through_polar<T: Float>(x: T) -> T {
    let (r, t) = polar(
        x.clamp(T::from(-0.5).unwrap(), T::from(0.75).unwrap()),
        T::from(0.1).unwrap() + x,
    );
    r * t
}

const SCALE: f64 = 1.5;
use std::f64::consts::PI;

/// Written in place through `&mut` (no `-=` in `Float`), stepped by a generic caller.
#[grad(jacobian, hvp)]
fn step<T: Float>(y: &mut [T; 2], dt: T) {
    let a = y[0];
    y[0] = a + dt * y[1];
    y[1] = y[1] - dt * a;
}

#[grad(hvp)]
fn orbit<T: Float>(y0: [T; 2], dt: T, steps: usize) -> T {
    let mut y = y0;
    for _ in 0..steps {
        step(&mut y, dt);
    }
    y[0] * y[1]
}

const XS: [[f64; 2]; 4] = [[1.0, 2.0], [0.5, -1.0], [-0.3, 0.8], [1.5, 0.2]];
const YS: [f64; 4] = [0.3, -0.2, 0.5, 0.9];

fn xs32() -> Vec<[f32; 2]> {
    XS.iter().map(|r| r.map(|x| x as f32)).collect()
}

fn ys32() -> Vec<f32> {
    YS.iter().map(|&y| y as f32).collect()
}

#[test]
fn the_f64_twin_is_the_function_written_for_f64() {
    for (x, y) in [(1.5, 0.5), (-0.3, 0.8), (1.0, 1.0)] {
        assert_eq!(rosenbrock_grad(x, y), rosenbrock_f64_grad(x, y));
        assert_eq!(
            rosenbrock_jvp(x, y, 0.3, -0.7),
            rosenbrock_f64_jvp(x, y, 0.3, -0.7)
        );
        assert_eq!(
            rosenbrock_hvp(x, y, 0.3, -0.7),
            rosenbrock_f64_hvp(x, y, 0.3, -0.7)
        );
        assert_eq!(rosenbrock_hessian(x, y), rosenbrock_f64_hessian(x, y));
        // Closed forms.
        let (value, dx, dy) = rosenbrock_grad(x, y);
        assert_eq!(value, rosenbrock(x, y));
        assert_close(dx, -2.0 * (1.0 - x) - 400.0 * x * (y - x * x), 1e-12, "dx");
        assert_close(dy, 200.0 * (y - x * x), 1e-12, "dy");
        let (_, _, _, h) = rosenbrock_hessian(x, y);
        assert_close(h[0][0], 2.0 - 400.0 * y + 1200.0 * x * x, 1e-12, "hxx");
        assert_close(h[0][1], -400.0 * x, 1e-12, "hxy");
        assert_close(h[1][1], 200.0, 1e-12, "hyy");
    }
}

#[test]
fn f32_computes_in_f32() {
    let (x, y) = (1.5f32, 0.5f32);
    let (value, dx, dy) = rosenbrock_grad(x, y);
    // The value is the generic function's own, in `f32`, bit for bit.
    assert_eq!(value, rosenbrock(x, y));
    let (_, dx64, dy64) = rosenbrock_grad(f64::from(x), f64::from(y));
    assert_close(f64::from(dx), dx64, 1e-6, "f32 dx");
    assert_close(f64::from(dy), dy64, 1e-6, "f32 dy");
    let (_, tangent) = rosenbrock_jvp(x, y, 1.0, 0.0);
    assert_eq!(tangent, dx);
    let (_, _, _, hx, hy) = rosenbrock_hvp(x, y, 1.0, 0.0);
    let (_, _, _, h) = rosenbrock_hessian(f64::from(x), f64::from(y));
    assert_close(f64::from(hx), h[0][0], 1e-6, "f32 hvp x");
    assert_close(f64::from(hy), h[1][0], 1e-6, "f32 hvp y");
    // `_hessian` in `f32` too, against the `f64` one; its gradient is `_grad`'s.
    let (value32, dx32, dy32, h32) = rosenbrock_hessian(x, y);
    assert_eq!((value32, dx32, dy32), (value, dx, dy));
    for i in 0..2 {
        for j in 0..2 {
            assert_close(f64::from(h32[i][j]), h[i][j], 1e-6, "f32 hessian");
        }
    }
}

#[test]
fn slices_and_loops_against_differences_and_the_tape() {
    let w = [0.2, -0.4, 0.1];
    let (value, dw) = mse_grad(&w, &XS, &YS);
    assert_eq!(value, mse(&w, &XS, &YS));
    let fd = fd_gradient(|w| mse(w, &XS, &YS), &w);
    assert_all_close(&dw, &fd, 1e-7, "mse");

    // The same loss recorded on a tape.
    let tape = Tape::new();
    let wv: Vec<Var> = w.iter().map(|&x| tape.var(x)).collect();
    let mut s = tape.var(0.0);
    for (x, &y) in XS.iter().zip(&YS) {
        let e = (wv[0] * x[0] + wv[1] * x[1] + wv[2]).tanh() - y;
        s += e * e + 0.1 * e.abs().sqrt();
    }
    s /= XS.len() as f64;
    let loss = s * s + s;
    assert_close(loss.value(), value, 1e-15, "tape value");
    let gradient = loss.gradient();
    let taped: Vec<f64> = wv.iter().map(|&v| gradient.wrt(v)).collect();
    assert_all_close(&dw, &taped, 1e-13, "tape");

    let w32 = w.map(|x| x as f32);
    let (value32, dw32) = mse_grad(&w32, &xs32(), &ys32());
    assert_eq!(value32, mse(&w32, &xs32(), &ys32()));
    let dw32: Vec<f64> = dw32.into_iter().map(f64::from).collect();
    assert_all_close(&dw32, &dw, 1e-5, "mse f32");
}

#[test]
fn const_generics_calls_and_second_order() {
    let (q, k) = ([0.7, -1.2, 0.4], [1.5, 0.5, 2.0]);
    let (value, dq, dk) = energy_grad(q, &k);
    assert_eq!(value, energy(q, &k));
    let flat: Vec<f64> = q.iter().chain(&k).copied().collect();
    let f = |p: &[f64]| energy([p[0], p[1], p[2]], &[p[3], p[4], p[5]]);
    let fd = fd_gradient(f, &flat);
    let ours: Vec<f64> = dq.iter().chain(&dk).copied().collect();
    assert_all_close(&ours, &fd, 1e-7, "energy");
    // Forward mode along the first coordinate is the first partial.
    let (_, tangent) = energy_jvp(q, &k, [1.0, 0.0, 0.0], &[0.0; 3]);
    assert_close(tangent, dq[0], 1e-14, "energy jvp");
    // A Hessian-vector product against differences of the gradient.
    let v = ([0.3, -0.5, 0.2], [0.1, 0.4, -0.6]);
    let (_, _, _, hq, hk) = energy_hvp(q, &k, v.0, &v.1);
    let h = 1e-6;
    let shifted = |s: f64| {
        let q: [f64; 3] = std::array::from_fn(|i| q[i] + s * v.0[i]);
        let k: [f64; 3] = std::array::from_fn(|i| k[i] + s * v.1[i]);
        let (_, dq, dk) = energy_grad(q, &k);
        [dq, dk].concat()
    };
    let (up, down) = (shifted(h), shifted(-h));
    let slope: Vec<f64> = up
        .iter()
        .zip(&down)
        .map(|(a, b)| (a - b) / (2.0 * h))
        .collect();
    assert_all_close(&[hq, hk].concat(), &slope, 1e-6, "energy hvp");

    // The generic caller, in both types, against differences.
    let (x, y, n) = (0.6, 1.1, 3);
    let (value, dx, dy) = caller_grad(x, y, n);
    assert_eq!(value, caller(x, y, n));
    let fd = fd_gradient(|p| caller(p[0], p[1], n), &[x, y]);
    assert_all_close(&[dx, dy], &fd, 1e-7, "caller");
    let (value32, dx32, dy32) = caller_grad(x as f32, y as f32, n);
    assert_close(f64::from(value32), value, 1e-6, "caller f32 value");
    assert_all_close(
        &[f64::from(dx32), f64::from(dy32)],
        &[dx, dy],
        1e-5,
        "caller f32",
    );
    let (_, tangent) = caller_jvp(x, y, n, 0.5, -1.0);
    assert_close(tangent, 0.5 * dx - dy, 1e-13, "caller jvp");
    let (_, _, _, hx, hy) = caller_hvp(x, y, n, 1.0, 0.0);
    let fd_hx = (caller_grad(x + h, y, n).1 - caller_grad(x - h, y, n).1) / (2.0 * h);
    let fd_hy = (caller_grad(x + h, y, n).2 - caller_grad(x - h, y, n).2) / (2.0 * h);
    assert_close(hx, fd_hx, 1e-6, "caller hvp x");
    assert_close(hy, fd_hy, 1e-6, "caller hvp y");

    // A function of `f64` calling the generic one.
    let (value, dx, dy) = concrete_grad(x, y);
    assert_eq!(value, concrete(x, y));
    let fd = fd_gradient(|p| concrete(p[0], p[1]), &[x, y]);
    assert_all_close(&[dx, dy], &fd, 1e-7, "concrete");
}

#[test]
fn the_crate_s_own_real() {
    let (x, y) = (0.4, 1.3);
    let (value, dx, dy) = real_bound_grad(x, y);
    assert_eq!(value, real_bound(x, y));
    let z = x * y;
    let ln2 = std::f64::consts::LN_2;
    // `x > y` is false here, so the flag adds nothing.
    assert_close(dx, z * y + 3.0 * x.exp() - y / (1.0 + z) * ln2, 1e-14, "dx");
    let (_, dx_flagged, _) = real_bound_grad(y, x);
    let z = y * x;
    assert_close(
        dx_flagged,
        z * x + 3.0 * y.exp() - x / (1.0 + z) * ln2 + 1.0,
        1e-14,
        "flag",
    );
    assert_close(dy, z * x - x / (1.0 + z) * ln2, 1e-14, "dy");
    let (value32, dx32, _) = real_bound_grad(x as f32, y as f32);
    assert_eq!(value32, real_bound(x as f32, y as f32));
    assert_close(f64::from(dx32), dx, 1e-5, "dx f32");
}

#[test]
fn jacobians_of_vector_outputs() {
    let (t, y) = ([0.0, 0.5, 1.0, 2.0], [1.0, 1.4, 2.1, 4.0]);
    let p = [1.1f64, 0.6];
    let (value, jacobian) = residuals_jacobian(p, &t, &y);
    assert_eq!(value, residuals(p, &t, &y));
    for (row, &ti) in t.iter().enumerate() {
        let e = (p[1] * ti).exp();
        assert_close(jacobian[row][0], e, 1e-14, "∂r/∂p0");
        assert_close(jacobian[row][1], p[0] * ti * e, 1e-14, "∂r/∂p1");
    }
    let (t32, y32) = (t.map(|x| x as f32), y.map(|x| x as f32));
    let (value32, jacobian32) = residuals_jacobian(p.map(|x| x as f32), &t32, &y32);
    assert_eq!(value32, residuals(p.map(|x| x as f32), &t32, &y32));
    for row in 0..t.len() {
        for col in 0..2 {
            let expected = jacobian[row][col];
            assert_close(f64::from(jacobian32[row][col]), expected, 1e-5, "J f32");
        }
    }
}

#[test]
fn conversions_are_those_of_the_original() {
    let w = [0.3, -0.7, 1.1];
    for (x, n) in [(0.8f64, 3), (1.7, 4)] {
        let (value, dx, dw) = conversions_grad(x, w, n);
        // The same constants, rounded the same way: the same value, bit for bit.
        assert_eq!(value.to_bits(), conversions(x, w, n).to_bits());
        let w32 = w.map(|v| v as f32);
        let (value32, dx32, _) = conversions_grad(x as f32, w32, n);
        assert_eq!(value32.to_bits(), conversions(x as f32, w32, n).to_bits());
        let flat = [x, w[0], w[1], w[2]];
        let fd = fd_gradient(|p| conversions(p[0], [p[1], p[2], p[3]], n), &flat);
        let ours = [dx, dw[0], dw[1], dw[2]];
        assert_all_close(&ours, &fd, 1e-7, "conversions");
        assert_close(f64::from(dx32), dx, 1e-5, "conversions f32");
    }
}

#[test]
fn written_in_place_and_stepped() {
    let (y0, dt) = ([1.0, 0.5], 0.1);
    let (value, dy0, ddt) = orbit_grad(y0, dt, 3);
    assert_eq!(value, orbit(y0, dt, 3));
    let fd = fd_gradient(|p| orbit([p[0], p[1]], p[2], 3), &[y0[0], y0[1], dt]);
    assert_all_close(&[dy0[0], dy0[1], ddt], &fd, 1e-8, "orbit");
    let (_, jacobian_y, jacobian_dt) = step_jacobian(&mut [1.0f32, 0.5], 0.1);
    assert_eq!(jacobian_y, [[1.0, 0.1], [-0.1, 1.0]]);
    assert_eq!(jacobian_dt, [0.5, -1.0]);
    let (_, _, _, hy, hdt) = orbit_hvp(y0, dt, 3, [0.0, 0.0], 1.0);
    let g = |h: f64| {
        let (_, dy, ddt) = orbit_grad(y0, dt + h, 3);
        vec![dy[0], dy[1], ddt]
    };
    assert_all_close(
        &[hy[0], hy[1], hdt],
        &common::slope(g, 1e-5),
        1e-6,
        "orbit hvp",
    );
}

#[test]
fn local_vectors() {
    let xs = [0.5f64, 1.0, -0.7];
    let (value, dxs) = weighted_squares_grad(&xs);
    assert_eq!(value, weighted_squares(&xs));
    let closed: Vec<f64> = xs
        .iter()
        .map(|&x| 2.0 * x * x.sin() + x * x * x.cos())
        .collect();
    assert_all_close(&dxs, &closed, 1e-14, "weighted_squares");
    let xs32 = xs.map(|x| x as f32);
    let (value32, dxs32) = weighted_squares_grad(&xs32);
    assert_eq!(value32, weighted_squares(&xs32));
    let dxs32: Vec<f64> = dxs32.into_iter().map(f64::from).collect();
    assert_all_close(&dxs32, &closed, 1e-6, "weighted_squares f32");
}

#[test]
fn conversions_in_the_arguments_of_a_tuple_call() {
    for x in [0.3f64, -0.2] {
        let (value, dx) = through_polar_grad(x);
        assert_eq!(value, through_polar(x));
        let fd = fd_gradient(|p| through_polar(p[0]), &[x]);
        assert_all_close(&[dx], &fd, 1e-8, "through_polar");
        let (value32, dx32) = through_polar_grad(x as f32);
        assert_eq!(value32, through_polar(x as f32));
        assert_close(f64::from(dx32), dx, 1e-5, "through_polar f32");
        let (_, _, hx) = through_polar_hvp(x, 1.0);
        let g = |h: f64| vec![through_polar_grad(x + h).1];
        assert_all_close(&[hx], &common::slope(g, 1e-5), 1e-6, "through_polar hvp");
    }
}
