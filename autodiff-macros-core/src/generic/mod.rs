//! Functions generic over their float type: `fn f<T: Float>(x: T) -> T` (the `Float` of
//! `num-traits`) or `fn f<T: Real>(x: T) -> T` (the crate's own).
//!
//! The macro monomorphises them itself, as rustc would: each float type's twin,
//! `__f_f64` and `__f_f32` ([`twin`]), goes through the whole pipeline as any function of
//! `f64` or `f32` does, so each computes in its own type with the same code as a function
//! written for it. Then each generated function gets one generic function of its name
//! that calls its twins through a hidden trait implemented for `f64` and `f32`
//! ([`dispatch`]):
//!
//! ```text
//! #[grad] fn f<T: Float>(x: T) -> T { x * T::from(0.5).unwrap() }
//! fn __f_f64(x: f64) -> f64 { x * 0.5 }          // + __f_f64_grad, __f_f64_vjp, …
//! fn __f_f32(x: f32) -> f32 { x * 0.5 }          // + __f_f32_grad, …
//! trait f_grad_float { fn call(x: Self) -> (Self, Self); }
//! impl f_grad_float for f64 { fn call(x: f64) -> (f64, f64) { __f_f64_grad(x) } }
//! impl f_grad_float for f32 { … }
//! fn f_grad<T: Float + f_grad_float>(x: T) -> (T, T) { T::call(x) }
//! ```
//!
//! A caller generic over its own float type calls `f_grad` (or `f_vjp`, …) from its twins
//! with `f64` or `f32` arguments, which pick the implementation.

mod dispatch;
mod twin;

pub(crate) use dispatch::hidden;

use crate::types::Float;
use proc_macro2::TokenStream;
use syn::{GenericParam, ItemFn, TypeParamBound, WherePredicate};

/// The float type parameter of a function generic over its float type.
pub struct FloatParam {
    /// Its name, `T`.
    pub ident: syn::Ident,
}

/// The names a bound of the float type parameter may end in.
const FLOAT_TRAITS: [&str; 3] = ["Float", "Real", "FloatCore"];

/// The float type parameter of `function`, `None` if it has no type parameter, or the
/// error of a type parameter that is not one, of a method generic over its float type,
/// or of an `f64` or `f32` written in the signature of such a function.
pub fn float_param(function: &ItemFn, method: bool) -> syn::Result<Option<FloatParam>> {
    let generics = &function.sig.generics;
    let types: Vec<&syn::TypeParam> = generics
        .params
        .iter()
        .filter_map(|param| match param {
            GenericParam::Type(ty) => Some(ty),
            _ => None,
        })
        .collect();
    let Some(first) = types.first() else {
        return Ok(None);
    };
    let mut errors = crate::errors::Errors::default();
    for ty in &types[1..] {
        errors.at(
            ty,
            "#[grad] supports one type parameter, the float type (`T: Float`), and const \
             generics; write the other types out",
        );
    }
    let ident = first.ident.clone();
    let bounds = first.bounds.iter().chain(
        generics
            .where_clause
            .iter()
            .flat_map(|clause| &clause.predicates)
            .filter_map(|predicate| match predicate {
                WherePredicate::Type(predicate) if names(&predicate.bounded_ty, &ident) => {
                    Some(&predicate.bounds)
                }
                _ => None,
            })
            .flatten(),
    );
    let floating = bounds.into_iter().any(|bound| match bound {
        TypeParamBound::Trait(bound) => bound
            .path
            .segments
            .last()
            .is_some_and(|segment| FLOAT_TRAITS.iter().any(|name| segment.ident == name)),
        _ => false,
    });
    if !floating {
        errors.at(
            first,
            "#[grad] supports a type parameter only as the float type, bounded by `Float` \
             (num-traits) or `Real` (`fn f<T: Float>(x: T) -> T`; a trait of yours that \
             extends them goes beside it, `T: Float + Scalar`), and const generics; write \
             the function for `f64`",
        );
    }
    if method {
        errors.at(
            first,
            "#[grad] supports functions generic over their float type, not methods: write \
             the method for `f64` (or `f32`), or make it a free function",
        );
    }
    if floating {
        for ty in generic_types(&function.sig, &ident) {
            errors.at(
                ty,
                format!(
                    "a function generic over its float type takes `{ident}`, arrays, slices \
                     and `Vec`s of it, not a type generic over it: a struct is \
                     differentiated in functions of its fields' float type, `f64` or `f32`"
                ),
            );
        }
    }
    let explicit = if floating {
        explicit_floats(&function.sig)
    } else {
        Vec::new()
    };
    for (float, ty) in explicit {
        errors.at(
            ty,
            format!(
                "a function generic over its float type computes in `{ident}` alone: write \
                 `{ident}` here, not `{}`",
                float.name()
            ),
        );
    }
    errors.finish(Some(FloatParam { ident }))
}

