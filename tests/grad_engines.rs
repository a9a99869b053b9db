//! The three engines against each other: `#[grad]`, `Tape` and `Value`, and all three
//! against central finite differences.
//!
//! # What "agree" means here
//! The generated code, `Tape` and `Value` compute every local partial with the same
//! function of `autodiff::rules`, and all three add the contributions to an adjoint in the
//! same order: nodes from the newest to the oldest (the generated sweep is emitted in
//! reverse evaluation order; `Tape` sweeps its arena backwards; `Value` sorts its nodes
//! newest first), and the operands of a node in argument order. So when a program is
//! written the same way on each engine, the gradients are *equal*, not merely close:
//! [`assert_exact`] checks `==`. Two things are not bit-for-bit the same, on purpose:
//!
//! - **The sign of a zero.** `Tape` and `Value` start every adjoint at `0.0` and add to
//!   it, so a lone `-0.0` contribution (`d/dx cos x` at `x = 0`) comes out as
//!   `0.0 + -0.0 = +0.0`. Generated code that declares an adjoint at its first contribution
//!   (`let adjoint = partial * seed;`, as `#[grad]` does for intermediate nodes, and did for
//!   parameters in earlier versions) keeps the `-0.0`. These are equal numbers, so
//!   [`assert_exact`] compares with `==` (treating two NaNs as equal too) rather than with
//!   `to_bits`.
//! - **Calls to another `#[grad]` function.** The generated code calls `g_grad`, which
//!   returns `∂g/∂a` already multiplied out inside `g`, and then multiplies by the adjoint of
//!   the call: `(p₁·p₂)·adjoint`. On `Tape` and `Value` the body of `g` is recorded inline
//!   and the adjoint is pushed through its nodes one at a time: `(adjoint·p₂)·p₁`.
//!   Multiplication is not associative in floating point, so these gradients agree to a
//!   relative 1e-12 ([`Agreement::Close`]), not bit for bit. (`Tape` and `Value` record the
//!   same nodes, so they still agree exactly with each other.)
//!
//! The values (the first output) are always bit-for-bit those of the original function.

mod common;

use autodiff::prelude::*;
use common::{assert_close, central_difference};

// ---------------------------------------------------------------------------------------
// Comparison machinery.

/// The output of an engine: the value, then the partial derivatives.
type Output = Vec<f64>;

/// How closely the generated gradient must match `Tape`'s.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Agreement {
    /// Equal as numbers (see the module documentation about the sign of zero).
    Exact,
    /// Within a relative 1e-12: the program calls another `#[grad]` function.
    Close,
}

/// One program, on every engine.
struct Case {
    name: &'static str,
    /// The original function.
    original: fn(&[f64]) -> f64,
    /// The generated gradient function: the value, then the partials in `wrt` order.
    grad: fn(&[f64]) -> Output,
    /// The partials `grad` returns: indices of parameters.
    wrt: &'static [usize],
    /// The same computation on a `Tape`: the value, then the partial of every parameter.
    tape: fn(&[f64]) -> Output,
    /// The same computation on `Value`, when `Value` has the operations it needs.
    value: fn(&[f64]) -> Option<Output>,
    agreement: Agreement,
}

/// Asserts that `actual` and `expected` are equal numbers (or both NaN).
#[track_caller]
fn assert_exact(actual: f64, expected: f64, what: &str) {
    assert!(
        actual == expected || (actual.is_nan() && expected.is_nan()),
        "{what}: {actual:e} ({:#018x}) != {expected:e} ({:#018x})",
        actual.to_bits(),
        expected.to_bits()
    );
}

/// Checks one case at one point: the value against the original, the generated gradient
/// against `Tape`, `Tape` against `Value` (always exactly), and against finite differences.
#[track_caller]
fn check(case: &Case, point: &[f64]) {
    let name = case.name;
    let grad = (case.grad)(point);
    let tape = (case.tape)(point);
    assert_eq!(grad.len(), case.wrt.len() + 1, "{name}: output length");
    assert_eq!(tape.len(), point.len() + 1, "{name}: Tape output length");

    // The value is the original's, bit for bit, on the generated path and on Tape.
    let original = (case.original)(point);
    assert_eq!(
        grad[0].to_bits(),
        original.to_bits(),
        "{name} at {point:?}: value of the generated function"
    );
    assert_eq!(
        tape[0].to_bits(),
        original.to_bits(),
        "{name} at {point:?}: value on Tape"
    );

    for (k, &param) in case.wrt.iter().enumerate() {
        let what = format!("{name} at {point:?}: ∂/∂p{param}");
        let generated = grad[1 + k];
        let on_tape = tape[1 + param];
        match case.agreement {
            Agreement::Exact => {
                assert_exact(generated, on_tape, &format!("{what}, #[grad] vs Tape"))
            }
            Agreement::Close => {
                assert_close(
                    generated,
                    on_tape,
                    1e-12,
                    &format!("{what}, #[grad] vs Tape"),
                );
            }
        }
        let fd = central_difference(|p| (case.original)(p), point, param);
        assert_close(
            generated,
            fd,
            1e-6,
            &format!("{what}, #[grad] vs finite difference"),
        );
    }

    if let Some(value) = (case.value)(point) {
        assert_eq!(value.len(), point.len() + 1, "{name}: Value output length");
        // Value and Tape build the same nodes in the same order: always exact. (Only the
        // value and the partials in `wrt` are compared: a parameter outside `wrt` may be
        // a constant on Tape and a leaf on Value.)
        let outputs = std::iter::once(0).chain(case.wrt.iter().map(|&param| 1 + param));
        for i in outputs {
            assert_exact(
                value[i],
                tape[i],
                &format!("{name} at {point:?}: output {i}, Value vs Tape"),
            );
        }
    }
}

