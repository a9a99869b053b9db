//! Criterion benchmarks of `#[grad(parallel)]` on 1, 2, 4, … threads, one group per
//! comparison of `autodiff_bench::parallel`.
//!
//! ```sh
//! cargo bench -p autodiff-bench --features rayon --bench parallel
//! ```
//!
//! `examples/parallel.rs` gives the interleaved side-by-side ratios.

use std::time::Duration;

use autodiff_bench::parallel::all;
use criterion::{criterion_group, criterion_main, Criterion};

fn parallel(criterion: &mut Criterion) {
    for comparison in all() {
        let mut group = criterion.benchmark_group(comparison.name);
        group
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(2))
            .sample_size(10);
        for contender in &comparison.contenders {
            group.bench_function(contender.label, |b| {
                b.iter_custom(|iterations| contender.time(iterations));
            });
        }
        group.finish();
    }
}

criterion_group!(benches, parallel);
criterion_main!(benches);
