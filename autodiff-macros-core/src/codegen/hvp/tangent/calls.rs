//! Calls of other `#[grad]` functions in the tangent transformation: each moves ahead of
//! its statement as a call of the callee's tangent function (`g_tangent`), whose values
//! and tangents a `let` takes apart; arguments passed whole pass their tangent variables
//! (or a zero of their shape) beside them.

use super::{HashMap, Transform};
use crate::check::Activity;
use crate::ir::{Block, Callee, Function, NodeId, NodeKind, Num, Place, Stmt, VarId, VarKind};
use proc_macro2::Span;

/// The struct parameters left out of `wrt(..)` that are passed whole (or a struct field of
/// them) to a call that carries a gradient: the tangent function takes a tangent for each
/// after those of `wrt(..)`, in parameter order, which `_hvp` passes as a zero (the
/// callee's tangent function takes one).
pub fn zero_tangent_structs(function: &Function, activity: &Activity) -> Vec<usize> {
    let mut out = Vec::new();
    for (id, node) in function.nodes.iter().enumerate() {
        let NodeKind::Pullback { args, .. } = &node.kind else {
            continue;
        };
        if !activity.node(id) {
            continue;
        }
        for arg in args {
            let crate::ir::CallArg::Whole { place, .. } = arg else {
                continue;
            };
            let param = function.struct_param(place.var).or_else(|| {
                function
                    .field(place.var)
                    .filter(|f| f.strukt)
                    .map(|f| f.param)
            });
            if let Some(i) = param {
                if !function.wrt.contains(&i) && !out.contains(&i) {
                    out.push(i);
                }
            }
        }
    }
    out.sort_unstable();
    out
}