/// Runs `f` on a fresh tape with one variable per coordinate of `point`; returns the value
/// and the partial derivative with respect to each variable.
fn on_tape(point: &[f64], f: impl for<'t> Fn(&'t Tape, &[Var<'t>]) -> Var<'t>) -> Output {
    let tape = Tape::new();
    let vars: Vec<Var<'_>> = point.iter().map(|&p| tape.var(p)).collect();
    let out = f(&tape, &vars);
    let gradient = out.gradient();
    std::iter::once(out.value())
        .chain(vars.iter().map(|&v| gradient.wrt(v)))
        .collect()
}

/// Runs `f` on one new `Value` leaf per coordinate of `point` and backpropagates; returns
/// the value and the gradient of each leaf, or `None` if `f` has no `Value` version.
fn on_value(point: &[f64], f: impl Fn(&[Value]) -> Option<Value>) -> Option<Output> {
    let leaves: Vec<Value> = point.iter().map(|&p| Value::new(p)).collect();
    let out = f(&leaves)?;
    out.backward();
    Some(
        std::iter::once(out.data())
            .chain(leaves.iter().map(Value::grad))
            .collect(),
    )
}

/// A small deterministic generator (SplitMix64) for "random-ish" points that are the same
/// on every run.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// A number in `[lo, hi)`.
    fn uniform(&mut self, (lo, hi): (f64, f64)) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let unit = (z >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }

    /// A point with one coordinate drawn from each range.
    fn point(&mut self, ranges: &[(f64, f64)]) -> Vec<f64> {
        ranges.iter().map(|&range| self.uniform(range)).collect()
    }
}

/// How many points each region of each case is checked at.
const POINTS_PER_REGION: usize = 4;

/// The body of a case's `Value` version: the same expression (`same`), none (`none`: `Value`
/// lacks the method), or a different expression written as a closure over the leaves.
macro_rules! value_body {
    (same, [$($x:ident),+], $body:expr) => {
        Some($body)
    };
    (none, [$($x:ident),+], $body:expr) => {{
        $(let _ = $x;)+
        None
    }};
    ((|$($v:ident),+| $e:expr), [$($x:ident),+], $body:expr) => {{
        $(let $v = $x;)+
        Some($e)
    }};
}

// ---------------------------------------------------------------------------------------
// Every operation of the table.

/// One module per case holding the `#[grad]` function `f`, the same expression on `Tape`
/// (`tape`) and on `Value` (`value`), checked at points drawn from each listed region
/// (inside the domain, away from kinks and jumps).
macro_rules! unary_ops {
    ($($case:ident => $op:literal: |$x:ident| $body:expr, value: $value:tt,
       in [$(($lo:expr, $hi:expr)),+];)+) => {
        $(
            mod $case {
                use autodiff::prelude::*;

                #[grad]
                pub fn f($x: f64) -> f64 {
                    $body
                }

                pub fn tape<'t>($x: Var<'t>) -> Var<'t> {
                    $body
                }

                pub fn value($x: &Value) -> Option<Value> {
                    value_body!($value, [$x], $body)
                }
            }
        )+

        /// The operations of the table the unary cases use.
        const UNARY_OPS: &[&str] = &[$($op),+];

        #[test]
        fn unary_operations_agree_across_engines() {
            let mut rng = Rng::new(1);
            $(
                let case = Case {
                    name: stringify!($case),
                    original: |p| $case::f(p[0]),
                    grad: |p| {
                        let (value, d) = $case::f_grad(p[0]);
                        vec![value, d]
                    },
                    wrt: &[0],
                    tape: |p| on_tape(p, |_, v| $case::tape(v[0])),
                    value: |p| on_value(p, |v| $case::value(&v[0])),
                    agreement: Agreement::Exact,
                };
                for region in [$(($lo, $hi)),+] {
                    for _ in 0..POINTS_PER_REGION {
                        check(&case, &rng.point(&[region]));
                    }
                }
            )+
        }
    };
}

