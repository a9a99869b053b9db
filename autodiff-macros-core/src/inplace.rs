//! `&mut` parameters written in place: ODE steppers, output parameters, scratch buffers.
//!
//! A source-to-source step in front of the pipeline, after `shared_refs` has taken the
//! `&mut` parameters that are only read as `&`. A parameter written through, `p: &mut T`
//! with `T` a number, an array of them or a slice, is differentiated with respect to its
//! value on entry, and the function's outputs are what it returns, or, when it returns
//! nothing, the value `p` is left with:
//!
//! ```text
//! fn step(y: &mut [f64; 2], dt: f64) { y[0] += dt * y[1]; … }
//!   → fn __step_inplace(__autodiff_y: [f64; 2], dt: f64) -> [f64; 2] {   (hidden)
//!         let mut y = __autodiff_y; y[0] += dt * y[1]; …; y
//!     }
//!     with every mode asked for, through the pipeline (hidden)
//!   → step_vjp(y: &mut [f64; 2], dt, seed, d_y, d_dt), step_jvp, step_jacobian, …:
//!         the twin's result, at the values on entry; then `step(y, dt)` itself,
//!         which leaves `y` as the original does
//! ```
//! The values of the twin and of the original are the same bits (the same operations in
//! the same order); the original's pass is the cost of the side effect.

use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
use syn::visit_mut::VisitMut;
use syn::{Expr, FnArg, Ident, ItemFn, Pat, Type};

use crate::types::{array_dims, scalar_float, slice_element, Float};

/// A parameter written through `&mut`.
struct Written {
    /// Its position among the inputs.
    index: usize,
    ident: Ident,
    /// `T` of `&mut T`.
    ty: Type,
    shape: Shape,
    /// `&mut`: written through. Otherwise a `&f64` (or `&f32`), taken by value.
    mutable: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Shape {
    Number,
    Array,
    /// A slice or `Vec` of numbers: the twin takes `&[T]`.
    Slice(Float),
}

/// The name of the hidden twin of a function that returns nothing: `step` →
/// `__step_inplace`, the value its written parameter is left with. A caller's
/// `step(&mut y, dt);` is followed as `y = __step_inplace(y, dt);` (`lower::stmt`).
pub fn twin_ident(ident: &Ident) -> Ident {
    let name = ident.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name);
    Ident::new(&format!("__{name}_inplace"), ident.span())
}

/// The name of the hidden twin of a function that writes through `&mut` and returns a
/// value: `f` → `__f_inplace_value`. [`twin_ident`]'s name is then that of the twin of
/// what it leaves in the parameter it writes ([`left_twin`]).
fn value_twin_ident(ident: &Ident) -> Ident {
    let name = ident.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name);
    Ident::new(&format!("__{name}_inplace_value"), ident.span())
}

/// Whether a function returns nothing (`()`).
fn returns_nothing(function: &ItemFn) -> bool {
    match &function.sig.output {
        syn::ReturnType::Default => true,
        syn::ReturnType::Type(_, ty) => matches!(&**ty, Type::Tuple(t) if t.elems.is_empty()),
    }
}

/// The name of `function`'s twin.
fn twin_of(function: &ItemFn) -> Ident {
    if returns_nothing(function) {
        twin_ident(&function.sig.ident)
    } else {
        value_twin_ident(&function.sig.ident)
    }
}

/// For a function that writes through one `&mut` parameter and returns a value as well:
/// the twin of what it leaves in that parameter, `__f_inplace` (the twin of the same
/// function returning nothing), which a caller's statement `f(&mut y, x);` reaches.
/// `None` for any other function, and for one with a `return` (whose value the twin
/// could not return).
pub fn left_twin(function: &ItemFn) -> Option<ItemFn> {
    if returns_nothing(function) {
        return None;
    }
    let written = written(function)?;
    if written.iter().filter(|w| w.mutable).count() != 1 || has_return(&function.block) {
        return None;
    }
    let mut left = function.clone();
    left.sig.output = syn::ReturnType::Default;
    let mut left = twin(&left).ok().flatten()?;
    // The value, now a statement of its own, is dropped.
    left.attrs.push(syn::parse_quote!(
        #[allow(unused_must_use, clippy::no_effect, clippy::unnecessary_operation)]
    ));
    Some(left)
}

