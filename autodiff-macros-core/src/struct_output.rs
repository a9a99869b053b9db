//! Struct outputs: a `#[grad]` function that returns a struct deriving `Differentiable`.
//!
//! A source-to-source step in front of the pipeline. The function's numbers, in the
//! order of the struct's flat view, are a vector output, which every mode already
//! differentiates; the struct is put back around them at the edges:
//!
//! ```text
//! fn f(p…) -> S { …; S { a: e₁, b: e₂, k: c } }
//!   → fn __f_numbers(p…) -> [f64; K] { …; the numbers of e₁ and e₂ }   (hidden; or Vec<f64>)
//!       with its `_vjp`, `_jvp`, `_jacobian`, generated as for any vector output (hidden)
//!   → f_vjp(p…, seed: &S, d_p…) -> S        seed's numbers in, the twin's pullback
//!     f_jvp(p…, t_p…) -> (S, S)              the twin's tangent, put in a zero of S
//!     f_jacobian(p…) -> (S, J_p…)            the twin's blocks: one row per number of S
//! ```
//! The value each returns is `f`'s own, which alone computes the constant fields
//! (`#[differentiable(skip)]`, integers, `bool`s): one more primal pass per call.
//! The tail may be a struct literal (`S { … }`, `Self { … }`) or a local or parameter of
//! the struct's type (its fields read one by one).

use crate::args::GradArgs;
use crate::layout::{FieldKind, Layout};
use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::{Expr, Ident, ItemFn, Type};

/// `f` → `__f_numbers`, the hidden function of `f`'s numbers.
pub fn twin_ident(ident: &Ident) -> Ident {
    let name = ident.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name);
    Ident::new(&format!("__{name}_numbers"), ident.span())
}

/// A generated name, at the call site (the lowering reads it like a user's).
fn local(name: &str) -> Ident {
    Ident::new(name, Span::call_site())
}

/// One field of the output that holds numbers, at any depth (`inner.a` of a struct field).
struct NumberField {
    /// The field names from the output down to it (a tuple field's element by position).
    path: Vec<syn::Member>,
    /// Its array dimensions (a `Vec`'s element's, for a vector).
    dims: Vec<TokenStream>,
    /// A `Vec` of run-time length.
    vector: bool,
    /// Its float type, as the struct writes it.
    float: Option<crate::types::Float>,
}

/// The float type a field's type is written with, if any.
fn float_of(ty: &Type) -> Option<crate::types::Float> {
    let mut floats = Vec::new();
    crate::types::floats_in(ty, &mut floats);
    floats.first().map(|(float, _)| *float)
}

impl NumberField {
    /// `inner.a`, for messages.
    fn name(&self) -> String {
        member_names(&self.path)
    }
}

/// The fields of `layout` in the flat view, a struct field's own fields in its place
/// (its layout from `layouts`), or an error under `ty` for what has no flat view here.
fn number_fields(
    layout: &Layout,
    ty: &Type,
    layouts: &crate::expand::Layouts,
    prefix: &[syn::Member],
) -> syn::Result<Vec<NumberField>> {
    let mut out = Vec::new();
    for field in &layout.fields {
        if field.skip {
            continue;
        }
        let mut path = prefix.to_vec();
        path.push(syn::Member::Named(field.ident.clone()));
        match &field.kind {
            FieldKind::Real(dims) | FieldKind::Vector(dims) => out.push(NumberField {
                path,
                dims: dims.clone(),
                vector: matches!(field.kind, FieldKind::Vector(_)),
                float: float_of(&field.ty),
            }),
            FieldKind::Struct(inner) => {
                let inner_layout = layouts
                    .get(inner)
                    .and_then(|input| crate::layout::parse(&input).ok());
                let Some(inner_layout) = inner_layout else {
                    return Err(unsupported(ty, &path));
                };
                out.extend(number_fields(&inner_layout, ty, layouts, &path)?);
            }
            FieldKind::Tuple(Type::Tuple(tuple)) => {
                // A tuple of numbers and arrays: its elements in order (`pos.0`, `pos.1`).
                for (position, element) in tuple.elems.iter().enumerate() {
                    let FieldKind::Real(dims) = FieldKind::of(element) else {
                        return Err(unsupported(ty, &path));
                    };
                    let mut path = path.clone();
                    path.push(syn::Member::Unnamed(syn::Index::from(position)));
                    out.push(NumberField {
                        path,
                        dims,
                        vector: false,
                        float: float_of(element),
                    });
                }
            }
            FieldKind::Collection(..) | FieldKind::Tuple(_) => {
                return Err(unsupported(ty, &path));
            }
            FieldKind::Int | FieldKind::Bool | FieldKind::Other => {}
        }
    }
    Ok(out)
}