unary_ops! {
    neg => "neg": |x| -x, value: same, in [(-3.0, 3.0)];
    recip => "recip": |x| x.recip(), value: same, in [(0.3, 3.0), (-3.0, -0.3)];
    powi_3 => "powi": |x| x.powi(3), value: same, in [(-2.0, 2.0)];
    powi_neg_2 => "powi": |x| x.powi(-2), value: same, in [(0.3, 2.0), (-2.0, -0.3)];
    powi_0 => "powi": |x| x.powi(0), value: same, in [(-2.0, 2.0)];
    powf_const_exponent => "powf": |x| x.powf(2.5), value: same, in [(0.1, 3.0)];
    sqrt => "sqrt": |x| x.sqrt(), value: same, in [(0.1, 9.0)];
    cbrt => "cbrt": |x| x.cbrt(), value: same, in [(0.2, 8.0), (-8.0, -0.2)];
    exp => "exp": |x| x.exp(), value: same, in [(-3.0, 3.0)];
    exp2 => "exp2": |x| x.exp2(), value: same, in [(-3.0, 3.0)];
    exp_m1 => "exp_m1": |x| x.exp_m1(), value: same, in [(-3.0, 3.0), (-1e-3, 1e-3)];
    ln => "ln": |x| x.ln(), value: (|v| v.log().expect("positive")), in [(0.2, 8.0)];
    ln_1p => "ln_1p": |x| x.ln_1p(), value: none, in [(-0.7, 8.0)];
    log2 => "log2": |x| x.log2(), value: none, in [(0.2, 8.0)];
    log10 => "log10": |x| x.log10(), value: none, in [(0.2, 8.0)];
    log_const_base => "log": |x| x.log(3.0), value: none, in [(0.2, 8.0)];
    sin => "sin": |x| x.sin(), value: same, in [(-3.0, 3.0)];
    cos => "cos": |x| x.cos(), value: same, in [(-3.0, 3.0)];
    tan => "tan": |x| x.tan(), value: same, in [(-1.2, 1.2)];
    asin => "asin": |x| x.asin(), value: same, in [(-0.8, 0.8)];
    acos => "acos": |x| x.acos(), value: same, in [(-0.8, 0.8)];
    atan => "atan": |x| x.atan(), value: same, in [(-4.0, 4.0)];
    atan2_const_x => "atan2": |y| y.atan2(0.5), value: (|v| v.atan2(&Value::new(0.5))), in [(-2.0, 2.0)];
    sinh => "sinh": |x| x.sinh(), value: same, in [(-3.0, 3.0)];
    cosh => "cosh": |x| x.cosh(), value: same, in [(-3.0, 3.0)];
    tanh => "tanh": |x| x.tanh(), value: same, in [(-3.0, 3.0)];
    asinh => "asinh": |x| x.asinh(), value: same, in [(-4.0, 4.0)];
    acosh => "acosh": |x| x.acosh(), value: same, in [(1.2, 4.0)];
    atanh => "atanh": |x| x.atanh(), value: same, in [(-0.8, 0.8)];
    abs => "abs": |x| x.abs(), value: same, in [(0.1, 3.0), (-3.0, -0.1)];
    relu => "relu": |x| x.relu(), value: same, in [(0.1, 3.0), (-3.0, -0.1)];
    sigmoid => "sigmoid": |x| x.sigmoid(), value: same, in [(-4.0, 4.0)];
    max_const => "max": |x| x.max(0.5), value: (|v| v.max(&Value::new(0.5))), in [(-2.0, 0.4), (0.6, 2.0)];
    min_const => "min": |x| x.min(0.5), value: (|v| v.min(&Value::new(0.5))), in [(-2.0, 0.4), (0.6, 2.0)];
    hypot_const => "hypot": |x| x.hypot(1.5), value: (|v| v.hypot(&Value::new(1.5))), in [(-3.0, 3.0)];
    mul_add_const => "mul_add": |x| x.mul_add(2.0, 0.5), value: (|v| v.mul_add(&Value::new(2.0), &Value::new(0.5))), in [(-3.0, 3.0)];
    clamp_const => "clamp": |x| x.clamp(-1.0, 1.0), value: same, in [(-0.9, 0.9), (-3.0, -1.1), (1.1, 3.0)];
    to_degrees => "to_degrees": |x| x.to_degrees(), value: same, in [(-3.0, 3.0)];
    to_radians => "to_radians": |x| x.to_radians(), value: same, in [(-180.0, 180.0)];
    floor => "floor": |x| x.floor(), value: same, in [(0.05, 0.95), (-2.95, -2.05)];
    ceil => "ceil": |x| x.ceil(), value: same, in [(0.05, 0.95), (-2.95, -2.05)];
    round => "round": |x| x.round(), value: same, in [(0.05, 0.45), (1.55, 1.95), (-1.45, -0.55)];
    trunc => "trunc": |x| x.trunc(), value: same, in [(0.05, 0.95), (-2.95, -2.05)];
    signum => "signum": |x| x.signum(), value: same, in [(0.1, 3.0), (-3.0, -0.1)];
    fract => "fract": |x| x.fract(), value: same, in [(0.05, 0.95), (2.05, 2.95), (-2.95, -2.05)];
    // Operators with a constant on either side: the generated code passes or negates the
    // adjoint (add, sub, neg) or uses the other operand (mul); Tape calls the rule.
    add_const => "add": |x| 2.0 + x + 1.5, value: same, in [(-3.0, 3.0)];
    sub_const => "sub": |x| 2.0 - x - 1.5, value: same, in [(-3.0, 3.0)];
    mul_const => "mul": |x| 2.0 * x * -1.5, value: same, in [(-3.0, 3.0)];
    div_const => "div": |x| 2.0 / x / -1.5, value: same, in [(0.3, 3.0), (-3.0, -0.3)];
}

