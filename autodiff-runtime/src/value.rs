//! [`Value`]: a micrograd-style dynamic reverse-mode engine.
//!
//! Every operation on a [`Value`] allocates a node that remembers its parents and the local
//! partial derivative with respect to each of them (computed by [`crate::rules`] in the
//! forward pass). [`Value::backward`] then runs one reverse-topological sweep over the nodes
//! reachable from the output.
//!
//! # Node layout and evaluation order
//! A node holds its value, its accumulated gradient, a creation number (per thread,
//! increasing), an operation label for [`Value::to_dot`], and up to three `(parent, partial)`
//! edges stored inline (the rare three-parent node, [`Value::mul_add`], boxes its edges).
//! Constant `f64` operands are not nodes: they have no adjoint, so they are only recorded in
//! the label.
//!
//! A node is always created after its parents, so reverse creation order is a reverse
//! topological order. [`Value::backward`] collects the reachable nodes with an explicit
//! worklist (no recursion), sorts them newest first and sweeps them once. This is exactly
//! the order in which [`Tape`](crate::Tape) sweeps its arena, so the two engines add the
//! same contributions in the same order and agree bit for bit.
//!
//! # Deep graphs
//! Nothing recurses: collecting, sweeping, [`Value::zero_grad`], [`Value::to_dot`] and
//! dropping a graph use explicit worklists, so a chain of millions of nodes works on a small
//! thread stack.

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::iter::Sum;
use std::ops::{
    Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign,
};
use std::rc::Rc;

use crate::{rules, DomainError};

/// A scalar in a dynamically built computation graph (micrograd semantics).
///
/// Arithmetic (`+ - * /`, unary `-`) works for every mix of `Value`, `&Value` and `f64`;
/// the functions are methods named like their `f64` counterparts. [`Value::backward`]
/// computes the gradient of a value with respect to every node it depends on, readable with
/// [`Value::grad`].
///
/// Cloning a `Value` clones a handle to the same node: gradients accumulated through one
/// handle are visible through every clone.
///
/// ```
/// use autodiff_runtime::Value;
///
/// let a = Value::new(2.0);
/// let b = Value::new(-3.0);
/// let c = Value::new(10.0);
/// let y = (&a * &b + &c).powi(2); // (a·b + c)²
/// y.backward();
/// assert_eq!(y.data(), 16.0);
/// assert_eq!((a.grad(), b.grad(), c.grad()), (-24.0, 16.0, 8.0));
/// ```
///
/// # Threads
///
/// `Value` is neither `Send` nor `Sync`. Its nodes are shared through `Rc` and keep their
/// gradients in `Cell`s, so building a graph and sweeping it take no lock and no atomic
/// operation. A graph lives on the thread that built it: to differentiate on several
/// threads, build one graph per thread (or use a [`Tape`](crate::Tape) per thread, or a
/// `#[grad]` function, which is a plain function of numbers).
///
/// ```compile_fail
/// use autodiff_runtime::Value;
///
/// let x = Value::new(1.0);
/// std::thread::spawn(move || x.tanh().backward()); // `Rc<…>` cannot be sent
/// ```
///
/// # Memory
///
/// A node is freed with the last handle to it (a handle is a `Value` or an edge from a
/// node made from it); a graph has no cycles, since a node's parents exist before it, so
/// nothing is leaked. Dropping a long chain takes constant stack depth. On graphs of
/// 10,000,000 nodes a node takes about 280 bytes at the peak of a sweep, handles
/// included (`autodiff-bench`'s `engine_scale` example).
#[derive(Clone)]
pub struct Value(Rc<Node>);

struct Node {
    /// Creation number: larger than the creation number of every ancestor.
    id: u64,
    data: Cell<f64>,
    grad: Cell<f64>,
    /// Adjoint of the sweep in progress; zero outside [`Value::backward`].
    pending: Cell<f64>,
    /// Mark of the traversal in progress; false outside a traversal.
    visited: Cell<bool>,
    op: Op,
    parents: Parents,
}

struct Edge {
    node: Rc<Node>,
    partial: f64,
}

enum Parents {
    Leaf,
    One([Edge; 1]),
    Two([Edge; 2]),
    Three(Box<[Edge; 3]>),
}

