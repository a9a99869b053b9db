//! Sums in lanes, under `#[grad(reassociate)]`.
//!
//! A loop that accumulates `acc += term` adds its terms one after the other: each addition
//! waits for the one before (four cycles or so), however independent the terms are. The
//! compiler may not reorder the additions, since that changes the result's last bits. When
//! the user opts in with `reassociate`, such a sum runs in [`LANES`] partial sums instead:
//! iteration `k` adds its term to lane `k % 4`, and after the loop the lanes are added in
//! pairs, `(l0 + l1) + (l2 + l3)`, then to `acc`. The lanes start at `-0.0`, the exact
//! identity of `+`, so an empty loop leaves `acc` as it was, bit for bit.
//!
//! Only the forward pass changes: the adjoint of a sum reaches every term unchanged, in
//! whatever order it was added, so the reverse sweep is the same. The forward loop takes
//! one of two forms, with the same result:
//!
//! - **Unrolled**, when the body is small, holds no loop, runs to its end (no `break`) and
//!   keeps nothing per iteration for the sweep: the body is written out once per lane,
//!   four iterations at a time, then the last `n % 4` one by one. The four chains are then
//!   independent in the code itself, and LLVM packs them into vector instructions where the
//!   target has them.
//!
//!   ```text
//!   for k in 0..n {              let mut __lanes_3 = [-0.0; 4];
//!       acc += w[k] * x[k];  →   while k + 4 <= n {
//!   }                                { let __lane = 0; __lanes_3[__lane] += w[k] * x[k]; }
//!                                    { let __lane = 1; __lanes_3[__lane] += w[k+1] * x[k+1]; }
//!                                    …  k += 4;
//!                                }
//!                                if k < n { lane 0 } if k + 1 < n { lane 1 } if k + 2 < n { lane 2 }
//!                                acc += (__lanes_3[0] + __lanes_3[1]) + (__lanes_3[2] + __lanes_3[3]);
//!   ```
//!
//! - **Rotated**, otherwise: the body is written once, adds to lane 0, and the lanes
//!   rotate by one at the end of each iteration (`[l1, l2, l3, l0]`), so the next
//!   iteration adds to the next lane; after the loop they are rotated back by the number
//!   of iterations run, then added. Whether the chains overlap is then up to LLVM's
//!   unrolling.
//!
//! A variable is summed in lanes when the loop body writes it in one statement only,
//! `acc = acc + term`, `acc = term + acc` or `acc = acc - term` (from `+=`, `-=` and
//! `.sum()`), not inside a loop nested in the body, and reads it nowhere else: nothing in
//! the loop sees a partial sum.

use super::*;
use proc_macro2::TokenTree;

/// The number of partial sums: four chains hide an addition's latency on common
/// processors, and two vectors of two `f64`s hold them.
pub(super) const LANES: usize = 4;

/// The variables that the loop `body` sums and that may be summed in lanes, if the function
/// opted in.
pub(super) fn sums(function: &Function, body: &[Stmt]) -> Vec<VarId> {
    if !function.reassociate {
        return Vec::new();
    }
    let mut candidates = Vec::new();
    accumulations(function, body, &mut candidates);
    candidates.sort_unstable();
    candidates.dedup();
    candidates
        .into_iter()
        .filter(|&acc| {
            let (mut reads, mut writes) = (0, 0);
            uses(function, body, acc, &mut reads, &mut writes);
            reads == 1 && writes == 1
        })
        .collect()
}

/// Collects the variables written as `acc = acc ± term` by statements of `block` (and of its
/// branches, not of nested loops) that are plain real scalars declared outside it.
fn accumulations(function: &Function, block: &[Stmt], out: &mut Vec<VarId>) {
    for stmt in block {
        match stmt {
            Stmt::Assign { place, value, .. } if place.indices.is_empty() => {
                let var = &function.vars[place.var];
                let plain = var.kind == VarKind::Real
                    && var.dims.is_empty()
                    && !var.slice
                    && !var.is_param
                    && function.field(place.var).is_none();
                if plain && accumulates(function, place.var, *value) {
                    out.push(place.var);
                }
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                accumulations(function, then, out);
                accumulations(function, otherwise, out);
            }
            _ => {}
        }
    }
}

