//! Gradient checking: a gradient compared with central finite differences at a point.
//!
//! [`gradient`] takes the function, its gradient and a point. The gradient returns what a
//! `#[grad]`-generated `f_grad` returns: the value first, then one partial per parameter,
//! each of its parameter's type. The point is one parameter or a tuple of them: `f64`,
//! arrays `[T; N]` (nested too) and `Vec<T>` (for slice parameters). Each element of the
//! point is nudged in turn, and the central difference is compared with the gradient's
//! partial. The [`Report`] says how far apart they are, and where; its `Display` is made to
//! be read in a failing test.
//!
//! ```
//! use autodiff_runtime::check;
//!
//! // f(x, w) = x · (w₀ + 2·w₁), and its gradient written by hand.
//! let f = |&(x, w): &(f64, [f64; 2])| x * (w[0] + 2.0 * w[1]);
//! let f_grad = |&(x, w): &(f64, [f64; 2])| (f(&(x, w)), w[0] + 2.0 * w[1], [x, 2.0 * x]);
//!
//! let report = check::gradient(f, f_grad, &(1.5, [0.5, -1.0]));
//! assert!(report.passed(check::DEFAULT_TOLERANCE), "{report}");
//!
//! // A missing factor 2 in ∂f/∂w₁ is caught, and located.
//! let wrong = |&(x, w): &(f64, [f64; 2])| (f(&(x, w)), w[0] + 2.0 * w[1], [x, x]);
//! let report = check::gradient(f, wrong, &(1.5, [0.5, -1.0])).named(["x", "w"]);
//! assert!(!report.passed(check::DEFAULT_TOLERANCE));
//! let worst = report.worst().unwrap();
//! assert_eq!((worst.parameter, worst.position.as_slice(), worst.flat), (1, &[1][..], 2));
//! assert!(report.to_string().contains("`w[1]`"));
//! ```
//!
//! # How the comparison is made
//!
//! Element `i` of the point, `xᵢ`, is stepped by `hᵢ = ε^(1/3) · max(1, |xᵢ|)` (`ε` is
//! `f64::EPSILON`, so `hᵢ ≈ 6e-6` for `|xᵢ| ≤ 1`), which balances the truncation error of
//! the central difference against rounding. The difference is taken over the step that is
//! actually representable: `dᵢ = (f(x + hᵢeᵢ) − f(x − hᵢeᵢ)) / ((xᵢ + hᵢ) − (xᵢ − hᵢ))`.
//!
//! The error of the partial `gᵢ` is relative, with an absolute floor for partials near zero
//! (whose central differences are mostly rounding):
//!
//! ```text
//! errorᵢ = |gᵢ − dᵢ| / max(|gᵢ|, |dᵢ|, floor)
//! floor  = 0.01 · max(1, |f(x)|, maxⱼ |dⱼ|)
//! ```
//!
//! so an error of 2 is a sign error, 0.5 a factor of two. For smooth functions of
//! moderate size, correct gradients give errors around 1e-9 or below, hence
//! [`DEFAULT_TOLERANCE`] = 1e-6. The value the gradient returns is compared with `f(x)`
//! the same way. Away from kinks only: at a point where `f` is not differentiable
//! (`relu` at 0, `abs` at 0, a tie in `max`) the central difference straddles the kink and
//! differs from any subgradient.

use crate::workspace::Flat;
use std::fmt;

/// The tolerance `assert_gradient!` uses when none is given: the largest error
/// ([`Report::max_error`]) that passes.
pub const DEFAULT_TOLERANCE: f64 = 1e-6;

/// The floor of the error's denominator, as a fraction of the function's scale.
const FLOOR_FRACTION: f64 = 0.01;

/// How many components `Display` lists before it lists only the largest errors.
const LISTED: usize = 12;

