//! `autodiff::check` and `assert_gradient!`: correct `#[grad]` gradients of scalars, arrays
//! and slices pass; three bugs planted in hand-written gradients (a sign error, a missing
//! factor, a swapped pair of partials) are caught and located.

use autodiff::check::{self, DEFAULT_TOLERANCE};
use autodiff::prelude::*;

// ---------------------------------------------------------------------------------------
// Correct gradients from #[grad] pass.

#[grad]
fn scalars(a: f64, b: f64, c: f64) -> f64 {
    let t = (a * b).tanh();
    t * c.exp() + a.powi(3) / (1.0 + b * b)
}

#[test]
fn a_function_of_scalars_passes() {
    for at in [(0.3, -1.2, 0.5), (2.0, 0.1, -3.0), (-0.7, 4.0, 1.0)] {
        let report = check::gradient(
            |&(a, b, c)| scalars(a, b, c),
            |&(a, b, c)| scalars_grad(a, b, c),
            &at,
        );
        assert!(report.passed(1e-8), "{report}");
        assert_eq!(report.components().len(), 3);
        assert_eq!(report.value().to_bits(), report.gradient_value().to_bits());
    }
    assert_gradient!(
        |&(a, b, c)| scalars(a, b, c),
        |&(a, b, c)| scalars_grad(a, b, c),
        &(0.3, -1.2, 0.5)
    );
}

#[grad]
fn one_scalar(x: f64) -> f64 {
    x.sin() * x.sqrt()
}

#[test]
fn a_function_of_one_scalar_takes_the_scalar_as_the_point() {
    assert_gradient!(
        |&x| one_scalar(x),
        |&x| one_scalar_grad(x),
        &1.3,
        tolerance = 1e-8
    );
}

#[grad]
fn layer(w: &[[f64; 2]; 3], x: [f64; 2], b: f64) -> f64 {
    let mut out = b;
    for row in w {
        out += (row[0] * x[0] + row[1] * x[1]).tanh();
    }
    out * out
}

#[test]
fn a_function_of_nested_arrays_passes() {
    let w = [[0.5, -0.3], [0.1, 0.8], [-1.2, 0.4]];
    let report = check::gradient(
        |(w, x, b)| layer(w, *x, *b),
        |(w, x, b)| layer_grad(w, *x, *b),
        &(w, [0.7, -0.2], 0.1),
    );
    assert!(report.passed(1e-8), "{report}");
    assert_eq!(report.components().len(), 6 + 2 + 1);
    let positions: Vec<_> = report
        .components()
        .iter()
        .map(|c| (c.parameter, c.position.clone()))
        .collect();
    assert_eq!(positions[3], (0, vec![1, 1]));
    assert_eq!(positions[7], (1, vec![1]));
    assert_eq!(positions[8], (2, vec![]));
}

#[grad]
fn fit(w: &[f64], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
    let n = xs.len() as f64;
    xs.iter()
        .zip(ys)
        .map(|(x, y)| (w[0] * x[0] + w[1] * x[1] + w[2] - y).powi(2))
        .sum::<f64>()
        / n
}

#[test]
fn a_function_of_slices_passes() {
    let xs = vec![[1.0, 2.0], [0.5, -1.0], [-0.3, 0.2]];
    let ys = vec![1.0, 0.0, -0.5];
    let w = vec![0.1, 0.2, 0.3];
    // Every slice differentiated: the point holds the `Vec`s.
    let report = check::gradient(
        |(w, xs, ys): &(Vec<f64>, Vec<[f64; 2]>, Vec<f64>)| fit(w, xs, ys),
        |(w, xs, ys)| fit_grad(w, xs, ys),
        &(w.clone(), xs.clone(), ys.clone()),
    );
    assert!(report.passed(1e-8), "{report}");
    assert_eq!(report.components().len(), 3 + 6 + 3);
    // Only the weights: the data is captured, its partials dropped.
    assert_gradient!(
        |w| fit(w, &xs, &ys),
        |w| {
            let (value, dw, _, _) = fit_grad(w, &xs, &ys);
            (value, dw)
        },
        &w
    );
}