/// Whether `value` is `acc + term`, `term + acc` or `acc - term`.
fn accumulates(function: &Function, acc: VarId, value: NodeId) -> bool {
    let reads_acc = |node: NodeId| {
        matches!(&function.nodes[node].kind,
            NodeKind::Read(place) if place.var == acc && place.indices.is_empty())
    };
    match &function.nodes[value].kind {
        NodeKind::Op { op, args } if args.len() == 2 => match op.name {
            "add" => reads_acc(args[0]) || reads_acc(args[1]),
            "sub" => reads_acc(args[0]),
            _ => false,
        },
        _ => false,
    }
}

/// Counts the reads of `acc` by nodes of `block`, at any depth, and the statements that
/// write it. A declaration of it, or a write in a nested loop, counts twice: either rules it
/// out (the caller wants one read and one write).
fn uses(function: &Function, block: &[Stmt], acc: VarId, reads: &mut usize, writes: &mut usize) {
    for stmt in block {
        *reads += stmt
            .nodes()
            .iter()
            .filter(|&&node| reads_var(function, node, acc))
            .count();
        match stmt {
            Stmt::Let { var, .. } if *var == acc => *writes += 2,
            Stmt::Unpack { vars, .. } if vars.contains(&acc) => *writes += 2,
            Stmt::Assign { place, .. } | Stmt::Push { place, .. } if place.var == acc => {
                *writes += 1;
            }
            Stmt::For { body, .. } | Stmt::Loop { body, .. } => {
                // A write in a nested loop is not this loop's to split.
                let mut inner = 0;
                uses(function, body, acc, reads, &mut inner);
                *writes += 2 * inner;
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                uses(function, then, acc, reads, writes);
                uses(function, otherwise, acc, reads, writes);
            }
            _ => {}
        }
    }
}

/// Whether `node` reads `var`, as a value or as an argument passed whole.
fn reads_var(function: &Function, node: NodeId, var: VarId) -> bool {
    match &function.nodes[node].kind {
        NodeKind::Read(place) => place.var == var,
        NodeKind::Len(read) => read.var == var,
        NodeKind::Pullback { args, .. } => args.iter().any(|arg| match arg {
            crate::ir::CallArg::Whole { place, .. } => place.var == var,
            crate::ir::CallArg::Value(_) => false,
        }),
        _ => false,
    }
}

/// The name of `acc`'s lanes.
fn lanes_slot(acc: VarId) -> Ident {
    slot("lanes", acc)
}

/// The name of the lane that the current iteration of the loop over `var` adds to.
pub(super) fn lane_slot(var: VarId) -> Ident {
    slot("lane", var)
}

/// Whether a loop body is small enough to be written out once per lane, and holds no loop.
pub(super) fn unrollable(body: &[Stmt]) -> bool {
    if crate::ir::has_loop(body) {
        return false;
    }
    let mut nodes = 0;
    crate::ir::each_node(body, &mut |_| nodes += 1);
    nodes <= MAX_UNROLLED_NODES
}

/// The largest loop body (in nodes) written out once per lane: a dot product's takes 8.
const MAX_UNROLLED_NODES: usize = 48;

/// Whether generated code saves or reads state that depends on the iteration: the
/// iteration's index into tapes and frames (`__iter_D`), a frame, a tape or the
/// workspace.
fn keeps_state(tokens: &TokenStream) -> bool {
    tokens.clone().into_iter().any(|tree| match tree {
        TokenTree::Ident(ident) => {
            let name = ident.to_string();
            ["__iter_", "__frame_", "__tape_"]
                .iter()
                .any(|prefix| name.starts_with(prefix))
                || name == "__ws"
        }
        TokenTree::Group(group) => keeps_state(&group.stream()),
        _ => false,
    })
}