impl Parents {
    fn as_slice(&self) -> &[Edge] {
        match self {
            Parents::Leaf => &[],
            Parents::One(edges) => edges,
            Parents::Two(edges) => edges,
            Parents::Three(edges) => &edges[..],
        }
    }

    /// Calls `f` with each parent handle, by value.
    fn for_each_owned(self, mut f: impl FnMut(Rc<Node>)) {
        match self {
            Parents::Leaf => {}
            Parents::One([a]) => f(a.node),
            Parents::Two([a, b]) => {
                f(a.node);
                f(b.node);
            }
            Parents::Three(edges) => {
                let [a, b, c] = *edges;
                f(a.node);
                f(b.node);
                f(c.node);
            }
        }
    }
}

/// What produced a node, for [`Value::to_dot`]. Constant operands are kept for the label.
#[derive(Clone, Copy)]
enum Op {
    Leaf,
    /// An operation on values only: `"+"`, `"tanh"`, `"max"`, …
    Plain(&'static str),
    /// `value <op> constant`, or `op(value, constant)`.
    ConstRight(&'static str, f64),
    /// `constant <op> value`.
    ConstLeft(&'static str, f64),
    /// `value.clamp(lo, hi)` with constant bounds.
    Clamp(f64, f64),
}

impl Op {
    fn label(self) -> Option<String> {
        match self {
            Op::Leaf => None,
            Op::Plain(name) => Some(name.to_owned()),
            Op::ConstRight(name, c) => Some(format!("{name} {c}")),
            Op::ConstLeft(name, c) => Some(format!("{c} {name}")),
            Op::Clamp(lo, hi) => Some(format!("clamp [{lo}, {hi}]")),
        }
    }
}

thread_local! {
    static NEXT_ID: Cell<u64> = const { Cell::new(0) };
}

fn next_id() -> u64 {
    NEXT_ID.with(|next| {
        let id = next.get();
        next.set(id + 1);
        id
    })
}

impl Drop for Node {
    /// Drops the ancestors this node owns alone without recursion: a unique parent is
    /// moved out of its `Rc` and its own parents are taken before it is dropped, so every
    /// node is dropped with no parents left and the stack depth stays constant.
    fn drop(&mut self) {
        let mut unique = Vec::new();
        std::mem::replace(&mut self.parents, Parents::Leaf).for_each_owned(|parent| {
            if Rc::strong_count(&parent) == 1 {
                unique.push(parent);
            }
            // Otherwise `parent` is dropped here: only a count decrement.
        });
        while let Some(node) = unique.pop() {
            if let Some(mut node) = Rc::into_inner(node) {
                std::mem::replace(&mut node.parents, Parents::Leaf).for_each_owned(|parent| {
                    if Rc::strong_count(&parent) == 1 {
                        unique.push(parent);
                    }
                });
                // `node` is dropped here with no parents: its `drop` does nothing.
            }
        }
    }
}

/// The nodes reachable from a root, each marked `visited`. Dropping it clears the marks
/// (and any pending adjoint), so a traversal leaves no state behind.
struct Visit<'a> {
    nodes: Vec<&'a Node>,
}

impl<'a> Visit<'a> {
    /// Collects every node reachable from `root` (the root included), each once, with an
    /// explicit worklist.
    fn reachable(root: &'a Node) -> Visit<'a> {
        let mut visit = Visit { nodes: Vec::new() };
        root.visited.set(true);
        visit.nodes.push(root);
        let mut next = 0;
        while let Some(&node) = visit.nodes.get(next) {
            next += 1;
            for edge in node.parents.as_slice() {
                let parent: &'a Node = &edge.node;
                if !parent.visited.replace(true) {
                    visit.nodes.push(parent);
                }
            }
        }
        visit
    }
}

impl Drop for Visit<'_> {
    fn drop(&mut self) {
        for node in &self.nodes {
            node.visited.set(false);
            node.pending.set(0.0);
        }
    }
}

impl Value {
    /// A new leaf (an input or a parameter) holding `data`, with gradient 0.
    #[must_use]
    pub fn new(data: f64) -> Value {
        Value::node(data, Op::Leaf, Parents::Leaf)
    }

    fn node(data: f64, op: Op, parents: Parents) -> Value {
        Value(Rc::new(Node {
            id: next_id(),
            data: Cell::new(data),
            grad: Cell::new(0.0),
            pending: Cell::new(0.0),
            visited: Cell::new(false),
            op,
            parents,
        }))
    }

    fn edge(&self, partial: f64) -> Edge {
        Edge {
            node: Rc::clone(&self.0),
            partial,
        }
    }

    fn unary(&self, op: Op, rule: impl FnOnce(f64) -> (f64, f64)) -> Value {
        let (value, d) = rule(self.data());
        Value::node(value, op, Parents::One([self.edge(d)]))
    }

    fn binary(
        &self,
        name: &'static str,
        other: &Value,
        rule: impl FnOnce(f64, f64) -> (f64, f64, f64),
    ) -> Value {
        let (value, d0, d1) = rule(self.data(), other.data());
        Value::node(
            value,
            Op::Plain(name),
            Parents::Two([self.edge(d0), other.edge(d1)]),
        )
    }

    /// `self <op> c` with a constant `c` on the right.
    fn const_right(
        &self,
        name: &'static str,
        c: f64,
        rule: impl FnOnce(f64, f64) -> (f64, f64, f64),
    ) -> Value {
        let (value, d, _) = rule(self.data(), c);
        Value::node(value, Op::ConstRight(name, c), Parents::One([self.edge(d)]))
    }

    /// `c <op> self` with a constant `c` on the left.
    fn const_left(
        &self,
        name: &'static str,
        c: f64,
        rule: impl FnOnce(f64, f64) -> (f64, f64, f64),
    ) -> Value {
        let (value, _, d) = rule(c, self.data());
        Value::node(value, Op::ConstLeft(name, c), Parents::One([self.edge(d)]))
    }

    /// The value computed in the forward pass.
    #[must_use]
    pub fn data(&self) -> f64 {
        self.0.data.get()
    }

    /// Replaces the data of this node, for example to update a parameter (a leaf) in an
    /// optimisation step: `p.set_data(p.data() - lr * p.grad())`.
    ///
    /// Nodes computed from it earlier keep their values and partials; build the graph
    /// again to use the new value.
    pub fn set_data(&self, data: f64) {
        self.0.data.set(data);
    }

    /// The gradient accumulated in this node by [`Value::backward`] calls (0 for a new
    /// node and after [`Value::zero_grad`]).
    #[must_use]
    pub fn grad(&self) -> f64 {
        self.0.grad.get()
    }

    /// Backpropagation: adds `∂self/∂n` to the gradient of every node `n` reachable from
    /// `self`, `self` included (the output is seeded with 1).
    ///
    /// The reachable nodes are collected with an explicit worklist, sorted newest first
    /// (a reverse topological order) and each is visited once, adding its adjoint times
    /// each local partial into its parents' adjoints.
    ///
    /// # Repeated calls
    /// Gradients accumulate, as in PyTorch: each call adds one more `∂self/∂n` to every
    /// node's gradient, the output included. Calling `backward` twice without
    /// [`Value::zero_grad`] leaves every node with twice its gradient (the output holds 2),
    /// and calling it on two outputs of a shared graph leaves each leaf with the sum of
    /// both gradients. The sweep propagates only the adjoints of the current call, never
    /// gradients left over from earlier calls. (micrograd instead re-seeds the output with 1
    /// and pushes the stale intermediate gradients through the graph again, which gives
    /// neither the gradient nor a multiple of it.)
    ///
    /// ```
    /// use autodiff_runtime::Value;
    ///
    /// let x = Value::new(3.0);
    /// let y = &x * &x; // dy/dx = 6
    /// y.backward();
    /// assert_eq!((x.grad(), y.grad()), (6.0, 1.0));
    /// y.backward();
    /// assert_eq!((x.grad(), y.grad()), (12.0, 2.0));
    /// y.zero_grad();
    /// y.backward();
    /// assert_eq!((x.grad(), y.grad()), (6.0, 1.0));
    /// ```
    pub fn backward(&self) {
        let mut visit = Visit::reachable(&self.0);
        visit.nodes.sort_unstable_by_key(|node| Reverse(node.id));
        self.0.pending.set(1.0);
        for node in &visit.nodes {
            let adjoint = node.pending.replace(0.0);
            node.grad.set(node.grad.get() + adjoint);
            for edge in node.parents.as_slice() {
                let pending = &edge.node.pending;
                pending.set(pending.get() + edge.partial * adjoint);
            }
        }
    }

    /// Sets the gradient of every node reachable from `self` (`self` included) to 0.
    pub fn zero_grad(&self) {
        let visit = Visit::reachable(&self.0);
        for node in &visit.nodes {
            node.grad.set(0.0);
        }
    }

    /// The graph that computes `self`, in Graphviz DOT, drawn like micrograd's `draw_dot`:
    /// one record per node with its data and gradient (4 decimals), and for each computed
    /// node an ellipse with the operation (`+`, `*`, `tanh`, `* 2` for a constant operand,
    /// `2 -` for a constant on the left, `powi 3`, …) pointing at it. Nodes are named
    /// `v0`, `v1`, … in creation order and their operations `v0_op`, `v1_op`, …
    ///
    /// ```
    /// use autodiff_runtime::Value;
    ///
    /// let a = Value::new(2.0);
    /// let y = (&a * 3.0).tanh();
    /// let dot = y.to_dot();
    /// assert!(dot.starts_with("digraph"));
    /// assert!(dot.contains("v0 -> v1_op"));
    /// assert!(dot.contains("label=\"tanh\""));
    /// ```
    #[must_use]
    pub fn to_dot(&self) -> String {
        let mut visit = Visit::reachable(&self.0);
        visit.nodes.sort_unstable_by_key(|node| node.id);
        let names: HashMap<u64, usize> = visit
            .nodes
            .iter()
            .enumerate()
            .map(|(i, node)| (node.id, i))
            .collect();
        let mut dot = String::from("digraph autodiff {\n    rankdir=LR;\n");
        for (i, node) in visit.nodes.iter().enumerate() {
            // `write!` into a String cannot fail.
            let _ = writeln!(
                dot,
                "    v{i} [shape=record, label=\"{{ data {:.4} | grad {:.4} }}\"];",
                node.data.get(),
                node.grad.get()
            );
            if let Some(label) = node.op.label() {
                let label = label.replace('\\', "\\\\").replace('"', "\\\"");
                let _ = writeln!(dot, "    v{i}_op [label=\"{label}\"];");
                let _ = writeln!(dot, "    v{i}_op -> v{i};");
                for edge in node.parents.as_slice() {
                    let _ = writeln!(dot, "    v{} -> v{i}_op;", names[&edge.node.id]);
                }
            }
        }
        dot.push_str("}\n");
        dot
    }

    /// `self` raised to the integer power `n`.
    #[must_use]
    pub fn powi(&self, n: i32) -> Value {
        self.unary(Op::ConstRight("powi", f64::from(n)), |x| rules::powi(x, n))
    }

    /// `self` raised to the constant power `exponent`. Only the partial with respect to
    /// the base is computed (`ln self` is never evaluated).
    #[must_use]
    pub fn powf(&self, exponent: f64) -> Value {
        self.unary(Op::ConstRight("powf", exponent), |x| {
            rules::powf_wrt_base(x, exponent)
        })
    }

    /// `self` raised to the power `exponent`, a value that also receives a gradient
    /// (`selfᵉ·ln self`).
    #[must_use]
    pub fn pow(&self, exponent: &Value) -> Value {
        self.binary("pow", exponent, rules::powf)
    }

    /// The natural logarithm.
    ///
    /// # Errors
    /// [`DomainError`] with operation `"log"` when `self` is `<= 0` (a `NaN` is not an
    /// error: it gives `NaN`, like every other operation).
    ///
    /// ```
    /// use autodiff_runtime::Value;
    ///
    /// assert!(Value::new(1.0).log().is_ok());
    /// let error = Value::new(-2.0).log().unwrap_err();
    /// assert_eq!((error.operation, error.value), ("log", -2.0));
    /// ```
    pub fn log(&self) -> Result<Value, DomainError> {
        let x = self.data();
        if x <= 0.0 {
            return Err(DomainError {
                operation: "log",
                value: x,
            });
        }
        Ok(self.unary(Op::Plain("log"), rules::ln))
    }

    /// The larger of `self` and `other`; on a tie `self` receives the gradient.
    #[must_use]
    pub fn max(&self, other: &Value) -> Value {
        self.binary("max", other, rules::max)
    }

    /// The smaller of `self` and `other`; on a tie `self` receives the gradient.
    #[must_use]
    pub fn min(&self, other: &Value) -> Value {
        self.binary("min", other, rules::min)
    }

    /// `√(self² + other²)`.
    #[must_use]
    pub fn hypot(&self, other: &Value) -> Value {
        self.binary("hypot", other, rules::hypot)
    }

    /// The angle of the point `(x, self)`, like `f64::atan2` (`self` is `y`).
    #[must_use]
    pub fn atan2(&self, x: &Value) -> Value {
        self.binary("atan2", x, rules::atan2)
    }

    /// The least non-negative remainder of `self / m`, like `f64::rem_euclid`.
    #[must_use]
    pub fn rem_euclid(&self, m: &Value) -> Value {
        self.binary("rem_euclid", m, rules::rem_euclid)
    }

    /// The quotient of the Euclidean division, like `f64::div_euclid` (gradient 0).
    #[must_use]
    pub fn div_euclid(&self, m: &Value) -> Value {
        self.binary("div_euclid", m, rules::div_euclid)
    }

    /// `|self|` with the sign of `sign`, like `f64::copysign` (no gradient to `sign`).
    #[must_use]
    pub fn copysign(&self, sign: &Value) -> Value {
        self.binary("copysign", sign, rules::copysign)
    }

    /// `self · a + b` with one rounding, like `f64::mul_add`.
    #[must_use]
    pub fn mul_add(&self, a: &Value, b: &Value) -> Value {
        let (value, dx, da, db) = rules::mul_add(self.data(), a.data(), b.data());
        Value::node(
            value,
            Op::Plain("mul_add"),
            Parents::Three(Box::new([self.edge(dx), a.edge(da), b.edge(db)])),
        )
    }

    /// `self` restricted to `[lo, hi]` (constant bounds): gradient 1 inside the interval,
    /// its ends included, 0 outside.
    #[must_use]
    pub fn clamp(&self, lo: f64, hi: f64) -> Value {
        self.unary(Op::Clamp(lo, hi), |x| {
            let (value, d, _, _) = rules::clamp(x, lo, hi);
            (value, d)
        })
    }
}

macro_rules! value_unary_methods {
    ($($name:ident: $doc:literal;)*) => {
        impl Value {
            $(
                #[doc = $doc]
                #[must_use]
                pub fn $name(&self) -> Value {
                    self.unary(Op::Plain(stringify!($name)), rules::$name)
                }
            )*
        }
    };
}

value_unary_methods! {
    recip: "`1 / self`.";
    sqrt: "The square root.";
    cbrt: "The cube root.";
    exp: "`e^self`.";
    exp2: "`2^self`.";
    exp_m1: "`e^self - 1`, accurate near 0.";
    sin: "The sine (radians).";
    cos: "The cosine (radians).";
    tan: "The tangent (radians).";
    asin: "The arcsine.";
    acos: "The arccosine.";
    atan: "The arctangent.";
    sinh: "The hyperbolic sine.";
    cosh: "The hyperbolic cosine.";
    tanh: "The hyperbolic tangent.";
    asinh: "The inverse hyperbolic sine.";
    acosh: "The inverse hyperbolic cosine.";
    atanh: "The inverse hyperbolic tangent.";
    abs: "The absolute value (subgradient 0 at 0).";
    relu: "`max(self, 0)` (subgradient 0 at 0).";
    sigmoid: "The logistic function `1 / (1 + e^-self)`.";
    floor: "The largest integer `<= self` (gradient 0).";
    ceil: "The smallest integer `>= self` (gradient 0).";
    round: "The nearest integer, half away from zero (gradient 0).";
    trunc: "The integer part (gradient 0).";
    signum: "The sign, like `f64::signum` (gradient 0).";
    fract: "The fractional part, `self - self.trunc()` (gradient 1).";
    to_degrees: "Radians to degrees.";
    to_radians: "Degrees to radians.";
}

impl From<f64> for Value {
    fn from(data: f64) -> Value {
        Value::new(data)
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Value")
            .field("data", &self.data())
            .field("grad", &self.grad())
            .finish()
    }
}

impl fmt::Display for Value {
    /// `Value(data=…, grad=…)`, like micrograd's `repr`; a precision applies to both.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match f.precision() {
            Some(p) => write!(
                f,
                "Value(data={:.p$}, grad={:.p$})",
                self.data(),
                self.grad()
            ),
            None => write!(f, "Value(data={}, grad={})", self.data(), self.grad()),
        }
    }
}

