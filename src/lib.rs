// The crate's documentation is its guide, one file per chapter (rendered in this order on
// docs.rs; every Rust example in it is a doc test).
#![doc = include_str!("guide/overview.md")]
#![doc = include_str!("guide/language.md")]
#![doc = include_str!("guide/models.md")]
#![doc = include_str!("guide/loops.md")]
#![doc = include_str!("guide/f32.md")]
#![doc = include_str!("guide/custom.md")]
#![doc = include_str!("guide/engines.md")]
#![doc = include_str!("guide/checking.md")]
#![doc = include_str!("guide/no_std.md")]
#![doc = include_str!("guide/ecosystem.md")]
#![doc = include_str!("guide/internals.md")]
#![doc = include_str!("guide/performance.md")]
#![cfg_attr(not(feature = "std"), no_std)]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "alloc")]
extern crate alloc;
extern crate self as autodiff;

#[cfg(feature = "argmin")]
pub mod argmin;

pub use autodiff_macros::{grad, Differentiable};
#[cfg(feature = "alloc")]
pub use autodiff_runtime::Matrix;
#[cfg(feature = "std")]
pub use autodiff_runtime::{calc, check, Gradient, Operand, Tape, Value, Var};
pub use autodiff_runtime::{rules, stop_gradient, Differentiable, DomainError, F64Ext, Real};

/// The thread-local pools of workspaces that gradients with loops of run-time length keep
/// their saved values in (the guide's "Loops").
///
/// A gradient call takes a workspace from its thread's pool and gives it back with its
/// capacity, so later calls allocate nothing. After a call far larger than the ones that
/// follow, a workspace shrinks by itself once 64 calls in a row have used less than a
/// quarter of it (to twice the most they used, and never below 1 MiB a stack); [`release`](crate::workspaces::release)
/// gives this thread's pool back at once.
///
/// ```
/// use autodiff::prelude::*;
///
/// #[grad]
/// fn mean_square(xs: &[f64]) -> f64 {
///     let mut s = 0.0;
///     for &x in xs {
///         s += (x * x).tanh();
///     }
///     s / xs.len() as f64
/// }
///
/// let large = vec![0.5; 1_000_000];
/// let _ = mean_square_grad(&large); // keeps 1,000,000 partials in this thread's pool
/// assert!(autodiff::workspaces::pooled_bytes() >= 8_000_000);
/// autodiff::workspaces::release();
/// assert_eq!(autodiff::workspaces::pooled_bytes(), 0);
/// ```
#[cfg(feature = "std")]
pub mod workspaces {
    /// Frees every workspace in this thread's pool. The next gradient call on this
    /// thread that needs one allocates it again.
    pub fn release() {
        autodiff_runtime::Workspace::release_pool();
    }

    /// The bytes of capacity that this thread's pool holds.
    #[must_use]
    pub fn pooled_bytes() -> usize {
        autodiff_runtime::Workspace::pooled_bytes()
    }
}

/// The chunks and the fixed tree of `#[grad(parallel)]` (feature `rayon`), for
/// data-parallel code of your own: gradients of chunks of the samples computed on threads
/// or on the ranks of an MPI job, then added in an order that depends on the number of
/// samples only, so that the result has the same bits on any number of workers (the
/// guide's "Every core", and the crate's `mpi/` example).
///
/// ```
/// use autodiff::parallel::{chunk, chunks, reduce, CHUNK};
///
/// let xs: Vec<f64> = (0..1_000).map(|i| (i as f64).sin()).collect();
/// // Each chunk's part, computed anywhere (here, in place), then added in the fixed tree.
/// let parts: Vec<f64> = (0..chunks(xs.len()))
///     .map(|k| xs[chunk(k, xs.len())].iter().sum())
///     .collect();
/// let add = |a: f64, b: f64| a + b;
/// let total = reduce(xs.len(), &|range| parts[range.start / CHUNK], &add);
/// // The same bits from the chunks summed on a pool of one thread.
/// let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
/// let on_one = one_thread.install(|| reduce(xs.len(), &|r| xs[r].iter().sum::<f64>(), &add));
/// assert_eq!(on_one.to_bits(), total.to_bits());
/// ```
#[cfg(feature = "rayon")]
pub mod parallel {
    pub use autodiff_runtime::parallel::{chunk, chunks, reduce, CHUNK};
}

/// Everything a user of `#[grad]` and the engines needs: `use autodiff::prelude::*;`.
///
/// It brings [`Real`] into scope too: in a `no_std` crate, where `f64` has no `tanh` of
/// its own, that is what `x.tanh()` calls.
pub mod prelude {
    #[cfg(feature = "std")]
    pub use crate::{assert_gradient, assert_hessian, assert_jacobian, Tape, Value, Var};
    pub use crate::{grad, stop_gradient, Differentiable, F64Ext, Real};
}

