//! Forward mode of the written-out Rosenbrock function against hand-written forward modes,
//! to see where the `_jvp / primal` ratio comes from: one directional derivative per call,
//! medians of 31 interleaved rounds of 2·10⁶ calls, each contender behind a call that is
//! not inlined and takes the point and the direction as arrays.
//!
//! - `primal`: the function, its ten scalars read from the array;
//! - `_jvp`: `#[grad(jvp)]`'s, the same way;
//! - written order, array: a hand-written forward mode that keeps the function's order of
//!   operations (the value's bits) and the same tangent rules (`2·u·u̇` for `u²`, the
//!   tangents summed in the value's order), in a loop over the array;
//! - written order, scalars: the same, reading the ten scalars as `_jvp` does;
//! - reordered: by hand with the sums in another order (`v += 100u² + w²`) and the factor
//!   2 of every square's derivative taken out of the tangent's sum, which changes the
//!   value's bits: what no transformation that keeps them may do.
//!
//! ```sh
//! cargo run --release -p autodiff-bench --example rosenbrock_forward
//! ```
#![allow(clippy::suboptimal_flops, clippy::too_many_arguments)]

use autodiff_bench::written_out::{rosenbrock_jvp_arrays, rosenbrock_primal};
use std::hint::black_box;
use std::time::Instant;

const ROUNDS: usize = 31;
const CALLS: usize = 2_000_000;

#[inline(never)]
fn primal(x: &[f64; 10], _: &[f64; 10]) -> (f64, f64) {
    (rosenbrock_primal(x), 0.0)
}

#[inline(never)]
fn generated(x: &[f64; 10], t: &[f64; 10]) -> (f64, f64) {
    rosenbrock_jvp_arrays(x, t)
}

/// Forward mode by hand, in the function's order of operations.
#[inline(always)]
fn written_order(x: [f64; 10], t: [f64; 10]) -> (f64, f64) {
    let (mut v, mut d) = (0.0, 0.0);
    for i in 0..9 {
        let u = x[i + 1] - x[i] * x[i];
        let w = 1.0 - x[i];
        v += 100.0 * (u * u);
        v += w * w;
        let du = t[i + 1] - (2.0 * x[i]) * t[i];
        d += 100.0 * ((2.0 * u) * du);
        d += (2.0 * w) * (-t[i]);
    }
    (v, d)
}

#[inline(never)]
fn written_order_array(x: &[f64; 10], t: &[f64; 10]) -> (f64, f64) {
    written_order(*x, *t)
}

/// [`written_order`] taking ten scalars and ten tangents, as `rosenbrock_jvp` does.
#[inline(always)]
fn written_order_of_scalars(
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
    t: [f64; 10],
) -> (f64, f64) {
    written_order([x0, x1, x2, x3, x4, x5, x6, x7, x8, x9], t)
}

#[inline(never)]
fn written_order_scalars(x: &[f64; 10], t: &[f64; 10]) -> (f64, f64) {
    let [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9] = *x;
    written_order_of_scalars(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, *t)
}

/// By hand with the sums reordered and the factor 2 taken out of the tangent's sum.
#[inline(never)]
fn reordered(x: &[f64; 10], t: &[f64; 10]) -> (f64, f64) {
    let (mut v, mut d) = (0.0, 0.0);
    for i in 0..9 {
        let u = x[i + 1] - x[i] * x[i];
        let w = 1.0 - x[i];
        v += 100.0 * u * u + w * w;
        let du = t[i + 1] - 2.0 * x[i] * t[i];
        d += 100.0 * u * du - w * t[i];
    }
    (v, 2.0 * d)
}

type Contender = (&'static str, fn(&[f64; 10], &[f64; 10]) -> (f64, f64));

fn main() {
    let x: [f64; 10] = std::array::from_fn(|i| 0.3 + 0.1 * i as f64);
    let t: [f64; 10] = std::array::from_fn(|i| 0.5 - 0.25 * (i % 5) as f64);
    let contenders: [Contender; 5] = [
        ("primal", primal),
        ("_jvp", generated),
        ("written order, array", written_order_array),
        ("written order, scalars", written_order_scalars),
        ("reordered", reordered),
    ];
    let (value, tangent) = generated(&x, &t);
    for (name, f) in &contenders[2..] {
        let (v, d) = f(&x, &t);
        assert!(
            (v - value).abs() <= 1e-12 * value.abs(),
            "{name}: value {v}"
        );
        assert!(
            (d - tangent).abs() <= 1e-12 * tangent.abs(),
            "{name}: tangent {d}"
        );
    }
    let mut samples = vec![Vec::with_capacity(ROUNDS); contenders.len()];
    for _ in 0..ROUNDS {
        for ((_, f), samples) in contenders.iter().zip(&mut samples) {
            let start = Instant::now();
            for _ in 0..CALLS {
                black_box(f(black_box(&x), black_box(&t)));
            }
            samples.push(start.elapsed().as_secs_f64() * 1e9 / CALLS as f64);
        }
    }
    let medians: Vec<f64> = samples
        .iter_mut()
        .map(|s| {
            s.sort_by(f64::total_cmp);
            s[s.len() / 2]
        })
        .collect();
    println!("| contender | ns per call | / primal |\n| --- | ---: | ---: |");
    for ((name, _), ns) in contenders.iter().zip(&medians) {
        println!("| {name} | {ns:.2} | {:.2}x |", ns / medians[0]);
    }
}