/// Checks `gradient` against central finite differences of `f` at the point `at`.
///
/// - `f` computes the function's value at a point.
/// - `gradient` returns `(value, ∂f/∂p₁, ∂f/∂p₂, …)` at a point, one partial per
///   parameter of the point, each of that parameter's type (see [`Point`]).
/// - `at` is one parameter (`f64`, `[T; N]`, `Vec<T>`) or a tuple of up to 12 of them.
///
/// `f` is called `2n + 1` times for `n` elements in all, `gradient` once. Data that is not
/// differentiated stays outside the point, captured by the closures. A gradient whose
/// vector partial has a length other than its parameter's fails the check.
///
/// ```
/// use autodiff_runtime::check;
///
/// // A function of a slice: the point is a `Vec`, and so is the partial.
/// fn sum_squares(p: &[f64]) -> f64 {
///     p.iter().map(|v| v * v).sum()
/// }
/// let report = check::gradient(
///     |p: &Vec<f64>| sum_squares(p),
///     |p: &Vec<f64>| (sum_squares(p), p.iter().map(|v| 2.0 * v).collect()),
///     &vec![1.0, -2.0, 0.5],
/// );
/// assert!(report.passed(1e-8), "{report}");
/// assert_eq!(report.components().len(), 3);
/// ```
pub fn gradient<P, F, G>(f: F, gradient: G, at: &P) -> Report
where
    P: Point,
    F: Fn(&P) -> f64,
    G: Fn(&P) -> P::Gradient,
{
    let mut lens = Vec::new();
    at.flat_lens(&mut lens);
    let mut x = Vec::new();
    at.write_flat(&mut x);

    let value = f(at);
    let mut partials = Vec::new();
    let mut partial_lens = Vec::new();
    let gradient_value = P::split_gradient(&gradient(at), &mut partials, &mut partial_lens);

    // Central differences, one element at a time, on a working copy of the point.
    let mut point = at.clone();
    let step_scale = f64::EPSILON.cbrt();
    let mut steps = Vec::with_capacity(x.len());
    let mut differences = Vec::with_capacity(x.len());
    for i in 0..x.len() {
        let xi = x[i];
        let h = step_scale * xi.abs().max(1.0);
        let (plus, minus) = (xi + h, xi - h);
        x[i] = plus;
        point.read_flat(&x);
        let f_plus = f(&point);
        x[i] = minus;
        point.read_flat(&x);
        let f_minus = f(&point);
        x[i] = xi;
        steps.push(h);
        differences.push((f_plus - f_minus) / (plus - minus));
    }

    let floor = FLOOR_FRACTION
        * std::iter::once(value)
            .chain(differences.iter().copied())
            .map(f64::abs)
            .filter(|v| v.is_finite())
            .fold(1.0, f64::max);

    // The partials of a parameter are compared only when there are as many as elements.
    let mut mismatches = Vec::new();
    let mut components = Vec::with_capacity(x.len());
    let (mut start, mut partial_start) = (0, 0);
    for (parameter, &len) in lens.iter().enumerate() {
        let partial_len = partial_lens.get(parameter).copied().unwrap_or(0);
        let same_shape = partial_len == len;
        if !same_shape {
            mismatches.push(Mismatch {
                parameter,
                elements: len,
                partials: partial_len,
            });
        }
        for index in 0..len {
            let flat = start + index;
            let partial = if same_shape {
                partials[partial_start + index]
            } else {
                f64::NAN
            };
            let difference = differences[flat];
            let mut position = Vec::new();
            at.index_path(parameter, index, &mut position);
            components.push(Component {
                parameter,
                position,
                index,
                flat,
                partial,
                difference,
                step: steps[flat],
                error: relative_error(partial, difference, floor),
            });
        }
        start += len;
        partial_start += partial_len;
    }

    Report {
        value,
        gradient_value,
        value_error: relative_error(gradient_value, value, floor),
        floor,
        components,
        mismatches,
        names: Vec::new(),
    }
}

/// `|a − b| / max(|a|, |b|, floor)`; `NaN` when either is `NaN`, `0` when both are the
/// same infinity.
fn relative_error(a: f64, b: f64, floor: f64) -> f64 {
    if a == b {
        return 0.0;
    }
    (a - b).abs() / a.abs().max(b.abs()).max(floor)
}

/// The larger of two errors, `NaN` winning (a `NaN` error is a failure).
fn worse(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

/// One element of the point: its partial from the gradient, its central difference, and
/// how far apart they are.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Component {
    /// Which parameter of the point it belongs to, from 0 (0 for a point that is a single
    /// parameter).
    pub parameter: usize,
    /// Where it sits in its parameter, one index per level, outermost first: empty for an
    /// `f64`, `[2]` for `w[2]`, `[1, 0]` for `w[1][0]`.
    pub position: Vec<usize>,
    /// Its position in its parameter's flat sequence of `f64`s.
    pub index: usize,
    /// Its position in the whole point's flat sequence of `f64`s.
    pub flat: usize,
    /// The partial the gradient returned (`NaN` when the partial had the wrong length).
    pub partial: f64,
    /// The central finite difference.
    pub difference: f64,
    /// The step `h` the difference was taken with.
    pub step: f64,
    /// `|partial − difference| / max(|partial|, |difference|, floor)` (see the
    /// [module](self) documentation).
    pub error: f64,
}

