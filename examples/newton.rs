//! Newton's method with `#[grad(hessian)]` on the Rosenbrock function in 10 dimensions,
//! against gradient descent and argmin's L-BFGS (both with `#[grad]`'s gradient), from
//! the classic start `(-1.2, 1, -1.2, 1, …)`.
//!
//! `cargo run --release --example newton`
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

use argmin::core::{CostFunction, Error, Executor, Gradient, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use autodiff::prelude::*;
use nalgebra::{SMatrix, SVector};
use std::time::Instant;

/// The dimension.
const N: usize = 10;
/// The gradient norm at which a method stops.
const TOLERANCE: f64 = 1e-10;

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

/// The problem for argmin: the cost and the gradient from `rosenbrock_grad`.
struct Problem;

impl CostFunction for Problem {
    type Param = Vec<f64>;
    type Output = f64;

    fn cost(&self, x: &Vec<f64>) -> Result<f64, Error> {
        let x: [f64; N] = x.as_slice().try_into()?;
        Ok(rosenbrock(x))
    }
}

impl Gradient for Problem {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;

    fn gradient(&self, x: &Vec<f64>) -> Result<Vec<f64>, Error> {
        let x: [f64; N] = x.as_slice().try_into()?;
        Ok(rosenbrock_grad(x).1.to_vec())
    }
}

/// argmin's L-BFGS (memory 7) with a Moré–Thuente line search.
///
/// # Errors
/// If argmin fails.
pub fn lbfgs(max_iterations: u64) -> Result<Run, Error> {
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 7)
        .with_tolerance_grad(TOLERANCE)?
        .with_tolerance_cost(0.0)?;
    let result = Executor::new(Problem, solver)
        .configure(|state| state.param(start().to_vec()).max_iters(max_iterations))
        .run()?;
    let state = result.state();
    let best = state.get_best_param().cloned().unwrap_or_default();
    let x: [f64; N] = best.as_slice().try_into()?;
    let (_, gradient) = rosenbrock_grad(x);
    let iterations = usize::try_from(state.get_iter()).unwrap_or(usize::MAX);
    Ok(Run {
        iterations,
        x,
        gradient_norm: norm(&gradient),
    })
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
    fn lbfgs_reaches_the_minimum_too() {
        let run = lbfgs(10_000).expect("L-BFGS runs");
        assert!(run.x.iter().all(|x| (x - 1.0).abs() < 1e-6), "{run:?}");
    }
}