/// The sum of lanes `from..to`, added in pairs: `((l[0] + l[1]) + (l[2] + l[3]))`.
fn pairwise(lanes: &Ident, from: usize, to: usize) -> TokenStream {
    if to - from == 1 {
        let lane = syn::Index::from(from);
        return quote!(#lanes[#lane]);
    }
    let middle = from + (to - from) / 2;
    let (left, right) = (pairwise(lanes, from, middle), pairwise(lanes, middle, to));
    quote!((#left + #right))
}

impl Generator<'_> {
    /// Generates a loop body with each of `sums` read and written in lane `lane` of its
    /// lanes. Returns the body, and whether it keeps nothing per iteration for the sweep
    /// (then it can be written out once per lane).
    pub(super) fn in_lanes(
        &mut self,
        sums: &[VarId],
        lane: &Ident,
        body: impl FnOnce(&mut Self) -> TokenStream,
    ) -> (TokenStream, bool) {
        for &acc in sums {
            let lanes = lanes_slot(acc);
            self.var_aliases.insert(acc, quote!(#lanes[#lane]));
        }
        let body = body(self);
        for acc in sums {
            self.var_aliases.remove(acc);
        }
        let stateless = !keeps_state(&body);
        (body, stateless)
    }

    /// The lanes of `sums`, declared before the loop.
    pub(super) fn declare_lanes(&self, sums: &[VarId]) -> TokenStream {
        let real = self.function.real;
        let zero = real.literal("0.0");
        sums.iter()
            .map(|&acc| {
                let lanes = lanes_slot(acc);
                quote!(let mut #lanes: [#real; #LANES] = [-#zero; #LANES];)
            })
            .collect()
    }

    /// After the loop: each sum's lanes added in pairs, then to the variable. The lanes
    /// of a loop that rotated them (`rotations` times) are put back in order first.
    pub(super) fn add_lanes(&self, sums: &[VarId], rotations: Option<&TokenStream>) -> TokenStream {
        sums.iter()
            .map(|&acc| {
                let lanes = lanes_slot(acc);
                let slot = self.var_slot(acc);
                let total = pairwise(&lanes, 0, LANES);
                let unrotate = rotations.map(|n| quote!(#lanes.rotate_right((#n) % #LANES);));
                quote!(#unrotate #slot += #total;)
            })
            .collect()
    }

    /// The loop run four iterations at a time, each with its own lane, then the last
    /// `n % 4` one by one: `body` written out seven times, after `bind(k)` binds the
    /// loop variable of iteration `k`. For bodies that save nothing ([`unrollable`]).
    pub(super) fn unrolled(
        &self,
        lane: &Ident,
        n: &TokenStream,
        bind: &dyn Fn(TokenStream) -> TokenStream,
        body: &TokenStream,
    ) -> TokenStream {
        let usize = usize_type();
        let count = Ident::new("__unroll_n", Span::mixed_site());
        let k = Ident::new("__unroll_k", Span::mixed_site());
        let iteration = |offset: usize| {
            let binding = bind(quote!(#k + #offset));
            quote!({ let #lane = #offset; #binding #body })
        };
        let group = (0..LANES).map(iteration);
        let rest = (0..LANES - 1).map(|offset| {
            let run = iteration(offset);
            quote!(if #k + #offset < #count #run)
        });
        quote! {
            {
                let #count: #usize = #n;
                let mut #k: #usize = 0;
                while #k + #LANES <= #count {
                    #(#group)*
                    #k += #LANES;
                }
                #(#rest)*
            }
        }
    }

    /// A loop written once whose `sums` rotate through their lanes: what starts each
    /// iteration (its lane is the first), what ends it (the lanes rotate by one, so the
    /// next iteration adds to the next lane), and what follows the loop (the lanes, put
    /// back in order after `rotations` turns, added to the sums). Nothing for no sums.
    pub(super) fn rotated_lanes(
        &self,
        sums: &[VarId],
        lane: &Ident,
        rotations: &TokenStream,
    ) -> (TokenStream, TokenStream, TokenStream) {
        if sums.is_empty() {
            return Default::default();
        }
        let rotate = sums
            .iter()
            .map(|&acc| {
                let lanes = lanes_slot(acc);
                let turned = (1..LANES).chain([0]).map(syn::Index::from);
                quote!(#lanes = [#(#lanes[#turned]),*];)
            })
            .collect();
        (
            quote!(let #lane = 0usize;),
            rotate,
            self.add_lanes(sums, Some(rotations)),
        )
    }
}
