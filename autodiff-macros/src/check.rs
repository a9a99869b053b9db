//! Activity analysis and the checks that need it.
//!
//! A node is *varied* when its value depends on a differentiated parameter, and *useful*
//! when the output depends on it. Only nodes that are both (*active*) get an adjoint, and
//! only the partials of active operands are computed. Constants, `stop_gradient(..)`, and
//! parameters left out of `wrt(..)` are never varied; dead code is never useful.
//!
//! ```text
//! fn f(x: f64, y: f64) -> f64 { let dead = x.sin(); x * stop_gradient(y).exp() }
//!
//! %0 x        varied useful   → adjoint
//! %1 y        varied          (stop_gradient cuts the path to the output)
//! %2 sin %0   varied          (dead)
//! %3 stop %1
//! %4 exp %3          useful   (constant: no partial)
//! %5 mul %0 %4 varied useful → adjoint; partial of %0 only
//! ```

use crate::errors::Errors;
use crate::ir::{Function, NodeId, NodeKind};
use crate::ops::Arg;

/// Which nodes carry an adjoint.
pub struct Activity {
    active: Vec<bool>,
}

impl Activity {
    /// Whether `node` gets an adjoint in the reverse sweep.
    pub fn is_active(&self, node: NodeId) -> bool {
        self.active[node]
    }
}

/// The operands of a node through which a gradient flows (integer arguments, the operand of
/// `stop_gradient` and of integer conversions carry none).
pub fn differentiable_operands(kind: &NodeKind) -> Vec<(usize, NodeId)> {
    match kind {
        NodeKind::Op { op, args } => args
            .iter()
            .zip(op.args)
            .enumerate()
            .filter(|(_, (_, kind))| **kind == Arg::Real)
            .map(|(position, (&arg, _))| (position, arg))
            .collect(),
        NodeKind::Call { args, .. } => args.iter().copied().enumerate().collect(),
        NodeKind::Cast { arg, ty } if is_f64(ty) => vec![(0, *arg)],
        NodeKind::Param(_)
        | NodeKind::Const(_)
        | NodeKind::StopGradient(_)
        | NodeKind::Cast { .. }
        | NodeKind::Typed { .. } => Vec::new(),
    }
}

fn is_f64(ty: &syn::Type) -> bool {
    matches!(ty, syn::Type::Path(path) if path.path.is_ident("f64"))
}

/// Computes which nodes are active, and rejects what would silently lose a gradient: a
/// differentiated value converted to an integer or used where an integer is expected.
pub fn check(function: &Function) -> syn::Result<Activity> {
    let nodes = &function.body.nodes;
    let mut errors = Errors::default();

    let mut varied = vec![false; nodes.len()];
    for (id, node) in nodes.iter().enumerate() {
        varied[id] = match &node.kind {
            NodeKind::Param(index) => function.params[*index].wrt,
            _ => differentiable_operands(&node.kind)
                .iter()
                .any(|&(_, arg)| varied[arg]),
        };
    }
    for (node, error) in &function.constant_uses {
        if varied[*node] {
            errors.push(error.clone());
        }
    }

    let mut useful = vec![false; nodes.len()];
    useful[function.body.output] = true;
    for id in (0..nodes.len()).rev() {
        if useful[id] && varied[id] {
            for (_, arg) in differentiable_operands(&nodes[id].kind) {
                useful[arg] = true;
            }
        }
    }

    let active = varied.iter().zip(&useful).map(|(v, u)| *v && *u).collect();
    errors.finish(Activity { active })
}
