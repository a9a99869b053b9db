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
//! `jacobian`) of `g` calls `g_jvp`; a second-order caller (`hvp`, `hessian`) calls the
//! hidden `g_tangent` and `g_tangent_vjp`; a user may call `g_grad` of a function whose
//! output is several numbers.

use crate::args::GradArgs;
use crate::check::Activity;
use crate::ir::Function;
use proc_macro2::TokenStream;
use quote::quote;

/// The stand-ins for what `args` did not ask for: `_jvp` without `jvp` or `jacobian`; the
/// hidden second-order functions without `hvp` or `hessian` (for a scalar output); `_grad`
/// for an output of several numbers.
pub fn stand_ins(function: &Function, activity: &Activity, args: &GradArgs) -> TokenStream {
    let mut out = TokenStream::new();
    let scalar = function.outputs == 1 && function.output.is_none();
    if !(args.jvp || args.jacobian) {
        out.extend(stand_in(
            &super::jvp::jvp_signature(function),
            "ForwardMode",
        ));
    }
    if scalar && !(args.hvp || args.hessian) {
        for signature in super::hvp::hidden_signatures(function, activity) {
            out.extend(stand_in(&signature, "SecondOrder"));
        }
    }
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
