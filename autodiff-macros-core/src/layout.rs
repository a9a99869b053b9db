//! Struct layouts: what each field of a `#[derive(Differentiable)]` struct holds.
//!
//! A macro sees only the tokens it is applied to, so `#[grad] fn loss(m: &Mlp, …)` cannot
//! see `Mlp`'s fields. The derive therefore defines, next to the struct, a macro with the
//! struct's name (in the macro namespace, so `use model::Mlp;` imports it with the type)
//! that hands the struct's definition back to `#[grad]`:
//!
//! ```text
//! #[grad] fn loss(m: &Mlp) -> f64 { … }
//!   → fn loss(..) { … }                                 (the original)
//!     Mlp! { @grad [args] [] fn loss(..) { … } }        (asks for Mlp's layout)
//!   → ::autodiff::__private::grad_resume! {
//!         [struct Mlp { w: [f64; 2], … }] @grad [args] [] fn loss(..) { … } }
//!   → fn loss_grad(..) { … }                            (every layout known)
//! ```
//! A layout that names another struct type asks for that one in turn.

use crate::types::{
    array_dims, is_bool, is_integer, is_other_primitive, scalar_float, slice_element, Float,
};
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{Data, DeriveInput, Fields, Ident, Type};

/// A struct's fields, as `#[grad]` sees them.
pub struct Layout {
    /// The struct's name.
    pub ident: Ident,
    /// Its const generic parameters, if any.
    pub generics: syn::Generics,
    /// Its fields, in declaration order.
    pub fields: Vec<Field>,
}

/// One field.
pub struct Field {
    /// Its name.
    pub ident: Ident,
    /// Its type, as written.
    pub ty: Type,
    /// What it holds.
    pub kind: FieldKind,
    /// `#[differentiable(skip)]`: a constant.
    pub skip: bool,
}

/// What a field holds.
pub enum FieldKind {
    /// `f64` or an array of them (dimensions outermost first).
    Real(Vec<TokenStream>),
    /// `Vec<f64>` or `Vec<[f64; N]>` (the element's dimensions).
    Vector(Vec<TokenStream>),
    /// An integer: a constant.
    Int,
    /// A `bool`: a constant.
    Bool,
    /// Another struct, which must derive `Differentiable` itself.
    Struct(Type),
    /// A collection of such structs: `Vec<Layer>` (`None`) or `[Layer; K]` (`Some(K)`).
    Collection(Type, Option<TokenStream>),
    /// A tuple of numbers and arrays of them: `(f64, [f64; 2])`.
    Tuple(Type),
    /// Anything else: only allowed when skipped.
    Other,
}

impl FieldKind {
    /// Classifies a field's type.
    pub fn of(ty: &Type) -> FieldKind {
        // Numbers of either float type: a function differentiates the structs of its own
        // (`lower::fields` checks that).
        let array = || array_dims(ty, Float::F64).or_else(|| array_dims(ty, Float::F32));
        let vector = || slice_element(ty, Float::F64).or_else(|| slice_element(ty, Float::F32));
        if scalar_float(ty).is_some() {
            FieldKind::Real(Vec::new())
        } else if let Some(dims) = array() {
            FieldKind::Real(dims)
        } else if let Some(dims) = vector() {
            FieldKind::Vector(dims)
        } else if is_integer(ty) {
            FieldKind::Int
        } else if is_bool(ty) {
            FieldKind::Bool
        } else if let Some(path) = struct_path(ty) {
            FieldKind::Struct(path)
        } else if let Some((element, len)) = collection(ty) {
            FieldKind::Collection(element, len)
        } else if matches!(ty, Type::Tuple(tuple) if !tuple.elems.is_empty()
            && tuple.elems.iter().all(|e| matches!(FieldKind::of(e), FieldKind::Real(_))))
        {
            FieldKind::Tuple(ty.clone())
        } else {
            FieldKind::Other
        }
    }

    /// Whether the field holds numbers that are differentiated (unless skipped).
    pub fn differentiable(&self) -> bool {
        matches!(
            self,
            FieldKind::Real(_)
                | FieldKind::Vector(_)
                | FieldKind::Struct(_)
                | FieldKind::Collection(..)
                | FieldKind::Tuple(_)
        )
    }
}

/// Types written as one name that are certainly not structs deriving `Differentiable`
/// (besides the primitive types).
const NOT_STRUCTS: &[&str] = &["String", "Self"];

