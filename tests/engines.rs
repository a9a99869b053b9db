//! The two dynamic engines, `Value` and `Tape`, through the facade: closed-form gradients,
//! micrograd's own tests, random expression graphs against finite differences, and the
//! two engines against each other (bit for bit: they share the rules and the order in
//! which contributions are added).

use std::fmt::Debug;
use std::ops::{Add, Div, Mul, Neg, Sub};

use autodiff::prelude::*;
use autodiff::{rules, DomainError, Gradient, Operand};

// ---------------------------------------------------------------------------------------
// One program, three scalar types: f64 (plain evaluation), Value and Var.

trait Scalar:
    Clone
    + Debug
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + Add<f64, Output = Self>
    + Sub<f64, Output = Self>
    + Mul<f64, Output = Self>
    + Div<f64, Output = Self>
{
    /// `c - self`.
    fn rsub(&self, c: f64) -> Self;
    /// `c / self`.
    fn rdiv(&self, c: f64) -> Self;
    fn powi(&self, n: i32) -> Self;
    fn powf(&self, e: f64) -> Self;
    /// Natural logarithm of a positive number.
    fn ln(&self) -> Self;
    fn exp(&self) -> Self;
    fn sqrt(&self) -> Self;
    fn sin(&self) -> Self;
    fn cos(&self) -> Self;
    fn tanh(&self) -> Self;
    fn atan(&self) -> Self;
    fn sigmoid(&self) -> Self;
    fn relu(&self) -> Self;
    fn abs(&self) -> Self;
    fn max(&self, o: &Self) -> Self;
    fn min(&self, o: &Self) -> Self;
    fn hypot(&self, o: &Self) -> Self;
    fn mul_add(&self, a: &Self, b: &Self) -> Self;
}

impl Scalar for f64 {
    fn rsub(&self, c: f64) -> f64 {
        c - self
    }
    fn rdiv(&self, c: f64) -> f64 {
        c / self
    }
    fn powi(&self, n: i32) -> f64 {
        f64::powi(*self, n)
    }
    fn powf(&self, e: f64) -> f64 {
        f64::powf(*self, e)
    }
    fn ln(&self) -> f64 {
        f64::ln(*self)
    }
    fn exp(&self) -> f64 {
        f64::exp(*self)
    }
    fn sqrt(&self) -> f64 {
        f64::sqrt(*self)
    }
    fn sin(&self) -> f64 {
        f64::sin(*self)
    }
    fn cos(&self) -> f64 {
        f64::cos(*self)
    }
    fn tanh(&self) -> f64 {
        f64::tanh(*self)
    }
    fn atan(&self) -> f64 {
        f64::atan(*self)
    }
    fn sigmoid(&self) -> f64 {
        F64Ext::sigmoid(*self)
    }
    fn relu(&self) -> f64 {
        F64Ext::relu(*self)
    }
    fn abs(&self) -> f64 {
        f64::abs(*self)
    }
    fn max(&self, o: &f64) -> f64 {
        f64::max(*self, *o)
    }
    fn min(&self, o: &f64) -> f64 {
        f64::min(*self, *o)
    }
    fn hypot(&self, o: &f64) -> f64 {
        f64::hypot(*self, *o)
    }
    fn mul_add(&self, a: &f64, b: &f64) -> f64 {
        f64::mul_add(*self, *a, *b)
    }
}

impl Scalar for Value {
    fn rsub(&self, c: f64) -> Value {
        c - self
    }
    fn rdiv(&self, c: f64) -> Value {
        c / self
    }
    fn powi(&self, n: i32) -> Value {
        Value::powi(self, n)
    }
    fn powf(&self, e: f64) -> Value {
        Value::powf(self, e)
    }
    fn ln(&self) -> Value {
        self.log().expect("a positive argument")
    }
    fn exp(&self) -> Value {
        Value::exp(self)
    }
    fn sqrt(&self) -> Value {
        Value::sqrt(self)
    }
    fn sin(&self) -> Value {
        Value::sin(self)
    }
    fn cos(&self) -> Value {
        Value::cos(self)
    }
    fn tanh(&self) -> Value {
        Value::tanh(self)
    }
    fn atan(&self) -> Value {
        Value::atan(self)
    }
    fn sigmoid(&self) -> Value {
        Value::sigmoid(self)
    }
    fn relu(&self) -> Value {
        Value::relu(self)
    }
    fn abs(&self) -> Value {
        Value::abs(self)
    }
    fn max(&self, o: &Value) -> Value {
        Value::max(self, o)
    }
    fn min(&self, o: &Value) -> Value {
        Value::min(self, o)
    }
    fn hypot(&self, o: &Value) -> Value {
        Value::hypot(self, o)
    }
    fn mul_add(&self, a: &Value, b: &Value) -> Value {
        Value::mul_add(self, a, b)
    }
}

impl Scalar for Var<'_> {
    fn rsub(&self, c: f64) -> Self {
        c - *self
    }
    fn rdiv(&self, c: f64) -> Self {
        c / *self
    }
    fn powi(&self, n: i32) -> Self {
        Var::powi(*self, n)
    }
    fn powf(&self, e: f64) -> Self {
        Var::powf(*self, e)
    }
    fn ln(&self) -> Self {
        Var::ln(*self)
    }
    fn exp(&self) -> Self {
        Var::exp(*self)
    }
    fn sqrt(&self) -> Self {
        Var::sqrt(*self)
    }
    fn sin(&self) -> Self {
        Var::sin(*self)
    }
    fn cos(&self) -> Self {
        Var::cos(*self)
    }
    fn tanh(&self) -> Self {
        Var::tanh(*self)
    }
    fn atan(&self) -> Self {
        Var::atan(*self)
    }
    fn sigmoid(&self) -> Self {
        Var::sigmoid(*self)
    }
    fn relu(&self) -> Self {
        Var::relu(*self)
    }
    fn abs(&self) -> Self {
        Var::abs(*self)
    }
    fn max(&self, o: &Self) -> Self {
        Var::max(*self, *o)
    }
    fn min(&self, o: &Self) -> Self {
        Var::min(*self, *o)
    }
    fn hypot(&self, o: &Self) -> Self {
        Var::hypot(*self, *o)
    }
    fn mul_add(&self, a: &Self, b: &Self) -> Self {
        Var::mul_add(*self, *a, *b)
    }
}

