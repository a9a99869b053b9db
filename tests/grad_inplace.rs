//! `&mut` parameters written in place: a function that returns nothing is differentiated
//! through the value its `&mut` parameter is left with; one that returns a value, through
//! that value. Derivatives are taken at the values on entry, and every generated function
//! writes through the parameter as the original does. Checked against closed forms,
//! central differences, the `Tape`, and the original's writes.
#![allow(clippy::needless_range_loop)] // the loops are written the way users write them

use autodiff::prelude::*;

mod common;
use common::assert_close;

/// One explicit Euler step of a pendulum, in place (an ODE stepper).
#[grad(jvp, jacobian, hvp)]
fn euler(y: &mut [f64; 2], dt: f64) {
    let a = -(y[0].sin());
    y[0] += dt * y[1];
    y[1] += dt * a;
}

#[test]
fn an_ode_step_in_place_has_the_jacobian_of_the_step() {
    let (y0, dt) = ([0.5, 1.0], 0.1);
    let mut y = y0;
    let (value, j_y, j_dt) = euler_jacobian(&mut y, dt);
    // The writes are the original's, and the value is what `y` is left with.
    let mut expected = y0;
    euler(&mut expected, dt);
    assert_eq!(y, expected);
    assert_eq!(value, expected);
    // The closed form, at the values on entry.
    let c = y0[0].cos();
    assert_eq!(j_y, [[1.0, dt], [-dt * c, 1.0]]);
    assert_close(j_dt[0], y0[1], 1e-15, "∂y0/∂dt");
    assert_close(j_dt[1], -y0[0].sin(), 1e-15, "∂y1/∂dt");
    let rows: Vec<Vec<f64>> = (0..2)
        .map(|i| vec![j_y[i][0], j_y[i][1], j_dt[i]])
        .collect();
    assert_jacobian!(
        |p: &[f64]| {
            let mut y = [p[0], p[1]];
            euler(&mut y, p[2]);
            y
        },
        &rows,
        &[y0[0], y0[1], dt]
    );
    // Forward mode along y₁, and the pullback with a seed on y₀: a column and a row.
    let mut y = y0;
    let (after, tangent) = euler_jvp(&mut y, dt, [0.0, 1.0], 0.0);
    assert_eq!((after, y), (expected, expected));
    assert_eq!(tangent, [j_y[0][1], j_y[1][1]]);
    let mut y = y0;
    let (mut d_y, mut d_dt) = ([0.0; 2], 0.0);
    let after = euler_vjp(&mut y, dt, [1.0, 0.0], &mut d_y, &mut d_dt);
    assert_eq!((after, y), (expected, expected));
    assert_eq!((d_y, d_dt), (j_y[0], j_dt[0]));
}

/// Residuals written into an output slice.
#[grad(jacobian, wrt(p))]
fn residuals_into(p: [f64; 2], t: &[f64], y: &[f64], out: &mut [f64]) {
    for i in 0..t.len() {
        out[i] = p[0] * (-p[1] * t[i]).exp() - y[i];
    }
}

#[test]
fn an_output_slice_gives_the_residuals_jacobian() {
    let (t, y) = ([0.0, 0.5, 1.0, 2.0], [2.1, 1.5, 1.1, 0.6]);
    let p = [2.0, 0.6];
    let mut out = vec![0.0; 4];
    let (value, j) = residuals_into_jacobian(p, &t, &y, &mut out);
    assert_eq!(value, out);
    let mut expected = vec![0.0; 4];
    residuals_into(p, &t, &y, &mut expected);
    assert_eq!(out, expected);
    for i in 0..4 {
        let e = (-p[1] * t[i]).exp();
        assert_close(j[i][0], e, 1e-15, "∂r/∂p0");
        assert_close(j[i][1], -p[0] * t[i] * e, 1e-15, "∂r/∂p1");
    }
}

/// A loss with a scratch buffer it writes, then reads.
#[grad(wrt(w))]
fn cubes(w: &[f64], scratch: &mut [f64]) -> f64 {
    for i in 0..w.len() {
        scratch[i] = w[i] * w[i];
    }
    let mut total = 0.0;
    for i in 0..w.len() {
        total += scratch[i].sqrt() * scratch[i] + w[i] * scratch[i];
    }
    total
}

