//! The gradient of `loss_slices` written out by hand in the shape `#[grad]` generates —
//! the same operations in the same order, so the results are equal bit for bit — with two
//! other layouts of the values saved for the reverse sweep. They show what the generated
//! code could do instead of one `Workspace::push` per value (each a capacity check and an
//! update of the length in memory, a chain of dependent loads and stores) and one
//! `Workspace::pop` per value on the way back:
//!
//! - [`slab`]: the loop over samples knows its trip count when it starts, so it takes one
//!   block of `count × FRAME` `f64`s at once and each iteration writes its values at fixed
//!   offsets of its own frame (`chunks_exact_mut`), as the constant-size version does in its
//!   stack arrays; the reverse sweep reads the frames back in reverse order.
//! - [`frames`]: each iteration fills a stack array of its `FRAME` values and appends it
//!   with one `extend_from_slice` (one capacity check per iteration); the reverse sweep
//!   copies the last frame out and truncates. This also works for a `while` or `loop`,
//!   whose trip count is not known in advance.
//!
//! Both keep their block in a thread-local `Vec` that keeps its capacity, so neither
//! allocates after the first call.

// Written like the generated code, which indexes.
#![allow(clippy::needless_range_loop)]

use std::cell::RefCell;

use autodiff::rules;

use super::moons_model::{ALPHA, HIDDEN, INPUTS, L1, L2, L3, PARAMS};

/// The values one sample saves, in the order the forward pass produces them: the first
/// layer's ReLU partials, the second layer's, the first layer's outputs, the second's, and
/// the hinge's partial.
pub const FRAME: usize = 4 * HIDDEN + 1;
const D1: usize = 0;
const D2: usize = HIDDEN;
const H1: usize = 2 * HIDDEN;
const H2: usize = 3 * HIDDEN;
const HINGE: usize = 4 * HIDDEN;

