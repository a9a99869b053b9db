//! Newton's method with `#[grad(hessian)]` on the Rosenbrock function in 10 dimensions,
//! against argmin's trust-region method (on the same Hessian), gradient descent and
//! argmin's L-BFGS (both with `#[grad]`'s gradient), from the classic start
//! `(-1.2, 1, -1.2, 1, …)`. argmin sees the generated functions through
//! `autodiff::argmin::Problem` (feature `argmin`), with no trait impls written here.
//!
//! `cargo run --release --features argmin --example newton`
//!
//! Newton's step solves `H·s = -∇f` (nalgebra's Cholesky factorization; where `H` is not
//! positive definite, far from the minimum, a multiple of the identity is added to it
//! until it is), and a backtracking line search halves it until the function decreases
//! enough (Armijo). Gradient descent takes the negative gradient with the same line
//! search. Each method runs until the gradient's norm is below 1e-10 or its iteration
//! budget is spent; the program prints the iterations, the time and the distance to the
//! global minimum `(1, …, 1)` of each. From this start Newton's method goes, in 27
//! iterations, to the other minimum of the 10-dimensional function, a local one near
//! `(-1, 1, …, 1)` (at distance 2); L-BFGS's longer steps reach the global one.

use argmin::core::observers::{Observe, ObserverMode};
use argmin::core::{CostFunction, Error, Executor, Gradient, Hessian, State};
use argmin::core::{IterState, KV};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use argmin::solver::trustregion::{Steihaug, TrustRegion};
use autodiff::prelude::*;
use nalgebra::{SMatrix, SVector};
use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;

/// The dimension.
const N: usize = 10;
/// The gradient norm at which a method stops.
const TOLERANCE: f64 = 1e-10;
/// The same for argmin's trust-region method, which stalls just above [`TOLERANCE`] here:
/// its test of a step compares the decrease with the model's prediction, and near the
/// minimum the decrease is lost in the cost's rounding.
const TRUST_REGION_TOLERANCE: f64 = 1e-9;

/// `Σ 100·(xᵢ₊₁ − xᵢ²)² + (1 − xᵢ)²`.
#[grad(hessian)]
pub fn rosenbrock(x: [f64; N]) -> f64 {
    let mut total = 0.0;
    for i in 0..N - 1 {
        total += 100.0 * (x[i + 1] - x[i] * x[i]).powi(2) + (1.0 - x[i]).powi(2);
    }
    total
}

/// The classic start: `-1.2` in the even places, `1` in the odd.
#[must_use]
pub fn start() -> [f64; N] {
    std::array::from_fn(|i| if i % 2 == 0 { -1.2 } else { 1.0 })
}

/// What a method did: its iterations, the point it stopped at and the gradient's norm
/// there.
#[derive(Debug)]
pub struct Run {
    /// Iterations taken.
    pub iterations: usize,
    /// The point reached.
    pub x: [f64; N],
    /// The gradient's norm there.
    pub gradient_norm: f64,
}

fn norm(v: &[f64; N]) -> f64 {
    v.iter().map(|a| a * a).sum::<f64>().sqrt()
}

/// Halves `step` along `direction` until `f` decreases by at least `1e-4 · step · slope`
/// (Armijo), from at most 1; returns the new point and its value.
fn backtrack(x: &[f64; N], value: f64, gradient: &[f64; N], direction: &[f64; N]) -> [f64; N] {
    let slope: f64 = gradient.iter().zip(direction).map(|(g, d)| g * d).sum();
    let mut step = 1.0;
    loop {
        let next: [f64; N] = std::array::from_fn(|i| x[i] + step * direction[i]);
        if rosenbrock(next) <= value + 1e-4 * step * slope || step < 1e-16 {
            return next;
        }
        step *= 0.5;
    }
}