/// One module per binary case: the `#[grad]` function with both operands differentiated
/// (`f`), with only the first (`f_x`, the second is then a constant) and with only the
/// second (`f_y`); the expression on `Tape` with two variables (`tape`) and with a constant
/// second operand (`tape_const_y`), and on `Value`.
macro_rules! binary_ops {
    ($($case:ident => $op:literal: |$x:ident, $y:ident| $body:expr, value: $value:tt,
       in [$(($xr:expr, $yr:expr)),+];)+) => {
        $(
            mod $case {
                use autodiff::prelude::*;

                #[grad]
                pub fn f($x: f64, $y: f64) -> f64 {
                    $body
                }

                #[grad(wrt($x))]
                pub fn f_x($x: f64, $y: f64) -> f64 {
                    $body
                }

                #[grad(wrt($y))]
                pub fn f_y($x: f64, $y: f64) -> f64 {
                    $body
                }

                pub fn tape<'t>($x: Var<'t>, $y: Var<'t>) -> Var<'t> {
                    $body
                }

                pub fn tape_const_y<'t>($x: Var<'t>, $y: f64) -> Var<'t> {
                    $body
                }

                pub fn value($x: &Value, $y: &Value) -> Option<Value> {
                    value_body!($value, [$x, $y], $body)
                }
            }
        )+

        /// The operations of the table the binary cases use.
        const BINARY_OPS: &[&str] = &[$($op),+];

        #[test]
        fn binary_operations_agree_across_engines() {
            let mut rng = Rng::new(2);
            $(
                let name = stringify!($case);
                let both = Case {
                    name,
                    original: |p| $case::f(p[0], p[1]),
                    grad: |p| {
                        let (value, dx, dy) = $case::f_grad(p[0], p[1]);
                        vec![value, dx, dy]
                    },
                    wrt: &[0, 1],
                    tape: |p| on_tape(p, |_, v| $case::tape(v[0], v[1])),
                    value: |p| on_value(p, |v| $case::value(&v[0], &v[1])),
                    agreement: Agreement::Exact,
                };
                // Only x differentiated: on Tape the second operand is a constant `f64`
                // too, so both take the one-active-operand path.
                let only_x = Case {
                    name,
                    grad: |p| {
                        let (value, dx) = $case::f_x_grad(p[0], p[1]);
                        vec![value, dx]
                    },
                    wrt: &[0],
                    tape: |p| on_tape(p, |_, v| $case::tape_const_y(v[0], p[1])),
                    // On Value the constant is a leaf whose gradient is not looked at.
                    ..both
                };
                // Only y differentiated: x is a leaf on Tape, whose gradient is ignored.
                let only_y = Case {
                    name,
                    grad: |p| {
                        let (value, dy) = $case::f_y_grad(p[0], p[1]);
                        vec![value, dy]
                    },
                    wrt: &[1],
                    ..both
                };
                for region in [$(($xr, $yr)),+] {
                    for _ in 0..POINTS_PER_REGION {
                        let point = rng.point(&[region.0, region.1]);
                        check(&both, &point);
                        check(&only_x, &point);
                        check(&only_y, &point);
                    }
                }
            )+
        }
    };
}

binary_ops! {
    add => "add": |x, y| x + y, value: same, in [((-3.0, 3.0), (-3.0, 3.0))];
    sub => "sub": |x, y| x - y, value: same, in [((-3.0, 3.0), (-3.0, 3.0))];
    mul => "mul": |x, y| x * y, value: same, in [((-3.0, 3.0), (-3.0, 3.0))];
    div => "div": |x, y| x / y, value: same, in [((-3.0, 3.0), (0.3, 3.0)), ((-3.0, 3.0), (-3.0, -0.3))];
    powf => "powf": |x, y| x.powf(y), value: (|a, b| a.pow(b)), in [((0.2, 3.0), (-2.0, 3.0))];
    log => "log": |x, y| x.log(y), value: none, in [((0.2, 8.0), (1.5, 10.0)), ((0.2, 8.0), (0.2, 0.7))];
    atan2 => "atan2": |y, x| y.atan2(x), value: (|a, b| a.atan2(b)), in [((-3.0, 3.0), (0.2, 3.0)), ((0.2, 3.0), (-3.0, -0.2))];
    max => "max": |x, y| x.max(y), value: (|a, b| a.max(b)), in [((-3.0, -0.1), (0.1, 3.0)), ((0.1, 3.0), (-3.0, -0.1))];
    min => "min": |x, y| x.min(y), value: (|a, b| a.min(b)), in [((-3.0, -0.1), (0.1, 3.0)), ((0.1, 3.0), (-3.0, -0.1))];
    hypot => "hypot": |x, y| x.hypot(y), value: (|a, b| a.hypot(b)), in [((-3.0, 3.0), (0.2, 3.0)), ((-3.0, 3.0), (-3.0, -0.2))];
    // Away from the jumps, where x/m is an integer: the quotients here are 2 and -2 (and
    // -3 for the Euclidean one of a negative x), 0 in the last region.
    rem => "rem": |x, m| x % m, value: same, in [((2.1, 2.9), (1.0, 1.04)), ((-2.9, -2.1), (1.0, 1.04)), ((2.1, 2.9), (-1.04, -1.0)), ((0.1, 0.9), (1.0, 3.0))];
    rem_euclid => "rem_euclid": |x, m| x.rem_euclid(m), value: (|a, b| a.rem_euclid(b)), in [((2.1, 2.9), (1.0, 1.04)), ((-2.9, -2.1), (1.0, 1.04)), ((2.1, 2.9), (-1.04, -1.0)), ((-2.9, -2.1), (-1.04, -1.0))];
    div_euclid => "div_euclid": |x, m| x.div_euclid(m), value: (|a, b| a.div_euclid(b)), in [((2.1, 2.9), (1.0, 1.04)), ((-2.9, -2.1), (-1.04, -1.0))];
    copysign => "copysign": |x, s| x.copysign(s), value: (|a, b| a.copysign(b)), in [((0.1, 3.0), (0.1, 3.0)), ((0.1, 3.0), (-3.0, -0.1)), ((-3.0, -0.1), (0.1, 3.0)), ((-3.0, -0.1), (-3.0, -0.1))];
}