thread_local! {
    static BLOCK: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

/// One sample's forward pass: fills `frame`, returns the hinge loss.
#[inline(always)]
fn forward(p: &[f64; PARAMS], x: &[f64; 2], y: f64, frame: &mut [f64; FRAME]) -> f64 {
    for j in 0..HIDDEN {
        let unit = L1 + j * (INPUTS + 1);
        let mut act = p[unit + INPUTS];
        for i in 0..INPUTS {
            act += p[unit + i] * x[i];
        }
        let (h, d) = rules::relu(act);
        frame[D1 + j] = d;
        frame[H1 + j] = h;
    }
    for j in 0..HIDDEN {
        let unit = L2 + j * (HIDDEN + 1);
        let mut act = p[unit + HIDDEN];
        for k in 0..HIDDEN {
            act += p[unit + k] * frame[H1 + k];
        }
        let (h, d) = rules::relu(act);
        frame[D2 + j] = d;
        frame[H2 + j] = h;
    }
    let mut score = p[L3 + HIDDEN];
    for k in 0..HIDDEN {
        score += p[L3 + k] * frame[H2 + k];
    }
    let (hinge, d) = rules::relu(1.0 - y * score);
    frame[HINGE] = d;
    hinge
}

/// One sample's reverse sweep, in the generated order: adds its contributions to `grad`.
#[inline(always)]
fn reverse(
    p: &[f64; PARAMS],
    x: &[f64; 2],
    y: f64,
    frame: &[f64; FRAME],
    adjoint: f64,
    grad: &mut [f64; PARAMS],
) {
    let mut adjoint_h1 = [-0.0f64; HIDDEN];
    let mut adjoint_h2 = [-0.0f64; HIDDEN];
    let mut adjoint_score = -0.0f64;
    adjoint_score += y * -(frame[HINGE] * adjoint);
    for k in (0..HIDDEN).rev() {
        grad[L3 + k] += frame[H2 + k] * adjoint_score;
        adjoint_h2[k] += p[L3 + k] * adjoint_score;
    }
    grad[L3 + HIDDEN] += adjoint_score;
    for j in (0..HIDDEN).rev() {
        let unit = L2 + j * (HIDDEN + 1);
        let mut adjoint_act = -0.0f64;
        adjoint_act += frame[D2 + j] * adjoint_h2[j];
        for k in (0..HIDDEN).rev() {
            grad[unit + k] += frame[H1 + k] * adjoint_act;
            adjoint_h1[k] += p[unit + k] * adjoint_act;
        }
        grad[unit + HIDDEN] += adjoint_act;
    }
    for j in (0..HIDDEN).rev() {
        let unit = L1 + j * (INPUTS + 1);
        let mut adjoint_act = -0.0f64;
        adjoint_act += frame[D1 + j] * adjoint_h1[j];
        for i in (0..INPUTS).rev() {
            grad[unit + i] += x[i] * adjoint_act;
        }
        grad[unit + INPUTS] += adjoint_act;
    }
}

/// The penalty `Σ p²`, its reverse sweep into a fresh gradient, and the adjoint of the
/// data loss: what comes before the samples' reverse sweeps.
#[inline(always)]
fn penalty_and_seed(p: &[f64; PARAMS], data_loss: f64, n: usize) -> (f64, [f64; PARAMS], f64) {
    let mut penalty = 0.0;
    for q in 0..PARAMS {
        penalty += p[q] * p[q];
    }
    let (mean, inverse, _) = rules::div(data_loss, n as f64);
    let value = mean + ALPHA * penalty;
    let mut grad = [-0.0f64; PARAMS];
    let mut adjoint_penalty = -0.0f64;
    adjoint_penalty += ALPHA * 1.0;
    for q in (0..PARAMS).rev() {
        grad[q] += p[q] * adjoint_penalty;
        grad[q] += p[q] * adjoint_penalty;
    }
    let mut adjoint_data = -0.0f64;
    adjoint_data += inverse * 1.0;
    (value, grad, adjoint_data)
}

/// The gradient of `loss_slices` with one block of `count × FRAME` values, taken when the
/// loop over samples starts.
#[must_use]
pub fn slab(p: &[f64; PARAMS], xs: &[[f64; 2]], ys: &[f64]) -> (f64, [f64; PARAMS]) {
    BLOCK.with(|block| {
        let mut block = block.borrow_mut();
        let count = xs.len().min(ys.len());
        block.clear();
        block.resize(count * FRAME, 0.0);
        let mut data_loss = 0.0;
        for ((x, &y), frame) in xs.iter().zip(ys).zip(block.chunks_exact_mut(FRAME)) {
            let frame: &mut [f64; FRAME] = frame.try_into().expect("a whole frame");
            data_loss += forward(p, x, y, frame);
        }
        let (value, mut grad, adjoint) = penalty_and_seed(p, data_loss, xs.len());
        for ((x, &y), frame) in xs[..count]
            .iter()
            .zip(&ys[..count])
            .zip(block.chunks_exact(FRAME))
            .rev()
        {
            let frame: &[f64; FRAME] = frame.try_into().expect("a whole frame");
            reverse(p, x, y, frame, adjoint, &mut grad);
        }
        (value, grad.map(|g| g + 0.0))
    })
}

/// The gradient of `loss_slices` with one `extend_from_slice` of a `FRAME`-value stack
/// array per sample, and one copy back per sample in the reverse sweep.
#[must_use]
pub fn frames(p: &[f64; PARAMS], xs: &[[f64; 2]], ys: &[f64]) -> (f64, [f64; PARAMS]) {
    BLOCK.with(|block| {
        let mut block = block.borrow_mut();
        block.clear();
        let mut data_loss = 0.0;
        let mut count = 0;
        for (x, &y) in xs.iter().zip(ys) {
            let mut frame = [0.0; FRAME];
            data_loss += forward(p, x, y, &mut frame);
            block.extend_from_slice(&frame);
            count += 1;
        }
        let (value, mut grad, adjoint) = penalty_and_seed(p, data_loss, xs.len());
        for s in (0..count).rev() {
            let start = block.len() - FRAME;
            let mut frame = [0.0; FRAME];
            frame.copy_from_slice(&block[start..]);
            block.truncate(start);
            reverse(p, &xs[s], ys[s], &frame, adjoint, &mut grad);
        }
        (value, grad.map(|g| g + 0.0))
    })
}

/// `trip_count::recurrence_grad_into` written out with the slab layout: the two values each
/// iteration saves (`y` for `a·y`, and `sin`'s partial) at fixed offsets of its frame.
pub fn recurrence_slab(a: f64, x: f64, n: usize, d_a: &mut f64, d_x: &mut f64) -> f64 {
    BLOCK.with(|block| {
        let mut block = block.borrow_mut();
        block.clear();
        block.resize(2 * n, 0.0);
        let mut y = x;
        for frame in block.chunks_exact_mut(2) {
            let product = a * y;
            frame[0] = y;
            let (sine, partial) = rules::sin(x * y);
            frame[1] = partial;
            y = product + 0.1 * sine;
        }
        let (mut adjoint_a, mut adjoint_x, mut adjoint_y) = (-0.0f64, -0.0f64, -0.0f64);
        adjoint_y += 1.0;
        for frame in block.chunks_exact(2).rev() {
            let seed = adjoint_y;
            adjoint_y = -0.0;
            let adjoint_sine = 0.1 * seed;
            let adjoint_argument = frame[1] * adjoint_sine;
            adjoint_x += frame[0] * adjoint_argument;
            adjoint_y += x * adjoint_argument;
            adjoint_a += frame[0] * seed;
            adjoint_y += a * seed;
        }
        adjoint_x += adjoint_y;
        *d_a += adjoint_a + 0.0;
        *d_x += adjoint_x;
        y
    })
}

/// `trip_count::discounted_grad_into` written out with the slab layout (one value per
/// iteration: `sin`'s partial).
pub fn discounted_slab(xs: &[f64], d_xs: &mut [f64]) -> f64 {
    assert_eq!(d_xs.len(), xs.len(), "the buffer's length");
    BLOCK.with(|block| {
        let mut block = block.borrow_mut();
        block.clear();
        block.resize(xs.len(), 0.0);
        let mut s = 0.0;
        for (i, saved) in block.iter_mut().enumerate() {
            let (sine, partial) = rules::sin(xs[i] * xs[i]);
            *saved = partial;
            s = 0.5 * s + sine;
        }
        let mut adjoint_s = -0.0f64;
        adjoint_s += 1.0;
        for (i, saved) in block.iter().enumerate().rev() {
            let seed = adjoint_s;
            adjoint_s = -0.0;
            let adjoint_argument = saved * seed;
            d_xs[i] += xs[i] * adjoint_argument;
            d_xs[i] += xs[i] * adjoint_argument;
            adjoint_s += 0.5 * seed;
        }
        s
    })
}
