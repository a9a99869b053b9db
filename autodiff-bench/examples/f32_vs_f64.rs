//! The moons training loss over slices (`loss_slices` of `examples/moons_model`: a 2-16-16-1
//! ReLU network, 337 parameters) written once and differentiated by `#[grad]` twice, in
//! `f32` and in `f64`, timed side by side in one process.
//!
//! ```sh
//! cargo run --release -p autodiff-bench --example f32_vs_f64
//! ```
//!
//! For 100 and 10,000 samples, the `f32` and `f64` gradients (`loss_slices_grad_into`,
//! into a buffer zeroed before each call) and the primal losses are timed in interleaved
//! rounds: each round runs one batch of about 4 ms of every contender, the order rotating
//! from round to round, and a time is the median over the rounds. The ratio `f32 / f64` of
//! the medians is printed (below 1: `f32` is faster). Nothing is asserted.

use std::hint::black_box;
use std::time::{Duration, Instant};

/// Rounds; each time is a median over them.
const ROUNDS: usize = 21;
/// The length of one batch of calls.
const BATCH: Duration = Duration::from_millis(4);

macro_rules! moons_loss {
    ($module:ident, $real:ident) => {
        #[allow(clippy::needless_range_loop)]
        pub mod $module {
            use autodiff::prelude::*;

            pub const INPUTS: usize = 2;
            pub const HIDDEN: usize = 16;
            const L1: usize = 0;
            const L2: usize = L1 + HIDDEN * (INPUTS + 1);
            const L3: usize = L2 + HIDDEN * (HIDDEN + 1);
            /// The number of parameters: 337.
            pub const PARAMS: usize = L3 + HIDDEN + 1;
            const ALPHA: $real = 1e-4;

            /// `examples/moons_model`'s `loss_slices`, in `$real`.
            #[grad(wrt(p))]
            pub fn loss_slices(p: &[$real; PARAMS], xs: &[[$real; 2]], ys: &[$real]) -> $real {
                let mut data_loss = 0.0;
                for (x, &y) in xs.iter().zip(ys) {
                    let mut h1 = [0.0; HIDDEN];
                    for j in 0..HIDDEN {
                        let unit = L1 + j * (INPUTS + 1);
                        let mut act = p[unit + INPUTS];
                        for i in 0..INPUTS {
                            act += p[unit + i] * x[i];
                        }
                        h1[j] = act.relu();
                    }
                    let mut h2 = [0.0; HIDDEN];
                    for j in 0..HIDDEN {
                        let unit = L2 + j * (HIDDEN + 1);
                        let mut act = p[unit + HIDDEN];
                        for k in 0..HIDDEN {
                            act += p[unit + k] * h1[k];
                        }
                        h2[j] = act.relu();
                    }
                    let mut score = p[L3 + HIDDEN];
                    for k in 0..HIDDEN {
                        score += p[L3 + k] * h2[k];
                    }
                    data_loss += (1.0 - y * score).relu();
                }
                let mut penalty = 0.0;
                for q in 0..PARAMS {
                    penalty += p[q] * p[q];
                }
                data_loss / (xs.len() as $real) + ALPHA * penalty
            }
        }
    };
}

moons_loss!(single, f32);
moons_loss!(double, f64);

use double::PARAMS;

/// Two interleaved half-moons of `n` points (labels ±1), deterministic, and parameters
/// of the scale of a trained network's.
fn data(n: usize) -> (Vec<[f64; 2]>, Vec<f64>, [f64; PARAMS]) {
    let mut xs = Vec::with_capacity(n);
    let mut ys = Vec::with_capacity(n);
    for i in 0..n {
        let t = std::f64::consts::PI * (i / 2) as f64 / (n / 2).max(1) as f64;
        let wobble = 0.1 * ((i as f64) * 12.9898).sin();
        if i % 2 == 0 {
            xs.push([t.cos() + wobble, t.sin() - wobble]);
            ys.push(1.0);
        } else {
            xs.push([1.0 - t.cos() - wobble, 0.5 - t.sin() + wobble]);
            ys.push(-1.0);
        }
    }
    let p = std::array::from_fn(|q| ((q as f64 * 0.618_034).fract() - 0.5) * 0.6);
    (xs, ys, p)
}

