//! `autodiff::argmin::Problem` (feature `argmin`): each argmin trait it implements
//! returns the generated function's numbers, and argmin's solvers run on it.

use argmin::core::{CostFunction, Executor, Gradient, Hessian, Jacobian, Operator, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use autodiff::argmin::Problem;
use autodiff::prelude::*;

#[grad(hessian, wrt(x))]
fn quartic(x: [f64; 2], c: f64) -> f64 {
    (x[0] - c).powi(4) + (x[0] * x[1] - 1.0).powi(2) + 0.5 * x[1] * x[1]
}

#[grad(jacobian, wrt(p))]
fn residuals(p: [f64; 2], t: &[f64], y: &[f64]) -> Vec<f64> {
    t.iter()
        .zip(y)
        .map(|(&t, &y)| p[0] * (-p[1] * t).exp() - y)
        .collect()
}

#[test]
fn the_traits_return_the_generated_functions_numbers() {
    let c = 0.7;
    let problem = Problem::new(|x: &[f64; 2]| quartic(*x, c))
        .with_gradient(|x: &[f64; 2]| quartic_grad(*x, c).1)
        .with_hessian(|x: &[f64; 2]| quartic_hessian(*x, c).2);
    let x = [0.3, -1.1];
    let (value, gradient, hessian) = quartic_hessian(x, c);
    assert_eq!(problem.cost(&x).unwrap(), value);
    assert_eq!(problem.gradient(&x).unwrap(), gradient);
    assert_eq!(problem.hessian(&x).unwrap(), hessian);
    // And those numbers are the derivatives, by central differences.
    assert_gradient!(
        |x: &[f64; 2]| quartic(*x, c),
        |x: &[f64; 2]| quartic_grad(*x, c),
        &x
    );
    assert_hessian!(|x: &[f64; 2]| quartic_grad(*x, c).1, &hessian, &x);
}

#[test]
fn residuals_are_an_operator_with_their_jacobian() {
    let (t, y) = (vec![0.0, 1.0, 2.0, 3.0], vec![2.0, 1.2, 0.7, 0.45]);
    let problem = Problem::new(|p: &[f64; 2]| residuals(*p, &t, &y))
        .with_jacobian(|p: &[f64; 2]| residuals_jacobian(*p, &t, &y).1);
    let p = [2.0, 0.5];
    assert_eq!(problem.apply(&p).unwrap(), residuals(p, &t, &y));
    let j = problem.jacobian(&p).unwrap();
    assert_eq!(j.len(), t.len());
    assert_jacobian!(|p: &[f64]| residuals([p[0], p[1]], &t, &y), &j, &[2.0, 0.5]);
}

#[test]
fn lbfgs_minimizes_through_the_adapter() {
    let c = 0.7;
    let problem = Problem::new(|x: &Vec<f64>| quartic([x[0], x[1]], c))
        .with_gradient(|x: &Vec<f64>| quartic_grad([x[0], x[1]], c).1.to_vec());
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 5)
        .with_tolerance_grad(1e-10)
        .unwrap();
    let result = Executor::new(problem, solver)
        .configure(|state| state.param(vec![1.0, 1.0]).max_iters(200))
        .run()
        .unwrap();
    let best = result.state().get_best_param().unwrap();
    let (_, gradient) = quartic_grad([best[0], best[1]], c);
    assert!(
        gradient.iter().all(|g| g.abs() < 1e-8),
        "{best:?}: {gradient:?}"
    );
}