#[grad(wrt(w))]
fn fit_w(w: &[f64], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
    let mut loss = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        loss += (w[0] * x[0] + w[1] * x[1] + w[2] - y).powi(2);
    }
    loss
}

#[test]
fn a_wrt_gradient_passes_with_the_data_captured() {
    let xs = [[1.0, 2.0], [0.5, -1.0]];
    let ys = [1.0, 0.0];
    assert_gradient!(
        |w| fit_w(w, &xs, &ys),
        |w| fit_w_grad(w, &xs, &ys),
        &vec![0.1, -0.2, 0.3],
        tolerance = 1e-8,
    );
}

#[test]
fn a_point_with_no_elements_passes() {
    let report = check::gradient(
        |p: &Vec<f64>| p.iter().sum(),
        |p: &Vec<f64>| (p.iter().sum(), vec![1.0; p.len()]),
        &Vec::new(),
    );
    assert!(report.passed(0.0), "{report}");
    assert!(report.worst().is_none());
}

// ---------------------------------------------------------------------------------------
// Planted bugs in hand-written gradients are caught, and the report names the element.

/// `f(a, b, c) = a·sin(b) + a·c²`.
fn model(a: f64, b: f64, c: f64) -> f64 {
    a * b.sin() + a * c * c
}

/// The right gradient, for comparison.
fn model_grad(a: f64, b: f64, c: f64) -> (f64, f64, f64, f64) {
    (model(a, b, c), b.sin() + c * c, a * b.cos(), 2.0 * a * c)
}

/// Bug: `∂f/∂c` with the wrong sign.
fn model_grad_sign_error(a: f64, b: f64, c: f64) -> (f64, f64, f64, f64) {
    let (v, da, db, dc) = model_grad(a, b, c);
    (v, da, db, -dc)
}

/// Bug: `∂f/∂c` missing the factor 2 of `d(c²)/dc`.
fn model_grad_missing_factor(a: f64, b: f64, c: f64) -> (f64, f64, f64, f64) {
    (model(a, b, c), b.sin() + c * c, a * b.cos(), a * c)
}

/// Bug: `∂f/∂a` and `∂f/∂b` returned in each other's place.
fn model_grad_swapped(a: f64, b: f64, c: f64) -> (f64, f64, f64, f64) {
    let (v, da, db, dc) = model_grad(a, b, c);
    (v, db, da, dc)
}

type ModelGrad = fn(f64, f64, f64) -> (f64, f64, f64, f64);

fn check_model(gradient: ModelGrad) -> check::Report {
    check::gradient(
        |&(a, b, c)| model(a, b, c),
        |&(a, b, c)| gradient(a, b, c),
        &(1.5, 0.4, -0.8),
    )
    .named(["a", "b", "c"])
}

#[test]
fn the_right_hand_written_gradient_passes() {
    let report = check_model(model_grad);
    assert!(report.passed(DEFAULT_TOLERANCE), "{report}");
    assert!(report.max_error() < 1e-9, "{report}");
}

#[test]
fn a_sign_error_is_caught() {
    let report = check_model(model_grad_sign_error);
    assert!(!report.passed(DEFAULT_TOLERANCE), "{report}");
    let worst = report.worst().expect("three elements");
    assert_eq!((worst.parameter, worst.flat), (2, 2));
    assert!((worst.error - 2.0).abs() < 1e-6, "{report}");
    // The other partials are fine.
    for c in &report.components()[..2] {
        assert!(c.error < 1e-9, "{report}");
    }
}

#[test]
fn a_missing_factor_is_caught() {
    let report = check_model(model_grad_missing_factor);
    assert!(!report.passed(DEFAULT_TOLERANCE), "{report}");
    let worst = report.worst().expect("three elements");
    assert_eq!((worst.parameter, worst.flat), (2, 2));
    assert!((worst.error - 0.5).abs() < 1e-6, "{report}");
}