/// Generic types of the standard library, which no derive describes.
const STANDARD_GENERICS: &[&str] = &["Vec", "Option", "Box", "Rc", "Arc", "Result", "Cell"];

/// Whether a path segment's generic arguments are those of a const-generic struct:
/// none, or constants (`Linear<3>`, `Linear<{ N + 1 }>`, `Linear<N>` with `N` named as
/// constants are, in capitals).
fn const_arguments(segment: &syn::PathSegment) -> bool {
    let syn::PathArguments::AngleBracketed(args) = &segment.arguments else {
        return segment.arguments.is_none();
    };
    !STANDARD_GENERICS.iter().any(|name| segment.ident == name)
        && args.args.iter().all(|arg| match arg {
            syn::GenericArgument::Const(_) => true,
            // A constant substituted for a struct's own parameter (`Linear<N>` inside
            // `Two<N>`, see `instantiate`): in an invisible group.
            syn::GenericArgument::Type(Type::Group(group))
                if matches!(&*group.elem, Type::Path(_)) =>
            {
                true
            }
            syn::GenericArgument::Type(Type::Path(path)) => {
                path.qself.is_none()
                    && path.path.get_ident().is_some_and(|ident| {
                        let name = ident.to_string();
                        name.chars()
                            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                    })
            }
            _ => false,
        })
}

/// `Name` or `path::Name`, without generic arguments or with constant ones
/// (`Linear<N>`): a type that may derive `Differentiable`.
pub fn struct_path(ty: &Type) -> Option<Type> {
    match ty {
        Type::Path(path)
            if path.qself.is_none()
                && path.path.segments.iter().all(const_arguments)
                && scalar_float(ty).is_none()
                && !is_integer(ty)
                && !is_bool(ty)
                && !is_other_primitive(ty)
                && !NOT_STRUCTS.iter().any(|name| path.path.is_ident(name)) =>
        {
            Some(ty.clone())
        }
        Type::Paren(paren) => struct_path(&paren.elem),
        Type::Group(group) => struct_path(&group.elem),
        _ => None,
    }
}

/// A collection of structs: `Vec<Layer>`, `[Layer]` (the element, `None`) or `[Layer; K]`
/// (the element, `Some(K)`), where `Layer` may derive `Differentiable`.
pub fn collection(ty: &Type) -> Option<(Type, Option<TokenStream>)> {
    match ty {
        Type::Array(array) => Some((struct_path(&array.elem)?, Some(array.len.to_token_stream()))),
        Type::Paren(paren) => collection(&paren.elem),
        Type::Group(group) => collection(&group.elem),
        ty => Some((struct_path(crate::types::sequence_element(ty)?)?, None)),
    }
}

/// The struct type a parameter or field reads the layout of: itself, or a collection's
/// element.
pub fn struct_in(ty: &Type) -> Option<Type> {
    struct_path(ty).or_else(|| collection(ty).map(|(element, _)| element))
}

/// The path of a struct type without its generic arguments (`Linear<N>` → `Linear`): the
/// name of its layout macro.
pub fn macro_path(ty: &Type) -> TokenStream {
    match ty {
        Type::Path(path) => {
            let mut path = path.path.clone();
            if let Some(last) = path.segments.last_mut() {
                last.arguments = syn::PathArguments::None;
            }
            path.to_token_stream()
        }
        ty => ty.to_token_stream(),
    }
}

/// The layout of a const-generic struct for the arguments of `ty` (`Linear<3>` of
/// `struct Linear<const N: usize> { w: [f64; N] }`: `w: [f64; 3]`), without generics.
/// A struct without generics is returned as it is.
pub fn instantiate(input: &DeriveInput, ty: &Type) -> DeriveInput {
    let mut input = input.clone();
    if input.generics.params.is_empty() {
        return input;
    }
    let args: Vec<TokenStream> = match ty {
        Type::Path(path) => match path.path.segments.last().map(|s| &s.arguments) {
            Some(syn::PathArguments::AngleBracketed(args)) => {
                args.args.iter().map(ToTokens::to_token_stream).collect()
            }
            _ => Vec::new(),
        },
        _ => Vec::new(),
    };
    let names: Vec<Ident> = input
        .generics
        .const_params()
        .map(|param| param.ident.clone())
        .collect();
    if let Data::Struct(data) = &mut input.data {
        for field in data.fields.iter_mut() {
            let tokens = substitute(field.ty.to_token_stream(), &names, &args);
            if let Ok(ty) = syn::parse2(tokens) {
                field.ty = ty;
            }
        }
    }
    input.generics = syn::Generics::default();
    input
}

