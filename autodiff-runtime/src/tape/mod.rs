//! [`Tape`]: an arena engine whose creation order is its topological order.
//!
//! Every operation on a [`Var`] appends one node to its tape: its value and up to two
//! `(parent index, local partial)` pairs, in parallel arrays (struct of arrays). A node is
//! appended only after its parents, so a sweep from the newest node to the oldest is a
//! valid reverse pass: no sort, no reference counting, no allocation per node. The rare
//! node with a third variable operand ([`Var::mul_add`], [`Var::clamp`]) keeps its third
//! edge in a side list ordered by node, walked in step with the sweep.
//!
//! Constant `f64` operands are not nodes: they get no adjoint, and their partials are
//! not stored (`x.powf(2.0)` never evaluates `ln x`).
//!
//! Each node also records which operation made it (one byte, [`Op`]), so that second order
//! ([`Tape::hvp`], [`Tape::hessian`], in `second`) can evaluate the operation's second
//! partials from its parents' values when asked, and not at every operation. A constant
//! that the second partials need (the exponent of `powi`, a constant operand of `powf`,
//! `log`, `atan2`, `hypot`, the dividend of `c / x`) is kept in the node's second partial
//! slot, which a node with one variable operand leaves free.

mod second;

use std::cell::RefCell;
use std::fmt;
use std::ops::{
    Add, AddAssign, Div, DivAssign, Index, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign,
};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::rules;
use second::{Binary, BinaryOps, Op, Unary, WithConstant};

/// Marks an unused parent slot.
const NONE: u32 = u32::MAX;

static NEXT_TAPE_ID: AtomicU64 = AtomicU64::new(0);

fn fresh_id() -> u64 {
    NEXT_TAPE_ID.fetch_add(1, Ordering::Relaxed)
}

/// An arena of nodes recorded by operations on [`Var`]s, differentiated by
/// [`Var::gradient`].
///
/// The tape is borrowed by its variables, so it cannot be cleared or dropped while a
/// [`Var`] is alive. [`Tape::clear`] forgets every node and keeps the allocation, for the
/// next evaluation.
///
/// ```
/// use autodiff_runtime::Tape;
///
/// let tape = Tape::new();
/// let x = tape.var(0.5);
/// let y = tape.var(-1.0);
/// let f = (x * y).tanh() + x.powi(2);
/// let grad = f.gradient();
/// let t = (0.5f64 * -1.0).tanh();
/// assert_eq!(f.value(), t + 0.25);
/// assert!((grad.wrt(x) - ((1.0 - t * t) * -1.0 + 2.0 * 0.5)).abs() < 1e-15);
/// assert!((grad[y] - (1.0 - t * t) * 0.5).abs() < 1e-15);
/// ```
///
/// # Threads
///
/// `Tape` is `Send` but not `Sync`: operations append to it through a `RefCell`, without a
/// lock. A tape can move to another thread when no [`Var`] borrows it, but cannot be
/// shared, and a `Var` (a borrow of its tape) cannot leave its thread. A [`Gradient`] is
/// plain data, `Send` and `Sync`. To differentiate on several threads, give each its own
/// tape.
///
/// ```compile_fail
/// use autodiff_runtime::Tape;
///
/// let tape = Tape::new();
/// std::thread::scope(|s| {
///     s.spawn(|| tape.var(1.0).tanh().value()); // `RefCell<…>` cannot be shared
/// });
/// ```
///
/// # Memory
///
/// A node is a value, two parent indices, two partials and the operation that made it
/// (for second order): 33 bytes, in arrays that grow
/// by doubling ([`Tape::with_capacity`] avoids the copies). Everything is freed with the
/// tape. On graphs of 10,000,000 nodes, about 115 bytes per node at the peak of a sweep,
/// the gradient and the caller's `Var`s included (`autodiff-bench`'s `engine_scale`
/// example).
pub struct Tape {
    /// Identifies this tape (and its contents since the last [`Tape::clear`]) in the
    /// [`Gradient`]s it produces.
    id: u64,
    nodes: RefCell<Nodes>,
}

