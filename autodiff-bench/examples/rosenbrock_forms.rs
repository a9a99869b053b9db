//! The written-out Rosenbrock function in three forms that users write — `powi`, products,
//! and a loop over a local array — against the hand-written loop gradient of
//! `workloads::rosenbrock`: instructions retired per call (from the hardware counter,
//! where the kernel allows it, or with `--callgrind` from valgrind, the example run alone
//! for one form: `rosenbrock_forms <form> <calls>`) and time per call, the least of 5
//! batches of 10⁶ calls.
//!
//! Then each form again, called directly (so that it may be inlined) from a loop that
//! computes the ten arguments from the loop index and sums the results, as a user's
//! optimizer or sampler does: the least of 5 batches of 10⁶ iterations, and the ratio
//! to the hand-written gradient in the same loop.
//!
//! ```sh
//! cargo run --release -p autodiff-bench --example rosenbrock_forms [-- --callgrind]
//! ```
#![allow(clippy::suboptimal_flops, clippy::too_many_arguments)]

use autodiff::prelude::*;
use autodiff_bench::callgrind;
use autodiff_bench::workloads::rosenbrock::hand_written;
use autodiff_bench::written_out::rosenbrock_generated;
use std::hint::black_box;
/// `100·(x₁ - x₀²)² + (1 - x₀)² + …` with products (the `rosenbrock` workload writes it
/// with `powi`).
#[grad]
pub fn r_mul(
    x0: f64,
    x1: f64,
    x2: f64,
    x3: f64,
    x4: f64,
    x5: f64,
    x6: f64,
    x7: f64,
    x8: f64,
    x9: f64,
) -> f64 {
    100.0 * (x1 - x0 * x0) * (x1 - x0 * x0)
        + (1.0 - x0) * (1.0 - x0)
        + 100.0 * (x2 - x1 * x1) * (x2 - x1 * x1)
        + (1.0 - x1) * (1.0 - x1)
        + 100.0 * (x3 - x2 * x2) * (x3 - x2 * x2)
        + (1.0 - x2) * (1.0 - x2)
        + 100.0 * (x4 - x3 * x3) * (x4 - x3 * x3)
        + (1.0 - x3) * (1.0 - x3)
        + 100.0 * (x5 - x4 * x4) * (x5 - x4 * x4)
        + (1.0 - x4) * (1.0 - x4)
        + 100.0 * (x6 - x5 * x5) * (x6 - x5 * x5)
        + (1.0 - x5) * (1.0 - x5)
        + 100.0 * (x7 - x6 * x6) * (x7 - x6 * x6)
        + (1.0 - x6) * (1.0 - x6)
        + 100.0 * (x8 - x7 * x7) * (x8 - x7 * x7)
        + (1.0 - x7) * (1.0 - x7)
        + 100.0 * (x9 - x8 * x8) * (x9 - x8 * x8)
        + (1.0 - x8) * (1.0 - x8)
}
/// The same as a loop over a local array.
#[grad]
pub fn r_lets(
    x0: f64,
    x1: f64,
    x2: f64,
    x3: f64,
    x4: f64,
    x5: f64,
    x6: f64,
    x7: f64,
    x8: f64,
    x9: f64,
) -> f64 {
    let x = [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9];
    let mut f = 0.0;
    for i in 0..9 {
        let d = x[i + 1] - x[i] * x[i];
        let e = 1.0 - x[i];
        f += 100.0 * d * d + e * e;
    }
    f
}
/// A value and gradient of the 10-dimensional Rosenbrock function.
type Gradient = dyn Fn(&[f64; 10]) -> (f64, [f64; 10]);

/// The point every form is differentiated at.
const X: [f64; 10] = [0.5, -0.3, 1.2, 0.7, -1.1, 0.2, 0.9, -0.4, 1.5, 0.1];

