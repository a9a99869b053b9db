//! The moons network's loss and gradient backpropagated by hand across samples: the
//! samples go through the network in blocks of [`LANES`], each value of the network held
//! as one `[f64; LANES]` (a lane per sample), and the innermost loops run over the lanes of
//! a block — independent, unit-stride, a constant trip count — so that LLVM emits packed
//! SIMD arithmetic for them (two `f64`s per instruction with the default x86-64 target's
//! SSE2). No matrices, no copies of the data set, no `unsafe`: the vectorisation that the
//! hand-written backpropagation of `examples/moons_model` (a sample at a time, vectorised
//! along each unit's 16 weights) and the batched one of [`crate::batched`] (matrix
//! products) leave out.
//!
//! The model, loss and data are the moons model's (`examples/moons_model`): 2-16-16-1
//! ReLU MLP, each unit's weights followed by its bias in the flat parameter array, the mean
//! hinge loss `relu(1 - y·score)` plus `ALPHA · Σ p²`. Like the dense hand-written
//! backpropagation, every sample and every unit goes through the backward pass (the ReLU's
//! 0 or 1 multiplies; nothing is skipped).
//!
//! Each lane computes its sample's activations and adjoints with the operations of the
//! hand-written backpropagation in the same order, so these agree bit for bit. The sums
//! over samples do not: the hinges are summed per lane, and each parameter's gradient in
//! two partial sums (the even lanes and the odd, one packed addition per pair of lanes),
//! added together at the end. That reorders the sums, so the loss and gradient equal the
//! other contenders' to rounding (below `1e-15` relative), not bit for bit.
//!
//! How the code is written to be vectorised across the lanes and not across units: LLVM's
//! loop vectorizer takes the innermost loop left after the short lane loops are unrolled,
//! which is a loop over units, and vectorises it with each lane's values gathered from
//! units apart (measured: more instructions than the sample-at-a-time code). So the loops
//! over units are either written out (`each_unit!`), or call a function doing one unit's
//! work that is not inlined (`unit_forward`, `unit_backward`, `input_adjoint`, each 16
//! units × 16 lanes, straight-line), which the loop vectorizer leaves alone; the SLP
//! vectorizer then pairs the lanes. Writing out every loop instead makes 100 KB of code,
//! slower from instruction-cache misses. Blocks of 16 lanes were faster than 4, 8 or 32.
//!
//! A data set whose length is not a multiple of [`LANES`] ends with a padded block: the
//! missing samples are `x = 0`, `y = 0`, whose adjoint `-y / n` is zero (so they add
//! nothing to the gradient), and whose hinge is left out of the loss.

use crate::runtime_lengths::moons_model::{ALPHA, HIDDEN, INPUTS, L1, L2, L3, PARAMS};

