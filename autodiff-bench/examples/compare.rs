//! Every contender on every workload, side by side, in one process: the comparison
//! tables of `autodiff-bench/README.md`, and a table of forward mode (`_jvp` against the
//! primal and `num-dual`'s dual numbers).
//!
//! ```sh
//! cargo run --release -p autodiff-bench --example compare
//! ```
//!
//! For each workload, the contenders are timed in rounds: each round times one batch of
//! calls (about 4 ms) of every contender, in an order that rotates from round to round, so
//! that a slow spell of the machine falls on all of them alike. A cell is the median over
//! the rounds of the time per call. Before timing, each contender's gradient is checked
//! against the `#[grad]` one, and its heap allocations per call are counted by the
//! counting allocator below. Everything printed is measured on this run.
//!
//! Instructions per call come from the hardware counter where the kernel allows it;
//! elsewhere, with `--callgrind`, from `valgrind --tool=callgrind`: the example runs
//! itself under valgrind for one contender alone (`compare <workload> <contender>
//! <calls>`, the contender's index in the tables' order), once with 10 calls and once
//! with 110, and divides the difference by 100. Exact and repeatable where wall times
//! move by tens of percent, at the price of a minute or two.
//!
//! ```sh
//! cargo run --release -p autodiff-bench --example compare -- --callgrind
//! cargo run --release -p autodiff-bench --example compare -- --forward   # forward mode alone
//! ```

use std::fmt::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use autodiff_bench::callgrind;
use autodiff_bench::counting::{allocations, Counting};
use autodiff_bench::{relative_error, visit_all, Contender, Run, Visitor, Workload};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Rounds per workload; each cell is a median over them.
const ROUNDS: usize = 25;
/// The length of one batch of calls.
const BATCH: Duration = Duration::from_millis(4);

/// What was measured for one contender on one workload.
#[derive(Clone, Default)]
struct Cell {
    /// Median nanoseconds per call; `None` if the contender cannot run the workload.
    nanos: Option<f64>,
    /// Heap allocations per call.
    allocations: Option<f64>,
    /// Instructions retired per call (user and kernel, as the hardware counter reports
    /// them), where the kernel lets the process count them.
    instructions: Option<f64>,
    /// Largest difference from the `#[grad]` gradient, relative to its largest component.
    error: Option<f64>,
    /// Why the contender cannot run the workload, or how it was rewritten for it.
    note: Option<&'static str>,
}

struct Row {
    name: &'static str,
    formula: &'static str,
    cells: Vec<Cell>,
}

#[derive(Default)]
struct Measure {
    rows: Vec<Row>,
    /// Count instructions with callgrind where the hardware counter is refused.
    callgrind: bool,
    /// Whether some count came from callgrind.
    by_callgrind: bool,
}

/// Calls per batch: doubled until a batch lasts [`BATCH`].
fn calibrate<const N: usize>(run: &Run<N>, x: &[f64; N]) -> u64 {
    let mut iterations = 1;
    loop {
        let elapsed = run.time(x, iterations).unwrap_or(BATCH);
        if elapsed >= BATCH || iterations >= 1 << 40 {
            return iterations;
        }
        let scale = (BATCH.as_secs_f64() / elapsed.as_secs_f64().max(1e-9)).clamp(1.5, 16.0);
        iterations = ((iterations as f64) * scale).ceil() as u64;
    }
}

/// Instructions retired per call over `iterations` calls, the least of 5 batches, from
/// the hardware counter (`None` where `perf_event_open` is refused or unsupported).
fn instructions<const N: usize>(run: &Run<N>, x: &[f64; N], iterations: u64) -> Option<f64> {
    let mut counter = perf_event::Builder::new().build().ok()?;
    let mut least = None::<u64>;
    for _ in 0..5 {
        counter.reset().ok()?;
        counter.enable().ok()?;
        run.time(x, iterations)?;
        counter.disable().ok()?;
        let count = counter.read().ok()?;
        least = Some(least.map_or(count, |l| l.min(count)));
    }
    least.map(|count| count as f64 / iterations as f64)
}

/// Runs contender `index` alone on the workload named `workload`, `calls` times (what
/// [`callgrind::per_call`] counts).
struct Alone {
    workload: String,
    index: usize,
    calls: u64,
    found: bool,
}

