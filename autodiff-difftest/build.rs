//! Writes the batch of random programs the tests `programs_0` … `programs_3` compile and
//! check, into `OUT_DIR/programs_0.rs` …, program `i` into part `i % 4`.
//!
//! - `AUTODIFF_DIFFTEST_PROGRAMS`: how many (default 2,000);
//! - `AUTODIFF_DIFFTEST_SEED`: which stream (default 1); program `i` of a stream is
//!   always the same program.

use std::fmt::Write as _;

#[allow(dead_code)]
#[path = "src/generator/mod.rs"]
mod generator;

const DEFAULT_PROGRAMS: u64 = 2_000;
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
    for part in 0..PARTS {
        let mut modules = String::new();
        let mut cases = String::new();
        for index in (0..count).filter(|i| i % PARTS == part) {
            let program = generator::random::program(seed, index);
            let name = format!("p{index:06}");
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
        let path = std::path::Path::new(&dir).join(format!("programs_{part}.rs"));
        std::fs::write(&path, out).expect("write the programs");
    }
}