#[derive(Default)]
struct Nodes {
    values: Vec<f64>,
    parents: Vec<[u32; 2]>,
    /// The partials of the node's edges; a node with one edge may keep a constant of its
    /// operation in the second ([`Op::WithConstant`]).
    partials: Vec<[f64; 2]>,
    /// The operation of each node, for its second partials.
    ops: Vec<Op>,
    /// Third edges, in increasing node order.
    third: Vec<ThirdEdge>,
}

struct ThirdEdge {
    node: u32,
    parent: u32,
    partial: f64,
}

impl Nodes {
    fn len(&self) -> usize {
        self.values.len()
    }

    /// Visits `out` and the nodes it depends on, from the newest to the oldest, each with
    /// its edges `(parent, partial)`, the third included: `visit` passes the node's
    /// adjoint on to its parents. Only ancestors of `out` are visited, so an unrelated
    /// node with an infinite partial cannot turn a 0 into NaN.
    fn sweep(&self, out: usize, mut visit: impl FnMut(usize, &[(usize, f64)])) {
        let mut reached = vec![false; out + 1];
        reached[out] = true;
        let third = &self.third;
        let mut next_third = third.partition_point(|edge| edge.node as usize <= out);
        for i in (0..=out).rev() {
            let third_edge = match next_third.checked_sub(1) {
                Some(t) if third[t].node as usize == i => {
                    next_third = t;
                    Some(&third[t])
                }
                _ => None,
            };
            if !reached[i] {
                continue;
            }
            let mut edges = [(0, 0.0); 3];
            let mut len = 0;
            for (&parent, &partial) in self.parents[i].iter().zip(&self.partials[i]) {
                if parent != NONE {
                    edges[len] = (parent as usize, partial);
                    len += 1;
                }
            }
            if let Some(edge) = third_edge {
                edges[len] = (edge.parent as usize, edge.partial);
                len += 1;
            }
            for &(parent, _) in &edges[..len] {
                reached[parent] = true;
            }
            visit(i, &edges[..len]);
        }
    }

    /// The tangent of every node up to `out` along the direction that moves each of
    /// `inputs` by the matching entry of `direction`, from one sweep in creation order, and
    /// whether an input reaches the node (a node that none reaches keeps a zero tangent and
    /// passes nothing on, so an infinite partial there cannot turn a 0 into NaN).
    fn tangents(&self, out: usize, inputs: &[Var<'_>], direction: &[f64]) -> (Vec<f64>, Vec<bool>) {
        let mut tangent = vec![0.0; out + 1];
        let mut reached = vec![false; out + 1];
        for (input, &t) in inputs.iter().zip(direction) {
            if input.index() <= out {
                tangent[input.index()] += t;
                reached[input.index()] = true;
            }
        }
        let mut third = self.third.iter().peekable();
        for i in 0..=out {
            let mut sum = tangent[i];
            let mut any = reached[i];
            for (&parent, &partial) in self.parents[i].iter().zip(&self.partials[i]) {
                if parent != NONE && reached[parent as usize] {
                    sum += partial * tangent[parent as usize];
                    any = true;
                }
            }
            while let Some(edge) = third.next_if(|edge| edge.node as usize <= i) {
                if edge.node as usize == i && reached[edge.parent as usize] {
                    sum += edge.partial * tangent[edge.parent as usize];
                    any = true;
                }
            }
            tangent[i] = sum;
            reached[i] = any;
        }
        (tangent, reached)
    }

    fn clear(&mut self) {
        self.values.clear();
        self.parents.clear();
        self.partials.clear();
        self.ops.clear();
        self.third.clear();
    }
}

impl Default for Tape {
    fn default() -> Tape {
        Tape::new()
    }
}

impl fmt::Debug for Tape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tape").field("len", &self.len()).finish()
    }
}

impl Tape {
    /// An empty tape.
    #[must_use]
    pub fn new() -> Tape {
        Tape {
            id: fresh_id(),
            nodes: RefCell::new(Nodes::default()),
        }
    }

    /// An empty tape with room for `nodes` nodes before it reallocates.
    #[must_use]
    pub fn with_capacity(nodes: usize) -> Tape {
        Tape {
            id: fresh_id(),
            nodes: RefCell::new(Nodes {
                values: Vec::with_capacity(nodes),
                parents: Vec::with_capacity(nodes),
                partials: Vec::with_capacity(nodes),
                ops: Vec::with_capacity(nodes),
                third: Vec::new(),
            }),
        }
    }

