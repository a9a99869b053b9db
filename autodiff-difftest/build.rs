//! Writes the batch of random programs the tests `programs_0` … `programs_3` compile and
//! check, into `OUT_DIR/programs_0.rs` …, program `i` into part `i % 4`; and the long
//! programs (`generator::random::long_program`) the test `programs_long` compiles and
//! checks, into `OUT_DIR/programs_long.rs`.
//!
//! - `AUTODIFF_DIFFTEST_PROGRAMS`: how many (default 2,000);
//! - `AUTODIFF_DIFFTEST_LONG_PROGRAMS`: how many long ones (default 8);
//! - `AUTODIFF_DIFFTEST_SEED`: which stream (default 1), of both; program `i` of a
//!   stream is always the same program, and so is long program `i`.

use std::fmt::Write as _;

#[allow(dead_code)]
#[path = "src/generator/mod.rs"]
mod generator;

const DEFAULT_PROGRAMS: u64 = 2_000;
/// Together about 10 to 20 s of building `programs_long` (debug, 2 cores).
const DEFAULT_LONG_PROGRAMS: u64 = 8;
const DEFAULT_SEED: u64 = 1;

fn env_number(name: &str, default: u64) -> u64 {
    println!("cargo:rerun-if-env-changed={name}");
    match std::env::var(name) {
        Ok(text) => text
            .trim()
            .replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, not {text:?}")),
        Err(_) => default,
    }
}

/// The batch is split into this many tests, compiled side by side.
const PARTS: u64 = 4;

fn main() {
    println!("cargo:rerun-if-changed=src/generator");
    println!("cargo:rerun-if-changed=build.rs");
    let count = env_number("AUTODIFF_DIFFTEST_PROGRAMS", DEFAULT_PROGRAMS);
    let seed = env_number("AUTODIFF_DIFFTEST_SEED", DEFAULT_SEED);
    let dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    let long = env_number("AUTODIFF_DIFFTEST_LONG_PROGRAMS", DEFAULT_LONG_PROGRAMS);
    let dir = std::path::Path::new(&dir);
    for part in 0..PARTS {
        let indices = (0..count).filter(|i| i % PARTS == part);
        let out = batch(seed, indices, |index| {
            (
                format!("p{index:06}"),
                generator::random::program(seed, index),
            )
        });
        std::fs::write(dir.join(format!("programs_{part}.rs")), out).expect("write the programs");
    }
    let out = batch(seed, 0..long, |index| {
        let ops = generator::random::LONG_OPS;
        (
            format!("l{index:04}"),
            generator::random::long_program(seed, index, ops),
        )
    });
    std::fs::write(dir.join("programs_long.rs"), out).expect("write the long programs");
}

/// The source of a batch: its seed, the modules of the programs `indices` (named and
/// drawn by `draw`) and their table of cases.
fn batch(
    seed: u64,
    indices: impl Iterator<Item = u64>,
    draw: impl Fn(u64) -> (String, generator::ast::Program),
) -> String {
    let mut modules = String::new();
    let mut cases = String::new();
    for index in indices {
        let (name, program) = draw(index);
        let source = generator::emit::module(&name, &program);
        cases.push_str(&generator::emit::case(&name, &program, &source));
        modules.push_str(&source);
    }
    let mut out = String::new();
    let _ = writeln!(
        out,
        "/// The seed of this batch.\npub const SEED: u64 = {seed};"
    );
    out.push_str(&modules);
    let _ = writeln!(
        out,
        "/// The programs of this part of the batch.\npub static CASES: &[Case] = &[\n{cases}];"
    );
    out
}
