//! `#[grad(parallel)]` on every core: the moons loss (2-16-16-1, 337 parameters) over
//! 100 to 100,000 samples, and the network widened to 256 units per layer over 10,000
//! samples, each on 1, 2, 4, … threads, against `#[grad(reassociate)]` on one thread (the
//! same preaccumulated gradient in one piece) and the batched backpropagation of
//! [`crate::batched`] (each layer a matrix product over all samples, one thread), the
//! stand-in for what XLA compiles the same math to.
//!
//! `examples/parallel.rs` times them interleaved in one process and prints the speed-ups
//! by thread count; `benches/parallel.rs` runs them under criterion; `tests/parallel.rs`
//! checks that the contenders compute the same gradient, and the parallel one the same
//! bits on any number of threads.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use crate::runtime_lengths::moons::blocks;
use crate::runtime_lengths::moons_model::{init, loss_slices_reassociate_grad, ALPHA, HIDDEN};
use crate::runtime_lengths::moons_parallel::loss_slices_parallel_grad;
use crate::runtime_lengths::{Comparison, Contender, Target};
use crate::wide;

/// A gradient over samples with parameters in a slice or array.
type Gradient<P> = fn(&P, &[[f64; 2]], &[f64]) -> (f64, Vec<f64>);

/// The thread counts timed: 1, 2, 4, … up to the machine's, and the machine's.
#[must_use]
pub fn thread_counts() -> Vec<usize> {
    let all = std::thread::available_parallelism().map_or(1, usize::from);
    let mut counts: Vec<usize> = (0..).map(|k| 1 << k).take_while(|&t| t < all).collect();
    counts.push(all);
    counts
}

/// A pool of `threads` threads.
///
/// # Panics
/// If the operating system refuses the threads.
#[must_use]
pub fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
}

/// The comparisons, in the order of the tables.
#[must_use]
pub fn all() -> Vec<Comparison> {
    let mut all: Vec<Comparison> = [100, 1_000, 10_000, 100_000]
        .into_iter()
        .map(moons)
        .collect();
    all.push(wide_at(10_000));
    all
}

/// Contenders: `single` (`#[grad(reassociate)]`), `parallel` on each of
/// [`thread_counts`], and `batched`; targets: each thread count against one thread, and
/// the most threads against the other two.
fn comparison<P: ?Sized + Send + Sync + 'static>(
    name: &'static str,
    formula: &'static str,
    p: Arc<P>,
    (xs, ys): (Vec<[f64; 2]>, Vec<f64>),
    single: Gradient<P>,
    parallel: Gradient<P>,
    batched: Gradient<P>,
) -> Comparison {
    let data = (p, Arc::new(xs), Arc::new(ys));
    let one = Arc::new(pool(1));
    // Every contender is timed on a thread of a pool (the one-thread contenders on a
    // pool of one thread), its batch of calls made from there, as in a training loop
    // run with `pool.install`: the times are the gradient's, not those of a hand-over to
    // the pool per call, and every contender runs on the same kind of thread.
    let on = |label: &'static str, pool: &Arc<rayon::ThreadPool>, f: Gradient<P>| {
        let (p, xs, ys) = data.clone();
        let alone = Arc::clone(pool);
        let (q, xs_once, ys_once) = data.clone();
        Contender::new(label, move || {
            black_box(&alone.install(|| f(black_box(&*q), &xs_once, &ys_once)));
        })
        .timed_by({
            let pool = Arc::clone(pool);
            move |iterations| {
                pool.install(|| {
                    let start = Instant::now();
                    for _ in 0..iterations {
                        black_box(&f(black_box(&*p), black_box(&xs[..]), black_box(&ys[..])));
                    }
                    start.elapsed()
                })
            }
        })
    };
    let mut contenders = vec![on("#[grad(reassociate)] 1 thread", &one, single)];
    for threads in thread_counts() {
        let pool = if threads == 1 {
            Arc::clone(&one)
        } else {
            Arc::new(pool(threads))
        };
        let label: &'static str = Box::leak(format!("#[grad(parallel)] {threads} thr").into());
        contenders.push(on(label, &pool, parallel));
    }
    let most = contenders.len() - 1;
    contenders.push(on("batched matmul 1 thread", &one, batched));
    let batched = contenders.len() - 1;
    let mut targets: Vec<Target> = (2..=most).map(|k| Target::shown(k, 1)).collect();
    targets.extend([
        Target::shown(1, 0),
        Target::shown(most, 0),
        Target::shown(most, batched),
        Target::shown(0, batched),
    ]);
    Comparison {
        name,
        formula,
        contenders,
        into_calls: Vec::new(),
        targets,
    }
}

/// The moons loss over `samples` samples (copies of the data set with fresh noise; a
/// multiple of 100).
#[must_use]
pub fn moons(samples: usize) -> Comparison {
    let (_, xs, ys) = blocks(samples / 100);
    let (name, formula) = match samples {
        100 => ("parallel_moons_100", "the moons loss, 100 samples"),
        1_000 => ("parallel_moons_1000", "the moons loss, 1,000 samples"),
        10_000 => ("parallel_moons_10000", "the moons loss, 10,000 samples"),
        _ => ("parallel_moons_100000", "the moons loss, 100,000 samples"),
    };
    comparison(
        name,
        formula,
        Arc::new(init(7)),
        (xs, ys),
        |p, xs, ys| {
            let (value, gradient) = loss_slices_reassociate_grad(p, xs, ys);
            (value, gradient.to_vec())
        },
        |p, xs, ys| {
            let (value, gradient) = loss_slices_parallel_grad(p, xs, ys);
            (value, gradient.to_vec())
        },
        |p, xs, ys| crate::batched::loss_and_gradient(HIDDEN, ALPHA, p, xs, ys),
    )
}

/// The 256-wide network over `samples` samples.
#[must_use]
pub fn wide_at(samples: usize) -> Comparison {
    let (_, xs, ys) = blocks(samples / 100);
    comparison(
        "parallel_wide_10000",
        "the 2-256-256-1 network (66,817 parameters), 10,000 samples",
        Arc::from(wide::init(7)),
        (xs, ys),
        wide::loss_lanes_grad,
        wide::loss_parallel_grad,
        |p, xs, ys| crate::batched::loss_and_gradient(wide::WIDTH, wide::ALPHA, p, xs, ys),
    )
}
