//! `_hessian` in one sweep over lanes: vector reverse over vector forward.
//!
//! `_hessian` of `n` numbers could call `_hvp` `n` times, along each basis vector: `n`
//! forward passes and `n` sweeps, each computing the same values, the same rules
//! (`sin`, `exp`) and the same partials again. Instead, the tangent transformation runs
//! once with tangents of `n` lanes (`Lanes<n>`), the basis vectors at once, so that the
//! tangent output's lane `k` is `∂f/∂p_k`: the gradient. The reverse sweep of that
//! tangent function then runs once with adjoints of `n` lanes, seeded with one in every
//! lane of the tangent output, so that lane `k` of a parameter's adjoint is
//! `∂(∂f/∂p_k)/∂p`, the `k`-th row of `H`:
//!
//! ```text
//! f(p) -> y
//!   │ tangent, with tangents in lanes     ṗ = the basis: lane k of ṗ_j is [k = j]
//!   ▼
//! f_tangent(p, ṗ) -> (y, ẏ)               ẏ in lanes: lane k is ∂f/∂p_k
//!   │ reverse, with adjoints in lanes     seed (0, 1 in every lane)
//!   ▼
//! p̄ in lanes                              lane k of p̄_j is H[k][j]
//! ```
//!
//! The values and the rules are computed once, as in one `_grad`; what grows with `n` is
//! arithmetic lane by lane, which the compiler packs into vector instructions. The
//! transformations are the two that `_hvp` composes (`tangent`, the sweep), with the
//! tangents' and the adjoints' type changed; the code between them is the same.
//!
//! It applies where every adjoint can be a local of the sweep: straight-line code and
//! branches in `f64`, without loops (whose sweep reads values saved in `f64` tapes),
//! calls (whose pullbacks take `f64` seeds), slices or structs, and at most [`MAX_LANES`]
//! differentiated numbers of literal sizes. Other functions keep one `_hvp` per number.

use super::tangent;
use crate::check::Activity;
use crate::ir::{Float, Function, NodeKind, Stmt, VarKind};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, ToTokens};

/// The most differentiated numbers for which `_hessian` runs in lanes: each value of the
/// sweep carries that many, so the sweep's memory grows with them.
pub const MAX_LANES: usize = 16;

/// The most nodes of a function whose `_hessian` runs in lanes: a longer one keeps one
/// `_hvp` per number. Its sweep in lanes is one function body with every value and
/// adjoint a local, and rustc's debug build of such a body for `deep` (200 `let`s, 1,200
/// nodes) overflowed rustc's stack.
pub const MAX_NODES: usize = 500;

/// The number of differentiated numbers, when `_hessian` can run in one sweep over lanes
/// (see the module's documentation).
fn lane_count(function: &Function) -> Option<usize> {
    if function.real != Float::F64
        || function.nodes.len() > MAX_NODES
        || !function.original.sig.generics.params.is_empty()
        || function.in_impl
    {
        return None;
    }
    let mut count = 0usize;
    for param in &function.params {
        let var = &function.vars[param.var];
        if param.strukt.is_some() || var.slice || var.rows {
            return None;
        }
    }
    for &i in &function.wrt {
        let var = &function.vars[function.params[i].var];
        if var.kind != VarKind::Real {
            return None;
        }
        count = count.checked_add(literal_count(&var.dims)?)?;
    }
    (1..=MAX_LANES).contains(&count).then_some(count)
}

/// The number of elements of a parameter of dimensions `dims`, when each is an integer
/// literal.
fn literal_count(dims: &[TokenStream]) -> Option<usize> {
    dims.iter().try_fold(1usize, |n, dim| {
        let len = syn::parse2::<syn::LitInt>(dim.clone())
            .ok()?
            .base10_parse::<usize>()
            .ok()?;
        n.checked_mul(len)
    })
}

/// Whether the tangent function's sweep keeps every adjoint in a local: no loops, no
/// calls, no vectors.
fn straight_line(tangent: &Function) -> bool {
    fn block(body: &[Stmt]) -> bool {
        body.iter().all(|stmt| match stmt {
            Stmt::Let { .. } | Stmt::Assign { .. } | Stmt::Return { .. } => true,
            // A value and its tangent leaving their statement together.
            Stmt::Unpack { .. } => true,
            Stmt::If {
                then, otherwise, ..
            } => block(then) && block(otherwise),
            Stmt::SetFlag { .. }
            | Stmt::Push { .. }
            | Stmt::Eval { .. }
            | Stmt::For { .. }
            | Stmt::Loop { .. } => false,
        })
    }
    block(&tangent.body)
        && tangent.nodes.iter().all(|node| {
            !matches!(
                node.kind,
                NodeKind::Call { .. } | NodeKind::Pullback { .. } | NodeKind::Vector { .. }
            )
        })
}

