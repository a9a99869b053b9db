//! Loops of run-time length against the same computations with constant bounds, side by
//! side in one process: the comparisons of `autodiff_bench::runtime_lengths`.
//!
//! ```sh
//! cargo run --release -p autodiff-bench --example runtime_lengths
//! ```
//!
//! For each comparison the contenders are timed in interleaved rounds (as in
//! `examples/compare.rs`: one batch of about 4 ms of every contender per round, the order
//! rotating), and a time is the median over the rounds. Then the heap allocations of the
//! `_grad_into` functions are counted, each on a thread of its own (so that its workspace
//! pool starts empty): the first call (where the workspace grows to its size), then 100
//! calls between two readings of the counter of the counting allocator below. Everything
//! printed is measured on this run; nothing is asserted.
//!
//! For instruction counts, which are repeatable where times are not, one contender can be
//! run alone a given number of times, untimed:
//!
//! ```sh
//! valgrind --tool=callgrind target/release/examples/runtime_lengths -- moons 0 1000
//! ```
//!
//! (`moons 0 1000`: the comparison named `moons`, its first contender, 1000 calls.)
//!
//! One argument runs only the comparison of that name (`-- "fixed costs"`).

use std::time::Duration;

use autodiff_bench::counting::{self, take_largest, Counting};
use autodiff_bench::runtime_lengths::{all, measure, report};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Rounds per comparison; each time is a median over them.
const ROUNDS: usize = 25;
/// The length of one batch of calls.
const BATCH: Duration = Duration::from_millis(4);

/// The allocations of `_grad_into` call `index` of the comparison `name`, on a new thread:
/// (allocations of the first call, the largest block it asks for — the workspace's final
/// capacity —, allocations per call over the next 100). The other threads are idle meanwhile, so the process-wide counters count
/// this thread's allocations.
fn allocations(name: &'static str, index: usize) -> (u64, u64, f64) {
    std::thread::spawn(move || {
        let comparison = all()
            .into_iter()
            .find(|c| c.name == name)
            .expect("a comparison of that name");
        let call = &comparison.into_calls[index];
        let read = || (counting::allocations(), take_largest());
        let (before, _) = read();
        (call.call)();
        let (warm, largest) = read();
        let _ = call.time(100);
        let (after, _) = read();
        (warm - before, largest, (after - warm) as f64 / 100.0)
    })
    .join()
    .expect("the measuring thread")
}

/// `<comparison> <contender index> <calls>` on the command line: runs that contender alone,
/// untimed (for `valgrind --tool=callgrind`).
fn run_alone(args: &[String]) {
    let calls: u64 = args[2].parse().expect("a number of calls");
    let index: usize = args[1].parse().expect("a contender index");
    let comparison = all()
        .into_iter()
        .find(|c| c.name == args[0])
        .expect("a comparison of that name");
    let contender = &comparison.contenders[index];
    let _ = contender.time(calls);
    println!("ran {} {calls} times", contender.label);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--").collect();
    if args.len() == 3 {
        run_alone(&args);
        return;
    }
    let started = std::time::Instant::now();
    println!(
        "Median of {ROUNDS} interleaved rounds of about {} ms per contender.\n",
        BATCH.as_millis()
    );
    let mut all_met = true;
    let mut all_zero = true;
    let only = args.first();
    for comparison in all() {
        if only.is_some_and(|name| *name != comparison.name) {
            continue;
        }
        println!("{}: {}", comparison.name, comparison.formula);
        let nanos = measure(&comparison, ROUNDS, BATCH);
        all_met &= report(&comparison, &nanos);
        for (index, call) in comparison.into_calls.iter().enumerate() {
            let (first, largest, steady) = allocations(comparison.name, index);
            all_zero &= steady == 0.0;
            println!(
                "  {:22} heap allocations per call after warm-up: {steady} \
                 (first call on a fresh thread: {first}, the largest {largest} bytes)",
                call.label,
            );
        }
        println!();
    }
    println!(
        "targets: {}; steady-state allocations of _grad_into: {}",
        if all_met { "all met" } else { "some NOT met" },
        if all_zero { "0 everywhere" } else { "NOT 0" }
    );
    eprintln!("(measured in {:.1} s)", started.elapsed().as_secs_f64());
}
