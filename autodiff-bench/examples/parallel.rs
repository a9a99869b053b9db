//! `#[grad(parallel)]` on 1, 2, 4, … threads, side by side in one process: the
//! comparisons of `autodiff_bench::parallel`.
//!
//! ```sh
//! cargo run --release -p autodiff-bench --features rayon --example parallel
//! ```
//!
//! The contenders of a comparison are timed in interleaved rounds (one batch of about
//! 20 ms of every contender per round, the order rotating), and a time is the median over
//! the rounds. Printed: each time, the speed-up of each thread count over one thread,
//! the cost of the chunks on one thread against `#[grad(reassociate)]`, and the ratios to
//! the batched matrix-product backpropagation; then the time per sample against the
//! number of samples. Everything printed is measured on this run; nothing is asserted.

use std::time::Duration;

use autodiff_bench::parallel::{all, thread_counts};
use autodiff_bench::runtime_lengths::{measure, report, time};

/// Rounds per comparison; each time is a median over them.
const ROUNDS: usize = 15;
/// The length of one batch of calls.
const BATCH: Duration = Duration::from_millis(20);

fn main() {
    let started = std::time::Instant::now();
    println!(
        "Threads timed: {:?}. Median of {ROUNDS} interleaved rounds of about {} ms per \
         contender.\n",
        thread_counts(),
        BATCH.as_millis()
    );
    let mut per_sample = Vec::new();
    for comparison in all() {
        println!("{}: {}", comparison.name, comparison.formula);
        let nanos = measure(&comparison, ROUNDS, BATCH);
        let _ = report(&comparison, &nanos);
        per_sample.push((comparison.name, nanos));
        println!();
    }
    println!("time per sample, moons (1 thread: reassociate, parallel; all threads: parallel):");
    for (name, nanos) in &per_sample {
        let Some(samples) = name.strip_prefix("parallel_moons_") else {
            continue;
        };
        let samples: f64 = samples.parse().expect("a number of samples");
        let all = nanos[nanos.len() - 2];
        println!(
            "  {samples:>7} samples: {:>9} {:>9} {:>9}",
            time(nanos[0] / samples),
            time(nanos[1] / samples),
            time(all / samples),
        );
    }
    eprintln!("(measured in {:.1} s)", started.elapsed().as_secs_f64());
}