#[test]
fn a_scratch_buffer_is_written_as_the_original_writes_it() {
    let w = [1.5, -0.5, 2.0];
    let mut scratch = [9.0; 3];
    let (value, d_w) = cubes_grad(&w, &mut scratch);
    assert_eq!(scratch, [2.25, 0.25, 4.0]);
    assert_eq!(value, cubes(&w, &mut [0.0; 3]));
    // Σ |w|³ + w³: 3w|w| + 3w².
    for i in 0..3 {
        assert_close(
            d_w[i],
            3.0 * w[i] * w[i].abs() + 3.0 * w[i] * w[i],
            1e-14,
            "∂/∂w",
        );
    }
    // Against the Tape.
    let tape = Tape::new();
    let vars: Vec<Var> = w.iter().map(|&x| tape.var(x)).collect();
    let mut total = tape.var(0.0);
    for &v in &vars {
        let s = v * v;
        total += s.sqrt() * s + v * s;
    }
    let g = total.gradient();
    for i in 0..3 {
        assert_close(d_w[i], g[vars[i]], 1e-15, "against Tape");
    }
}

/// A number updated in place, and the value after it: second order too.
#[grad(hvp)]
fn accumulate(x: &mut f64, k: f64) -> f64 {
    *x += k * k;
    (*x).ln() * *x
}

#[test]
fn a_number_in_place_through_second_order() {
    let (x0, k) = (1.5, 0.8);
    let mut x = x0;
    let (value, d_x, d_k) = accumulate_grad(&mut x, k);
    let after = x0 + k * k;
    assert_eq!(x, after);
    assert_eq!(value, accumulate(&mut x0.clone(), k));
    // f = u ln u with u = x + k²: f' = ln u + 1.
    let f1 = after.ln() + 1.0;
    assert_close(d_x, f1, 1e-15, "∂/∂x");
    assert_close(d_k, f1 * 2.0 * k, 1e-15, "∂/∂k");
    // H·(1, 0): f'' = 1/u.
    let mut x = x0;
    let (_, _, _, h_x, h_k) = accumulate_hvp(&mut x, k, 1.0, 0.0);
    assert_eq!(x, after);
    assert_close(h_x, 1.0 / after, 1e-15, "H[x][x]");
    assert_close(h_k, 2.0 * k / after, 1e-15, "H[k][x]");
}

/// `wrt(..)` names a written parameter as the function does; an element overwritten
/// before it is read has a zero partial.
#[grad(wrt(p))]
fn overwrite_then_read(p: &mut [f64], x: f64) -> f64 {
    p[1] = x * p[0];
    p[0] * x + p[1] * p[1]
}

#[test]
fn wrt_a_written_parameter_and_grad_into() {
    let mut p = vec![1.5, 100.0];
    let (value, d_p) = overwrite_then_read_grad(&mut p, 2.0);
    assert_eq!(p, [1.5, 3.0]);
    assert_eq!(value, 1.5 * 2.0 + 9.0);
    // f = p0·x + (x·p0)²: ∂/∂p0 = x + 2x²p0, ∂/∂p1 = 0.
    assert_eq!(d_p, [2.0 + 2.0 * 4.0 * 1.5, 0.0]);
    // `_grad_into` adds into its buffer, and writes as the original.
    let mut p = vec![1.5, 100.0];
    let mut d_p = vec![1.0, 1.0];
    let value = overwrite_then_read_grad_into(&mut p, 2.0, &mut d_p);
    assert_eq!((value, p), (12.0, vec![1.5, 3.0]));
    assert_eq!(d_p, [15.0, 1.0]);
}

/// Numbers passed by reference: `&f64`, and a `&mut f64` that is only read. Their partials,
/// tangents and directions are numbers, the tangents and directions by reference as the
/// parameters are.
#[grad(jvp, hvp)]
fn by_reference(x: &f64, w: &[f64; 2], k: &f64) -> f64 {
    (*x * w[0]).sin() + x * w[1] * k + k.exp()
}

#[grad]
#[allow(clippy::trivially_copy_pass_by_ref)] // the form under test
fn read_through_mut(x: &mut f64, y: f64) -> f64 {
    *x * y + x.cos()
}