impl Transform<'_> {
    /// Moves each call of another `#[grad]` function that carries a gradient ahead of
    /// its statement, as a call of the callee's tangent function whose value and tangent
    /// a `let` takes apart; the call's node then reads the value.
    ///
    /// ```text
    /// y = g(a * x) + x;    →   let (__c, __tc) = g_tangent(a * x, ȧ·x + a·ẋ);
    ///                          y = __c + x;
    /// ```
    ///
    /// The callee's pullback of its tangent function (`hvp` or `hessian` on it) then
    /// differentiates the call in the sweep.
    /// Returns the statement with its calls moved out, or `None` where it has none (most
    /// statements, which are then not copied).
    pub(super) fn hoist_calls(&mut self, stmt: &Stmt, out: &mut Block) -> Option<Stmt> {
        let calls: Vec<NodeId> = stmt
            .nodes()
            .iter()
            .copied()
            .filter(|&id| {
                let callable = match &self.source.nodes[id].kind {
                    NodeKind::Call { .. } => true,
                    // A call passing arrays, slices or structs whole, of one output.
                    NodeKind::Pullback { outputs: 1, .. } => true,
                    _ => false,
                };
                callable && self.activity.node(id)
            })
            .collect();
        if calls.is_empty() {
            return None;
        }
        let mut stmt = stmt.clone();
        for call in calls {
            let (callee, args) = match self.source.nodes[call].kind.clone() {
                NodeKind::Call { path, args } => (
                    Callee::Path(path),
                    args.iter()
                        .map(|&a| crate::ir::CallArg::Value(a))
                        .collect::<Vec<_>>(),
                ),
                NodeKind::Pullback { callee, args, .. } => (callee, args),
                _ => continue,
            };
            let value_args: Vec<NodeId> = args
                .iter()
                .flat_map(|arg| match arg {
                    crate::ir::CallArg::Value(node) => vec![*node],
                    crate::ir::CallArg::Whole { place, .. } => place.indices.clone(),
                })
                .collect();
            let span = self.source.nodes[call].span;
            let Some(list) = stmt.nodes_mut() else {
                break;
            };
            // What the arguments are computed from, within the statement.
            let mut moved = Vec::new();
            let mut stack = value_args.clone();
            while let Some(id) = stack.pop() {
                if list.contains(&id) && !moved.contains(&id) {
                    moved.push(id);
                    stack.extend(children(&self.nodes[id].kind));
                }
            }
            let shared = list.iter().any(|&id| {
                !moved.contains(&id)
                    && id != call
                    && children(&self.nodes[id].kind)
                        .iter()
                        .any(|c| moved.contains(c))
            });
            if shared {
                self.errors.push(syn::Error::new(
                    span,
                    "`hvp` and `hessian` cannot yet differentiate a call whose arguments \
                     share a value with the rest of the expression; bind the call to a \
                     `let` of its own",
                ));
                continue;
            }
            let mut hoisted: Vec<NodeId> = list
                .iter()
                .copied()
                .filter(|id| moved.contains(id))
                .collect();
            list.retain(|id| !moved.contains(id));
            let Some(tangents) = self.call_tangents(&args, span, &mut hoisted) else {
                self.reported.push(call);
                continue;
            };
            let call_args = args.iter().chain(&tangents).cloned().collect();
            let pullback = NodeKind::Pullback {
                callee: tangent_callee(&callee),
                args: call_args,
                outputs: 2,
            };
            let value = self.push(pullback, Num::Real, span, &mut hoisted);
            let (primal, tangent) = (self.temporary(), self.temporary());
            out.push(Stmt::Unpack {
                vars: vec![primal, tangent],
                value,
                nodes: hoisted,
            });
            self.nodes[call].kind = NodeKind::Read(Place {
                var: primal,
                indices: Vec::new(),
            });
            self.hoisted.insert(call, tangent);
        }
        Some(stmt)
    }

    /// Whether `node` is a call of several outputs that carries a gradient.
    pub(super) fn several_outputs(&self, node: NodeId) -> bool {
        matches!(self.source.nodes[node].kind, NodeKind::Pullback { outputs, .. } if outputs > 1)
            && self.activity.node(node)
    }

    /// `let (a, b) = g(x, w);` (or `let v: [f64; 2] = g(x, w);`): the call of the callee's
    /// tangent function, which returns the values and then the tangents, unpacked into the
    /// variables and then their tangents.
    ///
    /// ```text
    /// let (a, b) = g(x, w);    →   let (a, b, ȧ, ḃ) = g_tangent(x, w, ẋ, ẇ);
    /// ```
    pub(super) fn unpack_call(
        &mut self,
        vars: &[VarId],
        call: NodeId,
        nodes: &[NodeId],
        out: &mut Block,
    ) {
        let NodeKind::Pullback {
            callee,
            args,
            outputs,
        } = self.source.nodes[call].kind.clone()
        else {
            return;
        };
        let span = self.source.nodes[call].span;
        let mut nodes: Vec<NodeId> = nodes.iter().copied().filter(|&id| id != call).collect();
        let Some(tangents) = self.call_tangents(&args, span, &mut nodes) else {
            return;
        };
        let call_args = args.iter().chain(&tangents).cloned().collect();
        let pullback = NodeKind::Pullback {
            callee: tangent_callee(&callee),
            args: call_args,
            outputs: 2 * outputs,
        };
        let value = self.push(pullback, Num::Real, span, &mut nodes);
        let mut all = vars.to_vec();
        for var in vars {
            let tangent = match self.tangent_vars.get(var) {
                Some(&tangent) => tangent,
                None => self.temporary(),
            };
            all.push(tangent);
        }
        out.push(Stmt::Unpack {
            vars: all,
            value,
            nodes,
        });
    }

    /// The tangents of a call's arguments, in order, their nodes appended to `nodes`
    /// (integers and flags have none); `None` where an argument passed whole has none
    /// (reported).
    pub(super) fn call_tangents(
        &mut self,
        args: &[crate::ir::CallArg],
        span: Span,
        nodes: &mut Vec<NodeId>,
    ) -> Option<Vec<crate::ir::CallArg>> {
        let mut memo = HashMap::new();
        let mut tangents = Vec::new();
        for arg in args {
            let tangent = match arg {
                // An integer or a flag has no tangent, nor a tangent parameter.
                crate::ir::CallArg::Value(arg) if self.source.nodes[*arg].num.passed_as_is() => {
                    continue;
                }
                crate::ir::CallArg::Value(arg) => {
                    let t = match self.tangent(*arg, &mut memo, nodes) {
                        Some(t) => t,
                        None => self.real_constant("0.0", span, nodes),
                    };
                    crate::ir::CallArg::Value(t)
                }
                // A constant `self` (of a method marked alone) has none either.
                // Nor all the rows of run-time length, the callee's rows (data).
                crate::ir::CallArg::Whole { place, .. }
                    if (!matches!(
                        self.source.vars[place.var].kind,
                        VarKind::Real | VarKind::Data
                    ) && self.source.struct_param(place.var).is_none())
                        || (self.source.vars[place.var].kind == VarKind::Data
                            && place.indices.is_empty()) =>
                {
                    continue;
                }
                crate::ir::CallArg::Whole {
                    place,
                    reference,
                    deref,
                } => self.whole_arg_tangent(place, (*reference, *deref), span, nodes)?,
            };
            tangents.push(tangent);
        }
        Some(tangents)
    }

    /// Reports a call among `nodes` that passes an array, a slice or a struct whole and
    /// carries a gradient (which this transformation cannot follow yet).
    pub(super) fn no_calls(&mut self, nodes: &[NodeId]) {
        for &id in nodes {
            let call = matches!(self.source.nodes[id].kind, NodeKind::Pullback { .. })
                && !self.hoisted.contains_key(&id);
            if call && self.activity.node(id) {
                let mut memo = HashMap::new();
                let mut scratch = Vec::new();
                self.tangent(id, &mut memo, &mut scratch);
            }
        }
    }

    /// The tangent of an array, a slice or a struct passed whole to a call: the tangent
    /// variable's same place, or a zero local of its shape where the array or slice has no
    /// tangent (data, or left out of `wrt(..)`). `None` (with an error) for a struct without
    /// one.
    pub(super) fn whole_arg_tangent(
        &mut self,
        place: &Place,
        (reference, deref): (bool, bool),
        span: Span,
        call_nodes: &mut Vec<NodeId>,
    ) -> Option<crate::ir::CallArg> {
        if let Some(&tangent) = self.tangent_vars.get(&place.var) {
            // The indices (of a row passed whole), computed with the call.
            let indices = place
                .indices
                .iter()
                .map(|&i| self.copy_index(i, call_nodes))
                .collect();
            return Some(crate::ir::CallArg::Whole {
                place: Place {
                    var: tangent,
                    indices,
                },
                reference,
                deref,
            });
        }
        let v = &self.source.vars[place.var];
        let below = place.indices.len().saturating_sub(usize::from(v.slice));
        let strukt = self.source.struct_param(place.var).is_some()
            || self.source.field(place.var).is_some_and(|f| f.strukt);
        if strukt {
            self.errors.push(syn::Error::new(
                span,
                "`hvp` and `hessian` do not differentiate yet through a call that passes a \
                 struct whole when the struct has no tangent (left out of `wrt(..)`); `_grad` \
                 and `_jvp` do",
            ));
            return None;
        }
        // A row of run-time length (data): its tangent a zero vector as long as the
        // longest row, read where the row is, one for all its rows.
        let rows = v.kind == VarKind::Data;
        let vector = v.slice && place.indices.is_empty() || rows;
        // A parameter that is a reference (`w: &[f64; 3]`), passed as it is: its zero, a
        // local, is lent (a slice's zero too, a local vector).
        let lent = place.indices.is_empty()
            && !deref
            && self
                .source
                .params
                .iter()
                .any(|p| p.var == place.var && matches!(p.ty, syn::Type::Reference(_)));
        let key = (place.var, place.indices.len());
        let whole = |zero_var| crate::ir::CallArg::Whole {
            place: Place {
                var: zero_var,
                indices: Vec::new(),
            },
            reference: reference || vector || lent,
            deref: false,
        };
        if let Some(&(_, zero_var)) = self.zeros.iter().find(|(k, _)| *k == key) {
            return Some(whole(zero_var));
        }
        if vector && !v.is_param {
            self.errors.push(syn::Error::new(
                span,
                "`hvp` and `hessian` do not differentiate yet through a call that passes a \
                 local vector whole; `_grad` and `_jvp` do",
            ));
            return None;
        }
        let dims = if rows {
            Vec::new()
        } else {
            v.dims.get(below..).unwrap_or(&[]).to_vec()
        };
        let zero_var = self.temporary();
        self.vars[zero_var].dims = dims.clone();
        // Never written: the sweep reads it where it is, as a parameter's, rather than a
        // copy taken at each call.
        self.vars[zero_var].is_param = true;
        self.zeros.push((key, zero_var));
        let mut nodes = Vec::new();
        let zero = if vector {
            // A slice: a zero vector of its length.
            self.vars[zero_var].slice = true;
            let len = if rows {
                let param = self.source.params.iter().find(|p| p.var == place.var)?;
                let ident = &param.ident;
                let longest = quote::quote!(::autodiff::__private::loops::longest_row(&#ident[..]));
                self.push(NodeKind::Const(longest), Num::Int, span, &mut nodes)
            } else {
                let whole = Place {
                    var: place.var,
                    indices: Vec::new(),
                };
                self.push(NodeKind::Len(whole), Num::Int, span, &mut nodes)
            };
            let element = super::super::zeros(self.source.real, &dims);
            self.push(
                NodeKind::Vector {
                    element: Some(element),
                    len,
                },
                Num::Real,
                span,
                &mut nodes,
            )
        } else {
            self.constant(
                super::super::zeros(self.source.real, &dims),
                span,
                &mut nodes,
            )
        };
        self.zero_lets.push(Stmt::Let {
            var: zero_var,
            value: Some(zero),
            nodes,
        });
        Some(whole(zero_var))
    }
}

/// The hidden tangent function of a callee: `g` → `g_tangent`, `m.g` → `m.g_tangent`.
fn tangent_callee(callee: &Callee) -> Callee {
    let tangent = crate::codegen::jvp::tangent_ident;
    match callee {
        Callee::Path(path) => {
            let mut path = path.clone();
            if let Some(last) = path.segments.last_mut() {
                last.ident = tangent(&last.ident);
            }
            Callee::Path(path)
        }
        Callee::Method(method) => Callee::Method(tangent(method)),
    }
}

/// The nodes a node reads.
fn children(kind: &NodeKind) -> Vec<NodeId> {
    use crate::ir::CallArg;
    match kind {
        NodeKind::Read(place) => place.indices.clone(),
        NodeKind::Op { args, .. }
        | NodeKind::Call { args, .. }
        | NodeKind::Intrinsic { args, .. }
        | NodeKind::Tuple(args)
        | NodeKind::RulePartial { args, .. } => args.clone(),
        NodeKind::Pullback { args, .. } => args
            .iter()
            .flat_map(|arg| match arg {
                CallArg::Value(node) => vec![*node],
                CallArg::Whole { place, .. } => place.indices.clone(),
            })
            .collect(),
        NodeKind::StopGradient(arg)
        | NodeKind::Cast { arg, .. }
        | NodeKind::Typed { arg, .. }
        | NodeKind::Not(arg)
        | NodeKind::Test { arg, .. } => vec![*arg],
        NodeKind::Infix { lhs, rhs, .. } => vec![*lhs, *rhs],
        NodeKind::ConstElement { indices, .. } => indices.clone(),
        NodeKind::Vector { len, .. } => vec![*len],
        NodeKind::Len(place) => place.indices.clone(),
        NodeKind::Const(_) => Vec::new(),
    }
}
