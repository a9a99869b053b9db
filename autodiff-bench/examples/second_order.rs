//! Second order, side by side in one process: `#[grad(hvp)]`'s `_hvp` against one `_grad`,
//! and `#[grad(hessian)]`'s `_hessian` against `num-dual`'s `hessian` (second-order
//! vector dual numbers) and against one `_hvp` per input, on Rosenbrock in 10 dimensions,
//! on `deep` (4 inputs, 200 shared `let`s) and on `dense` (10 inputs, every second partial
//! nonzero). Interleaved rounds, medians.
//!
//! ```sh
//! cargo run --release -p autodiff-bench --example second_order
//! ```

use std::hint::black_box;
use std::time::Duration;

use autodiff_bench::workloads::{deep, rosenbrock};
use autodiff_bench::written_out as w;
use nalgebra::SVector;
use num_dual::Dual2SVec64;

const ROUNDS: usize = 25;
const BATCH: Duration = Duration::from_millis(4);

/// Median nanoseconds per call of each closure, timed in interleaved rounds.
fn race(runs: &[&dyn Fn()]) -> Vec<f64> {
    autodiff_bench::race(runs, ROUNDS, BATCH)
}

/// `_hvp` on arrays: the value, the gradient and `H·v`.
type Hvp<const N: usize> = fn(&[f64; N], &[f64; N]) -> (f64, [f64; N], [f64; N]);
/// `_hessian` on an array: the value and `H`.
type Hessian<const N: usize> = fn(&[f64; N]) -> (f64, [[f64; N]; N]);

fn report<const N: usize>(
    name: &str,
    x: [f64; N],
    grad: fn(&[f64; N]) -> (f64, [f64; N]),
    hvp: Hvp<N>,
    hessian: Hessian<N>,
    dual: fn(&[Dual2SVec64<N>]) -> Dual2SVec64<N>,
) {
    // The same Hessian three ways.
    let (_, h) = hessian(&x);
    let (_, _, nd) = num_dual::hessian(
        |v: SVector<Dual2SVec64<N>, N>| dual(v.as_slice()),
        &SVector::from(x),
    );
    let mut worst = 0.0f64;
    for i in 0..N {
        let e: [f64; N] = std::array::from_fn(|j| f64::from(u8::from(i == j)));
        let (_, _, column) = hvp(&x, &e);
        for j in 0..N {
            let scale = nd[(i, j)].abs().max(1.0);
            worst = worst
                .max((h[i][j] - nd[(i, j)]).abs() / scale)
                .max((column[j] - nd[(j, i)]).abs() / scale);
        }
    }
    let v: [f64; N] = std::array::from_fn(|i| 0.5 - 0.25 * (i % 5) as f64);
    let times = race(&[
        &|| {
            black_box(&grad(black_box(&x)));
        },
        &|| {
            black_box(&hvp(black_box(&x), black_box(&v)));
        },
        &|| {
            black_box(&hessian(black_box(&x)));
        },
        &|| {
            black_box(&num_dual::hessian(
                |v: SVector<Dual2SVec64<N>, N>| dual(v.as_slice()),
                &SVector::from(*black_box(&x)),
            ));
        },
        &|| {
            for i in 0..N {
                let e: [f64; N] = std::array::from_fn(|j| f64::from(u8::from(i == j)));
                black_box(&hvp(black_box(&x), &e));
            }
        },
    ]);
    let [g, p, h, d, n] = [times[0], times[1], times[2], times[3], times[4]];
    println!(
        "| `{name}` | {g:.1} ns | {p:.1} ns | {h:.0} ns | {d:.0} ns | {n:.0} ns | {:.2}x | {:.2}x | {:.2}x | {worst:.0e} |",
        p / g,
        d / h,
        n / h
    );
}

/// The moons loss (337 parameters, 100 samples): one `_grad` against one `_hvp` along a
/// direction through every parameter, and `_hvp` against central differences of
/// `_grad` along it.
fn moons() {
    use autodiff_bench::runtime_lengths::moons_model::{init, loss_grad, loss_hvp, moons, PARAMS};
    let (xs, ys) = moons(1337);
    let p = init(7);
    let v: [f64; PARAMS] = std::array::from_fn(|i| 0.5 - 0.25 * (i % 5) as f64);
    let (_, _, hv) = loss_hvp(&p, &xs, &ys, &v);
    let h = 1e-6;
    let shifted = |s: f64| loss_grad(&std::array::from_fn(|i| p[i] + s * v[i]), &xs, &ys).1;
    let (up, down) = (shifted(h), shifted(-h));
    let scale = hv.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    let worst = (0..PARAMS)
        .map(|i| (hv[i] - (up[i] - down[i]) / (2.0 * h)).abs() / scale)
        .fold(0.0, f64::max);
    let times = race(&[
        &|| {
            black_box(&loss_grad(black_box(&p), &xs, &ys));
        },
        &|| {
            black_box(&loss_hvp(black_box(&p), &xs, &ys, black_box(&v)));
        },
    ]);
    println!(
        "| `moons` | {:.0} ns | {:.0} ns | | | | {:.2}x | | | {worst:.0e} (against differences of `_grad`) |",
        times[0],
        times[1],
        times[1] / times[0]
    );
}

fn main() {
    println!(
        "| workload | _grad | _hvp | _hessian | num-dual hessian | n × _hvp | _hvp / _grad | num-dual / _hessian | n × _hvp / _hessian | largest difference |"
    );
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    report(
        "rosenbrock",
        rosenbrock::workload().point,
        w::rosenbrock_generated,
        w::rosenbrock_hvp_arrays,
        w::rosenbrock_hessian_array,
        rosenbrock::with_dual,
    );
    report(
        "deep",
        deep::workload().point,
        w::deep_generated,
        w::deep_hvp_arrays,
        w::deep_hessian_array,
        deep::with_dual,
    );
    report(
        "dense",
        std::array::from_fn(|i| 0.3 - 0.11 * i as f64),
        w::dense_generated,
        w::dense_hvp_arrays,
        w::dense_hessian_array,
        w::dense_with_dual,
    );
    moons();
}
