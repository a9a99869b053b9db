//! Compile-time behaviour of `#[grad]`: every unsupported construct is an error under the
//! offending tokens (`tests/ui/*.rs` with their `.stderr`), and tricky but valid code
//! compiles and runs (`tests/ui/pass/*.rs`). Regenerate the `.stderr` files with
//! `TRYBUILD=overwrite cargo test --test ui` and read the diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
    cases.pass("tests/ui/pass/*.rs");
}
