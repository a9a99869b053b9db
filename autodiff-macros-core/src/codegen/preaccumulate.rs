//! Preaccumulated sums, under `#[grad(reassociate)]`.
//!
//! A loop whose iterations only add to one variable, `acc += term`, passes the adjoint of
//! `acc` unchanged to every term: the loop's contribution to the adjoint of a variable `w`
//! that the terms read is `λ · Σᵢ ∂termᵢ/∂w`, with `λ` the adjoint of `acc` after the
//! loop. The sum does not depend on `λ`, so the forward pass can compute it as it goes:
//! each iteration runs its own forward pass and, right after, its own reverse sweep with
//! the adjoint of `acc` seeded to `1`, adding into a gradient `G_w` kept across iterations
//! (local Jacobian preaccumulation). The reverse sweep then only adds `λ · G_w` to the
//! adjoint of each `w`. Nothing is kept per iteration: a loop over 10,000 samples needs no
//! workspace, and its saved values stay in registers and the cache.
//!
//! ```text
//! for s in 0..n {                     let mut __preacc_5_0 = [-0.0; P];
//!     let h = f(w, x[s]);             for s in 0..n {
//!     acc += h;                  →        let h = f(w, x[s]); acc = acc + h;
//! }                                       let mut __adjoint_var_2 = 1.0;
//!                                         … sweep of the body, adding to __preacc_5_0 …
//!                                     }
//!                                     … (reverse sweep, at the loop)
//!                                     if adj(acc) != 0.0 { adj(w) += adj(acc) · __preacc_5_0 }
//! ```
//!
//! The result is `λ · Σᵢ gᵢ` where the plain sweep computes `Σᵢ λ · gᵢ`: equal in exact
//! arithmetic, not bit for bit, which is why it waits for the user's `reassociate`. The
//! sum itself runs in lanes, rotated (see `lanes`), as under `reassociate` without
//! preaccumulation. A zero `λ` adds nothing, as the sparse sweep skips a loop whose
//! adjoints are zero, and neither does a loop that ran no iteration.
//!
//! A loop qualifies when it is in the function's outermost block (not in a loop or a
//! branch, nor in another preaccumulated loop), holds a loop (whose values the plain
//! sweep would keep for every iteration), runs a known number of times with no `break`
//! or `return`, and writes one differentiated variable declared outside it: the sum, a
//! real scalar local that it writes once as `acc = acc ± term` and reads nowhere else
//! (as for lanes). What it reads
//! from outside and differentiates must be real scalars, arrays, slices and vectors of
//! `f64` numbers, or slices of arrays of them (`xs: &[[f64; 2]]`, not passed whole in the
//! loop; their gradients take a workspace from the pool, as `Workspace::rows` for a slice
//! of arrays, and go back in the reverse order, so the steady state allocates nothing),
//! or struct parameters, read by field or passed whole, whose
//! gradients are values of their type (`zero_like`; not for a struct with a vector
//! field, which would allocate it every call).

use super::*;
use crate::ir::{CallArg, Node};

/// A loop whose gradient the forward pass preaccumulates.
pub(super) struct Preaccumulated {
    /// The variable it sums into.
    sum: VarId,
    /// The differentiated variables from outside that it reads, each with the slot of its
    /// preaccumulated gradient.
    inputs: Vec<(VarId, Ident)>,
    /// The struct parameters it reads (fields, or whole), each with the slot of its
    /// preaccumulated gradient, a value of the struct's type.
    structs: Vec<(usize, Ident)>,
    /// Its loop variable or counter, which names its slots.
    key: VarId,
}

/// The workspace holding the preaccumulated gradient `gradient` of a slice.
fn workspace_slot(gradient: &Ident) -> Ident {
    Ident::new(&format!("{gradient}_ws"), Span::mixed_site())
}

/// Whether preaccumulated loop `key` ran at least once: a loop that did not contributes
/// nothing, as in the plain sweep, even where the adjoint of its sum is infinite or NaN.
fn ran_slot(key: VarId) -> Ident {
    Ident::new(&format!("__preacc_{key}_ran"), Span::mixed_site())
}

/// Whether `block` sets a control flag or returns, at any depth.
fn controls(block: &[Stmt]) -> bool {
    block.iter().any(|stmt| match stmt {
        Stmt::SetFlag { .. } | Stmt::Return { .. } => true,
        Stmt::For { body, .. } | Stmt::Loop { body, .. } => controls(body),
        Stmt::If {
            then, otherwise, ..
        } => controls(then) || controls(otherwise),
        _ => false,
    })
}