/// A vector partial whose length differs from its parameter's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Mismatch {
    /// Which parameter, from 0.
    pub parameter: usize,
    /// The number of `f64`s in the parameter.
    pub elements: usize,
    /// The number of `f64`s in the partial the gradient returned for it.
    pub partials: usize,
}

/// The outcome of [`gradient`]: every element's partial next to its central difference.
///
/// [`passed`](Self::passed) decides; `Display` explains, naming the worst element by
/// parameter (with [`named`](Self::named), by name), position and flat index.
#[derive(Debug, Clone)]
pub struct Report {
    value: f64,
    gradient_value: f64,
    value_error: f64,
    floor: f64,
    components: Vec<Component>,
    mismatches: Vec<Mismatch>,
    names: Vec<String>,
}

impl Report {
    /// Names the parameters of the point, in order, for `Display`: `w[1][0]` instead of
    /// `#1[1][0]`. Missing names fall back to `#k`.
    #[must_use]
    pub fn named<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.names = names.into_iter().map(Into::into).collect();
        self
    }

    /// Whether every error, and the error of the value, is at most `tolerance`. A `NaN`
    /// anywhere, or a partial of the wrong length, fails.
    #[must_use]
    pub fn passed(&self, tolerance: f64) -> bool {
        self.max_error() <= tolerance
    }

    /// The largest error over the elements and the value: `NaN` if any is `NaN`, infinite
    /// if a partial had the wrong length, `0` for a point with no elements and a value
    /// that agrees.
    #[must_use]
    pub fn max_error(&self) -> f64 {
        if !self.mismatches.is_empty() {
            return f64::INFINITY;
        }
        self.components
            .iter()
            .map(|c| c.error)
            .fold(self.value_error, worse)
    }

    /// The element with the largest error (a `NaN` error counts as the largest), or `None`
    /// for a point with no elements.
    #[must_use]
    pub fn worst(&self) -> Option<&Component> {
        self.components.iter().reduce(|worst, c| {
            if worst.error.is_nan() || worse(worst.error, c.error) == worst.error {
                worst
            } else {
                c
            }
        })
    }

    /// Every element of the point, in flat order.
    #[must_use]
    pub fn components(&self) -> &[Component] {
        &self.components
    }

    /// The parameters whose partial had another length than the parameter.
    #[must_use]
    pub fn mismatches(&self) -> &[Mismatch] {
        &self.mismatches
    }

    /// `f` at the point.
    #[must_use]
    pub fn value(&self) -> f64 {
        self.value
    }

    /// The value the gradient returned at the point.
    #[must_use]
    pub fn gradient_value(&self) -> f64 {
        self.gradient_value
    }

    /// The error of [`gradient_value`](Self::gradient_value) against
    /// [`value`](Self::value), measured like the partials'.
    #[must_use]
    pub fn value_error(&self) -> f64 {
        self.value_error
    }

    /// The floor of the errors' denominator: `0.01 · max(1, |f(x)|, maxⱼ |dⱼ|)`.
    #[must_use]
    pub fn floor(&self) -> f64 {
        self.floor
    }

    /// `w[1][0]`, `x`, or without a name `#1[1][0]`.
    fn label(&self, c: &Component) -> String {
        let mut label = match self.names.get(c.parameter) {
            Some(name) => name.clone(),
            None => format!("#{}", c.parameter),
        };
        for i in &c.position {
            label.push_str(&format!("[{i}]"));
        }
        label
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.components.len();
        writeln!(
            f,
            "gradient check: {n} partial{} against central differences, largest error {:.2e}",
            if n == 1 { "" } else { "s" },
            self.max_error()
        )?;
        for m in &self.mismatches {
            let name = match self.names.get(m.parameter) {
                Some(name) => format!(" `{name}`"),
                None => String::new(),
            };
            writeln!(
                f,
                "  parameter {}{name} has {} elements but its partial has {}",
                m.parameter, m.elements, m.partials
            )?;
        }
        if let Some(c) = self.worst() {
            writeln!(
                f,
                "  worst: `{}` (parameter {}, flat index {}): partial {:.10e}, central \
                 difference {:.10e}, error {:.2e}",
                self.label(c),
                c.parameter,
                c.flat,
                c.partial,
                c.difference,
                c.error
            )?;
        }
        writeln!(
            f,
            "  value: f = {:e}, the gradient's = {:e}, error {:.2e}",
            self.value, self.gradient_value, self.value_error
        )?;

        let mut listed: Vec<&Component> = self.components.iter().collect();
        if n > LISTED {
            listed.sort_by(|a, b| b.error.total_cmp(&a.error));
            listed.truncate(LISTED);
            writeln!(f, "  the {LISTED} largest errors:")?;
        }
        let width = listed
            .iter()
            .map(|c| self.label(c).len())
            .chain([7])
            .max()
            .unwrap_or(7);
        writeln!(
            f,
            "  {:<width$}  {:>6}  {:>18}  {:>18}  {:>9}",
            "element", "flat", "partial", "central difference", "error"
        )?;
        for c in listed {
            writeln!(
                f,
                "  {:<width$}  {:>6}  {:>18.10e}  {:>18.10e}  {:>9.2e}",
                self.label(c),
                c.flat,
                c.partial,
                c.difference,
                c.error
            )?;
        }
        Ok(())
    }
}