    /// A new input (a leaf) holding `value`.
    ///
    /// # Panics
    /// If the tape already holds `u32::MAX - 1` nodes.
    pub fn var(&self, value: f64) -> Var<'_> {
        self.push(value, &[], Op::Linear)
    }

    /// The number of nodes recorded: inputs and results of operations.
    #[must_use]
    pub fn len(&self) -> usize {
        self.nodes.borrow().len()
    }

    /// Whether no node has been recorded.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forward mode on the tape: the derivative of `output` along the direction that
    /// moves each of `inputs` by the matching entry of `tangents`, from one sweep over the
    /// nodes in creation order (each node's tangent is its partials times its parents'
    /// tangents). A node that no input reaches keeps a zero tangent and passes nothing on,
    /// so an infinite partial there cannot turn a 0 into NaN.
    ///
    /// ```
    /// use autodiff_runtime::Tape;
    ///
    /// let tape = Tape::new();
    /// let (x, y) = (tape.var(0.5), tape.var(2.0));
    /// let f = (x * y).sin() + x;
    /// let along_x = tape.jvp(f, &[x, y], &[1.0, 0.0]);
    /// assert!((along_x - (2.0 * 1.0f64.cos() + 1.0)).abs() < 1e-15);
    /// ```
    ///
    /// # Panics
    /// If `inputs` and `tangents` differ in length, or a `Var` is of another tape.
    #[must_use]
    pub fn jvp(&self, output: Var<'_>, inputs: &[Var<'_>], tangents: &[f64]) -> f64 {
        assert_eq!(inputs.len(), tangents.len(), "one tangent per input");
        for v in inputs.iter().chain(std::iter::once(&output)) {
            assert_eq!(v.tape.id, self.id, "a Var of another Tape");
        }
        let nodes = self.nodes.borrow();
        let out = output.index();
        nodes.tangents(out, inputs, tangents).0[out]
    }

    /// The Jacobian of `outputs` with respect to `inputs`, row-major: row `i` is the
    /// gradient of `outputs[i]` read at `inputs`, from one reverse sweep per output.
    ///
    /// ```
    /// use autodiff_runtime::Tape;
    ///
    /// let tape = Tape::new();
    /// let (r, theta) = (tape.var(2.0), tape.var(0.5));
    /// let (x, y) = (r * theta.cos(), r * theta.sin());
    /// let j = tape.jacobian(&[x, y], &[r, theta]);
    /// assert_eq!(j[0], [0.5f64.cos(), -2.0 * 0.5f64.sin()]);
    /// assert_eq!(j[1], [0.5f64.sin(), 2.0 * 0.5f64.cos()]);
    /// ```
    ///
    /// # Panics
    /// If a `Var` is of another tape.
    #[must_use]
    pub fn jacobian(&self, outputs: &[Var<'_>], inputs: &[Var<'_>]) -> Vec<Vec<f64>> {
        outputs
            .iter()
            .map(|output| {
                let gradient = output.gradient();
                inputs.iter().map(|&input| gradient[input]).collect()
            })
            .collect()
    }

    /// Forgets every node, keeping the allocation. Gradients computed before no longer
    /// apply to the tape: using one with a new [`Var`] panics.
    pub fn clear(&mut self) {
        self.nodes.get_mut().clear();
        self.id = fresh_id();
    }

    /// Appends a node made by `op` with the given `(parent, partial)` edges (at most three).
    fn push(&self, value: f64, edges: &[(u32, f64)], op: Op) -> Var<'_> {
        debug_assert!(edges.len() <= 3);
        let mut nodes = self.nodes.borrow_mut();
        let index = match u32::try_from(nodes.len()) {
            Ok(index) if index != NONE => index,
            _ => panic!("a Tape holds at most {} nodes", NONE),
        };
        let mut parents = [NONE; 2];
        let mut partials = [0.0; 2];
        for (slot, &(parent, partial)) in edges.iter().enumerate() {
            if slot < 2 {
                parents[slot] = parent;
                partials[slot] = partial;
            } else {
                nodes.third.push(ThirdEdge {
                    node: index,
                    parent,
                    partial,
                });
            }
        }
        nodes.values.push(value);
        nodes.parents.push(parents);
        nodes.partials.push(partials);
        nodes.ops.push(op);
        Var { tape: self, index }
    }

    /// Appends a node of one edge whose second partials need a `constant` of its
    /// operation, kept in the node's free partial slot.
    fn push_with_constant(
        &self,
        value: f64,
        edge: (u32, f64),
        op: WithConstant,
        constant: f64,
    ) -> Var<'_> {
        let var = self.push(value, &[edge], Op::WithConstant(op));
        self.nodes.borrow_mut().partials[var.index()][1] = constant;
        var
    }

    fn value(&self, index: u32) -> f64 {
        self.nodes.borrow().values[index as usize]
    }
}

