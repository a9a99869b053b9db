//! The reverse sweep: statements backwards, adjoints passed from users to operands.

use super::*;
use crate::ir::{CallArg, Callee};

/// The most numbers of an array adjoint that a loop's reverse tests for zero before it
/// runs ([`Generator::zero_seeds`]).
const MAX_TESTED: usize = 64;

/// The fewest iterations of a loop with no loop inside for which the reverse sweep tests
/// whether it can be skipped.
const MIN_TESTED_TRIPS: usize = 8;

impl Generator<'_> {
    // ----- reverse -------------------------------------------------------------------

    /// The reverse of a block: integer locals recomputed (when out of scope), adjoints of
    /// the block's variables declared, then the statements in reverse order.
    pub(super) fn reverse_block(&mut self, block: &Block, top: bool) -> TokenStream {
        let mut prelude = TokenStream::new();
        let mut declarations = TokenStream::new();
        if top && !self.in_sum {
            for param in &self.function.params {
                declarations.extend(self.adjoint_declaration(param.var));
            }
        }
        for stmt in block {
            if let Stmt::Unpack { vars, .. } = stmt {
                for &var in vars {
                    declarations.extend(self.adjoint_declaration(var));
                }
            }
            if let Stmt::Let { var, value, nodes } = stmt {
                let v = &self.function.vars[*var];
                if v.kind == VarKind::Int && v.stable && self.scoped() {
                    let nodes = self.recompute_nodes(nodes);
                    let slot = self.var_slot(*var);
                    let value = value.map(|v| self.slot_of(v));
                    prelude.extend(quote!(#nodes let #slot = #value;));
                }
                if v.slice && self.activity.var(*var) {
                    declarations.extend(self.vector_adjoint(*var, *value, nodes));
                } else if top && self.activity.var(*var) && self.rebinds(*var) {
                    // Declared where the sweep first needs it (`declare_before`,
                    // `propagate`).
                    self.undeclared.insert(*var);
                    self.unread.insert(*var);
                } else {
                    declarations.extend(self.adjoint_declaration(*var));
                }
            }
        }
        let mut statements = TokenStream::new();
        for stmt in block.iter().rev() {
            if top {
                statements.extend(self.declare_before(stmt));
            }
            statements.extend(self.reverse_stmt(stmt));
        }
        if statements.is_empty() {
            return TokenStream::new();
        }
        quote!(#prelude #declarations #statements)
    }

    /// The adjoint of a local vector: a vector of its final length (allocated, as the
    /// original allocates the vector itself).
    fn vector_adjoint(&self, var: VarId, value: Option<NodeId>, nodes: &[NodeId]) -> TokenStream {
        let adjoint = slot("adjoint_var", var);
        let element = self.no_adjoint(&self.function.vars[var].dims);
        if let Some(len) = self.final_lengths.get(&var) {
            // Declared in a branch, where the vector itself is out of scope.
            return quote!(let mut #adjoint = ::autodiff::__private::vec![#element; #len];);
        }
        let len = match value.map(|v| &self.function.nodes[v].kind) {
            Some(NodeKind::Vector { len, .. }) if self.scoped() => {
                let recompute = self.recompute_nodes(nodes);
                let len = self.slot_of(*len);
                quote!({ #recompute #len })
            }
            _ => {
                let vector = self.var_slot(var);
                quote!(#vector.len())
            }
        };
        quote!(let mut #adjoint = ::autodiff::__private::vec![#element; #len];)
    }

    /// The declarations, as `-0.0`, of the not yet declared adjoints (of the outermost
    /// block's scalar variables) that the reverse of `stmt` may name other than by adding
    /// to them: a statement's seed, and any adjoint named in a loop or a branch. An
    /// adjoint that is first added to is declared by that contribution instead
    /// (`let mut a = t;`, see [`Self::propagate`]), so that each lives only from its first
    /// contribution to its variable's definition, as the original's values do.
    fn declare_before(&mut self, stmt: &Stmt) -> TokenStream {
        let mut named = Vec::new();
        match stmt {
            Stmt::Let { var, .. } => named.push(*var),
            Stmt::Unpack { vars, .. } => named.extend(vars),
            Stmt::Assign { place, .. } | Stmt::Push { place, .. } => named.push(place.var),
            Stmt::Eval { .. } | Stmt::Return { .. } | Stmt::SetFlag { .. } => {}
            Stmt::For { .. } | Stmt::Loop { .. } | Stmt::If { .. } => {
                crate::ir::mentions(&self.function.nodes, std::slice::from_ref(stmt), &mut named);
            }
        }
        named.retain(|var| self.undeclared.remove(var));
        named
            .into_iter()
            .map(|var| self.adjoint_declaration(var))
            .collect()
    }

    pub(super) fn adjoint_declaration(&self, var: VarId) -> TokenStream {
        let v = &self.function.vars[var];
        let field = self.function.field(var).is_some();
        if !self.activity.var(var) || (v.is_param && v.slice) || field {
            // A slice's adjoint is the caller's buffer, a parameter of `_grad_into`; a
            // field's is the same field of the caller's buffer for its struct.
            return TokenStream::new();
        }
        let adjoint = slot("adjoint_var", var);
        let start = self.no_adjoint(&self.function.vars[var].dims);
        quote!(let mut #adjoint = #start;)
    }

    /// Integer nodes of a statement again, for indices in the reverse sweep (only when the
    /// forward slots are out of scope).
    pub(super) fn recompute_nodes(&self, ids: &[NodeId]) -> TokenStream {
        if !self.scoped() {
            return TokenStream::new();
        }
        let mut out = TokenStream::new();
        for &id in ids {
            let node = &self.function.nodes[id];
            if let Some(read) = self.restored.get(&id) {
                let binding = slot("primal", id);
                let usize = usize_type();
                out.extend(quote!(let #binding: #usize = #read;));
                continue;
            }
            // A `bool` too: a constant call computed again passes it (`h(PI, true)`).
            if matches!(node.num, Num::Int | Num::Bool | Num::Unknown | Num::Opaque)
                && self.recomputable(id)
            {
                let binding = slot("primal", id);
                let value = match &node.kind {
                    NodeKind::Const(tokens) => tokens.clone(),
                    NodeKind::Read(place) => self.place(place, self.var_slot(place.var)),
                    NodeKind::Op { op, args } => {
                        let values: Vec<TokenStream> =
                            args.iter().map(|&a| self.slot_of(a)).collect();
                        primal_expr(self.function.real, op, &values)
                    }
                    NodeKind::Infix { op, lhs, rhs } => {
                        let (lhs, rhs) = (self.slot_of(*lhs), self.slot_of(*rhs));
                        quote!(#lhs #op #rhs)
                    }
                    NodeKind::Cast { arg, ty } => {
                        let arg = self.slot_of(*arg);
                        quote!(#arg as #ty)
                    }
                    NodeKind::Typed { arg, ty } => {
                        let arg = self.slot_of(*arg);
                        out.extend(quote!(let #binding: #ty = #arg;));
                        continue;
                    }
                    NodeKind::Len(place) => {
                        let var = self.var_slot(place.var);
                        let indices = place.indices.iter().map(|&i| self.slot_of(i));
                        quote!(#var #([#indices])*.len())
                    }
                    NodeKind::Intrinsic {
                        function,
                        args,
                        field,
                    } => self.intrinsic(function, args, field),
                    NodeKind::ConstElement { table, indices } => {
                        let indices = indices.iter().map(|&i| self.slot_of(i));
                        quote!(#table #([#indices])*)
                    }
                    _ => continue,
                };
                out.extend(quote!(let #binding = #value;));
            }
        }
        out
    }

    pub(super) fn recomputable(&self, id: NodeId) -> bool {
        crate::ir::recomputable(&self.function.nodes, &self.function.vars, id)
    }

    /// The reverse of a statement, with the pops of what its forward pass pushed: those
    /// pushed after a branch or a loop come back before it is replayed, those pushed
    /// before it (its nodes') after.
    pub(super) fn reverse_stmt(&mut self, stmt: &Stmt) -> TokenStream {
        let (pre, post) = self
            .stmt_pops
            .get(&(stmt as *const Stmt))
            .cloned()
            .unwrap_or_default();
        let pre: TokenStream = pre.into_iter().rev().collect();
        let post: TokenStream = post.into_iter().rev().collect();
        let inner = self.reverse_stmt_inner(stmt);
        match stmt {
            Stmt::If { .. } | Stmt::For { .. } | Stmt::Loop { .. } => quote!(#post #inner #pre),
            _ => quote!(#pre #post #inner),
        }
    }

    fn reverse_stmt_inner(&mut self, stmt: &Stmt) -> TokenStream {
        if let Some(code) = self.preaccumulated_reverse(stmt) {
            return code;
        }
        match stmt {
            Stmt::SetFlag { .. } => TokenStream::new(),
            Stmt::Loop {
                counter,
                max_trips,
                body,
                ..
            } => {
                let trips = self
                    .loop_trips
                    .get(counter)
                    .cloned()
                    .unwrap_or_else(|| quote!(0usize));
                let (slab, framed, small) = match self.slab_loops.get(counter) {
                    Some(&(slab, framed, small)) => (Some(slab), framed, small),
                    None => (None, false, false),
                };
                let dynamic = (max_trips.is_none() || self.dynamic()) && slab.is_none();
                let static_trips = max_trips.clone().unwrap_or_else(|| quote!(0usize));
                self.loops.push(Loop {
                    trips: static_trips.clone(),
                    writes: Vec::new(),
                    in_branch: self.in_branch,
                    snapshots: TokenStream::new(),
                    dynamic,
                    slab,
                    after: TokenStream::new(),
                    after_pops: Vec::new(),
                    copied: Vec::new(),
                });
                let depth = self.loops.len();
                let body = self.reverse_block(body, false);
                self.loops.pop();
                let index = self.var_slot(*counter);
                let (ws, f64) = (workspace(), crate::types::primitive("f64"));
                if let (Some(slab), true) = (slab, framed) {
                    // One frame per iteration, on top of the workspace, the last first.
                    let (_, frame, size) = slab_names(slab);
                    let iter = iter_slot(depth);
                    return quote! {
                        for #index in ::core::iter::Iterator::rev(0..#trips) {
                            let #frame: [#f64; #size] = #ws.pop_frame();
                            let #iter = 0usize;
                            #body
                        }
                    };
                }
                if let Some(slab) = slab {
                    // The slab is on top of the slab stack: every slab taken after it has
                    // been released.
                    let (block, frame, size) = slab_names(slab);
                    let iter = iter_slot(depth);
                    let (buffer, fits) = small_slab(slab);
                    let (top, release) = if small {
                        (
                            quote! {
                                if #fits { &#buffer[..#trips * #size] }
                                else { #ws.slab_top(#trips * #size) }
                            },
                            quote!(if !#fits { #ws.release_slab(#trips * #size); }),
                        )
                    } else {
                        (
                            quote!(#ws.slab_top(#trips * #size)),
                            quote!(#ws.release_slab(#trips * #size);),
                        )
                    };
                    let reverse = quote! {
                        let #block = #top;
                        for (#index, #frame) in ::core::iter::Iterator::rev(
                            ::core::iter::Iterator::zip(0..#trips, #block.chunks_exact(#size)),
                        ) {
                            let #iter = 0usize;
                            #body
                        }
                    };
                    let reverse = self.unless_zero_seeds(stmt, &trips, &body, reverse);
                    return quote! {
                        #reverse
                        #release
                    };
                }
                if body.is_empty() {
                    return TokenStream::new();
                }
                let iter = if self.iterated.contains(counter) {
                    self.iteration(depth, &index, &quote!(0usize), &static_trips)
                } else {
                    TokenStream::new()
                };
                let reverse = quote! {
                    for #index in ::core::iter::Iterator::rev(0..#trips) {
                        #iter
                        #body
                    }
                };
                self.unless_zero_seeds(stmt, &trips, &body, reverse)
            }
            Stmt::Let {
                var,
                value: Some(value),
                nodes,
            } => {
                if !self.activity.var(*var) || !self.activity.node(*value) || self.unread(*var) {
                    return TokenStream::new();
                }
                let seed = self.adjoint_var(*var);
                let prelude = self.recompute_nodes(nodes);
                let body = self.propagate(*value, seed, nodes);
                quote!(#prelude #body)
            }
            Stmt::Unpack { vars, value, nodes } => {
                if !self.activity.node(*value) || !vars.iter().any(|&v| self.activity.var(v)) {
                    return TokenStream::new();
                }
                let seeds = vars.iter().map(|&var| {
                    if self.activity.var(var) {
                        self.adjoint_var(var)
                    } else {
                        match &self.lanes {
                            Some(lanes) => quote!(#lanes::ZERO),
                            None => self.function.real.literal("0.0"),
                        }
                    }
                });
                let seed = quote!((#(#seeds),*));
                let prelude = self.recompute_nodes(nodes);
                let body = self.propagate(*value, seed, nodes);
                quote!(#prelude #body)
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
            } => {
                if !self.activity.var(place.var) || self.unread(place.var) {
                    return TokenStream::new();
                }
                if place.indices.is_empty() && self.rebinds(place.var) {
                    // Overwritten here: what it held before is read only by the statements
                    // in between, and the value assigned reads it (`a = a + t`) if at all.
                    self.unread.insert(place.var);
                }
                let prelude = self.recompute_nodes(nodes);
                let target = self.place(place, self.adjoint_var(place.var));
                let none = match &self.lanes {
                    Some(lanes) => quote!(#lanes::NO_ADJOINT),
                    None => quote!(-0.0),
                };
                if !self.activity.node(*value) {
                    return quote!(#prelude #target = #none;);
                }
                let seed = slot("seed", *value);
                let body = self.propagate(*value, seed.to_token_stream(), nodes);
                quote! {
                    #prelude
                    let #seed = #target;
                    #target = #none;
                    #body
                }
            }
            Stmt::Return { value, nodes } => {
                if !self.activity.node(*value) {
                    return TokenStream::new();
                }
                self.propagate(*value, self.seed.clone(), nodes)
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
                let reverse = quote! {
                    for #index in ::core::iter::Iterator::rev(#range) {
                        #iter
                        #body
                    }
                };
                self.unless_zero_seeds(stmt, &trips, &body, reverse)
            }
        }
    }

    /// Passes `seed`, the adjoint of the statement's value `root`, to the nodes of the
    /// statement in reverse order, and from reads to the adjoints of variables.
    pub(super) fn propagate(
        &mut self,
        root: NodeId,
        seed: TokenStream,
        ids: &[NodeId],
    ) -> TokenStream {
        struct Contribution {
            target: NodeId,
            negate: bool,
            factor: Option<TokenStream>,
            source: TokenStream,
            /// Statements to run before this contribution (a pullback call).
            before: TokenStream,
        }
        let nodes = &self.function.nodes;
        // A seed that is a name or a number is the root's adjoint itself, without a copy
        // (`let __adjoint_7 = __adjoint_var_2;`): every copy is one more local for rustc's
        // MIR optimizations to merge. Not for a read, whose seed goes on to its variable,
        // nor a pullback, whose call names its seed's binding, nor a tuple.
        let root_seed = (lone_token(&seed)
            && !matches!(
                nodes[root].kind,
                NodeKind::Read(_) | NodeKind::Pullback { .. } | NodeKind::Tuple(_)
            ))
        .then(|| seed.clone());
        let mut contributions = Vec::new();
        if root_seed.is_none() {
            contributions.push(Contribution {
                target: root,
                negate: false,
                factor: None,
                source: seed,
                before: TokenStream::new(),
            });
        }
        let mut pending = TokenStream::new();
        for &id in ids.iter().rev() {
            if !self.activity.node(id) {
                continue;
            }
            let kind = &nodes[id].kind;
            if let NodeKind::Pullback { callee, args, .. } = kind {
                // The pullback adds into the buffers of whole arguments, and into one
                // temporary per number argument, passed on as that argument's adjoint.
                let (call, temporaries) = self.pullback(id, callee, args);
                pending.extend(call);
                for (arg, temporary) in temporaries {
                    if self.activity.node(arg) {
                        contributions.push(Contribution {
                            target: arg,
                            negate: false,
                            factor: None,
                            source: temporary,
                            before: std::mem::take(&mut pending),
                        });
                    }
                }
                continue;
            }
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
                let adjoint = match &root_seed {
                    Some(seed) if id == root => seed.clone(),
                    _ => slot("adjoint", id).into_token_stream(),
                };
                let source = if let NodeKind::Tuple(_) = kind {
                    // Each part of a returned tuple gets its part of the seed.
                    let index = syn::Index::from(real);
                    quote!(#adjoint.#index)
                } else {
                    adjoint.into_token_stream()
                };
                contributions.push(Contribution {
                    target: arg,
                    negate,
                    factor,
                    source,
                    before: std::mem::take(&mut pending),
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
            out.extend(c.before);
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
                self.unread.remove(&place.var);
                let target = self.place(place, self.adjoint_var(place.var));
                let rebinds = place.indices.is_empty() && self.rebinds(place.var);
                let first = rebinds && self.undeclared.remove(&place.var);
                // `-0.0 + t` is `t` and `-0.0 - t` is `-t`, bit for bit. (The adjoint is
                // of the sweep's type: lanes in `_hessian`'s sweep over lanes.)
                let real = self.function.real;
                let real = match &self.lanes {
                    Some(lanes) => lanes.clone(),
                    None => quote!(#real),
                };
                let grouped = if lone_token(&term) {
                    term.clone()
                } else {
                    quote!((#term))
                };
                out.extend(match (first, rebinds, c.negate) {
                    (true, _, true) => quote!(let mut #target: #real = -#term;),
                    (true, _, false) => quote!(let mut #target: #real = #term;),
                    (false, true, true) => quote!(let mut #target = #target - #grouped;),
                    (false, true, false) => quote!(let mut #target = #target + #grouped;),
                    (false, false, true) => quote!(#target -= #term;),
                    (false, false, false) => quote!(#target += #term;),
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
        out.extend(pending);
        out
    }

    /// Whether the reverse of a definition of `var` (a `let` or an assignment of the
    /// whole variable), outside loops and branches, has nothing to pass on: no statement
    /// after it reads the value it defines, so its adjoint is zero by construction (a
    /// value overwritten before any read, a local never read). The sweep then skips the
    /// definition's expression altogether, as a tape skips what the output does not
    /// depend on: a partial that is infinite or NaN there (`hypot` at the origin, `ln 0`)
    /// is never multiplied by that zero, and the gradient holds no `0·∞ = NaN` from a
    /// value the result never saw. At run time nothing is tested.
    fn unread(&self, var: VarId) -> bool {
        !self.scoped() && self.unread.contains(&var)
    }

    /// Whether a contribution to the adjoint of `var` makes a new binding of it,
    /// `let mut a = a + t;`, rather than adding to it, `a += t;`: for a real scalar
    /// variable (not a field, nor a slice), outside loops and branches, where the
    /// new binding is in the function's outermost block, so every later use sees it.
    ///
    /// The value is the same (`a += t` is `a = a + t`), but each adjoint is then assigned
    /// once, as the original's values are: rustc's MIR optimizations (destination
    /// propagation) took time quadratic in the number of adjoints that are assigned
    /// again and again, 2.1 s of a 5,000-operation chain's build.
    fn rebinds(&self, var: VarId) -> bool {
        !self.scoped()
            && self.function.plain_real(var)
            && self.function.vars[var].dims.is_empty()
            && !self.adjoint_names.contains_key(&var)
    }

    /// The sweep's call of a pullback: `g_vjp(args, adjoint, buffers)`, with a buffer for
    /// every argument that holds numbers (a temporary for a number, the adjoint of a whole
    /// argument, or scratch for a constant one). Returns the call and, for each number
    /// argument, its temporary.
    fn pullback(
        &self,
        id: NodeId,
        callee: &Callee,
        args: &[CallArg],
    ) -> (TokenStream, Vec<(NodeId, TokenStream)>) {
        let mut declarations = TokenStream::new();
        let mut temporaries = Vec::new();
        let mut values = Vec::new();
        let mut buffers = Vec::new();
        // Variables whose adjoint is lent to the call already, and what to add after it.
        let mut adjoined: Vec<VarId> = Vec::new();
        // (two fields of one struct parameter live in the same buffer: both count as the
        // parameter's variable)
        let mut after = TokenStream::new();
        for (position, arg) in args.iter().enumerate() {
            match arg {
                CallArg::Value(node) => {
                    let value = self
                        .factors
                        .get(&(id, position))
                        .cloned()
                        .unwrap_or_else(|| self.slot_of(*node));
                    values.push(value);
                    if self.function.nodes[*node].num.passed_as_is() {
                        continue;
                    }
                    let temporary =
                        Ident::new(&format!("__vjp_{id}_{position}"), Span::mixed_site());
                    let zero = self.function.real.literal("0.0");
                    declarations.extend(quote!(let mut #temporary = #zero;));
                    buffers.push(quote!(&mut #temporary));
                    temporaries.push((*node, temporary.into_token_stream()));
                }
                CallArg::Whole { place, .. } => {
                    values.push(self.call_arg(id, position, arg));
                    let Some(WholeBuffer {
                        scratch,
                        adjoint,
                        whole_slice,
                    }) = self.whole_buffer(place)
                    else {
                        continue;
                    };
                    match adjoint {
                        // A constant argument: its partial goes to scratch.
                        None => buffers.push(quote!(&mut #scratch)),
                        Some(adjoint) if !adjoined.contains(&self.adjoint_root(place.var)) => {
                            adjoined.push(self.adjoint_root(place.var));
                            buffers.push(adjoint);
                        }
                        Some(adjoint) => {
                            // The same variable twice (`dot(&w[0], &w[1])`): the second
                            // buffer is scratch, added to the adjoint after the call.
                            let temporary =
                                Ident::new(&format!("__vjp_{id}_{position}"), Span::mixed_site());
                            declarations.extend(quote!(let mut #temporary = #scratch;));
                            buffers.push(quote!(&mut #temporary));
                            // A struct (`h(&m.v, m)`: a field and its struct) adds
                            // through its flat view, in any float type.
                            let strukt = self.function.struct_param(place.var).is_some()
                                || self.function.field(place.var).is_some_and(|f| f.strukt);
                            after.extend(if whole_slice {
                                quote!(::autodiff::__private::Flat::add_to(&#temporary[..], #adjoint);)
                            } else if self.function.real != Float::F64 && !strukt {
                                // Numbers and arrays of `f32`.
                                quote!(::autodiff::__private::Flat::add_to(&#temporary, #adjoint);)
                            } else {
                                quote!(::autodiff::__private::Differentiable::add_scaled(
                                    #adjoint, 1.0, &#temporary);)
                            });
                        }
                    }
                }
            }
        }
        let seed = slot("adjoint", id).into_token_stream();
        // Several outputs: their seeds as the callee takes them, a tuple or an array.
        let several = matches!(
            self.function.nodes[id].kind,
            NodeKind::Pullback { outputs, .. } if outputs > 1
        );
        let seed = if several {
            quote!(::autodiff::__private::outputs::seed(#seed))
        } else {
            seed
        };
        let call = forward::pullback_call(callee, &values, Some(&seed), &buffers);
        (quote!(#declarations #call; #after), temporaries)
    }

    /// The condition under which the reverse of `stmt`, a loop whose reverse is `body`,
    /// can be skipped: every adjoint that flows into it is exactly zero (`None` when
    /// that cannot be told cheaply). The sweep is linear in those adjoints, so the loop
    /// would add only zeros — except `0·∞` and `0·NaN`, which the skip turns into `0`
    /// where they would have given `NaN` (the guide's "Semantics" documents this). This
    /// is what makes the sweep sparse: the loop under a ReLU that was off, a sample whose
    /// hinge was inactive.
    ///
    /// The adjoints that flow in are those of the variables the loop writes and declares
    /// outside. The skip is tested only when they are a few local scalars or arrays of
    /// constant size (an array of more than [`MAX_TESTED`] numbers fails the test at
    /// compile time), and when the loop's reverse takes nothing from the workspace that
    /// must be popped.
    fn zero_seeds(&self, stmt: &Stmt, body: &TokenStream) -> Option<TokenStream> {
        const MAX_SEEDS: usize = 4;
        if crate::types::mentions(body, &|ident| ident == "__ws") {
            return None;
        }
        let mut written = Vec::new();
        let mut declared = Vec::new();
        crate::ir::writes(std::slice::from_ref(stmt), &mut written, &mut declared);
        let mut seeds = Vec::new();
        for var in written {
            if declared.contains(&var) || seeds.contains(&var) || !self.activity.var(var) {
                continue;
            }
            let v = &self.function.vars[var];
            let local =
                self.function.field(var).is_none() && self.function.struct_param(var).is_none();
            if v.slice || !local || seeds.len() == MAX_SEEDS {
                return None;
            }
            seeds.push(var);
        }
        if seeds.is_empty() {
            return None;
        }
        let zero = self.function.real.literal("0.0");
        let tests = seeds.iter().map(|&var| {
            let adjoint = self.adjoint_var(var);
            let dims = &self.function.vars[var].dims;
            if dims.is_empty() {
                quote!(#adjoint == #zero)
            } else {
                quote! {
                    (1usize #(* (#dims))*) <= #MAX_TESTED
                        && ::autodiff::__private::Flat::is_zero(&#adjoint)
                }
            }
        });
        Some(quote!(#(#tests)&&*))
    }

    /// Wraps `reverse`, the reverse of a loop with the reversed body `body`, in the test
    /// of [`zero_seeds`](Self::zero_seeds).
    ///
    /// A loop with no loop inside runs the test only when it has at least
    /// [`MIN_TESTED_TRIPS`] iterations (`trips`, usually a constant that the compiler
    /// folds): below that, the test costs about what it saves.
    fn unless_zero_seeds(
        &self,
        stmt: &Stmt,
        trips: &TokenStream,
        body: &TokenStream,
        reverse: TokenStream,
    ) -> TokenStream {
        let Some(zero) = self.zero_seeds(stmt, body) else {
            return reverse;
        };
        let inner_loop = match stmt {
            Stmt::For { body, .. } | Stmt::Loop { body, .. } => crate::ir::has_loop(body),
            _ => false,
        };
        if inner_loop {
            quote!(if !(#zero) { #reverse })
        } else {
            quote!(if !((#trips) >= #MIN_TESTED_TRIPS && #zero) { #reverse })
        }
    }

    /// The variable whose adjoint holds this one's: a struct parameter's for its fields,
    /// else itself.
    fn adjoint_root(&self, var: VarId) -> VarId {
        match self.function.field(var) {
            Some(field) => self.function.params[field.param].var,
            None => var,
        }
    }

    /// What the pullback adds the partial of a whole argument into (`None` for integers,
    /// which get no buffer).
    fn whole_buffer(&self, place: &Place) -> Option<WholeBuffer> {
        let function = self.function;
        let var = &function.vars[place.var];
        let is_struct = function.struct_param(place.var).is_some()
            || function.field(place.var).is_some_and(|f| f.strukt);
        // Rows of run-time length passed whole are the callee's rows, data too: no buffer.
        let all_rows = var.kind == VarKind::Data && place.indices.is_empty();
        if !matches!(var.kind, VarKind::Real | VarKind::Data) && !is_struct || all_rows {
            return None;
        }
        let value = self.place(place, self.var_slot(place.var));
        let whole_slice = var.slice && place.indices.is_empty() || var.kind == VarKind::Data;
        let scratch = if var.kind == VarKind::Data {
            // A row of run-time length (data): scratch of its length.
            let zero = self.function.real.literal("0.0");
            quote!(::autodiff::__private::vec![#zero; #value.len()])
        } else if is_struct {
            quote!({
                use ::autodiff::__private::Differentiable as _;
                (#value).zero_like()
            })
        } else if whole_slice {
            let element = zeros(self.function.real, &var.dims);
            quote!(::autodiff::__private::vec![#element; #value.len()])
        } else {
            let rank = var.dims.len() + usize::from(var.slice);
            let left = rank.saturating_sub(place.indices.len()).min(var.dims.len());
            zeros(self.function.real, &var.dims[var.dims.len() - left..])
        };
        let adjoint = self.activity.var(place.var).then(|| {
            let adjoint = self.place(place, self.adjoint_var(place.var));
            if whole_slice {
                quote!(&mut #adjoint[..])
            } else {
                quote!(&mut #adjoint)
            }
        });
        Some(WholeBuffer {
            scratch,
            adjoint,
            whole_slice,
        })
    }
}

/// Where the pullback adds the partial of an argument passed whole.
struct WholeBuffer {
    /// A zero value of the argument's shape.
    scratch: TokenStream,
    /// `&mut` the argument's adjoint, or `None` for a constant argument.
    adjoint: Option<TokenStream>,
    /// The argument is a whole slice (`&mut adjoint[..]`, scratch a `Vec`).
    whole_slice: bool,
}

/// Whether `tokens` is one name or one number.
fn lone_token(tokens: &TokenStream) -> bool {
    let mut trees = tokens.clone().into_iter();
    matches!(
        (trees.next(), trees.next()),
        (
            Some(proc_macro2::TokenTree::Ident(_) | proc_macro2::TokenTree::Literal(_)),
            None
        )
    )
}