/// `tokens` with each of `names` replaced by the argument at its position.
fn substitute(tokens: TokenStream, names: &[Ident], args: &[TokenStream]) -> TokenStream {
    use proc_macro2::{Group, TokenTree};
    tokens
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Ident(ident) => match names.iter().position(|name| *name == ident) {
                Some(k) if k < args.len() => {
                    let arg = &args[k];
                    TokenTree::Group(Group::new(
                        proc_macro2::Delimiter::None,
                        quote::quote!(#arg),
                    ))
                }
                _ => TokenTree::Ident(ident),
            },
            TokenTree::Group(group) => {
                let mut inner =
                    Group::new(group.delimiter(), substitute(group.stream(), names, args));
                inner.set_span(group.span());
                TokenTree::Group(inner)
            }
            tree => tree,
        })
        .collect()
}

/// The key under which a layout is known: the type's tokens as written.
pub fn key(ty: &Type) -> String {
    ty.to_token_stream().to_string()
}

/// Reads a struct's layout, with an error under anything that is not supported.
pub fn parse(input: &DeriveInput) -> syn::Result<Layout> {
    let (layout, errors) = parse_lenient(input);
    errors.finish(())?;
    layout.ok_or_else(|| syn::Error::new_spanned(&input.ident, "no layout"))
}

/// Reads a struct's layout as far as it can, with the errors under what is not
/// supported: a field of a type it rejects is in the layout as skipped (a constant), so
/// that the derive can still describe the struct to `#[grad]` and its users see only the
/// derive's error. `None` for an input that is not a struct with named fields or is
/// generic.
pub fn parse_lenient(input: &DeriveInput) -> (Option<Layout>, crate::errors::Errors) {
    let mut errors = crate::errors::Errors::default();
    let generic = input
        .generics
        .params
        .iter()
        .any(|param| !matches!(param, syn::GenericParam::Const(_)));
    if generic || input.generics.where_clause.is_some() {
        errors.at(
            &input.generics,
            "#[derive(Differentiable)] supports const generic structs \
             (`struct Linear<const N: usize>`), not type parameters or lifetimes; write the \
             struct for `f64`",
        );
    }
    let fields = match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => named.named.iter().collect(),
            fields => {
                errors.at(
                    fields,
                    "#[derive(Differentiable)] needs named fields (`struct Mlp { w: [f64; 2] }`)",
                );
                Vec::new()
            }
        },
        _ => {
            errors.at(
                &input.ident,
                "#[derive(Differentiable)] applies to structs with named fields",
            );
            Vec::new()
        }
    };
    let mut layout = Layout {
        ident: input.ident.clone(),
        generics: input.generics.clone(),
        fields: Vec::new(),
    };
    for field in fields {
        let mut skip = false;
        for attr in &field.attrs {
            if !attr.path().is_ident("differentiable") {
                continue;
            }
            let parsed = attr.parse_nested_meta(|meta| {
                if meta.path.is_ident("skip") {
                    skip = true;
                    Ok(())
                } else {
                    Err(meta.error("unknown option; supported: `#[differentiable(skip)]`"))
                }
            });
            if let Err(error) = parsed {
                errors.push(error);
            }
        }
        let kind = FieldKind::of(&field.ty);
        if matches!(kind, FieldKind::Other) && !skip {
            skip = true;
            errors.at(
                &field.ty,
                "a field of a `Differentiable` struct must be `f64`, `[f64; N]` (also \
                 nested), `Vec<f64>`, `Vec<[f64; N]>` (or the same of `f32`), another \
                 `Differentiable` struct or a `Vec` or array of them, a tuple of numbers and \
                 arrays, an integer or `bool`; mark a field that holds anything else \
                 `#[differentiable(skip)]`",
            );
        }
        if let Some(ident) = field.ident.as_ref().filter(|ident| *ident == "_") {
            // `_: T` parses (as an unstable unnamed field), but `self._` does not.
            errors.at(
                ident,
                "#[derive(Differentiable)] needs every field named; `_` is not a field name",
            );
        } else if let Some(ident) = &field.ident {
            layout.fields.push(Field {
                ident: ident.clone(),
                ty: field.ty.clone(),
                kind,
                skip,
            });
        }
    }
    let whole = !generic
        && input.generics.where_clause.is_none()
        && matches!(&input.data, Data::Struct(data) if matches!(data.fields, Fields::Named(_)));
    (whole.then_some(layout), errors)
}
