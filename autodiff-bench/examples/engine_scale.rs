//! `Value` and `Tape` on graphs of up to 10,000,000 nodes: the time to build the graph, to
//! run the reverse sweep and to free it, and the peak memory of the process.
//!
//! ```sh
//! cargo run --release -p autodiff-bench --example engine_scale            # 1M and 10M
//! cargo run --release -p autodiff-bench --example engine_scale -- 100000 1000000
//! ```
//!
//! Each engine and size runs in a process of its own (the example starts itself with
//! `ENGINE NODES`), so that the peak resident memory it reads from `/proc/self/status`
//! (`VmHWM`, Linux only) is that run's alone. Both engines build the same graph: each node
//! an operation (`+`, `*`, `tanh`, `sin`, `mul_add`, `max`) of one to three of the 64
//! nodes made before it, so that nodes are shared, with 1,000 inputs. The gradients of the
//! two engines are compared bit for bit: they share the rules.

use autodiff::{Tape, Value};
use std::hint::black_box;
use std::process::Command;
use std::time::{Duration, Instant};

/// Inputs (leaves) of every graph.
const INPUTS: usize = 1_000;
/// How far back an operand may lie.
const WINDOW: usize = 64;

/// The graph, as a list of operations on earlier node numbers (leaves first).
fn operations(nodes: usize) -> Vec<(u8, [usize; 3])> {
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move |bound: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound as u64) as usize
    };
    (INPUTS..nodes)
        .map(|k| {
            let op = next(6) as u8;
            let mut operand = || k - 1 - next(WINDOW.min(k));
            (op, [operand(), operand(), operand()])
        })
        .collect()
}

/// Operation `op` of [`operations`] on `a`, `b` and `c`, in either engine (a macro, since
/// the engines' handles are different types: `&Value` and `Var`).
macro_rules! operation {
    ($op:expr, $a:expr, $b:expr, $c:expr) => {
        match $op {
            0 => $a + $b,
            1 => $a * $b * 0.5,
            2 => $a.tanh(),
            3 => $a.sin() + $b,
            4 => $a.mul_add($b, $c) * 0.25,
            _ => $a.max($b),
        }
    };
}

fn input(i: usize) -> f64 {
    (i as f64 * 0.37).sin() * 0.9
}

/// Seconds to build, to sweep and to drop; the gradient, summed.
struct Run {
    build: Duration,
    sweep: Duration,
    free: Duration,
    checksum: f64,
}

fn run_value(nodes: usize) -> Run {
    let ops = operations(nodes);
    let start = Instant::now();
    let mut all: Vec<Value> = (0..INPUTS).map(|i| Value::new(input(i))).collect();
    all.reserve(ops.len());
    for &(op, [a, b, c]) in &ops {
        let (a, b, c) = (&all[a], &all[b], &all[c]);
        all.push(operation!(op, a, b, c));
    }
    let output = all.last().expect("a node").clone();
    let build = start.elapsed();
    let start = Instant::now();
    output.backward();
    let sweep = start.elapsed();
    let checksum = all[..INPUTS].iter().map(Value::grad).sum();
    let start = Instant::now();
    drop(black_box(all));
    drop(black_box(output));
    let free = start.elapsed();
    Run {
        build,
        sweep,
        free,
        checksum,
    }
}

fn run_tape(nodes: usize) -> Run {
    let ops = operations(nodes);
    let start = Instant::now();
    let tape = Tape::with_capacity(nodes);
    let mut all: Vec<_> = (0..INPUTS).map(|i| tape.var(input(i))).collect();
    all.reserve(ops.len());
    for &(op, [a, b, c]) in &ops {
        let (a, b, c) = (all[a], all[b], all[c]);
        all.push(operation!(op, a, b, c));
    }
    let output = *all.last().expect("a node");
    let build = start.elapsed();
    let start = Instant::now();
    let gradient = output.gradient();
    let sweep = start.elapsed();
    let checksum = all[..INPUTS].iter().map(|&v| gradient.wrt(v)).sum();
    let start = Instant::now();
    drop(black_box(all));
    drop(black_box(gradient));
    drop(black_box(tape));
    let free = start.elapsed();
    Run {
        build,
        sweep,
        free,
        checksum,
    }
}

/// The peak resident memory of this process in MiB, where Linux tells it.
fn peak_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// One run in this process: prints `build sweep free peak checksum`.
fn child(engine: &str, nodes: usize) {
    let run = match engine {
        "value" => run_value(nodes),
        "tape" => run_tape(nodes),
        _ => panic!("the engine is `value` or `tape`"),
    };
    println!(
        "{} {} {} {} {:e}",
        run.build.as_secs_f64(),
        run.sweep.as_secs_f64(),
        run.free.as_secs_f64(),
        peak_mib().map_or("-".to_string(), |mib| format!("{mib:.0}")),
        run.checksum
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [engine, nodes] = &args[..] {
        if !nodes.is_empty() && engine.chars().all(char::is_alphabetic) {
            child(engine, nodes.parse().expect("a number of nodes"));
            return;
        }
    }
    let sizes: Vec<usize> = if args.is_empty() {
        vec![1_000_000, 10_000_000]
    } else {
        args.iter()
            .map(|a| a.parse().expect("sizes are numbers of nodes"))
            .collect()
    };
    let me = std::env::current_exe().expect("the example's own path");
    println!("| engine | nodes | build | backward | free | peak memory | bytes per node |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for &nodes in &sizes {
        let mut checksums = Vec::new();
        for engine in ["value", "tape"] {
            let output = Command::new(&me)
                .args([engine, &nodes.to_string()])
                .output()
                .expect("the example runs itself");
            assert!(output.status.success(), "{engine} {nodes} failed");
            let text = String::from_utf8(output.stdout).expect("text");
            let fields: Vec<&str> = text.split_whitespace().collect();
            let seconds = |i: usize| fields[i].parse::<f64>().expect("seconds");
            let peak = fields[3].parse::<f64>().ok();
            println!(
                "| `{}` | {} | {:.3} s | {:.3} s | {:.3} s | {} | {} |",
                if engine == "value" { "Value" } else { "Tape" },
                nodes,
                seconds(0),
                seconds(1),
                seconds(2),
                peak.map_or("-".to_string(), |mib| format!("{mib:.0} MiB")),
                peak.map_or("-".to_string(), |mib| format!(
                    "{:.0}",
                    mib * 1024.0 * 1024.0 / nodes as f64
                )),
            );
            checksums.push(fields[4].to_string());
        }
        assert_eq!(
            checksums[0], checksums[1],
            "Value and Tape disagree on {nodes} nodes"
        );
    }
}
