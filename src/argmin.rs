//! [argmin](https://argmin-rs.org) without glue (feature `argmin`): a problem made of
//! closures around the generated functions, with their fixed data captured.
//!
//! argmin's solvers take a problem that implements its traits: [`CostFunction`] and
//! [`Gradient`] for L-BFGS and the other gradient methods, [`Hessian`] for Newton and
//! trust-region methods, [`Operator`] (the residuals) and [`Jacobian`] for Gauss–Newton.
//! [`Problem`] implements each trait whose closure it was given:
//!
//! ```
//! use autodiff::prelude::*;
//! use argmin::core::{CostFunction, Gradient, Hessian};
//!
//! #[grad(hessian, wrt(x))]
//! fn rosenbrock(x: [f64; 2], a: f64) -> f64 {
//!     (a - x[0]).powi(2) + 100.0 * (x[1] - x[0] * x[0]).powi(2)
//! }
//!
//! let a = 1.0; // data the solver does not change, captured by the closures
//! let problem = autodiff::argmin::Problem::new(|x: &[f64; 2]| rosenbrock(*x, a))
//!     .with_gradient(|x: &[f64; 2]| rosenbrock_grad(*x, a).1)
//!     .with_hessian(|x: &[f64; 2]| rosenbrock_hessian(*x, a).2);
//!
//! assert_eq!(problem.cost(&[1.0, 1.0])?, 0.0);
//! assert_eq!(problem.gradient(&[1.0, 1.0])?, [0.0, 0.0]);
//! assert_eq!(problem.hessian(&[1.0, 1.0])?, [[802.0, -400.0], [-400.0, 200.0]]);
//! # Ok::<(), argmin::core::Error>(())
//! ```
//!
//! The parameter type is the one the solver works with (`Vec<f64>` with argmin-math's
//! `vec` backend, nalgebra's vectors with its `nalgebra_latest` backend), and each closure
//! converts where the generated function takes another; `examples/iris.rs` (L-BFGS) and
//! `examples/newton.rs` (argmin's Newton method beside a hand-written one) use it.
//!
//! [`CostFunction`]: argmin::core::CostFunction
//! [`Gradient`]: argmin::core::Gradient
//! [`Hessian`]: argmin::core::Hessian
//! [`Operator`]: argmin::core::Operator
//! [`Jacobian`]: argmin::core::Jacobian

use argmin::core::{CostFunction, Error, Gradient, Hessian, Jacobian, Operator};
use core::marker::PhantomData;

/// An argmin problem over parameters of type `P`: the function `F` (the cost, or the
/// residuals), and the derivatives `G`, `H`, `J` where given (`()` where not).
///
/// It implements [`CostFunction`] when `F` returns `f64`, [`Operator`] for any output of
/// `F`, and [`Gradient`], [`Hessian`] and [`Jacobian`] when those closures were given.
pub struct Problem<P, F, G = (), H = (), J = ()> {
    function: F,
    gradient: G,
    hessian: H,
    jacobian: J,
    param: PhantomData<fn(&P)>,
}

impl<P, F> Problem<P, F> {
    /// A problem of the function `f`: the cost (`Fn(&P) -> f64`), or for least squares
    /// the residuals (`Fn(&P) -> R`, argmin's [`Operator`]).
    pub fn new(function: F) -> Self {
        Problem {
            function,
            gradient: (),
            hessian: (),
            jacobian: (),
            param: PhantomData,
        }
    }
}

impl<P, F, G, H, J> Problem<P, F, G, H, J> {
    /// With the gradient `Fn(&P) -> Gr`, typically `|p| f_grad(p, …).1`.
    pub fn with_gradient<G2>(self, gradient: G2) -> Problem<P, F, G2, H, J> {
        Problem {
            function: self.function,
            gradient,
            hessian: self.hessian,
            jacobian: self.jacobian,
            param: PhantomData,
        }
    }

    /// With the Hessian `Fn(&P) -> Hs`, typically from `f_hessian` (`#[grad(hessian)]`).
    pub fn with_hessian<H2>(self, hessian: H2) -> Problem<P, F, G, H2, J> {
        Problem {
            function: self.function,
            gradient: self.gradient,
            hessian,
            jacobian: self.jacobian,
            param: PhantomData,
        }
    }

    /// With the Jacobian of the residuals `Fn(&P) -> Jc`, typically from `f_jacobian`
    /// (`#[grad(jacobian)]`).
    pub fn with_jacobian<J2>(self, jacobian: J2) -> Problem<P, F, G, H, J2> {
        Problem {
            function: self.function,
            gradient: self.gradient,
            hessian: self.hessian,
            jacobian,
            param: PhantomData,
        }
    }
}

impl<P, F, G, H, J> CostFunction for Problem<P, F, G, H, J>
where
    F: Fn(&P) -> f64,
{
    type Param = P;
    type Output = f64;

    fn cost(&self, param: &P) -> Result<f64, Error> {
        Ok((self.function)(param))
    }
}

impl<P, F, R, G, H, J> Operator for Problem<P, F, G, H, J>
where
    F: Fn(&P) -> R,
{
    type Param = P;
    type Output = R;

    fn apply(&self, param: &P) -> Result<R, Error> {
        Ok((self.function)(param))
    }
}

impl<P, F, G, Gr, H, J> Gradient for Problem<P, F, G, H, J>
where
    G: Fn(&P) -> Gr,
{
    type Param = P;
    type Gradient = Gr;

    fn gradient(&self, param: &P) -> Result<Gr, Error> {
        Ok((self.gradient)(param))
    }
}

impl<P, F, G, H, Hs, J> Hessian for Problem<P, F, G, H, J>
where
    H: Fn(&P) -> Hs,
{
    type Param = P;
    type Hessian = Hs;

    fn hessian(&self, param: &P) -> Result<Hs, Error> {
        Ok((self.hessian)(param))
    }
}

impl<P, F, G, H, J, Jc> Jacobian for Problem<P, F, G, H, J>
where
    J: Fn(&P) -> Jc,
{
    type Param = P;
    type Jacobian = Jc;

    fn jacobian(&self, param: &P) -> Result<Jc, Error> {
        Ok((self.jacobian)(param))
    }
}
