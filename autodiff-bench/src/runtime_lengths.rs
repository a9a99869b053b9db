//! Loops of run-time length against the same computations with constant bounds.
//!
//! `#[grad]` keeps what the reverse sweep needs from a loop of constant length in stack
//! arrays, and from a loop whose trip count is known only at run time (a slice's length, a
//! parameter, an iterator) on a reusable workspace. Each [`Comparison`] here puts
//! contenders computing the same gradient side by side:
//!
//! - [`moons`]: micrograd's moons loss (337 parameters, 100 samples), with the samples as
//!   slices (`loss_slices`) and as fixed-size arrays (`loss`), against the dense
//!   hand-written backpropagation;
//! - [`chain`]: a loss written as an iterator chain
//!   (`xs.iter().zip(ys).map(..).sum::<f64>()`) against the same loss as an index loop
//!   (`for i in 0..xs.len()`);
//! - [`trip_count`]: a recurrence run `n` times (`n` a parameter), and a loop over a slice,
//!   against the same loops with constant bounds and the same trip count;
//! - [`wide`]: the moons network with 256 units per hidden layer ([`crate::wide`]),
//!   against its hand-written backpropagations, a sample at a time and batched.
//!
//! The moons comparisons on 1,000 and 10,000 samples and [`wide`] also time the batched
//! backpropagation of [`crate::batched`]: each layer a matrix product over all samples,
//! with SIMD kernels, the stand-in for what XLA compiles the same math to. The moons
//! comparisons (100, 1,000 and 10,000 samples) also time the backpropagation of
//! [`crate::lanes`], vectorised across samples without matrices (blocks of 16 samples, a
//! SIMD lane per sample).
//!
//! `examples/runtime_lengths.rs` times them interleaved in one process and counts the heap
//! allocations of the `_grad_into` functions; `benches/runtime_lengths.rs` runs them under
//! criterion; `tests/runtime_lengths.rs` checks that the contenders of a comparison compute
//! the same gradient.

use std::cell::RefCell;
use std::hint::black_box;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// The moons model of `examples/moons.rs`, shared with that example and `tests/moons.rs`.
#[path = "../../examples/moons_model/mod.rs"]
#[macro_use]
pub mod moons_model;

/// The moons loss over slices under `#[grad(parallel)]`: [`moons_model::loss_slices`]
/// with its sample loop split into chunks on rayon's thread pool.
#[cfg(feature = "rayon")]
pub mod moons_parallel {
    use super::moons_model::{ALPHA, HIDDEN, INPUTS, L1, L2, L3, PARAMS};
    use autodiff::prelude::*;

    loss_over_slices!(
        /// `loss_slices` under `#[grad(parallel)]`: each chunk of 256 samples
        /// preaccumulates its gradient (as `reassociate` does), the chunks run on
        /// rayon's threads and are added in a fixed order.
        loss_slices_parallel,
        [wrt(p), parallel]
    );
}

pub mod layouts;

/// A loss over samples `(xs, ys)` with `N` parameters: its value and gradient.
pub type LossGradient<const N: usize> = fn(&[f64; N], &[[f64; 2]], &[f64]) -> (f64, [f64; N]);

/// A loss over samples with parameters in a slice: its value and gradient.
pub type SliceLossGradient = fn(&[f64], &[[f64; 2]], &[f64]) -> (f64, Vec<f64>);

/// A loss over samples with `N` parameters: adds its gradient to the buffer, returns its
/// value (a `_grad_into` function).
pub type LossGradientInto<const N: usize> =
    fn(&[f64; N], &[[f64; 2]], &[f64], &mut [f64; N]) -> f64;

/// One way of computing a gradient: a call with opaque inputs whose whole result goes to
/// [`black_box`].
pub struct Contender {
    /// The column heading.
    pub label: &'static str,
    /// One call.
    pub call: Box<dyn Fn()>,
    /// Times a batch of calls in its own way (made from a thread of a pool, see
    /// [`Contender::timed_by`]), or `None`.
    pub timed: Option<Box<dyn Fn(u64) -> Duration>>,
}

impl Contender {
    /// A contender labelled `label` that runs `call`.
    pub fn new(label: &'static str, call: impl Fn() + 'static) -> Self {
        Contender {
            label,
            call: Box::new(call),
            timed: None,
        }
    }

