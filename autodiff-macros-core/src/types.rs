//! Recognising the types #[grad] and `#[derive(Differentiable)]` understand, as written
//! (macros see tokens, not resolved types).

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::Type;

/// The floating-point type a `#[grad]` function computes in, read from its signature: a
/// function is all `f64` or all `f32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Float {
    /// `f64`.
    #[default]
    F64,
    /// `f32`.
    F32,
}

impl Float {
    /// `"f64"` or `"f32"`.
    pub fn name(self) -> &'static str {
        match self {
            Float::F64 => "f64",
            Float::F32 => "f32",
        }
    }

    /// Whether a type is written as this float type (`f32`).
    pub fn is(self, ty: &Type) -> bool {
        scalar_float(ty) == Some(self)
    }

    /// A literal of this type: `value` suffixed (`0.0f32`).
    pub fn literal(self, value: &str) -> TokenStream {
        let literal = format!("{value}{}", self.name());
        match literal.parse::<proc_macro2::Literal>() {
            Ok(literal) => literal.into_token_stream(),
            Err(_) => quote!(0.0),
        }
    }
}

/// The type by its absolute path, `::core::primitive::f64`, which no item of the user's
/// can shadow.
impl ToTokens for Float {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(primitive(self.name()));
    }
}

/// A primitive type by its absolute path: `usize` → `::core::primitive::usize`. Generated
/// code names primitive types so, since a user's module may define a `type usize = …` of
/// its own.
pub fn primitive(name: &str) -> TokenStream {
    let name = proc_macro2::Ident::new(name, Span::call_site());
    quote!(::core::primitive::#name)
}

/// The name of a primitive type as the user may write it: `name` alone, or its path
/// `core::primitive::name` or `std::primitive::name` (with or without a leading `::`).
/// `None` for any other path; a path of one segment gives its name, whatever it names.
pub fn primitive_path(path: &syn::Path) -> Option<String> {
    if path.segments.iter().any(|s| !s.arguments.is_none()) {
        return None;
    }
    let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    match names.as_slice() {
        [name] if path.leading_colon.is_none() => Some(name.clone()),
        [krate, module, name]
            if matches!(krate.as_str(), "core" | "std") && module == "primitive" =>
        {
            Some(name.clone())
        }
        _ => None,
    }
}

/// [`primitive_path`] of a type (through parentheses).
fn primitive_name(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(path) if path.qself.is_none() => primitive_path(&path.path),
        Type::Paren(paren) => primitive_name(&paren.elem),
        Type::Group(group) => primitive_name(&group.elem),
        _ => None,
    }
}

/// `f64` or `f32` for a type written so, or by its path (`::core::primitive::f64`).
pub fn scalar_float(ty: &Type) -> Option<Float> {
    match primitive_name(ty)?.as_str() {
        "f64" => Some(Float::F64),
        "f32" => Some(Float::F32),
        _ => None,
    }
}

/// The float type of the path to a method or constant of `f64` or `f32`: `f64::tanh`,
/// `::core::primitive::f64::EPSILON` → `F64`.
pub fn float_of_associated(path: &syn::Path) -> Option<Float> {
    let mut owner = path.clone();
    owner.segments.pop()?;
    owner.segments.pop_punct();
    match primitive_path(&owner)?.as_str() {
        "f64" => Some(Float::F64),
        "f32" => Some(Float::F32),
        _ => None,
    }
}

