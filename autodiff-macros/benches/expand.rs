//! Expansion time of `#[grad]` against the size of the function: it should grow linearly,
//! so the time per operation (criterion's throughput, in elements) stays flat.
//!
//! `cargo bench -p autodiff-macros --bench expand`
//!
//! A proc-macro crate exports only its macros, so the bench compiles the pipeline's modules
//! itself, at its own crate root, where their `crate::` paths resolve the same way.
#![allow(dead_code)]

#[path = "../src/args.rs"]
mod args;
#[path = "../src/check.rs"]
mod check;
#[path = "../src/codegen/mod.rs"]
mod codegen;
#[path = "../src/errors.rs"]
mod errors;
#[path = "../src/expand.rs"]
mod expand;
#[path = "../src/ir.rs"]
mod ir;
#[path = "../src/layout.rs"]
mod layout;
#[path = "../src/lower/mod.rs"]
mod lower;
#[path = "../src/ops.rs"]
mod ops;
#[path = "../src/types.rs"]
mod types;

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
            b.iter(|| expand::grad(TokenStream::new(), item.clone()));
        });
    }
    group.finish();
}

criterion_group!(benches, expansion);
criterion_main!(benches);
