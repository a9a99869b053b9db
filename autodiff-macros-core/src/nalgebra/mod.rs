//! nalgebra's fixed-size vectors, points and matrices in `#[grad]` functions:
//! `Vector3<f64>`, `SVector<f64, N>`, `Point3<f64>`, `Matrix3<f64>`, `SMatrix<f64, R, C>`.
//!
//! The macro sees tokens, not types, so it reads these types as they are written and
//! rewrites the function in arrays before the pipeline sees it ([`body`]): a vector of
//! `n` numbers is `[f64; n]`, a matrix its columns `[[f64; r]; c]`, as nalgebra stores
//! them, and `a + b`, `m * v`, `a.dot(&b)`, `a.cross(&b)`, `v.norm()`, … are the code
//! that computes them element by element. The pipeline then differentiates that code
//! as any code over arrays, in every mode.
//!
//! A function with such types in its signature goes through the pipeline as a hidden
//! twin, `f_nalgebra` (hidden; named so that rustc's error for a call of a function
//! that is not `#[grad]` reads "cannot find function `g_nalgebra_vjp`", as it reads
//! `g_vjp` for numbers), whose signature has the arrays; each function generated for it
//! gets a function of the user's name whose signature has the user's types, converting
//! at the boundary with nalgebra's own `From` impls between these types and arrays
//! ([`wrap`]). The generated code never names nalgebra, so it works with whichever
//! version the user depends on.

mod body;
mod shape;
mod wrap;

use proc_macro2::TokenStream;
use std::collections::HashMap;
use syn::{FnArg, ItemFn, Pat, ReturnType, Type};

pub use shape::Shape;

/// Whether `function` uses one of nalgebra's fixed-size types: a type written with its
/// number type (`Vector3<f64>`, `SMatrix<f64, 2, 3>`) anywhere, or a value built by
/// `Vector3::new(..)`, `Matrix3::identity()`, … (a type of the user's own named like one
/// of nalgebra's aliases and built so inside a `#[grad]` function is read as nalgebra's).
pub fn uses(function: &ItemFn) -> bool {
    struct Finder(bool);
    impl<'ast> syn::visit::Visit<'ast> for Finder {
        fn visit_type(&mut self, ty: &'ast Type) {
            self.0 |= shape::of_type(ty).is_some();
            syn::visit::visit_type(self, ty);
        }
        fn visit_expr_call(&mut self, call: &'ast syn::ExprCall) {
            if let syn::Expr::Path(path) = &*call.func {
                self.0 |= shape::of_constructor(&path.path).is_some();
            }
            syn::visit::visit_expr_call(self, call);
        }
    }
    let mut finder = Finder(false);
    syn::visit::Visit::visit_item_fn(&mut finder, function);
    finder.0
}

/// Whether `function`'s signature has one of nalgebra's fixed-size types, or a slice of
/// them.
pub fn in_signature(function: &ItemFn) -> bool {
    function.sig.inputs.iter().any(|input| match input {
        FnArg::Typed(typed) => {
            shape::of_type(&typed.ty).is_some() || shape::of_slice(&typed.ty).is_some()
        }
        FnArg::Receiver(_) => false,
    }) || output_shape(function).is_some()
}

/// The parameters that are slices of nalgebra's types: name and element shape.
fn slice_params(function: &ItemFn) -> HashMap<String, Shape> {
    typed_params(function, shape::of_slice)
        .into_iter()
        .map(|(name, shape, _)| (name, shape))
        .collect()
}

/// The parameters of nalgebra types: name, shape and number type.
fn params(function: &ItemFn) -> Vec<(String, Shape, Type)> {
    typed_params(function, shape::of_type)
}

/// The parameters, named by an identifier, whose type `read` reads: name, shape and
/// number type.
fn typed_params(
    function: &ItemFn,
    read: impl Fn(&Type) -> Option<(Shape, Type)>,
) -> Vec<(String, Shape, Type)> {
    function
        .sig
        .inputs
        .iter()
        .filter_map(|input| match input {
            FnArg::Typed(typed) => {
                let Pat::Ident(ident) = &*typed.pat else {
                    return None;
                };
                let (shape, real) = read(&typed.ty)?;
                Some((ident.ident.to_string(), shape, real))
            }
            FnArg::Receiver(_) => None,
        })
        .collect()
}

/// The shape of the returned value, if it is one of nalgebra's types.
fn output_shape(function: &ItemFn) -> Option<(Shape, Type)> {
    match &function.sig.output {
        ReturnType::Type(_, ty) => shape::of_type(ty),
        ReturnType::Default => None,
    }
}

