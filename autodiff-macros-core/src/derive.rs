//! `#[derive(Differentiable)]`: the trait implementation, and the layout macro through
//! which `#[grad]` learns the struct's fields (see [`crate::layout`]).

use crate::layout::{self, Layout};
use crate::types::primitive;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::DeriveInput;

/// Expands `#[derive(Differentiable)]` for a crate that sees the facade at `facade`
/// (or where the struct's `#[differentiable(crate = path)]` says); errors become
/// `compile_error!`.
pub fn derive(facade: syn::Path, input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.into_compile_error(),
    };
    let facade = match facade_option(&input) {
        Ok(path) => path.unwrap_or(facade),
        Err(error) => return error.into_compile_error(),
    };
    let (layout, errors) = layout::parse_lenient(&input);
    match (layout, errors.finish(())) {
        (Some(layout), Ok(())) => {
            let implementation = implementation(&layout);
            let macro_ = layout_macro(&layout);
            crate::krate::relocate(quote!(#implementation #macro_), &facade)
        }
        // A rejected field: the error, and the struct still described (that field a
        // constant) with an implementation that never runs, so that its uses in `#[grad]`
        // signatures give no second error.
        (Some(layout), Err(error)) => {
            let error = error.into_compile_error();
            let implementation = placeholder(&layout);
            let macro_ = layout_macro(&layout);
            let described = crate::krate::relocate(quote!(#implementation #macro_), &facade);
            quote!(#error #described)
        }
        (None, Err(error)) => error.into_compile_error(),
        (None, Ok(())) => TokenStream::new(),
    }
}

/// `impl Differentiable` for a struct whose derive failed: it satisfies the bounds that
/// `#[grad]` checks, and the crate does not compile, so nothing calls it.
fn placeholder(layout: &Layout) -> TokenStream {
    let name = &layout.ident;
    let (generics, arguments, _) = layout.generics.split_for_impl();
    let trait_ = quote!(::autodiff::Differentiable);
    let (f64, usize) = (primitive("f64"), primitive("usize"));
    quote! {
        #[allow(unused_variables)]
        impl #generics #trait_ for #name #arguments {
            fn zero_like(&self) -> Self {
                ::core::unreachable!()
            }
            fn add_scaled(&mut self, alpha: #f64, other: &Self) {}
            fn param_count(&self) -> #usize {
                0
            }
            fn for_each_param(&self, f: &mut dyn ::core::ops::FnMut(#f64)) {}
            fn for_each_param_mut(&mut self, f: &mut dyn ::core::ops::FnMut(&mut #f64)) {}
        }
    }
}

/// `#[differentiable(crate = path)]` (or `crate = "path"`) on the struct itself.
fn facade_option(input: &DeriveInput) -> syn::Result<Option<syn::Path>> {
    let mut path = None;
    for attribute in &input.attrs {
        if !attribute.path().is_ident("differentiable") {
            continue;
        }
        attribute.parse_nested_meta(|meta| {
            if !meta.path.is_ident("crate") {
                return Err(meta.error(
                    "unknown option; supported on the struct: `#[differentiable(crate = path)]`",
                ));
            }
            path = Some(crate::krate::parse_option(&meta)?);
            Ok(())
        })?;
    }
    Ok(path)
}

/// `impl Differentiable`: differentiable fields through their own implementations,
/// constants copied by `zero_like` and left out of everything else.
fn implementation(layout: &Layout) -> TokenStream {
    let name = &layout.ident;
    let trait_ = quote!(::autodiff::Differentiable);
    let zero = layout.fields.iter().map(|field| {
        let ident = &field.ident;
        if field.kind.differentiable() && !field.skip {
            quote!(#ident: #trait_::zero_like(&self.#ident))
        } else {
            quote!(#ident: ::core::clone::Clone::clone(&self.#ident))
        }
    });
    let numbers: Vec<_> = layout
        .fields
        .iter()
        .filter(|field| field.kind.differentiable() && !field.skip)
        .map(|field| &field.ident)
        .collect();
    // Primitive types by their paths: the struct's module may shadow `f64` or `usize`.
    let (f64, usize) = (primitive("f64"), primitive("usize"));
    let (generics, arguments, _) = layout.generics.split_for_impl();
    quote! {
        impl #generics #trait_ for #name #arguments {
            #[inline]
            fn zero_like(&self) -> Self {
                #name { #(#zero),* }
            }

            #[inline]
            fn add_scaled(&mut self, alpha: #f64, other: &Self) {
                #(#trait_::add_scaled(&mut self.#numbers, alpha, &other.#numbers);)*
            }

            fn param_count(&self) -> #usize {
                0 #(+ #trait_::param_count(&self.#numbers))*
            }

            fn for_each_param(&self, f: &mut dyn ::core::ops::FnMut(#f64)) {
                #(#trait_::for_each_param(&self.#numbers, f);)*
            }

            fn for_each_param_mut(&mut self, f: &mut dyn ::core::ops::FnMut(&mut #f64)) {
                #(#trait_::for_each_param_mut(&mut self.#numbers, f);)*
            }
        }
    }
}

/// The layout macro: named like the struct, in the macro namespace, visible in the crate.
/// It hands the struct's fields to `#[grad]`'s next step.
fn layout_macro(layout: &Layout) -> TokenStream {
    let name = &layout.ident;
    let generics = &layout.generics;
    let hidden = format_ident!("__autodiff_layout_{}", name, span = Span::call_site());
    let fields = layout.fields.iter().map(|field| {
        let ident = &field.ident;
        let ty = &field.ty;
        let skip = field.skip.then(|| quote!(#[differentiable(skip)]));
        quote!(#skip #ident: #ty)
    });
    quote! {
        #[doc(hidden)]
        macro_rules! #hidden {
            ($($state:tt)*) => {
                ::autodiff::__private::grad_resume! {
                    [struct #name #generics { #(#fields),* }] $($state)*
                }
            };
        }
        #[doc(hidden)]
        #[allow(unused_imports)]
        pub(crate) use #hidden as #name;
    }
}