// The two ternary operations, written out.

#[grad]
fn mul_add(x: f64, a: f64, b: f64) -> f64 {
    x.mul_add(a, b)
}

#[grad(wrt(a, b))]
fn mul_add_ab(x: f64, a: f64, b: f64) -> f64 {
    x.mul_add(a, b)
}

#[grad]
fn clamp(x: f64, lo: f64, hi: f64) -> f64 {
    x.clamp(lo, hi)
}

#[grad(wrt(lo, hi))]
fn clamp_bounds(x: f64, lo: f64, hi: f64) -> f64 {
    x.clamp(lo, hi)
}

#[test]
fn ternary_operations_agree_across_engines() {
    let mul_add_all = Case {
        name: "mul_add",
        original: |p| mul_add(p[0], p[1], p[2]),
        grad: |p| {
            let (value, dx, da, db) = mul_add_grad(p[0], p[1], p[2]);
            vec![value, dx, da, db]
        },
        wrt: &[0, 1, 2],
        tape: |p| on_tape(p, |_, v| v[0].mul_add(v[1], v[2])),
        value: |p| on_value(p, |v| Some(v[0].mul_add(&v[1], &v[2]))),
        agreement: Agreement::Exact,
    };
    let mul_add_a_b = Case {
        name: "mul_add wrt(a, b)",
        grad: |p| {
            let (value, da, db) = mul_add_ab_grad(p[0], p[1], p[2]);
            vec![value, da, db]
        },
        wrt: &[1, 2],
        // x a constant receiver: a leaf on Tape.
        ..mul_add_all
    };
    let clamp_all = Case {
        name: "clamp",
        original: |p| clamp(p[0], p[1], p[2]),
        grad: |p| {
            let (value, dx, dlo, dhi) = clamp_grad(p[0], p[1], p[2]);
            vec![value, dx, dlo, dhi]
        },
        wrt: &[0, 1, 2],
        tape: |p| on_tape(p, |_, v| v[0].clamp(v[1], v[2])),
        // Value's clamp takes constant bounds: it has no version with variable ones.
        value: |_| None,
        agreement: Agreement::Exact,
    };
    let clamp_lo_hi = Case {
        name: "clamp wrt(lo, hi)",
        grad: |p| {
            let (value, dlo, dhi) = clamp_bounds_grad(p[0], p[1], p[2]);
            vec![value, dlo, dhi]
        },
        wrt: &[1, 2],
        ..clamp_all
    };
    let mut rng = Rng::new(3);
    for _ in 0..3 * POINTS_PER_REGION {
        let point = rng.point(&[(-3.0, 3.0), (-3.0, 3.0), (-3.0, 3.0)]);
        check(&mul_add_all, &point);
        check(&mul_add_a_b, &point);
    }
    // x inside [lo, hi], below it and above it.
    for x in [(-0.9, 0.9), (-3.0, -1.1), (1.1, 3.0)] {
        for _ in 0..POINTS_PER_REGION {
            let point = rng.point(&[x, (-1.05, -0.95), (0.95, 1.05)]);
            check(&clamp_all, &point);
            check(&clamp_lo_hi, &point);
        }
    }
}

/// A lone negative-zero partial (see the module documentation): `d/dx cos x = -sin x` is
/// `-0.0` at `x = 0`. `Tape` and `Value` add it to `0.0` and return `+0.0`; the generated
/// code returns a zero of either sign, equal to theirs as a number.
#[test]
fn a_negative_zero_partial_is_a_zero_on_every_engine() {
    let (value, generated) = cos::f_grad(0.0);
    assert_eq!(value, 1.0);
    assert_eq!(generated, 0.0);
    let tape = on_tape(&[0.0], |_, v| cos::tape(v[0]));
    let value = on_value(&[0.0], |v| cos::value(&v[0])).expect("Value has cos");
    for (engine, partial) in [("Tape", tape[1]), ("Value", value[1])] {
        assert_eq!(
            partial.to_bits(),
            0.0f64.to_bits(),
            "{engine}: 0.0 + -0.0 is +0.0"
        );
        assert_exact(generated, partial, engine);
    }
}