/// Newton's method with `rosenbrock_hessian`.
#[must_use]
pub fn newton(max_iterations: usize) -> Run {
    let mut x = start();
    for iteration in 0..max_iterations {
        let (value, gradient, hessian) = rosenbrock_hessian(x);
        if norm(&gradient) < TOLERANCE {
            return Run {
                iterations: iteration,
                x,
                gradient_norm: norm(&gradient),
            };
        }
        let h = SMatrix::<f64, N, N>::from_fn(|i, j| hessian[i][j]);
        let g = SVector::<f64, N>::from(gradient);
        // The Newton direction of H + τ·I, τ = 0 where H is positive definite, else grown
        // until it is (Nocedal and Wright, "Cholesky with added multiple of the
        // identity"): a descent direction everywhere.
        let scale = h.diagonal().amax().max(1.0);
        let mut shift = 0.0;
        let direction = loop {
            let shifted = h + SMatrix::<f64, N, N>::identity() * shift;
            if let Some(cholesky) = shifted.cholesky() {
                break -cholesky.solve(&g);
            }
            shift = (2.0 * shift).max(1e-3 * scale);
        };
        x = backtrack(&x, value, &gradient, &direction.into());
    }
    let (_, gradient) = rosenbrock_grad(x);
    Run {
        iterations: max_iterations,
        x,
        gradient_norm: norm(&gradient),
    }
}

/// Gradient descent with the same line search.
#[must_use]
pub fn gradient_descent(max_iterations: usize) -> Run {
    let mut x = start();
    for iteration in 0..max_iterations {
        let (value, gradient) = rosenbrock_grad(x);
        if norm(&gradient) < TOLERANCE {
            return Run {
                iterations: iteration,
                x,
                gradient_norm: norm(&gradient),
            };
        }
        let direction = gradient.map(|g| -g);
        x = backtrack(&x, value, &gradient, &direction);
    }
    let (_, gradient) = rosenbrock_grad(x);
    Run {
        iterations: max_iterations,
        x,
        gradient_norm: norm(&gradient),
    }
}

/// The problem for argmin, from the generated functions: the cost, the gradient from
/// `rosenbrock_grad` and the Hessian from `rosenbrock_hessian`, over argmin's `Vec<f64>`.
fn problem() -> impl CostFunction<Param = Vec<f64>, Output = f64>
       + Gradient<Param = Vec<f64>, Gradient = Vec<f64>>
       + Hessian<Param = Vec<f64>, Hessian = Vec<Vec<f64>>> {
    let point = |x: &Vec<f64>| -> [f64; N] { std::array::from_fn(|i| x[i]) };
    autodiff::argmin::Problem::new(move |x: &Vec<f64>| rosenbrock(point(x)))
        .with_gradient(move |x: &Vec<f64>| rosenbrock_grad(point(x)).1.to_vec())
        .with_hessian(move |x: &Vec<f64>| {
            let (_, _, h) = rosenbrock_hessian(point(x));
            h.iter().map(|row| row.to_vec()).collect()
        })
}

/// The end of an argmin run, its best point and its iterations, as a [`Run`].
fn run_of(best: Option<&Vec<f64>>, iterations: u64) -> Run {
    let x: [f64; N] =
        std::array::from_fn(|i| best.and_then(|b| b.get(i)).copied().unwrap_or(f64::NAN));
    let (_, gradient) = rosenbrock_grad(x);
    Run {
        iterations: usize::try_from(iterations).unwrap_or(usize::MAX),
        x,
        gradient_norm: norm(&gradient),
    }
}

/// The state of argmin's trust-region method over `Vec<f64>`.
type TrustRegionState = IterState<Vec<f64>, Vec<f64>, (), Vec<Vec<f64>>, (), f64>;

/// Records the first iteration at which the gradient's norm is below
/// [`TRUST_REGION_TOLERANCE`]:
/// argmin's trust-region method has no stopping rule of its own but the iteration budget.
struct Converged(Rc<Cell<Option<u64>>>);

impl Observe<TrustRegionState> for Converged {
    fn observe_iter(&mut self, state: &TrustRegionState, _kv: &KV) -> Result<(), Error> {
        let below = state
            .get_gradient()
            .is_some_and(|g| g.iter().map(|x| x * x).sum::<f64>().sqrt() < TRUST_REGION_TOLERANCE);
        if below && self.0.get().is_none() {
            // Observed before the count moves on: `get_iter` is the iteration's index.
            self.0.set(Some(state.get_iter() + 1));
        }
        Ok(())
    }
}

/// argmin's trust-region method with the Steihaug (truncated conjugate gradient)
/// subproblem solver, on Hessian–vector products of the exact Hessian, for
/// `max_iterations`; the run's iterations are those it took to reach
/// [`TRUST_REGION_TOLERANCE`] (the budget when it did not).
///
/// # Errors
/// If argmin fails.
pub fn trust_region(max_iterations: u64) -> Result<Run, Error> {
    let converged = Rc::new(Cell::new(None));
    let solver = TrustRegion::new(Steihaug::new());
    let result = Executor::new(problem(), solver)
        .configure(|state| state.param(start().to_vec()).max_iters(max_iterations))
        .add_observer(Converged(Rc::clone(&converged)), ObserverMode::Always)
        .run()?;
    let state = result.state();
    let iterations = converged.get().unwrap_or(state.get_iter());
    Ok(run_of(state.get_best_param(), iterations))
}

