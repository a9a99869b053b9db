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

/// No error names an identifier that `#[grad]` generates (`__primal_3`, `__adjoint_var_0`,
/// a helper function, …): every message speaks of the user's code. Paths into the crate's
/// hidden module `autodiff::__private`, which rustc's notes may show for a bound it
/// requires, are the crate's own items, not generated ones.
#[test]
fn no_error_names_a_generated_identifier() {
    let mut checked = 0;
    for entry in std::fs::read_dir("tests/ui").expect("tests/ui is readable") {
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
    assert!(checked >= 50, "only {checked} .stderr files were read");
}