/// Every operation of the guide's table (the table `autodiff-macros-core` checks against its
/// `OPS`) is exercised by a case above.
#[test]
fn every_operation_of_the_table_is_covered() {
    let guide = include_str!("../src/guide/language.md");
    let start = guide
        .find("<!-- ops-table:start -->")
        .expect("the guide has the ops table");
    let end = guide.find("<!-- ops-table:end -->").expect("end marker");
    let table: Vec<&str> = guide[start..end]
        .lines()
        .filter_map(|line| line.strip_prefix("| "))
        .filter_map(|line| line.split(" |").next())
        .filter(|name| *name != "operation" && !name.starts_with("---"))
        .collect();
    assert!(table.len() >= 40, "parsed only {} operations", table.len());
    let covered: Vec<&str> = UNARY_OPS
        .iter()
        .chain(BINARY_OPS)
        .chain(&["mul_add", "clamp"])
        .copied()
        .collect();
    for op in &table {
        assert!(covered.contains(op), "operation `{op}` has no case here");
    }
    for op in &covered {
        assert!(table.contains(op), "`{op}` is not in the guide's table");
    }
}

// ---------------------------------------------------------------------------------------
// Composite programs, each written three times: `#[grad]`, `Tape`, `Value`.

/// A sub-expression used several times: its adjoint collects every use.
#[grad]
fn shared(x: f64, y: f64) -> f64 {
    let s = (x * y).sin();
    let t = s * s + s.exp();
    t / (1.0 + s * s)
}

fn shared_tape<'t>(x: Var<'t>, y: Var<'t>) -> Var<'t> {
    let s = (x * y).sin();
    let t = s * s + s.exp();
    t / (1.0 + s * s)
}

fn shared_value(x: &Value, y: &Value) -> Value {
    let s = (x * y).sin();
    let t = &s * &s + s.exp();
    t / (1.0 + &s * &s)
}

/// Shadowing, including inside a block.
#[grad]
fn shadowing(x: f64, y: f64) -> f64 {
    let x = x * y;
    let x = x.tanh() + x;
    let y = {
        let x = y.exp();
        x * x
    };
    x * y
}

fn shadowing_tape<'t>(x: Var<'t>, y: Var<'t>) -> Var<'t> {
    let x = x * y;
    let x = x.tanh() + x;
    let y = {
        let x = y.exp();
        x * x
    };
    x * y
}

fn shadowing_value(x: &Value, y: &Value) -> Value {
    let x = x * y;
    let x = x.tanh() + &x;
    let y = {
        let x = y.exp();
        &x * &x
    };
    x * y
}

/// `let mut` with every compound assignment, a variable assigned from itself, and an
/// assignment inside a block.
#[grad]
fn mutation(x: f64, y: f64, z: f64) -> f64 {
    let mut acc = x;
    acc *= y;
    acc += z.sin();
    acc -= x / y;
    acc /= 1.0 + z * z;
    acc *= acc;
    let mut total = x.cos();
    total += acc;
    {
        total = total * z + acc;
    }
    total -= 2.0;
    total
}

fn mutation_tape<'t>(x: Var<'t>, y: Var<'t>, z: Var<'t>) -> Var<'t> {
    let mut acc = x;
    acc *= y;
    acc += z.sin();
    acc -= x / y;
    acc /= 1.0 + z * z;
    acc *= acc;
    let mut total = x.cos();
    total += acc;
    {
        total = total * z + acc;
    }
    total -= 2.0;
    total
}

fn mutation_value(x: &Value, y: &Value, z: &Value) -> Value {
    let mut acc = x.clone();
    acc *= y;
    acc += z.sin();
    acc -= x / y;
    acc /= 1.0 + z * z;
    acc *= acc.clone();
    let mut total = x.cos();
    total += &acc;
    {
        total = total * z + &acc;
    }
    total -= 2.0;
    total
}

/// One variable used a dozen times, in every kind of operation.
#[grad]
fn reuse(x: f64, y: f64) -> f64 {
    x * x * x + x.sin() * x - x / (1.0 + x * x) + x.exp() * y * x + x.hypot(y) * x - x.max(y)
}

fn reuse_tape<'t>(x: Var<'t>, y: Var<'t>) -> Var<'t> {
    x * x * x + x.sin() * x - x / (1.0 + x * x) + x.exp() * y * x + x.hypot(y) * x - x.max(y)
}

fn reuse_value(x: &Value, y: &Value) -> Value {
    x * x * x + x.sin() * x - x / (1.0 + x * x) + x.exp() * y * x + x.hypot(y) * x - x.max(y)
}

/// A function called by `calls`.
#[grad]
fn inner(a: f64, b: f64) -> f64 {
    (a * b).tanh() + a.powi(2)
}

fn inner_tape<'t>(a: Var<'t>, b: Var<'t>) -> Var<'t> {
    (a * b).tanh() + a.powi(2)
}

fn inner_value(a: &Value, b: &Value) -> Value {
    (a * b).tanh() + a.powi(2)
}

/// Calls of another `#[grad]` function: nested, with a result reused, and with a constant
/// argument (which gets no adjoint).
#[grad]
fn calls(x: f64, y: f64) -> f64 {
    let u = inner(x, y);
    let v = inner(u, x * y);
    v * u + inner(0.5, y)
}

fn calls_tape<'t>(tape: &'t Tape, x: Var<'t>, y: Var<'t>) -> Var<'t> {
    let u = inner_tape(x, y);
    let v = inner_tape(u, x * y);
    // The constant argument is a leaf on the tape; its gradient is not looked at.
    v * u + inner_tape(tape.var(0.5), y)
}

fn calls_value(x: &Value, y: &Value) -> Value {
    let u = inner_value(x, y);
    let v = inner_value(&u, &(x * y));
    v * u + inner_value(&Value::new(0.5), y)
}

