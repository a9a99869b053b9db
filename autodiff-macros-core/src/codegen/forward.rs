//! The forward pass: the body again, one `let` per node, saving what the sweep needs.

use super::*;
use crate::ir::{CallArg, Callee};

impl Generator<'_> {
    // ----- forward -------------------------------------------------------------------

    pub(super) fn forward_block(&mut self, block: &Block) -> TokenStream {
        let mut code: TokenStream = block.iter().map(|stmt| self.forward_stmt(stmt)).collect();
        code.extend(self.save_final_lengths(block));
        code
    }

    /// At the end of a branch (outside loops), the length of each vector the branch
    /// declares, when the reverse sweep cannot size the vector's adjoint otherwise: the
    /// vector is out of scope there, and its length changed (`push`) or is not computed
    /// from constants, parameters and loop variables (`vec![0.0; k]` of a counter `k`).
    ///
    /// ```text
    /// if !returned {                         if !returned {
    ///     let mut v = Vec::new();                let mut __var_3 = Vec::with_capacity(0);
    ///     v.push(x * 2.0);           →           __var_3.push(__primal_5);
    ///     …                                      …
    /// }                                          __tape_1 = __var_3.len();
    ///                                        }
    /// ```
    fn save_final_lengths(&mut self, block: &Block) -> TokenStream {
        if !self.in_branch || !self.loops.is_empty() {
            return TokenStream::new();
        }
        let mut out = TokenStream::new();
        for stmt in block {
            let Stmt::Let {
                var,
                value: Some(value),
                ..
            } = stmt
            else {
                continue;
            };
            let NodeKind::Vector { element, len } = &self.function.nodes[*value].kind else {
                continue;
            };
            let fixed = element.is_some() && self.recomputable(*len) && !pushes_onto(block, *var);
            if fixed || !self.activity.var(*var) {
                continue;
            }
            let vector = self.var_slot(*var);
            let (save, read) = self.save(quote!(#vector.len()), Saved::Index);
            out.extend(save);
            self.final_lengths.insert(*var, read);
        }
        out
    }

    /// A statement of the forward pass. What it pushes onto the workspace is recorded, so
    /// the reverse statement can pop it back.
    pub(super) fn forward_stmt(&mut self, stmt: &Stmt) -> TokenStream {
        let outer_pops = std::mem::take(&mut self.pops);
        let code = self.forward_stmt_inner(stmt);
        let post = std::mem::replace(&mut self.pops, outer_pops);
        let entry = self
            .stmt_pops
            .entry(stmt as *const Stmt)
            .or_insert_with(|| (Vec::new(), Vec::new()));
        entry.1.extend(post);
        code
    }

    fn forward_stmt_inner(&mut self, stmt: &Stmt) -> TokenStream {
        self.saved_reads.clear();
        let mut nodes = self.forward_nodes(stmt.nodes());
        if let Stmt::Assign { place, .. } | Stmt::Push { place, .. } = stmt {
            if self.activity.var(place.var) {
                nodes.extend(self.save_indices(place));
            }
        }
        let pre = std::mem::take(&mut self.pops);
        self.stmt_pops
            .insert(stmt as *const Stmt, (pre, Vec::new()));
        if let Some(code) = self.preaccumulated_forward(stmt, &nodes) {
            return code;
        }
        match stmt {
            Stmt::Let { var, value, .. } => {
                let slot = self.var_slot(*var);
                let v = &self.function.vars[*var];
                let mutability = v.mutable.then(|| quote!(mut));
                match value {
                    Some(value) if self.unchanging_scalar(*var) && !v.mutable => {
                        // The variable is its value's slot: no copy.
                        let value = self.slot_of(*value);
                        self.var_aliases.insert(*var, value);
                        nodes
                    }
                    Some(value) => {
                        let value = self.slot_of(*value);
                        quote!(#nodes let #mutability #slot = #value;)
                    }
                    None => {
                        // `let x;` assigned later: the assignment may now run under a
                        // flag (`if !returned { x = …; }` after a `return`, `break` or
                        // `continue` in the same branch), which Rust cannot see always
                        // runs before a read, so the slot starts at zero instead. The
                        // user's function, which Rust checked, never reads that zero.
                        let ty = real_type(self.function.real, &v.dims);
                        let zero = zeros(self.function.real, &v.dims);
                        quote!(let mut #slot: #ty = #zero;)
                    }
                }
            }
            Stmt::Assign { place, value, .. } => {
                let target = self.place(place, self.var_slot(place.var));
                let value = self.slot_of(*value);
                quote!(#nodes #target = #value;)
            }
            Stmt::Push { place, value, .. } => {
                let vector = self.var_slot(place.var);
                let value = self.slot_of(*value);
                quote!(#nodes #vector.push(#value);)
            }
            Stmt::SetFlag { var, value } => {
                let slot = self.var_slot(*var);
                quote!(#slot = #value;)
            }
            Stmt::Unpack { vars, value, .. } => {
                let value = self.slot_of(*value);
                let parts = vars.iter().enumerate().map(|(position, &var)| {
                    let slot = self.var_slot(var);
                    let mutability = self.function.vars[var].mutable.then(|| quote!(mut));
                    let index = syn::Index::from(position);
                    quote!(let #mutability #slot = #value.#index;)
                });
                quote!(#nodes #(#parts)*)
            }
            Stmt::Eval { .. } => nodes,
            Stmt::Return { value, .. } => {
                self.result = Some(self.slot_of(*value));
                nodes
            }
            Stmt::If {
                cond: cond_id,
                then,
                otherwise,
                ..
            } => {
                let cond = self.slot_of(*cond_id);
                // In a loop of run-time length the flag is pushed after the branch, so the
                // reverse sweep pops it before replaying the branch.
                let dynamic = self.dynamic();
                let (save, read) = if dynamic {
                    (TokenStream::new(), TokenStream::new())
                } else {
                    self.save(cond.clone(), Saved::Flag)
                };
                let outer = std::mem::replace(&mut self.in_branch, true);
                let then = self.forward_block(then);
                let otherwise = self.forward_block(otherwise);
                self.in_branch = outer;
                let (after, read) = if dynamic {
                    self.save(cond.clone(), Saved::Flag)
                } else {
                    (TokenStream::new(), read)
                };
                self.flags.insert(*cond_id, read);
                quote! {
                    #nodes
                    #save
                    if #cond { #then } else { #otherwise }
                    #after
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
                let sums = lanes::sums(self.function, body);
                let lane = lanes::lane_slot(*var);
                let unrollable = !sums.is_empty() && lanes::unrollable(body);
                let (body, stateless) =
                    self.in_lanes(&sums, &lane, |this| this.forward_block(body));
                let depth = self.loops.len();
                let finished = self.loops.pop();
                let indexed = !self.dynamic() || self.slab_level().is_some();
                let iter = if self.tapes.len() > tapes_before && indexed {
                    self.iterated.push(*var);
                    self.iteration(depth, &index, start, &trips)
                } else {
                    TokenStream::new()
                };
                let (snapshots, after) = self.after_loop(finished);
                let declare = self.declare_lanes(&sums);
                if unrollable && stateless {
                    let loops = quote!(::autodiff::__private::loops);
                    let n = if *inclusive {
                        quote!(#loops::count_inclusive(#start, #end))
                    } else {
                        quote!(#loops::count(#start, #end))
                    };
                    let bind = |k| quote!(let #index = #loops::nth(#start, #end, #k););
                    let run = self.unrolled(&lane, &n, &bind, &body);
                    let add = self.add_lanes(&sums, None);
                    return quote!(#snapshots #declare #run #add #after);
                }
                let (head, rotate, add) = self.rotated_lanes(&sums, &lane, &trips);
                quote! {
                    #snapshots
                    #declare
                    for #index in #range {
                        #iter
                        #head
                        #body
                        #rotate
                    }
                    #add
                    #after
                }
            }
            Stmt::Loop {
                counter,
                count,
                max_trips,
                exits,
                body,
                ..
            } => self.forward_loop(nodes, *counter, *count, max_trips.as_ref(), exits, body),
        }
    }

    /// The forward pass of a counted or unbounded loop: the counter runs `0, 1, …`; the
    /// number of iterations run is saved for the reverse sweep.
    #[allow(clippy::too_many_arguments)]
    fn forward_loop(
        &mut self,
        nodes: TokenStream,
        counter: VarId,
        count: Option<NodeId>,
        max_trips: Option<&TokenStream>,
        exits: &[VarId],
        body: &Block,
    ) -> TokenStream {
        let count_slot = Ident::new(&format!("__count_{counter}"), Span::mixed_site());
        let trips_slot = Ident::new(&format!("__trips_{counter}"), Span::mixed_site());
        let index = self.var_slot(counter);
        let mut writes = Vec::new();
        written(body, &mut writes);
        writes.push(counter);
        // Whether the sweep of this loop will run in the scope its forward pass runs in:
        // then a slab that fits a small stack buffer can live there.
        let unscoped = !self.scoped();
        // A loop of constant length in the outermost block that holds loops (a loop over
        // samples) keeps its values in a slab too, where the runtime pools workspaces:
        // stack arrays would be zeroed at each call and limited by the stack.
        let pooled = cfg!(feature = "std")
            && unscoped
            && !self.in_sum
            && count.is_some()
            && exits.is_empty()
            && crate::ir::has_loop(body);
        let dynamic = max_trips.is_none() || self.dynamic() || pooled;
        // A loop of run-time length with only constant loops inside keeps its values in
        // frames of fixed layout: in one block of the workspace when it knows its trip
        // count (a slab), else in a stack array pushed at the end of each iteration.
        let slab = (dynamic && self.slab_level().is_none() && slab_fits(body)).then(|| {
            self.slabs += 1;
            self.slabs - 1
        });
        let framed = slab.is_some() && (count.is_none() || !exits.is_empty());
        let trips = max_trips.cloned().unwrap_or_else(|| quote!(0usize));
        self.loops.push(Loop {
            trips: trips.clone(),
            writes,
            in_branch: self.in_branch,
            snapshots: TokenStream::new(),
            dynamic: dynamic && slab.is_none(),
            slab,
            after: TokenStream::new(),
            after_pops: Vec::new(),
            copied: Vec::new(),
        });
        if slab.is_some() {
            self.frame = None;
        }
        let tapes_before = self.tapes.len();
        let sums = lanes::sums(self.function, body);
        let lane = lanes::lane_slot(counter);
        let unrollable =
            !sums.is_empty() && lanes::unrollable(body) && exits.is_empty() && count.is_some();
        let (body, stateless) = self.in_lanes(&sums, &lane, |this| this.forward_block(body));
        let depth = self.loops.len();
        let finished = self.loops.pop();
        let frame_size = if slab.is_some() {
            self.frame.take().map(|frame| frame.tokens())
        } else {
            None
        };
        let indexed = !dynamic || self.slab_level().is_some();
        let iter = if self.tapes.len() > tapes_before && indexed {
            self.iterated.push(counter);
            self.iteration(depth, &index, &quote!(0usize), &trips)
        } else {
            TokenStream::new()
        };
        let (snapshots, after) = self.after_loop(finished);
        let mut range = match count {
            Some(_) => quote!(0..#count_slot),
            None => quote!(0usize..),
        };
        let mut pattern = index.clone();
        // Frames: what the slab loop takes before it starts, sets up at the start of each
        // iteration, and does at its end.
        let (mut slab_take, mut slab_frame, mut frame_push) =
            (TokenStream::new(), TokenStream::new(), TokenStream::new());
        let usize = usize_type();
        if let Some(slab) = slab {
            let (block, frame, size) = slab_names(slab);
            let total = frame_size.unwrap_or_else(|| quote!(0usize));
            // At least 1, so that the frames can be walked with `chunks_exact`.
            let sum = Ident::new("__sum", Span::mixed_site());
            self.tapes.push(quote! {
                const #size: #usize = { let #sum = #total; if #sum == 0 { 1 } else { #sum } };
            });
            let small = unscoped && !framed;
            self.slab_loops.insert(counter, (slab, framed, small));
            self.uses_workspace = true;
            let iter = iter_slot(depth);
            let ws = workspace();
            if framed {
                // A frame on the stack, pushed at the end of each iteration.
                slab_frame = quote!(let mut #frame = [0.0f64; #size]; let #iter = 0usize;);
                frame_push = quote!(#ws.push_frame(&#frame););
            } else {
                // One block; the loop walks its frames alongside the counter.
                slab_take = if small {
                    // A short loop's block on the stack, so that the call takes no
                    // workspace from the pool (the workspace is taken on first use).
                    let (buffer, fits) = small_slab(slab);
                    let f64 = crate::types::primitive("f64");
                    self.tapes
                        .push(quote!(let mut #buffer = [0.0 as #f64; #SMALL_SLAB];));
                    quote! {
                        let #fits = #count_slot * #size <= #SMALL_SLAB;
                        let #block: &mut [#f64] = if #fits {
                            &mut #buffer[..#count_slot * #size]
                        } else {
                            #ws.slab(#count_slot * #size)
                        };
                    }
                } else {
                    quote!(let #block = #ws.slab(#count_slot * #size);)
                };
                slab_frame = quote!(let #iter = 0usize;);
                pattern = quote!((#index, #frame));
                range = quote! {
                    ::core::iter::Iterator::zip(#range, #block.chunks_exact_mut(#size))
                };
            }
        }
        let count_let = count.map(|count| {
            let count = self.slot_of(count);
            quote!(let #count_slot: #usize = #count;)
        });
        let counted = !exits.is_empty() || count.is_none();
        let (trips_let, stop, tick, trips_value) = if counted {
            let flags = exits.iter().map(|&flag| self.var_slot(flag));
            (
                quote!(let mut #trips_slot: #usize = 0;),
                quote!(if false #(|| #flags)* { break; }),
                quote!(#trips_slot += 1;),
                trips_slot.to_token_stream(),
            )
        } else {
            (
                TokenStream::new(),
                TokenStream::new(),
                TokenStream::new(),
                count_slot.to_token_stream(),
            )
        };
        // The number of iterations run, for the reverse sweep: a constant, or saved.
        let (save, read) = match max_trips {
            Some(max) if exits.is_empty() => (TokenStream::new(), quote!((#max))),
            _ => self.save(trips_value.clone(), Saved::Index),
        };
        self.loop_trips.insert(counter, read);
        let declare = self.declare_lanes(&sums);
        if unrollable && stateless && frame_push.is_empty() {
            // Nothing saved, so no frame is written: the slab is taken for the sweep only.
            let bind = |k| quote!(let #index = #k;);
            let run = self.unrolled(&lane, &count_slot.to_token_stream(), &bind, &body);
            let add = self.add_lanes(&sums, None);
            return quote! {
                #nodes
                #count_let
                #snapshots
                #slab_take
                #declare
                #run
                #add
                #after
                #save
            };
        }
        let (head, rotate, add) = self.rotated_lanes(&sums, &lane, &trips_value);
        quote! {
            #nodes
            #count_let
            #snapshots
            #trips_let
            #slab_take
            #declare
            for #pattern in #range {
                #stop
                #tick
                #slab_frame
                #iter
                #head
                #body
                #rotate
                #frame_push
            }
            #add
            #after
            #save
        }
    }

    /// A finished loop's copies: those taken before it, and those pushed after it (whose
    /// pops the statement records).
    fn after_loop(&mut self, finished: Option<Loop>) -> (TokenStream, TokenStream) {
        let Some(finished) = finished else {
            return (TokenStream::new(), TokenStream::new());
        };
        self.pops.extend(finished.after_pops);
        (finished.snapshots, finished.after)
    }

    /// Saves the indices of a place that the sweep cannot compute again.
    pub(super) fn save_indices(&mut self, place: &Place) -> TokenStream {
        let mut out = TokenStream::new();
        if !self.scoped() {
            return out;
        }
        for &index in &place.indices {
            if self.recomputable(index) || self.restored.contains_key(&index) {
                continue;
            }
            let (save, read) = self.save(self.slot_of(index), Saved::Index);
            out.extend(save);
            self.restored.insert(index, read);
        }
        out
    }

    /// Pushes a loop (the forward pass passes the variables it writes, for snapshots).
    /// Returns the loop variable's slot, the number of iterations and the range.
    pub(super) fn enter_loop(
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
            dynamic: false,
            slab: None,
            after: TokenStream::new(),
            after_pops: Vec::new(),
            copied: Vec::new(),
        });
        (self.var_slot(var), trips, range(start, end, inclusive))
    }

    /// `let __iter_D = __iter_{D-1} * trips + (i - start) as usize;`
    pub(super) fn iteration(
        &self,
        depth: usize,
        index: &TokenStream,
        start: &TokenStream,
        trips: &TokenStream,
    ) -> TokenStream {
        let iter = iter_slot(depth);
        let usize = usize_type();
        let step = quote!(((#index - (#start)) as #usize));
        if depth == 1 {
            quote!(let #iter = #step;)
        } else {
            let outer = iter_slot(depth - 1);
            quote!(let #iter = #outer * #trips + #step;)
        }
    }

    /// One `let` per node, in order; and what the reverse sweep will need of each.
    pub(super) fn forward_nodes(&mut self, ids: &[NodeId]) -> TokenStream {
        let mut out = TokenStream::new();
        for &id in ids {
            out.extend(self.forward_node(id));
        }
        out
    }

    pub(super) fn forward_node(&mut self, id: NodeId) -> TokenStream {
        let function = self.function;
        let activity = self.activity;
        let node = &function.nodes[id];
        let binding = slot("primal", id);
        let arg = |node: NodeId| self.slot_of(node);
        let active_arg = |arg: NodeId| activity.node(id) && activity.node(arg);
        match &node.kind {
            NodeKind::Const(tokens) => quote!(let #binding = #tokens;),
            NodeKind::Read(place)
                if place.indices.is_empty()
                    && node.num == Num::Real
                    && self.unchanging_scalar(place.var) =>
            {
                // The node is the variable: no copy.
                self.aliases.insert(id, self.var_slot(place.var));
                TokenStream::new()
            }
            NodeKind::Read(place) => {
                let value = self.place(place, self.var_slot(place.var));
                let save = if activity.node(id) {
                    self.save_indices(place)
                } else {
                    TokenStream::new()
                };
                quote!(let #binding = #value; #save)
            }
            NodeKind::ConstElement { table, indices } => {
                let indices = indices.iter().map(|&i| self.slot_of(i));
                quote!(let #binding = #table #([#indices])*;)
            }
            NodeKind::Vector {
                element: Some(element),
                len,
            } => {
                let len = self.slot_of(*len);
                quote!(let #binding = ::autodiff::__private::vec![#element; #len];)
            }
            NodeKind::Vector { element: None, len } => {
                let len = self.slot_of(*len);
                let real = function.real;
                quote!(let #binding = ::autodiff::__private::vec::Vec::<#real>::with_capacity(#len);)
            }
            NodeKind::Len(place) => {
                let var = self.var_slot(place.var);
                let indices = place.indices.iter().map(|&i| self.slot_of(i));
                quote!(let #binding = #var #([#indices])*.len();)
            }
            NodeKind::Intrinsic {
                function,
                args,
                field,
            } => {
                let value = self.intrinsic(function, args, field);
                quote!(let #binding = #value;)
            }
            NodeKind::RulePartial { op, args, index } => {
                let value = rule_partial(op, args.iter().map(|&a| self.slot_of(a)), *index);
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
            NodeKind::Test { method, arg: value } => {
                let value = arg(*value);
                quote!(let #binding = #value.#method();)
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
                    let value = primal_expr(function.real, op, &values);
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
                            self.save(partial, Saved::Real)
                        }
                    };
                    out.extend(save);
                    self.factors.insert((id, real), factor);
                }
                out
            }
            NodeKind::Tuple(parts) => {
                let parts = parts.iter().map(|&p| self.slot_of(p));
                quote!(let #binding = (#(#parts),*);)
            }
            NodeKind::Pullback {
                callee,
                args,
                outputs,
            } => {
                let mut out = TokenStream::new();
                let mut copies = Vec::new();
                for (position, arg) in args.iter().enumerate() {
                    if let CallArg::Whole { place, .. } = arg {
                        let v = &function.vars[place.var];
                        if !v.is_param || v.mutable {
                            // A local array (or a `mut` parameter, which changes as one
                            // does): the sweep passes the copy taken at the call.
                            let copy = whole_copy(id, position);
                            let value = self.place(place, self.var_slot(place.var));
                            out.extend(quote!(let #copy = #value;));
                            copies.push((position, copy, place));
                        }
                    }
                }
                let values: Vec<TokenStream> = args
                    .iter()
                    .enumerate()
                    .map(|(position, a)| self.call_arg(id, position, a))
                    .collect();
                if activity.node(id) {
                    // In a loop or a branch the copy is saved, as a number would be, and
                    // the sweep reads it back (`call_arg` finds it among the factors).
                    for (position, copy, place) in copies {
                        let v = &function.vars[place.var];
                        let dims = v.dims.get(place.indices.len()..).unwrap_or(&[]);
                        let (save, read) = self.save_array(copy.into_token_stream(), dims);
                        out.extend(save);
                        self.factors.insert((id, position), read);
                    }
                }
                let call = pullback_call(callee, &values, None, &[]);
                // Several outputs, a tuple or an array: read as a tuple.
                let call = if *outputs > 1 {
                    quote!(::autodiff::__private::outputs::tuple(#call))
                } else {
                    call
                };
                let ty = real_tuple(function.real, *outputs);
                out.extend(quote_spanned!(node.span=> let #binding: #ty = #call;));
                if activity.node(id) {
                    // The sweep calls the pullback with the same arguments.
                    for (position, arg) in args.iter().enumerate() {
                        match arg {
                            CallArg::Value(value) => {
                                let (save, read) = self.reverse_value(*value);
                                out.extend(save);
                                self.factors.insert((id, position), read);
                            }
                            CallArg::Whole { place, .. } => out.extend(self.save_indices(place)),
                        }
                    }
                }
                out
            }
            NodeKind::Call { path, args } => {
                let values: Vec<TokenStream> = args.iter().map(|&a| arg(a)).collect();
                if !activity.node(id) {
                    let real = function.real;
                    return quote_spanned!(node.span=> let #binding: #real = #path(#(#values),*););
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
                let real = function.real;
                let types = std::iter::repeat_n(quote!(#real), args.len() + 1);
                let mut out = quote_spanned! {node.span=>
                    let (#binding, #(#partials),*): (#(#types),*) =
                        ::autodiff::__private::missing::call_partials(#grad_path(#(#values),*));
                };
                for (position, &a) in args.iter().enumerate() {
                    if active_arg(a) {
                        let partial = partial_slot(id, position).into_token_stream();
                        let (save, factor) = self.save(partial, Saved::Real);
                        out.extend(save);
                        self.factors.insert((id, position), factor);
                    }
                }
                out
            }
        }
    }
}

impl Generator<'_> {
    /// An argument of a pullback call (`id`) as passed: a number's slot, or what is passed
    /// whole as written (`m`, `&w[j]`, `self.layer`), a local array by its copy.
    pub(super) fn call_arg(&self, id: NodeId, position: usize, arg: &CallArg) -> TokenStream {
        match arg {
            CallArg::Value(node) => self.slot_of(*node),
            CallArg::Whole {
                place,
                reference,
                deref,
            } => {
                let v = &self.function.vars[place.var];
                let param = v.is_param && !v.mutable;
                let value = if param {
                    self.place(place, self.var_slot(place.var))
                } else {
                    self.factors
                        .get(&(id, position))
                        .cloned()
                        .unwrap_or_else(|| whole_copy(id, position).into_token_stream())
                };
                if *reference {
                    quote!(&#value)
                } else if *deref && param && place.indices.is_empty() {
                    quote!(*#value)
                } else {
                    value
                }
            }
        }
    }
}

/// `path(args)` or `(receiver).method(args)`; with a seed, the pullback
/// `path_vjp(args, seed, buffers)`.
pub(super) fn pullback_call(
    callee: &Callee,
    values: &[TokenStream],
    seed: Option<&TokenStream>,
    buffers: &[TokenStream],
) -> TokenStream {
    let tail: Vec<TokenStream> = seed.into_iter().chain(buffers).cloned().collect();
    renamed_call(callee, values, &tail, |ident| match seed {
        Some(_) => vjp_ident(ident),
        None => ident.clone(),
    })
}

/// `path(args, tail)` or `(receiver).method(args, tail)`, the function's name (the last
/// segment of a path) passed through `rename`: the callee itself, or a function generated
/// beside it (`_vjp`, `_jvp`).
pub(super) fn renamed_call(
    callee: &Callee,
    values: &[TokenStream],
    tail: &[TokenStream],
    rename: impl Fn(&Ident) -> Ident,
) -> TokenStream {
    match callee {
        Callee::Path(path) => {
            let mut path = path.clone();
            let mut span = Span::call_site();
            if let Some(last) = path.segments.last_mut() {
                last.ident = rename(&last.ident);
                span = last.ident.span();
            }
            // The parentheses at the name, so that an error about the call (a bound of a
            // stand-in, see `missing`) is reported under the user's call.
            quote_spanned!(span=> #path(#(#values,)* #(#tail),*))
        }
        Callee::Method(method) => {
            let method = rename(method);
            let (receiver, rest) = values
                .split_first()
                .map_or((None, values), |(r, rest)| (Some(r), rest));
            quote!((#receiver).#method(#(#rest,)* #(#tail),*))
        }
    }
}

/// `rules::op(args).k`: the `index`-th partial of `op` at `args`, as its rule computes it.
pub(super) fn rule_partial(
    op: &crate::ops::Op,
    args: impl Iterator<Item = TokenStream>,
    index: usize,
) -> TokenStream {
    let rule = rule(op.rule);
    let field = syn::Index::from(index + 1);
    quote!(#rule(#(#args),*).#field)
}

/// The copy of a local array passed whole, as argument `position` of call `id`.
fn whole_copy(id: NodeId, position: usize) -> Ident {
    Ident::new(&format!("__whole_{id}_{position}"), Span::mixed_site())
}

/// `f64`, or `(f64, f64, …)` for several outputs (`f32` in a function of `f32`).
pub(super) fn real_tuple(real: Float, outputs: usize) -> TokenStream {
    if outputs == 1 {
        quote!(#real)
    } else {
        let parts = std::iter::repeat_n(quote!(#real), outputs);
        quote!((#(#parts),*))
    }
}

/// Whether a block pushes onto `var`, at any depth.
fn pushes_onto(block: &Block, var: VarId) -> bool {
    block.iter().any(|stmt| match stmt {
        Stmt::Push { place, .. } => place.var == var,
        Stmt::For { body, .. } | Stmt::Loop { body, .. } => pushes_onto(body, var),
        Stmt::If {
            then, otherwise, ..
        } => pushes_onto(then, var) || pushes_onto(otherwise, var),
        _ => false,
    })
}
