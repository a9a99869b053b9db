//! Differential testing of `#[grad]`: random programs of the documented subset, each
//! compiled both as a `#[grad]` function and as the same computation on a `Tape`, and
//! checked against each other and against central finite differences.
//!
//! - [`generator`] writes the programs (seeded, deterministic). The build script runs it
//!   and writes the batch into `OUT_DIR`, in four parts, one per test
//!   (`tests/programs_0.rs` …, so that two cores compile them side by side); each test
//!   includes its part and runs [`check::check_batch`] on it. One program in six is
//!   `#[grad(reassociate)]`, with a sum its gradient adds in lanes and a sample loop (a
//!   random body holding a loop, which only adds to one sum) whose gradient it
//!   preaccumulates (`autodiff-macros-core/src/codegen/preaccumulate.rs`). One in ten
//!   is in `f32`; one in six of those of `f64` numbers only is written generic over its
//!   float type (`fn f<T: Float + …>`, called in `f64`).
//! - Long programs: the build script also writes a few programs whose function under
//!   test performs thousands of operations (`generator::random::long_program`, 8 by
//!   default, `AUTODIFF_DIFFTEST_LONG_PROGRAMS`), into `OUT_DIR/programs_long.rs`, which
//!   `tests/programs_long.rs` checks as the others. Their gradients have well over the
//!   2,000 `let`s beyond which `#[grad]` cuts a gradient into segments (functions of at
//!   most 250 statements, in modules of their own beside it, or nested in it when its
//!   body defines items; `autodiff-macros-core/src/codegen/outline.rs`), which no
//!   ordinary program reaches: so segments are checked on random programs too, not only
//!   on the hand-written `tests/large_functions.rs`. A long body is a sequence of runs of
//!   the ordinary random statements, mostly straight ones, each threading one squashed
//!   value on to the next (see the generator's module `long`); their `Tape` twins measure
//!   distances to kinks in the inputs ([`Ctx::moving_only`]).
//! - This library holds what the generated code and the test need at run time: the
//!   arguments of a case ([`Args`]), the context of the `Tape` twins ([`Ctx`]), which
//!   measures how close a point is to a kink or a branch boundary, the flattening of
//!   partials ([`FlatOut`], [`Leaves`]), and an interpreter of straight-line programs on
//!   `Value` and `Tape` ([`interpret`]).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod check;
pub mod generator;

use autodiff::{Gradient, Tape, Value, Var};
use generator::ast::{BinOp, Exponent, Expr, Stmt};
use std::cell::{Cell, RefCell};
use std::collections::HashMap;

/// Dispatches a unary operation of the table by name to the method of that name.
macro_rules! unary {
    ($x:expr, $name:expr) => {
        match $name {
            "recip" => $x.recip(),
            "sqrt" => $x.sqrt(),
            "cbrt" => $x.cbrt(),
            "exp" => $x.exp(),
            "exp2" => $x.exp2(),
            "exp_m1" => $x.exp_m1(),
            "sin" => $x.sin(),
            "cos" => $x.cos(),
            "tan" => $x.tan(),
            "asin" => $x.asin(),
            "acos" => $x.acos(),
            "atan" => $x.atan(),
            "sinh" => $x.sinh(),
            "cosh" => $x.cosh(),
            "tanh" => $x.tanh(),
            "asinh" => $x.asinh(),
            "acosh" => $x.acosh(),
            "atanh" => $x.atanh(),
            "abs" => $x.abs(),
            "relu" => $x.relu(),
            "sigmoid" => $x.sigmoid(),
            "floor" => $x.floor(),
            "ceil" => $x.ceil(),
            "round" => $x.round(),
            "trunc" => $x.trunc(),
            "signum" => $x.signum(),
            "fract" => $x.fract(),
            "to_degrees" => $x.to_degrees(),
            "to_radians" => $x.to_radians(),
            other => panic!("the engines have no operation `{other}` here"),
        }
    };
}

