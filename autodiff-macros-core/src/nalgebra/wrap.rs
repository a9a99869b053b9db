//! The functions of the user's types around what the pipeline generated for the twin in
//! arrays: `f_grad(p: &Vector3<f64>) -> (f64, Vector3<f64>)` calls
//! `f_nalgebra_grad(p: &[f64; 3]) -> (f64, [f64; 3])`, converting each argument and
//! result of a nalgebra type with nalgebra's `From` impls (a vector is its array, a matrix
//! its columns: nothing is reordered).
//!
//! Which argument and which result is of which type follows the naming of the
//! generated functions: a parameter `x`, its tangent `t_x`, its direction `v_x` and its
//! partial's buffer `d_x` have `x`'s type, the seed `seed` the output's; the results are
//! the value, then one partial per differentiated parameter (`_grad`, `_hvp`,
//! `_hessian`, and `_jacobian` of a number), then for `_hvp` one product per
//! differentiated parameter; `_jvp`'s tangent has the output's type.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use syn::{FnArg, ItemFn, Pat, ReturnType, Type};

/// The functions a user calls, by suffix.
const PUBLIC: [&str; 7] = [
    "grad",
    "grad_into",
    "vjp",
    "jvp",
    "jacobian",
    "hvp",
    "hessian",
];

/// The twin's generated functions, hidden, then a function of the user's types for each
/// one a user calls.
pub fn wrappers(
    function: &ItemFn,
    twin: &ItemFn,
    expansion: &TokenStream,
) -> syn::Result<TokenStream> {
    let name = function.sig.ident.to_string();
    let twin_name = twin.sig.ident.to_string();
    let file: syn::File = syn::parse2(expansion.clone())?;
    let mut out = TokenStream::new();
    // The twin itself: the generated code calls it, and so do the twins of callers that
    // pass nalgebra values to it.
    {
        out.extend(quote! {
            #[doc(hidden)]
            #[allow(
                dead_code,
                non_snake_case,
                unused_parens,
                unused_variables,
                clippy::all,
                clippy::pedantic
            )]
            #twin
        });
    }
    let mut generated = Vec::new();
    for item in file.items {
        match item {
            syn::Item::Fn(item) => {
                let ident = item.sig.ident.to_string();
                let suffix = ident
                    .strip_prefix(&twin_name)
                    .and_then(|rest| rest.strip_prefix('_'))
                    .filter(|suffix| PUBLIC.contains(suffix))
                    .map(str::to_string);
                out.extend(crate::generic::hidden(&item));
                if let Some(suffix) = suffix {
                    generated.push((suffix, item));
                }
            }
            item => out.extend(item.into_token_stream()),
        }
    }
    let wrt = differentiated(function, &generated);
    for (suffix, item) in &generated {
        let ident = format_ident!("{}_{}", name, suffix, span = function.sig.ident.span());
        // (A stand-in of a function not asked for keeps its bound, whose diagnostic its
        // callers see, in the wrapper's signature.)
        out.extend(wrapper(
            function, item, &ident, suffix, &wrt, &name, &twin_name,
        ));
    }
    Ok(out)
}

/// The differentiated parameters, in order: those with a buffer `d_x` in `_grad_into`
/// (or a tangent `t_x` in `_jvp`, a direction `v_x` in `_hvp`; the pullback `_vjp` of a
/// vector output, for callers, has a buffer for every parameter).
fn differentiated(function: &ItemFn, generated: &[(String, ItemFn)]) -> Vec<String> {
    let with = |suffix: &str, prefix: &str| {
        let (_, item) = generated.iter().find(|(s, _)| s == suffix)?;
        let names: Vec<String> = item.sig.inputs.iter().filter_map(param_name).collect();
        Some(
            function
                .sig
                .inputs
                .iter()
                .filter_map(param_name)
                .filter(|name| names.contains(&format!("{prefix}{name}")))
                .collect::<Vec<String>>(),
        )
    };
    with("grad_into", "d_")
        .or_else(|| with("jvp", "t_"))
        .or_else(|| with("hvp", "v_"))
        .or_else(|| with("vjp", "d_"))
        .unwrap_or_default()
}

fn param_name(input: &FnArg) -> Option<String> {
    match input {
        FnArg::Typed(typed) => match &*typed.pat {
            Pat::Ident(ident) => Some(ident.ident.to_string()),
            _ => None,
        },
        FnArg::Receiver(_) => None,
    }
}