#[test]
fn numbers_by_reference() {
    let (x, w, k) = (0.5, [1.0, 2.0], 0.3);
    let (value, dx, dw, dk) = by_reference_grad(&x, &w, &k);
    assert_eq!(value.to_bits(), by_reference(&x, &w, &k).to_bits());
    // Closed forms.
    assert_close(dx, w[0] * (x * w[0]).cos() + w[1] * k, 1e-15, "∂/∂x");
    assert_close(dw[1], x * k, 1e-15, "∂/∂w1");
    assert_close(dk, x * w[1] + k.exp(), 1e-15, "∂/∂k");
    let (_, tangent) = by_reference_jvp(&x, &w, &k, &1.0, &[0.0, 0.5], &-1.0);
    assert_close(tangent, dx + 0.5 * dw[1] - dk, 1e-14, "jvp");
    let (_, _, _, _, hx, hw, hk) = by_reference_hvp(&x, &w, &k, &1.0, &[0.0, 0.0], &0.0);
    assert_close(hx, -w[0] * w[0] * (x * w[0]).sin(), 1e-14, "∂²/∂x²");
    assert_close(hw[1], k, 1e-14, "∂²/∂w1∂x");
    assert_close(hk, w[1], 1e-14, "∂²/∂k∂x");

    let mut held = 0.7;
    let (value, dx, dy) = read_through_mut_grad(&held, 2.0);
    assert_eq!(value.to_bits(), read_through_mut(&mut held, 2.0).to_bits());
    assert_close(dx, 2.0 - held.sin(), 1e-15, "∂/∂x");
    assert_close(dy, held, 1e-15, "∂/∂y");
}

// ----- calls that write through `&mut` inside a body ------------------------------------
// `euler(&mut y, dt);` is followed as `y = <what euler leaves in y>`, through the twin's
// pullback and forward mode.

/// Decays a number in place.
#[grad(jvp, hvp)]
fn decay(s: &mut f64, rate: f64) {
    *s *= (-rate).exp();
}

/// Integrates the pendulum `n` steps, damping a weight alongside: the state is a local
/// array and a local number, updated by calls in a loop.
#[grad(jvp, hvp)]
fn integrate(y0: [f64; 2], dt: f64, k: f64) -> f64 {
    let mut y = y0;
    let mut weight = 1.0;
    for _ in 0..6 {
        euler(&mut y, dt);
        decay(&mut weight, k * dt);
    }
    weight * (y[0] * y[0] + y[1] * y[1])
}

/// The same over a run-time number of steps, the state a `mut` parameter, and a call of
/// a function that returns a value too, whose value is dropped (`accumulate`: what it
/// leaves in `x` is followed).
#[grad]
fn integrate_runtime(mut y: [f64; 2], dt: f64, n: usize) -> f64 {
    let mut total = 0.0;
    for step in 0..n {
        euler(&mut y, dt);
        if step % 2 == 1 {
            accumulate(&mut total, y[0]);
        }
    }
    total + y[1]
}

/// Second order through a number written in place.
#[grad(hvp)]
fn damped(x: f64, rate: f64) -> f64 {
    let mut s = x * x;
    decay(&mut s, rate);
    decay(&mut s, rate * x);
    s.sin()
}

#[test]
fn calls_writing_through_mut_inside_a_body() {
    let (y0, dt, k) = ([0.5, 1.0], 0.1, 0.7);
    let (value, dy, ddt, dk) = integrate_grad(y0, dt, k);
    assert_eq!(value.to_bits(), integrate(y0, dt, k).to_bits());
    let f = |v: &[f64]| integrate([v[0], v[1]], v[2], v[3]);
    let at = [y0[0], y0[1], dt, k];
    let expected = common::fd_gradient(f, &at);
    let got = [dy[0], dy[1], ddt, dk];
    common::assert_all_close(&got, &expected, 1e-7, "integrate");
    // Forward mode: the gradient along a direction.
    let (_, tangent) = integrate_jvp(y0, dt, k, [0.3, -0.2], 0.5, 1.5);
    let along = 0.3 * dy[0] - 0.2 * dy[1] + 0.5 * ddt + 1.5 * dk;
    assert_close(tangent, along, 1e-12, "integrate_jvp");
    // Second order through the array the stepper writes: the slope of the gradient.
    let direction = ([0.3, -0.2], 0.5, 1.5);
    let (_, _, _, _, hy, hdt, hk) = integrate_hvp(y0, dt, k, direction.0, direction.1, direction.2);
    let g = |h: f64| {
        let y = [y0[0] + h * direction.0[0], y0[1] + h * direction.0[1]];
        let (_, dy, ddt, dk) = integrate_grad(y, dt + h * direction.1, k + h * direction.2);
        vec![dy[0], dy[1], ddt, dk]
    };
    let expected = common::slope(g, 1e-5);
    common::assert_all_close(&[hy[0], hy[1], hdt, hk], &expected, 1e-6, "integrate_hvp");

    let (value, dy, ddt) = integrate_runtime_grad(y0, dt, 7);
    assert_eq!(value.to_bits(), integrate_runtime(y0, dt, 7).to_bits());
    let f = |v: &[f64]| integrate_runtime([v[0], v[1]], v[2], 7);
    let expected = common::fd_gradient(f, &[y0[0], y0[1], dt]);
    common::assert_all_close(&[dy[0], dy[1], ddt], &expected, 1e-7, "integrate_runtime");

    let (x, rate) = (0.8, 0.3);
    let (value, dx, drate) = damped_grad(x, rate);
    assert_eq!(value.to_bits(), damped(x, rate).to_bits());
    // s = x²·e^{−r(1+x)}, value sin(s).
    let s = x * x * (-rate * (1.0 + x)).exp();
    let ds_dx = s * (2.0 / x - rate);
    let ds_dr = -s * (1.0 + x);
    assert_close(dx, s.cos() * ds_dx, 1e-12, "damped dx");
    assert_close(drate, s.cos() * ds_dr, 1e-12, "damped drate");
    let (_, _, _, hx, hr) = damped_hvp(x, rate, 1.0, 0.0);
    let g = |h: f64| {
        let (_, dx, dr) = damped_grad(x + h, rate);
        vec![dx, dr]
    };
    let expected = common::slope(g, 1e-5);
    common::assert_all_close(&[hx, hr], &expected, 1e-6, "damped_hvp");
}

