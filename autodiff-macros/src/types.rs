//! Recognising the types #[grad] and `#[derive(Differentiable)]` understand, as written
//! (macros see tokens, not resolved types).

use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::Type;

/// Whether a type is written `f64`.
pub fn is_f64(ty: &Type) -> bool {
    matches!(ty, Type::Path(path) if path.qself.is_none() && path.path.is_ident("f64"))
}

/// Whether a type is a primitive integer type.
pub fn is_integer(ty: &Type) -> bool {
    const INTEGERS: &[&str] = &[
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
    ];
    matches!(ty, Type::Path(path) if path.qself.is_none()
        && INTEGERS.iter().any(|name| path.path.is_ident(name)))
}

pub fn is_bool(ty: &Type) -> bool {
    matches!(ty, Type::Path(path) if path.qself.is_none() && path.path.is_ident("bool"))
}

/// The dimensions of `[f64; N]`, `[[f64; M]; N]`, … (outermost first), or `None` for
/// another type.
pub fn array_dims(ty: &Type) -> Option<Vec<TokenStream>> {
    match ty {
        Type::Array(array) => {
            let mut dims = vec![array.len.to_token_stream()];
            if is_f64(&array.elem) {
                Some(dims)
            } else {
                dims.extend(array_dims(&array.elem)?);
                Some(dims)
            }
        }
        Type::Paren(paren) => array_dims(&paren.elem),
        Type::Group(group) => array_dims(&group.elem),
        _ => None,
    }
}

/// Whether a type is `[T]` or `Vec<T>` of a primitive integer type `T`.
pub fn integer_slice(ty: &Type) -> bool {
    let element = match ty {
        Type::Slice(slice) => &*slice.elem,
        Type::Path(path) if path.qself.is_none() => {
            let Some(last) = path.path.segments.last() else {
                return false;
            };
            match &last.arguments {
                syn::PathArguments::AngleBracketed(args)
                    if last.ident == "Vec" && args.args.len() == 1 =>
                {
                    match &args.args[0] {
                        syn::GenericArgument::Type(ty) => ty,
                        _ => return false,
                    }
                }
                _ => return false,
            }
        }
        _ => return false,
    };
    is_integer(element)
}

/// The element dimensions of `[f64]`, `[[f64; N]]`, `Vec<f64>`, `Vec<[f64; N]>` (empty for
/// `f64` elements), or `None` for another type.
pub fn slice_element(ty: &Type) -> Option<Vec<TokenStream>> {
    let element = match ty {
        Type::Slice(slice) => &*slice.elem,
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last()?;
            if last.ident != "Vec" {
                return None;
            }
            match &last.arguments {
                syn::PathArguments::AngleBracketed(args) if args.args.len() == 1 => {
                    match &args.args[0] {
                        syn::GenericArgument::Type(ty) => ty,
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
        Type::Paren(paren) => return slice_element(&paren.elem),
        Type::Group(group) => return slice_element(&group.elem),
        _ => return None,
    };
    if is_f64(element) {
        Some(Vec::new())
    } else {
        array_dims(element)
    }
}
