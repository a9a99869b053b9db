//! Activity analysis and the checks that need it.
//!
//! A value is *varied* when it depends on a differentiated parameter, and *useful* when the
//! result depends on it. Only what is both (*active*) gets an adjoint, and only the
//! partials of active operands are computed. Constants, `stop_gradient(..)`, integers and
//! parameters left out of `wrt(..)` are never varied; dead code is never useful.
//!
//! Variables are analysed as a whole (an array and all its elements together, every
//! assignment of a variable together), iterated to a fixed point because loops carry
//! values around; nodes are analysed one by one.
//!
//! ```text
//! fn f(x: f64, y: f64) -> f64 { let dead = x.sin(); x * stop_gradient(y).exp() }
//!
//! x      varied useful   → adjoint          dead   varied          (never read)
//! y      varied          (stop_gradient cuts the path to the result)
//! exp(stop(y))   useful  (a constant: no partial)
//! x * …  varied useful   → partial with respect to x only
//! ```

use crate::errors::Errors;
use crate::ir::{Block, CallArg, Function, NodeId, NodeKind, Place, Stmt, VarId};
use crate::ops::Arg;
use crate::types::scalar_float;

/// Which variables and nodes carry an adjoint.
pub struct Activity {
    var: Vec<bool>,
    node: Vec<bool>,
}

impl Activity {
    /// Whether a node's value gets an adjoint in the reverse sweep.
    pub fn node(&self, node: NodeId) -> bool {
        self.node[node]
    }

    /// Whether a variable gets an adjoint in the reverse sweep.
    pub fn var(&self, var: VarId) -> bool {
        self.var[var]
    }
}

/// The operands of a node through which a gradient flows, with their position among the
/// operation's `f64` arguments (integer arguments, indices, the operand of
/// `stop_gradient` and of integer conversions carry none).
pub fn differentiable_operands(kind: &NodeKind) -> Vec<(usize, NodeId)> {
    match kind {
        NodeKind::Op { op, args } => args
            .iter()
            .zip(op.args)
            .filter(|(_, kind)| **kind == Arg::Real)
            .map(|(&arg, _)| arg)
            .enumerate()
            .collect(),
        NodeKind::Call { args, .. } | NodeKind::Tuple(args) => {
            args.iter().copied().enumerate().collect()
        }
        NodeKind::Pullback { args, .. } => args
            .iter()
            .enumerate()
            .filter_map(|(position, arg)| match arg {
                CallArg::Value(node) => Some((position, *node)),
                CallArg::Whole { .. } => None,
            })
            .collect(),
        NodeKind::Cast { arg, ty } if scalar_float(ty).is_some() => vec![(0, *arg)],
        NodeKind::Const(_)
        | NodeKind::Read(_)
        | NodeKind::StopGradient(_)
        | NodeKind::Cast { .. }
        | NodeKind::Typed { .. }
        | NodeKind::Infix { .. }
        | NodeKind::Not(_)
        | NodeKind::Test { .. }
        | NodeKind::Len(_)
        | NodeKind::ConstElement { .. }
        | NodeKind::Vector { .. }
        | NodeKind::RulePartial { .. }
        | NodeKind::Intrinsic { .. } => Vec::new(),
    }
}

/// The places a [`NodeKind::Pullback`] passes whole.
pub fn whole_args(kind: &NodeKind) -> impl Iterator<Item = &Place> {
    let args: &[CallArg] = match kind {
        NodeKind::Pullback { args, .. } => args,
        _ => &[],
    };
    args.iter().filter_map(|arg| match arg {
        CallArg::Whole { place, .. } => Some(place),
        CallArg::Value(_) => None,
    })
}