mod sealed {
    /// Keeps [`Point`](super::Point) implemented only here.
    pub trait Sealed {}
}

/// A point to check a gradient at: one parameter or a tuple of up to 12, each an `f64`,
/// an array `[T; N]` (nested to any depth) or a `Vec<T>` (a slice parameter, `&[T]` in the
/// function), with `T` itself one of these.
///
/// [`Gradient`](Self::Gradient) is the type the gradient function returns: `(f64, P)` for
/// a single parameter `P`, `(f64, P1, P2, …)` for a tuple `(P1, P2, …)`. That is the
/// return type of a `#[grad]`-generated `f_grad`, with `Vec`s for slices.
///
/// The trait is sealed; its methods are for [`gradient`] only.
pub trait Point: Clone + sealed::Sealed {
    /// `(value, partial for each parameter…)`, each partial of its parameter's type.
    type Gradient;

    /// Appends the number of `f64`s of each parameter.
    #[doc(hidden)]
    fn flat_lens(&self, lens: &mut Vec<usize>);

    /// Appends every `f64`, parameter after parameter.
    #[doc(hidden)]
    fn write_flat(&self, out: &mut Vec<f64>);

    /// Reads every `f64` back from `from`, parameter after parameter.
    #[doc(hidden)]
    fn read_flat(&mut self, from: &[f64]);

    /// The position of element `index` of parameter `parameter`.
    #[doc(hidden)]
    fn index_path(&self, parameter: usize, index: usize, path: &mut Vec<usize>);

    /// Appends the partials to `out` and the number of `f64`s of each to `lens`; returns the
    /// value.
    #[doc(hidden)]
    fn split_gradient(gradient: &Self::Gradient, out: &mut Vec<f64>, lens: &mut Vec<usize>) -> f64;
}

/// One parameter as a whole point.
macro_rules! single_parameter {
    ($([$($generics:tt)*] $ty:ty;)*) => {$(
        impl<$($generics)*> sealed::Sealed for $ty {}

        impl<$($generics)*> Point for $ty {
            type Gradient = (f64, $ty);

            fn flat_lens(&self, lens: &mut Vec<usize>) {
                lens.push(self.flat_len());
            }

            fn write_flat(&self, out: &mut Vec<f64>) {
                self.push_to(out);
            }

            fn read_flat(&mut self, from: &[f64]) {
                self.read_from(from);
            }

            fn index_path(&self, _parameter: usize, index: usize, path: &mut Vec<usize>) {
                Flat::index_path(self, index, path);
            }

            fn split_gradient(
                gradient: &Self::Gradient,
                out: &mut Vec<f64>,
                lens: &mut Vec<usize>,
            ) -> f64 {
                lens.push(gradient.1.flat_len());
                gradient.1.push_to(out);
                gradient.0
            }
        }
    )*};
}

single_parameter! {
    [] f64;
    [T: Flat + Clone, const N: usize] [T; N];
    [T: Flat + Clone] Vec<T>;
}

