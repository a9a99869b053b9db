//! Code generation: the forward pass and the reverse sweep of `<name>_grad`.
//!
//! The forward pass is the body again, statement for statement, with every expression
//! split into one `let` per node (`__primal_N`). Where the reverse sweep will need a
//! value — a local partial from a rule, an operand of a product — it reads it back from
//! the same slot when the slot is still in scope, recomputes it when it cannot have changed
//! (a constant, an element of a parameter, an integer), and otherwise the forward pass
//! saves it in a tape slot on the stack: a scalar, or an array with one entry per loop
//! iteration (`__tape_N[__iter_D]`). Each `if` saves which branch it took.
//!
//! The reverse sweep walks the statements backwards: loops run in reverse, each `if` replays
//! its branch, and an assignment `place = value` passes the adjoint of `place` to the
//! nodes of `value`, then zeroes it (the old value was overwritten). Within a statement
//! the node adjoints (`__adjoint_N`) are declared at their first contribution; variables'
//! adjoints (`__adjoint_var_N`, arrays for arrays) are declared where the variable's scope
//! begins in reverse, so a loop-local variable starts from zero in every iteration.
//!
//! ```text
//! fn f(x: f64, y: f64) -> f64 { (x * y).tanh() }
//! ```
//! becomes (abridged)
//! ```text
//! let __primal_0 = x; let __primal_1 = y; let __primal_2 = __primal_0 * __primal_1;
//! let (__primal_3, __partial_3_0) = rules::tanh(__primal_2);
//! let mut __adjoint_var_0 = -0.0; let mut __adjoint_var_1 = -0.0;
//! let __adjoint_2 = __partial_3_0 * 1.0;
//! __adjoint_var_0 += __primal_1 * __adjoint_2; __adjoint_var_1 += __primal_0 * __adjoint_2;
//! (__primal_3, __adjoint_var_0, __adjoint_var_1)
//! ```

use crate::check::{differentiable_operands, Activity};
use crate::ir::{Block, Function, NodeId, NodeKind, Num, Place, Stmt, VarId, VarKind};
use crate::ops::{Partial, Syntax};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use std::collections::HashMap;

/// The name of the gradient function of `ident`: `f` → `f_grad`, with `f`'s span.
pub fn grad_ident(ident: &Ident) -> Ident {
    let name = ident.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name);
    Ident::new(&format!("{name}_grad"), ident.span())
}

/// A generated local. `Span::mixed_site` keeps it apart from the user's local variables;
/// the `__` prefix keeps it apart from the user's items (a `const` of the same name would
/// turn the `let` into a pattern, and mixed-site hygiene resolves items at the call site).
fn slot(kind: &str, id: usize) -> Ident {
    Ident::new(&format!("__{kind}_{id}"), Span::mixed_site())
}

fn partial_slot(node: NodeId, position: usize) -> Ident {
    Ident::new(&format!("__partial_{node}_{position}"), Span::mixed_site())
}

fn iter_slot(depth: usize) -> Ident {
    Ident::new(&format!("__iter_{depth}"), Span::mixed_site())
}