/// The value, the first part of the tangent function's result, held constant
/// (`stop_gradient`): its seed is zero, so the sweep need not carry its adjoints, lanes of
/// zeros, back through the function.
fn hold_value(tangent: &mut Function) {
    let Some(Stmt::Return { value, nodes }) = tangent.body.last_mut() else {
        return;
    };
    let NodeKind::Tuple(parts) = &tangent.nodes[*value].kind else {
        return;
    };
    let Some(&first) = parts.first() else {
        return;
    };
    let mut held = tangent.nodes[first].clone();
    held.kind = NodeKind::StopGradient(first);
    tangent.nodes.push(held);
    let id = tangent.nodes.len() - 1;
    if let NodeKind::Tuple(parts) = &mut tangent.nodes[*value].kind {
        parts[0] = id;
    }
    let at = nodes.iter().position(|n| n == value).unwrap_or(nodes.len());
    nodes.insert(at, id);
}

/// The body of `_hessian` as one sweep over lanes, or `None` where it does not apply
/// (then `_hessian` calls `_hvp` once per number).
pub fn hessian_body(function: &Function, activity: &Activity) -> Option<TokenStream> {
    let n = lane_count(function)?;
    let lanes = quote!(::autodiff::__private::Lanes::<#n>);
    let mut tangent = tangent::tangent_function_in(function, activity, Some(lanes.clone())).ok()?;
    if !straight_line(&tangent) {
        return None;
    }
    // The gradient is the adjoint of the tangents (any lane), as `_hvp`'s is, so that it
    // has `_grad`'s bits.
    let params = function.params.len();
    hold_value(&mut tangent);
    let tangent_activity = crate::check::check(&tangent).ok()?;
    if !function
        .wrt
        .iter()
        .any(|&i| tangent_activity.var(function.params[i].var))
    {
        return None;
    }
    let seed = quote!((#lanes::ZERO, #lanes::ONES));
    let sweep = super::super::sweep_in(&tangent, &tangent_activity, seed, Some(lanes.clone()));

    let index = Ident::new("__k", Span::mixed_site());
    let hessian = Ident::new("__hessian", Span::mixed_site());
    let value = Ident::new("__value", Span::mixed_site());
    // The tangents: lane `offset + flat index` of each differentiated number is one.
    let mut basis = TokenStream::new();
    // The rows of `H`, from the parameters' adjoints; the gradient, from the tangents'.
    let mut rows = TokenStream::new();
    let mut partials = Vec::new();
    let mut offset = 0usize;
    for (k, &i) in function.wrt.iter().enumerate() {
        let param = &function.params[i];
        let var = &function.vars[param.var];
        let dims = &var.dims;
        let t = super::super::jvp::tangent_param(function, i);
        let adjoint = super::super::slot("adjoint_var", param.var);
        let partial = Ident::new(&format!("__partial_{k}"), Span::mixed_site());
        let zero = super::super::zeros(Float::F64, dims);
        let counters: Vec<Ident> = (0..dims.len())
            .map(|d| Ident::new(&format!("__i{d}"), Span::mixed_site()))
            .collect();
        // The flat index of element `[i0][i1]…` in `H`'s rows and columns.
        let mut flat = quote!(0usize);
        for (counter, dim) in counters.iter().zip(dims) {
            flat = quote!((#flat) * (#dim) + #counter);
        }
        let flat = quote!(#offset + #flat);
        let place = |name: &dyn ToTokens| {
            let indices = counters.iter().map(|c| quote!([#c]));
            quote!(#name #(#indices)*)
        };
        let (t_place, adjoint_place, partial_place) = (place(&t), place(&adjoint), place(&partial));
        let nest = |inner: TokenStream| {
            counters.iter().zip(dims).rev().fold(
                inner,
                |inner, (c, dim)| quote!(for #c in 0..(#dim) { #inner }),
            )
        };
        let lanes_zero = super::super::filled(dims, quote!(#lanes::ZERO));
        let set_basis = nest(quote!(#t_place = #lanes::unit(#flat);));
        basis.extend(if dims.is_empty() {
            // `mut`: a `mut` parameter's tangent is assigned where the parameter is.
            quote!(#[allow(unused_mut)] let mut #t = #lanes::unit(#offset);)
        } else {
            quote!(let mut #t = #lanes_zero; #set_basis)
        });
        // An inactive parameter's row stays zero.
        if tangent_activity.var(param.var) {
            rows.extend(nest(quote! {
                for #index in 0..#n {
                    #hessian[#index][#flat] = #adjoint_place.0[#index];
                }
            }));
        }
        let t_var = tangent.params[params + k].var;
        let t_adjoint = place(&super::super::slot("adjoint_var", t_var));
        let set_partial = if tangent_activity.var(t_var) {
            nest(quote!(#partial_place = #t_adjoint.0[0] + 0.0;))
        } else {
            TokenStream::new()
        };
        partials.push(quote!({
            #[allow(unused_mut)]
            let mut #partial = #zero;
            #set_partial
            #partial
        }));
        offset += literal_count(dims)?;
    }
    let symmetric = super::symmetrized(&hessian, &quote!(#n));
    let code = &sweep.code;
    let result = &sweep.value;
    Some(quote! {
        #basis
        #code
        let (#value, _) = #result;
        let mut #hessian = [[0.0f64; #n]; #n];
        #rows
        #symmetric
        (#value, #(#partials,)* #hessian)
    })
}