/// The error for a field of the output whose numbers the twin cannot lay out.
fn unsupported(ty: &Type, path: &[syn::Member]) -> syn::Error {
    syn::Error::new_spanned(
        ty,
        format!(
            "#[grad] does not return structs with fields of collections yet (`{}`): return \
             their numbers as fields of their own",
            member_names(path)
        ),
    )
}

/// `inner.a`, `pos.0`: a path of members, for messages.
fn member_names(path: &[syn::Member]) -> String {
    let names: Vec<String> = path
        .iter()
        .map(|member| match member {
            syn::Member::Named(ident) => ident.to_string(),
            syn::Member::Unnamed(index) => index.index.to_string(),
        })
        .collect();
    names.join(".")
}

/// The number of numbers of the fixed-size fields: an integer literal when every
/// dimension is one, else a constant expression in braces.
fn fixed_count(fields: &[NumberField]) -> TokenStream {
    let mut literal = Some(0u64);
    let mut terms = Vec::new();
    for field in fields {
        let dims = &field.dims;
        terms.push(quote!((1 #(* (#dims))*)));
        let size = dims.iter().try_fold(1u64, |n, dim| {
            syn::parse2::<syn::LitInt>(dim.clone())
                .ok()?
                .base10_parse::<u64>()
                .ok()
                .and_then(|d| n.checked_mul(d))
        });
        literal = literal.zip(size).and_then(|(a, b)| a.checked_add(b));
    }
    match literal {
        Some(n) => proc_macro2::Literal::u64_unsuffixed(n).into_token_stream(),
        None => quote!({ 0 #(+ #terms)* }),
    }
}

/// The field expressions of the tail: a struct literal's (by field name, a struct field's
/// own literal or a read of it in turn) or reads of a local's fields; an error under
/// anything else.
fn field_values(tail: &Expr, fields: &[NumberField]) -> syn::Result<Vec<Expr>> {
    let tail = crate::lower::strip_parens(tail);
    if !matches!(tail, Expr::Struct(_))
        && !matches!(tail, Expr::Path(path) if path.path.get_ident().is_some())
    {
        return Err(syn::Error::new_spanned(
            tail,
            "a #[grad] function that returns a struct must end with it: a struct literal \
             (`Pair { a, b }`) or a local that holds one",
        ));
    }
    fields
        .iter()
        .map(|field| value_at(tail, &field.path, field))
        .collect()
}

/// The expression of the field at `path` below `value`: through struct literals, then as
/// a read of what is named (`out.inner.a`, `inner.a` for `inner: inner`).
fn value_at(value: &Expr, path: &[syn::Member], field: &NumberField) -> syn::Result<Expr> {
    let Some((first, rest)) = path.split_first() else {
        return Ok(value.clone());
    };
    match crate::lower::strip_parens(value) {
        Expr::Struct(literal) => {
            if let Some(rest) = &literal.rest {
                return Err(syn::Error::new_spanned(
                    rest,
                    "#[grad] returns a struct literal with every field written; `..` is not \
                     supported here",
                ));
            }
            let member = literal
                .fields
                .iter()
                .find(|value| value.member == *first)
                .ok_or_else(|| {
                    syn::Error::new_spanned(
                        literal,
                        format!("the field `{}` is missing", field.name()),
                    )
                })?;
            value_at(&member.expr, rest, field)
        }
        Expr::Tuple(tuple) => match first {
            syn::Member::Unnamed(index) => match tuple.elems.iter().nth(index.index as usize) {
                Some(element) => value_at(element, rest, field),
                None => Err(syn::Error::new_spanned(
                    tuple,
                    format!("the field `{}` is missing", field.name()),
                )),
            },
            syn::Member::Named(_) => Err(syn::Error::new_spanned(
                tuple,
                format!("the field `{}` is a struct's, not a tuple's", field.name()),
            )),
        },
        named @ (Expr::Path(_) | Expr::Field(_)) => Ok(syn::parse_quote!(#named.#(#path).*)),
        other => Err(syn::Error::new_spanned(
            other,
            format!(
                "#[grad] reads the struct field `{}` of the output from a struct literal or a \
                 local that holds one; bind this value to a local first",
                field.name()
            ),
        )),
    }
}

/// The twin of `function` that returns its numbers, `[f64; K]` or `Vec<f64>` (of `f32`s
/// for a function of `f32`).
pub fn twin(
    function: &ItemFn,
    layout: &Layout,
    ty: &Type,
    layouts: &crate::expand::Layouts,
) -> syn::Result<(ItemFn, bool)> {
    let fields = number_fields(layout, ty, layouts, &[])?;
    let fixed = fields.iter().all(|field| !field.vector);
    let Some((syn::Stmt::Expr(tail, None), init)) = function.block.stmts.split_last() else {
        return Err(syn::Error::new_spanned(
            &function.block,
            "a #[grad] function that returns a struct must end with it: a struct literal \
             (`Pair { a, b }`) or a local that holds one",
        ));
    };
    let values = field_values(tail, &fields)?;
    let numbers = local("__autodiff_numbers");
    let mut fill = Vec::<syn::Stmt>::new();
    let count = fixed_count(&fields);
    fill.push(if fixed {
        syn::parse_quote!(let mut #numbers = [0.0; #count];)
    } else {
        syn::parse_quote!(let mut #numbers = Vec::new();)
    });
    let mut offset = quote!(0);
    for (k, (field, value)) in fields.iter().zip(&values).enumerate() {
        // A field named as it is (a local, a parameter, a field of one) is read in place;
        // anything else is bound to a local first.
        let in_place = matches!(
            crate::lower::strip_parens(value),
            Expr::Path(_) | Expr::Field(_)
        );
        let name = if in_place {
            crate::lower::strip_parens(value).to_token_stream()
        } else {
            local(&format!("__autodiff_field{k}")).to_token_stream()
        };
        let counters: Vec<Ident> = (0..field.dims.len() + usize::from(field.vector))
            .map(|d| local(&format!("__autodiff_i{k}_{d}")))
            .collect();
        let mut bounds: Vec<TokenStream> = Vec::new();
        if field.vector {
            bounds.push(quote!(#name.len()));
        }
        bounds.extend(field.dims.iter().cloned());
        let element = quote!(#name #([#counters])*);
        let step = if fixed {
            // Row-major position of the element within the field, after `offset`.
            let position = counters.iter().zip(&bounds).fold(
                quote!(0),
                |at, (counter, bound)| quote!((#at) * (#bound) + #counter),
            );
            quote!(#numbers[#offset + #position] = #element;)
        } else {
            quote!(#numbers.push(#element);)
        };
        let body = counters.iter().zip(&bounds).rev().fold(
            step,
            |inner, (counter, bound)| quote!(for #counter in 0..#bound { #inner }),
        );
        if counters.is_empty() {
            let statement = if fixed {
                quote!(#numbers[#offset] = #value;)
            } else {
                quote!(#numbers.push(#value);)
            };
            fill.push(syn::parse2(statement)?);
        } else {
            let binding = (!in_place).then(|| quote!(let #name = #value;));
            fill.push(syn::parse_quote!({ #binding #body }));
        }
        let dims = &field.dims;
        offset = quote!(#offset + (1 #(* (#dims))*));
    }
    // The function's float type (a mixed signature is reported by the lowering).
    let real = crate::lower::signature_float(&function.sig, &mut crate::errors::Errors::default());
    if let Some(other) = fields
        .iter()
        .filter_map(|field| field.float)
        .find(|float| *float != real)
    {
        let (own, other) = (real.name(), other.name());
        return Err(syn::Error::new_spanned(
            ty,
            format!(
                "this type's numbers are `{other}`s, and a function of `{own}` returns \
                 numbers of `{own}`: make its fields `{own}` (or the function `{other}`)"
            ),
        ));
    }
    let output: Type = if fixed {
        syn::parse_quote!([#real; #count])
    } else {
        syn::parse_quote!(Vec<#real>)
    };
    let mut twin = function.clone();
    twin.sig.ident = twin_ident(&function.sig.ident);
    twin.sig.output = syn::parse_quote!(-> #output);
    twin.attrs.retain(|a| !a.path().is_ident("doc"));
    let mut stmts: Vec<syn::Stmt> = init.to_vec();
    stmts.extend(fill);
    stmts.push(syn::Stmt::Expr(syn::parse_quote!(#numbers), None));
    twin.block.stmts = stmts;
    Ok((twin, fixed))
}

/// What a wrapper needs of the function: its call arguments, and copies of the structs
/// it takes by value for a first call.
struct Calls<'a> {
    function: &'a ItemFn,
}

impl Calls<'_> {
    /// The names of the function's parameters in the signature of `item`, which begins
    /// with them (`self` first for a method, with the signature's own token).
    fn names(&self, item: &ItemFn) -> Vec<TokenStream> {
        item.sig
            .inputs
            .iter()
            .take(self.function.sig.inputs.len())
            .map(|input| match input {
                syn::FnArg::Receiver(receiver) => receiver.self_token.to_token_stream(),
                syn::FnArg::Typed(typed) => match &*typed.pat {
                    syn::Pat::Ident(pat) => pat.ident.to_token_stream(),
                    pat => pat.to_token_stream(),
                },
            })
            .collect()
    }

    /// The arguments of a call that leaves every argument for a later one: a struct
    /// passed by value is copied (its numbers and constants, without `Clone`).
    fn copies(names: &[TokenStream], structs: &[bool]) -> Vec<TokenStream> {
        names
            .iter()
            .cloned()
            .zip(structs)
            .map(|(name, &by_value_struct)| {
                if by_value_struct {
                    quote!(::autodiff::__private::numbers::copy(&#name))
                } else {
                    name
                }
            })
            .collect()
    }
}

/// Which parameters are structs passed by value (copied for a first call).
fn by_value_structs(function: &crate::ir::Function) -> Vec<bool> {
    function
        .params
        .iter()
        .map(|p| p.strukt.is_some() && !matches!(p.ty, Type::Reference(_)))
        .collect()
}

/// `signature`'s function renamed to `name`, with `doc` for its documentation; `None`
/// if it does not parse.
fn renamed(signature: &TokenStream, name: Ident, doc: &str) -> Option<ItemFn> {
    let mut item = syn::parse2::<ItemFn>(quote!(#signature {})).ok()?;
    item.sig.ident = name;
    item.attrs.retain(|a| !a.path().is_ident("doc"));
    item.attrs.insert(0, syn::parse_quote!(#[doc = #doc]));
    Some(item)
}

/// The public functions of a struct-output function, around those of its twin
/// (`lowered`, already expanded): `_vjp` always, `_jvp` and `_jacobian` as asked.
pub fn wrappers(
    original: &ItemFn,
    ty: &Type,
    lowered: &crate::ir::Function,
    args: &GradArgs,
    fixed: bool,
) -> syn::Result<TokenStream> {
    let calls = Calls { function: original };
    let structs = by_value_structs(lowered);
    let count = original.sig.inputs.len();
    let ident = &original.sig.ident;
    let name = ident.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name).to_string();
    let twin = twin_ident(ident);
    let primal = crate::codegen::jacobian::sibling(lowered, ident);
    let value = local("__autodiff_value");
    let mut out = TokenStream::new();

    // The pullback: the seed's numbers in the order of the flat view.
    let Some(signature) = crate::codegen::vjp_signature(lowered) else {
        return Ok(out);
    };
    let doc = format!(
        " Pullback of [`{name}`], generated by `#[grad]`: returns its value and adds \
         `seedᵀ·J` into the buffer of each parameter that holds numbers, where `seed` is a \
         value of the output's type whose numbers weigh the output's (its constant fields \
         are not read)."
    );
    let Some(mut item) = renamed(
        &signature,
        Ident::new(&format!("{name}_vjp"), ident.span()),
        &doc,
    ) else {
        return Ok(out);
    };
    item.sig.output = syn::parse_quote!(-> #ty);
    let names = calls.names(&item);
    let copies = Calls::copies(&names, &structs);
    let seed_index = count;
    let mut seed_name = None;
    let mut rest = Vec::new();
    for (k, input) in item.sig.inputs.iter_mut().enumerate() {
        if let syn::FnArg::Typed(typed) = input {
            let name = match &*typed.pat {
                syn::Pat::Ident(pat) => pat.ident.to_token_stream(),
                pat => pat.to_token_stream(),
            };
            if k == seed_index {
                *typed.ty = syn::parse_quote!(&#ty);
                seed_name = Some(name);
            } else if k > seed_index {
                rest.push(name);
            }
        }
    }
    let seed = seed_name.unwrap_or_else(|| quote!(seed));
    let numbers = local("__autodiff_seed");
    let (make, pass) = if fixed {
        let count = fixed_count_of(lowered);
        (quote!(let mut #numbers = [0.0; #count];), quote!(#numbers))
    } else {
        (
            quote! {
                let mut #numbers = ::autodiff::__private::vec![
                    0.0;
                    ::autodiff::__private::numbers::count(#seed)
                ];
            },
            quote!(&#numbers),
        )
    };
    let twin_vjp = crate::codegen::jacobian::sibling(lowered, &crate::codegen::vjp_ident(&twin));
    *item.block = syn::parse_quote!({
        #make
        ::autodiff::__private::numbers::write(#seed, &mut #numbers[..]);
        let _ = #twin_vjp(#(#copies,)* #pass, #(#rest),*);
        #primal(#(#names),*)
    });
    out.extend(item.into_token_stream());

    if args.jvp || args.jacobian {
        let signature = crate::codegen::jvp::jvp_signature(lowered);
        let doc = format!(
            " Forward mode of [`{name}`], generated by `#[grad(jvp)]`: returns its value \
             and the tangent along `t_p…`, a value of the output's type (its constant \
             fields those of the value)."
        );
        if let Some(mut item) = renamed(
            &signature,
            Ident::new(&format!("{name}_jvp"), ident.span()),
            &doc,
        ) {
            item.sig.output = syn::parse_quote!(-> (#ty, #ty));
            let names = calls.names(&item);
            let copies = Calls::copies(&names, &structs);
            let tangents: Vec<TokenStream> = item
                .sig
                .inputs
                .iter()
                .skip(count)
                .filter_map(|input| match input {
                    syn::FnArg::Typed(typed) => Some(typed.pat.to_token_stream()),
                    syn::FnArg::Receiver(_) => None,
                })
                .map(|pat| {
                    let pat: TokenStream = pat
                        .into_iter()
                        .filter(|t| !matches!(t, proc_macro2::TokenTree::Ident(i) if i == "mut"))
                        .collect();
                    pat
                })
                .collect();
            let twin_jvp =
                crate::codegen::jacobian::sibling(lowered, &crate::codegen::jvp::jvp_ident(&twin));
            let tangent = local("__autodiff_tangent");
            *item.block = syn::parse_quote!({
                let (_, #tangent) = #twin_jvp(#(#copies,)* #(#tangents),*);
                let #value = #primal(#(#names),*);
                let mut __autodiff_out =
                    ::autodiff::__private::Differentiable::zero_like(&#value);
                ::autodiff::__private::numbers::read(&mut __autodiff_out, &#tangent[..]);
                (#value, __autodiff_out)
            });
            out.extend(item.into_token_stream());
        }
    }

    if args.jacobian {
        let signature = crate::codegen::jacobian::jacobian_signature(lowered);
        let doc = format!(
            " Jacobian of [`{name}`], generated by `#[grad(jacobian)]`: its value, then one \
             block per differentiated parameter, (the output's numbers, in the order of its \
             flat view) × (the parameter's numbers), row-major."
        );
        if let Some(mut item) = renamed(
            &signature,
            Ident::new(&format!("{name}_jacobian"), ident.span()),
            &doc,
        ) {
            let blocks = lowered.wrt.len();
            let names = calls.names(&item);
            let copies = Calls::copies(&names, &structs);
            if let syn::ReturnType::Type(_, ret) = &mut item.sig.output {
                if let Type::Tuple(tuple) = &mut **ret {
                    if let Some(first) = tuple.elems.first_mut() {
                        *first = ty.clone();
                    }
                }
            }
            let twin_jacobian = crate::codegen::jacobian::sibling(
                lowered,
                &crate::codegen::jacobian::jacobian_ident(&twin),
            );
            let result = local("__autodiff_result");
            let parts = (1..=blocks).map(syn::Index::from);
            *item.block = syn::parse_quote!({
                let #result = #twin_jacobian(#(#copies),*);
                (#primal(#(#names),*), #(#result.#parts),*)
            });
            out.extend(item.into_token_stream());
        }
    }
    Ok(out)
}

/// The twin's output length, from its return type `[f64; K]`.
fn fixed_count_of(lowered: &crate::ir::Function) -> TokenStream {
    match &lowered.original.sig.output {
        syn::ReturnType::Type(_, ty) => match &**ty {
            Type::Array(array) => array.len.to_token_stream(),
            _ => quote!(0),
        },
        syn::ReturnType::Default => quote!(0),
    }
}
