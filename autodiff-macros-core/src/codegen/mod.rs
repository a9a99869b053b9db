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
//! begins in reverse, so a loop-local variable starts from zero in every iteration. In the
//! outermost block, outside loops and branches, a scalar's adjoint is instead declared by
//! its first contribution and bound anew by each further one (`let mut a = a + t;`), so
//! that each adjoint is assigned once (see `Generator::rebinds`).
//!
//! ```text
//! fn f(x: f64, y: f64) -> f64 { (x * y).tanh() }
//! ```
//! becomes (abridged)
//! ```text
//! let __primal_2 = x * y;
//! let (__primal_3, __partial_3_0) = rules::tanh(__primal_2);
//! let mut __adjoint_var_0 = -0.0; let mut __adjoint_var_1 = -0.0;
//! let __adjoint_2 = __partial_3_0 * 1.0;
//! let mut __adjoint_var_0 = __adjoint_var_0 + (y * __adjoint_2);
//! let mut __adjoint_var_1 = __adjoint_var_1 + (x * __adjoint_2);
//! (__primal_3, __adjoint_var_0, __adjoint_var_1)
//! ```

use crate::check::{differentiable_operands, Activity};
use crate::ir::{Block, Float, Function, NodeId, NodeKind, Num, Place, Stmt, VarId, VarKind};
use crate::ops::{Partial, Syntax};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{quote, quote_spanned, ToTokens};
use std::collections::HashMap;

mod forward;
pub mod hvp;
pub mod jacobian;
pub mod jvp;
mod lanes;
pub mod missing;
mod outline;
mod preaccumulate;
mod reverse;
mod scopes;
mod tape;
mod vjp;
pub use vjp::{vjp_ident, vjp_signature};

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

