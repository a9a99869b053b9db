//! Hygiene of the generated code, in a crate that denies every warning and clippy's
//! pedantic lints: `#[grad]` functions whose parameters, locals and callees are named like
//! the identifiers the expansion introduces (`collisions`), in a module that shadows the
//! prelude and the primitive types (`shadowed`), and in a module without the implicit
//! prelude (`no_prelude`). Their functions generate forward mode too (`#[grad(jvp)]`), so
//! that its code is held to the same lints. Every gradient is checked against a closed
//! form or central differences, and every value against the original function bit for
//! bit.
#![deny(warnings, clippy::all, clippy::pedantic)]
// Lints that are allowed by default, denied here so that generated code is checked
// against them too.
#![deny(
    missing_docs,
    missing_debug_implementations,
    rust_2018_idioms,
    trivial_casts,
    trivial_numeric_casts,
    unit_bindings,
    unreachable_pub,
    unused_import_braces,
    unused_lifetimes,
    unused_qualifications,
    let_underscore_drop
)]

#[path = "hygiene/collisions.rs"]
mod collisions;
#[path = "hygiene/lints.rs"]
pub mod lints;
#[path = "hygiene/no_prelude.rs"]
mod no_prelude;
#[path = "hygiene/shadowed.rs"]
mod shadowed;

/// The partial of `f` along coordinate `i` at `at`, by central differences.
fn central_difference(f: &impl Fn(&[f64]) -> f64, at: &[f64], i: usize) -> f64 {
    let h = 1e-6 * at[i].abs().max(1.0);
    let (mut up, mut down) = (at.to_vec(), at.to_vec());
    up[i] += h;
    down[i] -= h;
    (f(&up) - f(&down)) / (up[i] - down[i])
}

/// Asserts that `gradient` is the gradient of `f` at `at` (central differences).
#[track_caller]
fn assert_gradient(what: &str, f: impl Fn(&[f64]) -> f64, at: &[f64], gradient: &[f64]) {
    assert_eq!(gradient.len(), at.len(), "{what}: the gradient's length");
    for (i, &got) in gradient.iter().enumerate() {
        let want = central_difference(&f, at, i);
        assert!(
            (got - want).abs() <= 1e-6 * want.abs().max(1.0),
            "{what}: ∂/∂#{i} is {got}, central differences give {want}"
        );
    }
}

/// Asserts `got ≈ want` to a relative tolerance of 1e-12.
#[track_caller]
fn assert_near(what: &str, got: f64, want: f64) {
    assert!(
        (got - want).abs() <= 1e-12 * want.abs().max(1.0),
        "{what}: got {got}, want {want}"
    );
}
