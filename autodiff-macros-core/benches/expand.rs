//! Expansion time of `#[grad]` against the size of the function: it should grow linearly,
//! so the time per operation (criterion's throughput, in elements) stays flat.
//!
//! `cargo bench -p autodiff-macros-core --bench expand`

use autodiff_macros_core::grad;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use proc_macro2::TokenStream;
use quote::quote;
use std::time::Duration;

/// A function of about `ops` operations: a chain of `let`s, each reading the previous two
/// (a multiplication, a `sin` and an addition per line).
fn generated_function(ops: usize) -> TokenStream {
    let mut body = quote!(let v0 = x; let v1 = y;);
    let lines = ops / 3;
    for i in 2..lines + 2 {
        let current = quote::format_ident!("v{}", i);
        let a = quote::format_ident!("v{}", i - 1);
        let b = quote::format_ident!("v{}", i - 2);
        body.extend(quote!(let #current = (#a * #b).sin() + #b;));
    }
    let last = quote::format_ident!("v{}", lines + 1);
    quote!(fn chain(x: f64, y: f64) -> f64 { #body #last })
}

fn expansion(c: &mut Criterion) {
    let mut group = c.benchmark_group("expand");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2));
    for ops in [10, 100, 1_000, 2_000, 5_000] {
        let item = generated_function(ops);
        group.throughput(Throughput::Elements(ops as u64));
        group.bench_with_input(BenchmarkId::from_parameter(ops), &item, |b, item| {
            b.iter(|| grad(TokenStream::new(), item.clone()));
        });
    }
    group.finish();
}

criterion_group!(benches, expansion);
criterion_main!(benches);