#[test]
fn a_swapped_pair_of_partials_is_caught() {
    let report = check_model(model_grad_swapped);
    assert!(!report.passed(DEFAULT_TOLERANCE), "{report}");
    let wrong: Vec<usize> = report
        .components()
        .iter()
        .filter(|c| c.error > 0.1)
        .map(|c| c.parameter)
        .collect();
    assert_eq!(wrong, [0, 1], "{report}");
    assert!(report.components()[2].error < 1e-9, "{report}");
}

#[test]
#[should_panic(expected = "worst: `#2` (parameter 2, flat index 2)")]
fn assert_gradient_panics_with_the_report() {
    assert_gradient!(
        |&(a, b, c)| model(a, b, c),
        |&(a, b, c)| model_grad_missing_factor(a, b, c),
        &(1.5, 0.4, -0.8)
    );
}

#[test]
#[should_panic(expected = "gradient check failed (tolerance 1e-12)")]
fn assert_gradient_takes_a_tolerance() {
    // A forward difference: right to about 1e-8, not to 1e-12.
    assert_gradient!(
        |x: &f64| x.exp(),
        |x: &f64| (x.exp(), ((x + 1e-8).exp() - x.exp()) / 1e-8),
        &0.5,
        tolerance = 1e-12
    );
}

/// Bugs in vector partials: an array of rows and a slice.
fn rows(w: &[[f64; 2]; 2], p: &[f64]) -> f64 {
    w[0][0] * w[1][1] - w[0][1] * w[1][0] + p.iter().map(|v| v * v * v).sum::<f64>()
}

fn rows_grad(w: &[[f64; 2]; 2], p: &[f64]) -> (f64, [[f64; 2]; 2], Vec<f64>) {
    // Bug: ∂/∂w[1][0] should be -w[0][1]; ∂/∂p[2] is fine, p's others are fine.
    let dw = [[w[1][1], -w[1][0]], [w[0][1], w[0][0]]];
    let dp = p.iter().map(|v| 3.0 * v * v).collect();
    (rows(w, p), dw, dp)
}

#[test]
fn the_display_names_the_element_by_name_position_and_flat_index() {
    let at = ([[1.0, 2.0], [3.0, 4.0]], vec![0.5, -1.0, 2.0]);
    let report = check::gradient(|(w, p)| rows(w, p), |(w, p)| rows_grad(w, p), &at);
    let text = report.to_string();
    assert!(
        text.contains("worst: `#0[1][0]` (parameter 0, flat index 2)"),
        "{text}"
    );

    let named = report.named(["w", "p"]);
    let text = named.to_string();
    assert!(
        text.contains("worst: `w[1][0]` (parameter 0, flat index 2)"),
        "{text}"
    );
    // The table lists every element under its name, the slice's too.
    for label in [
        "w[0][0]", "w[0][1]", "w[1][0]", "w[1][1]", "p[0]", "p[1]", "p[2]",
    ] {
        assert!(
            text.lines().any(|l| l.trim_start().starts_with(label)),
            "{label} missing:\n{text}"
        );
    }
    let worst = named.worst().expect("seven elements");
    assert_eq!((worst.position.as_slice(), worst.index), (&[1, 0][..], 2));
}

#[test]
fn a_partial_of_the_wrong_length_is_reported() {
    let report = check::gradient(
        |p: &Vec<f64>| p.iter().sum(),
        |p: &Vec<f64>| (p.iter().sum(), vec![1.0; 2]),
        &vec![1.0, 2.0, 3.0],
    )
    .named(["p"]);
    assert!(!report.passed(f64::MAX));
    assert!(
        report
            .to_string()
            .contains("parameter 0 `p` has 3 elements but its partial has 2"),
        "{report}"
    );
}
