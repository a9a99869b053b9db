//! The generic functions of a function generic over its float type: one per function its
//! twins have, of the same name with `T` for the twins' float type, calling the twin of
//! its argument's type through a hidden trait implemented for `f64` and `f32`.

use super::FloatParam;
use crate::types::Float;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::visit_mut::VisitMut;
use syn::{FnArg, GenericParam, Generics, ItemFn, Type};

/// The twins (hidden), then each generated function's dispatch: `twins` holds each float
/// type's twin with what the pipeline generated for it.
pub fn wrappers(
    function: &ItemFn,
    param: &FloatParam,
    twins: &[(Float, ItemFn, TokenStream)],
) -> syn::Result<TokenStream> {
    let name = function.sig.ident.to_string();
    let mut out = TokenStream::new();
    // Each float type's generated functions, by the name of their generic function.
    let mut generated: Vec<(Float, Vec<(String, ItemFn)>)> = Vec::new();
    for (float, twin, expansion) in twins {
        // The twin itself where the generated code calls it (the wrappers of a function
        // writing through `&mut`): elsewhere its body, the user's, would only repeat the
        // compiler's errors about it.
        if crate::types::mentions(expansion, &|ident| *ident == twin.sig.ident) {
            out.extend(quote! {
                #[doc(hidden)]
                #[allow(dead_code, non_snake_case, unused_parens, clippy::all, clippy::pedantic)]
                #twin
            });
        }
        let file: syn::File = syn::parse2(expansion.clone())?;
        let twin_name = twin.sig.ident.to_string();
        let mut functions = Vec::new();
        for item in file.items {
            match item {
                syn::Item::Fn(item) if item.sig.ident.to_string().contains(&twin_name) => {
                    let generic = item.sig.ident.to_string().replace(&twin_name, &name);
                    // A stand-in's generic function is a stand-in of its own.
                    if !is_stand_in(&item) {
                        out.extend(hidden(&item));
                    }
                    functions.push((generic, item));
                }
                item => out.extend(quote!(#item)),
            }
        }
        generated.push((*float, functions));
    }
    let (Some((_, first)), Some((_, f64_twin, _))) = (generated.first(), twins.first()) else {
        return Ok(out);
    };
    let twin_name = f64_twin.sig.ident.to_string();
    for (generic, item) in first {
        let ident = syn::Ident::new(generic, function.sig.ident.span());
        if is_stand_in(item) {
            out.extend(stand_in(item, &ident, function, param, &twin_name));
            continue;
        }
        let implementations: Vec<(Float, &ItemFn)> = generated
            .iter()
            .filter_map(|(float, functions)| {
                functions
                    .iter()
                    .find(|(other, item)| other == generic && !is_stand_in(item))
                    .map(|(_, item)| (*float, item))
            })
            .collect();
        out.extend(dispatched(
            &ident,
            function,
            param,
            &implementations,
            &twin_name,
        )?);
    }
    Ok(out)
}

/// A twin's generated function, hidden: the function of the user's name around it is the
/// documented one.
pub(crate) fn hidden(item: &ItemFn) -> TokenStream {
    let mut item = item.clone();
    item.attrs
        .retain(|attribute| !attribute.path().is_ident("doc"));
    quote! {
        #[doc(hidden)]
        // The twin's conversions (`T::from(n)` → `(n as f64)`) and its in-place writes
        // (`y[1] = y[1] - dt * a`, as `Float` has no `-=`) are the macro's doing, not the
        // user's.
        #[allow(dead_code, unused_parens, clippy::all, clippy::pedantic)]
        #item
    }
}

/// Whether `item` is a stand-in (`codegen::missing`) of a function not asked for: its
/// bound is checked where it is called, so its generic function is a stand-in too.
fn is_stand_in(item: &ItemFn) -> bool {
    item.sig
        .generics
        .where_clause
        .as_ref()
        .is_some_and(|clause| {
            clause
                .predicates
                .iter()
                .any(|predicate| quote!(#predicate).to_string().contains("Missing"))
        })
}

/// The generic stand-in of a stand-in: its signature in `T`, its bound and its body.
fn stand_in(
    item: &ItemFn,
    ident: &syn::Ident,
    function: &ItemFn,
    param: &FloatParam,
    twin_name: &str,
) -> TokenStream {
    let mut stand_in = item.clone();
    made_generic(&mut stand_in, ident, function, param, None, twin_name);
    quote!(#stand_in)
}

/// `item`, a twin's generated function (its parameters already named), made the generic
/// one: named `ident`, the float type parameter back among its generics (with `bound`),
/// `T` for `f64` in its signature, the function's name for the twin's in its docs.
fn made_generic(
    item: &mut ItemFn,
    ident: &syn::Ident,
    function: &ItemFn,
    param: &FloatParam,
    bound: Option<syn::TypeParamBound>,
    twin_name: &str,
) {
    item.sig.ident = ident.clone();
    item.sig.generics = with_float_param(&item.sig.generics, function, param, bound);
    let t = &param.ident;
    in_signature(&mut item.sig, Float::F64, &syn::parse_quote!(#t));
    rename_in_docs(&mut item.attrs, twin_name, &function.sig.ident.to_string());
}

/// The hidden trait of one generated function, its implementations for the float types
/// that have it, and the generic function calling through it.
fn dispatched(
    ident: &syn::Ident,
    function: &ItemFn,
    param: &FloatParam,
    implementations: &[(Float, &ItemFn)],
    twin_name: &str,
) -> syn::Result<TokenStream> {
    let Some((_, first)) = implementations.first() else {
        return Ok(TokenStream::new());
    };
    if let Some(FnArg::Receiver(receiver)) = first.sig.inputs.first() {
        return Err(syn::Error::new_spanned(
            receiver,
            "#[grad] supports functions generic over their float type, not methods",
        ));
    }
    // Named as errors show it ("the trait `f_hessian_float` is implemented for `f64`").
    let trait_ident = format_ident!("{}_float", ident);
    let vis = &first.vis;
    // The parameters' names as the twin's function has them (as documentation shows
    // them), a pattern's replaced by a name.
    let arguments: Vec<syn::Ident> = first
        .sig
        .inputs
        .iter()
        .enumerate()
        .map(|(k, input)| match input {
            FnArg::Typed(typed) => match &*typed.pat {
                syn::Pat::Ident(pat) if pat.subpat.is_none() => pat.ident.clone(),
                _ => format_ident!("__arg{}", k),
            },
            FnArg::Receiver(_) => format_ident!("__arg{}", k),
        })
        .collect();
    let method = format_ident!("call");
    let generics = &first.sig.generics;
    let turbofish = turbofish(generics);
    let allows: Vec<&syn::Attribute> = first
        .attrs
        .iter()
        .filter(|attribute| attribute.path().is_ident("allow"))
        .collect();
    // The trait's method: the signature with `Self` for the float type.
    let self_ty: Type = syn::parse_quote!(Self);
    let mut declared = renamed(&first.sig, &method, &arguments);
    in_signature(&mut declared, Float::F64, &self_ty);
    let impls = implementations.iter().map(|(float, item)| {
        let signature = renamed(&item.sig, &method, &arguments);
        let callee = &item.sig.ident;
        quote! {
            #[allow(non_camel_case_types)]
            impl #trait_ident for #float {
                #[inline]
                #(#allows)*
                #signature {
                    #callee #turbofish (#(#arguments),*)
                }
            }
        }
    });
    let message = format!("`{ident}` is generated for `f64` and `f32`, not for `{{Self}}`");
    let note = "a function generic over its float type is differentiated in `f64` and `f32`";
    let label = "called here with `{Self}`";
    // The generic function.
    let mut generic = (*first).clone();
    generic.sig = renamed(&first.sig, ident, &arguments);
    let bound = Some(syn::parse_quote!(#trait_ident));
    made_generic(&mut generic, ident, function, param, bound, twin_name);
    let t_ident = &param.ident;
    *generic.block = syn::parse_quote!({
        <#t_ident as #trait_ident>::#method #turbofish (#(#arguments),*)
    });
    Ok(quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
        #vis trait #trait_ident: ::core::marker::Sized {
            #(#allows)*
            #declared;
        }
        #(#impls)*
        #generic
    })
}

/// `sig` named `ident`, its parameters named `arguments` (patterns may destructure).
fn renamed(sig: &syn::Signature, ident: &syn::Ident, arguments: &[syn::Ident]) -> syn::Signature {
    let mut sig = sig.clone();
    sig.ident = ident.clone();
    for (input, argument) in sig.inputs.iter_mut().zip(arguments) {
        if let FnArg::Typed(typed) = input {
            *typed.pat = syn::parse_quote!(#argument);
        }
    }
    sig
}

/// `::<N, M>` of the type and const parameters of `generics` (lifetimes are inferred), or
/// nothing.
fn turbofish(generics: &Generics) -> TokenStream {
    let names: Vec<&syn::Ident> = generics
        .params
        .iter()
        .filter_map(|param| match param {
            GenericParam::Type(ty) => Some(&ty.ident),
            GenericParam::Const(constant) => Some(&constant.ident),
            GenericParam::Lifetime(_) => None,
        })
        .collect();
    if names.is_empty() {
        TokenStream::new()
    } else {
        quote!(::<#(#names),*>)
    }
}

/// `generics` (a twin's function's) with the float type parameter back where the user
/// wrote it, with its bounds and `bound`, so `f_grad::<f32, 3>` reads as `f::<f32, 3>`.
fn with_float_param(
    generics: &Generics,
    function: &ItemFn,
    param: &FloatParam,
    bound: Option<syn::TypeParamBound>,
) -> Generics {
    let original = &function.sig.generics;
    let before = original
        .params
        .iter()
        .take_while(|other| !matches!(other, GenericParam::Type(ty) if ty.ident == param.ident))
        .filter(|other| !matches!(other, GenericParam::Lifetime(_)))
        .count();
    let Some(mut float_param) = original.params.iter().find_map(|other| match other {
        GenericParam::Type(ty) if ty.ident == param.ident => Some(ty.clone()),
        _ => None,
    }) else {
        return generics.clone();
    };
    float_param.default = None;
    // The trait's bound goes where the user wrote theirs (inline or in `where`).
    let in_where = original.where_clause.as_ref().is_some_and(|clause| {
        clause.predicates.iter().any(
            |predicate| matches!(predicate, syn::WherePredicate::Type(p) if super::names(&p.bounded_ty, &param.ident)),
        )
    });
    if let (Some(bound), false) = (&bound, in_where) {
        float_param.colon_token.get_or_insert_with(Default::default);
        float_param.bounds.push(bound.clone());
    }
    let mut out = generics.clone();
    let lifetimes = out
        .params
        .iter()
        .take_while(|other| matches!(other, GenericParam::Lifetime(_)))
        .count();
    let at = (lifetimes + before).min(out.params.len());
    let mut params: Vec<GenericParam> = out.params.into_iter().collect();
    params.insert(at, GenericParam::Type(float_param));
    out.params = params.into_iter().collect();
    out.lt_token.get_or_insert_with(Default::default);
    out.gt_token.get_or_insert_with(Default::default);
    // The user's `where T: …`.
    if let Some(clause) = &original.where_clause {
        for predicate in &clause.predicates {
            if matches!(predicate, syn::WherePredicate::Type(p) if super::names(&p.bounded_ty, &param.ident))
            {
                let mut predicate = predicate.clone();
                if let (syn::WherePredicate::Type(p), Some(bound)) = (&mut predicate, &bound) {
                    p.bounds.push(bound.clone());
                }
                out.make_where_clause().predicates.push(predicate);
            }
        }
    }
    out
}

/// Every `float` of a signature's types made `replacement`.
fn in_signature(sig: &mut syn::Signature, float: Float, replacement: &Type) {
    let mut replace = Replace { float, replacement };
    for input in &mut sig.inputs {
        if let FnArg::Typed(typed) = input {
            replace.visit_type_mut(&mut typed.ty);
        }
    }
    replace.visit_return_type_mut(&mut sig.output);
}

/// The replacing of a float type in types.
struct Replace<'a> {
    float: Float,
    replacement: &'a Type,
}

impl VisitMut for Replace<'_> {
    fn visit_type_mut(&mut self, ty: &mut Type) {
        if self.float.is(ty) {
            *ty = self.replacement.clone();
            return;
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}

/// The twin's name made the function's in `#[doc = "…"]` attributes.
fn rename_in_docs(attrs: &mut [syn::Attribute], twin_name: &str, name: &str) {
    for attribute in attrs {
        if let syn::Meta::NameValue(doc) = &mut attribute.meta {
            if doc.path.is_ident("doc") {
                if let syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(text),
                    ..
                }) = &mut doc.value
                {
                    let renamed = text.value().replace(twin_name, name);
                    *text = syn::LitStr::new(&renamed, Span::call_site());
                }
            }
        }
    }
}