/// A function of n scalars, runnable on every `Scalar`.
trait Program {
    fn run<S: Scalar>(&self, x: &[S]) -> S;
}

/// `program!(|a, b| body)`: a `Program` whose body sees its inputs as `a`, `b`, …
macro_rules! program {
    (|$($v:ident),*| $body:expr) => {{
        struct P;
        impl Program for P {
            #[allow(unused_mut, clippy::redundant_clone)]
            fn run<S: Scalar>(&self, x: &[S]) -> S {
                let mut inputs = x.iter().cloned();
                $( let $v = inputs.next().expect("enough inputs"); )*
                $body
            }
        }
        P
    }};
}

/// The value and the gradient (one partial per input) of a program at a point.
#[derive(Debug, Clone, PartialEq)]
struct Run {
    value: f64,
    grad: Vec<f64>,
}

fn run_value<P: Program>(p: &P, xs: &[f64]) -> Run {
    let leaves: Vec<Value> = xs.iter().map(|&x| Value::new(x)).collect();
    let y = p.run(&leaves);
    y.backward();
    Run {
        value: y.data(),
        grad: leaves.iter().map(Value::grad).collect(),
    }
}

fn run_tape<P: Program>(p: &P, xs: &[f64]) -> Run {
    let tape = Tape::new();
    let leaves: Vec<Var<'_>> = xs.iter().map(|&x| tape.var(x)).collect();
    let y = p.run(&leaves);
    let gradient = y.gradient();
    Run {
        value: y.value(),
        grad: leaves.iter().map(|&v| gradient.wrt(v)).collect(),
    }
}

/// Same bits (any NaN equals any NaN).
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Runs `p` through both engines, checks that they agree bit for bit with each other and
/// that the value is the plain f64 value, and returns the result.
fn run_both<P: Program>(p: &P, xs: &[f64]) -> Run {
    let value = run_value(p, xs);
    let tape = run_tape(p, xs);
    let plain = p.run(xs);
    assert!(
        same(value.value, plain),
        "Value computed {} but plain f64 gives {plain}",
        value.value
    );
    assert!(same(value.value, tape.value), "{value:?} vs {tape:?}");
    assert_eq!(value.grad.len(), tape.grad.len());
    for (i, (&v, &t)) in value.grad.iter().zip(&tape.grad).enumerate() {
        assert!(same(v, t), "∂/∂x{i}: Value {v:e} vs Tape {t:e} at {xs:?}");
    }
    value
}

fn assert_close(actual: f64, expected: f64, rel: f64) {
    let tolerance = rel * expected.abs().max(1.0);
    assert!(
        (actual - expected).abs() <= tolerance,
        "{actual} is not within {tolerance:e} of {expected}"
    );
}

// ---------------------------------------------------------------------------------------
// Closed forms, through both engines

#[test]
fn square_of_affine() {
    // (a·b + c)² at a = 2, b = -3, c = 10: value 16, gradient 2(ab+c)·(b, a, 1).
    let p = program!(|a, b, c| (a * b + c).powi(2));
    let run = run_both(&p, &[2.0, -3.0, 10.0]);
    assert_eq!(run.value, 16.0);
    assert_eq!(run.grad, [-24.0, 16.0, 8.0]);
    // Written with a product instead of powi.
    let p = program!(|a, b, c| {
        let s = a * b + c;
        s.clone() * s
    });
    let run = run_both(&p, &[2.0, -3.0, 10.0]);
    assert_eq!((run.value, run.grad), (16.0, vec![-24.0, 16.0, 8.0]));
}

#[test]
fn square_plus_twice() {
    // x² + 2x at 3: 15, gradient 2x + 2 = 8.
    let p = program!(|x| x.powi(2) + x * 2.0);
    assert_eq!(
        run_both(&p, &[3.0]),
        Run {
            value: 15.0,
            grad: vec![8.0]
        }
    );
    let p = program!(|x| x.clone() * x.clone() + x.clone() + x);
    assert_eq!(run_both(&p, &[3.0]).grad, [8.0]);
    let p = program!(|x| x.powf(2.0) + x * 2.0);
    assert_eq!(run_both(&p, &[3.0]).grad, [8.0]);
}

#[test]
fn one_variable_used_three_times() {
    // x·x·x = x³: gradient 3x².
    let p = program!(|x| x.clone() * x.clone() * x);
    let run = run_both(&p, &[1.5]);
    assert_eq!((run.value, run.grad), (3.375, vec![6.75]));
    let run = run_both(&p, &[-2.0]);
    assert_eq!((run.value, run.grad), (-8.0, vec![12.0]));
    // x + x + x: three contributions of 1.
    let p = program!(|x| x.clone() + x.clone() + x);
    assert_eq!(run_both(&p, &[7.0]).grad, [3.0]);
    // x·sin(x)·eˣ, every factor using x.
    let p = program!(|x| x.clone() * x.sin() * x.exp());
    let x = 0.7f64;
    let expected = x.sin() * x.exp() + x * x.cos() * x.exp() + x * x.sin() * x.exp();
    assert_close(run_both(&p, &[x]).grad[0], expected, 1e-14);
}

#[test]
fn tanh_neuron() {
    // micrograd's neuron: o = tanh(x1·w1 + x2·w2 + b).
    let p = program!(|x1, x2, w1, w2, b| (x1 * w1 + x2 * w2 + b).tanh());
    let inputs = [2.0, 0.0, -3.0, 1.0, 6.881_373_587_019_543];
    let run = run_both(&p, &inputs);
    assert_close(run.value, std::f64::consts::FRAC_1_SQRT_2, 1e-9);
    let [dx1, dx2, dw1, dw2, db] = run.grad[..] else {
        unreachable!()
    };
    assert_close(dx1, -1.5, 1e-9);
    assert_close(dw1, 1.0, 1e-9);
    assert_close(dx2, 0.5, 1e-9);
    assert_eq!(dw2, 0.0);
    assert_close(db, 0.5, 1e-9);

    // The same neuron with tanh spelled out as (e^2n - 1) / (e^2n + 1).
    let p = program!(|x1, x2, w1, w2, b| {
        let e = ((x1 * w1 + x2 * w2 + b) * 2.0).exp();
        (e.clone() - 1.0) / (e + 1.0)
    });
    let spelled = run_both(&p, &inputs);
    assert_close(spelled.value, run.value, 1e-12);
    for (a, b) in spelled.grad.iter().zip(&run.grad) {
        assert_close(*a, *b, 1e-12);
    }
}