/// Every `f64` or `f32` written inside a type (`&[[f32; 2]]`, `(f64, f64)`, `Vec<f32>`),
/// as written, in order.
pub fn floats_in<'a>(ty: &'a Type, out: &mut Vec<(Float, &'a Type)>) {
    if let Some(float) = scalar_float(ty) {
        out.push((float, ty));
        return;
    }
    match ty {
        Type::Reference(reference) => floats_in(&reference.elem, out),
        Type::Array(array) => floats_in(&array.elem, out),
        Type::Slice(slice) => floats_in(&slice.elem, out),
        Type::Paren(paren) => floats_in(&paren.elem, out),
        Type::Group(group) => floats_in(&group.elem, out),
        Type::Tuple(tuple) => tuple.elems.iter().for_each(|elem| floats_in(elem, out)),
        Type::Path(path) if path.qself.is_none() => {
            for segment in &path.path.segments {
                if let syn::PathArguments::AngleBracketed(args) = &segment.arguments {
                    for arg in &args.args {
                        if let syn::GenericArgument::Type(ty) = arg {
                            floats_in(ty, out);
                        }
                    }
                }
            }
        }
        _ => {}
    }
}

/// Whether a type is a primitive integer type.
pub fn is_integer(ty: &Type) -> bool {
    const INTEGERS: &[&str] = &[
        "i8", "i16", "i32", "i64", "i128", "isize", "u8", "u16", "u32", "u64", "u128", "usize",
    ];
    primitive_name(ty).is_some_and(|name| INTEGERS.contains(&name.as_str()))
}

/// Whether a type is `bool`.
pub fn is_bool(ty: &Type) -> bool {
    primitive_name(ty).is_some_and(|name| name == "bool")
}

/// Whether a type is a primitive type other than numbers and `bool` (`char`, `str`).
pub fn is_other_primitive(ty: &Type) -> bool {
    primitive_name(ty).is_some_and(|name| matches!(name.as_str(), "char" | "str"))
}

/// The dimensions of `[f64; N]`, `[[f64; M]; N]`, … (outermost first; `f32` for
/// `Float::F32`), or `None` for another type.
pub fn array_dims(ty: &Type, float: Float) -> Option<Vec<TokenStream>> {
    match ty {
        Type::Array(array) => {
            let mut dims = vec![array.len.to_token_stream()];
            if float.is(&array.elem) {
                Some(dims)
            } else {
                dims.extend(array_dims(&array.elem, float)?);
                Some(dims)
            }
        }
        Type::Paren(paren) => array_dims(&paren.elem, float),
        Type::Group(group) => array_dims(&group.elem, float),
        _ => None,
    }
}

/// `T` of `[T]` or `Vec<T>` (also parenthesized), or `None` for another type.
pub fn sequence_element(ty: &Type) -> Option<&Type> {
    match ty {
        Type::Slice(slice) => Some(&slice.elem),
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last()?;
            match &last.arguments {
                syn::PathArguments::AngleBracketed(args)
                    if last.ident == "Vec" && args.args.len() == 1 =>
                {
                    match &args.args[0] {
                        syn::GenericArgument::Type(ty) => Some(ty),
                        _ => None,
                    }
                }
                _ => None,
            }
        }
        Type::Paren(paren) => sequence_element(&paren.elem),
        Type::Group(group) => sequence_element(&group.elem),
        _ => None,
    }
}

/// Whether a type is `[T]` or `Vec<T>` of a primitive integer type `T`.
pub fn integer_slice(ty: &Type) -> bool {
    sequence_element(ty).is_some_and(is_integer)
}

/// The element dimensions of `[f64]`, `[[f64; N]]`, `Vec<f64>`, `Vec<[f64; N]>` (empty for
/// `f64` elements; `f32` for `Float::F32`), or `None` for another type.
pub fn slice_element(ty: &Type, float: Float) -> Option<Vec<TokenStream>> {
    let element = sequence_element(ty)?;
    if float.is(element) {
        Some(Vec::new())
    } else {
        array_dims(element, float)
    }
}

/// Whether tokens contain, at any depth, an identifier that `wanted` accepts.
pub fn mentions(tokens: &TokenStream, wanted: &impl Fn(&proc_macro2::Ident) -> bool) -> bool {
    tokens.clone().into_iter().any(|token| match token {
        proc_macro2::TokenTree::Ident(ident) => wanted(&ident),
        proc_macro2::TokenTree::Group(group) => mentions(&group.stream(), wanted),
        _ => false,
    })
}