/// argmin's L-BFGS (memory 7) with a Moré–Thuente line search.
///
/// # Errors
/// If argmin fails.
pub fn lbfgs(max_iterations: u64) -> Result<Run, Error> {
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7)
        .with_tolerance_grad(TOLERANCE)?
        .with_tolerance_cost(0.0)?;
    let result = Executor::new(problem(), solver)
        .configure(|state| state.param(start().to_vec()).max_iters(max_iterations))
        .run()?;
    let state = result.state();
    Ok(run_of(state.get_best_param(), state.get_iter()))
}

fn main() -> Result<(), Error> {
    println!(
        "Rosenbrock in {N} dimensions from (-1.2, 1, -1.2, 1, …); stop at |∇f| < {TOLERANCE:e}\n"
    );
    println!("| method | iterations | time | gradient norm at the end | distance to (1, …, 1) |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    let report = |name: &str, run: &Run, seconds: f64| {
        let distance = run.x.iter().map(|x| (x - 1.0).powi(2)).sum::<f64>().sqrt();
        println!(
            "| {name} | {} | {:.1} µs | {:.1e} | {distance:.1e} |",
            run.iterations,
            seconds * 1e6,
            run.gradient_norm
        );
    };
    // Each timed over enough repetitions to be measured.
    let time = |f: &dyn Fn() -> Run| {
        let once = f();
        let repeats = 20;
        let started = Instant::now();
        for _ in 0..repeats {
            std::hint::black_box(f());
        }
        (once, started.elapsed().as_secs_f64() / f64::from(repeats))
    };
    let (run, seconds) = time(&|| newton(200));
    report("Newton (`_hessian`)", &run, seconds);
    // Run as many iterations as it takes to converge, found by a first run.
    let budget = trust_region(1_000)
        .expect("the trust-region method runs")
        .iterations;
    let budget = u64::try_from(budget).unwrap_or(u64::MAX);
    let (run, seconds) = time(&|| trust_region(budget).expect("the trust-region method runs"));
    report(
        "trust region, Steihaug CG (argmin, `_hessian`)",
        &run,
        seconds,
    );
    let (run, seconds) = time(&|| lbfgs(10_000).expect("L-BFGS runs"));
    report("L-BFGS (argmin, `_grad`)", &run, seconds);
    let (run, seconds) = time(&|| gradient_descent(100_000));
    report("gradient descent (`_grad`)", &run, seconds);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newton_reaches_a_minimum_in_few_iterations() {
        let run = newton(200);
        assert!(run.gradient_norm < TOLERANCE, "{run:?}");
        assert!(run.iterations < 100, "{run:?}");
        // A minimum: the Hessian there is positive definite. From this start it is the
        // local minimum of the 10-dimensional function near (-1, 1, …, 1).
        let (_, _, hessian) = rosenbrock_hessian(run.x);
        let h = SMatrix::<f64, N, N>::from_fn(|i, j| hessian[i][j]);
        assert!(h.cholesky().is_some(), "{run:?}");
        assert!((run.x[0] + 0.99).abs() < 0.01, "{run:?}");
        assert!(run.x[1..].iter().all(|x| (x - 1.0).abs() < 0.02), "{run:?}");
    }

    #[test]
    fn argmin_trust_region_reaches_a_minimum_with_the_hessian() {
        let run = trust_region(1_000).expect("the trust-region method runs");
        assert!(run.iterations < 100, "{run:?}");
        assert!(run.gradient_norm < TRUST_REGION_TOLERANCE, "{run:?}");
        let (_, _, hessian) = rosenbrock_hessian(run.x);
        let h = SMatrix::<f64, N, N>::from_fn(|i, j| hessian[i][j]);
        assert!(h.cholesky().is_some(), "{run:?}");
    }

    #[test]
    fn lbfgs_reaches_the_minimum_too() {
        let run = lbfgs(10_000).expect("L-BFGS runs");
        assert!(run.x.iter().all(|x| (x - 1.0).abs() < 1e-6), "{run:?}");
    }
}