#[test]
fn sum_times_first() {
    // (a + b)·a at a = 2, b = 3: 10, gradient (2a + b, a) = (7, 2).
    let p = program!(|a, b| (a.clone() + b) * a);
    assert_eq!(
        run_both(&p, &[2.0, 3.0]),
        Run {
            value: 10.0,
            grad: vec![7.0, 2.0]
        }
    );
}

#[test]
fn shared_subexpressions() {
    // s = a·b used three times: y = s² + sin s + s/a.
    let p = program!(|a, b| {
        let s = a.clone() * b;
        s.clone() * s.clone() + s.sin() + s / a
    });
    let (a, b) = (1.5f64, -0.7f64);
    let s = a * b;
    let run = run_both(&p, &[a, b]);
    assert_close(run.value, s * s + s.sin() + b, 1e-14);
    // s/a = b, so ∂(s/a)/∂a = 0 and ∂(s/a)/∂b = 1.
    assert_close(run.grad[0], (2.0 * s + s.cos()) * b, 1e-14);
    assert_close(run.grad[1], (2.0 * s + s.cos()) * a + 1.0, 1e-14);

    // A diamond: u = eˣ feeds v = u·u and the sum v + u.
    let p = program!(|x| {
        let u = x.exp();
        u.clone() * u.clone() + u
    });
    let x = 0.3f64;
    let run = run_both(&p, &[x]);
    assert_close(run.grad[0], 2.0 * (2.0 * x).exp() + x.exp(), 1e-14);

    // Two outputs of a shared trunk combined: t = tanh(x·y); (t + x)·(t - y).
    let p = program!(|x, y| {
        let t = (x.clone() * y.clone()).tanh();
        (t.clone() + x) * (t - y)
    });
    let (x, y) = (0.4f64, -1.2f64);
    let t = (x * y).tanh();
    let dt = 1.0 - t * t;
    let run = run_both(&p, &[x, y]);
    let dx = (dt * y + 1.0) * (t - y) + (t + x) * (dt * y);
    let dy = (dt * x) * (t - y) + (t + x) * (dt * x - 1.0);
    assert_close(run.grad[0], dx, 1e-14);
    assert_close(run.grad[1], dy, 1e-14);
}

#[test]
fn unused_inputs_get_zero() {
    let p = program!(|x, _unused, y| x * y);
    let run = run_both(&p, &[2.0, 5.0, 3.0]);
    assert_eq!(run.grad, [3.0, 0.0, 2.0]);
    // The output is an input itself.
    let p = program!(|x, _y| x);
    assert_eq!(run_both(&p, &[4.0, 1.0]).grad, [1.0, 0.0]);
}

// ---------------------------------------------------------------------------------------
// micrograd's tests (test/test_engine.py), written as a user would write them

#[test]
fn micrograd_sanity_check_value() {
    let x = Value::new(-4.0);
    let z = 2.0 * &x + 2.0 + &x;
    let q = z.relu() + &z * &x;
    let h = (&z * &z).relu();
    let y = &h + &q + &q * &x;
    y.backward();
    // PyTorch gives y = -20, dy/dx = 46.
    assert_eq!(y.data(), -20.0);
    assert_eq!(x.grad(), 46.0);
}

#[test]
fn micrograd_sanity_check_tape() {
    let tape = Tape::new();
    let x = tape.var(-4.0);
    let z = 2.0 * x + 2.0 + x;
    let q = z.relu() + z * x;
    let h = (z * z).relu();
    let y = h + q + q * x;
    assert_eq!(y.value(), -20.0);
    assert_eq!(y.gradient().wrt(x), 46.0);
}

#[test]
fn micrograd_more_ops_value() {
    let a = Value::new(-4.0);
    let b = Value::new(2.0);
    let mut c = &a + &b;
    let mut d = &a * &b + b.powi(3);
    c += &c + 1.0;
    c += 1.0 + &c + (-&a);
    d += &d * 2.0 + (&b + &a).relu();
    d += 3.0 * &d + (&b - &a).relu();
    let e = &c - &d;
    let f = e.powi(2);
    let mut g = &f / 2.0;
    g += 10.0 / &f;
    g.backward();
    // PyTorch's values.
    assert_close(g.data(), 24.704_081_632_653_06, 1e-9);
    assert_close(a.grad(), 138.833_819_241_982_52, 1e-9);
    assert_close(b.grad(), 645.577_259_475_218_6, 1e-9);
}

#[test]
#[allow(clippy::misrefactored_assign_op)] // `c += c + 1` is micrograd's test, as written
fn micrograd_more_ops_tape() {
    let tape = Tape::new();
    let a = tape.var(-4.0);
    let b = tape.var(2.0);
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
    let gradient = g.gradient();
    assert_close(g.value(), 24.704_081_632_653_06, 1e-9);
    assert_close(gradient[a], 138.833_819_241_982_52, 1e-9);
    assert_close(gradient[b], 645.577_259_475_218_6, 1e-9);
}

#[test]
fn micrograd_more_ops_engines_agree_bit_for_bit() {
    let p = program!(|a, b| {
        let mut c = a.clone() + b.clone();
        let mut d = a.clone() * b.clone() + b.powi(3);
        c = c.clone() + (c + 1.0);
        c = c.clone() + (c.rsub(-1.0).rsub(0.0) + -a.clone());
        d = d.clone() + (d * 2.0 + (b.clone() + a.clone()).relu());
        d = d.clone() + (d * 3.0 + (b - a).relu());
        let f = (c - d).powi(2);
        f.clone() / 2.0 + f.rdiv(10.0)
    });
    let run = run_both(&p, &[-4.0, 2.0]);
    assert_close(run.value, 24.704_081_632_653_06, 1e-9);
    assert_close(run.grad[0], 138.833_819_241_982_52, 1e-9);
    assert_close(run.grad[1], 645.577_259_475_218_6, 1e-9);
}

// ---------------------------------------------------------------------------------------
// Random expression graphs

/// SplitMix64: a small seeded generator, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, n).
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// Uniform in [lo, hi).
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * unit
    }
}