/// A tuple of parameters as a point; `$i` are the tuple's indices, `$g` the gradient's.
macro_rules! tuple_point {
    ($(($($t:ident $i:tt $g:tt),+))*) => {$(
        impl<$($t: Flat + Clone),+> sealed::Sealed for ($($t,)+) {}

        impl<$($t: Flat + Clone),+> Point for ($($t,)+) {
            type Gradient = (f64, $($t,)+);

            fn flat_lens(&self, lens: &mut Vec<usize>) {
                $(lens.push(self.$i.flat_len());)+
            }

            fn write_flat(&self, out: &mut Vec<f64>) {
                $(self.$i.push_to(out);)+
            }

            fn read_flat(&mut self, from: &[f64]) {
                let mut rest = from;
                $(
                    let n = self.$i.flat_len().min(rest.len());
                    self.$i.read_from(&rest[..n]);
                    rest = &rest[n..];
                )+
                let _ = rest;
            }

            fn index_path(&self, parameter: usize, index: usize, path: &mut Vec<usize>) {
                $(
                    if parameter == $i {
                        return Flat::index_path(&self.$i, index, path);
                    }
                )+
            }

            fn split_gradient(
                gradient: &Self::Gradient,
                out: &mut Vec<f64>,
                lens: &mut Vec<usize>,
            ) -> f64 {
                $(
                    lens.push(gradient.$g.flat_len());
                    gradient.$g.push_to(out);
                )+
                gradient.0
            }
        }
    )*};
}

tuple_point! {
    (A 0 1)
    (A 0 1, B 1 2)
    (A 0 1, B 1 2, C 2 3)
    (A 0 1, B 1 2, C 2 3, D 3 4)
    (A 0 1, B 1 2, C 2 3, D 3 4, E 4 5)
    (A 0 1, B 1 2, C 2 3, D 3 4, E 4 5, F 5 6)
    (A 0 1, B 1 2, C 2 3, D 3 4, E 4 5, F 5 6, G 6 7)
    (A 0 1, B 1 2, C 2 3, D 3 4, E 4 5, F 5 6, G 6 7, H 7 8)
    (A 0 1, B 1 2, C 2 3, D 3 4, E 4 5, F 5 6, G 6 7, H 7 8, I 8 9)
    (A 0 1, B 1 2, C 2 3, D 3 4, E 4 5, F 5 6, G 6 7, H 7 8, I 8 9, J 9 10)
    (A 0 1, B 1 2, C 2 3, D 3 4, E 4 5, F 5 6, G 6 7, H 7 8, I 8 9, J 9 10, K 10 11)
    (A 0 1, B 1 2, C 2 3, D 3 4, E 4 5, F 5 6, G 6 7, H 7 8, I 8 9, J 9 10, K 10 11, L 11 12)
}

/// How a Hessian compares with central differences of its gradient ([`hessian`]).
#[derive(Clone, Debug)]
pub struct HessianReport {
    /// The largest error of an entry (as [`Report::max_error`] measures a partial's).
    pub max_error: f64,
    /// The entry with that error, `(row, column)`.
    pub worst: (usize, usize),
    /// That entry, and its central difference.
    pub entry: (f64, f64),
    /// The largest `|H[i][j] - H[j][i]|`.
    pub asymmetry: f64,
}

impl HessianReport {
    /// Whether every entry's error is at most `tolerance` and the Hessian is symmetric to
    /// that tolerance (relative to its largest entry).
    #[must_use]
    pub fn passed(&self, tolerance: f64) -> bool {
        self.max_error <= tolerance && self.asymmetry <= tolerance * self.entry.0.abs().max(1.0)
    }
}

impl fmt::Display for HessianReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (i, j) = self.worst;
        write!(
            f,
            "largest error {:.2e} at H[{i}][{j}] = {:e} (central differences of the \
             gradient: {:e}); largest |H[i][j] - H[j][i]| = {:.2e}",
            self.max_error, self.entry.0, self.entry.1, self.asymmetry
        )
    }
}