/// `stop_gradient`: the stopped values are constants for the gradient.
#[grad]
fn stopped(x: f64, y: f64) -> f64 {
    let s = stop_gradient(x * y);
    let scale = stop_gradient(y.exp());
    s * x + scale * y.sin() + (x - s).tanh()
}

fn stopped_tape<'t>(x: Var<'t>, y: Var<'t>) -> Var<'t> {
    // Reading the value out of a variable is `stop_gradient` on a tape: what is left is
    // an `f64` constant.
    let s = (x * y).value();
    let scale = y.exp().value();
    s * x + scale * y.sin() + (x - s).tanh()
}

fn stopped_value(x: &Value, y: &Value) -> Value {
    let s = (x * y).data();
    let scale = y.exp().data();
    s * x + scale * y.sin() + (x - s).tanh()
}

/// A small network and loss: two inputs, three hidden units (tanh, relu, sigmoid), a
/// squared error. Differentiated with respect to the inputs and weights alike.
#[grad]
fn network(x1: f64, x2: f64, w1: f64, w2: f64, w3: f64) -> f64 {
    let h1 = (x1 * w1 + x2 * w2 + 0.1).tanh();
    let h2 = (x1 * w2 - x2 * w3).relu();
    let h3 = (x1 * w3 + x2 * w1 - 0.3).sigmoid();
    let out = 0.5 * h1 - 1.5 * h2 + 2.0 * h3;
    let error = out - 0.25;
    error * error + 1e-2 * (w1 * w1 + w2 * w2 + w3 * w3)
}

fn network_tape<'t>(x1: Var<'t>, x2: Var<'t>, w1: Var<'t>, w2: Var<'t>, w3: Var<'t>) -> Var<'t> {
    let h1 = (x1 * w1 + x2 * w2 + 0.1).tanh();
    let h2 = (x1 * w2 - x2 * w3).relu();
    let h3 = (x1 * w3 + x2 * w1 - 0.3).sigmoid();
    let out = 0.5 * h1 - 1.5 * h2 + 2.0 * h3;
    let error = out - 0.25;
    error * error + 1e-2 * (w1 * w1 + w2 * w2 + w3 * w3)
}

fn network_value(x1: &Value, x2: &Value, w1: &Value, w2: &Value, w3: &Value) -> Value {
    let h1 = (x1 * w1 + x2 * w2 + 0.1).tanh();
    let h2 = (x1 * w2 - x2 * w3).relu();
    let h3 = (x1 * w3 + x2 * w1 - 0.3).sigmoid();
    let out = 0.5 * h1 - 1.5 * h2 + 2.0 * h3;
    let error = out - 0.25;
    &error * &error + 1e-2 * (w1 * w1 + w2 * w2 + w3 * w3)
}

/// Checks `case` at `POINTS_PER_REGION` points of each region (one range per parameter).
fn check_regions(case: &Case, seed: u64, regions: &[&[(f64, f64)]]) {
    let mut rng = Rng::new(seed);
    for region in regions {
        for _ in 0..POINTS_PER_REGION {
            check(case, &rng.point(region));
        }
    }
}

#[test]
fn shared_subexpressions_agree_across_engines() {
    let case = Case {
        name: "shared",
        original: |p| shared(p[0], p[1]),
        grad: |p| {
            let (v, dx, dy) = shared_grad(p[0], p[1]);
            vec![v, dx, dy]
        },
        wrt: &[0, 1],
        tape: |p| on_tape(p, |_, v| shared_tape(v[0], v[1])),
        value: |p| on_value(p, |v| Some(shared_value(&v[0], &v[1]))),
        agreement: Agreement::Exact,
    };
    check_regions(&case, 10, &[&[(-2.0, 2.0), (-2.0, 2.0)]]);
}

#[test]
fn shadowing_agrees_across_engines() {
    let case = Case {
        name: "shadowing",
        original: |p| shadowing(p[0], p[1]),
        grad: |p| {
            let (v, dx, dy) = shadowing_grad(p[0], p[1]);
            vec![v, dx, dy]
        },
        wrt: &[0, 1],
        tape: |p| on_tape(p, |_, v| shadowing_tape(v[0], v[1])),
        value: |p| on_value(p, |v| Some(shadowing_value(&v[0], &v[1]))),
        agreement: Agreement::Exact,
    };
    check_regions(&case, 11, &[&[(-1.5, 1.5), (-1.5, 1.5)]]);
}

#[test]
fn mutation_agrees_across_engines() {
    let case = Case {
        name: "mutation",
        original: |p| mutation(p[0], p[1], p[2]),
        grad: |p| {
            let (v, dx, dy, dz) = mutation_grad(p[0], p[1], p[2]);
            vec![v, dx, dy, dz]
        },
        wrt: &[0, 1, 2],
        tape: |p| on_tape(p, |_, v| mutation_tape(v[0], v[1], v[2])),
        value: |p| on_value(p, |v| Some(mutation_value(&v[0], &v[1], &v[2]))),
        agreement: Agreement::Exact,
    };
    check_regions(
        &case,
        12,
        &[
            &[(-2.0, 2.0), (0.3, 2.0), (-2.0, 2.0)],
            &[(-2.0, 2.0), (-2.0, -0.3), (-2.0, 2.0)],
        ],
    );
}