/// The kind of a parameter, for drawing arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spec {
    /// `n` numbers (a scalar, an array, a nested array flattened).
    Real(usize),
    /// Rows of `k` numbers, as many as the run-time length of the point.
    Run(usize),
    /// A `usize` in `lo..=hi`.
    Int(usize, usize),
    /// A `bool`.
    Bool,
    /// Rows of run-time length, as many as the run-time length of the point, each of one
    /// to three numbers (data).
    Ragged,
    /// The program's struct: `fixed` numbers, `run` more per element of the run-time
    /// length (its `Vec` fields), one `usize` in `0..=hi` per entry of `ints`, and
    /// `flags` `bool`s.
    Struct {
        /// Numbers outside `Vec` fields.
        fixed: usize,
        /// `Vec` fields.
        run: usize,
        /// The largest value of each integer field.
        ints: &'static [usize],
        /// How many `bool` fields.
        flags: usize,
    },
}

/// One generated program, as the test sees it.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    /// The module's name.
    pub name: &'static str,
    /// Its parameters.
    pub params: &'static [Spec],
    /// The parameters whose partials the gradient returns, in its order.
    pub partials: &'static [usize],
    /// The smallest run-time length of its slices.
    pub slice_min: usize,
    /// Whether finite differences of the original are its gradient (not when a
    /// `stop_gradient` holds a value constant).
    pub differences: bool,
    /// Written in `f32`: its arguments are `f32`s (drawn as such), its value and partials
    /// widened to `f64`; its `Tape` twin computes in `f64`.
    pub single: bool,
    /// Written generic over its float type (`fn f<T: Float + …>`), called in `f64`.
    pub generic: bool,
    /// A function of it is `#[grad(reassociate)]`: the gradient's value may differ from
    /// the original's in the last bits.
    pub reassociate: bool,
    /// It calls `powi`. In a release build LLVM may evaluate a `powi` of constants at
    /// compile time, rounded differently from the run-time call (the guide's "Semantics"),
    /// in the original, its gradient or its twin: their values may then differ in the last
    /// bit.
    pub powi: bool,
    /// The original function.
    pub original: fn(&Args) -> f64,
    /// The `#[grad]` gradient: the value and the partials, flattened.
    pub gradient: fn(&Args) -> (f64, Vec<f64>),
    /// The pullback `_vjp` with the seed 2, where the main function has one (it takes
    /// more than numbers), adding into buffers that start as copies of the arguments:
    /// the value, and the differentiated parameters' buffers afterwards, flattened.
    pub vjp: Option<PullbackFn>,
    /// `_grad_into`, adding into buffers that start as copies of the differentiated
    /// arguments: the value, and the buffers' numbers afterwards, flattened.
    pub grad_into: PullbackFn,
    /// Forward mode, `_jvp`, at the point of the first `Args` along the numbers of the
    /// second (the same arguments, other numbers in the differentiated parameters): the
    /// value and the tangent.
    pub jvp: fn(&Args, &Args) -> (f64, f64),
    /// Second order, `_hvp`, where the program has it (every program of one output but
    /// the long ones): at the point of the first `Args` along the second, the value, the
    /// gradient and the Hessian–vector product, flattened.
    pub hvp: Option<HvpFn>,
    /// The Hessian, `_hessian`, where the main function has it (see
    /// `Program::hessian_applies`): the value, the gradient, flattened, and `H` by rows.
    pub hessian: Option<HessianFn>,
    /// The same on a `Tape`; given a direction in the differentiated numbers (flattened,
    /// in the gradient's order), also the Hessian–vector product along it, by the tape's
    /// own second order ([`Tape::hvp`]).
    pub tape: fn(&Args, Option<&[f64]>) -> TapeRun,
    /// The Jacobian of `y ↦ (y, y², sin(y/2))` of the original's value `y`, by
    /// `_jacobian` (where the main function has no struct parameter, `wrt(..)`, const
    /// generics or tuple output): the three values, and the three rows, flattened.
    pub jacobian: Option<JacobianFn>,
}

/// A program's `_hessian` adapter: the value, the gradient and the Hessian's rows.
pub type HessianFn = fn(&Args) -> (f64, Vec<f64>, Vec<Vec<f64>>);

/// A program's `_jacobian` adapter: the output's three values and the Jacobian's rows.
pub type JacobianFn = fn(&Args) -> (Vec<f64>, Vec<Vec<f64>>);

/// A program's `_grad_into` or `_vjp` adapter: the value, and the buffers' numbers.
pub type PullbackFn = fn(&Args) -> (f64, Vec<f64>);