    /// The same contender, its batches of calls timed by `timed` (given the number of
    /// calls): to time calls made from one of a thread pool's threads, as in a training
    /// loop run with `pool.install`, rather than handed over to the pool one by one.
    #[must_use]
    pub fn timed_by(mut self, timed: impl Fn(u64) -> Duration + 'static) -> Self {
        self.timed = Some(Box::new(timed));
        self
    }

    /// The time of `iterations` calls.
    #[must_use]
    pub fn time(&self, iterations: u64) -> Duration {
        if let Some(timed) = &self.timed {
            return timed(iterations);
        }
        let call = &self.call;
        let start = Instant::now();
        for _ in 0..iterations {
            call();
        }
        start.elapsed()
    }
}

/// A ratio of two contenders' times to print, with the target for it if it has one.
pub struct Target {
    /// The contender timed (an index into [`Comparison::contenders`]).
    pub numerator: usize,
    /// The contender it is compared with.
    pub denominator: usize,
    /// The largest ratio that meets the target; `None` for a ratio shown for information.
    pub at_most: Option<f64>,
}

impl Target {
    /// The ratio of contender `numerator` to contender `denominator`, met at `limit` or
    /// below.
    #[must_use]
    pub const fn at_most(numerator: usize, denominator: usize, limit: f64) -> Self {
        Self {
            numerator,
            denominator,
            at_most: Some(limit),
        }
    }

    /// The ratio of contender `numerator` to contender `denominator`, shown for
    /// information.
    #[must_use]
    pub const fn shown(numerator: usize, denominator: usize) -> Self {
        Self {
            numerator,
            denominator,
            at_most: None,
        }
    }
}

/// Contenders computing the same gradient, and the targets for their ratios.
pub struct Comparison {
    /// A short name.
    pub name: &'static str,
    /// What is computed.
    pub formula: &'static str,
    /// The contenders, timed side by side.
    pub contenders: Vec<Contender>,
    /// The `_grad_into` calls of the `#[grad]` functions with run-time loops, each writing
    /// into a buffer it owns: their heap allocations per call are counted.
    pub into_calls: Vec<Contender>,
    /// The ratios to print.
    pub targets: Vec<Target>,
}

/// Every comparison, in the order of the tables.
#[must_use]
pub fn all() -> Vec<Comparison> {
    vec![
        moons::comparison(),
        moons::trained(),
        moons::all_on(),
        moons::scaled(1_000),
        moons::scaled(10_000),
        wide::comparison(),
        chain::comparison(),
        trip_count::comparison(),
        fixed_costs::comparison(),
    ]
}

/// A time per call with a unit that keeps 3 significant digits.
#[must_use]
pub fn time(nanos: f64) -> String {
    if nanos < 1e3 {
        format!("{nanos:.0} ns")
    } else if nanos < 1e4 {
        format!("{:.2} µs", nanos / 1e3)
    } else if nanos < 1e6 {
        format!("{:.1} µs", nanos / 1e3)
    } else {
        format!("{:.2} ms", nanos / 1e6)
    }
}

/// Prints each contender's time (`nanos`, as [`measure`] gives them) and each target's
/// ratio; returns whether every target with a limit is met.
#[must_use]
pub fn report(comparison: &Comparison, nanos: &[f64]) -> bool {
    let mut all_met = true;
    for (contender, t) in comparison.contenders.iter().zip(nanos) {
        println!("  {:30} {:>10}", contender.label, time(*t));
    }
    for target in &comparison.targets {
        let ratio = nanos[target.numerator] / nanos[target.denominator];
        let verdict = match target.at_most {
            Some(at_most) => {
                let met = ratio <= at_most;
                all_met &= met;
                format!(
                    "target ≤ {at_most}x: {}",
                    if met { "met" } else { "NOT met" }
                )
            }
            None => "for comparison".to_string(),
        };
        println!(
            "  {} / {} = {ratio:.2}x  ({verdict})",
            comparison.contenders[target.numerator].label,
            comparison.contenders[target.denominator].label,
        );
    }
    all_met
}

/// Calls per batch of `contender`: grown until a batch lasts `batch`.
#[must_use]
pub fn calibrate(contender: &Contender, batch: Duration) -> u64 {
    let mut iterations = 1;
    loop {
        let elapsed = contender.time(iterations);
        if elapsed >= batch || iterations >= 1 << 40 {
            return iterations;
        }
        let scale = (batch.as_secs_f64() / elapsed.as_secs_f64().max(1e-9)).clamp(1.5, 16.0);
        iterations = ((iterations as f64) * scale).ceil() as u64;
    }
}