/// Asserts that a gradient agrees with central finite differences: runs
/// [`check::gradient`]`(f, gradient, at)` and panics with the [`check::Report`] unless
/// it [passed](check::Report::passed) `tolerance`
/// ([`check::DEFAULT_TOLERANCE`], 1e-6, when none is given).
///
/// The arguments are those of [`check::gradient`]: the function and its gradient as
/// closures of the point, and the point, one parameter (`f64`, `[T; N]`, `Vec<T>`) or a
/// tuple of them. Data that is not differentiated is captured by the closures.
///
/// ```
/// use autodiff::prelude::*;
///
/// #[grad(wrt(w))]
/// fn loss(w: &[f64], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
///     xs.iter()
///         .zip(ys)
///         .map(|(x, y)| (w[0] * x[0] + w[1] * x[1] + w[2] - y).powi(2))
///         .sum::<f64>()
/// }
///
/// let (xs, ys) = ([[1.0, 2.0], [0.5, -1.0]], [1.0, 0.0]);
/// let w = vec![0.1, 0.2, 0.3];
/// assert_gradient!(|w| loss(w, &xs, &ys), |w| loss_grad(w, &xs, &ys), &w);
/// assert_gradient!(
///     |w| loss(w, &xs, &ys),
///     |w| loss_grad(w, &xs, &ys),
///     &w,
///     tolerance = 1e-8,
/// );
/// ```
///
/// A wrong gradient panics with a report that names the element:
///
/// ```should_panic
/// use autodiff::prelude::*;
///
/// fn f(x: f64, y: f64) -> f64 {
///     x * y.exp()
/// }
/// fn f_grad(x: f64, y: f64) -> (f64, f64, f64) {
///     (f(x, y), y.exp(), y.exp()) // ∂f/∂y is missing its factor x
/// }
/// // panics: "gradient check failed … worst: `#1` (parameter 1, flat index 1) …"
/// assert_gradient!(|&(x, y)| f(x, y), |&(x, y)| f_grad(x, y), &(2.0, 0.5));
/// ```
#[cfg(feature = "std")]
#[macro_export]
macro_rules! assert_gradient {
    ($f:expr, $gradient:expr, $at:expr $(,)?) => {
        $crate::assert_gradient!(
            $f,
            $gradient,
            $at,
            tolerance = $crate::check::DEFAULT_TOLERANCE
        )
    };
    ($f:expr, $gradient:expr, $at:expr, tolerance = $tolerance:expr $(,)?) => {
        match ($crate::check::gradient($f, $gradient, $at), $tolerance) {
            (report, tolerance) => {
                if !report.passed(tolerance) {
                    ::core::panic!(
                        "gradient check failed (tolerance {:e}):\n{}",
                        tolerance,
                        report
                    );
                }
            }
        }
    };
}

/// Asserts that a Hessian agrees with central differences of its gradient
/// ([`check::hessian`]), with [`check::DEFAULT_TOLERANCE`] or a tolerance given; on
/// failure, panics with the report (the worst entry and its difference).
///
/// ```
/// use autodiff::prelude::*;
///
/// #[grad(hessian)]
/// fn f(x: [f64; 2]) -> f64 {
///     (x[0] * x[1]).sin() + x[1].powi(3)
/// }
///
/// let at = [0.3, -0.8];
/// assert_hessian!(|x: &[f64; 2]| f_grad(*x).1, &f_hessian(at).2, &at);
/// ```
#[cfg(feature = "std")]
#[macro_export]
macro_rules! assert_hessian {
    ($gradient:expr, $hessian:expr, $at:expr $(,)?) => {
        $crate::assert_hessian!(
            $gradient,
            $hessian,
            $at,
            tolerance = $crate::check::DEFAULT_TOLERANCE
        )
    };
    ($gradient:expr, $hessian:expr, $at:expr, tolerance = $tolerance:expr $(,)?) => {
        match ($crate::check::hessian($gradient, $hessian, $at), $tolerance) {
            (report, tolerance) => {
                if !report.passed(tolerance) {
                    ::core::panic!(
                        "Hessian check failed (tolerance {:e}): {}",
                        tolerance,
                        report
                    );
                }
            }
        }
    };
}

/// Asserts that a Jacobian agrees with central differences of its function
/// ([`check::jacobian`]), with [`check::DEFAULT_TOLERANCE`] or a tolerance given; on
/// failure, panics with the report (the worst entry and its difference).
///
/// ```
/// use autodiff::prelude::*;
///
/// #[grad(jacobian)]
/// fn polar(p: [f64; 2]) -> [f64; 2] {
///     [p[0] * p[1].cos(), p[0] * p[1].sin()]
/// }
///
/// let at = [2.0, 0.3];
/// let (_, j) = polar_jacobian(at);
/// assert_jacobian!(|p: &[f64]| polar([p[0], p[1]]), &j, &at);
/// ```
#[cfg(feature = "std")]
#[macro_export]
macro_rules! assert_jacobian {
    ($f:expr, $rows:expr, $at:expr $(,)?) => {
        $crate::assert_jacobian!($f, $rows, $at, tolerance = $crate::check::DEFAULT_TOLERANCE)
    };
    ($f:expr, $rows:expr, $at:expr, tolerance = $tolerance:expr $(,)?) => {
        match ($crate::check::jacobian($f, $rows, $at), $tolerance) {
            (report, tolerance) => {
                if !report.passed(tolerance) {
                    ::core::panic!(
                        "Jacobian check failed (tolerance {:e}): {}",
                        tolerance,
                        report
                    );
                }
            }
        }
    };
}

/// Paths used by code that `#[grad]` generates. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use autodiff_macros::__grad_resume as grad_resume;
    pub use autodiff_runtime::differentiable_numbers as numbers;
    pub use autodiff_runtime::differentiable_probe as probe;
    pub use autodiff_runtime::missing;
    pub use autodiff_runtime::outputs;
    pub use autodiff_runtime::parallel;
    pub use autodiff_runtime::{
        loops, rules, Differentiable, F64Ext, Flat, Lanes, OneHot, PartialOf, SparseTangent,
    };
    #[cfg(feature = "alloc")]
    pub use {alloc::vec, autodiff_runtime::Matrix, autodiff_runtime::Workspace};
}

/// The README's Rust examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