/// Checks a Hessian against central differences of the gradient: column `j` against
/// `(∇f(x + hⱼeⱼ) − ∇f(x − hⱼeⱼ)) / 2hⱼ`, with the step and the error of [`gradient`]'s
/// comparison (the floor is a hundredth of the largest difference).
///
/// The point is an array (`&[f64; N]`) or a slice (`&[f64]`), and `gradient` takes the
/// same; the Hessian is given by its rows: `&[[f64; N]; N]`, or a
/// [`Matrix`](crate::Matrix)'s `row_iter()`. For the `<name>_hessian` of a function of
/// one array: `gradient` is `|x| f_grad(*x).1`.
///
/// ```
/// use autodiff_runtime::check;
///
/// // f(x) = x₀²·x₁ + x₁³.
/// let gradient = |x: &[f64; 2]| [2.0 * x[0] * x[1], x[0] * x[0] + 3.0 * x[1] * x[1]];
/// let at = [0.5, -1.5];
/// let h = [[2.0 * at[1], 2.0 * at[0]], [2.0 * at[0], 6.0 * at[1]]];
/// let report = check::hessian(gradient, &h, &at);
/// assert!(report.passed(check::DEFAULT_TOLERANCE), "{report}");
///
/// let wrong = [[2.0 * at[1], 2.0 * at[0]], [2.0 * at[0], 3.0 * at[1]]];
/// assert_eq!(check::hessian(gradient, &wrong, &at).worst, (1, 1));
///
/// // Of run-time size: f(x) = Σ xᵢ³, H = diag(6xᵢ).
/// let at = vec![1.0, -2.0, 0.5];
/// let gradient = |x: &[f64]| x.iter().map(|v| 3.0 * v * v).collect::<Vec<_>>();
/// let h: Vec<Vec<f64>> = (0..3)
///     .map(|i| (0..3).map(|j| if i == j { 6.0 * at[i] } else { 0.0 }).collect())
///     .collect();
/// assert!(check::hessian(gradient, &h, &at[..]).passed(check::DEFAULT_TOLERANCE));
/// ```
///
/// # Panics
/// If the Hessian is not `n` rows of `n` numbers, or the gradient not `n` numbers, for a
/// point of `n` numbers.
pub fn hessian<P, G, R>(
    gradient: impl Fn(&P) -> G,
    hessian: impl IntoIterator<Item = R>,
    at: &P,
) -> HessianReport
where
    P: ?Sized + ToOwned + AsRef<[f64]>,
    P::Owned: AsMut<[f64]>,
    G: AsRef<[f64]>,
    R: AsRef<[f64]>,
{
    use core::borrow::Borrow;
    let step_scale = f64::EPSILON.cbrt();
    let point = at.as_ref();
    let n = point.len();
    let hessian: Vec<Vec<f64>> = hessian.into_iter().map(|r| r.as_ref().to_vec()).collect();
    assert!(
        hessian.len() == n && hessian.iter().all(|r| r.len() == n),
        "check::hessian: the Hessian is not {n} × {n}"
    );
    let mut differences = vec![vec![0.0; n]; n];
    for j in 0..n {
        let h = step_scale * point[j].abs().max(1.0);
        let (mut up, mut down) = (at.to_owned(), at.to_owned());
        up.as_mut()[j] += h;
        down.as_mut()[j] -= h;
        let step = up.as_mut()[j] - down.as_mut()[j];
        let (gu, gd) = (gradient(up.borrow()), gradient(down.borrow()));
        let (gu, gd) = (gu.as_ref(), gd.as_ref());
        assert!(
            gu.len() == n && gd.len() == n,
            "check::hessian: the gradient has {} numbers, the point {n}",
            gu.len()
        );
        for i in 0..n {
            differences[i][j] = (gu[i] - gd[i]) / step;
        }
    }
    let largest = differences
        .iter()
        .flatten()
        .fold(1.0f64, |m, d| m.max(d.abs()));
    let floor = FLOOR_FRACTION * largest;
    let mut report = HessianReport {
        max_error: 0.0,
        worst: (0, 0),
        entry: (0.0, 0.0),
        asymmetry: 0.0,
    };
    for i in 0..n {
        for j in 0..n {
            let (h, d) = (hessian[i][j], differences[i][j]);
            let error = (h - d).abs() / h.abs().max(d.abs()).max(floor);
            if error > report.max_error || error.is_nan() {
                report.max_error = if error.is_nan() { f64::INFINITY } else { error };
                report.worst = (i, j);
                report.entry = (h, d);
            }
            report.asymmetry = report.asymmetry.max((h - hessian[j][i]).abs());
        }
    }
    report
}