impl Neg for &Value {
    type Output = Value;
    fn neg(self) -> Value {
        self.unary(Op::Plain("neg"), rules::neg)
    }
}

impl Neg for Value {
    type Output = Value;
    fn neg(self) -> Value {
        -&self
    }
}

macro_rules! value_binary_operator {
    ($Trait:ident, $method:ident, $Assign:ident, $assign:ident, $rule:path, $name:literal) => {
        impl $Trait<&Value> for &Value {
            type Output = Value;
            fn $method(self, rhs: &Value) -> Value {
                self.binary($name, rhs, $rule)
            }
        }
        impl $Trait<Value> for &Value {
            type Output = Value;
            fn $method(self, rhs: Value) -> Value {
                self.binary($name, &rhs, $rule)
            }
        }
        impl $Trait<&Value> for Value {
            type Output = Value;
            fn $method(self, rhs: &Value) -> Value {
                self.binary($name, rhs, $rule)
            }
        }
        impl $Trait<Value> for Value {
            type Output = Value;
            fn $method(self, rhs: Value) -> Value {
                self.binary($name, &rhs, $rule)
            }
        }
        impl $Trait<f64> for &Value {
            type Output = Value;
            fn $method(self, rhs: f64) -> Value {
                self.const_right($name, rhs, $rule)
            }
        }
        impl $Trait<f64> for Value {
            type Output = Value;
            fn $method(self, rhs: f64) -> Value {
                self.const_right($name, rhs, $rule)
            }
        }
        impl $Trait<&Value> for f64 {
            type Output = Value;
            fn $method(self, rhs: &Value) -> Value {
                rhs.const_left($name, self, $rule)
            }
        }
        impl $Trait<Value> for f64 {
            type Output = Value;
            fn $method(self, rhs: Value) -> Value {
                rhs.const_left($name, self, $rule)
            }
        }
        impl $Assign<&Value> for Value {
            fn $assign(&mut self, rhs: &Value) {
                *self = self.binary($name, rhs, $rule);
            }
        }
        impl $Assign<Value> for Value {
            fn $assign(&mut self, rhs: Value) {
                *self = self.binary($name, &rhs, $rule);
            }
        }
        impl $Assign<f64> for Value {
            fn $assign(&mut self, rhs: f64) {
                *self = self.const_right($name, rhs, $rule);
            }
        }
    };
}

