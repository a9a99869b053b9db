//! Criterion benchmarks: every contender on every workload, one group per workload.
//!
//! ```sh
//! cargo bench -p autodiff-bench --bench contenders             # all (a few minutes)
//! cargo bench -p autodiff-bench --bench contenders -- deep/    # one workload
//! ```
//!
//! Short runs (0.5 s of warm-up, 1 s of measurement, 20 samples per benchmark) keep the
//! whole suite to a few minutes on a small machine; `examples/compare.rs` gives the
//! interleaved side-by-side table. The contenders are described in the crate's docs.

use std::time::Duration;

use autodiff_bench::{visit_all, Contender, Run, Visitor, Workload};
use criterion::{criterion_group, criterion_main, Criterion};

struct Bench<'c> {
    criterion: &'c mut Criterion,
}

impl Visitor for Bench<'_> {
    fn visit<const N: usize>(&mut self, w: &Workload<N>) {
        let mut group = self.criterion.benchmark_group(w.name);
        group
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(1))
            .sample_size(20);
        for contender in Contender::ALL {
            let run = w.run(contender);
            if let Run::Unsupported(_) = run {
                continue;
            }
            // The timing loop of `Run::time`, the one `examples/compare.rs` uses: calls
            // through a function pointer, opaque input and result.
            group.bench_function(contender.label(), |b| {
                b.iter_custom(|iterations| run.time(&w.point, iterations).unwrap_or_default());
            });
        }
        group.finish();
    }
}

fn contenders(criterion: &mut Criterion) {
    visit_all(&mut Bench { criterion });
}

criterion_group!(benches, contenders);
criterion_main!(benches);