/// `$body` for `$k` = 0, 1, …, 15 ([`HIDDEN`]), written out: a loop over the units that
/// LLVM cannot vectorise across units (see the module's documentation).
macro_rules! each_unit {
    ($k:ident => $body:block) => {
        each_unit!(@ $k $body; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
    };
    (@ $k:ident $body:block; $($n:literal)*) => {
        $({
            let $k: usize = $n;
            $body
        })*
    };
}
const _: () = assert!(HIDDEN == 16, "each_unit! writes out 16 units");

/// Samples per block: the lanes of every value.
pub const LANES: usize = 16;

/// One value of the network for each sample of a block.
type Lanes = [f64; LANES];

/// The partial sums: of each parameter's gradient, in the flat layout of the parameters,
/// as a [`Pair`] (even and odd lanes), and of the hinge loss, per lane.
struct Accumulator {
    grad: [Pair; PARAMS],
    loss: Lanes,
}

/// The partial sums of one parameter's gradient: the block's lanes folded in pairs.
type Pair = [f64; 2];

/// Adds a block's terms to `sum`: the even lanes to its first half, the odd to its
/// second (one packed addition per pair of lanes).
#[inline(always)]
fn fold(sum: &mut Pair, terms: Lanes) {
    let mut s = *sum;
    for pair in terms.chunks_exact(2) {
        s[0] += pair[0];
        s[1] += pair[1];
    }
    *sum = s;
}

/// The ReLU's derivative: 1 for a positive input, else 0 (as the hand-written one).
#[inline(always)]
fn step(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else {
        0.0
    }
}

/// The ReLU.
#[inline(always)]
fn relu(x: f64) -> f64 {
    if x > 0.0 {
        x
    } else {
        0.0
    }
}

/// The second layer's unit with weights and bias `w` on the first layer's outputs `h1`:
/// its activation in every lane, summed over `k` in the hand-written order.
///
/// This and the next two functions are each one unit's work, not inlined: called in a
/// loop over the units, they keep LLVM's loop vectorizer from vectorising that loop across
/// units (see the module's documentation).
#[inline(never)]
fn unit_forward(w: &[f64; HIDDEN + 1], h1: &[Lanes; HIDDEN]) -> Lanes {
    let mut act = [w[HIDDEN]; LANES];
    each_unit!(k => {
        for l in 0..LANES {
            act[l] += w[k] * h1[k][l];
        }
    });
    act
}

/// The contributions of the second layer's unit with adjoint `d` to its weights' and
/// bias's sums `acc`, `h1` the first layer's outputs.
#[inline(never)]
fn unit_backward(d: &Lanes, h1: &[Lanes; HIDDEN], acc: &mut [Pair; HIDDEN + 1]) {
    fold(&mut acc[HIDDEN], *d);
    each_unit!(k => {
        fold(&mut acc[k], std::array::from_fn(|l| d[l] * h1[k][l]));
    });
}

/// The adjoint of one of the first layer's outputs in every lane: the second layer's
/// adjoints `d_a2` times their weights `w` on it, summed over `j` in the hand-written
/// order.
#[inline(never)]
fn input_adjoint(w: &[f64; HIDDEN], d_a2: &[Lanes; HIDDEN]) -> Lanes {
    let mut d_h1 = [0.0; LANES];
    each_unit!(j => {
        for l in 0..LANES {
            d_h1[l] += d_a2[j][l] * w[j];
        }
    });
    d_h1
}

/// One block of samples, `x0`, `x1` their inputs and `y` their labels: the forward pass,
/// the hinges (returned), and the backward pass, whose contributions `acc` gathers.
/// `scale` is `1 / n`, `columns` the second layer's weights by column.
#[inline(always)]
fn block(
    p: &[f64; PARAMS],
    x0: &Lanes,
    x1: &Lanes,
    y: &Lanes,
    scale: f64,
    columns: &[[f64; HIDDEN]; HIDDEN],
    acc: &mut [Pair; PARAMS],
) -> Lanes {
    // Forward: the first layer.
    let mut a1 = [[0.0; LANES]; HIDDEN];
    let mut h1 = [[0.0; LANES]; HIDDEN];
    each_unit!(j => {
        let unit = L1 + j * (INPUTS + 1);
        let (w0, w1, b) = (p[unit], p[unit + 1], p[unit + INPUTS]);
        for l in 0..LANES {
            let mut act = b;
            act += w0 * x0[l];
            act += w1 * x1[l];
            a1[j][l] = act;
            h1[j][l] = relu(act);
        }
    });
    // The second layer.
    let mut a2 = [[0.0; LANES]; HIDDEN];
    let mut h2 = [[0.0; LANES]; HIDDEN];
    for ((w, a), h) in p[L2..L3].chunks_exact(HIDDEN + 1).zip(&mut a2).zip(&mut h2) {
        *a = unit_forward(w.try_into().expect("a unit's row"), &h1);
        *h = a.map(relu);
    }
    // The output and the hinge.
    let mut score = [p[L3 + HIDDEN]; LANES];
    each_unit!(k => {
        let w = p[L3 + k];
        for l in 0..LANES {
            score[l] += w * h2[k][l];
        }
    });
    let mut hinge = [0.0; LANES];
    let mut d_score = [0.0; LANES];
    for l in 0..LANES {
        let margin = 1.0 - y[l] * score[l];
        hinge[l] = relu(margin);
        // d loss / d score = -y / n where the hinge is active.
        d_score[l] = -y[l] * scale * step(margin);
    }

    // Backward: the output unit, and the adjoints of the second layer's activations.
    fold(&mut acc[L3 + HIDDEN], d_score);
    let mut d_a2 = [[0.0; LANES]; HIDDEN];
    each_unit!(k => {
        let w = p[L3 + k];
        fold(&mut acc[L3 + k], std::array::from_fn(|l| d_score[l] * h2[k][l]));
        for l in 0..LANES {
            d_a2[k][l] = d_score[l] * w * step(a2[k][l]);
        }
    });
    // The second layer's weights and biases.
    for (row, d) in acc[L2..L3].chunks_exact_mut(HIDDEN + 1).zip(&d_a2) {
        unit_backward(d, &h1, row.try_into().expect("a unit's row"));
    }
    // The first layer: each unit's adjoint, then its weights and bias.
    for k in 0..HIDDEN {
        let d_h1 = input_adjoint(&columns[k], &d_a2);
        let unit = L1 + k * (INPUTS + 1);
        let d_act: Lanes = std::array::from_fn(|l| d_h1[l] * step(a1[k][l]));
        fold(&mut acc[unit + INPUTS], d_act);
        fold(&mut acc[unit], std::array::from_fn(|l| d_act[l] * x0[l]));
        fold(
            &mut acc[unit + 1],
            std::array::from_fn(|l| d_act[l] * x1[l]),
        );
    }
    hinge
}

/// The moons loss over the samples `(xs, ys)` (any number) and its gradient, by blocks of
/// [`LANES`] samples, a lane per sample. Equal to the other contenders' to rounding: the
/// sums over samples are kept per lane and added at the end.
///
/// # Panics
/// If `xs` and `ys` differ in length.
#[must_use]
pub fn loss_and_gradient(p: &[f64; PARAMS], xs: &[[f64; 2]], ys: &[f64]) -> (f64, [f64; PARAMS]) {
    assert_eq!(xs.len(), ys.len(), "a label per sample");
    let scale = 1.0 / xs.len() as f64;
    let mut acc = Accumulator {
        grad: [[0.0; 2]; PARAMS],
        loss: [0.0; LANES],
    };
    // The second layer's weights by column: those on each of the first layer's outputs.
    let columns = std::array::from_fn(|k| std::array::from_fn(|j| p[L2 + j * (HIDDEN + 1) + k]));
    let (x_blocks, ys_blocks) = (xs.chunks_exact(LANES), ys.chunks_exact(LANES));
    let (x_rest, y_rest) = (x_blocks.remainder(), ys_blocks.remainder());
    for (x, y) in x_blocks.zip(ys_blocks) {
        let x0 = std::array::from_fn(|l| x[l][0]);
        let x1 = std::array::from_fn(|l| x[l][1]);
        let y: &Lanes = y.try_into().expect("a whole block");
        let hinge = block(p, &x0, &x1, y, scale, &columns, &mut acc.grad);
        for (sum, h) in acc.loss.iter_mut().zip(hinge) {
            *sum += h;
        }
    }
    if !x_rest.is_empty() {
        // The padding's label 0 makes its adjoint 0; its hinge (1) is left out.
        let (mut x0, mut x1, mut y) = ([0.0; LANES], [0.0; LANES], [0.0; LANES]);
        for (l, (x, &label)) in x_rest.iter().zip(y_rest).enumerate() {
            (x0[l], x1[l], y[l]) = (x[0], x[1], label);
        }
        let hinge = block(p, &x0, &x1, &y, scale, &columns, &mut acc.grad);
        for (sum, h) in acc.loss.iter_mut().zip(&hinge[..x_rest.len()]) {
            *sum += h;
        }
    }
    let mut grad = [0.0; PARAMS];
    let mut penalty = 0.0;
    for ((g, lanes), q) in grad.iter_mut().zip(&acc.grad).zip(p) {
        penalty += q * q;
        *g = lanes.iter().sum::<f64>() + ALPHA * 2.0 * q;
    }
    let data_loss: f64 = acc.loss.iter().sum();
    (data_loss / xs.len() as f64 + ALPHA * penalty, grad)
}
