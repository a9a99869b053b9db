//! Helpers shared by the integration tests: finite differences and tolerant comparison.
#![allow(dead_code)]

/// Central finite difference of `f` along coordinate `i` at `point`.
pub fn central_difference(f: impl Fn(&[f64]) -> f64, point: &[f64], i: usize) -> f64 {
    let h = 1e-6 * point[i].abs().max(1.0);
    let mut plus = point.to_vec();
    let mut minus = point.to_vec();
    plus[i] += h;
    minus[i] -= h;
    (f(&plus) - f(&minus)) / (plus[i] - minus[i])
}

/// The whole gradient of `f` at `point` by central differences.
pub fn fd_gradient(f: impl Fn(&[f64]) -> f64, point: &[f64]) -> Vec<f64> {
    (0..point.len())
        .map(|i| central_difference(&f, point, i))
        .collect()
}

/// Asserts `actual ≈ expected` to a relative (or, near zero, absolute) tolerance.
#[track_caller]
pub fn assert_close(actual: f64, expected: f64, tolerance: f64, what: &str) {
    let scale = expected.abs().max(1.0);
    assert!(
        (actual - expected).abs() <= tolerance * scale,
        "{what}: got {actual}, expected {expected} (tolerance {tolerance})"
    );
}

/// Asserts two gradients agree entry by entry.
#[track_caller]
pub fn assert_all_close(actual: &[f64], expected: &[f64], tolerance: f64, what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: lengths differ");
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert_close(*a, *e, tolerance, &format!("{what}[{i}]"));
    }
}

/// The gradient of `f` with respect to every differentiable number of `m` (in its flat
/// view's order) by central differences.
pub fn fd_flat_gradient<M: autodiff::Differentiable + Clone>(
    m: &M,
    f: impl Fn(&M) -> f64,
) -> Vec<f64> {
    fd_gradient(
        |flat| {
            let mut at = m.clone();
            at.copy_from_flat(flat);
            f(&at)
        },
        &m.to_flat_vec(),
    )
}

/// The gradient of `f` with respect to every number of the rows `xs` (row by row) by
/// central differences.
pub fn fd_rows_gradient<const N: usize>(
    f: impl Fn(&[[f64; N]]) -> f64,
    xs: &[[f64; N]],
) -> Vec<f64> {
    fd_gradient(
        |flat| {
            let rows: Vec<[f64; N]> = flat
                .chunks_exact(N)
                .map(|row| row.try_into().expect("a row of N numbers"))
                .collect();
            f(&rows)
        },
        xs.as_flattened(),
    )
}

/// The central difference `(g(h) - g(-h)) / 2h` of a vector function of a step: the
/// derivative of a gradient along a direction, a Hessian–vector product's reference.
pub fn slope(g: impl Fn(f64) -> Vec<f64>, h: f64) -> Vec<f64> {
    g(h).iter()
        .zip(g(-h))
        .map(|(up, down)| (up - down) / (2.0 * h))
        .collect()
}