value_binary_operator!(Add, add, AddAssign, add_assign, rules::add, "+");
value_binary_operator!(Sub, sub, SubAssign, sub_assign, rules::sub, "-");
value_binary_operator!(Mul, mul, MulAssign, mul_assign, rules::mul, "*");
value_binary_operator!(Div, div, DivAssign, div_assign, rules::div, "/");
value_binary_operator!(Rem, rem, RemAssign, rem_assign, rules::rem, "%");

impl Sum for Value {
    /// Adds the values left to right; an empty sum is a new leaf holding 0.
    fn sum<I: Iterator<Item = Value>>(mut iter: I) -> Value {
        match iter.next() {
            Some(first) => iter.fold(first, |acc, v| &acc + &v),
            None => Value::new(0.0),
        }
    }
}

impl<'a> Sum<&'a Value> for Value {
    /// Adds the values left to right; an empty sum is a new leaf holding 0.
    fn sum<I: Iterator<Item = &'a Value>>(mut iter: I) -> Value {
        match iter.next() {
            Some(first) => iter.fold(first.clone(), |acc, v| &acc + v),
            None => Value::new(0.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaf_and_operators() {
        let a = Value::new(2.0);
        let b = Value::new(3.0);
        let y = (&a + &b) * &a; // a² + ab
        y.backward();
        assert_eq!(y.data(), 10.0);
        assert_eq!((a.grad(), b.grad()), (7.0, 2.0));
    }

    #[test]
    fn constants_are_not_nodes() {
        let x = Value::new(3.0);
        let y = 2.0 * &x - 1.0;
        let visit = Visit::reachable(&y.0);
        assert_eq!(visit.nodes.len(), 3);
        drop(visit);
        y.backward();
        assert_eq!((y.data(), x.grad()), (5.0, 2.0));
    }

    #[test]
    fn traversal_leaves_no_marks() {
        let x = Value::new(0.5);
        let y = (&x * &x).tanh() + &x;
        y.backward();
        y.zero_grad();
        let _ = y.to_dot();
        // A mark left behind would hide a node from this traversal.
        let visit = Visit::reachable(&y.0);
        assert_eq!(visit.nodes.len(), 4);
        assert!(visit.nodes.iter().all(|n| n.pending.get() == 0.0));
        let nodes = visit.nodes.clone();
        drop(visit);
        assert!(nodes.iter().all(|n| !n.visited.get()));
    }

    #[test]
    fn drop_deep_chain_without_recursion() {
        // Run on a deliberately small stack: a recursive drop would overflow it.
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(|| {
                let x = Value::new(1.0);
                let mut y = x.clone();
                for _ in 0..200_000 {
                    y = &y + 1.0;
                }
                y.backward();
                assert_eq!(x.grad(), 1.0);
                assert_eq!(y.data(), 200_001.0);
                drop(y);
                // The leaf is still alive through `x`, and only through it now.
                assert_eq!(Rc::strong_count(&x.0), 1);
            })
            .unwrap()
            .join()
            .unwrap();
    }

    /// No node outlives the last handle to it: after a graph with shared nodes has been
    /// swept, zeroed and printed, dropping the handles frees every node (none is kept
    /// alive by a reference cycle or by state a traversal left behind).
    #[test]
    fn every_node_is_freed() {
        let inputs: Vec<Value> = (0..8)
            .map(|i| Value::new(f64::from(i) * 0.3 - 1.0))
            .collect();
        let mut nodes = inputs.clone();
        let mut state = 7_u32;
        for _ in 0..2_000 {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let pick = |shift: u32| &nodes[(state >> shift) as usize % nodes.len()];
            let (a, b, c) = (pick(3), pick(11), pick(19));
            let node = match state % 5 {
                0 => a + b,
                1 => a * b * 0.5,
                2 => a.tanh(),
                3 => a.mul_add(b, c) * 0.25,
                _ => a.max(b),
            };
            nodes.push(node);
        }
        let output = nodes
            .iter()
            .skip(1_000)
            .fold(Value::new(0.0), |sum, n| sum + n);
        output.backward();
        let _ = output.to_dot();
        output.zero_grad();
        output.backward();
        // Every node of the graph, intermediate ones included: the output and the target
        // of every edge.
        let mut weak = vec![Rc::downgrade(&output.0)];
        for node in &Visit::reachable(&output.0).nodes {
            weak.extend(
                node.parents
                    .as_slice()
                    .iter()
                    .map(|e| Rc::downgrade(&e.node)),
            );
        }
        assert!(weak.len() > 4_000, "{} edges", weak.len());
        drop((nodes, output));
        // The inputs are still held by `inputs`; everything else is gone.
        let alive: Vec<_> = weak.iter().filter_map(std::rc::Weak::upgrade).collect();
        assert!(alive
            .iter()
            .all(|n| inputs.iter().any(|x| Rc::ptr_eq(n, &x.0))));
        drop(alive);
        drop(inputs);
        assert!(weak.iter().all(|w| w.upgrade().is_none()));
    }

    #[test]
    fn drop_keeps_shared_ancestors() {
        let x = Value::new(2.0);
        let s = &x * &x;
        let y = &s + &s;
        let z = s.exp();
        drop(y);
        assert_eq!(Rc::strong_count(&s.0), 2); // `s` and `z`'s edge
        z.backward();
        assert_eq!(x.grad(), 4.0f64.exp() * 4.0);
    }

    #[test]
    fn ids_increase() {
        let a = Value::new(1.0);
        let b = a.sin();
        assert!(b.0.id > a.0.id);
    }

    #[test]
    fn op_labels() {
        assert_eq!(Op::Leaf.label(), None);
        assert_eq!(Op::Plain("+").label().unwrap(), "+");
        assert_eq!(Op::ConstRight("*", 2.0).label().unwrap(), "* 2");
        assert_eq!(Op::ConstLeft("-", 1.5).label().unwrap(), "1.5 -");
        assert_eq!(Op::Clamp(-1.0, 1.0).label().unwrap(), "clamp [-1, 1]");
    }

    #[test]
    fn display_and_debug() {
        let v = Value::new(1.5);
        assert_eq!(format!("{v}"), "Value(data=1.5, grad=0)");
        assert_eq!(format!("{v:.2}"), "Value(data=1.50, grad=0.00)");
        assert_eq!(format!("{v:?}"), "Value { data: 1.5, grad: 0.0 }");
    }
}
