//! The harness: one table of cases, each with its points, the plain function, the
//! generated gradient and the same computation on `Tape`, all over a flat list of the inputs.

use crate::common::fd_gradient;
use crate::functions::{C, H, W};
use autodiff::prelude::*;

/// A partial derivative as `_grad` returns it (a scalar, an array, a `Vec`), flattened.
pub(crate) trait Partial {
    fn flatten_into(self, out: &mut Vec<f64>);
}

impl Partial for f64 {
    fn flatten_into(self, out: &mut Vec<f64>) {
        out.push(self);
    }
}

impl<T: Partial, const N: usize> Partial for [T; N] {
    fn flatten_into(self, out: &mut Vec<f64>) {
        for t in self {
            t.flatten_into(out);
        }
    }
}

impl<T: Partial> Partial for Vec<T> {
    fn flatten_into(self, out: &mut Vec<f64>) {
        for t in self {
            t.flatten_into(out);
        }
    }
}

/// The tuple `_grad` returns, as the value and the flattened partials.
pub(crate) trait GradOutput {
    fn split(self) -> (f64, Vec<f64>);
}

macro_rules! grad_output {
    ($($P:ident $p:ident),+) => {
        impl<$($P: Partial),+> GradOutput for (f64, $($P),+) {
            fn split(self) -> (f64, Vec<f64>) {
                let (value, $($p),+) = self;
                let mut partials = Vec::new();
                $($p.flatten_into(&mut partials);)+
                (value, partials)
            }
        }
    };
}

grad_output!(P1 p1);
grad_output!(P1 p1, P2 p2);
grad_output!(P1 p1, P2 p2, P3 p3);
grad_output!(P1 p1, P2 p2, P3 p3, P4 p4);
grad_output!(P1 p1, P2 p2, P3 p3, P4 p4, P5 p5);

pub(crate) type PlainFn = Box<dyn Fn(&[f64]) -> f64>;
pub(crate) type GradFn = Box<dyn Fn(&[f64]) -> (f64, Vec<f64>)>;
pub(crate) type TapeFn = Box<dyn for<'t> Fn(&'t Tape, &[Var<'t>]) -> Var<'t>>;

pub(crate) struct Case {
    pub(crate) name: String,
    plain: PlainFn,
    grad: GradFn,
    tape: TapeFn,
    pub(crate) points: Vec<Vec<f64>>,
}

pub(crate) fn case(
    name: impl Into<String>,
    plain: impl Fn(&[f64]) -> f64 + 'static,
    grad: impl Fn(&[f64]) -> (f64, Vec<f64>) + 'static,
    tape: impl for<'t> Fn(&'t Tape, &[Var<'t>]) -> Var<'t> + 'static,
    points: Vec<Vec<f64>>,
) -> Case {
    Case {
        name: name.into(),
        plain: Box::new(plain),
        grad: Box::new(grad),
        tape: Box::new(tape),
        points,
    }
}

/// A case for a function of scalar `f64` parameters, given by name: the point is the list of
/// arguments, and the Tape body sees them as `Var`s under the same names.
macro_rules! scalar {
    ($f:ident, $g:ident, |$t:tt; $($v:ident),+| $tape:expr, $points:expr) => {
        case(
            stringify!($f),
            |p: &[f64]| {
                let &[$($v),+] = p else { unreachable!() };
                $f($($v),+)
            },
            |p: &[f64]| {
                let &[$($v),+] = p else { unreachable!() };
                $g($($v),+).split()
            },
            |$t, p| {
                let &[$($v),+] = p else { unreachable!() };
                $tape
            },
            points(&$points),
        )
    };
}

pub(crate) fn points<const K: usize>(list: &[[f64; K]]) -> Vec<Vec<f64>> {
    list.iter().map(|p| p.to_vec()).collect()
}

/// Deterministic stand-ins for Tangent's `np.random.randn(n)`, n = 3, 5, 10.
pub(crate) fn vectors() -> Vec<Vec<f64>> {
    [3, 5, 10]
        .iter()
        .map(|&n| {
            (0..n)
                .map(|i| 1.3 * ((i as f64 + 1.0) * 1.7).sin())
                .collect()
        })
        .collect()
}

pub(crate) fn array<const N: usize>(p: &[f64]) -> [f64; N] {
    p.try_into().unwrap()
}

pub(crate) fn matrix<const R: usize, const K: usize>(p: &[f64]) -> [[f64; K]; R] {
    std::array::from_fn(|r| array(&p[r * K..(r + 1) * K]))
}

pub(crate) type Image = [[[f64; C]; W]; H];

pub(crate) fn images(p: &[f64]) -> Vec<Image> {
    p.chunks(H * W * C).map(matrix_3d).collect()
}

pub(crate) fn matrix_3d(p: &[f64]) -> Image {
    std::array::from_fn(|i| matrix(&p[i * W * C..(i + 1) * W * C]))
}

pub(crate) fn tape_sum<'t>(t: &'t Tape, xs: &[Var<'t>]) -> Var<'t> {
    xs.iter().fold(t.var(0.0), |s, &x| s + x)
}

/// The value and gradient of `f` on a fresh tape.
pub(crate) fn on_tape(f: &TapeFn, point: &[f64]) -> (f64, Vec<f64>) {
    let tape = Tape::new();
    let vars: Vec<Var> = point.iter().map(|&x| tape.var(x)).collect();
    let out = f(&tape, &vars);
    let g = out.gradient();
    (out.value(), vars.iter().map(|&v| g.wrt(v)).collect())
}

pub(crate) fn close(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance * b.abs().max(1.0)
}

/// Every check of one case at every point; the failures as messages.
pub(crate) fn check(case: &Case) -> Vec<String> {
    let mut failures = Vec::new();
    let name = &case.name;
    for point in &case.points {
        let want = (case.plain)(point);
        let (value, grad) = (case.grad)(point);
        if value != want {
            failures.push(format!("{name} at {point:?}: value {value} != {want}"));
        }
        let fd = fd_gradient(&case.plain, point);
        let (tape_value, tape_grad) = on_tape(&case.tape, point);
        if !close(tape_value, want, 1e-12) {
            failures.push(format!(
                "{name} at {point:?}: Tape value {tape_value} != {want}"
            ));
        }
        if grad.len() != point.len() || tape_grad.len() != point.len() {
            failures.push(format!(
                "{name} at {point:?}: {} partials from #[grad], {} inputs",
                grad.len(),
                point.len()
            ));
            continue;
        }
        for i in 0..point.len() {
            if !close(grad[i], fd[i], 1e-6) {
                failures.push(format!(
                    "{name} at {point:?}: ∂/∂x{i} = {}, finite differences {}",
                    grad[i], fd[i]
                ));
            }
            if !close(grad[i], tape_grad[i], 1e-12) {
                failures.push(format!(
                    "{name} at {point:?}: ∂/∂x{i} = {}, Tape {}",
                    grad[i], tape_grad[i]
                ));
            }
        }
    }
    failures
}