/// The median nanoseconds per call of each contender, over `rounds` rounds; each round
/// times one batch (about `batch` long) of every contender, in an order that rotates from
/// round to round, so that a slow spell of the machine falls on all of them alike.
#[must_use]
pub fn measure(comparison: &Comparison, rounds: usize, batch: Duration) -> Vec<f64> {
    let contenders = &comparison.contenders;
    let iterations: Vec<u64> = contenders.iter().map(|c| calibrate(c, batch)).collect();
    let mut samples = vec![Vec::with_capacity(rounds); contenders.len()];
    for round in 0..rounds {
        for k in 0..contenders.len() {
            let i = (k + round) % contenders.len();
            let elapsed = contenders[i].time(iterations[i]);
            samples[i].push(elapsed.as_secs_f64() * 1e9 / iterations[i] as f64);
        }
    }
    samples
        .into_iter()
        .map(|mut s| {
            s.sort_by(f64::total_cmp);
            s[s.len() / 2]
        })
        .collect()
}

/// The moons loss of `examples/moons.rs`: samples as slices, as arrays, and by hand.
pub mod moons {
    use super::moons_model::{
        init, loss_backprop, loss_backprop_dense, loss_grad, loss_slices_grad,
        loss_slices_grad_into, loss_slices_reassociate_grad, moons, Mlp, HIDDEN, INPUTS, L1, L2,
        L3, PARAMS, SAMPLES,
    };
    use super::*;

    /// The contenders: `loss_slices_grad` (samples as slices), `loss_grad` (samples as
    /// `[_; 100]` arrays), the dense hand-written backpropagation,
    /// `loss_slices_grad_into` into a buffer zeroed before each call, the generated
    /// code written out by hand with two other layouts of its saved values
    /// ([`layouts`]), the same loss as a method of the model as a struct,
    /// `Mlp::loss_grad`, the sparse hand-written backpropagation, and the one vectorised
    /// across samples ([`crate::lanes`]).
    #[must_use]
    pub fn comparison() -> Comparison {
        at(
            "moons",
            "micrograd's moons loss, 2-16-16-1 ReLU MLP, 337 parameters, 100 samples",
            init(7),
        )
    }

    /// The same at the end of training (100 steps of gradient descent, as in
    /// `examples/moons.rs`), where most samples' hinge and many units are inactive: what
    /// the sparse reverse sweep and the hand-written backpropagation that skips them gain.
    #[must_use]
    pub fn trained() -> Comparison {
        let (xs, ys) = moons(1337);
        let mut p = init(7);
        for k in 0..100 {
            let (_, grad) = loss_grad(&p, &xs, &ys);
            let rate = 1.0 - 0.9 * f64::from(k) / 100.0;
            for (q, g) in p.iter_mut().zip(grad) {
                *q -= rate * g;
            }
        }
        at(
            "moons_trained",
            "the moons loss after 100 steps of training (sparse: most hinges inactive)",
            p,
        )
    }

    /// The same where no adjoint is zero: every unit on (positive biases, positive
    /// second-layer weights) and every hinge active (output weights near 0): the dense
    /// case, where the sparse sweep's tests are pure overhead.
    #[must_use]
    pub fn all_on() -> Comparison {
        let mut p = init(7);
        for j in 0..HIDDEN {
            p[L1 + j * (INPUTS + 1) + INPUTS] = 4.0;
            let unit = L2 + j * (HIDDEN + 1);
            for k in 0..HIDDEN {
                p[unit + k] = p[unit + k].abs();
            }
            p[unit + HIDDEN] = 1.0;
            p[L3 + j] *= 1e-3;
        }
        let (xs, ys) = moons(1337);
        let act = |x: [f64; 2]| super::moons_model::forward(&p, x);
        assert!(
            xs.iter().zip(&ys).all(|(&x, y)| {
                let a = act(x);
                a.a1.iter().chain(&a.a2).all(|&v| v > 0.0) && 1.0 - y * a.score > 0.0
            }),
            "every unit on and every hinge active"
        );
        at(
            "moons_all_on",
            "the moons loss where every unit is on and every hinge active (no zero adjoint)",
            p,
        )
    }

