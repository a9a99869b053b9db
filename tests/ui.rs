//! Compile-time behaviour of `#[grad]`: every unsupported construct is an error under the
//! offending tokens (`tests/ui/*.rs` with their `.stderr`), and tricky but valid code
//! compiles and runs (`tests/ui/pass/*.rs`). Regenerate the `.stderr` files with
//! `TRYBUILD=overwrite cargo test --test ui` and read the diff.
//!
//! The expected `.stderr` files are one compiler's wording: rustc words its own errors
//! (which follow ours where the user's code is not valid Rust either) differently from one
//! release to the next. So the compile-fail cases run on the release they were recorded
//! with, [`SNAPSHOT_RUSTC`], and are skipped with a message on any other; the cases that
//! compile run everywhere. The cases in `tests/ui/std-source/` also quote the standard
//! library's source, which rustc prints only where the `rust-src` component is installed:
//! they run only there. `AUTODIFF_UI=all` (CI sets it) turns each skip into a failure.

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

/// The rustc release (major.minor) whose messages the `.stderr` files hold.
const SNAPSHOT_RUSTC: &str = "1.95";

/// What the compiler running the tests is: its release, and whether it has `rust-src`.
struct Toolchain {
    release: String,
    rust_src: bool,
}

impl Toolchain {
    /// Asks the `rustc` that cargo runs (the same toolchain, through rustup's proxy).
    fn current() -> Toolchain {
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let output = |args: &[&str]| {
            let out = Command::new(&rustc)
                .args(args)
                .output()
                .expect("rustc runs");
            String::from_utf8(out.stdout).expect("rustc prints UTF-8")
        };
        let release = output(&["-vV"])
            .lines()
            .find_map(|line| line.strip_prefix("release: "))
            .expect("`rustc -vV` names its release")
            .to_string();
        let sysroot = PathBuf::from(output(&["--print", "sysroot"]).trim());
        let rust_src = sysroot
            .join("lib/rustlib/src/rust/library/core/src/lib.rs")
            .is_file();
        Toolchain { release, rust_src }
    }

    /// Whether the snapshots are of this compiler's wording: same major.minor, and a
    /// stable or beta build (a nightly's messages run ahead of its number).
    fn words_like_snapshots(&self) -> bool {
        let matches = self.release == SNAPSHOT_RUSTC
            || self.release.starts_with(&format!("{SNAPSHOT_RUSTC}."));
        matches && !self.release.contains("nightly") && !self.release.contains("dev")
    }
}

/// Says why a group of cases does not run, past the test harness's capture so that
/// `cargo test` shows it; under `AUTODIFF_UI=all` fails instead.
fn skip(what: &str, why: &str) {
    let message = format!("note: tests/ui: {what} skipped: {why}\n");
    assert!(
        std::env::var("AUTODIFF_UI").as_deref() != Ok("all"),
        "AUTODIFF_UI=all, but {message}"
    );
    // Written to the process's stderr, not through `eprintln!`, which the harness captures.
    let _ = std::io::stderr().write_all(message.as_bytes());
}

#[test]
fn ui() {
    let toolchain = Toolchain::current();
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass/*.rs");
    if !toolchain.words_like_snapshots() {
        skip(
            "the compile-fail cases are",
            &format!(
                "their messages are rustc {SNAPSHOT_RUSTC}'s, this is rustc {} \
                 (`cargo +{SNAPSHOT_RUSTC} test --test ui` runs them)",
                toolchain.release
            ),
        );
        return;
    }
    cases.compile_fail("tests/ui/*.rs");
    if toolchain.rust_src {
        cases.compile_fail("tests/ui/std-source/*.rs");
    } else {
        skip(
            "the 3 compile-fail cases of tests/ui/std-source/ are",
            "their messages quote the standard library's source, which rustc shows only \
             with the rust-src component (`rustup component add rust-src` runs them)",
        );
    }
}

/// No error names an identifier that `#[grad]` generates (`__primal_3`, `__adjoint_var_0`,
/// a helper function, …): every message speaks of the user's code. Paths into the crate's
/// hidden module `autodiff::__private`, which rustc's notes may show for a bound it
/// requires, are the crate's own items, not generated ones.
#[test]
fn no_error_names_a_generated_identifier() {
    let mut checked = 0;
    for dir in ["tests/ui", "tests/ui/std-source"] {
        for entry in std::fs::read_dir(dir).expect("tests/ui is readable") {
            let path = entry.expect("a directory entry").path();
            if path.extension().is_none_or(|e| e != "stderr") {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("a readable .stderr");
            for (start, _) in text.match_indices("__") {
                let name: String = text[start..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                let in_path = text[..start].ends_with("::") && name == "__private";
                assert!(
                    in_path || name.chars().all(|c| c == '_'),
                    "{} names the generated identifier `{name}`",
                    path.display()
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 50, "only {checked} .stderr files were read");
}