/// One instruction of a random graph: operands are indices of earlier slots (the inputs
/// first), so slots are shared freely and some are left unused.
#[derive(Debug, Clone, Copy)]
enum Instr {
    Add(usize, usize),
    Sub(usize, usize),
    Mul(usize, usize),
    /// a / (c + b²): a smooth division.
    Div(usize, usize, f64),
    AddConst(usize, f64),
    MulConst(usize, f64),
    ConstSub(usize, f64),
    /// c / (1 + a²)
    ConstDiv(usize, f64),
    Powi(usize, i32),
    /// (c + a²)^e
    Powf(usize, f64, f64),
    /// ln(c + a²)
    Ln(usize, f64),
    /// √(c + a²)
    Sqrt(usize, f64),
    Exp(usize),
    Sin(usize),
    Cos(usize),
    Tanh(usize),
    Atan(usize),
    Sigmoid(usize),
    Hypot(usize, usize),
    MulAdd(usize, usize, usize),
    // Non-smooth: only in the engine-agreement test.
    Relu(usize),
    Abs(usize),
    Max(usize, usize),
    Min(usize, usize),
}

struct Graph {
    inputs: usize,
    code: Vec<Instr>,
}

impl Graph {
    /// The inputs followed by the result of every instruction.
    fn slots<S: Scalar>(&self, x: &[S]) -> Vec<S> {
        let mut slots: Vec<S> = x[..self.inputs].to_vec();
        for &instr in &self.code {
            let s = |i: usize| slots[i].clone();
            let v = match instr {
                Instr::Add(a, b) => s(a) + s(b),
                Instr::Sub(a, b) => s(a) - s(b),
                Instr::Mul(a, b) => s(a) * s(b),
                Instr::Div(a, b, c) => s(a) / (s(b) * s(b) + c),
                Instr::AddConst(a, c) => s(a) + c,
                Instr::MulConst(a, c) => s(a) * c,
                Instr::ConstSub(a, c) => s(a).rsub(c),
                Instr::ConstDiv(a, c) => (s(a).powi(2) + 1.0).rdiv(c),
                Instr::Powi(a, n) => s(a).powi(n),
                Instr::Powf(a, c, e) => (s(a) * s(a) + c).powf(e),
                Instr::Ln(a, c) => (s(a).powi(2) + c).ln(),
                Instr::Sqrt(a, c) => (s(a) * s(a) + c).sqrt(),
                Instr::Exp(a) => s(a).exp(),
                Instr::Sin(a) => s(a).sin(),
                Instr::Cos(a) => s(a).cos(),
                Instr::Tanh(a) => s(a).tanh(),
                Instr::Atan(a) => s(a).atan(),
                Instr::Sigmoid(a) => s(a).sigmoid(),
                Instr::Hypot(a, b) => (s(a) + 1.5).hypot(&s(b)),
                Instr::MulAdd(a, b, c) => s(a).mul_add(&s(b), &s(c)),
                Instr::Relu(a) => s(a).relu(),
                Instr::Abs(a) => s(a).abs(),
                Instr::Max(a, b) => s(a).max(&s(b)),
                Instr::Min(a, b) => s(a).min(&s(b)),
            };
            slots.push(v);
        }
        slots
    }
}

impl Program for Graph {
    fn run<S: Scalar>(&self, x: &[S]) -> S {
        let slots = self.slots(x);
        // The output mixes the last three slots, so most of the graph is reachable.
        let n = slots.len();
        slots[n - 1].clone() + slots[n - 2].clone() * 0.5 - slots[n - 3].clone()
    }
}

fn random_graph(rng: &mut Rng, inputs: usize, len: usize, kinks: bool) -> Graph {
    let mut code = Vec::with_capacity(len);
    for n in inputs..inputs + len {
        // Prefer recent slots, so the graph is deep as well as wide.
        let pick = |rng: &mut Rng| {
            if rng.below(3) == 0 {
                rng.below(n)
            } else {
                n - 1 - rng.below(n.min(4))
            }
        };
        let (a, b, c) = (pick(rng), pick(rng), pick(rng));
        let k = rng.uniform(0.5, 2.0);
        let kinds = if kinks { 24 } else { 20 };
        code.push(match rng.below(kinds) {
            0 => Instr::Add(a, b),
            1 => Instr::Sub(a, b),
            2 => Instr::Mul(a, b),
            3 => Instr::Div(a, b, k),
            4 => Instr::AddConst(a, k - 1.25),
            5 => Instr::MulConst(a, k - 1.25),
            6 => Instr::ConstSub(a, k),
            7 => Instr::ConstDiv(a, k),
            8 => Instr::Powi(a, [2, 3, -2][rng.below(3)]),
            9 => Instr::Powf(a, k, rng.uniform(-1.5, 1.5)),
            10 => Instr::Ln(a, k),
            11 => Instr::Sqrt(a, k),
            12 => Instr::Exp(a),
            13 => Instr::Sin(a),
            14 => Instr::Cos(a),
            15 => Instr::Tanh(a),
            16 => Instr::Atan(a),
            17 => Instr::Sigmoid(a),
            18 => Instr::Hypot(a, b),
            19 => Instr::MulAdd(a, b, c),
            20 => Instr::Relu(a),
            21 => Instr::Abs(a),
            22 => Instr::Max(a, b),
            _ => Instr::Min(a, b),
        });
    }
    Graph { inputs, code }
}

/// Rejects graphs that overflow or lose all precision on f64 somewhere.
fn slots_are_tame(graph: &Graph, xs: &[f64]) -> bool {
    graph
        .slots(xs)
        .iter()
        .all(|v| v.is_finite() && v.abs() <= 1e4)
}

#[test]
fn random_smooth_graphs_match_finite_differences() {
    let mut rng = Rng(0x5EED_0001);
    let mut checked = 0;
    let mut attempts = 0;
    while checked < 300 {
        attempts += 1;
        assert!(attempts < 3000, "too many rejected graphs");
        let inputs = 1 + rng.below(4);
        let len = 3 + rng.below(40);
        let graph = random_graph(&mut rng, inputs, len, false);
        let xs: Vec<f64> = (0..inputs).map(|_| rng.uniform(-1.5, 1.5)).collect();
        if !slots_are_tame(&graph, &xs) {
            continue;
        }
        let run = run_both(&graph, &xs);
        for i in 0..inputs {
            let h = 1e-6 * xs[i].abs().max(1.0);
            let (mut up, mut down) = (xs.clone(), xs.clone());
            up[i] += h;
            down[i] -= h;
            let fd = (graph.run(&up) - graph.run(&down)) / (up[i] - down[i]);
            let scale = 1.0 + run.grad[i].abs() + run.value.abs();
            assert!(
                (fd - run.grad[i]).abs() <= 1e-7 * scale,
                "∂/∂x{i}: AD {} vs finite differences {fd} for {:?} at {xs:?}",
                run.grad[i],
                graph.code
            );
        }
        checked += 1;
    }
}