/// A node of a [`Tape`]: an input from [`Tape::var`] or the result of an operation.
///
/// A small `Copy` handle (the tape and an index). Arithmetic (`+ - * /`, unary `-`) works
/// between `Var`s of the same tape and with `f64` on either side; the functions are methods
/// named like their `f64` counterparts. Methods with a second operand take a [`Var`] or an
/// `f64` (a constant, which gets no adjoint and adds no node).
///
/// # Panics
/// Combining `Var`s of two different tapes panics.
#[derive(Clone, Copy)]
pub struct Var<'t> {
    tape: &'t Tape,
    index: u32,
}

/// The second or third operand of a [`Var`] method: another variable of the same tape, or
/// a constant. Built by `From`, so such methods take a `Var` or an `f64` directly.
///
/// ```
/// use autodiff_runtime::Tape;
///
/// let tape = Tape::new();
/// let (x, y) = (tape.var(3.0), tape.var(4.0));
/// assert_eq!(x.hypot(y).value(), 5.0);
/// assert_eq!(x.hypot(4.0).value(), 5.0);
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Operand<'t> {
    /// A variable: it receives an adjoint.
    Var(Var<'t>),
    /// A constant: no adjoint, no node.
    Const(f64),
}

impl<'t> From<Var<'t>> for Operand<'t> {
    fn from(var: Var<'t>) -> Operand<'t> {
        Operand::Var(var)
    }
}

impl<'t> From<&Var<'t>> for Operand<'t> {
    fn from(var: &Var<'t>) -> Operand<'t> {
        Operand::Var(*var)
    }
}

impl From<f64> for Operand<'_> {
    fn from(value: f64) -> Self {
        Operand::Const(value)
    }
}

impl<'t> Operand<'t> {
    /// The value and, for a variable, its index.
    fn resolve(self, tape: &Tape) -> (f64, Option<u32>) {
        match self {
            Operand::Var(var) => {
                var.check_tape(tape);
                (var.value(), Some(var.index))
            }
            Operand::Const(value) => (value, None),
        }
    }
}

impl fmt::Debug for Var<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Var")
            .field("index", &self.index)
            .field("value", &self.value())
            .finish()
    }
}

impl<'t> Var<'t> {
    /// The value computed in the forward pass.
    #[must_use]
    pub fn value(self) -> f64 {
        self.tape.value(self.index)
    }

    /// The position of this node on its tape (creation order), the index of its adjoint in
    /// [`Gradient::as_slice`].
    #[must_use]
    pub fn index(self) -> usize {
        self.index as usize
    }

    /// The gradient of `self`: the adjoint of every node of the tape, from one sweep that
    /// seeds `self` with 1 and visits the nodes from `self` down to the oldest.
    ///
    /// Nodes that `self` does not depend on (created later, or unrelated) get 0 and their
    /// partials are never used.
    #[must_use]
    pub fn gradient(self) -> Gradient {
        let nodes = self.tape.nodes.borrow();
        let out = self.index as usize;
        let mut adjoints = vec![0.0; nodes.len()];
        adjoints[out] = 1.0;
        nodes.sweep(out, |i, edges| {
            let adjoint = adjoints[i];
            for &(parent, partial) in edges {
                adjoints[parent] += partial * adjoint;
            }
        });
        Gradient {
            tape: self.tape.id,
            adjoints,
        }
    }

