//! The tangent transformation from IR to IR: a function `f(p…) -> y` becomes
//! `f_jvp(p…, t_p…) -> (y, ẏ)`, a function of the same IR whose extra nodes compute the
//! tangents with operations of the table, so that the reverse sweep can differentiate it
//! again (`super` composes the two).
//!
//! Each statement keeps its nodes and gains the tangent nodes after them; where it writes
//! a number, the value and its tangent leave the statement together, as the parts of a
//! tuple that one `let` takes apart, so that no node is read outside its statement:
//!
//! ```text
//! acc = acc * x;        →   let (__v, __t) = (acc * x, ṫacc * x + acc * ṫx);
//!                           acc = __v;
//!                           ṫacc = __t;
//! ```
//!
//! A smooth operation's partial is written with table operations, as its rule computes
//! it (`1 - y·y` for `tanh`); a piecewise constant one (`abs`, `max`, `clamp`, the
//! roundings) is the rule's partial held constant ([`NodeKind::RulePartial`]).

mod calls;
mod partials;

use crate::check::{differentiable_operands, Activity};
use crate::ir::{
    Block, Function, Node, NodeId, NodeKind, Num, Param, Place, Stmt, Var, VarId, VarKind,
};
use crate::ops::{self, Op, Partial};
pub use calls::zero_tangent_structs;
use proc_macro2::{Span, TokenStream};
use quote::quote;
use std::collections::HashMap;

/// The tangent function of `function` (see the module's documentation), with the
/// parameters' tangents after the parameters, named `t_<name>`, and two outputs.
pub fn tangent_function(function: &Function, activity: &Activity) -> syn::Result<Function> {
    tangent_function_in(function, activity, None)
}

/// The tangent function, with tangents of the type `lanes` (a path to
/// `Lanes::<K>`, whose `ZERO` starts a tangent) where it is given, else of the function's
/// float type: the function that `_hessian`'s one sweep over lanes differentiates
/// (`super::lanes`).
pub fn tangent_function_in(
    function: &Function,
    activity: &Activity,
    lanes: Option<TokenStream>,
) -> syn::Result<Function> {
    let Some(outputs) = output_count(function) else {
        return Err(syn::Error::new_spanned(
            &function.original.sig.output,
            format!(
                "`hvp` and `hessian` differentiate twice a function that returns one number, \
                 or (for the callers' second order) a tuple or one-dimensional array of at \
                 most {MAX_OUTPUTS} numbers; for this output, ask for `jacobian`"
            ),
        ));
    };
    let mut transform = Transform {
        source: function,
        activity,
        nodes: function.nodes.clone(),
        vars: function.vars.clone(),
        tangent_vars: HashMap::new(),
        hoisted: HashMap::new(),
        reported: Vec::new(),
        zeros: Vec::new(),
        zero_lets: Vec::new(),
        errors: crate::errors::Errors::default(),
        lanes,
    };
    let mut params = function.params.clone();
    let mut fields = function.fields.clone();
    let zero_tangents = zero_tangent_structs(function, activity);
    for &i in function.wrt.iter().chain(&zero_tangents) {
        let param = &function.params[i];
        let var = transform.new_var(param.var, true);
        let tangent_index = params.len();
        params.push(Param {
            ident: super::super::jvp::tangent_param(function, i),
            ty: param.ty.clone(),
            var,
            wrt: true,
            strukt: param.strukt.clone(),
        });
        // A struct's tangent is a value of its type: its fields, read through the
        // tangent parameter (`t_m.layer.w`), are the tangents of the struct's fields.
        for field in function.fields.iter().filter(|f| f.param == i) {
            let var = transform.new_var(field.var, true);
            fields.push(crate::ir::FieldParam {
                param: tangent_index,
                access: field.access.clone(),
                var,
                differentiable: field.differentiable,
                strukt: field.strukt,
                inner: field.inner.clone(),
            });
        }
    }
    // Variables written a tangent: locals, and parameters left out of `wrt(..)` that a
    // differentiated value is assigned to (their tangents start at zero).
    let mut prologue = Vec::new();
    for var in 0..function.vars.len() {
        if !activity.var(var) || transform.tangent_vars.contains_key(&var) {
            continue;
        }
        let tangent = transform.new_var(var, false);
        let v = &function.vars[var];
        if v.is_param && function.field(var).is_none() {
            let mut nodes = Vec::new();
            let zero = transform.zero(var, &[], &mut nodes, Span::call_site());
            prologue.push(Stmt::Let {
                var: tangent,
                value: Some(zero),
                nodes,
            });
        }
    }
    let block = transform.block(&function.body);
    let mut body = prologue;
    body.append(&mut transform.zero_lets);
    body.extend(block);
    let Transform {
        nodes,
        vars,
        errors,
        ..
    } = transform;
    errors.finish(())?;
    let wrt: Vec<usize> = (0..params.len())
        .filter(|&i| params[i].strukt.is_some() || vars[params[i].var].kind == VarKind::Real)
        .collect();
    let original = signature(function, &params, outputs);
    Ok(Function {
        original,
        params,
        wrt,
        items: function.items.clone(),
        fields,
        outputs: 2 * outputs,
        output: None,
        real: function.real,
        probe_self: None,
        reassociate: false,
        parallel: None,
        in_impl: function.in_impl,
        vars,
        nodes,
        body,
        constant_uses: function.constant_uses.clone(),
    })
}