/// Whether a block has a `return` outside closures.
fn has_return(block: &syn::Block) -> bool {
    struct Returns(bool);
    impl syn::visit::Visit<'_> for Returns {
        fn visit_expr_return(&mut self, _: &syn::ExprReturn) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &syn::ExprClosure) {}
    }
    let mut returns = Returns(false);
    syn::visit::Visit::visit_block(&mut returns, block);
    returns.0
}

/// The name the twin takes a written parameter by.
fn entry_ident(ident: &Ident) -> Ident {
    Ident::new(&format!("__autodiff_{ident}"), ident.span())
}

/// The `&mut` parameters of `function` (after `shared_refs`: those written through) that
/// this step handles; `None` when there is none.
fn written(function: &ItemFn) -> Option<Vec<Written>> {
    let mut out = Vec::new();
    for (index, input) in function.sig.inputs.iter().enumerate() {
        let FnArg::Typed(typed) = input else { continue };
        let (Pat::Ident(pat), Type::Reference(reference)) = (&*typed.pat, &*typed.ty) else {
            continue;
        };
        let ty = (*reference.elem).clone();
        let mutable = reference.mutability.is_some();
        if !mutable {
            // `x: &f64`: read through a reference, taken by value by the twin.
            if scalar_float(&ty).is_some() {
                out.push(Written {
                    index,
                    ident: pat.ident.clone(),
                    ty,
                    shape: Shape::Number,
                    mutable,
                });
            }
            continue;
        }
        let shape = if scalar_float(&ty).is_some() {
            Shape::Number
        } else if array_dims(&ty, Float::F64).is_some() || array_dims(&ty, Float::F32).is_some() {
            Shape::Array
        } else if let Some(float) = [Float::F64, Float::F32]
            .into_iter()
            .find(|&float| slice_element(&ty, float).is_some_and(|dims| dims.is_empty()))
        {
            Shape::Slice(float)
        } else {
            // A struct or a slice of arrays written through: the lowering's error.
            return None;
        };
        out.push(Written {
            index,
            ident: pat.ident.clone(),
            ty,
            shape,
            mutable,
        });
    }
    (!out.is_empty()).then_some(out)
}

/// Replaces `*p` by `p` for the written parameters, now locals.
struct Derefs<'a>(&'a [Written]);

impl VisitMut for Derefs<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if let Expr::Unary(unary) = expr {
            if matches!(unary.op, syn::UnOp::Deref(_)) {
                if let Expr::Path(path) = &*unary.expr {
                    if self.0.iter().any(|w| path.path.is_ident(&w.ident)) {
                        *expr = Expr::Path(path.clone());
                        return;
                    }
                }
            }
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }
}