/// The type of a generated binding, by its name, where the IR says it for certain: a
/// scalar real value, partial, adjoint or tangent of a node (`__primal_N`,
/// `__partial_N_P`, `__adjoint_N`, `__tangent_N`, and `__seed_N`, the adjoint an
/// assignment of node `N` starts from), a cast's value (the type it names), and the
/// value, adjoint and tangent of a real local variable or array (`__var_N`,
/// `__adjoint_var_N`, `__tangent_var_N`). `None` for anything else: integers, flags,
/// tuples, slices, vectors, structs, saved values and the workspace. (Long blocks declare
/// such bindings up front, see `scopes`.)
fn binding_type(function: &Function, name: &str) -> Option<TokenStream> {
    let real = function.real;
    let id = |rest: &str| rest.parse::<usize>().ok();
    let scalar_node = |node: usize| {
        let node = function.nodes.get(node)?;
        let scalar = match &node.kind {
            // `x as f64` has the type it names, whatever `x` is.
            NodeKind::Cast { ty, .. } => return Some(ty.to_token_stream()),
            NodeKind::Op { .. } | NodeKind::Call { .. } | NodeKind::RulePartial { .. } => true,
            // A number written out (not an array, nor a path to a constant).
            NodeKind::Const(tokens) => {
                let mut trees = tokens.clone().into_iter();
                matches!(
                    (trees.next(), trees.next()),
                    (Some(proc_macro2::TokenTree::Literal(_)), None)
                )
            }
            NodeKind::Read(place) => {
                let var = &function.vars[place.var];
                var.kind == VarKind::Real
                    && place.indices.len() == var.dims.len() + usize::from(var.slice)
            }
            _ => false,
        };
        (scalar && node.num == Num::Real).then(|| quote!(#real))
    };
    let real_var = |var: usize| {
        let v = function.vars.get(var)?;
        function.plain_real(var).then(|| real_type(real, &v.dims))
    };
    if let Some(rest) = name.strip_prefix("__partial_") {
        let (node, position) = rest.split_once('_')?;
        return (id(node).is_some() && id(position).is_some()).then(|| quote!(#real));
    }
    if name.starts_with("__lanes_") {
        let lanes = lanes::LANES;
        return Some(quote!([#real; #lanes]));
    }
    if let Some(rest) = name
        .strip_prefix("__adjoint_var_")
        .or_else(|| name.strip_prefix("__tangent_var_"))
    {
        return real_var(id(rest)?);
    }
    if let Some(rest) = name.strip_prefix("__var_") {
        return real_var(id(rest)?);
    }
    if let Some(rest) = name
        .strip_prefix("__adjoint_")
        .or_else(|| name.strip_prefix("__seed_"))
        .or_else(|| name.strip_prefix("__tangent_"))
    {
        return scalar_node(id(rest)?);
    }
    scalar_node(id(name.strip_prefix("__primal_")?)?)
}

/// The body of generated function `name`, with its long runs of `let`s outlined (see
/// `outline`) and the scopes of its long blocks flattened; and the items to emit beside
/// the function (its segments, if they are outlined into modules).
fn flat_scopes(function: &Function, name: &Ident, body: TokenStream) -> (TokenStream, TokenStream) {
    flat_scopes_of(function, name, body, false)
}

/// [`flat_scopes`] of a generated function that also takes the tangents of `_jvp`
/// (`tangents`).
fn flat_scopes_of(
    function: &Function,
    name: &Ident,
    body: TokenStream,
    tangents: bool,
) -> (TokenStream, TokenStream) {
    let types = |name: &str| binding_type(function, name);
    let sig = &function.original.sig;
    let body = if sig.generics.params.is_empty()
        && sig.generics.where_clause.is_none()
        && sig.receiver().is_none()
        && !function.in_impl
        && function.probe_self.is_none()
        && !function.params.iter().enumerate().any(|(i, p)| {
            p.ident == "seed" && Some(i) != function.output.as_ref().and_then(|o| o.seed)
        }) {
        let real = function.real;
        // The parameters, and the buffers of `_grad_into` and `_vjp`.
        let params = function
            .params
            .iter()
            .map(|p| {
                // A number parameter has the float type (which the probes check its
                // spelling names), written as the code generator writes it.
                let number = function.plain_real(p.var) && function.vars[p.var].dims.is_empty();
                let ty = if number {
                    quote!(#real)
                } else {
                    p.ty.to_token_stream()
                };
                (p.ident.to_string(), ty)
            })
            .chain((0..function.params.len()).filter_map(|i| {
                let buffer = buffer_param(function, i);
                let mut trees = buffer.into_iter();
                let name = trees.next()?.to_string();
                trees.next(); // `:`
                Some((name, trees.collect()))
            }))
            .chain(function.params.iter().filter_map(|p| {
                // A slice's adjoint, its buffer (`let __adjoint_var_0 = d_xs;`).
                let var = &function.vars[p.var];
                let element = real_type(real, &var.dims);
                (var.slice && p.strukt.is_none()).then(|| {
                    let adjoint = slot("adjoint_var", p.var).to_string();
                    (adjoint, quote!(&mut [#element]))
                })
            }))
            .chain(function.wrt.iter().filter(|_| tangents).map(|&i| {
                // `_jvp`'s tangents, of their parameters' types.
                let tangent = jvp::tangent_param(function, i).to_string();
                (tangent, function.params[i].ty.to_token_stream())
            }))
            .chain(function.output.is_none().then(|| {
                // `_vjp`'s seed (a parameter named so keeps the function whole).
                let reals = std::iter::repeat_n(quote!(#real), function.outputs);
                let seed = if function.outputs > 1 {
                    quote!((#(#reals),*))
                } else {
                    quote!(#real)
                };
                ("seed".to_string(), seed)
            }))
            .collect();
        outline::outline(
            body,
            &outline::Outer {
                name: name.to_string(),
                real: quote!(#real),
                params,
                types: &types,
            },
        )
    } else {
        (outline::Outlined::Within(TokenStream::new()), body)
    };
    // Nested segments go first, after the flattening: they name the same values, and a
    // name that tokens before its first `let` name stays where it is.
    let (segments, body) = body;
    let body = scopes::flatten(body, &types);
    match segments {
        outline::Outlined::Beside(items) => (items, body),
        outline::Outlined::Within(items) => (TokenStream::new(), quote!(#items #body)),
    }
}

/// The workspace of a function with loops of run-time length, a generated local.
fn workspace() -> Ident {
    Ident::new("__ws", Span::mixed_site())
}

/// The value returned by `_grad_into` or `_vjp` when it calls the function's `_grad`, a
/// generated local.
fn value_slot() -> Ident {
    Ident::new("__value", Span::mixed_site())
}

/// `usize`, by its absolute path.
fn usize_type() -> TokenStream {
    crate::types::primitive("usize")
}

/// The path of a rule in the runtime, reached through the facade.
fn rule(name: &str) -> TokenStream {
    let name = Ident::new(name, Span::call_site());
    quote!(::autodiff::__private::rules::generic::#name)
}

/// `f64`, or `[[f64; M]; N]` for dimensions `[N, M]` (`f32` in a function of `f32`).
fn real_type(real: Float, dims: &[TokenStream]) -> TokenStream {
    dims.iter()
        .rev()
        .fold(quote!(#real), |inner, dim| quote!([#inner; #dim]))
}

/// `0.0`, or `[[0.0; M]; N]` for dimensions `[N, M]`, of the function's float type.
fn zeros(real: Float, dims: &[TokenStream]) -> TokenStream {
    filled(dims, real.literal("0.0"))
}

/// An adjoint with no contribution yet: `-0.0`, the exact identity of `+` (`-0.0 + x` is
/// `x` for every `x`, so the compiler folds the first `+=` away; `0.0 + -0.0` would not be).
fn no_adjoint(real: Float, dims: &[TokenStream]) -> TokenStream {
    let zero = real.literal("0.0");
    filled(dims, quote!(-#zero))
}

fn filled(dims: &[TokenStream], value: TokenStream) -> TokenStream {
    dims.iter()
        .rev()
        .fold(value, |inner, dim| quote!([#inner; #dim]))
}

/// The name of the allocation-free variant: `f` → `f_grad_into`.
pub fn grad_into_ident(ident: &Ident) -> Ident {
    let name = ident.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name);
    Ident::new(&format!("{name}_grad_into"), ident.span())
}

/// The type of a parameter's partial in `<name>_grad`: `f64`, an array of the
/// parameter's shape, or a `Vec` of its elements for a slice.
fn partial_type(function: &Function, index: usize) -> TokenStream {
    if let Some(strukt) = &function.params[index].strukt {
        return strukt.to_token_stream();
    }
    let var = &function.vars[function.params[index].var];
    let element = real_type(function.real, &var.dims);
    if var.slice {
        quote!(::autodiff::__private::vec::Vec<#element>)
    } else {
        element
    }
}

/// The name of the `&mut` output of a parameter's partial in `<name>_grad_into`:
/// `d_<param>`, mixed-site so that it cannot clash with the user's names. A slice's
/// output is its adjoint, accumulated in place.
fn output_slot(function: &Function, index: usize) -> Ident {
    let param = &function.params[index].ident.to_string();
    let param = param.strip_prefix("r#").unwrap_or(param);
    Ident::new(&format!("d_{param}"), Span::mixed_site())
}

/// The parameters as the original declares them (`mut x: f64`, `w: &[f64; 3]`, `&self`).
fn param_list(function: &Function) -> Vec<TokenStream> {
    function
        .params
        .iter()
        .map(|p| {
            let mutability = function.vars[p.var].mutable.then(|| quote!(mut));
            let ident = &p.ident;
            let ty = &p.ty;
            if ident == "self" {
                // `&self`, not `self: &Self` (which clippy would ask to write `&self`).
                let reference = matches!(ty, syn::Type::Reference(_)).then(|| quote!(&));
                return quote!(#reference #mutability #ident);
            }
            quote!(#mutability #ident: #ty)
        })
        .collect()
}

/// The parameters' names as passed on, then one more name per differentiated parameter
/// (its tangent `t_p`, its direction `v_p`): the arguments of a call that forwards what it
/// was given.
fn forwarded_args(
    function: &Function,
    per_wrt: impl Fn(&Function, usize) -> Ident,
) -> Vec<TokenStream> {
    function
        .params
        .iter()
        .map(|p| p.ident.to_token_stream())
        .chain(
            function
                .wrt
                .iter()
                .map(|&i| per_wrt(function, i).to_token_stream()),
        )
        .collect()
}

/// `d_p: &mut P`, the buffer a partial of `params[i]` is added to.
fn buffer_param(function: &Function, i: usize) -> TokenStream {
    let var = &function.vars[function.params[i].var];
    let element = real_type(function.real, &var.dims);
    let ident = output_slot(function, i);
    if let Some(strukt) = &function.params[i].strukt {
        match crate::layout::collection(strukt) {
            // A `Vec` of structs, partial of a slice or `Vec` of them, is lent as a slice.
            Some((element, None)) => quote!(#ident: &mut [#element]),
            _ => quote!(#ident: &mut #strukt),
        }
    } else if var.slice {
        quote!(#ident: &mut [#element])
    } else {
        quote!(#ident: &mut #element)
    }
}

/// The attributes every generated function carries: the original's `#[cfg]`s, `#[inline]`,
/// and lints that generated code cannot follow.
fn attributes(function: &Function) -> TokenStream {
    let cfgs = function
        .original
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"));
    // The user's allowances: the generated functions hold the user's code again (names,
    // paths), so what the user allows in the original is allowed in them too. An
    // `#[expect(..)]` becomes an allowance, since a generated function may not trip the
    // lint that the original does.
    let allowances = function.original.attrs.iter().filter_map(|attribute| {
        let path = attribute.path();
        if !(path.is_ident("allow") || path.is_ident("expect")) {
            return None;
        }
        let list = attribute.meta.require_list().ok()?;
        let lints = &list.tokens;
        Some(quote!(#[allow(#lints)]))
    });
    // The lints generated code cannot follow; it is written to pass every other lint of
    // rustc and of clippy's default, pedantic and nursery groups, which `tests/hygiene.rs`
    // checks (it denies warnings and pedantic lints) and CI's clippy run over all tests.
    // - `non_snake_case`: names are made from the user's: `id_` gives `id__grad`, a
    //   parameter `X` the buffer `d_X`.
    // - `clippy::too_many_arguments`: `_grad_into` and `_vjp` take a buffer for each
    //   parameter (and `_vjp` a seed), so a function of four parameters has eight.
    // - `clippy::used_underscore_binding`: they pass every parameter on, also a `_x` that
    //   the body does not read.
    // - `unused_mut`: a long gradient takes values back from the arrays of its segments
    //   as `let mut` (`outline`), whether or not a later statement assigns to them.
    quote! {
        #(#cfgs)*
        #(#allowances)*
        #[inline]
        #[allow(non_snake_case, unused_mut, clippy::too_many_arguments, clippy::used_underscore_binding)]
    }
}

/// The signatures of `<name>_grad` and `<name>_grad_into`.
pub fn signatures(function: &Function) -> (TokenStream, TokenStream) {
    let original = &function.original;
    let vis = &original.vis;
    let name = grad_ident(&original.sig.ident);
    let into = grad_into_ident(&original.sig.ident);
    let params = param_list(function);
    let real = function.real;
    let outputs = std::iter::once(quote!(#real))
        .chain(function.wrt.iter().map(|&i| partial_type(function, i)));
    let buffers = function.wrt.iter().map(|&i| buffer_param(function, i));
    let (doc, doc_into) = doc(function);
    let attributes = attributes(function);
    let generics = &original.sig.generics;
    (
        quote! {
            #[doc = #doc]
            #[must_use]
            #attributes
            #vis fn #name #generics(#(#params),*) -> (#(#outputs),*)
        },
        quote! {
            #[doc = #doc_into]
            #attributes
            #[allow(dead_code)]
            #vis fn #into #generics(#(#params,)* #(#buffers),*) -> #real
        },
    )
}

/// A link to the original function for the generated functions' doc comments:
/// ``[`f`]``, ``[`f`](Self::f)`` in an `impl` block (where `f` alone names nothing), and
/// ``[`type`](fn@type)`` for a raw identifier (rustdoc links do not take `r#`).
fn doc_link(function: &Function) -> String {
    let ident = function.original.sig.ident.to_string();
    match (ident.strip_prefix("r#"), function.in_impl) {
        (None, false) => format!("[`{ident}`]"),
        (Some(name), false) => format!("[`{name}`](fn@{name})"),
        (name, true) => {
            let name = name.unwrap_or(&ident);
            format!("[`{name}`](Self::{name})")
        }
    }
}

/// The doc comments of `<name>_grad` and `<name>_grad_into`.
fn doc(function: &Function) -> (String, String) {
    let link = doc_link(function);
    let name = function.original.sig.ident.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name).to_string();
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
    let grad = format!(
        " Value and gradient of {link}, generated by `#[grad]`.\n\n Returns `({name}({}), {})`.",
        params.join(", "),
        partials.join(", ")
    );
    let into = format!(
        " Value and gradient of {link} with no allocation, generated by `#[grad]`: adds \
         {} to the buffers passed after the parameters, and returns `{name}({})`.\n\n \
         The buffers are accumulated into, not overwritten: zero them for a fresh gradient. \
         A slice's buffer must have the slice's length.",
        partials.join(", "),
        params.join(", "),
    );
    (grad, into)
}

/// A function's forward pass and reverse sweep, as one block of statements.
struct Sweep {
    /// The body's items, the workspace, the stack tapes, the forward pass and the sweep.
    code: TokenStream,
    /// The slot of the returned value.
    value: TokenStream,
    /// Gives the workspace back (empty when there is none).
    recycle: TokenStream,
    /// Variables whose adjoint gets a contribution on every path.
    reached: Vec<VarId>,
    /// How many loops run in chunks on several threads.
    parallel_loops: usize,
}

/// Generates the sweep of `function` for the given activity, with the result's adjoint
/// seeded by `seed` (`1.0` for a gradient).
fn sweep(function: &Function, activity: &Activity, seed: TokenStream) -> Sweep {
    sweep_in(function, activity, seed, None)
}

/// [`sweep`], with adjoints of the type `lanes` (a path to `Lanes::<K>`) where it is given.
fn sweep_in(
    function: &Function,
    activity: &Activity,
    seed: TokenStream,
    lanes: Option<TokenStream>,
) -> Sweep {
    let items = &function.items;
    let mut gen = Generator::new(function, activity, seed);
    gen.lanes = lanes;
    let forward = gen.forward_block(&function.body);
    let reverse = gen.reverse_block(&function.body, true);
    let tapes = &gen.tapes;
    let (take, recycle) = if gen.uses_workspace {
        let ws = workspace();
        (
            quote!(let mut #ws = ::autodiff::__private::Workspace::take();),
            quote!(#ws.recycle();),
        )
    } else {
        (TokenStream::new(), TokenStream::new())
    };
    let probe = function.probe_self.map(|span| {
        quote_spanned! {span=>
            {
                #[allow(unused_imports)]
                use ::autodiff::__private::probe::{Derives as _, DoesNotDerive as _};
                ::autodiff::__private::probe::constant_self(
                    (&::autodiff::__private::probe::SelfProbe::<Self>::new()).probe(),
                );
            }
        }
    });
    let float_probes = float_probes(function);
    Sweep {
        code: quote! {
            #probe
            #float_probes
            #(#items)*
            #take
            #(#tapes)*
            #forward
            #reverse
        },
        value: match &function.output {
            // A vector output's pullback returns the output, of the seed's length.
            Some(output) => {
                let value = gen.var_slot(output.var);
                match output.seed {
                    Some(seed) if function.vars[output.var].slice => {
                        let seed = &function.params[seed].ident;
                        let message = format!(
                            "{}_vjp: the seed has length {{}}, but the output has length {{}}",
                            function.original.sig.ident
                        );
                        quote!({
                            ::core::assert!(#seed.len() == #value.len(), #message, #seed.len(), #value.len());
                            #value
                        })
                    }
                    _ => value,
                }
            }
            None => gen.result.clone().unwrap_or_else(|| quote!(0.0)),
        },
        recycle,
        reached: gen.reached,
        parallel_loops: gen.parallel_loops,
    }
}

/// Under `#[grad(parallel)]`: an error under `parallel` when no loop of the function can
/// run in chunks, rather than a gradient on one thread that the user did not expect.
pub fn parallel_check(function: &Function, activity: &Activity) -> syn::Result<()> {
    let Some(span) = function.parallel else {
        return Ok(());
    };
    if sweep(function, activity, quote!(1.0)).parallel_loops > 0 {
        return Ok(());
    }
    Err(syn::Error::new(
        span,
        "`parallel` found no loop to split over threads: it splits a loop in the \
         function's outermost block that only adds to one sum (`loss += term;` or \
         `loss = loss + term;`, the sum read nowhere else in the loop), runs a number of \
         times known when it starts (no `break` or `return`), writes no other variable \
         declared outside it, and reads from outside only numbers, arrays, slices and \
         vectors of numbers, and struct parameters",
    ))
}

/// Checks that every `f64` (or `f32`) of the signature, as written, is the primitive type
/// the generated code computes in: in a module where `f64` names a type of the user's,
/// the error is under that `f64` and says so, rather than a type mismatch in the
/// generated code. One check per spelling (`f64`, `::core::primitive::f64`, …).
///
/// ```text
/// fn f(x: f64) -> f64   →   let _ = ::autodiff::__private::probe::primitive::<f64, ::core::primitive::f64>;
/// ```
fn float_probes(function: &Function) -> TokenStream {
    let sig = &function.original.sig;
    let mut floats = Vec::new();
    for input in &sig.inputs {
        if let syn::FnArg::Typed(typed) = input {
            crate::types::floats_in(&typed.ty, &mut floats);
        }
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        crate::types::floats_in(ty, &mut floats);
    }
    let mut seen = Vec::new();
    let mut probes = TokenStream::new();
    for (float, ty) in floats {
        let spelling = ty.to_token_stream().to_string();
        if seen.contains(&spelling) {
            continue;
        }
        seen.push(spelling);
        probes.extend(quote_spanned! {syn::spanned::Spanned::span(ty)=>
            let _ = ::autodiff::__private::probe::primitive::<#ty, #float>;
        });
    }
    probes
}

/// How the generated functions name each other and the original: with mixed-site
/// hygiene (a parameter named like a function cannot shadow it), through `Self::` in an
/// `impl` block.
struct Names {
    grad: TokenStream,
    into: TokenStream,
    vjp: TokenStream,
}

fn names(function: &Function) -> Names {
    let original = &function.original.sig.ident;
    let turbofish = turbofish(function);
    let mixed = |ident: Ident| {
        let ident = Ident::new(
            &ident.to_string(),
            Span::mixed_site().located_at(original.span()),
        );
        if function.in_impl {
            quote!(Self::#ident #turbofish)
        } else {
            quote!(#ident #turbofish)
        }
    };
    Names {
        grad: mixed(grad_ident(original)),
        into: mixed(grad_into_ident(original)),
        vjp: mixed(vjp_ident(original)),
    }
}

/// `::<N, M>` for a function with const generic parameters (and no lifetime parameters,
/// which cannot be given explicitly), so that the generated functions call each other for
/// the same constants.
fn turbofish(function: &Function) -> TokenStream {
    let generics = &function.original.sig.generics;
    let constants: Vec<&Ident> = generics.const_params().map(|c| &c.ident).collect();
    if constants.is_empty() || generics.lifetimes().next().is_some() {
        return TokenStream::new();
    }
    quote!(::<#(#constants),*>)
}

/// Whether the partials are written in place into buffers (slices and structs), so that
/// `_grad_into` holds the sweep and `_grad` allocates the buffers.
fn in_place(function: &Function) -> bool {
    function
        .params
        .iter()
        .any(|p| function.vars[p.var].slice || p.strukt.is_some())
}

/// The body of a function that adds the partials of `params` into its `&mut` buffers
/// (`_grad_into` with slices or structs, `_vjp`): length checks, the sweep, the scalar and
/// array partials added to their buffers, the value.
fn buffered_body(
    function: &Function,
    activity: &Activity,
    params: &[usize],
    sweep: &Sweep,
    caller: &Ident,
) -> (TokenStream, TokenStream) {
    let slice_adjoints = params.iter().filter_map(|&i| {
        let var = function.params[i].var;
        if !function.vars[var].slice {
            return None;
        }
        let adjoint = slot("adjoint_var", var);
        let output = output_slot(function, i);
        Some(quote!(let #adjoint = #output;))
    });
    let checks = params.iter().flat_map(|&i| {
        let param = &function.params[i];
        let buffer = output_slot(function, i);
        let ident = &param.ident;
        let mut lengths = Vec::new();
        if function.vars[param.var].slice {
            lengths.push((quote!(#ident), quote!(#buffer), ident.to_string()));
        }
        for field in function.fields.iter().filter(|f| f.param == i) {
            if function.vars[field.var].slice && field.differentiable {
                let access = &field.access;
                let name = format!("{ident}{access}").replace(' ', "");
                lengths.push((quote!(#ident #access), quote!(#buffer #access), name));
            }
        }
        lengths.into_iter().map(move |(value, buffer, name)| {
            let message = format!(
                "{caller}: the buffer for the partial of `{name}` has length {{}}, but `{name}` \
                 has length {{}}",
            );
            quote! {
                ::core::assert!(#buffer.len() == #value.len(), #message, #buffer.len(), #value.len());
            }
        })
    });
    let outputs_added = params.iter().filter_map(|&i| {
        let var = function.params[i].var;
        if function.vars[var].slice || function.params[i].strukt.is_some() || !activity.var(var) {
            return None;
        }
        let adjoint = slot("adjoint_var", var);
        let output = output_slot(function, i);
        Some(quote!(::autodiff::__private::Flat::add_to(&#adjoint, #output);))
    });
    let Sweep {
        code,
        value,
        recycle,
        ..
    } = sweep;
    flat_scopes(
        function,
        caller,
        quote! {
            #(#checks)*
            #(#slice_adjoints)*
            #code
            #(#outputs_added)*
            #recycle
            #value
        },
    )
}

/// A zeroed partial for `params[index]`, the buffer `_grad` passes to `_grad_into`.
fn zero_partial(function: &Function, index: usize) -> TokenStream {
    let param = &function.params[index];
    let var = &function.vars[param.var];
    let zero = zeros(function.real, &var.dims);
    let ident = &param.ident;
    if let Some(strukt) = &param.strukt {
        let value = match &param.ty {
            syn::Type::Reference(_) => quote!(#ident),
            _ => quote!(&#ident),
        };
        struct_zero(strukt, value)
    } else if var.slice {
        quote!(::autodiff::__private::vec![#zero; #ident.len()])
    } else {
        zero
    }
}

/// A zero partial of type `strukt` for the struct (or collection of structs) `value`, a
/// reference: of its own type, or a `Vec` for a slice.
pub(crate) fn struct_zero(strukt: &syn::Type, value: TokenStream) -> TokenStream {
    quote!(<_ as ::autodiff::__private::PartialOf<#strukt>>::zero_partial(#value))
}

/// `<name>_grad`, `<name>_grad_into`, and for functions with array, slice or struct
/// parameters the pullback `<name>_vjp` (see [`vjp`]).
pub fn gradient_fn(function: &Function, activity: &Activity) -> TokenStream {
    if function.outputs > 1 || function.output.is_some() {
        // Several outputs, or an array or vector, have no gradient, only a pullback.
        return vjp::pullback(function, activity);
    }
    let (signature, signature_into) = signatures(function);
    let names = names(function);
    let param_names: Vec<&Ident> = function.params.iter().map(|p| &p.ident).collect();
    let pullback = vjp::pullback(function, activity);
    let locals: Vec<Ident> = function
        .wrt
        .iter()
        .map(|&i| slot("grad", function.params[i].var))
        .collect();

    if !in_place(function) {
        let sweep = sweep(function, activity, quote!(1.0));
        let partials = function.wrt.iter().map(|&index| {
            let var = function.params[index].var;
            let adjoint = slot("adjoint_var", var);
            let always_reached = sweep.reached.contains(&var) && !function.vars[var].reassigned;
            if activity.var(var) && function.vars[var].dims.is_empty() && !always_reached {
                // `+ 0.0` turns a `-0.0` (no contribution) into `0.0`; other values pass.
                quote!(#adjoint + 0.0)
            } else if activity.var(var) {
                adjoint.into_token_stream()
            } else {
                zeros(function.real, &function.vars[var].dims)
            }
        });
        let outputs = function.wrt.iter().map(|&i| output_slot(function, i));
        let Sweep {
            code,
            value,
            recycle,
            ..
        } = &sweep;
        let grad_name = &names.grad;
        let value_slot = value_slot();
        let (items, body) = flat_scopes(
            function,
            &grad_ident(&function.original.sig.ident),
            quote! {
                #code
                #recycle
                (#value, #(#partials),*)
            },
        );
        return quote! {
            #signature {
                #body
            }

            #items

            #signature_into {
                let (#value_slot, #(#locals),*) = #grad_name(#(#param_names),*);
                #(::autodiff::__private::Flat::add_to(&#locals, #outputs);)*
                #value_slot
            }

            #pullback
        };
    }

    // With slices or structs, `_grad_into` holds the gradient and `_grad` allocates its
    // buffers.
    let into_ident = grad_into_ident(&function.original.sig.ident);
    let (items, body) = if vjp::same_sweep(function) {
        // The pullback differentiates the same parameters: seed it with 1.
        let vjp_name = &names.vjp;
        let buffers = function.wrt.iter().map(|&i| output_slot(function, i));
        (
            TokenStream::new(),
            quote!(#vjp_name(#(#param_names,)* 1.0, #(#buffers),*)),
        )
    } else {
        let sweep = sweep(function, activity, quote!(1.0));
        buffered_body(function, activity, &function.wrt, &sweep, &into_ident)
    };
    let allocations = function.wrt.iter().zip(&locals).map(|(&i, local)| {
        let zero = zero_partial(function, i);
        quote!(let mut #local = #zero;)
    });
    let into_name = &names.into;
    let value_slot = value_slot();
    quote! {
        #signature_into {
            #body
        }

        #items

        #signature {
            #(#allocations)*
            let #value_slot = #into_name(#(#param_names,)* #(&mut #locals),*);
            (#value_slot, #(#locals),*)
        }

        #pullback
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
    /// A loop of run-time length: what its iterations save goes to the workspace.
    dynamic: bool,
    /// A loop of run-time length that knows its trip count and runs only loops of
    /// constant trip counts inside: it takes one block of the workspace for all its
    /// iterations, and each iteration writes its values at fixed offsets of its frame
    /// (the slab's number).
    slab: Option<usize>,
    /// Copies pushed just after the loop (inside loops of run-time length), and the pops
    /// that take them back before the reverse sweep runs the loop.
    after: TokenStream,
    after_pops: Vec<TokenStream>,
    /// The variables copied so far, with how the reverse sweep reads each copy.
    copied: Vec<(VarId, TokenStream)>,
}

/// The variables a block writes, at any depth.
fn written(block: &Block, out: &mut Vec<VarId>) {
    for stmt in block {
        match stmt {
            Stmt::Let { var, .. } => out.push(*var),
            Stmt::Unpack { vars, .. } => out.extend(vars),
            Stmt::Assign { place, .. } | Stmt::Push { place, .. } => out.push(place.var),
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
            Stmt::Loop { counter, body, .. } => {
                out.push(*counter);
                written(body, out);
            }
            Stmt::SetFlag { var, .. } => out.push(*var),
            Stmt::Eval { .. } | Stmt::Return { .. } => {}
        }
    }
}

struct Generator<'a> {
    function: &'a Function,
    /// For `_hessian`'s one sweep over lanes (`hvp::lanes`): the adjoints' type, a path
    /// to `Lanes::<K>`; `None` for adjoints of the function's float type.
    lanes: Option<TokenStream>,
    activity: &'a Activity,
    /// The adjoint of the result: `1.0` for a gradient, the seed of a pullback.
    seed: TokenStream,
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
    /// The workspace pops of the statement being generated, in push order.
    pops: Vec<TokenStream>,
    /// For each statement: the pops of what it pushes before its body (its nodes), and
    /// after (an `if`'s flag, a loop's copies and trip count), in push order.
    stmt_pops: HashMap<*const Stmt, (Vec<TokenStream>, Vec<TokenStream>)>,
    /// Locals popped from the workspace so far (names `__saved_N`).
    saved: usize,
    /// Whether the function uses the workspace at all.
    uses_workspace: bool,
    /// Index nodes the sweep cannot compute again, with how it reads their saved value.
    restored: HashMap<NodeId, TokenStream>,
    /// For each `Stmt::Loop` (by counter): how the sweep reads its number of iterations.
    loop_trips: HashMap<VarId, TokenStream>,
    /// Scalar variables whose value the statement being generated has saved already.
    saved_reads: HashMap<VarId, TokenStream>,
    /// Slabs so far; and the frame size so far of the slab being generated.
    slabs: usize,
    frame: Option<tape::FrameSize>,
    /// For each loop run with frames (by counter): the slab's number, and whether its
    /// frames are pushed one by one (no trip count known in advance) rather than laid out
    /// in one block.
    /// And whether its block is on the stack when short enough (see `small_slab`).
    slab_loops: HashMap<VarId, (usize, bool, bool)>,
    /// Nodes that get no slot of their own, with what stands for them: a read of a real
    /// scalar variable that nothing reassigns is that variable (`x`, not
    /// `let __primal_0 = x;`).
    aliases: HashMap<NodeId, TokenStream>,
    /// Variables that get no slot of their own: a real scalar `let` that nothing
    /// reassigns is its value's slot (not `let __var_3 = __primal_4;`).
    var_aliases: HashMap<VarId, TokenStream>,
    /// Adjoints of the outermost block's scalar variables that the sweep has not declared
    /// yet (see `Generator::declare_before`).
    undeclared: std::collections::HashSet<VarId>,
    /// Vectors declared in a branch whose length the forward pass saved at the end of the
    /// branch, with how the sweep reads it (see `save_final_lengths`).
    final_lengths: HashMap<VarId, TokenStream>,
    /// Variables whose adjoint has another slot than `__adjoint_var_N`: in a loop body
    /// whose gradient is preaccumulated, the variables it reads from outside, whose
    /// adjoints sum over its iterations (see `preaccumulate`).
    adjoint_names: HashMap<VarId, TokenStream>,
    /// Whether this generates the body of a preaccumulated loop, whose adjoints of the
    /// function's parameters are not its own.
    in_sum: bool,
    /// How many loops run in chunks on several threads (`#[grad(parallel)]`).
    parallel_loops: usize,
    /// The loops whose gradients are preaccumulated, by statement.
    preaccumulated: HashMap<*const Stmt, preaccumulate::Preaccumulated>,
    /// Scalar variables of the outermost block whose adjoint is zero by construction at
    /// the point the sweep has reached: no statement after it reads the value they hold
    /// there (nothing has contributed since their definition or since an assignment that
    /// overwrote them). The reverse of their definition passes nothing on (see
    /// `Generator::unread`).
    unread: std::collections::HashSet<VarId>,
}

/// The names of a slab: the block, the offset of the current frame, and the frame size.
fn slab_names(slab: usize) -> (Ident, Ident, Ident) {
    let name = |kind: &str| Ident::new(&format!("__{kind}_{slab}"), Span::mixed_site());
    (name("slab"), name("frame"), name("FRAME"))
}

/// The most `f64`s a slab keeps in a stack buffer of its own instead of the workspace:
/// the frames of a short loop (three samples of a handful of saved values), so that a call
/// over a short slice takes nothing from the pool. The buffer is zeroed at each call.
const SMALL_SLAB: usize = 32;

/// The stack buffer of a slab whose forward pass and sweep run in one scope, and the flag
/// that says whether its block fits there.
fn small_slab(slab: usize) -> (Ident, Ident) {
    let name = |kind: &str| Ident::new(&format!("__{kind}_{slab}"), Span::mixed_site());
    (name("small"), name("fits"))
}

/// Whether a loop body can live in a slab: every loop inside has a constant trip count.
fn slab_fits(block: &Block) -> bool {
    block.iter().all(|stmt| match stmt {
        Stmt::Loop {
            max_trips, body, ..
        } => max_trips.is_some() && slab_fits(body),
        Stmt::For { body, .. } => slab_fits(body),
        Stmt::If {
            then, otherwise, ..
        } => slab_fits(then) && slab_fits(otherwise),
        _ => true,
    })
}

/// What kind of value is saved for the reverse sweep.
#[derive(Clone, Copy)]
enum Saved {
    /// An `f64`: a partial, an operand.
    Real,
    /// A `usize`: an index, a trip count.
    Index,
    /// A `bool`: the branch an `if` took.
    Flag,
}

impl<'a> Generator<'a> {
    /// A generator for the sweep of `function` (or of a loop body of it, see
    /// `preaccumulate`), with the result's adjoint seeded by `seed`.
    fn new(function: &'a Function, activity: &'a Activity, seed: TokenStream) -> Self {
        Generator {
            function,
            activity,
            seed,
            tapes: Vec::new(),
            factors: HashMap::new(),
            flags: HashMap::new(),
            loops: Vec::new(),
            in_branch: false,
            iterated: Vec::new(),
            result: None,
            reached: Vec::new(),
            pops: Vec::new(),
            stmt_pops: HashMap::new(),
            saved: 0,
            uses_workspace: false,
            restored: HashMap::new(),
            loop_trips: HashMap::new(),
            saved_reads: HashMap::new(),
            slabs: 0,
            frame: None,
            slab_loops: HashMap::new(),
            aliases: HashMap::new(),
            var_aliases: HashMap::new(),
            undeclared: std::collections::HashSet::new(),
            final_lengths: HashMap::new(),
            adjoint_names: HashMap::new(),
            in_sum: false,
            parallel_loops: 0,
            preaccumulated: HashMap::new(),
            unread: std::collections::HashSet::new(),
            lanes: None,
        }
    }

    /// An adjoint of shape `dims` with no contribution yet (see [`no_adjoint`]), in lanes
    /// for a sweep over lanes.
    fn no_adjoint(&self, dims: &[TokenStream]) -> TokenStream {
        match &self.lanes {
            Some(lanes) => filled(dims, quote!(#lanes::NO_ADJOINT)),
            None => no_adjoint(self.function.real, dims),
        }
    }
}

impl Generator<'_> {
    /// How generated code reads the value of `node`: its slot `__primal_N`, or what
    /// stands for it (see [`Generator::aliases`]).
    fn slot_of(&self, node: NodeId) -> TokenStream {
        match self.aliases.get(&node) {
            Some(alias) => alias.clone(),
            None => slot("primal", node).into_token_stream(),
        }
    }

    /// A call of a helper of the runtime's `loops` module, or of a user's function with
    /// constant arguments (see [`NodeKind::Intrinsic`]).
    fn intrinsic(
        &self,
        function: &TokenStream,
        args: &[NodeId],
        field: &TokenStream,
    ) -> TokenStream {
        let args = args.iter().map(|&a| self.slot_of(a));
        quote!(#function(#(#args),*) #field)
    }
}

/// The plain primal computation of an operation (no partials), in the float type `real`.
fn primal_expr(real: Float, op: &crate::ops::Op, values: &[TokenStream]) -> TokenStream {
    match op.syntax {
        Syntax::Operator(symbol) => {
            let symbol = match symbol {
                "+" => quote!(+),
                "-" => quote!(-),
                "*" => quote!(*),
                "%" => quote!(%),
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
            quote!(<#real>::#name(#(#values),*))
        }
        Syntax::ExtMethod => {
            let name = Ident::new(op.name, Span::call_site());
            quote!(<#real as ::autodiff::__private::F64Ext>::#name(#(#values),*))
        }
    }
}

/// The number of iterations of `start..end` (or `..=`), a constant `usize` expression.
fn trips(start: &TokenStream, end: &TokenStream, inclusive: bool) -> TokenStream {
    let usize = usize_type();
    if inclusive {
        quote!((((#end) + 1 - (#start)) as #usize))
    } else {
        quote!((((#end) - (#start)) as #usize))
    }
}

fn range(start: &TokenStream, end: &TokenStream, inclusive: bool) -> TokenStream {
    if inclusive {
        quote!((#start)..=(#end))
    } else {
        quote!((#start)..(#end))
    }
}
