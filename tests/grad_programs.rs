//! Whole functions through `#[grad]`: the seed examples, micrograd's engine tests, and the
//! constructs of the body language (shadowing, mutation, blocks, reuse, calls, constants,
//! `stop_gradient`, `wrt`), each checked against closed forms and finite differences.

// The test bodies are written the way the seeds and micrograd write them.
#![allow(
    clippy::excessive_precision,
    clippy::misrefactored_assign_op,
    clippy::needless_return
)]

mod common;

use autodiff::prelude::*;
use common::{assert_all_close, assert_close, fd_gradient};

#[grad]
fn seed(a: f64, b: f64, c: f64) -> f64 {
    (a * b + c).powi(2)
}

#[test]
fn seed_example() {
    assert_eq!(seed_grad(2.0, -3.0, 10.0), (16.0, -24.0, 16.0, 8.0));
}

#[grad]
fn square_plus_twice(x: f64) -> f64 {
    x.powi(2) + 2.0 * x
}

#[test]
fn square_plus_twice_at_three() {
    assert_eq!(square_plus_twice_grad(3.0), (15.0, 8.0));
}

#[grad]
fn used_three_times(x: f64) -> f64 {
    x * x * x
}

#[test]
fn a_variable_used_three_times_gets_three_contributions() {
    for x in [-1.5, 0.5, 2.0] {
        let (value, dx) = used_three_times_grad(x);
        assert_eq!(value, x * x * x);
        assert_close(dx, 3.0 * x * x, 1e-15, "3x²");
    }
}

#[grad]
fn neuron(x1: f64, x2: f64, w1: f64, w2: f64, b: f64) -> f64 {
    let n = x1 * w1 + x2 * w2 + b;
    n.tanh()
}

#[test]
fn tanh_neuron() {
    let (out, dx1, dx2, dw1, dw2, db) = neuron_grad(2.0, 0.0, -3.0, 1.0, 6.881_373_587_019_543_2);
    assert_close(out, std::f64::consts::FRAC_1_SQRT_2, 1e-12, "out");
    assert_close(dx1, -1.5, 1e-12, "dx1");
    assert_close(dx2, 0.5, 1e-12, "dx2");
    assert_close(dw1, 1.0, 1e-12, "dw1");
    assert_close(dw2, 0.0, 1e-12, "dw2");
    assert_close(db, 0.5, 1e-12, "db");
}

#[grad]
fn sum_times_first(a: f64, b: f64) -> f64 {
    (a + b) * a
}

#[test]
fn sum_times_first_example() {
    assert_eq!(sum_times_first_grad(2.0, 3.0), (10.0, 7.0, 2.0));
}

/// micrograd's `test_sanity_check`.
#[grad]
fn sanity_check(x: f64) -> f64 {
    let z = 2.0 * x + 2.0 + x;
    let q = z.relu() + z * x;
    let h = (z * z).relu();
    h + q + q * x
}

#[test]
fn micrograd_sanity_check() {
    assert_eq!(sanity_check_grad(-4.0), (-20.0, 46.0));
}

/// micrograd's `test_more_ops`, written with `let mut` and `+=`.
#[grad]
fn more_ops(a: f64, b: f64) -> f64 {
    let mut c = a + b;
    let mut d = a * b + b.powi(3);
    c += c + 1.0;
    c += 1.0 + c + (-a);
    d += d * 2.0 + (b + a).relu();
    d += 3.0 * d + (b - a).relu();
    let e = c - d;
    let f = e.powi(2);
    let mut g = f / 2.0;
    g += 10.0 / f;
    g
}

#[test]
fn micrograd_more_ops() {
    let (g, da, db) = more_ops_grad(-4.0, 2.0);
    assert_close(g, 24.704_081_632_653_06, 1e-12, "g");
    assert_close(da, 138.833_819_241_982_52, 1e-12, "da");
    assert_close(db, 645.577_259_475_218_6, 1e-12, "db");
}

#[grad]
fn shared_subexpression(x: f64, y: f64) -> f64 {
    let s = (x * y).sin(); // used three times
    let t = s * s + s.exp();
    t / (1.0 + s * s)
}

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

#[grad]
fn mutation(x: f64, y: f64) -> f64 {
    let mut acc = x;
    acc *= y;
    acc -= x.sin();
    acc /= 1.0 + y * y;
    acc += acc; // reads and writes the same variable
    {
        acc = acc * x + 1.0; // assigns a variable of the enclosing scope
    }
    let mut other = acc;
    other = other.powf(2.0);
    return other;
}

#[grad]
fn constants(x: f64, y: f64) -> f64 {
    const SCALE: f64 = 0.5;
    use std::f64::consts::E;
    let n = 3;
    x.powi(n + 1) * SCALE + std::f64::consts::PI * y + f64::EPSILON + E.ln() * x + 1.5e-1_f64
}

fn helper_value(x: f64, y: f64) -> f64 {
    x * y.sin()
}

/// A hand-written gradient: `helper_value` is differentiated through it.
fn helper_value_grad(x: f64, y: f64) -> (f64, f64, f64) {
    (helper_value(x, y), y.sin(), x * y.cos())
}

mod inner {
    use autodiff::prelude::*;

    #[grad]
    pub fn square(x: f64) -> f64 {
        x * x
    }
}

