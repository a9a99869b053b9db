//! Jacobians, side by side in one process: `#[grad(jacobian)]`'s `_jacobian` against a
//! hand-written Jacobian, against `_jvp` called once per input by the caller, against
//! `_vjp` called once per output, and against `num-dual`'s `jacobian` (vector dual
//! numbers), on a dense function of 10 inputs and 10 outputs and on least-squares
//! residuals (2 parameters, 250 observations). Interleaved rounds, medians.
//!
//! ```sh
//! cargo run --release -p autodiff-bench --example jacobian
//! ```

use std::hint::black_box;
use std::time::Duration;

use autodiff_bench::jacobians::{
    dense, dense_by_hand, dense_dual, dense_jacobian, dense_jvp, dense_vjp, residuals,
    residuals_by_hand, residuals_jacobian, residuals_jvp, N,
};
use nalgebra::SVector;
use num_dual::DualSVec64;

const ROUNDS: usize = 25;
const BATCH: Duration = Duration::from_millis(4);

/// Median nanoseconds per call of each closure, timed in interleaved rounds.
fn race(runs: &[&dyn Fn()]) -> Vec<f64> {
    autodiff_bench::race(runs, ROUNDS, BATCH)
}

fn main() {
    let x: [f64; N] = std::array::from_fn(|i| 0.3 - 0.07 * i as f64);
    // The same Jacobian every way, checked before it is timed.
    let (_, j) = dense_jacobian(x);
    let (_, hand) = dense_by_hand(x);
    let (_, nd) = num_dual::jacobian(
        |v: SVector<DualSVec64<N>, N>| SVector::from(dense_dual(v.as_slice())),
        &SVector::from(x),
    );
    let mut worst = 0.0f64;
    for i in 0..N {
        for k in 0..N {
            worst = worst
                .max((j[i][k] - hand[i][k]).abs())
                .max((j[i][k] - nd[(i, k)]).abs());
        }
    }
    let basis = |k: usize| -> [f64; N] { std::array::from_fn(|i| f64::from(u8::from(i == k))) };
    let times = race(&[
        &|| {
            black_box(&dense_jacobian(black_box(x)));
        },
        &|| {
            black_box(&dense_by_hand(black_box(x)));
        },
        &|| {
            for k in 0..N {
                black_box(&dense_jvp(black_box(x), basis(k)));
            }
        },
        &|| {
            for k in 0..N {
                let mut d = [0.0; N];
                black_box(&dense_vjp(black_box(x), basis(k), &mut d));
                black_box(&d);
            }
        },
        &|| {
            black_box(&num_dual::jacobian(
                |v: SVector<DualSVec64<N>, N>| SVector::from(dense_dual(v.as_slice())),
                &SVector::from(*black_box(&x)),
            ));
        },
        &|| {
            black_box(&dense(black_box(x)));
        },
    ]);
    println!("| workload | _jacobian | hand-written | n × _jvp | m × _vjp | num-dual | primal | _jacobian / hand | n × _jvp / _jacobian | m × _vjp / _jacobian | num-dual / _jacobian | largest difference |");
    println!(
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    );
    let [a, h, f, r, d, p] = [times[0], times[1], times[2], times[3], times[4], times[5]];
    println!(
        "| dense 10 → 10 | {a:.0} ns | {h:.0} ns | {f:.0} ns | {r:.0} ns | {d:.0} ns | {p:.0} ns | {:.2}x | {:.2}x | {:.2}x | {:.2}x | {worst:.0e} |",
        a / h,
        f / a,
        r / a,
        d / a
    );

    // Residuals: 2 parameters, 250 observations.
    let xs: Vec<f64> = (0..250).map(|i| 10.0 + 2.0 * i as f64).collect();
    let ys: Vec<f64> = xs
        .iter()
        .enumerate()
        .map(|(i, x)| 240.0 * (1.0 - (-5.5e-4 * x).exp()) + 0.01 * (i % 7) as f64)
        .collect();
    let b = [250.0, 5e-4];
    let (_, j) = residuals_jacobian(b, &xs, &ys);
    let (_, hand) = residuals_by_hand(b, &xs, &ys);
    let worst = j
        .iter()
        .zip(&hand)
        .flat_map(|(a, b)| a.iter().zip(b).map(|(a, b)| (a - b).abs()))
        .fold(0.0, f64::max);
    let times = race(&[
        &|| {
            black_box(&residuals_jacobian(black_box(b), &xs, &ys));
        },
        &|| {
            black_box(&residuals_by_hand(black_box(b), &xs, &ys));
        },
        &|| {
            black_box(&residuals_jvp(black_box(b), &xs, &ys, [1.0, 0.0]));
            black_box(&residuals_jvp(black_box(b), &xs, &ys, [0.0, 1.0]));
        },
        &|| {
            black_box(&residuals(black_box(b), &xs, &ys));
        },
    ]);
    let [a, h, f, p] = [times[0], times[1], times[2], times[3]];
    println!(
        "| residuals 2 → 250 | {:.1} µs | {:.1} µs | {:.1} µs | | | {:.1} µs | {:.2}x | {:.2}x | | | {worst:.0e} |",
        a / 1e3,
        h / 1e3,
        f / 1e3,
        p / 1e3,
        a / h,
        f / a
    );
}