/// The user's type (without reference) of the parameter named `name`, if it is one of
/// nalgebra's.
fn user_type(function: &ItemFn, name: &str) -> Option<Type> {
    function.sig.inputs.iter().find_map(|input| match input {
        FnArg::Typed(typed) if param_name(input).as_deref() == Some(name) => {
            if super::shape::of_type(&typed.ty).is_none()
                && super::shape::of_slice(&typed.ty).is_none()
            {
                return None;
            }
            Some(strip_reference(&typed.ty).clone())
        }
        _ => None,
    })
}

fn strip_reference(ty: &Type) -> &Type {
    match ty {
        Type::Reference(reference) => &reference.elem,
        ty => ty,
    }
}

/// The user's output type, if it is one of nalgebra's.
fn output_type(function: &ItemFn) -> Option<Type> {
    match &function.sig.output {
        ReturnType::Type(_, ty) if super::shape::of_type(ty).is_some() => Some((**ty).clone()),
        _ => None,
    }
}

/// `ty` (an array, `&`, `&mut`) with the user's type `user` in place of the array.
fn with_user_type(ty: &Type, user: &Type) -> Type {
    match ty {
        Type::Reference(reference) => {
            let mut reference = reference.clone();
            *reference.elem = user.clone();
            Type::Reference(reference)
        }
        _ => user.clone(),
    }
}