#[grad]
fn calls(x: f64, y: f64) -> f64 {
    let a = helper_value(x, y);
    let b = inner::square(a + y);
    let c = shadowing(b, x); // a #[grad] function with two parameters
    c + helper_value(2.0, y) // one constant argument
}

#[grad]
fn stopped(x: f64, y: f64) -> f64 {
    let s = stop_gradient(x * y);
    s * x + autodiff::stop_gradient(y).sin() * y
}

#[test]
fn constructs_match_finite_differences() {
    type Case = (&'static str, fn(&[f64]) -> f64, fn(&[f64]) -> Vec<f64>);
    /// `(name, f at a point, the gradient of f_grad at a point)` for a two-parameter `f`.
    macro_rules! case {
        ($f:ident, $f_grad:ident) => {
            (
                stringify!($f),
                |p: &[f64]| $f(p[0], p[1]),
                |p: &[f64]| {
                    let (_, a, b) = $f_grad(p[0], p[1]);
                    vec![a, b]
                },
            )
        };
    }
    let cases: [Case; 6] = [
        case!(deep, deep_grad),
        case!(shared_subexpression, shared_subexpression_grad),
        case!(shadowing, shadowing_grad),
        case!(mutation, mutation_grad),
        case!(constants, constants_grad),
        case!(calls, calls_grad),
    ];
    for (name, f, grad) in cases {
        for point in [[0.3, 0.7], [-0.4, 0.2], [1.1, -0.6]] {
            let expected = fd_gradient(f, &point);
            assert_all_close(&grad(&point), &expected, 1e-6, name);
        }
    }
}

#[test]
fn values_are_bit_for_bit_the_originals() {
    for (x, y) in [(0.3, 0.7), (-0.4, 0.2), (1.1, -0.6)] {
        assert_eq!(
            shared_subexpression_grad(x, y).0.to_bits(),
            shared_subexpression(x, y).to_bits()
        );
        assert_eq!(shadowing_grad(x, y).0.to_bits(), shadowing(x, y).to_bits());
        assert_eq!(mutation_grad(x, y).0.to_bits(), mutation(x, y).to_bits());
        assert_eq!(constants_grad(x, y).0.to_bits(), constants(x, y).to_bits());
        assert_eq!(calls_grad(x, y).0.to_bits(), calls(x, y).to_bits());
        assert_eq!(stopped_grad(x, y).0.to_bits(), stopped(x, y).to_bits());
    }
}

#[test]
fn closed_forms_of_constructs() {
    let (x, y) = (0.8, -1.3);
    let (_, dx, dy) = constants_grad(x, y);
    assert_close(dx, 4.0 * x.powi(3) * 0.5 + 1.0, 1e-14, "constants dx");
    assert_close(dy, std::f64::consts::PI, 1e-15, "constants dy");
    // stop_gradient: s is a constant, so d/dx (s·x) = s and d/dy (sin(y_const)·y) = sin(y).
    let (_, dx, dy) = stopped_grad(x, y);
    assert_eq!(dx, x * y);
    assert_eq!(dy, y.sin());
}

#[grad]
fn unused_parameter(x: f64, _unused: f64, also_unused: f64) -> f64 {
    let _dead = also_unused.exp();
    x.sin()
}

#[grad]
fn constant_function(_x: f64) -> f64 {
    2.5
}

#[grad]
fn identity(x: f64) -> f64 {
    x
}

#[test]
fn unused_and_constant_parameters_get_exactly_zero() {
    let (value, dx, du, dv) = unused_parameter_grad(0.5, 1.0, 2.0);
    assert_eq!(value, 0.5f64.sin());
    assert_eq!(dx, 0.5f64.cos());
    assert_eq!(du.to_bits(), 0.0f64.to_bits());
    assert_eq!(dv.to_bits(), 0.0f64.to_bits());
    assert_eq!(constant_function_grad(3.0), (2.5, 0.0));
    assert_eq!(identity_grad(3.0), (3.0, 1.0));
}

#[grad(wrt(c, a))]
fn chosen(a: f64, b: f64, c: f64) -> f64 {
    a * b + c.sin() * b
}

#[test]
fn wrt_returns_the_named_partials_in_that_order() {
    let (a, b, c) = (0.5, -2.0, 1.2);
    let (value, dc, da) = chosen_grad(a, b, c);
    assert_eq!(value, chosen(a, b, c));
    assert_eq!(dc, c.cos() * b);
    assert_eq!(da, b);
}

/// A deep chain of 300 operations with heavy reuse (each step reads the previous two).
#[grad]
fn deep(x: f64, y: f64) -> f64 {
    let mut a = x;
    let mut b = y;
    let mut c;
    c = (a * b).sin() + a;
    a = b;
    b = c;
    c = (a * b).sin() + a;
    a = b;
    b = c;
    c = (a * b).sin() + a;
    a = b;
    b = c;
    c = (a * b).sin() + a;
    a = b;
    b = c;
    c = (a * b).sin() + a;
    a = b;
    b = c;
    c = (a * b).sin() + a;
    a = b;
    b = c;
    c = (a * b).sin() + a;
    a = b;
    b = c;
    c = (a * b).sin() + a;
    a = b;
    b = c;
    a * b + c
}