/// How a Jacobian compares with central differences of its function ([`jacobian`]).
#[derive(Clone, Debug)]
pub struct JacobianReport {
    /// The largest error of an entry (as [`Report::max_error`] measures a partial's).
    pub max_error: f64,
    /// The entry with that error, `(row, column)`: (output, input).
    pub worst: (usize, usize),
    /// That entry, and its central difference.
    pub entry: (f64, f64),
    /// The Jacobian's shape, `(outputs, inputs)`.
    pub shape: (usize, usize),
}

impl JacobianReport {
    /// Whether every entry's error is at most `tolerance`.
    #[must_use]
    pub fn passed(&self, tolerance: f64) -> bool {
        self.max_error <= tolerance
    }
}

impl fmt::Display for JacobianReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (i, j) = self.worst;
        write!(
            f,
            "{} × {} Jacobian: largest error {:.2e} at J[{i}][{j}] = {:e} (central \
             difference: {:e})",
            self.shape.0, self.shape.1, self.max_error, self.entry.0, self.entry.1
        )
    }
}

/// Checks a Jacobian against central differences of its function: column `j` against
/// `(f(x + hⱼeⱼ) − f(x − hⱼeⱼ)) / 2hⱼ`, with the step and the error of [`gradient`]'s
/// comparison (the floor is a hundredth of the largest difference). `f` takes the inputs
/// flattened; `rows` are the Jacobian's rows, one per output number (the blocks of
/// `<name>_jacobian` are: `&j` of a `Vec<[f64; N]>` or an array of arrays,
/// `j.row_iter()` of a [`Matrix`](crate::Matrix)). A shape that does not match is
/// reported as an error of infinity.
///
/// ```
/// use autodiff_runtime::check;
///
/// // f(x) = (x₀·x₁, sin x₀).
/// let f = |x: &[f64]| vec![x[0] * x[1], x[0].sin()];
/// let at = [0.5f64, -1.5];
/// let j = [[at[1], at[0]], [at[0].cos(), 0.0]];
/// let report = check::jacobian(f, &j, &at);
/// assert!(report.passed(check::DEFAULT_TOLERANCE), "{report}");
///
/// let wrong = [[at[1], at[0]], [at[0].cos(), 1.0]];
/// assert_eq!(check::jacobian(f, &wrong, &at).worst, (1, 1));
/// ```
pub fn jacobian<O, R>(
    f: impl Fn(&[f64]) -> O,
    rows: impl IntoIterator<Item = R>,
    at: &[f64],
) -> JacobianReport
where
    O: AsRef<[f64]>,
    R: AsRef<[f64]>,
{
    let step_scale = f64::EPSILON.cbrt();
    let n = at.len();
    let m = f(at).as_ref().len();
    let mut differences = vec![vec![0.0; n]; m];
    let (mut up, mut down) = (at.to_vec(), at.to_vec());
    for j in 0..n {
        let h = step_scale * at[j].abs().max(1.0);
        up[j] = at[j] + h;
        down[j] = at[j] - h;
        let (fu, fd) = (f(&up), f(&down));
        for (i, row) in differences.iter_mut().enumerate() {
            row[j] = (fu.as_ref()[i] - fd.as_ref()[i]) / (up[j] - down[j]);
        }
        up[j] = at[j];
        down[j] = at[j];
    }
    let largest = differences
        .iter()
        .flatten()
        .fold(1.0f64, |l, d| l.max(d.abs()));
    let floor = FLOOR_FRACTION * largest;
    let mut report = JacobianReport {
        max_error: 0.0,
        worst: (0, 0),
        entry: (0.0, 0.0),
        shape: (m, n),
    };
    let mut count = 0;
    for (i, row) in rows.into_iter().enumerate() {
        count += 1;
        let row = row.as_ref();
        if i >= m || row.len() != n {
            report.max_error = f64::INFINITY;
            report.worst = (i, row.len());
            continue;
        }
        for (j, (&entry, &difference)) in row.iter().zip(&differences[i]).enumerate() {
            let error = (entry - difference).abs() / entry.abs().max(difference.abs()).max(floor);
            if error > report.max_error || error.is_nan() {
                report.max_error = if error.is_nan() { f64::INFINITY } else { error };
                report.worst = (i, j);
                report.entry = (entry, difference);
            }
        }
    }
    if count != m {
        report.max_error = f64::INFINITY;
        report.worst = (count, n);
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(&(x, y): &(f64, f64)) -> f64 {
        x * x * y + y.sin()
    }

    fn f_grad(&(x, y): &(f64, f64)) -> (f64, f64, f64) {
        (f(&(x, y)), 2.0 * x * y, x * x + y.cos())
    }

    #[test]
    fn a_correct_gradient_passes_with_small_errors() {
        let report = gradient(f, f_grad, &(0.7, -1.3));
        assert!(report.passed(1e-8), "{report}");
        assert_eq!(report.components().len(), 2);
        assert_eq!(report.value(), report.gradient_value());
        assert!(report.mismatches().is_empty());
    }

    #[test]
    fn a_sign_error_gives_an_error_of_two() {
        let wrong = |p: &(f64, f64)| {
            let (v, dx, dy) = f_grad(p);
            (v, dx, -dy)
        };
        let report = gradient(f, wrong, &(0.7, -1.3));
        let worst = report.worst().unwrap();
        assert_eq!((worst.parameter, worst.flat), (1, 1));
        assert!((worst.error - 2.0).abs() < 1e-6, "{report}");
        assert!(!report.passed(DEFAULT_TOLERANCE));
    }

    #[test]
    fn a_wrong_value_fails() {
        let wrong = |p: &(f64, f64)| {
            let (v, dx, dy) = f_grad(p);
            (v + 1.0, dx, dy)
        };
        let report = gradient(f, wrong, &(0.7, -1.3));
        assert!(report.value_error() > 0.1);
        assert!(!report.passed(DEFAULT_TOLERANCE));
    }

    #[test]
    fn a_partial_of_the_wrong_length_fails_and_is_reported() {
        let report = gradient(
            |p: &Vec<f64>| p.iter().sum(),
            |p: &Vec<f64>| (p.iter().sum(), vec![1.0; p.len() - 1]),
            &vec![1.0, 2.0, 3.0],
        )
        .named(["p"]);
        assert_eq!(report.max_error(), f64::INFINITY);
        assert_eq!(
            report.mismatches(),
            &[Mismatch {
                parameter: 0,
                elements: 3,
                partials: 2
            }]
        );
        assert!(report
            .to_string()
            .contains("parameter 0 `p` has 3 elements but its partial has 2"));
    }

    #[test]
    fn nan_fails() {
        let report = gradient(|x: &f64| x.sqrt(), |x: &f64| (x.sqrt(), f64::NAN), &1.0);
        assert!(report.max_error().is_nan());
        assert!(!report.passed(f64::INFINITY));
        assert!(report.worst().unwrap().error.is_nan());
    }

    #[test]
    fn near_zero_partials_are_measured_against_the_floor() {
        // ∂f/∂x is 0 at x = 0; its central difference is rounding only.
        let report = gradient(
            |&(x, y): &(f64, f64)| x * x + 1e3 * y.sin(),
            |&(x, y): &(f64, f64)| (x * x + 1e3 * y.sin(), 2.0 * x, 1e3 * y.cos()),
            &(0.0, 0.3),
        );
        assert!(report.passed(DEFAULT_TOLERANCE), "{report}");
        assert!(report.floor() > 1.0);
    }

    #[test]
    fn steps_scale_with_the_element() {
        let report = gradient(|x: &f64| x.ln(), |x: &f64| (x.ln(), 1.0 / x), &1e4);
        let c = &report.components()[0];
        assert!((c.step / 1e4 - f64::EPSILON.cbrt()).abs() < 1e-12);
        assert!(report.passed(1e-8), "{report}");
    }

    #[test]
    fn long_reports_list_the_largest_errors_first() {
        let n = 20;
        let report = gradient(
            |p: &Vec<f64>| p.iter().map(|v| v * v).sum(),
            |p: &Vec<f64>| {
                let mut d: Vec<f64> = p.iter().map(|v| 2.0 * v).collect();
                d[17] *= 3.0;
                (p.iter().map(|v| v * v).sum(), d)
            },
            &(0..n).map(|i| 1.0 + f64::from(i)).collect::<Vec<_>>(),
        );
        let text = report.to_string();
        assert!(text.contains("the 12 largest errors"), "{text}");
        assert!(
            text.contains("worst: `#0[17]` (parameter 0, flat index 17)"),
            "{text}"
        );
        let rows: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.contains("element"))
            .collect();
        assert_eq!(rows.len(), 13, "{text}");
        assert!(rows[1].trim_start().starts_with("#0[17]"), "{text}");
    }
}
