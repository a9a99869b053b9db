//! Criterion benchmarks of the derivative modes beyond the gradient, each beside what it is
//! measured against: `_jacobian` against the hand-written Jacobian and against `_jvp` called
//! once per input; `_jvp` against the primal; `_hvp` against one `_grad`; `_hessian`
//! against one `_hvp` per input, on Rosenbrock and on a dense function of 10 inputs.
//!
//! ```sh
//! cargo bench -p autodiff-bench --bench modes
//! cargo bench -p autodiff-bench --bench modes -- jacobian/   # one group
//! ```
//!
//! `examples/jacobian.rs`, `examples/second_order.rs` and `examples/compare.rs --forward`
//! give the same comparisons as interleaved side-by-side ratios.

use std::hint::black_box;
use std::time::Duration;

use autodiff_bench::jacobians::{
    dense_by_hand, dense_jacobian, dense_jvp, residuals_by_hand, residuals_jacobian, N,
};
use autodiff_bench::workloads::rosenbrock;
use autodiff_bench::written_out as w;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion};

fn configured<'a>(
    criterion: &'a mut Criterion,
    name: &str,
) -> BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut group = criterion.benchmark_group(name);
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(1))
        .sample_size(20);
    group
}

/// The basis vector `k` of `N` numbers.
fn basis<const M: usize>(k: usize) -> [f64; M] {
    std::array::from_fn(|i| f64::from(u8::from(i == k)))
}

fn jacobians(criterion: &mut Criterion) {
    let x: [f64; N] = std::array::from_fn(|i| 0.3 - 0.07 * i as f64);
    let mut group = configured(criterion, "jacobian/dense 10→10");
    group.bench_function("_jacobian", |b| {
        b.iter(|| dense_jacobian(black_box(x)));
    });
    group.bench_function("hand-written", |b| b.iter(|| dense_by_hand(black_box(x))));
    group.bench_function("10 × _jvp", |b| {
        b.iter(|| {
            for k in 0..N {
                black_box(dense_jvp(black_box(x), basis(k)));
            }
        });
    });
    group.finish();

    let xs: Vec<f64> = (0..250).map(|i| 10.0 + 2.0 * f64::from(i)).collect();
    let ys: Vec<f64> = xs
        .iter()
        .map(|x| 240.0 * (1.0 - (-5.5e-4 * x).exp()))
        .collect();
    let p = [250.0, 5e-4];
    let mut group = configured(criterion, "jacobian/residuals 2→250");
    group.bench_function("_jacobian", |b| {
        b.iter(|| residuals_jacobian(black_box(p), &xs, &ys));
    });
    group.bench_function("hand-written", |b| {
        b.iter(|| residuals_by_hand(black_box(p), &xs, &ys));
    });
    group.finish();
}

fn rosenbrock_modes(criterion: &mut Criterion) {
    let x = rosenbrock::workload().point;
    let v: [f64; 10] = std::array::from_fn(|i| 0.5 - 0.25 * (i % 5) as f64);
    let mut group = configured(criterion, "forward/rosenbrock");
    group.bench_function("primal", |b| b.iter(|| w::rosenbrock_primal(black_box(&x))));
    group.bench_function("_jvp", |b| {
        b.iter(|| w::rosenbrock_jvp_arrays(black_box(&x), black_box(&v)));
    });
    group.finish();

    let mut group = configured(criterion, "second order/rosenbrock");
    group.bench_function("_grad", |b| {
        b.iter(|| w::rosenbrock_generated(black_box(&x)));
    });
    group.bench_function("_hvp", |b| {
        b.iter(|| w::rosenbrock_hvp_arrays(black_box(&x), black_box(&v)));
    });
    group.bench_function("_hessian", |b| {
        b.iter(|| w::rosenbrock_hessian_array(black_box(&x)));
    });
    group.bench_function("10 × _hvp", |b| {
        b.iter(|| {
            for k in 0..10 {
                black_box(w::rosenbrock_hvp_arrays(black_box(&x), &basis(k)));
            }
        });
    });
    group.finish();

    // A dense function of 10 inputs: every second partial nonzero.
    let x: [f64; 10] = std::array::from_fn(|i| 0.3 - 0.11 * i as f64);
    let mut group = configured(criterion, "second order/dense");
    group.bench_function("_hessian", |b| {
        b.iter(|| w::dense_hessian_array(black_box(&x)));
    });
    group.bench_function("10 × _hvp", |b| {
        b.iter(|| {
            for k in 0..10 {
                black_box(w::dense_hvp_arrays(black_box(&x), &basis(k)));
            }
        });
    });
    group.finish();
}

criterion_group!(benches, jacobians, rosenbrock_modes);
criterion_main!(benches);
