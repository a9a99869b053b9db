//! Criterion benchmarks of loops of run-time length against their constant-length twins,
//! one group per comparison of `autodiff_bench::runtime_lengths`.
//!
//! ```sh
//! cargo bench -p autodiff-bench --bench runtime_lengths
//! cargo bench -p autodiff-bench --bench runtime_lengths -- moons/   # one comparison
//! ```
//!
//! `examples/runtime_lengths.rs` gives the interleaved side-by-side ratios.

use std::time::Duration;

use autodiff_bench::runtime_lengths::all;
use criterion::{criterion_group, criterion_main, Criterion};

fn runtime_lengths(criterion: &mut Criterion) {
    for comparison in all() {
        let mut group = criterion.benchmark_group(comparison.name);
        group
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(1))
            .sample_size(20);
        for contender in &comparison.contenders {
            group.bench_function(contender.label, |b| {
                b.iter_custom(|iterations| contender.time(iterations));
            });
        }
        group.finish();
    }
}

criterion_group!(benches, runtime_lengths);
criterion_main!(benches);
