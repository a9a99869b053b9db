//! Sums in lanes, under `#[grad(reassociate)]`.
//!
//! A loop that accumulates `acc += term` adds its terms one after the other: each addition
//! waits for the one before (four cycles or so), however independent the terms are. The
//! compiler may not reorder the additions, since that changes the result's last bits. When
//! the user opts in with `reassociate`, such a sum runs in [`LANES`] partial sums instead,
//! each term going to the next lane in turn, and the lanes are added into `acc` after the
//! loop:
//!
//! ```text
//! for k in 0..n {                         let mut __lanes_3 = [-0.0; 4];
//!     acc += w[k] * x[k];          →      for k in 0..n {
//! }                                           __lanes_3[0] = __lanes_3[0] + w[k] * x[k];
//!                                             __lanes_3 = [__lanes_3[1], __lanes_3[2],
//!                                                          __lanes_3[3], __lanes_3[0]];
//!                                         }
//!                                         acc += ((__lanes_3[0] + __lanes_3[1])
//!                                                + (__lanes_3[2] + __lanes_3[3]));
//! ```
//!
//! The rotation costs nothing (the compiler renames registers) and makes four chains of
//! additions that the processor overlaps. Only the forward pass changes: the adjoint of a
//! sum reaches every term unchanged, in whatever order it was added, so the reverse sweep
//! is the same. The lanes start at `-0.0`, the exact identity of `+`, so an empty loop
//! leaves `acc` as it was, bit for bit.
//!
//! A variable is summed in lanes when the loop body writes it in one statement only,
//! `acc = acc + term`, `acc = term + acc` or `acc = acc - term` (from `+=`, `-=` and
//! `.sum()`), not inside a loop nested in the body, and reads it nowhere else: nothing in
//! the loop sees a partial sum.

use super::*;

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

/// Counts the reads of `acc` by nodes of `block`, and the statements that write or declare
/// it, at any depth.
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
        NodeKind::Len(read) => *read == var,
        NodeKind::Pullback { args, .. } => args.iter().any(|arg| match arg {
            crate::ir::CallArg::Whole { place, .. } => place.var == var,
            crate::ir::CallArg::Value(_) => false,
        }),
        _ => false,
    }
}

/// The name of `acc`'s lanes.
pub(super) fn lanes_slot(acc: VarId) -> Ident {
    slot("lanes", acc)
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
    /// Generates a loop body with each of `sums` read and written in its first lane, and
    /// returns what the loop needs around it: the lanes' declarations (before the loop),
    /// their rotation (at the end of each iteration) and the sums of the lanes added to the
    /// variables (after the loop).
    pub(super) fn in_lanes(
        &mut self,
        sums: &[VarId],
        body: impl FnOnce(&mut Self) -> TokenStream,
    ) -> (TokenStream, TokenStream, TokenStream, TokenStream) {
        let real = self.function.real;
        let zero = real.literal("0.0");
        let (mut before, mut rotate, mut after) =
            (TokenStream::new(), TokenStream::new(), TokenStream::new());
        for &acc in sums {
            let lanes = lanes_slot(acc);
            let slot = self.var_slot(acc);
            let turned = (1..LANES).chain([0]).map(syn::Index::from);
            let total = pairwise(&lanes, 0, LANES);
            before.extend(quote!(let mut #lanes: [#real; #LANES] = [-#zero; #LANES];));
            rotate.extend(quote!(#lanes = [#(#lanes[#turned]),*];));
            after.extend(quote!(#slot += #total;));
            self.var_aliases.insert(acc, quote!(#lanes[0]));
        }
        let body = body(self);
        for acc in sums {
            self.var_aliases.remove(acc);
        }
        (before, body, rotate, after)
    }
}