    /// A first-order estimate of the rounding error in `self`'s value, from its gradient
    /// (Linnainmaa's use of the reverse mode): each operation it depends on rounds its
    /// result by up to one unit in the last place, `ε |v|`, which reaches `self` multiplied
    /// by the node's adjoint, so the error is about `ε Σ |v| |∂self/∂v|` over the nodes that
    /// are not inputs. A large estimate against `self.value()` says that the computation
    /// amplifies rounding: another order of the same sums, or another compiler, may give
    /// a value that much away.
    ///
    /// ```
    /// use autodiff_runtime::Tape;
    ///
    /// let tape = Tape::new();
    /// let x = tape.var(1e8);
    /// let benign = (x * 0.5).sqrt();
    /// let cancelling = (x + 1.0) * (x + 1.0) - x * x; // 2e8 + 1, from terms of 1e16
    /// assert!(benign.rounding_error() < 1e-11);
    /// assert!(cancelling.rounding_error() > 1.0);
    /// ```
    #[must_use]
    pub fn rounding_error(self) -> f64 {
        let gradient = self.gradient();
        let nodes = self.tape.nodes.borrow();
        let rounded = nodes
            .values
            .iter()
            .zip(&nodes.parents)
            .zip(gradient.as_slice())
            .filter(|((_, parents), _)| parents[0] != NONE)
            .map(|((value, _), adjoint)| (value * adjoint).abs())
            .sum::<f64>();
        f64::EPSILON * rounded
    }

    fn check_tape(self, tape: &Tape) {
        assert!(
            std::ptr::eq(self.tape, tape),
            "cannot combine Vars of different Tapes"
        );
    }

