//! Quick start: minimise the Rosenbrock function with gradient descent.
//!
//! ```text
//! cargo run --release --example quickstart
//! ```
//!
//! The Rosenbrock function `f(x, y) = (1 - x)² + 100·(y - x²)²` has its minimum, 0, at
//! `(1, 1)`, at the bottom of a long, narrow, curved valley: easy to fall into, slow to walk
//! along. It is the classic test of an optimiser, and a good first program for `autodiff`
//! because the only thing gradient descent needs is the gradient — which `#[grad]` writes
//! for us. Before using it, the program checks it against central finite differences
//! with `autodiff::check`, as a test would.

use autodiff::check;
use autodiff::prelude::*;

/// The function to minimise, written as plain Rust.
///
/// `#[grad]` leaves `rosenbrock` exactly as written and generates, next to it,
///
/// ```text
/// fn rosenbrock_grad(x: f64, y: f64) -> (f64, f64, f64)   // (f, ∂f/∂x, ∂f/∂y)
/// ```
///
/// a straight-line function that computes the value and both partial derivatives in one
/// pass, with no tape and no heap allocation.
#[grad]
fn rosenbrock(x: f64, y: f64) -> f64 {
    let a = 1.0 - x;
    let b = y - x * x;
    a * a + 100.0 * b * b
}

/// The step size. The valley's walls are steep (the curvature across the valley near the
/// minimum is about 1000), so a step larger than about 2/1000 would make the iterates bounce
/// from wall to wall and diverge; 1e-3 is safely below that.
const LEARNING_RATE: f64 = 1e-3;

/// Stop once the gradient is this small: we are at the bottom.
const TOLERANCE: f64 = 1e-8;

/// A safety net, in case the iteration does not converge.
const MAX_STEPS: usize = 200_000;

/// Print a progress line every this many steps.
const REPORT_EVERY: usize = 5_000;

fn main() {
    // The classic starting point, on the far side of the valley's bend.
    let (mut x, mut y) = (-1.2, 1.0);

    // Trust, but verify: the generated gradient against central differences at the start.
    // (In a test, `assert_gradient!` with the same arguments panics with the report.)
    let report = check::gradient(
        |&(x, y)| rosenbrock(x, y),
        |&(x, y)| rosenbrock_grad(x, y),
        &(x, y),
    )
    .named(["x", "y"]);
    assert!(report.passed(check::DEFAULT_TOLERANCE), "{report}");
    println!(
        "rosenbrock_grad agrees with central differences at ({x}, {y}): largest relative \
         error {:.1e}\n",
        report.max_error()
    );

    println!("Gradient descent on the Rosenbrock function (1 - x)² + 100·(y - x²)²");
    println!("from ({x}, {y}), step size {LEARNING_RATE}\n");
    println!(
        "{:>7}  {:>10}  {:>10}  {:>12}  {:>12}",
        "step", "x", "y", "f(x, y)", "|∇f|"
    );

    let mut step = 0;
    loop {
        // One call gives the value and the gradient.
        let (value, dx, dy) = rosenbrock_grad(x, y);
        let norm = dx.hypot(dy);

        let done = norm < TOLERANCE || step == MAX_STEPS;
        if step % REPORT_EVERY == 0 || done {
            println!("{step:>7}  {x:>10.6}  {y:>10.6}  {value:>12.4e}  {norm:>12.4e}");
        }
        if done {
            break;
        }

        // Walk downhill: against the gradient.
        x -= LEARNING_RATE * dx;
        y -= LEARNING_RATE * dy;
        step += 1;
    }

    let (value, dx, dy) = rosenbrock_grad(x, y);
    // The generated function computes the same value as the original, bit for bit.
    assert_eq!(value.to_bits(), rosenbrock(x, y).to_bits());

    println!();
    if dx.hypot(dy) < TOLERANCE {
        println!("converged in {step} steps");
    } else {
        println!("stopped after {step} steps without converging");
    }
    println!("minimum found at (x, y) = ({x:.9}, {y:.9})");
    println!("f(x, y) = {value:.3e}   (the exact minimum is f(1, 1) = 0)");
    println!("distance to (1, 1) = {:.3e}", (x - 1.0).hypot(y - 1.0));
}