#[test]
fn reuse_agrees_across_engines() {
    let case = Case {
        name: "reuse",
        original: |p| reuse(p[0], p[1]),
        grad: |p| {
            let (v, dx, dy) = reuse_grad(p[0], p[1]);
            vec![v, dx, dy]
        },
        wrt: &[0, 1],
        tape: |p| on_tape(p, |_, v| reuse_tape(v[0], v[1])),
        value: |p| on_value(p, |v| Some(reuse_value(&v[0], &v[1]))),
        agreement: Agreement::Exact,
    };
    // Both branches of the max, away from the tie x = y.
    check_regions(
        &case,
        13,
        &[&[(0.5, 2.0), (-2.0, 0.3)], &[(-2.0, 0.3), (0.5, 2.0)]],
    );
}

#[test]
fn calls_agree_across_engines() {
    let case = Case {
        name: "calls",
        original: |p| calls(p[0], p[1]),
        grad: |p| {
            let (v, dx, dy) = calls_grad(p[0], p[1]);
            vec![v, dx, dy]
        },
        wrt: &[0, 1],
        tape: |p| on_tape(p, |tape, v| calls_tape(tape, v[0], v[1])),
        value: |p| on_value(p, |v| Some(calls_value(&v[0], &v[1]))),
        // `inner_grad`'s partials are multiplied out before the outer adjoint is applied.
        agreement: Agreement::Close,
    };
    check_regions(&case, 14, &[&[(-1.5, 1.5), (-1.5, 1.5)]]);

    // The called function on its own has no call inside: exact.
    let inner_case = Case {
        name: "inner",
        original: |p| inner(p[0], p[1]),
        grad: |p| {
            let (v, da, db) = inner_grad(p[0], p[1]);
            vec![v, da, db]
        },
        wrt: &[0, 1],
        tape: |p| on_tape(p, |_, v| inner_tape(v[0], v[1])),
        value: |p| on_value(p, |v| Some(inner_value(&v[0], &v[1]))),
        agreement: Agreement::Exact,
    };
    check_regions(&inner_case, 15, &[&[(-1.5, 1.5), (-1.5, 1.5)]]);
}

#[test]
fn stop_gradient_agrees_across_engines() {
    let case = Case {
        name: "stopped",
        original: |p| stopped(p[0], p[1]),
        grad: |p| {
            let (v, dx, dy) = stopped_grad(p[0], p[1]);
            vec![v, dx, dy]
        },
        wrt: &[0, 1],
        tape: |p| on_tape(p, |_, v| stopped_tape(v[0], v[1])),
        value: |p| on_value(p, |v| Some(stopped_value(&v[0], &v[1]))),
        agreement: Agreement::Exact,
    };
    // Finite differences see through `stop_gradient` (it is the identity), so they are
    // compared with the closed form instead: with s = xy and c = eʸ held constant,
    // ∂/∂x = s + (1 - tanh²(x - s)) and ∂/∂y = c·cos y.
    let mut rng = Rng::new(16);
    for _ in 0..POINTS_PER_REGION {
        let point = rng.point(&[(-1.5, 1.5), (-1.5, 1.5)]);
        let (x, y) = (point[0], point[1]);
        let grad = (case.grad)(&point);
        let tape = (case.tape)(&point);
        let value = (case.value)(&point).expect("Value version");
        assert_eq!(grad[0].to_bits(), stopped(x, y).to_bits());
        for i in 0..3 {
            assert_exact(
                grad[i],
                tape[i],
                &format!("stopped output {i}, #[grad] vs Tape"),
            );
            assert_exact(
                value[i],
                tape[i],
                &format!("stopped output {i}, Value vs Tape"),
            );
        }
        let s = x * y;
        let t = (x - s).tanh();
        assert_close(
            grad[1],
            s + (1.0 - t * t),
            1e-12,
            "stopped ∂/∂x closed form",
        );
        assert_close(
            grad[2],
            y.exp() * y.cos(),
            1e-12,
            "stopped ∂/∂y closed form",
        );
    }
}

#[test]
fn a_small_network_agrees_across_engines() {
    let case = Case {
        name: "network",
        original: |p| network(p[0], p[1], p[2], p[3], p[4]),
        grad: |p| {
            let (v, d1, d2, d3, d4, d5) = network_grad(p[0], p[1], p[2], p[3], p[4]);
            vec![v, d1, d2, d3, d4, d5]
        },
        wrt: &[0, 1, 2, 3, 4],
        tape: |p| on_tape(p, |_, v| network_tape(v[0], v[1], v[2], v[3], v[4])),
        value: |p| {
            on_value(p, |v| {
                Some(network_value(&v[0], &v[1], &v[2], &v[3], &v[4]))
            })
        },
        agreement: Agreement::Exact,
    };
    // The relu both active (x1·w2 > x2·w3) and inactive.
    check_regions(
        &case,
        17,
        &[
            &[
                (0.5, 1.5),
                (-1.5, -0.5),
                (-1.0, 1.0),
                (0.5, 1.5),
                (0.5, 1.5),
            ],
            &[
                (0.5, 1.5),
                (0.5, 1.5),
                (-1.0, 1.0),
                (-1.5, -0.5),
                (0.5, 1.5),
            ],
        ],
    );
}
