//! Stand-ins for the functions a `#[grad]` function was not asked for, so that calling one
//! is a single error that says what to add, not rustc's "cannot find function".
//!
//! ```text
//! #[grad] fn g(x: f64) -> f64          // no `jvp`
//! #[doc(hidden)]
//! fn g_jvp(x: f64, t_x: f64) -> (f64, f64)
//! where for<'a> Missing: ForwardMode   // implemented by nothing: every call fails here
//! { unreachable!() }
//! ```
//! The bound is global but under a binder, so rustc checks it at each use rather than at
//! the definition; the traits' `#[diagnostic::on_unimplemented]` messages (in the
//! runtime's `missing` module) name the option to add. A forward-mode caller (`jvp`,
//! `jacobian`) of `g` calls the hidden `g_tangent`; a second-order caller (`hvp`,
//! `hessian`) calls `g_tangent` and `g_tangent_vjp`; a user may call `g_jvp`, or `g_grad`
//! of a function whose output is several numbers.

use crate::args::GradArgs;
use crate::check::Activity;
use crate::ir::Function;
use proc_macro2::TokenStream;
use quote::quote;

/// The stand-ins for what `args` did not ask for: `_jvp` without `jvp` or `jacobian`; the
/// hidden functions of callers without `hvp` or `hessian` (`_tangent` too when nothing
/// generates it, both then under one bound, so that a second-order caller sees one
/// error); `_grad` for an output of several numbers.
pub fn stand_ins(function: &Function, activity: &Activity, args: &GradArgs) -> TokenStream {
    let mut out = TokenStream::new();
    let forward = args.jvp || args.jacobian;
    if !forward {
        out.extend(stand_in(
            &super::jvp::jvp_signature(function),
            "ForwardMode",
        ));
    }
    if !(args.hvp || args.hessian) {
        let signatures = super::hvp::hidden_signatures(function, activity);
        for (k, signature) in signatures.iter().enumerate() {
            match (k, forward) {
                // `_tangent`, generated for forward mode.
                (0, true) => {}
                (_, true) => out.extend(stand_in(signature, "SecondOrder")),
                (_, false) => out.extend(stand_in(signature, "CalleeMode")),
            }
        }
    }
    let scalar = function.outputs == 1 && function.output.is_none();
    if !scalar {
        let (signature, _) = super::signatures(function);
        out.extend(stand_in(&signature, "ScalarOutput"));
    }
    out
}

/// The function of `signature` (attributes, then `… fn name(…) -> …`), hidden, with a body
/// that is never reached and the bound `for<'a> Missing: <bound>`; nothing if the
/// signature does not parse.
pub(crate) fn stand_in(signature: &TokenStream, bound: &str) -> TokenStream {
    let Ok(mut item) = syn::parse2::<syn::ItemFn>(quote!(#signature {})) else {
        return TokenStream::new();
    };
    item.attrs.retain(|attribute| {
        let path = attribute.path();
        !(path.is_ident("doc") || path.is_ident("inline") || path.is_ident("must_use"))
    });
    let bound = syn::Ident::new(bound, proc_macro2::Span::call_site());
    item.sig
        .generics
        .make_where_clause()
        .predicates
        .push(syn::parse_quote!(
            for<'__missing> ::autodiff::__private::missing::Missing:
                ::autodiff::__private::missing::#bound
        ));
    *item.block = syn::parse_quote!({ ::core::unreachable!() });
    quote! {
        #[doc(hidden)]
        #[allow(unused_variables, dead_code, clippy::extra_unused_lifetimes)]
        #item
    }
}