/// A program's `_hvp` adapter: the value, the gradient and `H·t`, flattened.
pub type HvpFn = fn(&Args, &Args) -> (f64, Vec<f64>, Vec<f64>);

/// What the `Tape` twin of a program computes at a point.
#[derive(Clone, Debug)]
pub struct TapeRun {
    /// The value.
    pub value: f64,
    /// The partials, flattened in the gradient's order.
    pub partials: Vec<f64>,
    /// The distance to the nearest kink or branch boundary ([`Ctx::margin`]).
    pub margin: f64,
    /// The largest magnitude of a variable ([`Ctx::largest`]).
    pub largest: f64,
    /// The value's rounding error, estimated from its gradient
    /// ([`Var::rounding_error`]).
    pub rounding: f64,
    /// The Hessian–vector product along the direction it was given.
    pub product: Option<Vec<f64>>,
}

/// The value of one parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgValue {
    /// Numbers, flattened (row by row).
    Real(Vec<f64>),
    /// An integer.
    Int(usize),
    /// A flag.
    Flag(bool),
    /// A struct: its numbers in the order of its flat view, its integer and `bool`
    /// fields.
    Struct(Vec<f64>, Vec<usize>, Vec<bool>),
    /// Rows of run-time length (data).
    Rows(Vec<Vec<f64>>),
}

/// The arguments of a call, one per parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Args(pub Vec<ArgValue>);

impl Args {
    fn real(&self, i: usize) -> &Vec<f64> {
        match &self.0[i] {
            ArgValue::Real(v) | ArgValue::Struct(v, ..) => v,
            other => panic!("parameter {i} is not numbers: {other:?}"),
        }
    }

    /// Parameter `i` as a struct's numbers, integer fields and `bool` fields.
    pub fn structure(&self, i: usize) -> (&[f64], &[usize], &[bool]) {
        match &self.0[i] {
            ArgValue::Struct(v, ints, flags) => (v, ints, flags),
            other => panic!("parameter {i} is not a struct: {other:?}"),
        }
    }

    /// Parameter `i` as an `f32` (drawn as one: exact).
    pub fn f32(&self, i: usize) -> f32 {
        self.f(i) as f32
    }

    /// Parameter `i` as an array of `f32`.
    pub fn arr32<const N: usize>(&self, i: usize) -> [f32; N] {
        self.arr::<N>(i).map(|v| v as f32)
    }

    /// Parameter `i` as `N` rows of `K` `f32`s.
    pub fn arr2_32<const N: usize, const K: usize>(&self, i: usize) -> [[f32; K]; N] {
        self.arr2::<N, K>(i).map(|r| r.map(|v| v as f32))
    }

    /// Parameter `i` as a vector of `f32`.
    pub fn slice32(&self, i: usize) -> Vec<f32> {
        self.real(i).iter().map(|&v| v as f32).collect()
    }

    /// Parameter `i` as rows of `K` `f32`s.
    pub fn rows32<const K: usize>(&self, i: usize) -> Vec<[f32; K]> {
        self.rows::<K>(i)
            .into_iter()
            .map(|r| r.map(|v| v as f32))
            .collect()
    }

    /// Parameter `i` as an `f64`.
    pub fn f(&self, i: usize) -> f64 {
        self.real(i)[0]
    }

    /// Parameter `i` as an array.
    pub fn arr<const N: usize>(&self, i: usize) -> [f64; N] {
        self.real(i).as_slice().try_into().expect("length")
    }

    /// Parameter `i` as `N` rows of `K`.
    pub fn arr2<const N: usize, const K: usize>(&self, i: usize) -> [[f64; K]; N] {
        let flat = self.real(i);
        std::array::from_fn(|r| std::array::from_fn(|c| flat[r * K + c]))
    }

    /// Parameter `i` as a slice.
    pub fn slice(&self, i: usize) -> &[f64] {
        self.real(i)
    }

    /// Parameter `i` as a `&Vec`.
    pub fn vec(&self, i: usize) -> &Vec<f64> {
        self.real(i)
    }

    /// Parameter `i` as rows of `K`.
    pub fn rows<const K: usize>(&self, i: usize) -> Vec<[f64; K]> {
        self.real(i)
            .chunks_exact(K)
            .map(|r| r.try_into().expect("row"))
            .collect()
    }