/// Prints the instructions and time per call of `f` (instructions by callgrind when the
/// hardware counter is refused and `callgrind` is set).
fn count(name: &str, f: &Gradient, callgrind: bool) {
    let x = X;
    let mut counter = perf_event::Builder::new().build().ok();
    let n = 1_000_000u64;
    let mut best = u64::MAX;
    let mut time = f64::MAX;
    for _ in 0..5 {
        if let Some(c) = &mut counter {
            let _ = c.reset();
            let _ = c.enable();
        }
        let t = std::time::Instant::now();
        for _ in 0..n {
            black_box(f(black_box(&x)));
        }
        let e = t.elapsed().as_secs_f64();
        if let Some(c) = &mut counter {
            let _ = c.disable();
            best = best.min(c.read().unwrap_or(u64::MAX));
        }
        time = time.min(e);
    }
    let instructions = if best != u64::MAX {
        format!("{:.0}", best as f64 / n as f64)
    } else if let Some(count) = callgrind.then(|| callgrind::per_call(&[name])).flatten() {
        format!("{count:.0}")
    } else {
        "n/a".to_string()
    };
    println!(
        "{name:14} {instructions:>6} instructions  {:6.2} ns per call",
        time * 1e9 / n as f64
    );
}
/// The forms, by name, the hand-written gradient first.
fn forms() -> [(&'static str, &'static Gradient); 4] {
    [
        ("hand-written", &hand_written),
        ("powi", &rosenbrock_generated),
        ("mul", &|x| {
            let (v, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) =
                r_mul_grad(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9]);
            (v, [d0, d1, d2, d3, d4, d5, d6, d7, d8, d9])
        }),
        ("lets", &|x| {
            let (v, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) =
                r_lets_grad(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9]);
            (v, [d0, d1, d2, d3, d4, d5, d6, d7, d8, d9])
        }),
    ]
}

/// The time per iteration of a loop that computes the ten arguments from its index, calls
/// `f` (monomorphised, so it may be inlined) and adds up the value and the gradient. Not
/// inlined itself, so that each form's loop is compiled on its own.
#[inline(never)]
fn in_a_loop(f: impl Fn(&[f64; 10]) -> (f64, [f64; 10])) -> f64 {
    let n = 1_000_000usize;
    let mut time = f64::MAX;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let mut total = 0.0;
        for k in 0..black_box(n) {
            let x: [f64; 10] = std::array::from_fn(|i| X[i] + 1e-3 * ((k + 3 * i) % 17) as f64);
            let (value, gradient) = f(&x);
            total += value + gradient.iter().sum::<f64>();
        }
        black_box(total);
        time = time.min(t.elapsed().as_secs_f64());
    }
    time * 1e9 / n as f64
}

/// Each form called from a loop ([`in_a_loop`]), against the hand-written gradient there.
fn in_loops() {
    let mul = |x: &[f64; 10]| {
        let (v, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) =
            r_mul_grad(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9]);
        (v, [d0, d1, d2, d3, d4, d5, d6, d7, d8, d9])
    };
    let lets = |x: &[f64; 10]| {
        let (v, d0, d1, d2, d3, d4, d5, d6, d7, d8, d9) =
            r_lets_grad(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9]);
        (v, [d0, d1, d2, d3, d4, d5, d6, d7, d8, d9])
    };
    let hand = in_a_loop(hand_written);
    println!("\ncalled from a loop that computes the arguments (ns per iteration, ratio to hand-written):");
    println!("{:14} {hand:6.2} ns", "hand-written");
    for (name, time) in [
        ("powi", in_a_loop(rosenbrock_generated)),
        ("mul", in_a_loop(mul)),
        ("lets", in_a_loop(lets)),
    ] {
        println!("{name:14} {time:6.2} ns  {:.2}x", time / hand);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--").collect();
    if let [name, calls] = args.as_slice() {
        // One form alone, `calls` times: what `callgrind::per_call` counts.
        let form = forms().into_iter().find(|(n, _)| n == name);
        let (Some((_, f)), Ok(calls)) = (form, calls.parse::<u64>()) else {
            eprintln!("usage: rosenbrock_forms [--callgrind] | rosenbrock_forms <form> <calls>");
            std::process::exit(2);
        };
        for _ in 0..calls {
            black_box(f(black_box(&X)));
        }
        return;
    }
    let callgrind = args.iter().any(|a| a == "--callgrind");
    let (_, reference) = hand_written(&X);
    for (name, f) in forms() {
        let (_, got) = f(&X);
        assert!(
            got.iter()
                .zip(&reference)
                .all(|(a, b)| (a - b).abs() <= 1e-12 * b.abs().max(1.0)),
            "{name}: {got:?} against {reference:?}"
        );
    }
    for (name, f) in forms() {
        count(name, f, callgrind);
    }
    in_loops();
}
