//! Where the values the reverse sweep needs are kept: read back, recomputed, or saved.

use super::*;

impl Generator<'_> {
    /// Whether values computed here are out of the reverse sweep's scope (inside a loop
    /// body or a branch), so must be saved or recomputed.
    pub(super) fn scoped(&self) -> bool {
        !self.loops.is_empty() || self.in_branch
    }

    /// The slot holding a variable: a parameter keeps its name, a field of a struct
    /// parameter is read through it (`m.layer.w`).
    pub(super) fn var_slot(&self, var: VarId) -> TokenStream {
        if let Some(alias) = self.var_aliases.get(&var) {
            return alias.clone();
        }
        let v = &self.function.vars[var];
        if let Some(field) = self.function.field(var) {
            let param = &self.function.params[field.param].ident;
            let access = &field.access;
            return quote!(#param #access);
        }
        if v.is_param {
            let param = self.function.params.iter().find(|p| p.var == var);
            if let Some(param) = param {
                return param.ident.to_token_stream();
            }
        }
        slot("var", var).into_token_stream()
    }

    /// Whether `var` is a real scalar that keeps its first value: a parameter or a local
    /// that no statement writes after its `let` (so a copy of it is the variable itself).
    pub(super) fn unchanging_scalar(&self, var: VarId) -> bool {
        let v = &self.function.vars[var];
        v.kind == VarKind::Real
            && v.dims.is_empty()
            && !v.slice
            && !v.reassigned
            && self.function.struct_param(var).is_none()
    }

    /// The adjoint of a variable: its slot; for a struct parameter its buffer in
    /// `_grad_into` (`(*d_m)`), and for a field of one the same field of that buffer
    /// (`d_m.layer.w`).
    pub(super) fn adjoint_var(&self, var: VarId) -> TokenStream {
        if let Some(name) = self.adjoint_names.get(&var) {
            return name.clone();
        }
        if let Some(field) = self.function.field(var) {
            let buffer = output_slot(self.function, field.param);
            let access = &field.access;
            return quote!(#buffer #access);
        }
        if let Some(param) = self.function.struct_param(var) {
            let buffer = output_slot(self.function, param);
            return quote!((*#buffer));
        }
        slot("adjoint_var", var).into_token_stream()
    }

    /// `slot[i][j]` for a place, reading the index nodes' slots.
    pub(super) fn place(&self, place: &Place, base: TokenStream) -> TokenStream {
        let indices = place
            .indices
            .iter()
            .map(|&i| slot("primal", i).into_token_stream());
        self.function.indexed(place.var, base, indices)
    }

    /// The slab loop around the code being generated, if any: its index in `loops`.
    pub(super) fn slab_level(&self) -> Option<usize> {
        self.loops.iter().position(|l| l.slab.is_some())
    }

    /// Reserves `size` `f64`s per iteration of the loops inside the slab loop, in the
    /// current frame of the slab. Returns the place of the first one (`__frame_S[i]`; the
    /// others follow it), or `None` outside a slab loop.
    pub(super) fn slab_slot(&mut self, size: &TokenStream) -> Option<TokenStream> {
        let level = self.slab_level()?;
        let slab = self.loops[level].slab?;
        let (_, frame, _) = slab_names(slab);
        let inner: Vec<&TokenStream> = self.loops[level + 1..].iter().map(|l| &l.trips).collect();
        let frame_size = self.frame.get_or_insert_with(FrameSize::default);
        let offset = frame_size.tokens();
        frame_size.add(quote!((#size) #(* (#inner))*));
        // Inner loops compute their iteration index (the slab loop's own is 0).
        self.tapes.push(TokenStream::new());
        let iter = iter_slot(self.loops.len());
        Some(quote!(#frame[(#offset) + #iter * (#size)]))
    }

    /// Whether the code being generated runs inside a loop of run-time length, so that
    /// saved values go to the workspace's stacks rather than to stack arrays.
    pub(super) fn dynamic(&self) -> bool {
        self.loops.iter().any(|l| l.dynamic)
    }

    /// Saves `value` (computed in the forward pass) for the reverse sweep. Returns the
    /// forward statement and the reverse expression.
    ///
    /// Out of loops and branches the value is still in scope. In loops of constant trip
    /// counts (and branches) it goes to a stack slot: an array with one entry per
    /// iteration. In loops of run-time length it is pushed onto the workspace, and the
    /// reverse statement pops it back into a local first thing (see [`Self::pops`]).
    pub(super) fn save(&mut self, value: TokenStream, kind: Saved) -> (TokenStream, TokenStream) {
        if !self.scoped() {
            // Still in scope in the reverse sweep: read it back directly.
            return (TokenStream::new(), value);
        }
        if let Some(target) = self.slab_slot(&quote!(1usize)) {
            let (write, read) = match kind {
                Saved::Real => (self.workspace_write(value), self.workspace_read(&target)),
                Saved::Index => {
                    let (f64, usize) = (Float::F64, usize_type());
                    (quote!((#value) as #f64), quote!((#target) as #usize))
                }
                Saved::Flag => (
                    quote!(if #value { 1.0f64 } else { 0.0f64 }),
                    quote!((#target) != 0.0f64),
                ),
            };
            let local = self.saved_local();
            self.pops.push(quote!(let #local = #read;));
            return (quote!(#target = #write;), local.into_token_stream());
        }
        if self.dynamic() {
            self.uses_workspace = true;
            let local = self.saved_local();
            let (push, pop) = match kind {
                Saved::Real => (quote!(push), quote!(pop)),
                Saved::Index => (quote!(push_int), quote!(pop_int)),
                Saved::Flag => (quote!(push_flag), quote!(pop_flag)),
            };
            let ws = workspace();
            let (value, popped) = match kind {
                Saved::Real => (
                    self.workspace_write(value),
                    self.workspace_read(&quote!(#ws.#pop())),
                ),
                _ => (value, quote!(#ws.#pop())),
            };
            self.pops.push(quote!(let #local = #popped;));
            return (quote!(#ws.#push(#value);), local.into_token_stream());
        }
        let real = self.function.real;
        let (ty, zero) = match kind {
            // In lanes (`hvp::lanes`) a saved number is a value or a tangent: its type is
            // the one of what the branch saves.
            Saved::Real if self.lanes.is_some() => {
                (quote!(_), quote!(::core::default::Default::default()))
            }
            Saved::Real => (quote!(#real), real.literal("0.0")),
            Saved::Index => (usize_type(), quote!(0usize)),
            Saved::Flag => (crate::types::primitive("bool"), quote!(false)),
        };
        self.stack_slot(&ty, &zero, value)
    }

    /// Keeps `value` (of type `ty`, whose zero is `zero`) in a stack slot declared at the
    /// top of the function: one entry per iteration of the loops around, or a single one
    /// in a branch. Returns the forward statement and the reverse read.
    fn stack_slot(
        &mut self,
        ty: &TokenStream,
        zero: &TokenStream,
        value: TokenStream,
    ) -> (TokenStream, TokenStream) {
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

    /// Saves `value`, an array of dimensions `dims` (the copy of a local passed whole to a
    /// call), for the reverse sweep, as [`Self::save`] does a number: read back in scope,
    /// else written to the slab's frame, pushed onto the workspace in a loop of run-time
    /// length, or kept in a stack slot (one per iteration of loops of constant trip counts).
    /// Returns the forward statement and how the sweep reads the copy.
    pub(super) fn save_array(
        &mut self,
        value: TokenStream,
        dims: &[TokenStream],
    ) -> (TokenStream, TokenStream) {
        if !self.scoped() {
            return (TokenStream::new(), value);
        }
        let real = self.function.real;
        let (ty, zero) = (real_type(real, dims), zeros(real, dims));
        if let Some(target) = self.slab_slot(&quote!(1usize #(* (#dims))*)) {
            let (block, index) = split_place(&target);
            let local = self.saved_local();
            self.pops.push(quote! {
                let mut #local: #ty = #zero;
                ::autodiff::__private::Flat::read_from(&mut #local, &#block[#index..]);
            });
            let write = quote! {
                ::autodiff::__private::Flat::write_to(&#value, &mut #block[#index..]);
            };
            return (write, local.into_token_stream());
        }
        if self.dynamic() {
            self.uses_workspace = true;
            let local = self.saved_local();
            let ws = workspace();
            self.pops
                .push(quote!(let mut #local: #ty = #zero; #ws.pop_array(&mut #local);));
            return (quote!(#ws.push_array(&#value);), local.into_token_stream());
        }
        self.stack_slot(&ty, &zero, value)
    }

    /// A read of `var` inside loops that do not write it has the value `var` had when the
    /// outermost such loop started: copy `var` once, just before that loop (per iteration of
    /// the loops around it), rather than saving every read. Returns how the reverse sweep
    /// reads the copy, or `None` when the innermost loop writes `var`.
    pub(super) fn snapshot(&mut self, var: VarId) -> Option<TokenStream> {
        if self.function.vars[var].slice {
            return None; // a local `Vec`: its reads are saved one by one
        }
        let level = self.loops.iter().position(|l| !l.writes.contains(&var))?;
        if let Some((_, copy)) = self.loops[level].copied.iter().find(|(v, _)| *v == var) {
            return Some(copy.clone());
        }
        let dims = &self.function.vars[var].dims;
        let real = self.function.real;
        let (ty, zero) = (real_type(real, dims), zeros(real, dims));
        let value = self.var_slot(var);
        if self.slab_level().is_some_and(|slab| slab < level) {
            // Inside a slab loop: written to the frame after loop `level` (which does not
            // change `var`), read back before the reverse sweep runs that loop.
            let size = quote!(1usize #(* (#dims))*);
            let inner = self.loops.split_off(level);
            let target = self.slab_slot(&size);
            self.loops.extend(inner);
            let target = target?;
            let local = self.saved_local();
            let (write, read) = if dims.is_empty() {
                let (write, read) = (self.workspace_write(value), self.workspace_read(&target));
                (
                    quote!(#target = #write;),
                    quote!(let #local: #real = #read;),
                )
            } else if let ([len], Float::F64) = (dims.as_slice(), real) {
                // A row: one copy each way.
                let (block, index) = split_place(&target);
                (
                    quote!(#block[#index..#index + (#len)].copy_from_slice(&#value);),
                    quote! {
                        let mut #local: #ty = #zero;
                        #local.copy_from_slice(&#block[#index..#index + (#len)]);
                    },
                )
            } else {
                let (block, index) = split_place(&target);
                (
                    quote! {
                        ::autodiff::__private::Flat::write_to(&#value, &mut #block[#index..]);
                    },
                    quote! {
                        let mut #local: #ty = #zero;
                        ::autodiff::__private::Flat::read_from(&mut #local, &#block[#index..]);
                    },
                )
            };
            return Some(self.copy_after(level, var, write, read, local));
        }
        if self.loops[..level].iter().any(|l| l.dynamic) {
            // Inside a loop of run-time length: pushed after loop `level` (which does not
            // change `var`), popped before the reverse sweep runs that loop.
            self.uses_workspace = true;
            let local = self.saved_local();
            let ws = workspace();
            let (push, pop) = if dims.is_empty() {
                let (push, pop) = (
                    self.workspace_write(value),
                    self.workspace_read(&quote!(#ws.pop())),
                );
                (quote!(#ws.push(#push);), quote!(let #local: #real = #pop;))
            } else {
                (
                    quote!(#ws.push_array(&#value);),
                    quote!(let mut #local: #ty = #zero; #ws.pop_array(&mut #local);),
                )
            };
            return Some(self.copy_after(level, var, push, pop, local));
        }
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

    /// A new local for a value the reverse sweep takes back (`__saved_N`).
    fn saved_local(&mut self) -> Ident {
        self.saved += 1;
        slot("saved", self.saved - 1)
    }

    /// Records a copy of `var` taken just after loop `level` (`write`) and taken back into
    /// `local` before the reverse sweep runs that loop (`read`). Returns how the sweep
    /// reads it.
    fn copy_after(
        &mut self,
        level: usize,
        var: VarId,
        write: TokenStream,
        read: TokenStream,
        local: Ident,
    ) -> TokenStream {
        let outer = &mut self.loops[level];
        outer.after.extend(write);
        outer.after_pops.push(read);
        outer.copied.push((var, local.to_token_stream()));
        local.into_token_stream()
    }

    /// How the reverse sweep gets the value of `node`: read back from its slot while in
    /// scope, recomputed when it cannot have changed (a constant, an integer, an element of
    /// a parameter that is never assigned), else saved by the forward pass.
    pub(super) fn reverse_value(&mut self, node: NodeId) -> (TokenStream, TokenStream) {
        let primal = self.slot_of(node);
        if !self.scoped() {
            return (TokenStream::new(), primal);
        }
        // An integer or a flag passed to a pullback (`g(x, xs, i % 5)`): computed again by
        // the statement's prelude where it can be, else saved as what it is.
        match self.function.nodes[node].num {
            Num::Int if self.recomputable(node) => return (TokenStream::new(), primal),
            Num::Int => {
                let usize = usize_type();
                let (save, read) = self.save(quote!((#primal as #usize)), Saved::Index);
                return (save, quote!((#read as _)));
            }
            Num::Bool => return self.save(primal, Saved::Flag),
            // A parameter or a literal, computed again where it is needed.
            Num::Opaque => return (TokenStream::new(), primal),
            Num::Real | Num::Unknown => {}
        }
        match &self.function.nodes[node].kind {
            NodeKind::Const(tokens) => (TokenStream::new(), tokens.clone()),
            NodeKind::ConstElement { table, indices }
                if indices.iter().all(|&i| self.recomputable(i)) =>
            {
                let indices = indices.iter().map(|&i| self.slot_of(i));
                (TokenStream::new(), quote!(#table #([#indices])*))
            }
            NodeKind::Read(place) if !place.indices.iter().all(|&i| self.recomputable(i)) => {
                // An element at an index the sweep cannot compute again: save the value.
                self.save(primal, Saved::Real)
            }
            NodeKind::Read(place) => {
                let var = &self.function.vars[place.var];
                let stable_int = var.kind == VarKind::Int && var.stable;
                if stable_int || (var.is_param && !var.reassigned) {
                    // The index slots are recomputed by the reverse statement's prelude.
                    (
                        TokenStream::new(),
                        self.place(place, self.var_slot(place.var)),
                    )
                } else if let Some(copy) = self.snapshot(place.var) {
                    (TokenStream::new(), self.place(place, copy))
                } else if place.indices.is_empty() {
                    // Reads of one variable within a statement see one value (`y * y`):
                    // saved once.
                    if let Some(read) = self.saved_reads.get(&place.var) {
                        return (TokenStream::new(), read.clone());
                    }
                    let (save, read) = self.save(primal, Saved::Real);
                    self.saved_reads.insert(place.var, read.clone());
                    (save, read)
                } else {
                    self.save(primal, Saved::Real)
                }
            }
            _ => self.save(primal, Saved::Real),
        }
    }
}

impl Generator<'_> {
    /// A real value as the workspace holds it: an `f64`; an `f32` is converted (exactly).
    fn workspace_write(&self, value: TokenStream) -> TokenStream {
        match self.function.real {
            Float::F64 => value,
            Float::F32 => {
                let f64 = Float::F64;
                quote!(((#value) as #f64))
            }
        }
    }

    /// A real value read back from the workspace: an `f32` converted back (exactly, since
    /// it was an `f32` when saved).
    fn workspace_read(&self, value: &TokenStream) -> TokenStream {
        match self.function.real {
            Float::F64 => value.clone(),
            Float::F32 => {
                let f32 = Float::F32;
                quote!(((#value) as #f32))
            }
        }
    }
}

/// `block[index]` → (`block`, `index`).
fn split_place(place: &TokenStream) -> (TokenStream, TokenStream) {
    let mut tokens: Vec<proc_macro2::TokenTree> = place.clone().into_iter().collect();
    match tokens.pop() {
        Some(proc_macro2::TokenTree::Group(group)) => {
            (tokens.into_iter().collect(), group.stream())
        }
        _ => (place.clone(), quote!(0usize)),
    }
}

/// The size of a slab's frame so far: the sum of what each saved value reserves, each
/// distinct term kept once with the number of times it was added (`0usize + 57usize *
/// ((1usize)) + …`), so that an offset stays as short as the kinds of values saved, however
/// many values a loop saves (written out one term per value, the offsets of a loop saving
/// hundreds of values made the generated code grow with the square of their number).
#[derive(Clone, Debug, Default)]
pub(super) struct FrameSize {
    terms: Vec<(String, TokenStream, usize)>,
}

impl FrameSize {
    /// Adds `term` to the size.
    fn add(&mut self, term: TokenStream) {
        let key = term.to_string();
        match self.terms.iter_mut().find(|(k, ..)| *k == key) {
            Some((.., count)) => *count += 1,
            None => self.terms.push((key, term, 1)),
        }
    }

    /// The size as an expression.
    pub(super) fn tokens(&self) -> TokenStream {
        let terms = self.terms.iter().map(|(_, term, count)| match count {
            1 => quote!((#term)),
            count => quote!(#count * (#term)),
        });
        quote!(0usize #(+ #terms)*)
    }
}