    /// The moons loss and its gradient over several blocks of 100 samples, by the
    /// hand-written backpropagation (`sparse`: the one that skips) of each block: the mean
    /// of the blocks' losses and gradients, which is the loss over all samples.
    #[must_use]
    pub fn by_blocks(p: &[f64; PARAMS], blocks: &[Block], sparse: bool) -> (f64, [f64; PARAMS]) {
        let mut value = 0.0;
        let mut gradient = [0.0; PARAMS];
        for (xs, ys) in blocks {
            let (v, g) = if sparse {
                loss_backprop(p, xs, ys)
            } else {
                loss_backprop_dense(p, xs, ys)
            };
            value += v;
            for (total, g) in gradient.iter_mut().zip(g) {
                *total += g;
            }
        }
        let scale = 1.0 / blocks.len() as f64;
        for total in &mut gradient {
            *total *= scale;
        }
        (value * scale, gradient)
    }

    /// `count` copies of the moons data set ([`SAMPLES`] each) with fresh noise, and all
    /// their samples and labels in one run each.
    #[must_use]
    pub fn blocks(count: usize) -> (Vec<Block>, Vec<[f64; 2]>, Vec<f64>) {
        let blocks: Vec<Block> = (0..count).map(|k| moons(1337 + k as u64)).collect();
        let xs = blocks.iter().flat_map(|b| b.0).collect();
        let ys = blocks.iter().flat_map(|b| b.1).collect();
        (blocks, xs, ys)
    }

    /// One copy of the moons data set: its samples and their labels.
    pub type Block = ([[f64; 2]; SAMPLES], [f64; SAMPLES]);

    /// The slice loss on `samples` samples (copies of the moons data set with fresh
    /// noise), against the hand-written backpropagations run on each block of 100
    /// samples and averaged (the same mean loss and gradient), the batched one
    /// ([`crate::batched`]) and the one vectorised across samples ([`crate::lanes`]), both
    /// over all samples at once: how the time grows with the data, and where the saved
    /// values move from the cache to memory (the workspace holds 520 bytes a sample).
    #[must_use]
    pub fn scaled(samples: usize) -> Comparison {
        let (blocks, xs, ys) = blocks(samples / SAMPLES);
        let (blocks, xs, ys) = (Rc::new(blocks), Rc::new(xs), Rc::new(ys));
        let p = init(7);
        let batched = {
            let (xs, ys) = (Rc::clone(&xs), Rc::clone(&ys));
            move || {
                black_box(&crate::batched::loss_and_gradient(
                    HIDDEN,
                    super::moons_model::ALPHA,
                    black_box(&p),
                    black_box(&xs[..]),
                    black_box(&ys[..]),
                ));
            }
        };
        let slices = |f: LossGradient<PARAMS>| {
            let (xs, ys) = (Rc::clone(&xs), Rc::clone(&ys));
            move || {
                black_box(&f(black_box(&p), black_box(&xs[..]), black_box(&ys[..])));
            }
        };
        let by_blocks = |sparse: bool| {
            let blocks = Rc::clone(&blocks);
            move || {
                black_box(&by_blocks(black_box(&p), black_box(&blocks), sparse));
            }
        };
        let (name, formula) = match samples {
            1_000 => ("moons_1000", "the moons loss over slices of 1,000 samples"),
            _ => (
                "moons_10000",
                "the moons loss over slices of 10,000 samples",
            ),
        };
        Comparison {
            name,
            formula,
            contenders: vec![
                Contender::new("#[grad] slices", slices(loss_slices_grad)),
                Contender::new("hand-written dense", by_blocks(false)),
                Contender::new("hand-written sparse", by_blocks(true)),
                Contender::new("hand-written batched", batched),
                Contender::new(
                    "hand-written lanes",
                    slices(crate::lanes::loss_and_gradient),
                ),
                Contender::new(
                    "#[grad(reassociate)] slices",
                    slices(loss_slices_reassociate_grad),
                ),
            ],
            into_calls: Vec::new(),
            targets: vec![
                Target::at_most(0, 1, 1.2),
                Target::shown(0, 2),
                Target::at_most(0, 3, 1.2),
                Target::shown(0, 4),
                Target::at_most(5, 4, 1.2),
                Target::shown(5, 2),
            ],
        }
    }

