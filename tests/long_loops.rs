//! Loops of 10,000,000 iterations with a run-time bound: the reverse sweep's values go to
//! the thread's workspace (one `f64` per saved value per iteration), and the gradient must
//! still be right. Checked against the closed form of a damped linear recurrence.
//!
//! `y ← a·y + c`, `n` times from `y₀`, is `yₙ = aⁿ·y₀ + c·(1 - aⁿ)/(1 - a)`, so
//!
//! - `∂yₙ/∂y₀ = aⁿ`,
//! - `∂yₙ/∂c = (1 - aⁿ)/(1 - a)`,
//! - `∂yₙ/∂a = n·aⁿ⁻¹·y₀ + c·((1 - aⁿ) - n·aⁿ⁻¹·(1 - a))/(1 - a)²`.
//!
//! With `a = 1 - 10⁻⁷` and `n = 10⁷`, `aⁿ ≈ 1/e`: every iteration matters to the result.

use autodiff::prelude::*;

/// Iterations of the long loops.
const LONG: usize = 10_000_000;

/// The damped recurrence with a source term `c = 10⁻⁷·sin x` computed in the loop, as
/// written in the issue: each iteration saves `y` (for `a·y`) and `sin`'s partial.
#[grad]
fn damped(a: f64, x: f64, y0: f64, n: usize) -> f64 {
    let mut y = y0;
    for _ in 0..n {
        y = a * y + x.sin() * 1e-7;
    }
    y
}

/// The same with the source term computed once, before the loop: each iteration saves
/// only `y`.
#[grad]
fn damped_hoisted(a: f64, x: f64, y0: f64, n: usize) -> f64 {
    let c = x.sin() * 1e-7;
    let mut y = y0;
    for _ in 0..n {
        y = a * y + c;
    }
    y
}

/// `(yₙ, ∂/∂a, ∂/∂x, ∂/∂y₀)` from the closed form.
fn closed_form(a: f64, x: f64, y0: f64, n: usize) -> (f64, f64, f64, f64) {
    let c = x.sin() * 1e-7;
    let dc_dx = x.cos() * 1e-7;
    let gap = 1.0 - a; // exact: `a` is within a factor 2 of 1
    let n_f = n as f64;
    // aⁿ and aⁿ⁻¹ through ln(1 - gap), accurate near a = 1.
    let ln_a = (-gap).ln_1p();
    let a_n = (n_f * ln_a).exp();
    let a_n1 = ((n_f - 1.0) * ln_a).exp();
    let geometric = (1.0 - a_n) / gap;
    let value = a_n * y0 + c * geometric;
    let d_a = n_f * a_n1 * y0 + c * ((1.0 - a_n) - n_f * a_n1 * gap) / (gap * gap);
    (value, d_a, dc_dx * geometric, a_n)
}

fn assert_close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-6 * want.abs(),
        "{what}: got {got}, want {want}"
    );
}

/// A generated gradient of `(a, x, y0, n)`: the value and the three partials.
type Gradient = fn(f64, f64, f64, usize) -> (f64, f64, f64, f64);

fn check(f: Gradient, n: usize) {
    let (a, x, y0) = (1.0 - 1e-7, 0.8, 2.0);
    let (value, d_a, d_x, d_y0) = f(a, x, y0, n);
    let (want, want_a, want_x, want_y0) = closed_form(a, x, y0, n);
    assert_close(value, want, "value");
    assert_close(d_a, want_a, "∂/∂a");
    assert_close(d_x, want_x, "∂/∂x");
    assert_close(d_y0, want_y0, "∂/∂y0");
    // Every iteration counted: the gradient is far from that of a truncated loop.
    assert!(d_y0 < 0.99 && d_y0 > 0.0, "∂/∂y0 = {d_y0}");
}

#[test]
fn ten_million_iterations_hoisted() {
    check(damped_hoisted_grad, LONG);
}

#[test]
fn ten_million_iterations() {
    check(damped_grad, LONG);
}

#[test]
fn the_workspace_is_reused_after_a_long_loop() {
    // A second long call reuses the grown workspace, and `_grad_into` adds into buffers.
    let (a, x, y0) = (1.0 - 1e-7, 0.8, 2.0);
    let (value, d_a, d_x, d_y0) = damped_hoisted_grad(a, x, y0, LONG / 10);
    let (mut b_a, mut b_x, mut b_y0) = (1.0, 1.0, 1.0);
    let again = damped_hoisted_grad_into(a, x, y0, LONG / 10, &mut b_a, &mut b_x, &mut b_y0);
    assert_eq!(again.to_bits(), value.to_bits());
    assert_eq!((b_a, b_x, b_y0), (1.0 + d_a, 1.0 + d_x, 1.0 + d_y0));
    let (short, ..) = damped_hoisted_grad(a, x, y0, 3);
    assert_eq!(short, damped_hoisted(a, x, y0, 3));
}

/// Samples of the loop of constant length below: its frames (about 7 MB) would not fit a
/// spawned thread's 2 MiB stack as stack arrays.
const SAMPLES: usize = 200_000;

/// A loop over samples of constant length that holds a loop: with the `std` feature its
/// values go to the workspace, as over a slice.
#[grad(wrt(w))]
#[allow(clippy::needless_range_loop)]
fn many_samples(w: &[f64; 2], xs: &[f64; SAMPLES]) -> f64 {
    let mut total = 0.0;
    for s in 0..SAMPLES {
        let mut a = 0.0;
        for j in 0..2 {
            a += (w[j] * xs[s]).tanh();
        }
        total += a * a;
    }
    total
}

/// The same over a slice.
#[grad(wrt(w))]
#[allow(clippy::needless_range_loop)]
fn many_samples_slice(w: &[f64; 2], xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for &x in xs {
        let mut a = 0.0;
        for j in 0..2 {
            a += (w[j] * x).tanh();
        }
        total += a * a;
    }
    total
}

#[test]
#[allow(clippy::needless_range_loop)]
fn a_constant_loop_over_many_samples_runs_on_a_small_stack() {
    let xs: Vec<f64> = (0..SAMPLES).map(|s| (s as f64 * 0.001).sin()).collect();
    let xs: Box<[f64; SAMPLES]> = xs.into_boxed_slice().try_into().expect("SAMPLES numbers");
    let w = [0.7, -0.4];
    // A spawned thread with the default 2 MiB stack.
    let (value, grad) = std::thread::spawn({
        let xs = xs.clone();
        move || many_samples_grad(&w, &xs)
    })
    .join()
    .expect("no stack overflow");
    assert_eq!((value, grad), many_samples_slice_grad(&w, &xs[..]));
    // d/dw_j Σ_s a_s² = Σ_s 2·a_s·(1 - tanh²(w_j·x_s))·x_s
    let mut want = [0.0; 2];
    for &x in xs.iter() {
        let a: f64 = w.iter().map(|wj| (wj * x).tanh()).sum();
        for j in 0..2 {
            let t = (w[j] * x).tanh();
            want[j] += 2.0 * a * (1.0 - t * t) * x;
        }
    }
    for j in 0..2 {
        assert!(
            (grad[j] - want[j]).abs() <= 1e-9 * want[j].abs(),
            "∂/∂w{j}: got {}, want {}",
            grad[j],
            want[j]
        );
    }
}