/// Whether `ty` is the type parameter `ident` alone.
fn names(ty: &syn::Type, ident: &syn::Ident) -> bool {
    matches!(ty, syn::Type::Path(path) if path.qself.is_none() && path.path.is_ident(ident))
}

/// The types of a signature generic over `t` other than `Vec<t>`: `Params<T>`.
fn generic_types<'a>(sig: &'a syn::Signature, t: &syn::Ident) -> Vec<&'a syn::Type> {
    let mut found = Vec::new();
    let inputs = sig.inputs.iter().filter_map(|input| match input {
        syn::FnArg::Typed(typed) => Some(&*typed.ty),
        syn::FnArg::Receiver(_) => None,
    });
    let output = match &sig.output {
        syn::ReturnType::Type(_, ty) => Some(&**ty),
        syn::ReturnType::Default => None,
    };
    for ty in inputs.chain(output) {
        generic_in(ty, t, &mut found);
    }
    found
}

/// The paths in `ty` with `t` among their generic arguments, but `Vec`.
fn generic_in<'a>(ty: &'a syn::Type, t: &syn::Ident, found: &mut Vec<&'a syn::Type>) {
    match ty {
        syn::Type::Reference(reference) => generic_in(&reference.elem, t, found),
        syn::Type::Slice(slice) => generic_in(&slice.elem, t, found),
        syn::Type::Array(array) => generic_in(&array.elem, t, found),
        syn::Type::Paren(paren) => generic_in(&paren.elem, t, found),
        syn::Type::Tuple(tuple) => tuple.elems.iter().for_each(|e| generic_in(e, t, found)),
        syn::Type::Path(path) => {
            let Some(last) = path.path.segments.last() else {
                return;
            };
            if last.ident == "Vec" {
                if let syn::PathArguments::AngleBracketed(args) = &last.arguments {
                    for arg in &args.args {
                        if let syn::GenericArgument::Type(inner) = arg {
                            generic_in(inner, t, found);
                        }
                    }
                }
            } else if crate::types::mentions(&quote::quote!(#path), &|ident| ident == t)
                && !names(ty, t)
            {
                found.push(ty);
            }
        }
        _ => {}
    }
}

/// The `f64`s and `f32`s written in a signature.
fn explicit_floats(sig: &syn::Signature) -> Vec<(Float, syn::Type)> {
    let mut found = Vec::new();
    let mut types: Vec<&syn::Type> = sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            syn::FnArg::Typed(typed) => Some(&*typed.ty),
            syn::FnArg::Receiver(_) => None,
        })
        .collect();
    if let syn::ReturnType::Type(_, ty) = &sig.output {
        types.push(ty);
    }
    for ty in types {
        let mut floats = Vec::new();
        crate::types::floats_in(ty, &mut floats);
        found.extend(floats.into_iter().map(|(float, ty)| (float, ty.clone())));
    }
    found
}

/// The expansion of a function generic over its float type: its twins for `f64` and `f32`,
/// what `expand` makes of each, and the generic functions that dispatch to them.
pub fn monomorphised(
    args: &TokenStream,
    function: &ItemFn,
    param: &FloatParam,
    mut expand: impl FnMut(TokenStream, ItemFn) -> syn::Result<TokenStream>,
) -> syn::Result<TokenStream> {
    let mut twins = Vec::new();
    for float in [Float::F64, Float::F32] {
        let twin = twin::twin(function, &param.ident, float);
        let expansion = expand(args.clone(), twin.clone())?;
        twins.push((float, twin, expansion));
    }
    dispatch::wrappers(function, param, &twins)
}

/// For the stand-ins of a function generic over its float type that cannot be
/// differentiated (a method): its `f64` twin under its own name, whose stand-ins serve
/// callers in `f64`. `None` for a function without a type parameter.
pub fn f64_twin(function: &ItemFn) -> Option<ItemFn> {
    let t = function.sig.generics.type_params().next()?;
    let mut twin = twin::twin(function, &t.ident, Float::F64);
    twin.sig.ident = function.sig.ident.clone();
    Some(twin)
}