    fn at(name: &'static str, formula: &'static str, p: [f64; PARAMS]) -> Comparison {
        let (xs, ys) = moons(1337);
        let (xs_vec, ys_vec) = (Rc::new(xs.to_vec()), Rc::new(ys.to_vec()));
        let slices = {
            let (xs, ys) = (Rc::clone(&xs_vec), Rc::clone(&ys_vec));
            move || {
                black_box(&loss_slices_grad(
                    black_box(&p),
                    black_box(&xs[..]),
                    black_box(&ys[..]),
                ));
            }
        };
        let constant = move || {
            black_box(&loss_grad(black_box(&p), black_box(&xs), black_box(&ys)));
        };
        let dense = move || {
            black_box(&loss_backprop_dense(
                black_box(&p),
                black_box(&xs),
                black_box(&ys),
            ));
        };
        let sparse = move || {
            black_box(&loss_backprop(
                black_box(&p),
                black_box(&xs),
                black_box(&ys),
            ));
        };
        let layout = |f: LossGradient<PARAMS>| {
            let (xs, ys) = (Rc::clone(&xs_vec), Rc::clone(&ys_vec));
            move || {
                black_box(&f(black_box(&p), black_box(&xs[..]), black_box(&ys[..])));
            }
        };
        let lanes = layout(crate::lanes::loss_and_gradient);
        let into = || {
            let (xs_vec, ys_vec) = (Rc::clone(&xs_vec), Rc::clone(&ys_vec));
            let buffer = RefCell::new([0.0; PARAMS]);
            move || {
                let mut buffer = buffer.borrow_mut();
                buffer.fill(0.0);
                black_box(loss_slices_grad_into(
                    black_box(&p),
                    black_box(&xs_vec[..]),
                    black_box(&ys_vec[..]),
                    &mut buffer,
                ));
                black_box(&*buffer);
            }
        };
        let structured = {
            let (xs, ys) = (Rc::clone(&xs_vec), Rc::clone(&ys_vec));
            let model = Mlp::from_flat(&p);
            move || {
                black_box(&black_box(&model).loss_grad(black_box(&xs[..]), black_box(&ys[..])));
            }
        };
        let struct_into = {
            let (xs, ys) = (Rc::clone(&xs_vec), Rc::clone(&ys_vec));
            let model = Mlp::from_flat(&p);
            let buffer = RefCell::new(Mlp::from_flat(&[0.0; PARAMS]));
            move || {
                let mut buffer = buffer.borrow_mut();
                black_box(black_box(&model).loss_grad_into(
                    black_box(&xs[..]),
                    black_box(&ys[..]),
                    &mut buffer,
                ));
                black_box(&*buffer);
            }
        };
        Comparison {
            name,
            formula,
            contenders: vec![
                Contender::new("#[grad] slices", slices),
                Contender::new("#[grad] constant", constant),
                Contender::new("hand-written dense", dense),
                Contender::new("slices _grad_into", into()),
                Contender::new("slab layout", layout(super::layouts::slab)),
                Contender::new("frame layout", layout(super::layouts::frames)),
                Contender::new("#[grad] struct Mlp", structured),
                Contender::new("hand-written sparse", sparse),
                Contender::new("hand-written lanes", lanes),
                Contender::new(
                    "#[grad(reassociate)] slices",
                    layout(loss_slices_reassociate_grad),
                ),
            ],
            into_calls: vec![
                Contender::new("loss_slices_grad_into", into()),
                Contender::new("Mlp::loss_grad_into", struct_into),
            ],
            targets: vec![
                Target::at_most(0, 1, 1.2),
                Target::at_most(0, 2, 1.2),
                Target::shown(4, 1),
                Target::shown(5, 1),
                Target::at_most(6, 0, 1.05),
                Target::at_most(1, 7, 1.15),
                Target::shown(0, 8),
                Target::shown(9, 8),
                Target::shown(9, 7),
            ],
        }
    }
}

/// A loss over samples written as an iterator chain and as an index loop.
pub mod chain {
    use super::*;
    use autodiff::prelude::*;

    /// Samples.
    pub const SAMPLES: usize = 1000;

    /// The mean squared error of a tanh unit, as an iterator chain.
    #[grad(wrt(w))]
    pub fn chain_loss(w: &[f64; 3], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
        xs.iter()
            .zip(ys)
            .map(|(x, &y)| ((w[0] * x[0] + w[1] * x[1] + w[2]).tanh() - y).powi(2))
            .sum::<f64>()
            / xs.len() as f64
    }

    /// The same loss as an index loop.
    #[grad(wrt(w))]
    #[allow(clippy::needless_range_loop)]
    pub fn index_loss(w: &[f64; 3], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
        let mut total = 0.0;
        for i in 0..xs.len() {
            total += ((w[0] * xs[i][0] + w[1] * xs[i][1] + w[2]).tanh() - ys[i]).powi(2);
        }
        total / xs.len() as f64
    }