/// A scratch slice written through, beside `mut` parameters, one of them reassigned
/// (found by the random programs: the wrappers passed `mut x` to the original as a
/// pattern, and the macro panicked).
#[grad(jvp, hvp)]
fn scratch_and_mut(mut x: f64, scratch: &mut [f64], mut k: f64) -> f64 {
    x *= 2.0;
    k += 1.0;
    scratch[0] += x * k;
    scratch[1] = scratch[0] * scratch[0];
    scratch[1] + x
}

#[test]
fn mut_parameters_beside_a_written_slice() {
    let (x, k) = (0.5, 1.5);
    let s0 = [0.25, -1.0];
    let mut s = s0.to_vec();
    let (value, dx, d_s, dk) = scratch_and_mut_grad(x, &mut s, k);
    let mut expected_s = s0.to_vec();
    let expected = scratch_and_mut(x, &mut expected_s, k);
    assert_eq!(value.to_bits(), expected.to_bits());
    assert_eq!(s, expected_s); // written as the original writes
                               // By hand: s0' = s0 + 2x(k + 1), value = s0'² + 2x.
    let s0_after = s0[0] + 2.0 * x * (k + 1.0);
    assert_close(dx, 2.0 * s0_after * 2.0 * (k + 1.0) + 2.0, 1e-14, "∂/∂x");
    assert_close(dk, 2.0 * s0_after * 2.0 * x, 1e-14, "∂/∂k");
    assert_close(d_s[0], 2.0 * s0_after, 1e-14, "∂/∂scratch₀");
    assert_close(d_s[1], 0.0, 1e-14, "∂/∂scratch₁");
    let mut s = s0.to_vec();
    let (_, tangent) = scratch_and_mut_jvp(x, &mut s, k, 1.0, &[0.0, 0.0], 0.0);
    assert_close(tangent, dx, 1e-14, "jvp");
}

/// A slice outside `wrt`, written only with numbers that depend on no differentiated
/// parameter, in forward mode (found by the random programs: the tangent of the slice,
/// zeros of its length, was sized after the slice had moved into the result, and the
/// generated `_jvp` did not compile).
#[grad(wrt(x), jvp)]
fn shuffled(xs: &mut [f64], n: usize, x: f64) -> f64 {
    xs[0] += -xs[n % xs.len()];
    x * x * xs[0] + xs[1]
}

#[test]
fn a_slice_outside_wrt_written_with_constants_in_forward_mode() {
    let (x, n) = (0.75, 3);
    let mut xs = vec![0.5, 2.0, -1.0, 0.25];
    let (value, tangent) = shuffled_jvp(&mut xs.clone(), n, x, 1.0);
    let mut written = xs.clone();
    assert_eq!(value.to_bits(), shuffled(&mut written, n, x).to_bits());
    // xs₀ becomes 0.5 - 0.25: ∂/∂x = 2x·xs₀.
    assert_close(tangent, 2.0 * x * 0.25, 1e-15, "jvp");
    let (grad_value, dx) = shuffled_grad(&mut xs, n, x);
    assert_eq!(grad_value.to_bits(), value.to_bits());
    assert_eq!(xs, written); // written as the original writes
    assert_close(dx, tangent, 1e-15, "grad");
    let fd = (shuffled(&mut [0.5, 2.0, -1.0, 0.25], n, x + 1e-6)
        - shuffled(&mut [0.5, 2.0, -1.0, 0.25], n, x - 1e-6))
        / 2e-6;
    assert_close(dx, fd, 1e-8, "central differences");
}