#[test]
fn random_graphs_with_kinks_agree_between_engines() {
    let mut rng = Rng(0x5EED_0002);
    let mut checked = 0;
    while checked < 300 {
        let inputs = 1 + rng.below(4);
        let len = 3 + rng.below(60);
        let graph = random_graph(&mut rng, inputs, len, true);
        // Some inputs exactly at kinks (0, or equal to each other).
        let xs: Vec<f64> = (0..inputs)
            .map(|_| match rng.below(4) {
                0 => 0.0,
                1 => 1.0,
                _ => rng.uniform(-2.0, 2.0),
            })
            .collect();
        if !slots_are_tame(&graph, &xs) {
            continue;
        }
        // run_both asserts the bit-for-bit agreement.
        let run = run_both(&graph, &xs);
        assert!(run.value.is_finite());
        checked += 1;
    }
}

// ---------------------------------------------------------------------------------------
// Every rule through both engines, against the rule itself

macro_rules! check_unary {
    ($($op:ident at $x:expr),* $(,)?) => {$({
        let x: f64 = $x;
        let (value, partial) = rules::$op(x);
        let leaf = Value::new(x);
        let y = leaf.$op();
        y.backward();
        assert!(same(y.data(), value), "Value::{} value", stringify!($op));
        assert!(same(leaf.grad(), partial), "Value::{} partial", stringify!($op));
        let tape = Tape::new();
        let v = tape.var(x);
        let y = v.$op();
        assert!(same(y.value(), value), "Var::{} value", stringify!($op));
        assert!(same(y.gradient()[v], partial), "Var::{} partial", stringify!($op));
        assert!(value.is_finite() && partial.is_finite(), "{} at {x}", stringify!($op));
    })*};
}

type UnaryRule = fn(f64) -> (f64, f64);
type UnaryVar = for<'t> fn(Var<'t>) -> Var<'t>;
type BinaryRule = fn(f64, f64) -> (f64, f64, f64);
type BinaryValue = fn(&Value, &Value) -> Value;
type BinaryVar = for<'t> fn(Var<'t>, Var<'t>) -> Var<'t>;

#[test]
fn every_unary_rule_matches_in_both_engines() {
    check_unary!(
        recip at 1.7, sqrt at 2.3, cbrt at -3.1, exp at 0.4, exp2 at -1.2, exp_m1 at 1e-3,
        sin at 0.9, cos at 0.9, tan at 0.3, asin at 0.2, acos at -0.6, atan at 5.0,
        sinh at 0.8, cosh at -0.8, tanh at 0.55, asinh at -2.0, acosh at 1.9, atanh at 0.4,
        abs at -3.0, abs at 2.0, abs at 0.0, relu at -1.0, relu at 2.5, relu at 0.0,
        sigmoid at -0.3, floor at 2.7, ceil at 2.2, round at -2.5, trunc at -2.7,
        signum at -0.1, to_degrees at 1.0, to_radians at 90.0,
    );
    // Tape-only rules (Value has `log` with a domain check instead).
    let tape_only: [(UnaryRule, UnaryVar, f64); 4] = [
        (rules::ln, |v| v.ln(), 2.5),
        (rules::ln_1p, |v| v.ln_1p(), 0.01),
        (rules::log2, |v| v.log2(), 8.5),
        (rules::log10, |v| v.log10(), 0.3),
    ];
    for (rule, method, x) in tape_only {
        let tape = Tape::new();
        let v = tape.var(x);
        let y = method(v);
        let (value, partial) = rule(x);
        assert!(same(y.value(), value) && same(y.gradient()[v], partial));
    }
    // Value::log is rules::ln.
    let x = Value::new(2.5);
    let y = x.log().unwrap();
    y.backward();
    assert_eq!((y.data(), x.grad()), (rules::ln(2.5).0, rules::ln(2.5).1));
}

#[test]
fn binary_and_ternary_rules_match_in_both_engines() {
    let (x, y) = (1.3f64, -0.8f64);
    let value_binary: [(BinaryRule, BinaryValue); 9] = [
        (rules::add, |a, b| a + b),
        (rules::sub, |a, b| a - b),
        (rules::mul, |a, b| a * b),
        (rules::div, |a, b| a / b),
        (rules::max, Value::max),
        (rules::min, Value::min),
        (rules::hypot, Value::hypot),
        (rules::atan2, Value::atan2),
        (|x, y| rules::powf(x, y + 2.0), |a, b| a.pow(&(b + 2.0))),
    ];
    let tape_binary: [BinaryVar; 9] = [
        |a, b| a + b,
        |a, b| a - b,
        |a, b| a * b,
        |a, b| a / b,
        |a, b| a.max(b),
        |a, b| a.min(b),
        |a, b| a.hypot(b),
        |a, b| a.atan2(b),
        |a, b| a.powf(b + 2.0),
    ];
    for (i, ((rule, value_op), tape_op)) in value_binary.iter().zip(&tape_binary).enumerate() {
        let (v, dx, dy) = rule(x, y);
        let (a, b) = (Value::new(x), Value::new(y));
        let out = value_op(&a, &b);
        out.backward();
        assert!(same(out.data(), v), "op {i}");
        assert!(same(a.grad(), dx) && same(b.grad(), dy), "op {i}");
        let tape = Tape::new();
        let (a, b) = (tape.var(x), tape.var(y));
        let out = tape_op(a, b);
        let g = out.gradient();
        assert!(same(out.value(), v), "op {i}");
        assert!(same(g[a], dx) && same(g[b], dy), "op {i}");
    }

    // log with a variable base, and with a constant one.
    let tape = Tape::new();
    let (a, base) = (tape.var(5.0), tape.var(3.0));
    let out = a.log(base);
    let (v, dx, db) = rules::log(5.0, 3.0);
    let g = out.gradient();
    assert!(same(out.value(), v) && same(g[a], dx) && same(g[base], db));
    let out = a.log(3.0);
    assert!(same(out.value(), v) && same(out.gradient()[a], dx));

    // mul_add and clamp, all variables.
    let (v, dx, da, db) = rules::mul_add(x, y, 0.25);
    let (p, q, r) = (Value::new(x), Value::new(y), Value::new(0.25));
    let out = p.mul_add(&q, &r);
    out.backward();
    assert!(same(out.data(), v));
    assert!(same(p.grad(), dx) && same(q.grad(), da) && same(r.grad(), db));
    let tape = Tape::new();
    let (p, q, r) = (tape.var(x), tape.var(y), tape.var(0.25));
    let out = p.mul_add(q, r);
    let g = out.gradient();
    assert!(same(out.value(), v));
    assert!(same(g[p], dx) && same(g[q], da) && same(g[r], db));

    for x in [-2.0, -1.0, 0.3, 1.0, 2.0] {
        let (v, dx, dlo, dhi) = rules::clamp(x, -1.0, 1.0);
        let leaf = Value::new(x);
        let out = leaf.clamp(-1.0, 1.0);
        out.backward();
        assert!(same(out.data(), v) && same(leaf.grad(), dx));
        let tape = Tape::new();
        let (p, lo, hi) = (tape.var(x), tape.var(-1.0), tape.var(1.0));
        let out = p.clamp(lo, hi);
        let g = out.gradient();
        assert!(same(out.value(), v));
        assert_eq!((g[p], g[lo], g[hi]), (dx, dlo, dhi));
        let out = p.clamp(-1.0, hi);
        let g = out.gradient();
        assert_eq!((g[p], g[lo], g[hi]), (dx, 0.0, dhi));
    }
}

