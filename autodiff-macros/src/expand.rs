//! The one error boundary: attribute and item in, tokens out; errors become
//! `compile_error!` next to the untouched original function.
//!
//! A function with struct parameters is expanded in steps: each step that lacks a
//! struct's layout asks the struct's layout macro for it (see [`crate::layout`]), and the
//! last step, with every layout known, emits the gradient.

use crate::layout::{self, Layout};
use crate::{args, check, codegen, lower};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::parse::{Parse, ParseStream};
use syn::spanned::Spanned;
use syn::{DeriveInput, FnArg, ItemFn, Token, Type};

/// Expands `#[grad(args)] item`: the original item, then `<name>_grad`.
pub fn grad(args: TokenStream, item: TokenStream) -> TokenStream {
    let function: ItemFn = match syn::parse2(item.clone()) {
        Ok(function) => function,
        Err(_) => {
            let error = syn::Error::new_spanned(
                &item,
                "#[grad] applies to a function `fn name(x: f64, …) -> f64`",
            );
            return with_error(item, error);
        }
    };
    let original = function.clone();
    let state = State {
        args,
        layouts: Layouts::default(),
        function,
    };
    let rest = state.step();
    quote!(#original #rest)
}

/// Expands a later step: `[struct …] @grad [args] [layouts] fn …`, the state of
/// [`State::request`] with the asked-for layout in front.
pub fn resume(input: TokenStream) -> TokenStream {
    match syn::parse2::<Resume>(input) {
        Ok(Resume { layout, mut state }) => match state.missing() {
            Some(ty) => {
                state.layouts.insert(ty, layout);
                state.step()
            }
            None => TokenStream::new(),
        },
        Err(error) => error.into_compile_error(),
    }
}

/// Everything a step needs: the attribute's arguments, the layouts known so far, and the
/// function as written.
struct State {
    args: TokenStream,
    layouts: Layouts,
    function: ItemFn,
}

/// The layouts known so far, by the type as written.
#[derive(Default)]
pub struct Layouts {
    known: Vec<(Type, DeriveInput)>,
}

impl Layouts {
    fn insert(&mut self, ty: Type, layout: DeriveInput) {
        self.known.push((ty, layout));
    }

    /// The layout of a type as written, if known.
    pub fn get(&self, ty: &Type) -> Option<&DeriveInput> {
        let key = layout::key(ty);
        self.known
            .iter()
            .find(|(known, _)| layout::key(known) == key)
            .map(|(_, layout)| layout)
    }
}

impl State {
    /// The gradient when every layout is known; otherwise a request for the next one.
    fn step(self) -> TokenStream {
        match self.missing() {
            Some(ty) => self.request(&ty),
            None => self.finish(),
        }
    }

    /// The first struct type whose layout is not known yet: a parameter's, or a field's of
    /// a known layout.
    fn missing(&self) -> Option<Type> {
        let mut pending: Vec<Type> = self
            .function
            .sig
            .inputs
            .iter()
            .filter_map(|input| match input {
                FnArg::Typed(typed) => layout::struct_path(referenced(&typed.ty)),
                FnArg::Receiver(_) => None,
            })
            .collect();
        pending.reverse();
        let mut seen = Vec::new();
        while let Some(ty) = pending.pop() {
            let key = layout::key(&ty);
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            let Some(input) = self.layouts.get(&ty) else {
                return Some(ty);
            };
            if let Ok(layout) = layout::parse(input) {
                pending.extend(nested(&layout).into_iter().rev());
            }
        }
        None
    }

    /// `Type! { @grad [args] [layouts] fn … }`: asks the layout macro of `ty` for its
    /// fields, which it passes to [`resume`]. A type that does not derive `Differentiable`
    /// also fails the trait bound checked here, whose message says what to do.
    fn request(&self, ty: &Type) -> TokenStream {
        let State {
            args,
            layouts,
            function,
        } = self;
        let known = layouts
            .known
            .iter()
            .map(|(ty, layout)| quote!((#ty) [#layout]));
        let span = ty.span();
        quote_spanned! {span=>
            const _: () = {
                fn __differentiable<T: ::autodiff::Differentiable>() {}
                let _ = __differentiable::<#ty>;
            };
            #ty! { @grad [#args] [#(#known)*] #function }
        }
    }

    /// `<name>_grad` and `<name>_grad_into`, or the errors with stand-ins for them.
    fn finish(self) -> TokenStream {
        let State {
            args,
            layouts,
            function,
        } = self;
        match try_expand(args.clone(), function.clone(), &layouts) {
            Ok(gradient) => gradient,
            Err(error) => {
                // Give callers of `<name>_grad` something to resolve to, so the user sees
                // the real error and not a cascade after it.
                let error = error.into_compile_error();
                let stub = stub(&function, args, &layouts);
                quote!(#error #stub)
            }
        }
    }
}

/// `T` for `&T`, else the type itself.
fn referenced(ty: &Type) -> &Type {
    match ty {
        Type::Reference(reference) => &reference.elem,
        ty => ty,
    }
}

/// The struct types of a layout's fields.
fn nested(layout: &Layout) -> Vec<Type> {
    layout
        .fields
        .iter()
        .filter(|field| !field.skip)
        .filter_map(|field| match &field.kind {
            layout::FieldKind::Struct(ty) => Some(ty.clone()),
            _ => None,
        })
        .collect()
}

/// The input of [`resume`].
struct Resume {
    layout: DeriveInput,
    state: State,
}

impl Parse for Resume {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let content;
        syn::bracketed!(content in input);
        let layout: DeriveInput = content.parse()?;
        input.parse::<Token![@]>()?;
        let marker: syn::Ident = input.parse()?;
        if marker != "grad" {
            return Err(syn::Error::new(marker.span(), "expected `@grad`"));
        }
        let content;
        syn::bracketed!(content in input);
        let args: TokenStream = content.parse()?;
        let content;
        syn::bracketed!(content in input);
        let mut layouts = Layouts::default();
        while !content.is_empty() {
            let ty;
            syn::parenthesized!(ty in content);
            let ty: Type = ty.parse()?;
            let known;
            syn::bracketed!(known in content);
            layouts.insert(ty, known.parse()?);
        }
        let function: ItemFn = input.parse()?;
        Ok(Resume {
            layout,
            state: State {
                args,
                layouts,
                function,
            },
        })
    }
}

fn try_expand(args: TokenStream, function: ItemFn, layouts: &Layouts) -> syn::Result<TokenStream> {
    let args = args::parse(args)?;
    let function = lower::lower(function, &args, layouts)?;
    let activity = check::check(&function)?;
    Ok(codegen::gradient_fn(&function, &activity))
}

fn with_error(item: TokenStream, error: syn::Error) -> TokenStream {
    let error = error.into_compile_error();
    quote!(#item #error)
}

/// A body-less stand-in for `<name>_grad` when the signature itself is fine, with the
/// partials `wrt(..)` asks for, so that callers see no second error.
fn stub(function: &ItemFn, args: TokenStream, layouts: &Layouts) -> TokenStream {
    let args = args::parse(args).unwrap_or_default();
    let Ok(lowered) = lower::lower(
        ItemFn {
            block: syn::parse_quote!({ 0.0 }),
            ..function.clone()
        },
        &args,
        layouts,
    ) else {
        return TokenStream::new();
    };
    let (signature, signature_into) = codegen::signatures(&lowered);
    quote! {
        #[allow(unused_variables)] #signature { ::core::unreachable!() }
        #[allow(unused_variables)] #signature_into { ::core::unreachable!() }
    }
}