/// Every `(variable, value)` written by a `let` or an assignment, and the returned node.
fn writes(block: &Block, out: &mut Vec<(VarId, NodeId)>, result: &mut Option<NodeId>) {
    for stmt in block {
        match stmt {
            Stmt::Let {
                var,
                value: Some(value),
                ..
            } => out.push((*var, *value)),
            Stmt::Unpack { vars, value, .. } => {
                out.extend(vars.iter().map(|&var| (var, *value)));
            }
            Stmt::Assign { place, value, .. } | Stmt::Push { place, value, .. } => {
                out.push((place.var, *value));
            }
            Stmt::For { body, .. } | Stmt::Loop { body, .. } => writes(body, out, result),
            Stmt::If {
                then, otherwise, ..
            } => {
                writes(then, out, result);
                writes(otherwise, out, result);
            }
            Stmt::Return { value, .. } => *result = Some(*value),
            Stmt::Let { value: None, .. } | Stmt::Eval { .. } | Stmt::SetFlag { .. } => {}
        }
    }
}

/// Computes which variables and nodes are active, and rejects what would silently lose a
/// gradient: a differentiated value converted to an integer or used where an integer is
/// expected.
pub fn check(function: &Function) -> syn::Result<Activity> {
    check_for(function, &function.wrt)
}

/// The activity when the parameters `wrt` (indices into `function.params`) are
/// differentiated, as for the pullback, which differentiates every parameter that holds
/// numbers whatever `wrt(..)` says.
pub fn check_for(function: &Function, wrt: &[usize]) -> syn::Result<Activity> {
    let nodes = &function.nodes;
    let mut assignments = Vec::new();
    let mut result = None;
    writes(&function.body, &mut assignments, &mut result);

    // The variables each node's value is written to.
    let mut written_from: Vec<Vec<VarId>> = vec![Vec::new(); nodes.len()];
    for &(var, value) in &assignments {
        written_from[value].push(var);
    }

    // Varied: forward from the differentiated parameters. Nodes are visited in evaluation
    // order and a variable is marked as soon as a varied value is written to it, so
    // straight-line code settles in one pass; values carried around loops take a few more.
    let mut varied_var = vec![false; function.vars.len()];
    for (index, param) in function.params.iter().enumerate() {
        varied_var[param.var] = wrt.contains(&index);
    }
    for field in &function.fields {
        varied_var[field.var] = field.differentiable && wrt.contains(&field.param);
    }
    let mut varied = vec![false; nodes.len()];
    loop {
        let mut changed = false;
        for (id, node) in nodes.iter().enumerate() {
            varied[id] = match &node.kind {
                NodeKind::Read(place) => varied_var[place.var],
                kind => {
                    differentiable_operands(kind)
                        .iter()
                        .any(|&(_, arg)| varied[arg])
                        || whole_args(kind).any(|place| varied_var[place.var])
                }
            };
            if varied[id] {
                for &var in &written_from[id] {
                    changed |= !varied_var[var];
                    varied_var[var] = true;
                }
            }
        }
        if !changed {
            break;
        }
    }

    // Useful: backward from the result, in reverse evaluation order, a variable marked as
    // soon as a useful read of it is seen (so the values written to it are reached later in
    // the same pass), repeated until loops settle.
    let mut useful_var = vec![false; function.vars.len()];
    let mut useful = vec![false; nodes.len()];
    if let Some(result) = result {
        useful[result] = true;
    }
    loop {
        let mut changed = false;
        for id in (0..nodes.len()).rev() {
            if !useful[id] && written_from[id].iter().any(|&var| useful_var[var]) {
                useful[id] = true;
                changed = true;
            }
            if !useful[id] || !varied[id] {
                continue;
            }
            if let NodeKind::Read(place) = &nodes[id].kind {
                changed |= !useful_var[place.var];
                useful_var[place.var] = true;
            }
            for place in whole_args(&nodes[id].kind) {
                changed |= !useful_var[place.var];
                useful_var[place.var] = true;
            }
            for (_, arg) in differentiable_operands(&nodes[id].kind) {
                changed |= !useful[arg];
                useful[arg] = true;
            }
        }
        if !changed {
            break;
        }
    }

    let mut errors = Errors::default();
    for (node, error) in &function.constant_uses {
        if varied[*node] {
            errors.push(error.clone());
        }
    }
    let var = varied_var
        .iter()
        .zip(&useful_var)
        .map(|(v, u)| *v && *u)
        .collect();
    let node = varied.iter().zip(&useful).map(|(v, u)| *v && *u).collect();
    errors.finish(Activity { var, node })
}