#[test]
fn subgradients_at_kinks() {
    // relu'(0) = 0, abs'(0) = 0, max/min ties go to the first argument.
    let p = program!(|x| x.relu());
    assert_eq!(run_both(&p, &[0.0]).grad, [0.0]);
    let p = program!(|x| x.abs());
    assert_eq!(run_both(&p, &[0.0]).grad, [0.0]);
    let p = program!(|x, y| x.max(&y));
    assert_eq!(run_both(&p, &[1.0, 1.0]).grad, [1.0, 0.0]);
    assert_eq!(run_both(&p, &[1.0, 2.0]).grad, [0.0, 1.0]);
    let p = program!(|x, y| x.min(&y));
    assert_eq!(run_both(&p, &[1.0, 1.0]).grad, [1.0, 0.0]);
    assert_eq!(run_both(&p, &[1.0, 2.0]).grad, [1.0, 0.0]);
    // The same variable on both sides of a tie: the contributions add up.
    let p = program!(|x| x.max(&x));
    assert_eq!(run_both(&p, &[3.0]).grad, [1.0]);
}

#[test]
fn ieee_values_propagate() {
    // √x at 0: infinite partial, kept as IEEE arithmetic gives it.
    let p = program!(|x| x.sqrt());
    let run = run_both(&p, &[0.0]);
    assert_eq!((run.value, run.grad[0]), (0.0, f64::INFINITY));
    // 0 · √x at 0: 0·∞ = NaN reaches x, in both engines.
    let p = program!(|x| x.sqrt() * 0.0);
    assert!(run_both(&p, &[0.0]).grad[0].is_nan());
}

// ---------------------------------------------------------------------------------------
// Value specifics

#[test]
fn value_operators_for_every_mix() {
    let a = Value::new(6.0);
    let b = Value::new(2.0);
    let results = [
        (&a + &b, 8.0, 1.0, 1.0),
        (&a + b.clone(), 8.0, 1.0, 1.0),
        (a.clone() + &b, 8.0, 1.0, 1.0),
        (a.clone() + b.clone(), 8.0, 1.0, 1.0),
        (&a - &b, 4.0, 1.0, -1.0),
        (a.clone() - b.clone(), 4.0, 1.0, -1.0),
        (&a * &b, 12.0, 2.0, 6.0),
        (a.clone() * &b, 12.0, 2.0, 6.0),
        (&a / &b, 3.0, 0.5, -1.5),
        (a.clone() / b.clone(), 3.0, 0.5, -1.5),
    ];
    for (y, value, da, db) in results {
        a.zero_grad();
        b.zero_grad();
        y.backward();
        assert_eq!((y.data(), a.grad(), b.grad()), (value, da, db), "{y:?}");
    }
    let with_constants = [
        (&a + 1.0, 7.0, 1.0),
        (1.0 + &a, 7.0, 1.0),
        (a.clone() + 1.0, 7.0, 1.0),
        (1.0 + a.clone(), 7.0, 1.0),
        (&a - 1.0, 5.0, 1.0),
        (1.0 - &a, -5.0, -1.0),
        (a.clone() - 1.0, 5.0, 1.0),
        (1.0 - a.clone(), -5.0, -1.0),
        (&a * 2.0, 12.0, 2.0),
        (2.0 * &a, 12.0, 2.0),
        (a.clone() * 2.0, 12.0, 2.0),
        (2.0 * a.clone(), 12.0, 2.0),
        (&a / 2.0, 3.0, 0.5),
        (3.0 / &a, 0.5, -3.0 / 36.0),
        (a.clone() / 2.0, 3.0, 0.5),
        (3.0 / a.clone(), 0.5, -3.0 / 36.0),
        (-&a, -6.0, -1.0),
        (-a.clone(), -6.0, -1.0),
    ];
    for (y, value, da) in with_constants {
        a.zero_grad();
        y.backward();
        assert_eq!((y.data(), a.grad()), (value, da), "{y:?}");
    }
    // Compound assignment with every right-hand side.
    let x = Value::new(3.0);
    let mut y = x.clone();
    y += &x; // 2x
    y *= x.clone(); // 2x²
    y -= 1.0; // 2x² - 1
    y /= 2.0; // x² - 1/2
    y += 1.0; // x² + 1/2
    y *= &x; // x³ + x/2
    y.backward();
    assert_eq!((y.data(), x.grad()), (28.5, 27.5));
}

#[test]
fn value_clones_share_the_node() {
    let x = Value::new(2.0);
    let handle = x.clone();
    let y = &x * &handle; // x²: two uses of one node
    y.backward();
    assert_eq!(x.grad(), 4.0);
    assert_eq!(handle.grad(), 4.0);
    handle.set_data(5.0);
    assert_eq!(x.data(), 5.0);
    // A graph built afterwards uses the new value.
    let y = &x * &x;
    assert_eq!(y.data(), 25.0);
}