/// Rewrites `function`'s body in arrays (its signature stays), or the errors of what it
/// cannot rewrite.
pub fn rewrite_body(function: &mut ItemFn) -> syn::Result<()> {
    let params = params(function);
    let slices = slice_params(function);
    let slice_real = function.sig.inputs.iter().find_map(|input| match input {
        FnArg::Typed(typed) => shape::of_slice(&typed.ty).map(|(_, real)| real),
        FnArg::Receiver(_) => None,
    });
    let real = params
        .first()
        .map(|(_, _, real)| real.clone())
        .or(slice_real)
        .or_else(|| output_shape(function).map(|(_, real)| real))
        .or_else(|| {
            function.sig.inputs.iter().find_map(|input| match input {
                FnArg::Typed(typed) => crate::types::scalar_float(&typed.ty)
                    .map(|float| syn::parse_str(float.name()).ok())?,
                FnArg::Receiver(_) => None,
            })
        })
        .unwrap_or_else(|| syn::parse_quote!(f64));
    let scope: HashMap<String, Shape> = params
        .into_iter()
        .map(|(name, shape, _)| match shape {
            // A `DVector` parameter is a slice, of its own length.
            Shape::Dynamic { .. } => {
                let ident = syn::Ident::new(&name, proc_macro2::Span::call_site());
                let len = quote::quote!(#ident.len());
                (name, Shape::Dynamic { len })
            }
            shape => (name, shape),
        })
        .collect();
    let mut rewriter = body::Rewriter::new(real, scope, slices);
    rewriter.block(&mut function.block);
    rewriter.errors.finish(())
}

/// The twin of `function` whose signature has arrays for nalgebra's types, named
/// `f_nalgebra`.
fn twin(function: &ItemFn) -> ItemFn {
    let mut twin = function.clone();
    twin.sig.ident = quote::format_ident!("{}_nalgebra", function.sig.ident);
    for input in &mut twin.sig.inputs {
        if let FnArg::Typed(typed) = input {
            *typed.ty = arrays(&typed.ty);
        }
    }
    if let ReturnType::Type(_, ty) = &mut twin.sig.output {
        **ty = match shape::of_type(ty) {
            Some((Shape::Dynamic { .. }, real)) => syn::parse_quote!(::std::vec::Vec<#real>),
            _ => arrays(ty),
        };
    }
    twin
}

/// `ty` with the array standing for its nalgebra type, through one reference (and in a
/// slice: `&[Vector3<f64>]` is `&[[f64; 3]]`).
fn arrays(ty: &Type) -> Type {
    if let (Some((shape, real)), Type::Reference(reference)) = (shape::of_slice(ty), ty) {
        let element = shape.array_type(&real);
        let mut reference = reference.clone();
        *reference.elem = syn::parse_quote!([#element]);
        return Type::Reference(reference);
    }
    let Some((shape, real)) = shape::of_type(ty) else {
        return ty.clone();
    };
    if let Shape::Dynamic { .. } = shape {
        // A slice, whatever the parameter's reference (the wrapper passes `as_slice()`).
        return match ty {
            Type::Reference(reference) if reference.mutability.is_some() => {
                syn::parse_quote!(&mut [#real])
            }
            _ => syn::parse_quote!(&[#real]),
        };
    }
    let array: Type = match syn::parse2(shape.array_type(&real)) {
        Ok(array) => array,
        Err(_) => return ty.clone(),
    };
    match ty {
        Type::Reference(reference) => {
            let mut reference = reference.clone();
            *reference.elem = array;
            Type::Reference(reference)
        }
        _ => array,
    }
}

/// Expands a function with nalgebra's types in its signature: its twin in arrays through
/// `expand`, then the functions of the user's types around what it generated.
pub fn wrapped(
    args: TokenStream,
    function: &ItemFn,
    mut expand: impl FnMut(TokenStream, ItemFn) -> syn::Result<TokenStream>,
) -> syn::Result<TokenStream> {
    let twin = twin(function);
    let expansion = expand(args, twin.clone())?;
    wrap::wrappers(function, &twin, &expansion)
}

/// The stand-in `_grad` of a method of nalgebra's types (an error): the method's own
/// parameters, and the value and partials of their types (those of `wrt(..)`, else every
/// parameter that is not an integer or a `bool`), so that its callers type-check.
pub fn method_stand_in(function: &ItemFn, args: TokenStream) -> TokenStream {
    let parsed = crate::args::parse(args).unwrap_or_default();
    let referenced = |ty: &Type| match ty {
        Type::Reference(reference) => (*reference.elem).clone(),
        ty => ty.clone(),
    };
    let partials = function.sig.inputs.iter().filter_map(|input| match input {
        FnArg::Typed(typed) => {
            let Pat::Ident(pat) = &*typed.pat else {
                return None;
            };
            let ty = referenced(&typed.ty);
            let chosen = match &parsed.wrt {
                Some(wrt) => wrt.contains(&pat.ident),
                None => {
                    !crate::types::is_integer(&ty)
                        && !matches!(&ty, Type::Path(p) if p.path.is_ident("bool"))
                }
            };
            chosen.then_some(ty)
        }
        FnArg::Receiver(_) => None,
    });
    let value = match &function.sig.output {
        ReturnType::Type(_, ty) => quote::quote!(#ty),
        ReturnType::Default => quote::quote!(()),
    };
    let mut signature = function.sig.clone();
    signature.ident = quote::format_ident!(
        "{}_grad",
        function.sig.ident,
        span = function.sig.ident.span()
    );
    signature.output = syn::parse_quote!(-> (#value, #(#partials),*));
    let vis = &function.vis;
    quote::quote! {
        #[allow(unused_variables, dead_code)]
        #vis #signature { ::core::unreachable!() }
    }
}