    /// The same loss and gradient by hand: one pass, the gradient accumulated as it goes.
    #[must_use]
    pub fn hand_written(w: &[f64; 3], xs: &[[f64; 2]], ys: &[f64]) -> (f64, [f64; 3]) {
        let mut total = 0.0;
        let mut grad = [0.0; 3];
        let scale = 1.0 / xs.len() as f64;
        for (x, &y) in xs.iter().zip(ys) {
            let t = (w[0] * x[0] + w[1] * x[1] + w[2]).tanh();
            let e = t - y;
            total += e * e;
            let dz = 2.0 * e * (1.0 - t * t) * scale;
            grad[0] += dz * x[0];
            grad[1] += dz * x[1];
            grad[2] += dz;
        }
        (total * scale, grad)
    }

    /// The data: `n` points and noisy targets in (-1, 1).
    #[must_use]
    pub fn data(n: usize) -> (Vec<[f64; 2]>, Vec<f64>) {
        let xs: Vec<[f64; 2]> = (0..n)
            .map(|i| [(i as f64 * 0.7).sin(), (i as f64 * 0.3).cos()])
            .collect();
        let ys = xs
            .iter()
            .enumerate()
            .map(|(i, x)| (0.8 * x[0] - 0.5 * x[1] + 0.1 + 0.05 * (i as f64).sin()).tanh())
            .collect();
        (xs, ys)
    }

    /// The point where the gradient is taken.
    pub const W: [f64; 3] = [0.3, -0.2, 0.1];

    /// The contenders: the chain and the index loop (`_grad`, which allocates nothing for
    /// an array parameter), and the hand-written gradient.
    #[must_use]
    pub fn comparison() -> Comparison {
        let (xs, ys) = data(SAMPLES);
        let (xs, ys) = (Rc::new(xs), Rc::new(ys));
        let call = |f: LossGradient<3>| {
            let (xs, ys) = (Rc::clone(&xs), Rc::clone(&ys));
            move || {
                black_box(&f(black_box(&W), black_box(&xs[..]), black_box(&ys[..])));
            }
        };
        let into = |f: LossGradientInto<3>| {
            let (xs, ys) = (Rc::clone(&xs), Rc::clone(&ys));
            move || {
                let mut buffer = [0.0; 3];
                black_box(f(
                    black_box(&W),
                    black_box(&xs[..]),
                    black_box(&ys[..]),
                    &mut buffer,
                ));
                black_box(&buffer);
            }
        };
        Comparison {
            name: "chain",
            formula: "mean of (tanh(w0·x0 + w1·x1 + w2) - y)² over 1000 samples, wrt w",
            contenders: vec![
                Contender::new("iterator chain", call(chain_loss_grad)),
                Contender::new("index loop", call(index_loss_grad)),
                Contender::new("hand-written", call(hand_written)),
            ],
            into_calls: vec![
                Contender::new("chain_loss_grad_into", into(chain_loss_grad_into)),
                Contender::new("index_loss_grad_into", into(index_loss_grad_into)),
            ],
            targets: vec![Target::at_most(0, 1, 1.1)],
        }
    }
}

/// The same loops with a run-time and with a constant trip count.
pub mod trip_count {
    use super::*;
    use autodiff::prelude::*;

    /// The trip count of both.
    pub const STEPS: usize = 1000;

    /// A damped nonlinear recurrence run `n` times (`n` known at run time).
    #[grad]
    pub fn recurrence(a: f64, x: f64, n: usize) -> f64 {
        let mut y = x;
        for _ in 0..n {
            y = a * y + 0.1 * (x * y).sin();
        }
        y
    }

    /// The same recurrence run [`STEPS`] times, a constant.
    #[grad]
    pub fn recurrence_constant(a: f64, x: f64) -> f64 {
        let mut y = x;
        for _ in 0..STEPS {
            y = a * y + 0.1 * (x * y).sin();
        }
        y
    }

    /// A running, discounted sum over a slice of any length.
    #[grad]
    #[allow(clippy::needless_range_loop)]
    pub fn discounted(xs: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..xs.len() {
            s = 0.5 * s + (xs[i] * xs[i]).sin();
        }
        s
    }

    /// The same over an array of [`STEPS`] elements.
    #[grad]
    #[allow(clippy::needless_range_loop)]
    pub fn discounted_constant(xs: &[f64; STEPS]) -> f64 {
        let mut s = 0.0;
        for i in 0..STEPS {
            s = 0.5 * s + (xs[i] * xs[i]).sin();
        }
        s
    }