/// A contender: a label and a closure that runs one call.
struct Contender<'a> {
    label: &'static str,
    call: Box<dyn FnMut() + 'a>,
}

/// The median time per call of each contender over interleaved rounds.
fn measure(contenders: &mut [Contender]) -> Vec<f64> {
    // Calls per batch: from one timed warm-up batch of each.
    let calls: Vec<u64> = contenders
        .iter_mut()
        .map(|c| {
            let start = Instant::now();
            let mut n = 0u64;
            while start.elapsed() < BATCH {
                (c.call)();
                n += 1;
            }
            n.max(1)
        })
        .collect();
    let mut samples = vec![Vec::with_capacity(ROUNDS); contenders.len()];
    for round in 0..ROUNDS {
        for offset in 0..contenders.len() {
            let index = (round + offset) % contenders.len();
            let start = Instant::now();
            for _ in 0..calls[index] {
                (contenders[index].call)();
            }
            samples[index].push(start.elapsed().as_nanos() as f64 / calls[index] as f64);
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

fn main() {
    println!(
        "moons loss over slices (337 parameters), `loss_slices_grad_into` and the primal, \
         f32 against f64: median of {ROUNDS} interleaved rounds of about {} ms each.\n",
        BATCH.as_millis()
    );
    for n in [100usize, 10_000] {
        let (xs, ys, p) = data(n);
        let xs32: Vec<[f32; 2]> = xs.iter().map(|x| x.map(|v| v as f32)).collect();
        let ys32: Vec<f32> = ys.iter().map(|&v| v as f32).collect();
        let p32: [f32; PARAMS] = p.map(|v| v as f32);
        let (mut g64, mut g32) = ([0.0f64; PARAMS], [0.0f32; PARAMS]);

        // The two gradients agree to f32 precision (a check that the comparison is fair).
        let value64 = double::loss_slices_grad_into(&p, &xs, &ys, &mut g64);
        let value32 = single::loss_slices_grad_into(&p32, &xs32, &ys32, &mut g32);
        let scale = g64.iter().fold(0.0f64, |m, g| m.max(g.abs()));
        let error = g32
            .iter()
            .zip(&g64)
            .fold(0.0f64, |m, (&a, &b)| m.max((f64::from(a) - b).abs()))
            / scale;

        let mut contenders = vec![
            Contender {
                label: "gradient f32",
                call: Box::new(|| {
                    g32 = [0.0; PARAMS];
                    black_box(single::loss_slices_grad_into(
                        black_box(&p32),
                        &xs32,
                        &ys32,
                        &mut g32,
                    ));
                }),
            },
            Contender {
                label: "gradient f64",
                call: Box::new(|| {
                    g64 = [0.0; PARAMS];
                    black_box(double::loss_slices_grad_into(
                        black_box(&p),
                        &xs,
                        &ys,
                        &mut g64,
                    ));
                }),
            },
            Contender {
                label: "primal f32",
                call: Box::new(|| {
                    black_box(single::loss_slices(black_box(&p32), &xs32, &ys32));
                }),
            },
            Contender {
                label: "primal f64",
                call: Box::new(|| {
                    black_box(double::loss_slices(black_box(&p), &xs, &ys));
                }),
            },
        ];
        let nanos = measure(&mut contenders);
        println!("{n} samples (loss {value64:.6} in f64, {value32:.6} in f32; largest gradient difference {error:.1e} of the largest partial):");
        for (contender, t) in contenders.iter().zip(&nanos) {
            println!("  {:14} {:>12.1} µs", contender.label, t / 1e3);
        }
        println!(
            "  gradient f32 / f64 = {:.2}x    primal f32 / f64 = {:.2}x\n",
            nanos[0] / nanos[1],
            nanos[2] / nanos[3]
        );
    }
}