    fn unary(self, rule: impl FnOnce(f64) -> (f64, f64), op: Op) -> Var<'t> {
        let (value, d) = rule(self.value());
        self.tape.push(value, &[(self.index, d)], op)
    }

    /// `self <op> other`; a constant `other` gets no edge.
    fn binary(
        self,
        other: Operand<'t>,
        rule: impl FnOnce(f64, f64) -> (f64, f64, f64),
        ops: BinaryOps,
    ) -> Var<'t> {
        match other.resolve(self.tape) {
            (y, Some(other)) => {
                let (value, d0, d1) = rule(self.value(), y);
                self.tape
                    .push(value, &[(self.index, d0), (other, d1)], ops.both)
            }
            (c, None) => {
                let (value, d0, _) = rule(self.value(), c);
                self.record_constant(value, d0, ops.right, c)
            }
        }
    }

    /// `c <op> self` with a constant on the left.
    fn const_left(
        self,
        c: f64,
        rule: impl FnOnce(f64, f64) -> (f64, f64, f64),
        ops: BinaryOps,
    ) -> Var<'t> {
        let (value, _, d) = rule(c, self.value());
        self.record_constant(value, d, ops.left, c)
    }

    /// A node of one edge from `self` made with the constant operand `c`.
    fn record_constant(
        self,
        value: f64,
        partial: f64,
        op: Option<WithConstant>,
        c: f64,
    ) -> Var<'t> {
        match op {
            Some(op) => self
                .tape
                .push_with_constant(value, (self.index, partial), op, c),
            None => self.tape.push(value, &[(self.index, partial)], Op::Linear),
        }
    }

    /// `op(self, a, b)`; constant operands get no edge.
    fn ternary(
        self,
        a: Operand<'t>,
        b: Operand<'t>,
        rule: impl FnOnce(f64, f64, f64) -> (f64, f64, f64, f64),
        cross: bool,
    ) -> Var<'t> {
        let (a, a_index) = a.resolve(self.tape);
        let (b, b_index) = b.resolve(self.tape);
        let (value, dx, da, db) = rule(self.value(), a, b);
        let mut edges = [(self.index, dx), (0, 0.0), (0, 0.0)];
        let mut len = 1;
        for (index, partial) in [(a_index, da), (b_index, db)] {
            if let Some(index) = index {
                edges[len] = (index, partial);
                len += 1;
            }
        }
        // Second partials: only `x · a` of `x.mul_add(a, b)` has one, where `a` varies.
        let op = if cross && a_index.is_some() {
            Op::Binary(Binary::Mul)
        } else {
            Op::Linear
        };
        self.tape.push(value, &edges[..len], op)
    }

    /// `self` raised to the integer power `n`.
    #[must_use]
    pub fn powi(self, n: i32) -> Var<'t> {
        let (value, d) = rules::powi(self.value(), n);
        self.tape
            .push_with_constant(value, (self.index, d), WithConstant::Powi, f64::from(n))
    }

    /// `self` raised to the power `exponent`. A constant exponent computes only the
    /// partial with respect to the base (`ln self` is never evaluated).
    #[must_use]
    pub fn powf(self, exponent: impl Into<Operand<'t>>) -> Var<'t> {
        match exponent.into().resolve(self.tape) {
            (y, Some(index)) => {
                let (value, dx, dy) = rules::powf(self.value(), y);
                self.tape.push(
                    value,
                    &[(self.index, dx), (index, dy)],
                    Op::Binary(Binary::Powf),
                )
            }
            (c, None) => {
                let (value, d) = rules::powf_wrt_base(self.value(), c);
                self.record_constant(value, d, Some(WithConstant::PowfBase), c)
            }
        }
    }

    /// The logarithm of `self` in base `base` (f64 semantics: `NaN` outside the domain).
    #[must_use]
    pub fn log(self, base: impl Into<Operand<'t>>) -> Var<'t> {
        self.binary(
            base.into(),
            rules::log,
            BinaryOps::curved(Binary::Log, WithConstant::Log),
        )
    }

    /// The angle of the point `(x, self)`, like `f64::atan2` (`self` is `y`).
    #[must_use]
    pub fn atan2(self, x: impl Into<Operand<'t>>) -> Var<'t> {
        self.binary(
            x.into(),
            rules::atan2,
            BinaryOps::curved(Binary::Atan2, WithConstant::Atan2),
        )
    }

    /// The larger of `self` and `other`; on a tie `self` receives the adjoint.
    #[must_use]
    pub fn max(self, other: impl Into<Operand<'t>>) -> Var<'t> {
        self.binary(other.into(), rules::max, BinaryOps::LINEAR)
    }

    /// The smaller of `self` and `other`; on a tie `self` receives the adjoint.
    #[must_use]
    pub fn min(self, other: impl Into<Operand<'t>>) -> Var<'t> {
        self.binary(other.into(), rules::min, BinaryOps::LINEAR)
    }

    /// `√(self² + other²)`.
    #[must_use]
    pub fn hypot(self, other: impl Into<Operand<'t>>) -> Var<'t> {
        self.binary(
            other.into(),
            rules::hypot,
            BinaryOps::curved(Binary::Hypot, WithConstant::Hypot),
        )
    }

    /// The least non-negative remainder of `self / m`, like `f64::rem_euclid`: `self - q·m`
    /// with the quotient `q` constant between its jumps.
    #[must_use]
    pub fn rem_euclid(self, m: impl Into<Operand<'t>>) -> Var<'t> {
        self.binary(m.into(), rules::rem_euclid, BinaryOps::LINEAR)
    }

    /// The quotient of the Euclidean division, like `f64::div_euclid` (derivative 0).
    #[must_use]
    pub fn div_euclid(self, m: impl Into<Operand<'t>>) -> Var<'t> {
        self.binary(m.into(), rules::div_euclid, BinaryOps::LINEAR)
    }

    /// `|self|` with the sign of `sign`, like `f64::copysign`: `±self`, and no derivative
    /// with respect to `sign`.
    #[must_use]
    pub fn copysign(self, sign: impl Into<Operand<'t>>) -> Var<'t> {
        self.binary(sign.into(), rules::copysign, BinaryOps::LINEAR)
    }

    /// `self · a + b` with one rounding, like `f64::mul_add`.
    #[must_use]
    pub fn mul_add(self, a: impl Into<Operand<'t>>, b: impl Into<Operand<'t>>) -> Var<'t> {
        self.ternary(a.into(), b.into(), rules::mul_add, true)
    }

    /// `self` restricted to `[lo, hi]`: inside the interval (its ends included) `self`
    /// receives the adjoint, outside the bound that was hit does.
    #[must_use]
    pub fn clamp(self, lo: impl Into<Operand<'t>>, hi: impl Into<Operand<'t>>) -> Var<'t> {
        self.ternary(lo.into(), hi.into(), rules::clamp, false)
    }
}

macro_rules! var_unary_methods {
    ($($name:ident($op:expr): $doc:literal;)*) => {
        impl<'t> Var<'t> {
            $(
                #[doc = $doc]
                #[must_use]
                pub fn $name(self) -> Var<'t> {
                    self.unary(rules::$name, $op)
                }
            )*
        }
    };
}

var_unary_methods! {
    recip(Op::Unary(Unary::Recip)): "`1 / self`.";
    sqrt(Op::Unary(Unary::Sqrt)): "The square root.";
    cbrt(Op::Unary(Unary::Cbrt)): "The cube root.";
    exp(Op::Unary(Unary::Exp)): "`e^self`.";
    exp2(Op::Unary(Unary::Exp2)): "`2^self`.";
    exp_m1(Op::Unary(Unary::ExpM1)): "`e^self - 1`, accurate near 0.";
    ln(Op::Unary(Unary::Ln)): "The natural logarithm (f64 semantics: `NaN` for a negative argument).";
    ln_1p(Op::Unary(Unary::Ln1p)): "`ln(1 + self)`, accurate near 0.";
    log2(Op::Unary(Unary::Log2)): "The base-2 logarithm.";
    log10(Op::Unary(Unary::Log10)): "The base-10 logarithm.";
    sin(Op::Unary(Unary::Sin)): "The sine (radians).";
    cos(Op::Unary(Unary::Cos)): "The cosine (radians).";
    tan(Op::Unary(Unary::Tan)): "The tangent (radians).";
    asin(Op::Unary(Unary::Asin)): "The arcsine.";
    acos(Op::Unary(Unary::Acos)): "The arccosine.";
    atan(Op::Unary(Unary::Atan)): "The arctangent.";
    sinh(Op::Unary(Unary::Sinh)): "The hyperbolic sine.";
    cosh(Op::Unary(Unary::Cosh)): "The hyperbolic cosine.";
    tanh(Op::Unary(Unary::Tanh)): "The hyperbolic tangent.";
    asinh(Op::Unary(Unary::Asinh)): "The inverse hyperbolic sine.";
    acosh(Op::Unary(Unary::Acosh)): "The inverse hyperbolic cosine.";
    atanh(Op::Unary(Unary::Atanh)): "The inverse hyperbolic tangent.";
    abs(Op::Linear): "The absolute value (subgradient 0 at 0).";
    relu(Op::Linear): "`max(self, 0)` (subgradient 0 at 0).";
    sigmoid(Op::Unary(Unary::Sigmoid)): "The logistic function `1 / (1 + e^-self)`.";
    floor(Op::Linear): "The largest integer `<= self` (derivative 0).";
    ceil(Op::Linear): "The smallest integer `>= self` (derivative 0).";
    round(Op::Linear): "The nearest integer, half away from zero (derivative 0).";
    trunc(Op::Linear): "The integer part (derivative 0).";
    signum(Op::Linear): "The sign, like `f64::signum` (derivative 0).";
    fract(Op::Linear): "The fractional part, `self - self.trunc()` (derivative 1).";
    to_degrees(Op::Linear): "Radians to degrees.";
    to_radians(Op::Linear): "Degrees to radians.";
}

impl<'t> Neg for Var<'t> {
    type Output = Var<'t>;
    fn neg(self) -> Var<'t> {
        self.unary(rules::neg, Op::Linear)
    }
}

macro_rules! var_binary_operator {
    ($Trait:ident, $method:ident, $Assign:ident, $assign:ident, $rule:path, $ops:expr) => {
        impl<'t> $Trait for Var<'t> {
            type Output = Var<'t>;
            fn $method(self, rhs: Var<'t>) -> Var<'t> {
                self.binary(Operand::Var(rhs), $rule, $ops)
            }
        }
        impl<'t> $Trait<f64> for Var<'t> {
            type Output = Var<'t>;
            fn $method(self, rhs: f64) -> Var<'t> {
                self.binary(Operand::Const(rhs), $rule, $ops)
            }
        }
        impl<'t> $Trait<Var<'t>> for f64 {
            type Output = Var<'t>;
            fn $method(self, rhs: Var<'t>) -> Var<'t> {
                rhs.const_left(self, $rule, $ops)
            }
        }
        impl<'t> $Assign for Var<'t> {
            fn $assign(&mut self, rhs: Var<'t>) {
                *self = self.binary(Operand::Var(rhs), $rule, $ops);
            }
        }
        impl $Assign<f64> for Var<'_> {
            fn $assign(&mut self, rhs: f64) {
                *self = self.binary(Operand::Const(rhs), $rule, $ops);
            }
        }
    };
}

var_binary_operator!(
    Add,
    add,
    AddAssign,
    add_assign,
    rules::add,
    BinaryOps::LINEAR
);
var_binary_operator!(
    Sub,
    sub,
    SubAssign,
    sub_assign,
    rules::sub,
    BinaryOps::LINEAR
);
var_binary_operator!(Mul, mul, MulAssign, mul_assign, rules::mul, BinaryOps::MUL);
var_binary_operator!(Div, div, DivAssign, div_assign, rules::div, BinaryOps::DIV);
// `x % m` is `x - q·m` with `q` constant between its jumps: no second derivative.
var_binary_operator!(
    Rem,
    rem,
    RemAssign,
    rem_assign,
    rules::rem,
    BinaryOps::LINEAR
);

/// The adjoint of every node of a [`Tape`] from one reverse sweep ([`Var::gradient`]):
/// the partial derivative of the output with respect to each node.
///
/// Read it with [`Gradient::wrt`] or by indexing with a [`Var`]; a variable created after
/// the sweep gets 0.
///
/// # Panics
/// Reading it with a `Var` of another tape (or of the same tape after [`Tape::clear`])
/// panics.
#[derive(Clone, Debug)]
pub struct Gradient {
    tape: u64,
    adjoints: Vec<f64>,
}

impl Gradient {
    /// The partial derivative of the output with respect to `v`.
    #[must_use]
    pub fn wrt(&self, v: Var<'_>) -> f64 {
        self[v]
    }

    /// The adjoint of every node, indexed by [`Var::index`]: one entry per node on the
    /// tape when the gradient was computed.
    #[must_use]
    pub fn as_slice(&self) -> &[f64] {
        &self.adjoints
    }
}

impl Index<Var<'_>> for Gradient {
    type Output = f64;
    fn index(&self, v: Var<'_>) -> &f64 {
        assert_eq!(
            self.tape, v.tape.id,
            "this Gradient was computed on another Tape (or before Tape::clear)"
        );
        self.adjoints.get(v.index()).unwrap_or(&0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_has_no_constant_nodes() {
        let tape = Tape::new();
        let x = tape.var(3.0);
        let y = 2.0 * x + 1.0; // two nodes
        assert_eq!(tape.len(), 3);
        let nodes = tape.nodes.borrow();
        assert_eq!(nodes.parents[1], [0, NONE]);
        assert_eq!(nodes.partials[1], [2.0, 0.0]);
        assert_eq!(nodes.parents[2], [1, NONE]);
        assert!(nodes.third.is_empty());
        drop(nodes);
        assert_eq!(y.gradient().wrt(x), 2.0);
    }

    #[test]
    fn third_edge_is_swept() {
        let tape = Tape::new();
        let x = tape.var(2.0);
        let a = tape.var(3.0);
        let b = tape.var(5.0);
        let m = x.mul_add(a, b);
        let z = m.mul_add(x, b); // (x·a + b)·x + b
        assert_eq!(tape.nodes.borrow().third.len(), 2);
        assert_eq!(z.value(), 27.0);
        let g = z.gradient();
        // ∂z/∂x = 2·a·x + b, ∂z/∂a = x², ∂z/∂b = x + 1
        assert_eq!((g[x], g[a], g[b], g[m]), (17.0, 4.0, 3.0, 2.0));
        // A sweep from a node before the third edges ignores them.
        let g = m.gradient();
        assert_eq!((g[x], g[a], g[b], g[z]), (3.0, 2.0, 1.0, 0.0));
    }

    #[test]
    fn unrelated_nodes_do_not_propagate() {
        let tape = Tape::new();
        let x = tape.var(0.0);
        let _unrelated = x.sqrt(); // partial +inf
        let y = x * 3.0;
        assert_eq!(y.gradient().wrt(x), 3.0);
    }

    #[test]
    fn clear_keeps_capacity() {
        let mut tape = Tape::with_capacity(16);
        {
            let x = tape.var(1.0);
            let _ = x.exp();
        }
        assert_eq!(tape.len(), 2);
        let capacity = tape.nodes.borrow().values.capacity();
        tape.clear();
        assert!(tape.is_empty());
        assert_eq!(tape.nodes.borrow().values.capacity(), capacity);
    }
}