/// The function `ident` of the user's types around the generated `item`.
fn wrapper(
    function: &ItemFn,
    item: &ItemFn,
    ident: &syn::Ident,
    suffix: &str,
    wrt: &[String],
    name: &str,
    twin_name: &str,
) -> TokenStream {
    let mut sig = item.sig.clone();
    sig.ident = ident.clone();
    let mut before = TokenStream::new();
    let mut after = TokenStream::new();
    let mut args = Vec::new();
    // The original parameters come first, in order; then tangents, directions, the seed
    // and buffers, named after them.
    let originals: Vec<Option<String>> = function.sig.inputs.iter().map(param_name).collect();
    for (position, input) in sig.inputs.iter_mut().enumerate() {
        let FnArg::Typed(typed) = input else {
            continue;
        };
        let Pat::Ident(pat) = &*typed.pat else {
            continue;
        };
        // The generated name, with its hygiene.
        let ident = pat.ident.clone();
        let param = ident.to_string();
        let source = match originals.get(position) {
            Some(original) => original
                .as_deref()
                .and_then(|original| user_type(function, original)),
            None => ["t_", "v_", "d_"]
                .iter()
                .find_map(|prefix| {
                    param
                        .strip_prefix(prefix)
                        .and_then(|original| user_type(function, original))
                })
                .or_else(|| {
                    // The pullback's seed, right after the parameters, has the output's type.
                    let seed = suffix == "vjp" && position == originals.len();
                    seed.then(|| output_type(function)).flatten()
                }),
        };
        let Some(user) = source else {
            args.push(quote!(#ident));
            continue;
        };
        let array = strip_reference(&typed.ty).clone();
        if let Some((super::Shape::Dynamic { .. }, _)) = super::shape::of_type(&user) {
            // A `DVector`: its numbers as a slice, nothing copied.
            match &*typed.ty {
                Type::Reference(reference) if reference.mutability.is_some() => {
                    args.push(quote!(#ident.as_mut_slice()));
                }
                _ => args.push(quote!(#ident.as_slice())),
            }
            *typed.ty = match &*typed.ty {
                Type::Reference(_) => {
                    let original = function.sig.inputs.iter().find_map(|input| match input {
                        FnArg::Typed(t) if param_name(input).as_deref() == Some(&*param) => {
                            Some((*t.ty).clone())
                        }
                        _ => None,
                    });
                    // The user's parameter as written (`&DVector<f64>` or by value).
                    match (position < originals.len(), original) {
                        (true, Some(original)) => original,
                        _ => with_user_type(&typed.ty, &user),
                    }
                }
                ty => with_user_type(ty, &user),
            };
            continue;
        }
        if let (Type::Slice(_), Type::Slice(slice)) = (&user, &array) {
            // A slice of nalgebra values: its elements copied to a vector of arrays (and
            // a buffer's back).
            let element = &slice.elem;
            let copied = quote! {
                #ident
                    .iter()
                    .map(|e| ::core::convert::Into::<#element>::into(*e))
                    .collect::<::autodiff::__private::vec::Vec<#element>>()
            };
            match &*typed.ty {
                Type::Reference(reference) if reference.mutability.is_some() => {
                    let buffer = format_ident!("__nalgebra_{}", param);
                    before.extend(quote!(let mut #buffer = #copied;));
                    after.extend(quote! {
                        for (e, a) in #ident.iter_mut().zip(#buffer) {
                            *e = ::core::convert::From::from(a);
                        }
                    });
                    args.push(quote!(&mut #buffer));
                }
                _ => args.push(quote!(&#copied)),
            }
            *typed.ty = with_user_type(&typed.ty, &user);
            continue;
        }
        match &*typed.ty {
            Type::Reference(reference) if reference.mutability.is_some() => {
                let buffer = format_ident!("__nalgebra_{}", param);
                before.extend(quote! {
                    let mut #buffer: #array = ::core::convert::Into::into(*#ident);
                });
                after.extend(quote! {
                    *#ident = ::core::convert::From::from(#buffer);
                });
                args.push(quote!(&mut #buffer));
            }
            Type::Reference(_) => {
                args.push(quote!(&::core::convert::Into::<#array>::into(*#ident)));
            }
            _ => args.push(quote!(::core::convert::Into::<#array>::into(#ident))),
        }
        *typed.ty = with_user_type(&typed.ty, &user);
    }

    // The results: which position has which user type.
    let output = output_type(function);
    let scalar_output = output.is_none() && !tuple_output(function);
    let partials = |k: usize| wrt.get(k).and_then(|name| user_type(function, name));
    let ReturnType::Type(arrow, returned) = &item.sig.output else {
        return TokenStream::new();
    };
    let results: Vec<Type> = match &**returned {
        Type::Tuple(tuple) => tuple.elems.iter().cloned().collect(),
        ty => vec![ty.clone()],
    };
    let is_tuple = matches!(&**returned, Type::Tuple(_));
    let w = wrt.len();
    let user_of = |k: usize| -> Option<Type> {
        if k == 0 {
            return output.clone();
        }
        match suffix {
            "grad" | "hessian" => partials(k - 1).filter(|_| k <= w),
            "jacobian" if scalar_output => partials(k - 1).filter(|_| k <= w),
            "hvp" if k <= w => partials(k - 1),
            "hvp" => partials(k - 1 - w).filter(|_| k <= 2 * w),
            "jvp" if k == 1 => output.clone(),
            _ => None,
        }
    };
    let mut types = Vec::new();
    let mut values = Vec::new();
    for (k, ty) in results.iter().enumerate() {
        let value = if is_tuple {
            let index = syn::Index::from(k);
            quote!(__nalgebra_result.#index)
        } else {
            quote!(__nalgebra_result)
        };
        // Only arrays (and vectors of them) stand for nalgebra's types; anything else at
        // that position (a stand-in's placeholder) stays as generated.
        let arrays = matches!(ty, Type::Array(_) | Type::Path(_))
            && crate::types::scalar_float(ty).is_none();
        match user_of(k).filter(|_| arrays) {
            // A slice's partial: a vector of its elements' type.
            Some(Type::Slice(slice)) => {
                let element = &slice.elem;
                types.push(quote!(::autodiff::__private::vec::Vec<#element>));
                values.push(quote! {
                    #value.into_iter().map(::core::convert::From::from).collect()
                });
            }
            Some(user) => {
                types.push(user.to_token_stream());
                values.push(quote!(::core::convert::From::from(#value)));
            }
            None => {
                types.push(ty.to_token_stream());
                values.push(value);
            }
        }
    }
    sig.output = if is_tuple {
        syn::parse_quote!(#arrow (#(#types),*))
    } else {
        let ty = &types[0];
        syn::parse_quote!(#arrow #ty)
    };
    let result = if is_tuple {
        quote!((#(#values),*))
    } else {
        quote!(#(#values)*)
    };
    let callee = &item.sig.ident;
    let consts: Vec<&syn::Ident> = item.sig.generics.const_params().map(|c| &c.ident).collect();
    let turbofish = (!consts.is_empty()).then(|| quote!(::<#(#consts),*>));
    let attrs = item.attrs.iter().map(|attribute| {
        if !attribute.path().is_ident("doc") {
            return attribute.to_token_stream();
        }
        let text = attribute
            .to_token_stream()
            .to_string()
            .replace(twin_name, name);
        text.parse().unwrap_or_default()
    });
    let vis = &function.vis;
    quote! {
        #(#attrs)*
        #[allow(clippy::useless_conversion)]
        #vis #sig {
            #before
            let __nalgebra_result = #callee #turbofish(#(#args),*);
            #after
            #result
        }
    }
}

/// Whether `function` returns a tuple.
fn tuple_output(function: &ItemFn) -> bool {
    matches!(&function.sig.output, ReturnType::Type(_, ty) if matches!(**ty, Type::Tuple(_)))
}