#[test]
fn value_sum() {
    let xs: Vec<Value> = (1..=4).map(|i| Value::new(f64::from(i))).collect();
    let s: Value = xs.iter().sum();
    let t: Value = xs.iter().map(|x| x * x).sum();
    let y = &s * &t; // (Σx)(Σx²)
    y.backward();
    assert_eq!(y.data(), 10.0 * 30.0);
    for (i, x) in xs.iter().enumerate() {
        let xi = (i + 1) as f64;
        assert_eq!(x.grad(), 30.0 + 10.0 * 2.0 * xi);
    }
    let empty: Value = Vec::<Value>::new().into_iter().sum();
    assert_eq!(empty.data(), 0.0);
}

#[test]
fn repeated_backward_accumulates_and_zero_grad_resets() {
    let a = Value::new(2.0);
    let b = Value::new(-3.0);
    let c = Value::new(10.0);
    let s = &a * &b + &c; // an intermediate
    let y = s.powi(2);
    y.backward();
    let first = [a.grad(), b.grad(), c.grad(), s.grad(), y.grad()];
    assert_eq!(first, [-24.0, 16.0, 8.0, 8.0, 1.0]);
    // A second call adds the gradient once more to every node, the output included.
    y.backward();
    let second = [a.grad(), b.grad(), c.grad(), s.grad(), y.grad()];
    assert_eq!(second, first.map(|g| 2.0 * g));
    y.backward();
    assert_eq!(a.grad(), 3.0 * -24.0);
    // zero_grad resets every reachable node, intermediates and output included.
    y.zero_grad();
    assert_eq!([a.grad(), b.grad(), c.grad(), s.grad(), y.grad()], [0.0; 5]);
    y.backward();
    assert_eq!([a.grad(), b.grad(), c.grad(), s.grad(), y.grad()], first);

    // Two outputs of one graph: the leaves receive the sum of both gradients.
    y.zero_grad();
    let z = &s * &a; // (ab + c)·a: ∂/∂a = 2ab + c = -2, ∂/∂b = a² = 4
    z.backward();
    y.backward();
    assert_eq!(a.grad(), -2.0 + -24.0);
    assert_eq!(b.grad(), 4.0 + 16.0);
    assert_eq!(c.grad(), 2.0 + 8.0);
    // zero_grad from one output touches only what it reaches: z itself keeps its 1.
    y.zero_grad();
    assert_eq!((a.grad(), s.grad(), z.grad()), (0.0, 0.0, 1.0));
}

#[test]
fn tape_gradient_is_stateless() {
    let tape = Tape::new();
    let (a, b) = (tape.var(2.0), tape.var(-3.0));
    let y = (a * b + 10.0).powi(2);
    let first = y.gradient();
    let second = y.gradient();
    assert_eq!(first.as_slice(), second.as_slice());
    assert_eq!((first[a], first[b]), (-24.0, 16.0));
}

#[test]
fn log_domain_error() {
    let error = Value::new(-1.0).log().unwrap_err();
    assert_eq!(
        error,
        DomainError {
            operation: "log",
            value: -1.0
        }
    );
    let message = error.to_string();
    assert!(message.contains("log"), "{message}");
    assert!(message.contains("-1"), "{message}");
    let error = Value::new(0.0).log().unwrap_err();
    assert_eq!((error.operation, error.value), ("log", 0.0));
    assert!(error.to_string().contains('0'));
    // An error is a std error.
    let boxed: Box<dyn std::error::Error> = Box::new(error);
    assert!(boxed.to_string().starts_with("log"));
    // In the domain: d ln x / dx = 1/x.
    let x = Value::new(4.0);
    let y = x.log().unwrap();
    y.backward();
    assert_eq!((y.data(), x.grad()), (4.0f64.ln(), 0.25));
    // NaN is not a domain error: it propagates.
    assert!(Value::new(f64::NAN).log().unwrap().data().is_nan());
    // The Tape keeps f64 semantics.
    let tape = Tape::new();
    assert!(tape.var(-1.0).ln().value().is_nan());
}

#[test]
fn value_to_dot() {
    let a = Value::new(2.0);
    let b = Value::new(-3.0);
    let y = (&a * &b + 1.0).tanh();
    y.backward();
    let dot = y.to_dot();
    assert!(dot.starts_with("digraph"), "{dot}");
    assert!(dot.trim_end().ends_with('}'), "{dot}");
    // Four values (a, b, a·b, +1) plus the tanh: v0..v4 in creation order.
    for i in 0..5 {
        assert!(dot.contains(&format!("    v{i} [shape=record")), "{dot}");
    }
    assert!(!dot.contains("v5"), "{dot}");
    assert!(dot.contains("data 2.0000"), "{dot}");
    assert!(dot.contains("data -3.0000"), "{dot}");
    assert!(dot.contains("data -6.0000"), "{dot}");
    assert!(dot.contains("data -5.0000"), "{dot}");
    let t = (-5.0f64).tanh();
    let dt = 1.0 - t * t;
    assert!(dot.contains(&format!("grad {:.4}", -3.0 * dt)), "{dot}");
    // Operation nodes and edges.
    assert!(dot.contains("v2_op [label=\"*\"]"), "{dot}");
    assert!(dot.contains("v3_op [label=\"+ 1\"]"), "{dot}");
    assert!(dot.contains("v4_op [label=\"tanh\"]"), "{dot}");
    for edge in [
        "v0 -> v2_op",
        "v1 -> v2_op",
        "v2_op -> v2",
        "v2 -> v3_op",
        "v3_op -> v3",
        "v3 -> v4_op",
        "v4_op -> v4",
    ] {
        assert!(dot.contains(edge), "missing {edge} in {dot}");
    }
    // Leaves have no operation.
    assert!(!dot.contains("v0_op") && !dot.contains("v1_op"), "{dot}");
    // A node used twice gets two edges.
    let x = Value::new(1.0);
    let sq = &x * &x;
    assert_eq!(sq.to_dot().matches("v0 -> v1_op").count(), 2);
    assert!((2.0 - &x).to_dot().contains("label=\"2 -\""));
    assert!(x.powi(3).to_dot().contains("label=\"powi 3\""));
}

#[test]
fn value_debug_and_display() {
    let x = Value::new(0.5);
    let y = &x * 4.0;
    y.backward();
    assert_eq!(format!("{x:?}"), "Value { data: 0.5, grad: 4.0 }");
    assert_eq!(format!("{y}"), "Value(data=2, grad=1)");
    assert_eq!(format!("{x:.3}"), "Value(data=0.500, grad=4.000)");
}