    /// The slice (and array) the discounted sums run over.
    #[must_use]
    pub fn samples() -> [f64; STEPS] {
        std::array::from_fn(|i| (i as f64 * 0.37).sin())
    }

    /// The contenders: the recurrence with `n = STEPS` and with `STEPS` constant, and the
    /// discounted sums over a slice and over an array, each through `_grad_into` into a
    /// buffer (so that neither side allocates the partial of `xs`); then the two run-time
    /// loops' generated code written out with the slab layout
    /// ([`layouts`]).
    #[must_use]
    pub fn comparison() -> Comparison {
        let xs = Rc::new(samples());
        let runtime_recurrence = || {
            let (mut da, mut dx) = (0.0, 0.0);
            black_box(recurrence_grad_into(
                black_box(0.9),
                black_box(0.5),
                black_box(STEPS),
                &mut da,
                &mut dx,
            ));
            black_box((da, dx));
        };
        let constant_recurrence = || {
            let (mut da, mut dx) = (0.0, 0.0);
            black_box(recurrence_constant_grad_into(
                black_box(0.9),
                black_box(0.5),
                &mut da,
                &mut dx,
            ));
            black_box((da, dx));
        };
        let slice = |xs: Rc<[f64; STEPS]>| {
            let buffer = RefCell::new([0.0; STEPS]);
            move || {
                let mut buffer = buffer.borrow_mut();
                buffer.fill(0.0);
                black_box(discounted_grad_into(black_box(&xs[..]), &mut buffer[..]));
                black_box(&*buffer);
            }
        };
        let array = {
            let xs = Rc::clone(&xs);
            let buffer = RefCell::new([0.0; STEPS]);
            move || {
                let mut buffer = buffer.borrow_mut();
                buffer.fill(0.0);
                black_box(discounted_constant_grad_into(black_box(&*xs), &mut buffer));
                black_box(&*buffer);
            }
        };
        let recurrence_layout = || {
            let (mut da, mut dx) = (0.0, 0.0);
            black_box(super::layouts::recurrence_slab(
                black_box(0.9),
                black_box(0.5),
                black_box(STEPS),
                &mut da,
                &mut dx,
            ));
            black_box((da, dx));
        };
        let slice_layout = {
            let xs = Rc::clone(&xs);
            let buffer = RefCell::new([0.0; STEPS]);
            move || {
                let mut buffer = buffer.borrow_mut();
                buffer.fill(0.0);
                black_box(super::layouts::discounted_slab(
                    black_box(&xs[..]),
                    &mut buffer[..],
                ));
                black_box(&*buffer);
            }
        };
        Comparison {
            name: "trip count",
            formula: "y ← a·y + 0.1·sin(x·y) 1000 times, wrt a and x; \
                      s ← s/2 + sin(xᵢ²) over 1000 elements, wrt xs",
            contenders: vec![
                Contender::new("recurrence, n", runtime_recurrence),
                Contender::new("recurrence, const", constant_recurrence),
                Contender::new("slice loop", slice(Rc::clone(&xs))),
                Contender::new("array loop", array),
                Contender::new("recurrence, slab", recurrence_layout),
                Contender::new("slice loop, slab", slice_layout),
            ],
            into_calls: vec![
                Contender::new("recurrence_grad_into", runtime_recurrence),
                Contender::new("discounted_grad_into", slice(xs)),
            ],
            targets: vec![
                Target::at_most(0, 1, 1.3),
                Target::at_most(2, 3, 1.3),
                Target::shown(4, 1),
                Target::shown(5, 3),
            ],
        }
    }
}

/// What a call costs beyond its arithmetic: the same three-element loop over a slice
/// (which takes a workspace from the pool and gives it back) and over an array (whose
/// values stay on the stack).
pub mod fixed_costs {
    use super::*;
    use autodiff::prelude::*;

    /// A running, discounted sum over a slice of any length. (`tanh` rather than
    /// [`super::trip_count`]'s `sin`: with `sin`, LLVM moves the value's `sin` calls after
    /// the sweep where the slice's loop is short, so they no longer pair with the
    /// partial's `cos` into one `sincos` call as they do in the array version; that
    /// difference, not the fixed costs, would then be measured.)
    #[grad]
    #[allow(clippy::needless_range_loop)]
    pub fn discounted(xs: &[f64]) -> f64 {
        let mut s = 0.0;
        for i in 0..xs.len() {
            s = 0.5 * s + (xs[i] * xs[i]).tanh();
        }
        s
    }