    /// Parameter `i` as rows of run-time length.
    pub fn ragged(&self, i: usize) -> &Vec<Vec<f64>> {
        match &self.0[i] {
            ArgValue::Rows(rows) => rows,
            other => panic!("parameter {i} is not rows: {other:?}"),
        }
    }

    /// Parameter `i` as rows of run-time length of `f32`s.
    pub fn ragged32(&self, i: usize) -> Vec<Vec<f32>> {
        self.ragged(i)
            .iter()
            .map(|row| row.iter().map(|&v| v as f32).collect())
            .collect()
    }

    /// Parameter `i` as an integer.
    pub fn int(&self, i: usize) -> usize {
        match self.0[i] {
            ArgValue::Int(n) => n,
            ref other => panic!("parameter {i} is not an integer: {other:?}"),
        }
    }

    /// Parameter `i` as a flag.
    pub fn flag(&self, i: usize) -> bool {
        match self.0[i] {
            ArgValue::Flag(b) => b,
            ref other => panic!("parameter {i} is not a flag: {other:?}"),
        }
    }

    /// The numbers of the parameters `partials`, in that order, flattened: the point
    /// finite differences move.
    pub fn flat(&self, partials: &[usize]) -> Vec<f64> {
        partials
            .iter()
            .flat_map(|&i| self.real(i).iter().copied())
            .collect()
    }

    /// A copy with the numbers of `partials` replaced by `flat` (as [`Args::flat`] lays
    /// them out).
    pub fn with_flat(&self, partials: &[usize], flat: &[f64]) -> Args {
        let mut out = self.clone();
        let mut at = 0;
        for &i in partials {
            if let ArgValue::Real(v) | ArgValue::Struct(v, ..) = &mut out.0[i] {
                let n = v.len();
                v.copy_from_slice(&flat[at..at + n]);
                at += n;
            }
        }
        out
    }
}

/// The context of the `Tape` twin of a program: makes constants and leaves, and goes
/// between the program and every comparison or non-smooth operation, keeping the
/// smallest distance of the point to a branch boundary or a kink seen on the way.
pub struct Ctx<'t> {
    tape: &'t Tape,
    margin: Cell<f64>,
    largest: Cell<f64>,
    /// The leaves made so far, in a context that passes over what no input moves
    /// ([`Ctx::moving_only`]).
    leaves: Option<RefCell<Vec<Var<'t>>>>,
}

/// How close to a kink or boundary a [`Ctx::moving_only`] context asks whether an input
/// moves it (farther, no point is ever resampled).
const NEAR: f64 = 0.1;