/// The path of a rule in the runtime, reached through the facade.
fn rule(name: &str) -> TokenStream {
    let name = Ident::new(name, Span::call_site());
    quote!(::autodiff::__private::rules::#name)
}

/// `f64`, or `[[f64; M]; N]` for dimensions `[N, M]`.
fn real_type(dims: &[TokenStream]) -> TokenStream {
    dims.iter()
        .rev()
        .fold(quote!(f64), |inner, dim| quote!([#inner; #dim]))
}

/// `0.0`, or `[[0.0; M]; N]` for dimensions `[N, M]`.
fn zeros(dims: &[TokenStream]) -> TokenStream {
    filled(dims, quote!(0.0f64))
}

/// An adjoint with no contribution yet: `-0.0`, the exact identity of `+` (`-0.0 + x` is
/// `x` for every `x`, so the compiler folds the first `+=` away; `0.0 + -0.0` would not be).
fn no_adjoint(dims: &[TokenStream]) -> TokenStream {
    filled(dims, quote!(-0.0f64))
}

fn filled(dims: &[TokenStream], value: TokenStream) -> TokenStream {
    dims.iter()
        .rev()
        .fold(value, |inner, dim| quote!([#inner; #dim]))
}

/// The signature of `<name>_grad`: the user's parameters; the value, then one partial
/// (of the parameter's shape) per differentiated parameter.
pub fn signature(function: &Function) -> TokenStream {
    let original = &function.original;
    let vis = &original.vis;
    let name = grad_ident(&original.sig.ident);
    let params = function.params.iter().map(|p| {
        let mutability = function.vars[p.var].mutable.then(|| quote!(mut));
        let ident = &p.ident;
        let ty = &p.ty;
        quote!(#mutability #ident: #ty)
    });
    let outputs = std::iter::once(quote!(f64)).chain(
        function
            .wrt
            .iter()
            .map(|&i| real_type(&function.vars[function.params[i].var].dims)),
    );
    let cfgs = original.attrs.iter().filter(|a| a.path().is_ident("cfg"));
    let doc = doc(function);
    quote! {
        #(#cfgs)*
        #[doc = #doc]
        #[must_use]
        #[inline]
        #[allow(unused_variables, unused_mut, unused_assignments, unused_parens)]
        #[allow(clippy::all, clippy::pedantic, clippy::nursery)]
        #vis fn #name(#(#params),*) -> (#(#outputs),*)
    }
}

fn doc(function: &Function) -> String {
    let name = function.original.sig.ident.to_string();
    let params: Vec<String> = function
        .params
        .iter()
        .map(|p| p.ident.to_string())
        .collect();
    let partials: Vec<String> = function
        .wrt
        .iter()
        .map(|&i| format!("∂{name}/∂{}", params[i]))
        .collect();
    format!(
        " Value and gradient of [`{name}`], generated by `#[grad]`.\n\n Returns `({name}({}), {})`.",
        params.join(", "),
        partials.join(", ")
    )
}

/// The whole `<name>_grad` function.
pub fn gradient_fn(function: &Function, activity: &Activity) -> TokenStream {
    let signature = signature(function);
    let items = &function.items;
    let mut gen = Generator {
        function,
        activity,
        tapes: Vec::new(),
        factors: HashMap::new(),
        flags: HashMap::new(),
        loops: Vec::new(),
        in_branch: false,
        iterated: Vec::new(),
        result: None,
        reached: Vec::new(),
    };
    let forward = gen.forward_block(&function.body);
    let reverse = gen.reverse_block(&function.body, true);
    let tapes = &gen.tapes;
    let value = gen.result.clone().unwrap_or_else(|| quote!(0.0));

    // Mixed-site hygiene: a parameter named like the function cannot shadow it here.
    let original = &function.original.sig.ident;
    let name = Ident::new(
        &original.to_string(),
        Span::mixed_site().located_at(original.span()),
    );
    let param_types = function.params.iter().map(|p| &p.ty);
    let partials = function.wrt.iter().map(|&index| {
        let var = function.params[index].var;
        let adjoint = slot("adjoint_var", var);
        let always_reached = gen.reached.contains(&var) && !function.vars[var].reassigned;
        if activity.var(var) && function.vars[var].dims.is_empty() && !always_reached {
            // `+ 0.0` turns a `-0.0` (no contribution) into `0.0`; other values pass.
            quote!(#adjoint + 0.0)
        } else if activity.var(var) {
            adjoint.into_token_stream()
        } else {
            zeros(&function.vars[var].dims)
        }
    });
    quote! {
        #signature {
            // Using `<name>_grad` uses `<name>`: no dead-code warning on the original.
            let _ = #name as fn(#(#param_types),*) -> f64;
            #(#items)*
            #(#tapes)*
            #forward
            #reverse
            (#value, #(#partials),*)
        }
    }
}

/// An enclosing loop, as the code generator sees it.
struct Loop {
    /// The number of iterations, a constant expression of type `usize`.
    trips: TokenStream,
    /// The variables the loop writes (in its body, at any depth).
    writes: Vec<VarId>,
    /// Whether the loop itself is inside a branch.
    in_branch: bool,
    /// Copies of variables taken just before the loop (forward statements), for reads
    /// inside it of variables it never writes.
    snapshots: TokenStream,
    /// The variables copied so far, with how the reverse sweep reads each copy.
    copied: Vec<(VarId, TokenStream)>,
}

/// The variables a block writes, at any depth.
fn written(block: &Block, out: &mut Vec<VarId>) {
    for stmt in block {
        match stmt {
            Stmt::Let { var, .. } => out.push(*var),
            Stmt::Assign { place, .. } => out.push(place.var),
            Stmt::For { var, body, .. } => {
                out.push(*var);
                written(body, out);
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                written(then, out);
                written(otherwise, out);
            }
            Stmt::Eval { .. } | Stmt::Return { .. } => {}
        }
    }
}

struct Generator<'a> {
    function: &'a Function,
    activity: &'a Activity,
    /// Declarations of the tape slots, emitted before the forward pass.
    tapes: Vec<TokenStream>,
    /// For `(node, position)`: how the reverse sweep reads that partial of the node.
    factors: HashMap<(NodeId, usize), TokenStream>,
    /// For each `if` (by its condition node): how the reverse sweep reads the branch taken.
    flags: HashMap<NodeId, TokenStream>,
    /// The loops around the statement being generated, outermost first.
    loops: Vec<Loop>,
    /// Whether the statement being generated is inside a branch.
    in_branch: bool,
    /// The loops (by loop variable) whose bodies use a tape, so need an iteration index.
    iterated: Vec<VarId>,
    /// The slot of the returned value.
    result: Option<TokenStream>,
    /// Variables whose adjoint gets a contribution on every path (outside loops and
    /// branches), so cannot end as the `-0.0` it starts from.
    reached: Vec<VarId>,
}

impl Generator<'_> {
    /// Whether values computed here are out of the reverse sweep's scope (inside a loop
    /// body or a branch), so must be saved or recomputed.
    fn scoped(&self) -> bool {
        !self.loops.is_empty() || self.in_branch
    }

    /// The slot holding a variable: a parameter keeps its name.
    fn var_slot(&self, var: VarId) -> TokenStream {
        let v = &self.function.vars[var];
        if v.is_param {
            let param = self.function.params.iter().find(|p| p.var == var);
            if let Some(param) = param {
                return param.ident.to_token_stream();
            }
        }
        slot("var", var).into_token_stream()
    }

    /// `slot[i][j]` for a place, reading the index nodes' slots.
    fn place(&self, place: &Place, base: TokenStream) -> TokenStream {
        let indices = place.indices.iter().map(|&i| slot("primal", i));
        quote!(#base #([#indices])*)
    }

    /// Saves `value` (computed in the forward pass) for the reverse sweep. Returns the
    /// forward statement and the reverse expression.
    fn save(
        &mut self,
        value: TokenStream,
        ty: TokenStream,
        zero: TokenStream,
    ) -> (TokenStream, TokenStream) {
        if !self.scoped() {
            // Still in scope in the reverse sweep: read it back directly.
            return (TokenStream::new(), value);
        }
        let tape = slot("tape", self.tapes.len());
        if self.loops.is_empty() {
            self.tapes.push(quote!(let mut #tape: #ty = #zero;));
            (quote!(#tape = #value;), tape.into_token_stream())
        } else {
            let size = self.loops.iter().map(|l| &l.trips);
            self.tapes
                .push(quote!(let mut #tape = [#zero; 1 #(* #size)*];));
            let iter = iter_slot(self.loops.len());
            (quote!(#tape[#iter] = #value;), quote!(#tape[#iter]))
        }
    }

    /// A read of `var` inside loops that do not write it has the value `var` had when the
    /// outermost such loop started: copy `var` once, just before that loop (per iteration of
    /// the loops around it), rather than saving every read. Returns how the reverse sweep
    /// reads the copy, or `None` when the innermost loop writes `var`.
    fn snapshot(&mut self, var: VarId) -> Option<TokenStream> {
        let level = self.loops.iter().position(|l| !l.writes.contains(&var))?;
        if let Some((_, copy)) = self.loops[level].copied.iter().find(|(v, _)| *v == var) {
            return Some(copy.clone());
        }
        let dims = &self.function.vars[var].dims;
        let (ty, zero) = (real_type(dims), zeros(dims));
        let value = self.var_slot(var);
        let tape = slot("tape", self.tapes.len());
        let (save, read) = if level == 0 && !self.loops[0].in_branch {
            // Before an outermost loop outside any branch: a plain copy stays in scope.
            self.tapes.push(TokenStream::new()); // reserves the name
            (quote!(let #tape: #ty = #value;), tape.to_token_stream())
        } else if level == 0 {
            self.tapes.push(quote!(let mut #tape: #ty = #zero;));
            (quote!(#tape = #value;), tape.to_token_stream())
        } else {
            let size = self.loops[..level].iter().map(|l| &l.trips);
            self.tapes
                .push(quote!(let mut #tape = [#zero; 1 #(* #size)*];));
            let iter = iter_slot(level);
            (quote!(#tape[#iter] = #value;), quote!(#tape[#iter]))
        };
        let outer = &mut self.loops[level];
        outer.snapshots.extend(save);
        outer.copied.push((var, read.clone()));
        Some(read)
    }

    /// How the reverse sweep gets the value of `node`: read back from its slot while in
    /// scope, recomputed when it cannot have changed (a constant, an integer, an element of
    /// a parameter that is never assigned), else saved by the forward pass.
    fn reverse_value(&mut self, node: NodeId) -> (TokenStream, TokenStream) {
        let primal = slot_of(node);
        if !self.scoped() {
            return (TokenStream::new(), primal);
        }
        match &self.function.nodes[node].kind {
            NodeKind::Const(tokens) => (TokenStream::new(), tokens.clone()),
            NodeKind::Read(place) => {
                let var = &self.function.vars[place.var];
                if var.kind == VarKind::Int || (var.is_param && !var.reassigned) {
                    // The index slots are recomputed by the reverse statement's prelude.
                    (
                        TokenStream::new(),
                        self.place(place, self.var_slot(place.var)),
                    )
                } else if let Some(copy) = self.snapshot(place.var) {
                    (TokenStream::new(), self.place(place, copy))
                } else {
                    self.save(primal, quote!(f64), quote!(0.0f64))
                }
            }
            _ => self.save(primal, quote!(f64), quote!(0.0f64)),
        }
    }

    // ----- forward -------------------------------------------------------------------

    fn forward_block(&mut self, block: &Block) -> TokenStream {
        block.iter().map(|stmt| self.forward_stmt(stmt)).collect()
    }

    fn forward_stmt(&mut self, stmt: &Stmt) -> TokenStream {
        let nodes = self.forward_nodes(stmt.nodes());
        match stmt {
            Stmt::Let { var, value, .. } => {
                let slot = self.var_slot(*var);
                let v = &self.function.vars[*var];
                let mutability = v.mutable.then(|| quote!(mut));
                match value {
                    Some(value) => {
                        let value = slot_of(*value);
                        quote!(#nodes let #mutability #slot = #value;)
                    }
                    None => {
                        let ty = real_type(&v.dims);
                        quote!(let #mutability #slot: #ty;)
                    }
                }
            }
            Stmt::Assign { place, value, .. } => {
                let target = self.place(place, self.var_slot(place.var));
                let value = slot_of(*value);
                quote!(#nodes #target = #value;)
            }
            Stmt::Eval { .. } => nodes,
            Stmt::Return { value, .. } => {
                self.result = Some(slot_of(*value));
                nodes
            }
            Stmt::If {
                cond: cond_id,
                then,
                otherwise,
                ..
            } => {
                let cond = slot_of(*cond_id);
                let (save, read) = self.save(cond.clone(), quote!(bool), quote!(false));
                self.flags.insert(*cond_id, read);
                let outer = std::mem::replace(&mut self.in_branch, true);
                let then = self.forward_block(then);
                let otherwise = self.forward_block(otherwise);
                self.in_branch = outer;
                quote! {
                    #nodes
                    #save
                    if #cond { #then } else { #otherwise }
                }
            }
            Stmt::For {
                var,
                start,
                end,
                inclusive,
                body,
            } => {
                let mut writes = Vec::new();
                written(body, &mut writes);
                let (index, trips, range) = self.enter_loop(*var, start, end, *inclusive, writes);
                let tapes_before = self.tapes.len();
                let body = self.forward_block(body);
                let depth = self.loops.len();
                let snapshots = self.loops.pop().map(|l| l.snapshots).unwrap_or_default();
                let iter = if self.tapes.len() > tapes_before {
                    self.iterated.push(*var);
                    self.iteration(depth, &index, start, &trips)
                } else {
                    TokenStream::new()
                };
                quote! {
                    #snapshots
                    for #index in #range {
                        #iter
                        #body
                    }
                }
            }
        }
    }

    /// Pushes a loop (the forward pass passes the variables it writes, for snapshots).
    /// Returns the loop variable's slot, the number of iterations and the range.
    fn enter_loop(
        &mut self,
        var: VarId,
        start: &TokenStream,
        end: &TokenStream,
        inclusive: bool,
        writes: Vec<VarId>,
    ) -> (TokenStream, TokenStream, TokenStream) {
        let trips = trips(start, end, inclusive);
        self.loops.push(Loop {
            trips: trips.clone(),
            writes,
            in_branch: self.in_branch,
            snapshots: TokenStream::new(),
            copied: Vec::new(),
        });
        (self.var_slot(var), trips, range(start, end, inclusive))
    }

    /// `let __iter_D = __iter_{D-1} * trips + (i - start) as usize;`
    fn iteration(
        &self,
        depth: usize,
        index: &TokenStream,
        start: &TokenStream,
        trips: &TokenStream,
    ) -> TokenStream {
        let iter = iter_slot(depth);
        let step = quote!(((#index - (#start)) as usize));
        if depth == 1 {
            quote!(let #iter: usize = #step;)
        } else {
            let outer = iter_slot(depth - 1);
            quote!(let #iter: usize = #outer * #trips + #step;)
        }
    }

    /// One `let` per node, in order; and what the reverse sweep will need of each.
    fn forward_nodes(&mut self, ids: &[NodeId]) -> TokenStream {
        let mut out = TokenStream::new();
        for &id in ids {
            out.extend(self.forward_node(id));
        }
        out
    }

    fn forward_node(&mut self, id: NodeId) -> TokenStream {
        let function = self.function;
        let activity = self.activity;
        let node = &function.nodes[id];
        let binding = slot("primal", id);
        let arg = |node: NodeId| slot_of(node);
        let active_arg = |arg: NodeId| activity.node(id) && activity.node(arg);
        match &node.kind {
            NodeKind::Const(tokens) => quote!(let #binding = #tokens;),
            NodeKind::Read(place) => {
                let value = self.place(place, self.var_slot(place.var));
                quote!(let #binding = #value;)
            }
            NodeKind::StopGradient(value) => {
                let value = arg(*value);
                quote!(let #binding = #value;)
            }
            NodeKind::Cast { arg: value, ty } => {
                let value = arg(*value);
                quote!(let #binding = #value as #ty;)
            }
            NodeKind::Typed { arg: value, ty } => {
                let value = arg(*value);
                quote!(let #binding: #ty = #value;)
            }
            NodeKind::Infix { op, lhs, rhs } => {
                let (lhs, rhs) = (arg(*lhs), arg(*rhs));
                quote!(let #binding = #lhs #op #rhs;)
            }
            NodeKind::Not(value) => {
                let value = arg(*value);
                quote!(let #binding = !#value;)
            }
            NodeKind::Op { op, args } => {
                let values: Vec<TokenStream> = args.iter().map(|&a| arg(a)).collect();
                let reals = differentiable_operands(&node.kind);
                let active: Vec<usize> = reals
                    .iter()
                    .filter(|(_, a)| active_arg(*a))
                    .map(|(real, _)| *real)
                    .collect();
                let mut out = if active.is_empty() || !op.calls_rule() {
                    let value = primal_expr(op, &values);
                    quote!(let #binding = #value;)
                } else {
                    let single = match active.as_slice() {
                        [only] => op.rule_wrt_only.get(*only).copied().flatten(),
                        _ => None,
                    };
                    let (rule_name, partials): (&str, Vec<TokenStream>) = match single {
                        Some(name) => (name, vec![partial_slot(id, active[0]).into_token_stream()]),
                        None => (
                            op.rule,
                            (0..reals.len())
                                .map(|real| {
                                    if active.contains(&real) {
                                        partial_slot(id, real).into_token_stream()
                                    } else {
                                        quote!(_)
                                    }
                                })
                                .collect(),
                        ),
                    };
                    let rule = rule(rule_name);
                    quote!(let (#binding, #(#partials),*) = #rule(#(#values),*);)
                };
                // What the reverse sweep needs: each active operand's partial.
                for &real in &active {
                    let (save, factor) = match op.partials[real] {
                        Partial::One | Partial::MinusOne => continue,
                        Partial::Primal(other) => self.reverse_value(args[other]),
                        Partial::Rule(_) => {
                            let partial = partial_slot(id, real).into_token_stream();
                            self.save(partial, quote!(f64), quote!(0.0f64))
                        }
                    };
                    out.extend(save);
                    self.factors.insert((id, real), factor);
                }
                out
            }
            NodeKind::Call { path, args } => {
                let values: Vec<TokenStream> = args.iter().map(|&a| arg(a)).collect();
                if !activity.node(id) {
                    return quote_spanned!(node.span=> let #binding: f64 = #path(#(#values),*););
                }
                let mut grad_path = path.clone();
                let single = grad_path.segments.len() == 1 && grad_path.leading_colon.is_none();
                if let Some(last) = grad_path.segments.last_mut() {
                    last.ident = grad_ident(&last.ident);
                    if single {
                        // Mixed-site: a parameter named `g_grad` cannot shadow the function.
                        let span = Span::mixed_site().located_at(last.ident.span());
                        last.ident.set_span(span);
                    }
                }
                let partials: Vec<TokenStream> = args
                    .iter()
                    .enumerate()
                    .map(|(position, &a)| {
                        if active_arg(a) {
                            partial_slot(id, position).into_token_stream()
                        } else {
                            quote!(_)
                        }
                    })
                    .collect();
                let types = std::iter::repeat(quote!(f64)).take(args.len() + 1);
                let mut out = quote_spanned! {node.span=>
                    let (#binding, #(#partials),*): (#(#types),*) = #grad_path(#(#values),*);
                };
                for (position, &a) in args.iter().enumerate() {
                    if active_arg(a) {
                        let partial = partial_slot(id, position).into_token_stream();
                        let (save, factor) = self.save(partial, quote!(f64), quote!(0.0f64));
                        out.extend(save);
                        self.factors.insert((id, position), factor);
                    }
                }
                out
            }
        }
    }

    // ----- reverse -------------------------------------------------------------------

    /// The reverse of a block: integer locals recomputed (when out of scope), adjoints of
    /// the block's variables declared, then the statements in reverse order.
    fn reverse_block(&mut self, block: &Block, top: bool) -> TokenStream {
        let mut prelude = TokenStream::new();
        let mut declarations = TokenStream::new();
        if top {
            for param in &self.function.params {
                declarations.extend(self.adjoint_declaration(param.var));
            }
        }
        for stmt in block {
            if let Stmt::Let { var, value, nodes } = stmt {
                let v = &self.function.vars[*var];
                if v.kind == VarKind::Int && self.scoped() {
                    let nodes = self.recompute_nodes(nodes);
                    let slot = self.var_slot(*var);
                    let value = value.map(slot_of);
                    prelude.extend(quote!(#nodes let #slot = #value;));
                }
                declarations.extend(self.adjoint_declaration(*var));
            }
        }
        let mut statements = TokenStream::new();
        for stmt in block.iter().rev() {
            statements.extend(self.reverse_stmt(stmt));
        }
        if statements.is_empty() {
            return TokenStream::new();
        }
        quote!(#prelude #declarations #statements)
    }

    fn adjoint_declaration(&self, var: VarId) -> TokenStream {
        if !self.activity.var(var) {
            return TokenStream::new();
        }
        let adjoint = slot("adjoint_var", var);
        let start = no_adjoint(&self.function.vars[var].dims);
        quote!(let mut #adjoint = #start;)
    }

    /// Integer nodes of a statement again, for indices in the reverse sweep (only when the
    /// forward slots are out of scope).
    fn recompute_nodes(&self, ids: &[NodeId]) -> TokenStream {
        if !self.scoped() {
            return TokenStream::new();
        }
        let mut out = TokenStream::new();
        for &id in ids {
            let node = &self.function.nodes[id];
            if matches!(node.num, Num::Int | Num::Unknown) && self.recomputable(id) {
                let binding = slot("primal", id);
                let value = match &node.kind {
                    NodeKind::Const(tokens) => tokens.clone(),
                    NodeKind::Read(place) => self.place(place, self.var_slot(place.var)),
                    NodeKind::Op { op, args } => {
                        let values: Vec<TokenStream> = args.iter().map(|&a| slot_of(a)).collect();
                        primal_expr(op, &values)
                    }
                    NodeKind::Infix { op, lhs, rhs } => {
                        let (lhs, rhs) = (slot_of(*lhs), slot_of(*rhs));
                        quote!(#lhs #op #rhs)
                    }
                    NodeKind::Cast { arg, ty } => {
                        let arg = slot_of(*arg);
                        quote!(#arg as #ty)
                    }
                    NodeKind::Typed { arg, ty } => {
                        let arg = slot_of(*arg);
                        out.extend(quote!(let #binding: #ty = #arg;));
                        continue;
                    }
                    _ => continue,
                };
                out.extend(quote!(let #binding = #value;));
            }
        }
        out
    }

    fn recomputable(&self, id: NodeId) -> bool {
        crate::ir::recomputable(&self.function.nodes, &self.function.vars, id)
    }

    fn reverse_stmt(&mut self, stmt: &Stmt) -> TokenStream {
        match stmt {
            Stmt::Let {
                var,
                value: Some(value),
                nodes,
            } => {
                if !self.activity.var(*var) || !self.activity.node(*value) {
                    return TokenStream::new();
                }
                let seed = slot("adjoint_var", *var).into_token_stream();
                let prelude = self.recompute_nodes(nodes);
                let body = self.propagate(*value, seed, nodes);
                quote!(#prelude #body)
            }
            Stmt::Assign {
                place,
                value,
                nodes,
            } => {
                if !self.activity.var(place.var) {
                    return TokenStream::new();
                }
                let prelude = self.recompute_nodes(nodes);
                let target = self.place(place, slot("adjoint_var", place.var).into_token_stream());
                if !self.activity.node(*value) {
                    return quote!(#prelude #target = -0.0;);
                }
                let seed = slot("seed", *value);
                let body = self.propagate(*value, seed.to_token_stream(), nodes);
                quote! {
                    #prelude
                    let #seed = #target;
                    #target = -0.0;
                    #body
                }
            }
            Stmt::Return { value, nodes } => {
                if !self.activity.node(*value) {
                    return TokenStream::new();
                }
                self.propagate(*value, quote!(1.0), nodes)
            }
            Stmt::Let { value: None, .. } | Stmt::Eval { .. } => TokenStream::new(),
            Stmt::If {
                cond,
                then,
                otherwise,
                ..
            } => {
                let flag = self
                    .flags
                    .get(cond)
                    .cloned()
                    .unwrap_or_else(|| quote!(false));
                let outer = std::mem::replace(&mut self.in_branch, true);
                let then = self.reverse_block(then, false);
                let otherwise = self.reverse_block(otherwise, false);
                self.in_branch = outer;
                if then.is_empty() && otherwise.is_empty() {
                    return TokenStream::new();
                }
                quote!(if #flag { #then } else { #otherwise })
            }
            Stmt::For {
                var,
                start,
                end,
                inclusive,
                body,
            } => {
                let (index, trips, range) =
                    self.enter_loop(*var, start, end, *inclusive, Vec::new());
                let depth = self.loops.len();
                let body = self.reverse_block(body, false);
                self.loops.pop();
                if body.is_empty() {
                    return TokenStream::new();
                }
                let iter = if self.iterated.contains(var) {
                    self.iteration(depth, &index, start, &trips)
                } else {
                    TokenStream::new()
                };
                quote! {
                    for #index in (#range).rev() {
                        #iter
                        #body
                    }
                }
            }
        }
    }

    /// Passes `seed`, the adjoint of the statement's value `root`, to the nodes of the
    /// statement in reverse order, and from reads to the adjoints of variables.
    fn propagate(&mut self, root: NodeId, seed: TokenStream, ids: &[NodeId]) -> TokenStream {
        struct Contribution {
            target: NodeId,
            negate: bool,
            factor: Option<TokenStream>,
            source: TokenStream,
        }
        let nodes = &self.function.nodes;
        let mut contributions = vec![Contribution {
            target: root,
            negate: false,
            factor: None,
            source: seed,
        }];
        for &id in ids.iter().rev() {
            if !self.activity.node(id) {
                continue;
            }
            let kind = &nodes[id].kind;
            for (real, arg) in differentiable_operands(kind) {
                if !self.activity.node(arg) {
                    continue;
                }
                let (negate, factor) = match kind {
                    NodeKind::Op { op, .. } => match op.partials[real] {
                        Partial::One => (false, None),
                        Partial::MinusOne => (true, None),
                        Partial::Primal(_) | Partial::Rule(_) => {
                            (false, self.factors.get(&(id, real)).cloned())
                        }
                    },
                    NodeKind::Call { .. } => (false, self.factors.get(&(id, real)).cloned()),
                    _ => (false, None),
                };
                contributions.push(Contribution {
                    target: arg,
                    negate,
                    factor,
                    source: slot("adjoint", id).into_token_stream(),
                });
            }
        }

        let mut remaining: HashMap<NodeId, usize> = HashMap::new();
        for c in &contributions {
            *remaining.entry(c.target).or_default() += 1;
        }
        let mut declared: HashMap<NodeId, bool> = HashMap::new();
        let mut out = TokenStream::new();
        for c in contributions {
            let source = &c.source;
            let term = match &c.factor {
                Some(factor) => quote!(#factor * #source),
                None => quote!(#source),
            };
            if let NodeKind::Read(place) = &nodes[c.target].kind {
                // A read passes its adjoint on to the variable (or element) it read.
                if !self.scoped() {
                    self.reached.push(place.var);
                }
                let target = self.place(place, slot("adjoint_var", place.var).into_token_stream());
                out.extend(if c.negate {
                    quote!(#target -= #term;)
                } else {
                    quote!(#target += #term;)
                });
                continue;
            }
            let target = slot("adjoint", c.target);
            let statement = if declared.get(&c.target).copied().unwrap_or(false) {
                if c.negate {
                    quote!(#target -= #term;)
                } else {
                    quote!(#target += #term;)
                }
            } else {
                declared.insert(c.target, true);
                let mutability = (remaining[&c.target] > 1).then(|| quote!(mut));
                if c.negate {
                    quote!(let #mutability #target = -#term;)
                } else {
                    quote!(let #mutability #target = #term;)
                }
            };
            out.extend(statement);
        }
        out
    }
}

fn slot_of(node: NodeId) -> TokenStream {
    slot("primal", node).into_token_stream()
}

/// The plain primal computation of an operation (no partials).
fn primal_expr(op: &crate::ops::Op, values: &[TokenStream]) -> TokenStream {
    match op.syntax {
        Syntax::Operator(symbol) => {
            let symbol = match symbol {
                "+" => quote!(+),
                "-" => quote!(-),
                "*" => quote!(*),
                _ => quote!(/),
            };
            match values {
                [x] => quote!(#symbol #x),
                [x, y] => quote!(#x #symbol #y),
                _ => quote!(),
            }
        }
        Syntax::Method => {
            let name = Ident::new(op.name, Span::call_site());
            quote!(<::core::primitive::f64>::#name(#(#values),*))
        }
        Syntax::ExtMethod => {
            let name = Ident::new(op.name, Span::call_site());
            quote!(<::core::primitive::f64 as ::autodiff::__private::F64Ext>::#name(#(#values),*))
        }
    }
}

/// The number of iterations of `start..end` (or `..=`), a constant `usize` expression.
fn trips(start: &TokenStream, end: &TokenStream, inclusive: bool) -> TokenStream {
    if inclusive {
        quote!((((#end) + 1 - (#start)) as usize))
    } else {
        quote!((((#end) - (#start)) as usize))
    }
}

fn range(start: &TokenStream, end: &TokenStream, inclusive: bool) -> TokenStream {
    if inclusive {
        quote!((#start)..=(#end))
    } else {
        quote!((#start)..(#end))
    }
}
