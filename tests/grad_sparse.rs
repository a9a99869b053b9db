//! The sparse reverse sweep: the reverse of a loop is skipped when every adjoint flowing
//! into it is zero (a ReLU that was off, an inactive hinge). Gradients are checked
//! against the `Tape` engine (which always sweeps densely) and central differences, with
//! units off, all on, and all off; and the one documented difference, `0·∞`, is pinned.

mod common;

use autodiff::prelude::*;
use common::{assert_all_close, fd_gradient};

const IN: usize = 3;
const HIDDEN: usize = 6;

/// A 3-6-1 ReLU layer and a hinge loss on one sample: `w[j] = [w0, w1, w2, bias]`.
#[grad(wrt(w, v))]
fn hinge(w: &[[f64; 4]; HIDDEN], v: &[f64; HIDDEN], x: [f64; IN], y: f64) -> f64 {
    let mut h = [0.0; HIDDEN];
    for j in 0..HIDDEN {
        let mut act = w[j][IN];
        for i in 0..IN {
            act += w[j][i] * x[i];
        }
        h[j] = act.relu();
    }
    let mut score = 0.0;
    for j in 0..HIDDEN {
        score += v[j] * h[j];
    }
    (1.0 - y * score).relu()
}

/// The same with `Tape`, for the reference.
fn hinge_tape(flat: &[f64], x: [f64; IN], y: f64) -> (f64, Vec<f64>) {
    let tape = Tape::new();
    let p: Vec<Var> = flat.iter().map(|&p| tape.var(p)).collect();
    let mut score = tape.var(0.0);
    for j in 0..HIDDEN {
        let mut act = p[4 * j + IN];
        for i in 0..IN {
            act += p[4 * j + i] * x[i];
        }
        score += p[4 * HIDDEN + j] * act.relu();
    }
    let loss = (1.0 - y * score).relu();
    let gradient = loss.gradient();
    (loss.value(), p.iter().map(|&v| gradient[v]).collect())
}

fn unflatten(flat: &[f64]) -> ([[f64; 4]; HIDDEN], [f64; HIDDEN]) {
    let mut w = [[0.0; 4]; HIDDEN];
    for (j, row) in w.iter_mut().enumerate() {
        row.copy_from_slice(&flat[4 * j..4 * j + 4]);
    }
    let mut v = [0.0; HIDDEN];
    v.copy_from_slice(&flat[4 * HIDDEN..]);
    (w, v)
}

fn flatten(d_w: &[[f64; 4]; HIDDEN], d_v: &[f64; HIDDEN]) -> Vec<f64> {
    d_w.iter().flatten().chain(d_v).copied().collect()
}

/// Parameters whose hidden units are on where `on[j]` (bias ±2 beats the inputs).
fn parameters(on: [bool; HIDDEN]) -> Vec<f64> {
    let mut flat = Vec::new();
    for (j, &on) in on.iter().enumerate() {
        let k = j as f64;
        flat.extend([0.3 - 0.1 * k, 0.2 + 0.05 * k, -0.25 + 0.1 * k]);
        flat.push(if on { 2.0 } else { -2.0 });
    }
    flat.extend((0..HIDDEN).map(|j| 0.4 - 0.15 * j as f64));
    flat
}

fn check(on: [bool; HIDDEN], y: f64) {
    let flat = parameters(on);
    let x = [0.5, -0.4, 0.3];
    let (w, v) = unflatten(&flat);
    let (value, d_w, d_v) = hinge_grad(&w, &v, x, y);
    let got = flatten(&d_w, &d_v);
    let (tape_value, tape) = hinge_tape(&flat, x, y);
    assert_eq!(value, tape_value);
    assert_all_close(&got, &tape, 1e-15, "against Tape");
    let fd = fd_gradient(
        |p| {
            let (w, v) = unflatten(p);
            hinge(&w, &v, x, y)
        },
        &flat,
    );
    assert_all_close(&got, &fd, 1e-7, "against central differences");
}

#[test]
fn some_units_off() {
    check([true, false, true, false, false, true], 1.0);
}

#[test]
fn every_unit_on() {
    check([true; HIDDEN], 1.0);
}

#[test]
fn every_unit_off() {
    // No unit passes anything: the score is 0, the hinge is active, and only the output
    // weights' partials could be non-zero — they are 0 too, as every h is 0.
    check([false; HIDDEN], 1.0);
    let (w, v) = unflatten(&parameters([false; HIDDEN]));
    let (_, d_w, d_v) = hinge_grad(&w, &v, [0.5, -0.4, 0.3], 1.0);
    assert!(flatten(&d_w, &d_v).iter().all(|&d| d == 0.0));
}

#[test]
fn inactive_hinge_gives_zero_gradient() {
    // The label chosen so that y·score is far above 1: the hinge is 0, and so is every
    // partial; the other label makes it active.
    let (w, v) = unflatten(&parameters([true; HIDDEN]));
    let x = [0.5, -0.4, 0.3];
    let score: f64 = (0..HIDDEN)
        .map(|j| {
            let act = w[j][IN] + (0..IN).map(|i| w[j][i] * x[i]).sum::<f64>();
            v[j] * act.max(0.0)
        })
        .sum();
    assert!(score.abs() > 0.1);
    let y = 100.0 * score.signum();
    let (value, d_w, d_v) = hinge_grad(&w, &v, x, y);
    assert_eq!(value, 0.0);
    assert!(flatten(&d_w, &d_v).iter().all(|&d| d == 0.0));
    let (_, d_w, d_v) = hinge_grad(&w, &v, x, -y);
    assert!(flatten(&d_w, &d_v).iter().any(|&d| d != 0.0));
    check([true; HIDDEN], -y);
}

#[grad]
fn sqrt_under_an_off_relu(x: f64) -> f64 {
    let mut s = 0.0;
    for _ in 0..8 {
        s += x.sqrt();
    }
    (s - 1.0).relu()
}

#[grad]
fn sqrt_under_an_on_relu(x: f64) -> f64 {
    let mut s = 0.0;
    for _ in 0..8 {
        s += x.sqrt();
    }
    (s + 1.0).relu()
}

/// The documented choice: a loop whose incoming adjoint is zero is skipped (here one of
/// 8 iterations, the fewest for which a loop without loops inside is tested), so an
/// infinite partial inside it (√x at 0) gives a zero partial, not `0·∞ = NaN` as the
/// dense `Tape` sweep does. With a non-zero adjoint, the infinity comes through.
#[test]
fn a_zero_adjoint_is_not_multiplied_by_an_infinite_partial() {
    let (value, dx) = sqrt_under_an_off_relu_grad(0.0);
    assert_eq!(value, 0.0);
    assert_eq!(dx, 0.0);

    let tape = Tape::new();
    let x = tape.var(0.0);
    let s = (0..8).fold(tape.var(0.0), |s, _| s + x.sqrt());
    let dense = (s - 1.0).relu().gradient()[x];
    assert!(dense.is_nan(), "the dense sweep multiplies 0 by ∞");

    let (_, dx) = sqrt_under_an_on_relu_grad(0.0);
    assert_eq!(dx, f64::INFINITY);
}