/// The twin of a function that writes through `&mut` parameters: they are taken by
/// value (a slice by `&`) and copied into locals of their names; a function that returns
/// nothing returns the one it writes. `None` when the function has no such parameter, an
/// error when it returns nothing and writes several.
pub fn twin(function: &ItemFn) -> syn::Result<Option<ItemFn>> {
    let Some(written) = written(function) else {
        return Ok(None);
    };
    let returns_nothing = returns_nothing(function);
    let writes = written.iter().filter(|w| w.mutable).count();
    if returns_nothing && writes > 1 {
        return Err(syn::Error::new_spanned(
            &function.sig.inputs,
            "#[grad] differentiates a function that returns nothing through the one `&mut` \
             parameter it writes, its output; this one writes several: return them, or \
             split the function",
        ));
    }
    let mut twin = function.clone();
    twin.sig.ident = twin_of(function);
    twin.attrs.retain(|a| !a.path().is_ident("doc"));
    let mut prelude: Vec<syn::Stmt> = Vec::new();
    for w in &written {
        let entry = entry_ident(&w.ident);
        let ident = &w.ident;
        let ty = &w.ty;
        let FnArg::Typed(typed) = &mut twin.sig.inputs[w.index] else {
            continue;
        };
        *typed.pat = syn::parse_quote!(#entry);
        match w.shape {
            Shape::Number | Shape::Array => {
                *typed.ty = ty.clone();
                prelude.push(if w.mutable {
                    syn::parse_quote!(let mut #ident = #entry;)
                } else {
                    syn::parse_quote!(let #ident = #entry;)
                });
            }
            Shape::Slice(float) => {
                let real = Ident::new(
                    if float == Float::F64 { "f64" } else { "f32" },
                    Span::call_site(),
                );
                *typed.ty = syn::parse_quote!(&[#real]);
                let i = Ident::new("__autodiff_i", Span::call_site());
                prelude.push(syn::parse_quote!(let mut #ident = vec![0.0; #entry.len()];));
                prelude.push(syn::parse_quote! {
                    for #i in 0..#entry.len() {
                        #ident[#i] = #entry[#i];
                    }
                });
            }
        }
    }
    let mut block = (*function.block).clone();
    Derefs(&written).visit_block_mut(&mut block);
    let mut stmts = prelude;
    stmts.extend(block.stmts);
    if let (true, Some(w)) = (returns_nothing, written.iter().find(|w| w.mutable)) {
        let ident = &w.ident;
        // A trailing expression of type `()` (a loop) is a statement.
        if let Some(syn::Stmt::Expr(_, semi @ None)) = stmts.last_mut() {
            *semi = Some(Default::default());
        }
        stmts.push(syn::Stmt::Expr(syn::parse_quote!(#ident), None));
        let output: Type = match w.shape {
            Shape::Slice(Float::F32) => syn::parse_quote!(Vec<f32>),
            Shape::Slice(_) => syn::parse_quote!(Vec<f64>),
            _ => w.ty.clone(),
        };
        twin.sig.output = syn::parse_quote!(-> #output);
    }
    twin.block.stmts = stmts;
    Ok(Some(twin))
}

/// The public functions around the twin's generated ones (`generated`, the twin's
/// expansion): each takes the original's parameters (`&mut` where the original has it),
/// calls the twin's at the values on entry, then the original for its writes, and
/// returns the twin's result.
pub fn wrappers(original: &ItemFn, generated: &TokenStream, in_impl: bool) -> TokenStream {
    let Some(written) = written(original) else {
        return TokenStream::new();
    };
    let Ok(file) = syn::parse2::<syn::File>(generated.clone()) else {
        return TokenStream::new();
    };
    let name = original.sig.ident.to_string();
    let name = name.strip_prefix("r#").unwrap_or(&name).to_string();
    let twin = twin_of(original).to_string();
    let path = |ident: &Ident| {
        let ident = Ident::new(
            &ident.to_string(),
            Span::mixed_site().located_at(ident.span()),
        );
        if in_impl {
            quote!(Self::#ident)
        } else {
            quote!(#ident)
        }
    };
    let mut out = TokenStream::new();
    for item in file.items {
        let syn::Item::Fn(item) = item else { continue };
        let generated_name = item.sig.ident.to_string();
        let Some(suffix) = generated_name.strip_prefix(&twin) else {
            continue;
        };
        const PUBLIC: &[&str] = &[
            "_grad",
            "_grad_into",
            "_vjp",
            "_jvp",
            "_jacobian",
            "_hvp",
            "_hessian",
        ];
        if !PUBLIC.contains(&suffix) || is_stand_in(&item) {
            continue;
        }
        let mut wrapper = item.clone();
        wrapper.sig.ident = Ident::new(&format!("{name}{suffix}"), original.sig.ident.span());
        let mut twin_args = Vec::new();
        for (k, input) in wrapper.sig.inputs.iter_mut().enumerate() {
            match input {
                FnArg::Receiver(receiver) => twin_args.push(receiver.self_token.to_token_stream()),
                FnArg::Typed(typed) => {
                    let arg = match &*typed.pat {
                        Pat::Ident(pat) => pat.ident.clone(),
                        _ => continue,
                    };
                    if let Some(w) = written.iter().find(|w| w.index == k) {
                        let ident = &w.ident;
                        let ty = &w.ty;
                        *typed.pat = syn::parse_quote!(#ident);
                        *typed.ty = if w.mutable {
                            syn::parse_quote!(&mut #ty)
                        } else {
                            syn::parse_quote!(&#ty)
                        };
                        twin_args.push(match w.shape {
                            Shape::Slice(_) => quote!(&*#ident),
                            _ => quote!(*#ident),
                        });
                    } else {
                        // `d___autodiff_y`, `t___autodiff_y`: the buffer, tangent or
                        // direction of a written parameter, named after it.
                        let name = arg.to_string();
                        let arg = if name.contains("__autodiff_") {
                            let renamed = Ident::new(&name.replace("__autodiff_", ""), arg.span());
                            *typed.pat = syn::parse_quote!(#renamed);
                            renamed
                        } else {
                            arg
                        };
                        // The tangent or direction of a number taken by reference is
                        // taken by reference too, as the parameter is (`t_x: &f64`).
                        let by_reference = written.iter().any(|w| {
                            let entry = entry_ident(&w.ident).to_string();
                            !w.mutable
                                && [format!("t_{entry}"), format!("v_{entry}")].contains(&name)
                        });
                        if by_reference {
                            let ty = &typed.ty;
                            *typed.ty = syn::parse_quote!(&#ty);
                            twin_args.push(quote!(*#arg));
                        } else {
                            twin_args.push(arg.to_token_stream());
                        }
                    }
                }
            }
        }
        // The original's arguments, in the wrapper's own tokens.
        let original_args: Vec<TokenStream> = wrapper
            .sig
            .inputs
            .iter()
            .take(original.sig.inputs.len())
            .map(|input| match input {
                FnArg::Receiver(receiver) => receiver.self_token.to_token_stream(),
                // `x` of `mut x: f64`: the name, not the pattern.
                FnArg::Typed(typed) => match &*typed.pat {
                    Pat::Ident(pat) => pat.ident.to_token_stream(),
                    pat => pat.to_token_stream(),
                },
            })
            .collect();
        let twin_fn = path(&item.sig.ident);
        let original_fn = path(&original.sig.ident);
        let result = Ident::new("__autodiff_result", Span::mixed_site());
        let writes = written.iter().any(|w| w.mutable);
        *wrapper.block = if writes {
            syn::parse_quote!({
                let #result = #twin_fn(#(#twin_args),*);
                let _ = #original_fn(#(#original_args),*);
                #result
            })
        } else {
            syn::parse_quote!({
                #twin_fn(#(#twin_args),*)
            })
        };
        wrapper.attrs.retain(|a| !a.path().is_ident("doc"));
        let doc = if writes {
            format!(
                " `{name}{suffix}`, generated by `#[grad]`: as for any function, with the \
                 derivatives taken at the values the `&mut` parameters hold on entry; it \
                 then runs [`{name}`] itself, which writes through them as it does."
            )
        } else {
            format!(
                " `{name}{suffix}`, generated by `#[grad]`: as for any function; a number \
                 passed by reference (`&f64`) has a partial that is a number."
            )
        };
        wrapper.attrs.insert(0, syn::parse_quote!(#[doc = #doc]));
        out.extend(wrapper.into_token_stream());
    }
    out
}

/// The attribute's arguments for the twin: a written parameter named in `wrt(..)` is
/// named as the twin takes it.
pub fn rename_wrt(args: TokenStream, function: &ItemFn) -> TokenStream {
    let Some(written) = written(function) else {
        return args;
    };
    let mut out = TokenStream::new();
    let mut after_wrt = false;
    for token in args {
        match token {
            proc_macro2::TokenTree::Group(group) if after_wrt => {
                let inner: TokenStream = group
                    .stream()
                    .into_iter()
                    .map(|t| match t {
                        proc_macro2::TokenTree::Ident(ident)
                            if written.iter().any(|w| w.ident == ident) =>
                        {
                            proc_macro2::TokenTree::Ident(entry_ident(&ident))
                        }
                        t => t,
                    })
                    .collect();
                let mut renamed = proc_macro2::Group::new(group.delimiter(), inner);
                renamed.set_span(group.span());
                out.extend([proc_macro2::TokenTree::Group(renamed)]);
                after_wrt = false;
            }
            token => {
                after_wrt = matches!(&token, proc_macro2::TokenTree::Ident(i) if i == "wrt");
                out.extend([token]);
            }
        }
    }
    out
}

/// Whether a generated function is a stand-in (bounded by `Missing`, never reached).
fn is_stand_in(item: &ItemFn) -> bool {
    item.sig
        .generics
        .where_clause
        .as_ref()
        .is_some_and(|clause| clause.to_token_stream().to_string().contains("Missing"))
}