/// Whether `block` passes slice `var` whole to a pullback, at any depth.
fn passes_whole(nodes: &[Node], block: &[Stmt], var: VarId) -> bool {
    let mut whole = false;
    crate::ir::each_node(block, &mut |id| {
        if let NodeKind::Pullback { args, .. } = &nodes[id].kind {
            whole |= args.iter().any(|arg| {
                matches!(arg, CallArg::Whole { place, .. }
                    if place.var == var && place.indices.is_empty())
            });
        }
    });
    whole
}

impl Generator<'_> {
    /// The variable that a loop with `body` sums into, and the differentiated variables it
    /// reads from outside, if its gradient can be preaccumulated.
    ///
    /// Worth it where each iteration has values of its own for its sweep to keep: a body
    /// with loops inside. (A dot product keeps nothing; its gradient's forward pass runs
    /// four iterations at a time.) Not in a body that is preaccumulated already, whose
    /// values all stay in scope.
    ///
    /// Under `parallel`, a loop of run-time length (`runtime`) is worth it too, loop
    /// inside or not: its chunks run on every core.
    fn preaccumulable(&self, body: &Block, runtime: bool) -> Option<(VarId, Vec<VarId>)> {
        let function = self.function;
        let worth_it = crate::ir::has_loop(body) || (runtime && function.parallel.is_some());
        if !function.reassociate || self.scoped() || self.in_sum || !worth_it || controls(body) {
            return None;
        }
        let (mut written, mut declared) = (Vec::new(), Vec::new());
        crate::ir::writes(body, &mut written, &mut declared);
        written.retain(|var| !declared.contains(var));
        // Chunks that run at once may write nothing outside but the sum, which each
        // of them keeps its own part of.
        if function.parallel.is_some() && written.iter().any(|&var| !self.activity.var(var)) {
            return None;
        }
        written.retain(|&var| self.activity.var(var));
        written.sort_unstable();
        written.dedup();
        let [sum] = written[..] else {
            return None;
        };
        if !lanes::sums(function, body).contains(&sum) {
            return None;
        }
        let mut inputs = Vec::new();
        crate::ir::mentions(&function.nodes, body, &mut inputs);
        inputs.retain(|&var| var != sum && !declared.contains(&var) && self.activity.var(var));
        inputs.sort_unstable();
        inputs.dedup();
        inputs
            .iter()
            .all(|&var| {
                function.plain_real(var)
                    || self.slice_input(var, body)
                    || self.struct_input(var).is_some()
            })
            .then_some((sum, inputs))
    }

    /// For a struct parameter or a field of one, read by the loop: the parameter (an
    /// index into `params`), when its preaccumulated gradient can be a value of its type,
    /// made by `zero_like` without allocating (no vector field) and of `f64`s.
    fn struct_input(&self, var: VarId) -> Option<usize> {
        let function = self.function;
        let param = match function.field(var) {
            Some(field) => field.param,
            None => function.struct_param(var)?,
        };
        let vectors = function
            .fields
            .iter()
            .any(|f| f.param == param && function.vars[f.var].slice);
        (function.real == Float::F64 && !vectors).then_some(param)
    }

    /// Whether `var` is a slice (or vector) of numbers, or of arrays of numbers
    /// (`&[[f64; 2]]`), whose preaccumulated gradient can live in a workspace of its own
    /// (which holds `f64`s; rows of an array's length for a slice of arrays, which
    /// `body` then may not pass whole, as `Rows` is not a slice).
    fn slice_input(&self, var: VarId, body: &Block) -> bool {
        let function = self.function;
        let v = &function.vars[var];
        let shape = match v.dims.len() {
            0 => true,
            1 => !passes_whole(&function.nodes, body, var),
            _ => false,
        };
        v.slice
            && shape
            && v.kind == VarKind::Real
            && function.real == Float::F64
            && function.field(var).is_none()
            && function.struct_param(var).is_none()
    }

    /// The forward pass of loop `stmt` with its gradient preaccumulated (after `nodes`,
    /// the statement's own), or `None` if it does not qualify.
    pub(super) fn preaccumulated_forward(
        &mut self,
        stmt: &Stmt,
        nodes: &TokenStream,
    ) -> Option<TokenStream> {
        // The loop variable or counter (which names the slots), the body, and the loop's
        // pattern, range and number of iterations.
        let usize = usize_type();
        let (key, body, index, range, trips, runtime) = match stmt {
            Stmt::For {
                var,
                start,
                end,
                inclusive,
                body,
            } => (
                *var,
                body,
                self.var_slot(*var),
                range(start, end, *inclusive),
                trips(start, end, *inclusive),
                false,
            ),
            Stmt::Loop {
                counter,
                count: Some(count),
                exits,
                body,
                max_trips,
                ..
            } if exits.is_empty() => {
                let count = self.slot_of(*count);
                let count = quote!((#count as #usize));
                (
                    *counter,
                    body,
                    self.var_slot(*counter),
                    quote!(0..#count),
                    count,
                    max_trips.is_none(),
                )
            }
            _ => return None,
        };
        let (sum, inputs) = self.preaccumulable(body, runtime)?;
        let real = self.function.real;
        // Structs (through their fields or whole) get one gradient per parameter, of its
        // type; the other inputs one each.
        let mut structs: Vec<(usize, Ident)> = Vec::new();
        let mut names: HashMap<VarId, TokenStream> = HashMap::new();
        for &var in &inputs {
            let Some(param) = self.struct_input(var) else {
                continue;
            };
            let gradient = match structs.iter().find(|(p, _)| *p == param) {
                Some((_, gradient)) => gradient.clone(),
                None => {
                    let name = format!("__preacc_{key}_param_{param}");
                    let gradient = Ident::new(&name, Span::mixed_site());
                    structs.push((param, gradient.clone()));
                    gradient
                }
            };
            let access = self.function.field(var).map(|field| field.access.clone());
            names.insert(var, quote!(#gradient #access));
        }
        let inputs: Vec<(VarId, Ident)> = inputs
            .into_iter()
            .filter(|var| !names.contains_key(var))
            .map(|var| {
                let name = format!("__preacc_{key}_{var}");
                (var, Ident::new(&name, Span::mixed_site()))
            })
            .collect();
        let ran = ran_slot(key);
        let declarations: TokenStream = inputs
            .iter()
            .map(|(var, gradient)| {
                if self.function.vars[*var].slice {
                    // Zeros for every element, in a workspace from the pool.
                    let workspace = workspace_slot(gradient);
                    let len = self.var_slot(*var);
                    let block = match self.function.vars[*var].dims.first() {
                        Some(row) => quote!(rows::<{ #row }>),
                        None => quote!(block),
                    };
                    return quote! {
                        let mut #workspace = ::autodiff::__private::Workspace::take();
                        let mut #gradient = #workspace.#block(#len.len());
                    };
                }
                let start = self.no_adjoint(&self.function.vars[*var].dims);
                quote!(let mut #gradient = #start;)
            })
            .chain(structs.iter().map(|(param, gradient)| {
                let zero = zero_partial(self.function, *param);
                quote!(let mut #gradient = #zero;)
            }))
            .chain(std::iter::once(quote!(let mut #ran = false;)))
            .collect();
        // The body, generated as if it were a function of its own: out of loops, so its
        // values stay in scope from its forward pass to its sweep.
        let mut inner = Generator::new(self.function, self.activity, TokenStream::new());
        inner.in_sum = true;
        inner.aliases = self.aliases.clone();
        inner.var_aliases = self.var_aliases.clone();
        inner.slabs = self.slabs;
        inner.saved = self.saved;
        inner.adjoint_names = inputs
            .iter()
            .map(|(var, gradient)| (*var, gradient.to_token_stream()))
            .chain(names)
            .collect();
        // The sum runs in lanes, as every sum of a loop does under `reassociate`.
        let sums = [sum];
        let lane = lanes::lane_slot(key);
        let (forward, _) = inner.in_lanes(&sums, &lane, |inner| inner.forward_block(body));
        let sweep = inner.reverse_block(body, true);
        self.slabs = inner.slabs;
        self.saved = inner.saved;
        let tapes = &inner.tapes;
        let seed = slot("adjoint_var", sum);
        let one = real.literal("1.0");
        let declare_lanes = self.declare_lanes(&sums);
        let (head, rotate, add) = self.rotated_lanes(&sums, &lane, &trips);
        let iteration = quote! {
            #ran = true;
            #head
            #(#tapes)*
            #forward
            let mut #seed: #real = #one;
            #sweep
            #rotate
        };
        let code = match self.function.parallel {
            Some(span) => {
                let parts = Parts {
                    sum,
                    inputs: &inputs,
                    structs: &structs,
                    ran: &ran,
                };
                let n = quote!(::core::iter::Iterator::size_hint(&(#range)).0);
                let chunk = chunk_slot();
                let (_, _, add) = self.rotated_lanes(&sums, &lane, &quote!(#chunk.len()));
                let (take, recycle) = if inner.uses_workspace {
                    let ws = workspace();
                    (
                        quote!(let mut #ws = ::autodiff::__private::Workspace::take();),
                        quote!(#ws.recycle();),
                    )
                } else {
                    Default::default()
                };
                let body = quote! {
                    #declarations
                    #take
                    #declare_lanes
                    for #index in ::core::iter::Iterator::take(
                        ::core::iter::Iterator::skip(#range, #chunk.start),
                        #chunk.len(),
                    ) {
                        #iteration
                    }
                    #add
                    #recycle
                };
                self.parallel_loops += 1;
                self.chunked(span, &parts, &n, body)
            }
            None => {
                self.uses_workspace |= inner.uses_workspace;
                quote! {
                    #declarations
                    #declare_lanes
                    for #index in #range {
                        #iteration
                    }
                    #add
                }
            }
        };
        self.preaccumulated.insert(
            stmt as *const Stmt,
            Preaccumulated {
                sum,
                inputs,
                structs,
                key,
            },
        );
        Some(quote!(#nodes #code))
    }

    /// The reverse of a preaccumulated loop `stmt`: its gradients, scaled by the adjoint
    /// of its sum, added to the adjoints of the variables it read.
    pub(super) fn preaccumulated_reverse(&mut self, stmt: &Stmt) -> Option<TokenStream> {
        let Preaccumulated {
            sum,
            inputs,
            structs,
            key,
        } = self.preaccumulated.get(&(stmt as *const Stmt))?;
        let ran = ran_slot(*key);
        let lambda = self.adjoint_var(*sum);
        let zero = self.function.real.literal("0.0");
        let mut adds = TokenStream::new();
        let mut recycle = TokenStream::new();
        for (var, gradient) in inputs {
            self.unread.remove(var);
            let adjoint = self.adjoint_var(*var);
            let v = &self.function.vars[*var];
            adds.extend(if v.slice {
                let workspace = workspace_slot(gradient);
                // Back to the pool in the reverse order of taking, so that each call
                // takes the same workspaces for the same gradients and none has to grow.
                recycle = quote!(#workspace.recycle(); #recycle);
                if v.dims.is_empty() {
                    quote! {
                        ::autodiff::__private::Flat::add_scaled_to(
                            &#gradient[..], #lambda, &mut #adjoint[..],
                        );
                    }
                } else {
                    quote!(#gradient.add_scaled_to(#lambda, &mut #adjoint[..]);)
                }
            } else if v.dims.is_empty() {
                quote!(#adjoint += #lambda * #gradient;)
            } else {
                quote!(::autodiff::__private::Flat::add_scaled_to(&#gradient, #lambda, &mut #adjoint);)
            });
        }
        for (param, gradient) in structs {
            let adjoint = self.adjoint_var(self.function.params[*param].var);
            adds.extend(quote! {
                ::autodiff::__private::Differentiable::add_scaled(&mut #adjoint, #lambda, &#gradient);
            });
        }
        Some(quote!(if #ran && #lambda != #zero { #adds } #recycle))
    }
}

/// What the chunks of a `parallel` loop hand on: the part of the sum, whether an iteration
/// ran, and the preaccumulated gradients.
struct Parts<'a> {
    sum: VarId,
    inputs: &'a [(VarId, Ident)],
    structs: &'a [(usize, Ident)],
    ran: &'a Ident,
}

/// The range of iterations a chunk of a `parallel` loop runs, a generated local.
fn chunk_slot() -> Ident {
    Ident::new("__chunk", Span::mixed_site())
}

impl Generator<'_> {
    /// A preaccumulated loop run in chunks (`#[grad(parallel)]`, see
    /// `autodiff_runtime::parallel`): `body` declares a chunk's gradients, runs its
    /// iterations and adds its lanes to the sum's slot, which starts at `-0.0` in each
    /// chunk. Each chunk returns its part of the sum and its gradients, which the
    /// runtime adds in a fixed tree; then the sum gets its total and the gradients
    /// their names, as after the loop run in one piece.
    ///
    /// ```text
    /// let (__part, ran, g_w, g_xs_ws) = parallel::reduce(n,
    ///     &|__chunk| { let mut acc = -0.0; …the loop over __chunk…; (acc, ran, g_w, g_xs_ws) },
    ///     &|(a0, a1, mut a2, mut a3), (b0, b1, b2, b3)| { a2 += b2; …; (a0 + b0, a1 || b1, a2, a3) },
    /// );
    /// acc += __part;
    /// let g_xs = g_xs_ws.reals_mut();
    /// ```
    fn chunked(
        &self,
        span: Span,
        parts: &Parts,
        n: &TokenStream,
        body: TokenStream,
    ) -> TokenStream {
        let function = self.function;
        let real = function.real;
        let zero = real.literal("0.0");
        let sum = self.var_slot(parts.sum);
        let chunk = chunk_slot();
        let ran = parts.ran;
        let name = |kind: &str, k: usize| Ident::new(&format!("__{kind}_{k}"), Span::mixed_site());
        // What each chunk returns after its part and its flag, with how two are added
        // and how the total is bound.
        let mut returned = Vec::new();
        let mut adds = Vec::new();
        let mut bound = Vec::new();
        let mut after = TokenStream::new();
        let flat = quote!(::autodiff::__private::Flat);
        for (k, (var, gradient)) in parts.inputs.iter().enumerate() {
            let (a, b) = (name("left", k), name("right", k));
            let v = &function.vars[*var];
            if v.slice {
                let workspace = workspace_slot(gradient);
                adds.push(quote!(::autodiff::__private::parallel::add_workspace(&mut #a, #b);));
                let view = match v.dims.first() {
                    Some(row) => quote!(all_rows::<{ #row }>()),
                    None => quote!(reals_mut()),
                };
                after.extend(quote!(let #gradient = #workspace.#view;));
                bound.push(quote!(mut #workspace));
                returned.push(workspace.into_token_stream());
            } else {
                adds.push(if v.dims.is_empty() {
                    quote!(#a += #b;)
                } else {
                    quote!(#flat::add_to(&#b, &mut #a);)
                });
                bound.push(gradient.to_token_stream());
                returned.push(gradient.to_token_stream());
            }
        }
        for (k, (_, gradient)) in parts.structs.iter().enumerate() {
            let k = k + parts.inputs.len();
            let (a, b) = (name("left", k), name("right", k));
            adds.push(quote! {
                ::autodiff::__private::Differentiable::add_scaled(&mut #a, 1.0, &#b);
            });
            bound.push(gradient.to_token_stream());
            returned.push(gradient.to_token_stream());
        }
        let count = returned.len();
        let lefts: Vec<Ident> = (0..count).map(|k| name("left", k)).collect();
        let rights: Vec<Ident> = (0..count).map(|k| name("right", k)).collect();
        let part = Ident::new("__part", Span::mixed_site());
        let (ran_left, ran_right) = (name("left", count), name("right", count));
        let (part_left, part_right) = (name("left", count + 1), name("right", count + 1));
        let usize = usize_type();
        // The parameters passed by reference go into the chunk as arguments of a closure
        // of its own, called at once: LLVM then knows, as in the function itself, that
        // the chunk's gradients (in workspaces) are not the data they read, and keeps
        // their reads out of the loops that write gradients. Read through the chunk's
        // captures, a 256-wide layer's gradient took 1.5x the time.
        let (names, types): (Vec<&Ident>, Vec<&syn::Type>) = function
            .params
            .iter()
            .filter(|p| {
                p.ident != "self"
                    && matches!(p.ty, syn::Type::Reference(_))
                    && !crate::types::mentions(&p.ty.to_token_stream(), &|i| i == "impl")
            })
            .map(|p| (&p.ident, &p.ty))
            .unzip();
        let args = quote! {
            #n,
            &|#chunk: ::core::ops::Range<#usize>| {
                (|#(#[allow(unused_variables)] #names: #types),*| {
                    let mut #sum: #real = -#zero;
                    #body
                    (#sum, #ran, #(#returned),*)
                })(#(#names),*)
            },
            &|(#part_left, #ran_left, #(mut #lefts),*), (#part_right, #ran_right, #(#rights),*)| {
                #(#adds)*
                (#part_left + #part_right, #ran_left || #ran_right, #(#lefts),*)
            },
        };
        // The parentheses at `parallel`, so that the error of a build without the
        // `rayon` feature (a bound of `reduce`) is reported under it.
        let reduce = quote_spanned!(span=> ::autodiff::__private::parallel::reduce(#args));
        quote! {
            let (#part, #ran, #(#bound),*) = #reduce;
            #sum += #part;
            #after
        }
    }
}