impl Visitor for Alone {
    fn visit<const N: usize>(&mut self, w: &Workload<N>) {
        if w.name != self.workload {
            return;
        }
        if let Some(&contender) = Contender::ALL.get(self.index) {
            self.found = w.run(contender).time(&w.point, self.calls).is_some();
        }
    }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

impl Visitor for Measure {
    fn visit<const N: usize>(&mut self, w: &Workload<N>) {
        let x = &w.point;
        let (_, reference) = (w.generated)(x);
        let runs: Vec<Run<N>> = Contender::ALL.iter().map(|&c| w.run(c)).collect();
        let mut cells = vec![Cell::default(); runs.len()];
        let mut iterations = vec![0; runs.len()];
        for ((cell, run), iterations) in cells.iter_mut().zip(&runs).zip(&mut iterations) {
            match *run {
                Run::Unsupported(why) => {
                    cell.note = Some(why);
                    continue;
                }
                Run::Gradient(_, note) => cell.note = note,
                Run::Primal(_) => {}
            }
            if let Some((_, Some(gradient))) = run.call(x) {
                cell.error = Some(relative_error(&gradient, &reference));
            }
            // Warm (thread-local tapes grow on their first calls), then count.
            let _ = run.time(x, 10);
            let before = allocations();
            let _ = run.time(x, 100);
            let after = allocations();
            cell.allocations = Some((after - before) as f64 / 100.0);
            *iterations = calibrate(run, x);
            cell.instructions = instructions(run, x, *iterations);
        }
        if self.callgrind {
            for (index, cell) in cells.iter_mut().enumerate() {
                let supported = !matches!(runs[index], Run::Unsupported(_));
                if cell.instructions.is_none() && supported {
                    cell.instructions = callgrind::per_call(&[w.name, &index.to_string()]);
                    self.by_callgrind |= cell.instructions.is_some();
                }
            }
        }
        let mut samples = vec![Vec::with_capacity(ROUNDS); runs.len()];
        for round in 0..ROUNDS {
            for k in 0..runs.len() {
                let i = (k + round) % runs.len();
                if let Some(elapsed) = runs[i].time(x, iterations[i]) {
                    samples[i].push(elapsed.as_secs_f64() * 1e9 / iterations[i] as f64);
                }
            }
        }
        for (cell, samples) in cells.iter_mut().zip(&mut samples) {
            if !samples.is_empty() {
                cell.nanos = Some(median(samples));
            }
        }
        self.rows.push(Row {
            name: w.name,
            formula: w.formula,
            cells,
        });
    }
}

/// Forward mode on one workload: medians per call of the primal, `_jvp`, `num-dual`'s
/// `Dual64` pass and `_grad`, and the largest difference of the two tangents from the
/// gradient's dot product with the direction.
struct ForwardRow {
    name: &'static str,
    nanos: [f64; 4],
    error: f64,
}

/// Times forward mode (one directional derivative) on every workload.
#[derive(Default)]
struct ForwardMeasure {
    rows: Vec<ForwardRow>,
}

impl Visitor for ForwardMeasure {
    fn visit<const N: usize>(&mut self, w: &Workload<N>) {
        use std::hint::black_box;
        let x = &w.point;
        // A direction through every input.
        let t: [f64; N] = std::array::from_fn(|i| 0.5 - 0.25 * (i % 5) as f64);
        let (_, gradient) = (w.generated)(x);
        let expected: f64 = gradient.iter().zip(&t).map(|(g, t)| g * t).sum();
        let scale = gradient
            .iter()
            .zip(&t)
            .map(|(g, t)| (g * t).abs())
            .sum::<f64>();
        let error = [w.forward.generated, w.forward.num_dual]
            .iter()
            .map(|f| (f(x, &t).1 - expected).abs() / scale.max(f64::MIN_POSITIVE))
            .fold(0.0, f64::max);
        let (primal, generated, jvp, num_dual) = (
            w.primal,
            w.generated,
            w.forward.generated,
            w.forward.num_dual,
        );
        let runs: [&dyn Fn(u64) -> Duration; 4] = [
            &|n| Run::Primal(primal).time(x, n).unwrap_or_default(),
            // Each called through a pointer the optimizer cannot see through, as
            // `Run::time` calls the primal and `_grad`.
            &|n| {
                let jvp = black_box(jvp);
                let start = std::time::Instant::now();
                for _ in 0..n {
                    black_box(&jvp(black_box(x), black_box(&t)));
                }
                start.elapsed()
            },
            &|n| {
                let num_dual = black_box(num_dual);
                let start = std::time::Instant::now();
                for _ in 0..n {
                    black_box(&num_dual(black_box(x), black_box(&t)));
                }
                start.elapsed()
            },
            &|n| {
                Run::Gradient(generated, None)
                    .time(x, n)
                    .unwrap_or_default()
            },
        ];
        let iterations: Vec<u64> = runs
            .iter()
            .map(|run| {
                let mut n = 1u64;
                while run(n) < BATCH && n < 1 << 40 {
                    n *= 2;
                }
                n
            })
            .collect();
        let mut samples = vec![Vec::with_capacity(ROUNDS); runs.len()];
        for round in 0..ROUNDS {
            for k in 0..runs.len() {
                let i = (k + round) % runs.len();
                samples[i].push(runs[i](iterations[i]).as_secs_f64() * 1e9 / iterations[i] as f64);
            }
        }
        let mut nanos = [0.0; 4];
        for (n, samples) in nanos.iter_mut().zip(&mut samples) {
            *n = median(samples);
        }
        self.rows.push(ForwardRow {
            name: w.name,
            nanos,
            error,
        });
    }
}

/// The forward-mode tables: times, ratios, and the targets.
fn forward_tables(out: &mut String) {
    let mut forward = ForwardMeasure::default();
    visit_all(&mut forward);
    let _ = writeln!(
        out,
        "Forward mode: one directional derivative (a direction through every input),          `#[grad(jvp)]`'s `_jvp` against `num-dual` (one `Dual64` pass) and against          `_grad`, which gives every partial at once.
"
    );
    let heading = [
        "time per call",
        "primal",
        "_jvp",
        "num-dual Dual64",
        "_grad",
        "_jvp / primal",
        "num-dual / _jvp",
        "_grad / _jvp",
        "tangent error",
    ];
    let body: Vec<Vec<String>> = forward
        .rows
        .iter()
        .map(|row| {
            let [p, j, d, g] = row.nanos;
            vec![
                format!("`{}`", row.name),
                time(p),
                time(j),
                time(d),
                time(g),
                ratio(j / p),
                ratio(d / j),
                ratio(g / j),
                format!("{:.0e}", row.error),
            ]
        })
        .collect();
    table(out, &heading, &body);
    let worst_primal = forward
        .rows
        .iter()
        .map(|r| (r.nanos[1] / r.nanos[0], r.name))
        .max_by(|a, b| a.0.total_cmp(&b.0));
    let least_num_dual = forward
        .rows
        .iter()
        .map(|r| (r.nanos[2] / r.nanos[1], r.name))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    if let (Some((p, pn)), Some((d, dn))) = (worst_primal, least_num_dual) {
        let _ = writeln!(
            out,
            "- _jvp within 2x of the primal: {} (worst {} on `{pn}`)
             - _jvp faster than num-dual's Dual64: {} (least {} on `{dn}`)
",
            if p <= 2.0 { "met" } else { "NOT met" },
            ratio(p),
            if d > 1.0 { "met" } else { "NOT met" },
            ratio(d),
        );
    }
}

/// A time per call with a unit that keeps 3 significant digits.
fn time(nanos: f64) -> String {
    if nanos < 10.0 {
        format!("{nanos:.2} ns")
    } else if nanos < 1e3 {
        format!("{nanos:.0} ns")
    } else if nanos < 1e4 {
        format!("{:.2} µs", nanos / 1e3)
    } else if nanos < 1e6 {
        format!("{:.0} µs", nanos / 1e3)
    } else {
        format!("{:.1} ms", nanos / 1e6)
    }
}

fn ratio(r: f64) -> String {
    if r < 10.0 {
        format!("{r:.2}x")
    } else {
        format!("{r:.0}x")
    }
}

/// Footnote marks for notes, numbered in order of appearance.
#[derive(Default)]
struct Notes(Vec<&'static str>);

impl Notes {
    fn mark(&mut self, note: &'static str) -> String {
        let index = match self.0.iter().position(|n| *n == note) {
            Some(i) => i,
            None => {
                self.0.push(note);
                self.0.len() - 1
            }
        };
        format!(" [{}]", index + 1)
    }
}

/// A table with one column per contender, each cell written by `cell`.
fn per_contender(out: &mut String, title: &str, rows: &[Row], cell: impl Fn(&Cell) -> String) {
    let mut heading = vec![title];
    heading.extend(Contender::ALL.iter().map(|c| c.label()));
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let mut line = vec![format!("`{}`", row.name)];
            line.extend(row.cells.iter().map(&cell));
            line
        })
        .collect();
    table(out, &heading, &body);
}

