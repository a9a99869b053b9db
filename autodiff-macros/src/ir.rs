//! The intermediate representation between the user's `syn` tree and the generated code.
//!
//! A function body lowers to a list of [`Node`]s in evaluation order: every node is a
//! primal value computed once (static single assignment), its operands are earlier nodes,
//! so the list is a topological order and its reverse is the order of the reverse sweep.
//! Every node keeps the span of the user tokens it came from.
//!
//! ```text
//! fn f(x: f64, y: f64) -> f64 { let z = x * y; z.tanh() + 2.0 }
//!
//! %0 = param x            %3 = const 2.0
//! %1 = param y            %4 = op tanh(%2)
//! %2 = op mul(%0, %1)     %5 = op add(%4, %3)      output %5
//! ```

use crate::ops::Op;
use proc_macro2::{Span, TokenStream};
use syn::{Ident, Path, Type};

/// Index of a node in [`Body::nodes`].
pub type NodeId = usize;

/// The signature and body of a function being differentiated.
pub struct Function {
    /// The item as the user wrote it; emitted unchanged.
    pub original: syn::ItemFn,
    /// Parameters in declaration order.
    pub params: Vec<Param>,
    /// The parameters whose partials are returned (indices into `params`), in that order.
    pub wrt: Vec<usize>,
    /// `const` and `use` items declared inside the body, copied into the generated function.
    pub items: Vec<syn::Item>,
    /// Values that must be constants (an integer exponent, a conversion to an integer), with
    /// the error to report, under the user's tokens, if one depends on a differentiated
    /// parameter after all.
    pub constant_uses: Vec<(NodeId, syn::Error)>,
    /// The nodes of the body, in evaluation order.
    pub body: Body,
}

/// A parameter of the function.
pub struct Param {
    /// Its name, with the user's span.
    pub ident: Ident,
    /// Its node in the body.
    pub node: NodeId,
    /// Whether it is differentiated (it is, unless `wrt(..)` leaves it out).
    pub wrt: bool,
}

/// A straight-line list of nodes and the node whose value is returned.
pub struct Body {
    /// The nodes, each after its operands.
    pub nodes: Vec<Node>,
    /// The returned node.
    pub output: NodeId,
}

/// One value computed by the function.
pub struct Node {
    /// What computes it.
    pub kind: NodeKind,
    /// What it is known to be, for checking arguments.
    pub num: Num,
    /// The user tokens it came from.
    pub span: Span,
}

/// What computes a node's value.
pub enum NodeKind {
    /// The `n`-th parameter.
    Param(usize),
    /// A constant written by the user (a literal or a path to a `const`), emitted as is.
    Const(TokenStream),
    /// An elementary operation from the table, applied to earlier nodes.
    Op {
        /// The table entry.
        op: &'static Op,
        /// Operands, the receiver first.
        args: Vec<NodeId>,
    },
    /// A call to a user function `path(args)`, differentiated through `path_grad(args)`.
    Call {
        /// The function as written (`g`, `module::g`).
        path: Path,
        /// The arguments.
        args: Vec<NodeId>,
    },
    /// `stop_gradient(arg)`: the value of `arg`, with no gradient flowing back.
    StopGradient(NodeId),
    /// `arg as ty`: a numeric conversion. Differentiable only as `as f64` of an `f64`.
    Cast {
        /// The converted value.
        arg: NodeId,
        /// The target type.
        ty: Type,
    },
    /// `let name: ty = arg;` with an integer type: the constant keeps its declared type.
    Typed {
        /// The value.
        arg: NodeId,
        /// The declared type.
        ty: Type,
    },
}

/// What kind of number a node holds, as far as lowering can tell without type inference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Num {
    /// An `f64`.
    Real,
    /// An integer (a literal, or arithmetic on integers).
    Int,
    /// A constant path whose type only the compiler knows.
    Unknown,
}

impl NodeKind {
    /// The nodes this node reads.
    pub fn operands(&self) -> &[NodeId] {
        match self {
            NodeKind::Param(_) | NodeKind::Const(_) => &[],
            NodeKind::Op { args, .. } | NodeKind::Call { args, .. } => args,
            NodeKind::StopGradient(arg)
            | NodeKind::Cast { arg, .. }
            | NodeKind::Typed { arg, .. } => std::slice::from_ref(arg),
        }
    }
}
