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
//! number of samples, also drawn as an SVG plot (`target/parallel.svg`). Everything
//! printed is measured on this run; nothing is asserted.

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
    // Per number of samples: nanoseconds per sample of each series.
    let mut points: Vec<(f64, [f64; 3])> = Vec::new();
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
        points.push((samples, [nanos[0], nanos[1], all].map(|n| n / samples)));
    }
    match write_svg(&points) {
        Ok(path) => println!("\nthe same as a plot: {path}"),
        Err(error) => println!("\ncould not write the SVG: {error}"),
    }
    eprintln!("(measured in {:.1} s)", started.elapsed().as_secs_f64());
}

/// The series of the plot, in the order of `points`' times.
const SERIES: [(&str, &str); 3] = [
    ("reassociate, 1 thread", "#888888"),
    ("parallel, 1 thread", "#1f77b4"),
    ("parallel, all threads", "#d62728"),
];

/// Time per sample against the number of samples, both on log scales, as an SVG image
/// under the build directory (as `examples/moons.rs` draws its boundary).
fn write_svg(points: &[(f64, [f64; 3])]) -> std::io::Result<String> {
    let (width, height, margin) = (560.0, 320.0, 60.0);
    let log = |v: f64| v.max(f64::MIN_POSITIVE).log10();
    let (mut x_lo, mut x_hi) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut y_lo, mut y_hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (samples, times) in points {
        x_lo = x_lo.min(log(*samples));
        x_hi = x_hi.max(log(*samples));
        for t in times {
            y_lo = y_lo.min(log(*t));
            y_hi = y_hi.max(log(*t));
        }
    }
    let (y_lo, y_hi) = (y_lo.floor(), y_hi.ceil().max(y_lo.floor() + 1.0));
    let x_hi = x_hi.max(x_lo + 1.0);
    let to_px = |samples: f64, ns: f64| {
        (
            margin + (log(samples) - x_lo) / (x_hi - x_lo) * (width - 2.0 * margin),
            height - margin - (log(ns) - y_lo) / (y_hi - y_lo) * (height - 2.0 * margin),
        )
    };
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" \
         fill=\"white\"/>\n<text x=\"{margin}\" y=\"20\">the moons loss's gradient: time per \
         sample (ns) against samples</text>\n"
    );
    for (samples, _) in points {
        let (x, _) = to_px(*samples, 10f64.powf(y_lo));
        svg.push_str(&format!(
            "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{samples}</text>\n",
            height - margin + 18.0
        ));
    }
    let mut decade = y_lo;
    while decade <= y_hi {
        let (_, y) = to_px(10f64.powf(x_lo), 10f64.powf(decade));
        svg.push_str(&format!(
            "<line x1=\"{margin}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#dddddd\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>\n",
            width - margin,
            margin - 6.0,
            y + 4.0,
            10f64.powf(decade)
        ));
        decade += 1.0;
    }
    for (k, (label, colour)) in SERIES.iter().enumerate() {
        let line: Vec<String> = points
            .iter()
            .map(|(samples, times)| {
                let (x, y) = to_px(*samples, times[k]);
                format!("{x:.1},{y:.1}")
            })
            .collect();
        svg.push_str(&format!(
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" fill=\"{colour}\">{label}</text>\n",
            line.join(" "),
            width - margin - 150.0,
            40.0 + 16.0 * k as f64
        ));
    }
    svg.push_str("</svg>\n");
    let dir = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".to_string());
    std::fs::create_dir_all(&dir)?;
    let path = format!("{dir}/parallel.svg");
    std::fs::write(&path, svg)?;
    Ok(path)
}