    /// The same over an array of three.
    #[grad]
    #[allow(clippy::needless_range_loop)]
    pub fn discounted_three(xs: &[f64; 3]) -> f64 {
        let mut s = 0.0;
        for i in 0..3 {
            s = 0.5 * s + (xs[i] * xs[i]).tanh();
        }
        s
    }

    /// The contenders: the discounted sum over a slice of three and over an array of
    /// three, through `_grad_into`; and a workspace taken from the pool and given back,
    /// alone. (The slice's gradient keeps its three frames in a stack buffer and takes no
    /// workspace: see the guide's "Loops".)
    #[must_use]
    pub fn comparison() -> Comparison {
        let xs = [0.3, -0.7, 1.1];
        let slice = move || {
            let mut buffer = [0.0; 3];
            black_box(discounted_grad_into(black_box(&xs[..]), &mut buffer[..]));
            black_box(buffer);
        };
        let array = move || {
            let mut buffer = [0.0; 3];
            black_box(discounted_three_grad_into(black_box(&xs), &mut buffer));
            black_box(buffer);
        };
        let pool = || {
            // Taken from the pool on first use, so one value is pushed and popped.
            let mut workspace = autodiff::__private::Workspace::take();
            workspace.push(black_box(1.0));
            black_box(workspace.pop());
            workspace.recycle();
        };
        Comparison {
            name: "fixed costs",
            formula: "s ← s/2 + tanh(xᵢ²) over 3 elements, wrt xs",
            contenders: vec![
                Contender::new("slice of 3", slice),
                Contender::new("array of 3", array),
                Contender::new("pool round trip", pool),
            ],
            into_calls: vec![Contender::new("discounted_grad_into", slice)],
            targets: vec![Target::at_most(0, 1, 1.15), Target::shown(2, 1)],
        }
    }
}

/// The wide network of [`crate::wide`] on 100 samples of the moons data set.
pub mod wide {
    use super::*;
    use crate::wide::{
        backprop, init, loss_grad, loss_grad_into, loss_lanes_grad, ALPHA, PARAMS, WIDTH,
    };

    /// The contenders: `#[grad]` over slices, the hand-written backpropagation a sample
    /// at a time (dense and sparse), and batched ([`crate::batched`]).
    #[must_use]
    pub fn comparison() -> Comparison {
        let (xs, ys) = super::moons_model::moons(1337);
        let (xs, ys) = (Rc::new(xs.to_vec()), Rc::new(ys.to_vec()));
        let p = Rc::new(init(7));
        let contender = |f: SliceLossGradient| {
            let (p, xs, ys) = (Rc::clone(&p), Rc::clone(&xs), Rc::clone(&ys));
            move || {
                black_box(&f(black_box(&p), black_box(&xs), black_box(&ys)));
            }
        };
        Comparison {
            name: "wide",
            formula: "the moons loss with 256 units per hidden layer (2-256-256-1, 66,817 \
                      parameters), 100 samples",
            contenders: vec![
                Contender::new("#[grad] slices", contender(loss_grad)),
                Contender::new(
                    "hand-written dense",
                    contender(|p, xs, ys| backprop(p, xs, ys, false)),
                ),
                Contender::new(
                    "hand-written sparse",
                    contender(|p, xs, ys| backprop(p, xs, ys, true)),
                ),
                Contender::new(
                    "hand-written batched",
                    contender(|p, xs, ys| {
                        crate::batched::loss_and_gradient(WIDTH, ALPHA, p, xs, ys)
                    }),
                ),
                Contender::new("#[grad(reassociate)] slices", contender(loss_lanes_grad)),
            ],
            into_calls: vec![Contender::new("wide::loss_grad_into", {
                let buffer = RefCell::new(vec![0.0; PARAMS]);
                move || {
                    let mut buffer = buffer.borrow_mut();
                    buffer.fill(0.0);
                    black_box(loss_grad_into(
                        black_box(&p),
                        black_box(&xs),
                        black_box(&ys),
                        &mut buffer,
                    ));
                    black_box(&*buffer);
                }
            })],
            targets: vec![
                Target::at_most(0, 1, 1.2),
                Target::shown(0, 2),
                Target::shown(0, 3),
                Target::shown(4, 3),
                Target::shown(4, 0),
            ],
        }
    }
}
