//! The generated functions of a crate that renamed the dependency, against closed forms
//! and the facade's checkers (all through the name `ad`).

use ad::prelude::*;
use autodiff_renamed::{fit, fit_grad, fit_hvp, fit_jvp, Line, Spring};
use autodiff_renamed::{residuals, residuals_jacobian, rosenbrock_hessian, softplus_grad};

#[test]
fn struct_parameter_gradient_forward_mode_and_hvp() {
    let line = Line { a: 2.0, b: -1.0 };
    let (xs, ys) = ([0.0, 1.0, 2.0], [0.5, 1.5, 2.0]);
    let (value, d) = fit_grad(&line, &xs, &ys);
    assert_eq!(value, fit(&line, &xs, &ys));
    // ∂/∂a = Σ 2 r x, ∂/∂b = Σ 2 r, r = a x + b − y.
    let r: Vec<f64> = xs.iter().zip(&ys).map(|(x, y)| 2.0 * x - 1.0 - y).collect();
    let da: f64 = r.iter().zip(&xs).map(|(r, x)| 2.0 * r * x).sum();
    let db: f64 = r.iter().map(|r| 2.0 * r).sum();
    assert!((d.a - da).abs() < 1e-12 && (d.b - db).abs() < 1e-12);
    let direction = Line { a: 1.0, b: 0.0 };
    let (_, along) = fit_jvp(&line, &xs, &ys, &direction);
    assert!((along - da).abs() < 1e-12);
    // H = 2 [[Σx², Σx], [Σx, n]]; H·(1, 0) = (2Σx², 2Σx).
    let (_, _, hv) = fit_hvp(&line, &xs, &ys, &direction);
    assert!((hv.a - 10.0).abs() < 1e-12 && (hv.b - 6.0).abs() < 1e-12);
}

#[test]
fn jacobian_of_a_vector_output() {
    let (t, y) = ([0.0, 1.0, 2.0], [2.0, 1.2, 0.7]);
    let (r, j) = residuals_jacobian([2.0, 0.5], &t, &y);
    assert_eq!(r, residuals([2.0, 0.5], &t, &y));
    assert_jacobian!(|p: &[f64]| residuals([p[0], p[1]], &t, &y), &j, &[2.0, 0.5]);
}

#[test]
fn crate_option_as_a_path_and_as_a_string() {
    let (value, gradient, h) = rosenbrock_hessian([1.0, 1.0]);
    assert_eq!((value, gradient), (0.0, [0.0, 0.0]));
    assert_eq!(h, [[802.0, -400.0], [-400.0, 200.0]]);
    let (value, d) = softplus_grad(0.3);
    assert_eq!(value, 0.3f64.exp().ln_1p());
    assert!((d - 0.3f64.sigmoid()).abs() < 1e-15);
}

#[test]
fn derive_with_a_crate_option_and_a_method() {
    let spring = Spring { k: 3.0 };
    let (value, d_self, dx) = spring.energy_grad(2.0);
    assert_eq!(value, 6.0);
    assert_eq!((d_self.k, dx), (2.0, 6.0));
}