/// The most numbers a function may return for its callers' second order: its tangent
/// function returns twice as many, as one tuple (`outputs::joined`, up to 16).
pub const MAX_OUTPUTS: usize = 8;

/// How many numbers the tangent function follows: 1 for a number, the length of a tuple or
/// of a one-dimensional array of literal length (at most [`MAX_OUTPUTS`]); `None` for
/// other outputs (nested arrays, vectors, more numbers).
pub fn output_count(function: &Function) -> Option<usize> {
    let count = match &function.output {
        None => function.outputs,
        Some(output) => {
            let var = &function.vars[output.var];
            let [len] = var.dims.as_slice() else {
                return None;
            };
            if var.slice {
                return None;
            }
            syn::parse2::<syn::LitInt>(len.clone())
                .ok()?
                .base10_parse::<usize>()
                .ok()?
        }
    };
    (1..=MAX_OUTPUTS).contains(&count).then_some(count)
}

/// The item the tangent function stands for: `<name>_tangent(p…, t_p…) -> (f64, f64)`
/// (the values then the tangents, for several outputs), hidden, with the original's
/// attributes that its generated functions keep.
fn signature(function: &Function, params: &[Param], outputs: usize) -> syn::ItemFn {
    let original = &function.original;
    let ident = crate::codegen::jvp::tangent_ident(&original.sig.ident);
    let inputs = params.iter().map(|p| {
        let ident = &p.ident;
        let ty = &p.ty;
        if ident == "self" {
            quote!(self: #ty)
        } else {
            quote!(#ident: #ty)
        }
    });
    let reals = std::iter::repeat_n(function.real, 2 * outputs);
    let generics = &original.sig.generics;
    let attrs = &original.attrs;
    let vis = &original.vis;
    syn::parse_quote! {
        #(#attrs)*
        #vis fn #ident #generics(#(#inputs),*) -> (#(#reals),*) {}
    }
}

struct Transform<'a> {
    source: &'a Function,
    activity: &'a Activity,
    nodes: Vec<Node>,
    vars: Vec<Var>,
    /// The tangent variable of each variable that has one.
    tangent_vars: HashMap<VarId, VarId>,
    /// Calls moved ahead of their statement (see [`Transform::hoist_calls`]): the call's
    /// node, which now reads the value, and the variable holding its tangent.
    hoisted: HashMap<NodeId, VarId>,
    /// Calls reported already (an argument this transformation cannot follow).
    reported: Vec<NodeId>,
    /// Zeros passed whole as the tangents of what has none, by the variable and the
    /// number of indices they stand for: declared at the top of the function, and read
    /// in place as a parameter is (never written).
    zeros: Vec<((VarId, usize), VarId)>,
    zero_lets: Vec<Stmt>,
    errors: crate::errors::Errors,
    /// The tangents' type where they are lanes (see [`tangent_function_in`]).
    lanes: Option<TokenStream>,
}

impl Transform<'_> {
    /// A variable for the tangent of `var`, of its shape.
    fn new_var(&mut self, var: VarId, param: bool) -> VarId {
        let mut tangent = self.vars[var].clone();
        tangent.is_param = param;
        self.vars.push(tangent);
        let id = self.vars.len() - 1;
        self.tangent_vars.insert(var, id);
        id
    }

    /// A scalar local of the function's float type.
    fn temporary(&mut self) -> VarId {
        self.vars.push(Var {
            kind: VarKind::Real,
            dims: Vec::new(),
            slice: false,
            rows: false,
            stable: false,
            is_param: false,
            reassigned: false,
            mutable: false,
        });
        self.vars.len() - 1
    }

    fn push(&mut self, kind: NodeKind, num: Num, span: Span, out: &mut Vec<NodeId>) -> NodeId {
        self.nodes.push(Node { kind, num, span });
        let id = self.nodes.len() - 1;
        out.push(id);
        id
    }

    fn constant(&mut self, tokens: TokenStream, span: Span, out: &mut Vec<NodeId>) -> NodeId {
        self.push(NodeKind::Const(tokens), Num::Real, span, out)
    }

    fn op(&mut self, name: &str, args: Vec<NodeId>, span: Span, out: &mut Vec<NodeId>) -> NodeId {
        let op = table(name);
        self.push(NodeKind::Op { op, args }, Num::Real, span, out)
    }

    /// A zero of what `var` holds below `indices` (a number, an array, a vector's copy).
    fn zero(
        &mut self,
        var: VarId,
        indices: &[NodeId],
        out: &mut Vec<NodeId>,
        span: Span,
    ) -> NodeId {
        let v = &self.source.vars[var];
        let skip = indices.len().saturating_sub(usize::from(v.slice));
        let dims = v.dims.get(skip..).unwrap_or(&[]).to_vec();
        let zero = match &self.lanes {
            Some(lanes) => super::super::filled(&dims, quote!(#lanes::ZERO)),
            None => super::super::zeros(self.source.real, &dims),
        };
        self.constant(zero, span, out)
    }

    /// A copy of an integer expression (an index), for a statement of its own.
    fn copy_index(&mut self, id: NodeId, out: &mut Vec<NodeId>) -> NodeId {
        let node = self.nodes[id].clone();
        let mut copy = |this: &mut Self, n: &NodeId| this.copy_index(*n, out);
        let kind = match node.kind {
            NodeKind::Read(place) => NodeKind::Read(Place {
                var: place.var,
                indices: place.indices.iter().map(|i| copy(self, i)).collect(),
            }),
            NodeKind::Op { op, args } => NodeKind::Op {
                op,
                args: args.iter().map(|a| copy(self, a)).collect(),
            },
            NodeKind::Intrinsic {
                function,
                args,
                field,
            } => NodeKind::Intrinsic {
                function,
                args: args.iter().map(|a| copy(self, a)).collect(),
                field,
            },
            NodeKind::Infix { op, lhs, rhs } => {
                let lhs = copy(self, &lhs);
                let rhs = copy(self, &rhs);
                NodeKind::Infix { op, lhs, rhs }
            }
            NodeKind::Typed { arg, ty } => NodeKind::Typed {
                arg: copy(self, &arg),
                ty,
            },
            NodeKind::Cast { arg, ty } => NodeKind::Cast {
                arg: copy(self, &arg),
                ty,
            },
            NodeKind::ConstElement { table, indices } => NodeKind::ConstElement {
                table,
                indices: indices.iter().map(|i| copy(self, i)).collect(),
            },
            NodeKind::Len(place) => NodeKind::Len(Place {
                var: place.var,
                indices: place.indices.iter().map(|i| copy(self, i)).collect(),
            }),
            other => other,
        };
        self.push(kind, node.num, node.span, out)
    }

    /// The tangent of a node, its nodes appended to `out`; `None` where it is zero.
    fn tangent(
        &mut self,
        id: NodeId,
        memo: &mut HashMap<NodeId, Option<NodeId>>,
        out: &mut Vec<NodeId>,
    ) -> Option<NodeId> {
        if let Some(known) = memo.get(&id) {
            return *known;
        }
        let result = self.tangent_of(id, memo, out);
        memo.insert(id, result);
        result
    }

    fn tangent_of(
        &mut self,
        id: NodeId,
        memo: &mut HashMap<NodeId, Option<NodeId>>,
        out: &mut Vec<NodeId>,
    ) -> Option<NodeId> {
        if !self.activity.node(id) {
            return None;
        }
        if let Some(&var) = self.hoisted.get(&id) {
            let read = Place {
                var,
                indices: Vec::new(),
            };
            return Some(self.push(NodeKind::Read(read), Num::Real, self.nodes[id].span, out));
        }
        let node = self.source.nodes[id].clone();
        let span = node.span;
        match &node.kind {
            NodeKind::Read(place) => {
                let var = *self.tangent_vars.get(&place.var)?;
                let read = Place {
                    var,
                    indices: place.indices.clone(),
                };
                Some(self.push(NodeKind::Read(read), node.num, span, out))
            }
            NodeKind::Cast { arg, ty } => {
                let t = self.tangent(*arg, memo, out)?;
                let kind = NodeKind::Cast {
                    arg: t,
                    ty: ty.clone(),
                };
                Some(self.push(kind, Num::Real, span, out))
            }
            NodeKind::Tuple(_) => None,
            NodeKind::Op { op, args } => {
                let mut terms = Vec::new();
                for (real, operand) in differentiable_operands(&node.kind) {
                    let Some(t) = self.tangent(operand, memo, out) else {
                        continue;
                    };
                    let term = match op.partials[real] {
                        Partial::One => t,
                        Partial::MinusOne => self.op("neg", vec![t], span, out),
                        Partial::Primal(other) => self.op("mul", vec![args[other], t], span, out),
                        Partial::Rule(_) => {
                            let partial = self.partial(op, args, id, real, span, out);
                            self.op("mul", vec![partial, t], span, out)
                        }
                    };
                    terms.push(term);
                }
                let mut terms = terms.into_iter();
                let first = terms.next()?;
                Some(terms.fold(first, |sum, term| {
                    self.op("add", vec![sum, term], span, out)
                }))
            }
            NodeKind::Pullback { .. } if self.reported.contains(&id) => None,
            NodeKind::Pullback { .. } => {
                self.errors.push(syn::Error::new(
                    span,
                    "`hvp` and `hessian` do not differentiate yet through this call (a method, \
                     or a call of several outputs, that takes arrays, slices or structs \
                     whole); `_grad` and `_jvp` do",
                ));
                None
            }
            _ => None,
        }
    }

    /// A number of the function's float type, written out (`1.0f64`).
    fn real_constant(&mut self, value: &str, span: Span, out: &mut Vec<NodeId>) -> NodeId {
        let literal = self.source.real.literal(value);
        self.constant(literal, span, out)
    }

    /// `var[k]`.
    fn element(&mut self, var: VarId, k: usize, span: Span, out: &mut Vec<NodeId>) -> NodeId {
        let index = self.push(NodeKind::Const(quote!(#k)), Num::Int, span, out);
        let place = Place {
            var,
            indices: vec![index],
        };
        self.push(NodeKind::Read(place), Num::Real, span, out)
    }

    /// `::core::f64::consts::NAME` (or `f32`).
    fn float_constant(&mut self, name: &str, span: Span, out: &mut Vec<NodeId>) -> NodeId {
        let module = syn::Ident::new(self.source.real.name(), Span::call_site());
        let name = syn::Ident::new(name, Span::call_site());
        self.constant(quote!(::core::#module::consts::#name), span, out)
    }

    fn block(&mut self, block: &Block) -> Block {
        let mut out = Vec::new();
        for stmt in block {
            self.stmt(stmt, &mut out);
        }
        out
    }

    /// Whether a place holds a single number (not a whole array or vector).
    fn scalar_place(&self, place: &Place) -> bool {
        let v = &self.source.vars[place.var];
        place.indices.len() == v.dims.len() + usize::from(v.slice)
    }

    fn stmt(&mut self, stmt: &Stmt, out: &mut Block) {
        let hoisted = self.hoist_calls(stmt, out);
        let stmt = hoisted.as_ref().unwrap_or(stmt);
        let mut memo = HashMap::new();
        match stmt {
            Stmt::Let {
                var,
                value: Some(value),
                nodes,
            } if self.tangent_vars.contains_key(var) => {
                let tangent_var = self.tangent_vars[var];
                let mut nodes = nodes.clone();
                let span = self.nodes[*value].span;
                let v = &self.source.vars[*var];
                if v.dims.is_empty() && !v.slice {
                    let t = self.tangent(*value, &mut memo, &mut nodes);
                    let t = t.unwrap_or_else(|| self.zero(*var, &[], &mut nodes, span));
                    let pair = self.push(
                        NodeKind::Tuple(vec![*value, t]),
                        Num::Real,
                        span,
                        &mut nodes,
                    );
                    out.push(Stmt::Unpack {
                        vars: vec![*var, tangent_var],
                        value: pair,
                        nodes,
                    });
                    return;
                }
                // An array or a vector: its tangent in a statement of its own, first.
                let mut tangent_nodes = Vec::new();
                let t = self.whole_tangent(*value, *var, &mut tangent_nodes, span);
                out.push(Stmt::Let {
                    var: *var,
                    value: Some(*value),
                    nodes,
                });
                out.push(Stmt::Let {
                    var: tangent_var,
                    value: Some(t),
                    nodes: tangent_nodes,
                });
            }
            Stmt::Let {
                var, value: None, ..
            } if self.tangent_vars.contains_key(var) => {
                out.push(stmt.clone());
                let tangent_var = self.tangent_vars[var];
                // A deferred `let` is declared with a zero of the function's float type;
                // lanes start at their own zero, assigned later.
                let mut nodes = Vec::new();
                let value = self.lanes.is_some().then(|| {
                    self.vars[tangent_var].mutable = true;
                    self.zero(*var, &[], &mut nodes, Span::call_site())
                });
                out.push(Stmt::Let {
                    var: tangent_var,
                    value,
                    nodes,
                });
            }
            Stmt::Assign {
                place,
                value,
                nodes,
            }
            | Stmt::Push {
                place,
                value,
                nodes,
            } if self.tangent_vars.contains_key(&place.var) => {
                let push = matches!(stmt, Stmt::Push { .. });
                let tangent_var = self.tangent_vars[&place.var];
                let span = self.nodes[*value].span;
                if !self.scalar_place(place) {
                    // A whole array: its tangent first, then the value.
                    let mut tangent_nodes = Vec::new();
                    let t = self.whole_tangent(*value, place.var, &mut tangent_nodes, span);
                    let indices = place
                        .indices
                        .iter()
                        .map(|&i| self.copy_index(i, &mut tangent_nodes))
                        .collect();
                    out.push(Stmt::Assign {
                        place: Place {
                            var: tangent_var,
                            indices,
                        },
                        value: t,
                        nodes: tangent_nodes,
                    });
                    out.push(stmt.clone());
                    return;
                }
                let mut nodes = nodes.clone();
                let t = self.tangent(*value, &mut memo, &mut nodes);
                let t = t.unwrap_or_else(|| self.zero(place.var, &place.indices, &mut nodes, span));
                let pair = self.push(
                    NodeKind::Tuple(vec![*value, t]),
                    Num::Real,
                    span,
                    &mut nodes,
                );
                let (primal_tmp, tangent_tmp) = (self.temporary(), self.temporary());
                out.push(Stmt::Unpack {
                    vars: vec![primal_tmp, tangent_tmp],
                    value: pair,
                    nodes,
                });
                for (target, tmp) in [(place.var, primal_tmp), (tangent_var, tangent_tmp)] {
                    let mut nodes = Vec::new();
                    let indices = if push {
                        // The new element's index is the length of the vector pushed onto,
                        // before the push.
                        let whole = Place {
                            var: target,
                            indices: Vec::new(),
                        };
                        let len = self.push(NodeKind::Len(whole), Num::Int, span, &mut nodes);
                        vec![len]
                    } else {
                        place
                            .indices
                            .iter()
                            .map(|&i| self.copy_index(i, &mut nodes))
                            .collect()
                    };
                    let read = Place {
                        var: tmp,
                        indices: Vec::new(),
                    };
                    let value = self.push(NodeKind::Read(read), Num::Real, span, &mut nodes);
                    let place = Place {
                        var: target,
                        indices,
                    };
                    out.push(if push {
                        Stmt::Push {
                            place,
                            value,
                            nodes,
                        }
                    } else {
                        Stmt::Assign {
                            place,
                            value,
                            nodes,
                        }
                    });
                }
            }
            Stmt::Return { value, nodes } => {
                let mut nodes = nodes.clone();
                let span = self.nodes[*value].span;
                // The numbers returned: one, the parts of a tuple, or the elements of an
                // array returned whole.
                let (values, tangents) = match &self.source.nodes[*value].kind {
                    NodeKind::Read(place) if self.source.output.is_some() => {
                        // An array: its elements, and those of its tangent.
                        let count = output_count(self.source).unwrap_or(0);
                        let var = place.var;
                        let tangent = self.tangent_vars.get(&var).copied();
                        let mut values = Vec::with_capacity(count);
                        let mut tangents = Vec::with_capacity(count);
                        for k in 0..count {
                            values.push(self.element(var, k, span, &mut nodes));
                            tangents.push(match tangent {
                                Some(tangent) => self.element(tangent, k, span, &mut nodes),
                                None => self.real_constant("0.0", span, &mut nodes),
                            });
                        }
                        (values, tangents)
                    }
                    kind => {
                        let values = match kind {
                            NodeKind::Tuple(parts) => parts.clone(),
                            _ => vec![*value],
                        };
                        let mut tangents = Vec::with_capacity(values.len());
                        for &part in &values {
                            let t = match self.tangent(part, &mut memo, &mut nodes) {
                                Some(t) => t,
                                None => self.real_constant("0.0", span, &mut nodes),
                            };
                            tangents.push(t);
                        }
                        (values, tangents)
                    }
                };
                let parts = values.into_iter().chain(tangents).collect();
                let all = self.push(NodeKind::Tuple(parts), Num::Real, span, &mut nodes);
                out.push(Stmt::Return { value: all, nodes });
            }
            Stmt::Unpack { vars, value, nodes } if self.several_outputs(*value) => {
                self.unpack_call(vars, *value, nodes, out);
            }
            Stmt::Unpack { vars, value, nodes } => {
                // A call that carries no gradient: the tangents of the variables it
                // declares start at zero (a later statement may give them one).
                self.no_calls(nodes);
                out.push(stmt.clone());
                let span = self.nodes[*value].span;
                for var in vars {
                    if let Some(&tangent) = self.tangent_vars.get(var) {
                        let mut nodes = Vec::new();
                        let zero = self.zero(*var, &[], &mut nodes, span);
                        out.push(Stmt::Let {
                            var: tangent,
                            value: Some(zero),
                            nodes,
                        });
                    }
                }
            }
            Stmt::If {
                cond,
                nodes,
                then,
                otherwise,
            } => {
                self.no_calls(nodes);
                let then = self.block(then);
                let otherwise = self.block(otherwise);
                out.push(Stmt::If {
                    cond: *cond,
                    nodes: nodes.clone(),
                    then,
                    otherwise,
                });
            }
            Stmt::For {
                var,
                start,
                end,
                inclusive,
                body,
            } => {
                let body = self.block(body);
                out.push(Stmt::For {
                    var: *var,
                    start: start.clone(),
                    end: end.clone(),
                    inclusive: *inclusive,
                    body,
                });
            }
            Stmt::Loop {
                counter,
                count,
                max_trips,
                nodes,
                exits,
                body,
            } => {
                let body = self.block(body);
                out.push(Stmt::Loop {
                    counter: *counter,
                    count: *count,
                    max_trips: max_trips.clone(),
                    nodes: nodes.clone(),
                    exits: exits.clone(),
                    body,
                });
            }
            other => {
                self.no_calls(other.nodes());
                out.push(other.clone());
            }
        }
    }

    /// The tangent of a whole array or vector value written to `var`: the tangent of
    /// what it reads, or a zero of its shape.
    fn whole_tangent(
        &mut self,
        value: NodeId,
        var: VarId,
        out: &mut Vec<NodeId>,
        span: Span,
    ) -> NodeId {
        let node = self.source.nodes[value].clone();
        match node.kind {
            NodeKind::Read(place) if self.tangent_vars.contains_key(&place.var) => {
                let indices = place
                    .indices
                    .iter()
                    .map(|&i| self.copy_index(i, out))
                    .collect();
                let read = Place {
                    var: self.tangent_vars[&place.var],
                    indices,
                };
                self.push(NodeKind::Read(read), node.num, span, out)
            }
            NodeKind::Vector { element, len } => {
                let len = self.copy_index(len, out);
                let element = element
                    .map(|_| super::super::zeros(self.source.real, &self.source.vars[var].dims));
                self.push(NodeKind::Vector { element, len }, node.num, span, out)
            }
            _ => self.zero(var, &[], out, span),
        }
    }
}

/// The table entry named `name`.
fn table(name: &str) -> &'static Op {
    ops::OPS
        .iter()
        .find(|op| op.name == name)
        .unwrap_or(&ops::OPS[0])
}