impl<'t> Ctx<'t> {
    /// A context recording on `tape`.
    pub fn new(tape: &'t Tape) -> Ctx<'t> {
        Ctx {
            tape,
            margin: Cell::new(f64::INFINITY),
            largest: Cell::new(0.0),
            leaves: None,
        }
    }

    /// A context recording on `tape` that measures the distance to a kink or a boundary
    /// in the inputs, not in the operand: `|d| / s`, where `d` is the distance of the
    /// operand (of the difference of the two compared) and `s` the largest magnitude of
    /// its partial derivatives with respect to the leaves made so far, how far one input
    /// must move to reach it, to first order (for distances below `NEAR`, 0.1; each costs a
    /// reverse sweep, two for a comparison). So it passes over what no input moves
    /// (`s == 0`): an operand built of constants, of piecewise-constant operations
    /// (`floor`, `signum`, `relu` of a negative number), of `x - x`, of a zero array's
    /// elements; `abs(floor(x))` at `floor(x) == 0` is a kink no perturbation reaches,
    /// at distance `0` at every point. The ordinary programs' twins count it (such a
    /// program is then reported as unchecked, a few in a hundred); a long program
    /// (`generator::random::long_program`) has many of them, and without this would
    /// never be checked at all.
    pub fn moving_only(tape: &'t Tape) -> Ctx<'t> {
        Ctx {
            leaves: Some(RefCell::new(Vec::new())),
            ..Ctx::new(tape)
        }
    }

    /// An input.
    pub fn leaf(&self, value: f64) -> Var<'t> {
        let v = self.tape.var(value);
        if let Some(leaves) = &self.leaves {
            leaves.borrow_mut().push(v);
        }
        v
    }

    /// The largest magnitude of the partial derivatives of `a` (of `a - b`) with respect
    /// to the leaves (NaN if one is NaN).
    fn slope(&self, a: Var<'t>, b: Option<Var<'t>>, leaves: &[Var<'t>]) -> f64 {
        let ga = a.gradient();
        let gb = b.map(Var::gradient);
        leaves.iter().fold(0.0, |m: f64, &leaf| {
            let d = (ga[leaf] - gb.as_ref().map_or(0.0, |g| g[leaf])).abs();
            if d.is_nan() || m.is_nan() {
                f64::NAN
            } else {
                m.max(d)
            }
        })
    }

    /// Notes `distance`, of a kink of `a` (or of the boundary between `a` and `b`): in a
    /// [`Ctx::moving_only`] context, in the inputs.
    fn note_at(&self, distance: f64, a: Var<'t>, b: Option<Var<'t>>) {
        match &self.leaves {
            Some(leaves) if distance.abs() < NEAR => {
                let s = self.slope(a, b, &leaves.borrow());
                self.note_in_inputs(distance, s);
            }
            _ => self.note(distance),
        }
    }

    /// Notes `distance` of an operand whose slope is `s`, in the inputs.
    fn note_in_inputs(&self, distance: f64, s: f64) {
        if s.is_nan() {
            self.note(distance);
        } else if s > 0.0 {
            self.note(distance.abs() / s);
        }
    }

    /// A constant (a node whose adjoint is never read).
    pub fn c(&self, value: f64) -> Var<'t> {
        self.tape.var(value)
    }

    /// `x`, noting its magnitude: the value of a variable.
    pub fn v(&self, x: Var<'t>) -> Var<'t> {
        let m = x.value().abs();
        let m = if m.is_nan() { f64::INFINITY } else { m };
        if m > self.largest.get() {
            self.largest.set(m);
        }
        x
    }

    /// The largest magnitude of a variable seen so far (infinite after a NaN). Where
    /// it is large, the computation cancels large terms, and rounding, amplified, makes
    /// every gradient (and finite differences) inaccurate.
    pub fn largest(&self) -> f64 {
        self.largest.get()
    }

    /// The smallest distance to a kink or a boundary seen so far (`0` after a NaN).
    pub fn margin(&self) -> f64 {
        self.margin.get()
    }

    /// Notes the distance between two operands, unless they are the same node (whose
    /// comparison no perturbation can change).
    fn between(&self, a: Var<'t>, b: Var<'t>) {
        if a.index() != b.index() {
            self.note_at(a.value() - b.value(), a, Some(b));
        }
    }

    fn note(&self, distance: f64) {
        let d = distance.abs();
        let d = if d.is_nan() { 0.0 } else { d };
        if d < self.margin.get() {
            self.margin.set(d);
        }
    }

    /// `a < b`.
    pub fn lt(&self, a: Var<'t>, b: Var<'t>) -> bool {
        self.between(a, b);
        a.value() < b.value()
    }

    /// `a > b`.
    pub fn gt(&self, a: Var<'t>, b: Var<'t>) -> bool {
        self.between(a, b);
        a.value() > b.value()
    }

    /// `a <= b`.
    pub fn le(&self, a: Var<'t>, b: Var<'t>) -> bool {
        self.between(a, b);
        a.value() <= b.value()
    }

    /// `a >= b`.
    pub fn ge(&self, a: Var<'t>, b: Var<'t>) -> bool {
        self.between(a, b);
        a.value() >= b.value()
    }

    /// `x.abs()`.
    pub fn abs(&self, x: Var<'t>) -> Var<'t> {
        self.note_at(x.value(), x, None);
        x.abs()
    }

    /// `x.relu()`.
    pub fn relu(&self, x: Var<'t>) -> Var<'t> {
        self.note_at(x.value(), x, None);
        x.relu()
    }

    /// `x.signum()`.
    pub fn signum(&self, x: Var<'t>) -> Var<'t> {
        self.note_at(x.value(), x, None);
        x.signum()
    }

    /// `x.cbrt()` (its derivative is unbounded at 0).
    pub fn cbrt(&self, x: Var<'t>) -> Var<'t> {
        self.note_at(x.value(), x, None);
        x.cbrt()
    }

    fn to_integer(&self, x: Var<'t>) {
        self.note_at(x.value() - x.value().round(), x, None);
    }

    /// `x.floor()`.
    pub fn floor(&self, x: Var<'t>) -> Var<'t> {
        self.to_integer(x);
        x.floor()
    }

    /// `x.ceil()`.
    pub fn ceil(&self, x: Var<'t>) -> Var<'t> {
        self.to_integer(x);
        x.ceil()
    }

    /// `x.trunc()`.
    pub fn trunc(&self, x: Var<'t>) -> Var<'t> {
        self.to_integer(x);
        x.trunc()
    }

    /// `x % m` (which jumps where `x/m` is an integer, `x` apart from 0; noted there too).
    pub fn rem(&self, x: Var<'t>, m: Var<'t>) -> Var<'t> {
        let (a, b) = (x.value(), m.value());
        self.note_at(a - b * (a / b).round(), x, Some(m));
        x % m
    }

    /// `x.fract()` (which jumps at the integers).
    pub fn fract(&self, x: Var<'t>) -> Var<'t> {
        self.to_integer(x);
        x.fract()
    }

    /// `x.round()` (which jumps half-way between integers).
    pub fn round(&self, x: Var<'t>) -> Var<'t> {
        self.note_at(x.value() - (x.value().floor() + 0.5), x, None);
        x.round()
    }

    /// `a.max(b)`.
    pub fn max(&self, a: Var<'t>, b: Var<'t>) -> Var<'t> {
        self.between(a, b);
        a.max(b)
    }

    /// `a.min(b)`.
    pub fn min(&self, a: Var<'t>, b: Var<'t>) -> Var<'t> {
        self.between(a, b);
        a.min(b)
    }

    /// `x.clamp(lo, hi)`. Where a bound is NaN (a value overflowed on the way), the point
    /// is marked unusable (margin 0) rather than left to `clamp`'s panic.
    pub fn clamp(&self, x: Var<'t>, lo: Var<'t>, hi: Var<'t>) -> Var<'t> {
        if lo.value().is_nan() || hi.value().is_nan() {
            self.note(f64::NAN);
            return x;
        }
        for bound in [lo, hi] {
            self.note_at(x.value() - bound.value(), x, Some(bound));
        }
        x.clamp(lo, hi)
    }

    /// `y.atan2(x)`: its branch cut is the negative `x` axis.
    pub fn atan2(&self, y: Var<'t>, x: Var<'t>) -> Var<'t> {
        if x.value() < 0.0 {
            self.note_at(y.value(), y, None);
        }
        self.note_norm(y, x);
        y.atan2(x)
    }

    /// `a.hypot(b)` (a cone at the origin).
    pub fn hypot(&self, a: Var<'t>, b: Var<'t>) -> Var<'t> {
        self.note_norm(a, b);
        a.hypot(b)
    }

    /// Notes the distance of `(a, b)` to the origin, unless no input moves either.
    fn note_norm(&self, a: Var<'t>, b: Var<'t>) {
        let distance = a.value().hypot(b.value());
        match &self.leaves {
            Some(leaves) if distance < NEAR => {
                let leaves = leaves.borrow();
                let s = self.slope(a, None, &leaves) + self.slope(b, None, &leaves);
                self.note_in_inputs(distance, s);
            }
            _ => self.note(distance),
        }
    }

    /// `x as usize`, an index computed from a number.
    pub fn index(&self, x: Var<'t>) -> usize {
        self.note_at(x.value() - x.value().round(), x, None);
        x.value() as usize
    }
}

/// A partial as returned by `_grad`, appended to a flat vector.
pub trait FlatOut {
    /// Appends the numbers, row by row.
    fn flat_out(&self, out: &mut Vec<f64>);
}

impl FlatOut for f64 {
    fn flat_out(&self, out: &mut Vec<f64>) {
        out.push(*self);
    }
}

impl FlatOut for f32 {
    fn flat_out(&self, out: &mut Vec<f64>) {
        out.push(f64::from(*self));
    }
}

impl<T: FlatOut, const N: usize> FlatOut for [T; N] {
    fn flat_out(&self, out: &mut Vec<f64>) {
        for x in self {
            x.flat_out(out);
        }
    }
}

impl<T: FlatOut> FlatOut for Vec<T> {
    fn flat_out(&self, out: &mut Vec<f64>) {
        for x in self {
            x.flat_out(out);
        }
    }
}

impl<A: FlatOut, B: FlatOut> FlatOut for (A, B) {
    fn flat_out(&self, out: &mut Vec<f64>) {
        self.0.flat_out(out);
        self.1.flat_out(out);
    }
}

/// A block of a Jacobian (`_jacobian`'s, one per differentiated parameter), by rows.
pub trait JacobianRow {
    /// Appends row `r`: the partials of output `r` with respect to the parameter's
    /// numbers, flattened.
    fn row_out(&self, r: usize, out: &mut Vec<f64>);
}

impl<T: FlatOut, const M: usize> JacobianRow for [T; M] {
    fn row_out(&self, r: usize, out: &mut Vec<f64>) {
        self[r].flat_out(out);
    }
}

impl<T: FlatOut> JacobianRow for autodiff::Matrix<T> {
    fn row_out(&self, r: usize, out: &mut Vec<f64>) {
        for x in self.row(r) {
            x.flat_out(out);
        }
    }
}

/// Leaves of a `Tape`, flattened in the gradient's order.
pub trait Leaves<'t> {
    /// Appends every leaf, row by row.
    fn vars(&self, out: &mut Vec<Var<'t>>);

    /// Appends the adjoint of every leaf, row by row.
    fn leaves(&self, gradient: &Gradient, out: &mut Vec<f64>) {
        let mut vars = Vec::new();
        self.vars(&mut vars);
        out.extend(vars.iter().map(|&v| gradient[v]));
    }
}

impl<'t> Leaves<'t> for Var<'t> {
    fn vars(&self, out: &mut Vec<Var<'t>>) {
        out.push(*self);
    }
}

impl<'t, T: Leaves<'t>, const N: usize> Leaves<'t> for [T; N] {
    fn vars(&self, out: &mut Vec<Var<'t>>) {
        for x in self {
            x.vars(out);
        }
    }
}

impl<'t, A: Leaves<'t>, B: Leaves<'t>> Leaves<'t> for (A, B) {
    fn vars(&self, out: &mut Vec<Var<'t>>) {
        self.0.vars(out);
        self.1.vars(out);
    }
}

impl<'t, T: Leaves<'t>> Leaves<'t> for Vec<T> {
    fn vars(&self, out: &mut Vec<Var<'t>>) {
        for x in self {
            x.vars(out);
        }
    }
}

/// What an interpreter needs of a dynamic engine.
pub trait Engine {
    /// A number of the engine.
    type Num: Clone;
    /// A constant.
    fn constant(&self, value: f64) -> Self::Num;
    /// `a op b`.
    fn binary(&self, op: BinOp, a: &Self::Num, b: &Self::Num) -> Self::Num;
    /// `-a`.
    fn neg(&self, a: &Self::Num) -> Self::Num;
    /// `a.powi(n)`.
    fn powi(&self, a: &Self::Num, n: i32) -> Self::Num;
    /// `a.powf(e)` for a constant `e`.
    fn powf(&self, a: &Self::Num, e: f64) -> Self::Num;
    /// An operation of the table by name, the receiver first. Constant operands of
    /// `clamp` are passed as numbers of the engine.
    fn op(&self, name: &str, args: &[Self::Num]) -> Self::Num;
    /// The value.
    fn value(&self, a: &Self::Num) -> f64;
}

/// The `Tape` engine, for [`interpret`].
pub struct TapeEngine<'t>(pub &'t Tape);

impl<'t> Engine for TapeEngine<'t> {
    type Num = Var<'t>;
    fn constant(&self, value: f64) -> Var<'t> {
        self.0.var(value)
    }
    fn binary(&self, op: BinOp, a: &Var<'t>, b: &Var<'t>) -> Var<'t> {
        match op {
            BinOp::Add => *a + *b,
            BinOp::Sub => *a - *b,
            BinOp::Mul => *a * *b,
            BinOp::Div => *a / *b,
        }
    }
    fn neg(&self, a: &Var<'t>) -> Var<'t> {
        -*a
    }
    fn powi(&self, a: &Var<'t>, n: i32) -> Var<'t> {
        a.powi(n)
    }
    fn powf(&self, a: &Var<'t>, e: f64) -> Var<'t> {
        a.powf(e)
    }
    fn op(&self, name: &str, args: &[Var<'t>]) -> Var<'t> {
        let x = args[0];
        match name {
            "max" => x.max(args[1]),
            "min" => x.min(args[1]),
            "hypot" => x.hypot(args[1]),
            "atan2" => x.atan2(args[1]),
            "rem" => x % args[1],
            "mul_add" => x.mul_add(args[1], args[2]),
            "clamp" => x.clamp(args[1].value(), args[2].value()),
            "ln" => x.ln(),
            _ => unary!(x, name),
        }
    }
    fn value(&self, a: &Var<'t>) -> f64 {
        a.value()
    }
}

/// The `Value` engine, for [`interpret`].
pub struct ValueEngine;

impl Engine for ValueEngine {
    type Num = Value;
    fn constant(&self, value: f64) -> Value {
        Value::new(value)
    }
    fn binary(&self, op: BinOp, a: &Value, b: &Value) -> Value {
        match op {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul => a * b,
            BinOp::Div => a / b,
        }
    }
    fn neg(&self, a: &Value) -> Value {
        -a
    }
    fn powi(&self, a: &Value, n: i32) -> Value {
        a.powi(n)
    }
    fn powf(&self, a: &Value, e: f64) -> Value {
        a.powf(e)
    }
    fn op(&self, name: &str, args: &[Value]) -> Value {
        let x = &args[0];
        match name {
            "max" => x.max(&args[1]),
            "min" => x.min(&args[1]),
            "hypot" => x.hypot(&args[1]),
            "atan2" => x.atan2(&args[1]),
            "rem" => x % &args[1],
            "mul_add" => x.mul_add(&args[1], &args[2]),
            "clamp" => x.clamp(args[1].data(), args[2].data()),
            "ln" => x.log().expect("ln of a positive number"),
            _ => unary!(x, name),
        }
    }
    fn value(&self, a: &Value) -> f64 {
        a.data()
    }
}

/// Runs a straight-line program (`let`s of number expressions, then a result) on
/// `engine`, with `inputs` bound to `x0, x1, …`; returns the result.
///
/// # Panics
/// On a statement other than `let`, or an expression outside arithmetic and the
/// operations of the table.
pub fn interpret<E: Engine>(
    engine: &E,
    inputs: &[E::Num],
    stmts: &[Stmt],
    result: &Expr,
) -> E::Num {
    let mut env: HashMap<String, E::Num> = inputs
        .iter()
        .enumerate()
        .map(|(i, x)| (format!("x{i}"), x.clone()))
        .collect();
    for stmt in stmts {
        match stmt {
            Stmt::Let { name, init, .. } => {
                let value = eval(engine, &env, init);
                env.insert(name.clone(), value);
            }
            other => panic!("not a straight-line statement: {other:?}"),
        }
    }
    eval(engine, &env, result)
}

fn eval<E: Engine>(engine: &E, env: &HashMap<String, E::Num>, e: &Expr) -> E::Num {
    match e {
        Expr::Lit(text) => engine.constant(parse_literal(text)),
        Expr::Var { name, .. } => env[name].clone(),
        Expr::Bin(op, a, b) => {
            let (a, b) = (eval(engine, env, a), eval(engine, env, b));
            engine.binary(*op, &a, &b)
        }
        Expr::Neg(a) => engine.neg(&eval(engine, env, a)),
        Expr::Powi(a, Exponent::Lit(n)) => engine.powi(&eval(engine, env, a), *n),
        Expr::Op {
            name: "powf", args, ..
        } => {
            let Expr::Lit(text) = &args[1] else {
                panic!("powf with a variable exponent: {e:?}")
            };
            engine.powf(&eval(engine, env, &args[0]), parse_literal(text))
        }
        Expr::Op { name, args, .. } => {
            let args: Vec<E::Num> = args.iter().map(|a| eval(engine, env, a)).collect();
            engine.op(name, &args)
        }
        other => panic!("not a straight-line expression: {other:?}"),
    }
}

/// The value of a float literal as the generator writes it (`0.5`, `0.5_f64`, `5e-1`).
pub fn parse_literal(text: &str) -> f64 {
    text.trim_end_matches("_f64")
        .trim_end_matches("f64")
        .parse()
        .unwrap_or_else(|_| panic!("not a float literal: {text}"))
}