fn table(out: &mut String, heading: &[&str], rows: &[Vec<String>]) {
    let _ = writeln!(out, "| {} |", heading.join(" | "));
    let _ = writeln!(
        out,
        "|{}",
        heading.iter().map(|_| " ---: |").collect::<String>()
    );
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out.push('\n');
}

/// Today's date (UTC), from the system clock.
fn today() -> String {
    let days = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

fn cpu_model() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("model name"))?;
    Some(line.split_once(':')?.1.trim().to_string())
}

fn index(contender: Contender) -> usize {
    Contender::ALL
        .iter()
        .position(|&c| c == contender)
        .unwrap_or_default()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| a != "--").collect();
    if let [workload, index, calls] = args.as_slice() {
        let (Ok(index), Ok(calls)) = (index.parse(), calls.parse()) else {
            eprintln!("usage: compare [--callgrind] | compare <workload> <contender> <calls>");
            std::process::exit(2);
        };
        let mut alone = Alone {
            workload: workload.clone(),
            index,
            calls,
            found: false,
        };
        visit_all(&mut alone);
        if !alone.found {
            eprintln!("no contender {index} on a workload `{workload}`");
            std::process::exit(2);
        }
        return;
    }
    let started = std::time::Instant::now();
    if args.iter().any(|a| a == "--forward") {
        // Forward mode alone.
        let mut out = String::new();
        forward_tables(&mut out);
        print!("{out}");
        return;
    }
    let mut measure = Measure {
        callgrind: args.iter().any(|a| a == "--callgrind"),
        ..Measure::default()
    };
    visit_all(&mut measure);
    let rows = &measure.rows;

    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Measured {} on {cores} cores{}, `cargo run --release -p autodiff-bench --example compare`.",
        today(),
        cpu_model().map_or(String::new(), |m| format!(" ({m})")),
    );
    let _ = writeln!(
        out,
        "Median of {ROUNDS} interleaved rounds of about {} ms per contender.\n",
        BATCH.as_millis()
    );

    let _ = writeln!(out, "Workloads:\n");
    for row in rows {
        let _ = writeln!(out, "- `{}`: {}", row.name, row.formula);
    }
    out.push('\n');

    let mut notes = Notes::default();
    let mut heading = vec!["time per call"];
    heading.extend(Contender::ALL.iter().map(|c| c.label()));
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let mut line = vec![format!("`{}`", row.name)];
            for cell in &row.cells {
                let mut text = cell.nanos.map_or("n/a".to_string(), time);
                if let Some(note) = cell.note {
                    text += &notes.mark(note);
                }
                line.push(text);
            }
            line
        })
        .collect();
    table(&mut out, &heading, &body);

    let generated = index(Contender::Generated);
    let nanos = |row: &Row, c: Contender| row.cells[index(c)].nanos;
    // Every contender compared with `#[grad]`: all but the three in the first columns.
    let others: Vec<Contender> = Contender::ALL
        .into_iter()
        .filter(|c| {
            !matches!(
                c,
                Contender::Primal | Contender::Generated | Contender::HandWritten
            )
        })
        .collect();
    let mut heading = vec!["ratio", "#[grad] / hand", "#[grad] / primal"];
    let labels: Vec<String> = others
        .iter()
        .map(|c| format!("{} / #[grad]", c.label()))
        .collect();
    heading.extend(labels.iter().map(String::as_str));
    heading.push("fastest peer / #[grad]");
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let g = row.cells[generated].nanos.unwrap_or(f64::NAN);
            let per = |c| nanos(row, c).map_or("n/a".to_string(), |t| ratio(t / g));
            let mut line = vec![
                format!("`{}`", row.name),
                nanos(row, Contender::HandWritten).map_or("n/a".into(), |h| ratio(g / h)),
                nanos(row, Contender::Primal).map_or("n/a".into(), |p| ratio(g / p)),
            ];
            line.extend(others.iter().map(|&c| per(c)));
            let fastest = Contender::PEERS
                .iter()
                .filter_map(|&c| nanos(row, c).map(|t| (t, c)))
                .min_by(|a, b| a.0.total_cmp(&b.0));
            line.push(fastest.map_or("n/a".into(), |(t, c)| {
                format!("{} ({})", ratio(t / g), c.label())
            }));
            line
        })
        .collect();
    table(&mut out, &heading, &body);

    if rows
        .iter()
        .any(|row| row.cells.iter().any(|c| c.instructions.is_some()))
    {
        let count = |n: Option<f64>| n.map_or("n/a".to_string(), |n| format!("{n:.0}"));
        let _ = writeln!(
            out,
            "Instructions per call, by {}:\n",
            if measure.by_callgrind {
                "callgrind (110 calls less 10, divided by 100)"
            } else {
                "the hardware counter"
            }
        );
        per_contender(&mut out, "instructions per call", rows, |c| {
            count(c.instructions)
        });
    } else {
        let _ = writeln!(
            out,
            "Instruction counts: unavailable here (perf_event_open refused; \
             `-- --callgrind` counts them with valgrind).\n"
        );
    }

    per_contender(&mut out, "heap allocations per call", rows, |c| {
        c.allocations
            .map_or("n/a".to_string(), |a| format!("{a:.0}"))
    });

    let mut heading = vec!["relative error vs #[grad]"];
    heading.extend(Contender::ALL[1..].iter().map(|c| c.label()));
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let mut line = vec![format!("`{}`", row.name)];
            line.extend(row.cells[1..].iter().map(|cell| {
                cell.error.map_or("n/a".to_string(), |e| {
                    if e == 0.0 {
                        "0".to_string()
                    } else {
                        format!("{e:.0e}")
                    }
                })
            }));
            line
        })
        .collect();
    table(&mut out, &heading, &body);

    for (i, note) in notes.0.iter().enumerate() {
        let _ = writeln!(out, "[{}] {note}", i + 1);
    }
    let _ = writeln!(
        out,
        "Gradient only (no value): finite diff, autodiff 0.7, symdiff. \
         Error is the largest difference from the #[grad] gradient over its largest component.\n"
    );

    // The issue's targets, checked against this run's numbers.
    let worst = |f: &dyn Fn(&Row) -> Option<f64>| {
        rows.iter()
            .filter_map(|row| f(row).map(|r| (r, row.name)))
            .max_by(|a, b| a.0.total_cmp(&b.0))
    };
    let slowest_speedup = |f: &dyn Fn(&Row) -> Option<f64>| {
        rows.iter()
            .filter_map(|row| f(row).map(|r| (r, row.name)))
            .min_by(|a, b| a.0.total_cmp(&b.0))
    };
    let g = |row: &Row| row.cells[generated].nanos;
    let mut target = |what: &str, met: bool, detail: String| {
        let _ = writeln!(
            out,
            "- {what}: {} ({detail})",
            if met { "met" } else { "NOT met" }
        );
    };
    if let Some((r, name)) = worst(&|row| Some(g(row)? / nanos(row, Contender::HandWritten)?)) {
        target(
            "#[grad] within 1.1x of hand-written",
            r <= 1.1,
            format!("worst {} on `{name}`", ratio(r)),
        );
    }
    if let Some((r, name)) = worst(&|row| Some(g(row)? / nanos(row, Contender::Primal)?)) {
        target(
            "#[grad] within 3x of the primal",
            r <= 3.0,
            format!("worst {} on `{name}`", ratio(r)),
        );
    }
    if let Some((r, name)) = slowest_speedup(&|row| {
        let fastest = Contender::PEERS
            .iter()
            .filter_map(|&c| nanos(row, c))
            .fold(f64::INFINITY, f64::min);
        Some(fastest / g(row)?)
    }) {
        target(
            "#[grad] at least 3x faster than the fastest peer",
            r >= 3.0,
            format!("least {} on `{name}`", ratio(r)),
        );
    }
    if let Some((r, name)) = slowest_speedup(&|row| Some(nanos(row, Contender::Value)? / g(row)?)) {
        target(
            "#[grad] at least 30x faster than Value",
            r >= 30.0,
            format!("least {} on `{name}`", ratio(r)),
        );
    }
    let allocating: Vec<&str> = rows
        .iter()
        .filter(|row| row.cells[generated].allocations != Some(0.0))
        .map(|row| row.name)
        .collect();
    target(
        "zero heap allocations per #[grad] call",
        allocating.is_empty(),
        if allocating.is_empty() {
            "every workload".to_string()
        } else {
            format!("allocates on {}", allocating.join(", "))
        },
    );

    out.push('\n');
    forward_tables(&mut out);

    print!("{out}");
    eprintln!("(measured in {:.1} s)", started.elapsed().as_secs_f64());
}