// ---------------------------------------------------------------------------------------
// Tape specifics

#[test]
fn tape_constants_add_no_nodes() {
    let tape = Tape::new();
    let x = tape.var(-2.0);
    assert_eq!(tape.len(), 1);
    let y = x.powf(2.0); // constant exponent: one node, ln(-2) never needed
    assert_eq!(tape.len(), 2);
    assert_eq!((y.value(), y.gradient()[x]), (4.0, -4.0));
    let z = 3.0 * x + 1.0 - x.max(0.0) / 2.0;
    assert_eq!(tape.len(), 2 + 5);
    assert_eq!(z.gradient()[x], 3.0);
    // A variable exponent is a second parent.
    let e = tape.var(2.0);
    let w = x.powf(e);
    assert_eq!(w.value(), 4.0);
    let g = w.gradient();
    assert_eq!(g[x], -4.0);
    assert!(g[e].is_nan()); // 4·ln(-2): IEEE semantics
}

#[test]
fn tape_operators_and_operands() {
    let tape = Tape::new();
    let a = tape.var(6.0);
    let b = tape.var(2.0);
    let cases = [
        (a + b, 8.0, 1.0, 1.0),
        (a - b, 4.0, 1.0, -1.0),
        (a * b, 12.0, 2.0, 6.0),
        (a / b, 3.0, 0.5, -1.5),
        (a + 1.0, 7.0, 1.0, 0.0),
        (1.0 + a, 7.0, 1.0, 0.0),
        (1.0 - a, -5.0, -1.0, 0.0),
        (a - 1.0, 5.0, 1.0, 0.0),
        (2.0 * b, 4.0, 0.0, 2.0),
        (b * 2.0, 4.0, 0.0, 2.0),
        (3.0 / a, 0.5, -3.0 / 36.0, 0.0),
        (a / 2.0, 3.0, 0.5, 0.0),
        (-a, -6.0, -1.0, 0.0),
        (
            a.hypot(Operand::from(&b)),
            40f64.sqrt(),
            6.0 / 40f64.sqrt(),
            2.0 / 40f64.sqrt(),
        ),
        (a.max(Operand::Const(7.0)), 7.0, 0.0, 0.0),
        (a.min(Operand::from(b)), 2.0, 0.0, 1.0),
    ];
    for (y, value, da, db) in cases {
        let g = y.gradient();
        assert_eq!((y.value(), g[a], g[b]), (value, da, db), "{y:?}");
    }
    let mut y = a;
    y += b; // a + b
    y *= a; // a² + ab
    y -= 1.0;
    y /= b; // (a² + ab - 1)/b
    y += 1.0;
    y -= a; // (a² + ab - 1)/b + 1 - a
    y *= 2.0;
    let g = y.gradient();
    assert_eq!(y.value(), 2.0 * ((36.0 + 12.0 - 1.0) / 2.0 + 1.0 - 6.0));
    assert_eq!(g[a], 2.0 * ((2.0 * 6.0 + 2.0) / 2.0 - 1.0));
    assert_eq!(g[b], 2.0 * (6.0 / 2.0 - (36.0 + 12.0 - 1.0) / 4.0));
}

#[test]
fn gradient_indexing() {
    let tape = Tape::with_capacity(8);
    let x = tape.var(3.0);
    let unused = tape.var(1.0);
    let y = x * x;
    let g: Gradient = y.gradient();
    assert_eq!(g.as_slice(), &[6.0, 0.0, 1.0]);
    assert_eq!((g.wrt(x), g[x], g[unused], g[y]), (6.0, 6.0, 0.0, 1.0));
    assert_eq!((x.index(), unused.index(), y.index()), (0, 1, 2));
    // A variable created after the sweep: the output does not depend on it.
    let later = tape.var(5.0);
    assert_eq!(g[later], 0.0);
    // The gradient of an intermediate sees nothing downstream of it.
    let z = y.sin();
    assert_eq!(y.gradient()[z], 0.0);
    assert_eq!(tape.len(), 5);
    assert!(!tape.is_empty());
    assert!(format!("{tape:?}").contains("len: 5"));
    assert!(format!("{x:?}").contains("value: 3.0"));
}

#[test]
fn tape_clear_and_reuse() {
    let mut tape = Tape::new();
    let before = {
        let x = tape.var(2.0);
        let y = x.exp();
        (y.value(), y.gradient().wrt(x))
    };
    tape.clear();
    assert!(tape.is_empty());
    let x = tape.var(2.0);
    let y = x.exp();
    assert_eq!((y.value(), y.gradient().wrt(x)), before);
    assert_eq!(tape.len(), 2);
    assert_eq!(Tape::default().len(), 0);
}

#[test]
#[should_panic(expected = "different Tapes")]
fn vars_of_two_tapes_do_not_mix() {
    let first = Tape::new();
    let second = Tape::new();
    let _ = first.var(1.0) + second.var(2.0);
}

#[test]
#[should_panic(expected = "another Tape")]
fn gradient_of_another_tape_panics() {
    let first = Tape::new();
    let second = Tape::new();
    let x = first.var(1.0);
    let g = (x * 2.0).gradient();
    let _ = g[second.var(1.0)];
}

#[test]
#[should_panic(expected = "before Tape::clear")]
fn gradient_from_before_clear_panics() {
    let mut tape = Tape::new();
    let g = {
        let x = tape.var(1.0);
        x.exp().gradient()
    };
    tape.clear();
    let x = tape.var(1.0);
    let _ = g.wrt(x);
}

/// What may cross threads (the guide's "Threads and memory"): a tape may move, a gradient
/// and a domain error may move and be shared. That `Value` and `Var` may not, and that
/// `Tape` may not be shared, is checked by `compile_fail` examples in their docs.
#[test]
fn thread_safety() {
    fn send<T: Send>() {}
    fn sync<T: Sync>() {}
    send::<Tape>();
    send::<Gradient>();
    sync::<Gradient>();
    send::<DomainError>();
    sync::<DomainError>();
    // A tape built on one thread, differentiated on another.
    let tape = Tape::new();
    let handle = std::thread::spawn(move || {
        let x = tape.var(0.5);
        let g = (x * x).tanh().gradient();
        g.wrt(x)
    });
    let d = handle.join().expect("no panic");
    let t = 0.25f64.tanh();
    assert_eq!(d, (1.0 - t * t) * 2.0 * 0.5);
}
