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
use syn::{DeriveInput, FnArg, ImplItem, ItemFn, ItemImpl, Token, Type};

/// Expands `#[grad(args)] item`: the original item, then `<name>_grad`.
pub fn grad(facade: syn::Path, args: TokenStream, item: TokenStream) -> TokenStream {
    if let Ok(block) = syn::parse2::<ItemImpl>(item.clone()) {
        return methods(facade, args, block);
    }
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
    // A method marked alone: `#[grad]` cannot see the type of `self`, so `self` is a
    // constant (`Self` stands for its type).
    // An associated function marked alone is recognised by its use of `Self` (its
    // generated functions call each other through `Self::`).
    let method = matches!(function.sig.inputs.first(), Some(FnArg::Receiver(_)))
        || crate::types::mentions(&item, &|ident| ident == "Self");
    let self_ty = method.then(|| syn::parse_quote!(Self));
    let original = unused_allowed(function.clone());
    let mut function = function;
    if self_ty.is_none() && crate::nalgebra::uses(&function) {
        if let Err(error) = crate::nalgebra::rewrite_body(&mut function) {
            // Stand-ins for callers, as after any other error.
            let facade = args::parse(args.clone())
                .ok()
                .and_then(|args| args.krate)
                .unwrap_or(facade);
            let layouts = Layouts::default();
            let context = Context {
                layouts: &layouts,
                self_ty: self_ty.as_ref(),
            };
            let stub = crate::krate::relocate(stub(&function, args, &context), &facade);
            let error = error.into_compile_error();
            return quote!(#original #error #stub);
        }
    }
    crate::shared_refs::share_read_only(&mut function);
    crate::array_arguments::bind(&mut function);
    let state = State {
        facade,
        args,
        layouts: Layouts::default(),
        self_ty,
        function,
    };
    let rest = state.step();
    quote!(#original #rest)
}

/// Expands `#[grad] impl Type { … }`: the block unchanged but for the `#[grad]` attributes
/// of its methods, then the gradients of those methods, in a block `impl Type { … }` of
/// their own.
fn methods(facade: syn::Path, args: TokenStream, mut block: ItemImpl) -> TokenStream {
    let mut errors = crate::errors::Errors::default();
    if !args.is_empty() {
        errors.at(
            &args,
            "#[grad] on an `impl` block takes no arguments; write `wrt(..)` on the methods",
        );
    }
    if let Some((_, path, _)) = &block.trait_ {
        errors.at(
            path,
            "#[grad] differentiates methods of inherent `impl` blocks (`impl Model`), not \
             of trait implementations: a trait's `impl` cannot hold `<name>_grad`",
        );
    }
    if !block.generics.params.is_empty() {
        errors.at(
            &block.generics,
            "#[grad] does not support generic `impl` blocks",
        );
    }
    let mut marked = Vec::new();
    for item in &mut block.items {
        let ImplItem::Fn(method) = item else { continue };
        let position = method.attrs.iter().position(is_grad_attribute);
        if let Some(position) = position {
            let attribute = method.attrs.remove(position);
            method.attrs.push(syn::parse_quote!(#[allow(dead_code)]));
            let args = match attribute.meta {
                syn::Meta::List(list) => list.tokens,
                _ => TokenStream::new(),
            };
            marked.push((args, method.clone()));
        }
    }
    if let Err(error) = errors.finish(()) {
        let error = error.into_compile_error();
        return quote!(#block #error);
    }
    if marked.is_empty() {
        let error = syn::Error::new_spanned(
            &block.self_ty,
            "mark the methods to differentiate with `#[grad]` inside this block",
        )
        .into_compile_error();
        return quote!(#block #error);
    }
    let self_ty = &*block.self_ty;
    // A method that differentiates `self` (no `wrt(..)`, or one naming `self`): the type
    // derives `Differentiable`, and the methods that leave `self` out take it as a struct
    // parameter all the same (`__self_derives`, see `lower::self_is_struct`).
    let has_self =
        |method: &syn::ImplItemFn| matches!(method.sig.inputs.first(), Some(FnArg::Receiver(_)));
    let derives = marked.iter().any(|(args, method)| {
        has_self(method)
            && args::parse(args.clone())
                .is_ok_and(|parsed| lower::differentiates_self(&parsed, self_ty))
    });
    let gradients = marked.into_iter().map(|(mut args, method)| {
        if derives && has_self(&method) {
            args = if args.is_empty() {
                quote!(__self_derives)
            } else {
                quote!(#args, __self_derives)
            };
        }
        let mut function = ItemFn {
            attrs: method.attrs,
            vis: method.vis,
            sig: method.sig,
            block: Box::new(method.block),
        };
        crate::shared_refs::share_read_only(&mut function);
        crate::array_arguments::bind(&mut function);
        State {
            facade: facade.clone(),
            args,
            layouts: Layouts::default(),
            self_ty: Some(self_ty.clone()),
            function,
        }
        .step()
    });
    quote!(#block #(#gradients)*)
}

/// The original function with `#[allow(dead_code)]`: code that calls only `<name>_grad`
/// uses it through its gradient. (rustc does not report the generated functions as
/// unused, since they come from a macro's expansion, so a `#[grad]` function that nothing
/// calls gives no warning at all.)
fn unused_allowed(mut function: ItemFn) -> ItemFn {
    function.attrs.push(syn::parse_quote!(#[allow(dead_code)]));
    function
}

/// `#[grad]`, `#[grad(..)]`, `#[autodiff::grad]`, …
fn is_grad_attribute(attribute: &syn::Attribute) -> bool {
    attribute
        .path()
        .segments
        .last()
        .is_some_and(|segment| segment.ident == "grad")
}

/// Expands a later step: `[struct …] @grad [args] [layouts] fn …`, the state of
/// [`State::request`] with the asked-for layout in front.
pub fn resume(facade: syn::Path, input: TokenStream) -> TokenStream {
    match syn::parse2::<Resume>(input) {
        Ok(Resume { layout, mut state }) => match state.missing() {
            Some(ty) => {
                state.facade = facade;
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
    /// Where the user's crate finds the facade, unless `crate = path` says otherwise.
    facade: syn::Path,
    args: TokenStream,
    layouts: Layouts,
    /// For a method: the type of its `impl` block.
    self_ty: Option<Type>,
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

    /// The layout of a type as written, if known; of a const-generic struct, for the
    /// type's arguments (`Linear<3>`).
    pub fn get(&self, ty: &Type) -> Option<DeriveInput> {
        let key = layout::key(ty);
        self.known
            .iter()
            .find(|(known, _)| layout::key(known) == key)
            .map(|(_, input)| layout::instantiate(input, ty))
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
                FnArg::Typed(typed) => {
                    // An enum or other type used only as a whole needs no layout.
                    if let syn::Pat::Ident(pat) = &*typed.pat {
                        let args = args::parse(self.args.clone()).unwrap_or_default();
                        let body = &self.function.block;
                        if lower::is_opaque(&pat.ident, &typed.ty, body, args.wrt.as_deref()) {
                            return None;
                        }
                    }
                    layout::struct_in(referenced(&typed.ty))
                }
                FnArg::Receiver(_) => {
                    let args = args::parse(self.args.clone()).unwrap_or_default();
                    let self_ty = self.self_ty.as_ref()?;
                    if lower::self_is_struct(&args, self_ty, &self.function.block) {
                        layout::struct_path(self_ty)
                    } else {
                        None
                    }
                }
            })
            .collect();
        // A struct output's layout too.
        pending.extend(self.struct_output());
        // A type parameter (the float type of a function generic over it) is no struct,
        // and a type generic over it is an error of its own (`generic::float_param`).
        let type_params: Vec<&syn::Ident> = self
            .function
            .sig
            .generics
            .type_params()
            .map(|param| &param.ident)
            .collect();
        pending.retain(|ty| {
            !crate::types::mentions(&quote!(#ty), &|ident| type_params.contains(&ident))
        });
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
            if let Ok(layout) = layout::parse(&input) {
                pending.extend(nested(&layout).into_iter().rev());
            }
        }
        None
    }

    /// The struct type the function returns, if it returns one: `Self` stands for the type
    /// of its `impl` block.
    fn struct_output(&self) -> Option<Type> {
        struct_output_type(&self.function, self.self_ty.as_ref())
    }

    /// `Type! { @grad [args] [layouts] fn … }`: asks the layout macro of `ty` for its
    /// fields, which it passes to [`resume`]. A type that does not derive `Differentiable`
    /// also fails the trait bound checked here, whose message says what to do.
    fn request(&self, ty: &Type) -> TokenStream {
        let facade = self.facade_path();
        let State {
            facade: _,
            args,
            layouts,
            self_ty,
            function,
        } = self;
        let self_ty = self_ty.iter();
        let known = layouts
            .known
            .iter()
            .map(|(ty, layout)| quote!((#ty) [#layout]));
        let span = ty.span();
        let name = layout::macro_path(ty);
        // The probe names the type outside the function, where a const-generic struct's
        // arguments (`Linear<N>`) may not exist: only a struct without them is probed.
        let generic = layout::key(ty) != name.to_string();
        let probe = (!generic).then(|| {
            quote_spanned! {span=>
                const _: () = {
                    let _ = ::autodiff::__private::probe::differentiable::<#ty>;
                };
            }
        });
        let request = quote_spanned! {span=>
            #probe
            #name! { @grad [#args] [#(#known)*] [#(#self_ty)*] #function }
        };
        crate::krate::relocate(request, &facade)
    }

    /// The facade's path: `crate = path` of the arguments, else what the entry point found.
    fn facade_path(&self) -> syn::Path {
        args::parse(self.args.clone())
            .ok()
            .and_then(|args| args.krate)
            .unwrap_or_else(|| self.facade.clone())
    }

    /// `<name>_grad` and `<name>_grad_into`, or the errors with stand-ins for them.
    fn finish(self) -> TokenStream {
        let facade = self.facade_path();
        let State {
            facade: _,
            args,
            layouts,
            self_ty,
            function,
        } = self;
        let context = Context {
            layouts: &layouts,
            self_ty: self_ty.as_ref(),
        };
        let output = match try_expand(args.clone(), function.clone(), &context) {
            Ok(gradient) => gradient,
            Err(error) => {
                // Give callers of `<name>_grad` something to resolve to, so the user sees
                // the real error and not a cascade after it.
                let error = error.into_compile_error();
                let stub = stub(&function, args, &context);
                quote!(#error #stub)
            }
        };
        let output = crate::krate::relocate(output, &facade);
        match &self_ty {
            // A method of an `impl` block marked `#[grad]`: in a block of its own.
            Some(self_ty) if !lower::is_self(self_ty) => quote!(impl #self_ty { #output }),
            // A free function, or a method marked alone: next to the original.
            _ => output,
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
            layout::FieldKind::Struct(ty) | layout::FieldKind::Collection(ty, _) => {
                Some(ty.clone())
            }
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
        let content;
        syn::bracketed!(content in input);
        let self_ty: Option<Type> = if content.is_empty() {
            None
        } else {
            Some(content.parse()?)
        };
        let function: ItemFn = input.parse()?;
        Ok(Resume {
            layout,
            state: State {
                // Set by `resume`, which knows the user's crate.
                facade: crate::krate::default_path(),
                args,
                layouts,
                self_ty,
                function,
            },
        })
    }
}

/// What lowering needs besides the function: the struct layouts, and for a method the type
/// of its `impl` block.
pub struct Context<'a> {
    /// The layouts of the struct types of parameters and of their fields.
    pub layouts: &'a Layouts,
    /// The type `Self` stands for, in a method.
    pub self_ty: Option<&'a Type>,
}

/// The struct type `function` returns, if it returns one (`Self`: the `impl` block's type).
fn struct_output_type(function: &ItemFn, self_ty: Option<&Type>) -> Option<Type> {
    let syn::ReturnType::Type(_, ty) = &function.sig.output else {
        return None;
    };
    match &**ty {
        Type::Path(path) if path.qself.is_none() && path.path.is_ident("Self") => self_ty
            .filter(|ty| !lower::is_self(ty))
            .and_then(layout::struct_path),
        ty => layout::struct_path(ty),
    }
}

fn try_expand(args: TokenStream, function: ItemFn, context: &Context) -> syn::Result<TokenStream> {
    if context.self_ty.is_some() && crate::nalgebra::uses(&function) {
        return Err(syn::Error::new_spanned(
            &function.sig,
            "#[grad] supports nalgebra's types in free functions, not yet in methods; write \
             the method's computation as a free `#[grad]` function and call it",
        ));
    }
    if crate::nalgebra::in_signature(&function) {
        return crate::nalgebra::wrapped(args, &function, |args, twin| {
            try_expand(args, twin, context)
        });
    }
    if let Some(param) = crate::generic::float_param(&function, context.self_ty.is_some())? {
        return crate::generic::monomorphised(&args, &function, &param, |args, twin| {
            try_expand(args, twin, context)
        });
    }
    if let Some(twin) = crate::inplace::twin(&function)? {
        return inplace(args, &function, twin, context);
    }
    if let Some(ty) = struct_output_type(&function, context.self_ty) {
        if let Some(layout) = context.layouts.get(&ty) {
            return struct_output(args, function, &ty, &layout, context);
        }
    }
    let args = args::parse(args)?;
    let original = function.clone();
    let function = lower::lower(function, &args, context)?;
    let activity = check::check(&function)?;
    codegen::parallel_check(&function, &activity)?;
    let gradient = if function.output.is_some() {
        // A vector output: its pullback is the gradient of its contraction with a seed.
        let contracted = lower::lower_contracted(original, &args, context)?;
        let activity = check::check(&contracted)?;
        codegen::gradient_fn(&contracted, &activity)
    } else {
        codegen::gradient_fn(&function, &activity)
    };
    // The Jacobian's forward sweeps call `_jvp`, generated for it too.
    let public_jvp = args.jvp || args.jacobian;
    let jvp = public_jvp.then(|| codegen::jvp::jvp_fn(&function, &activity));
    // What the forward mode and second order of callers call.
    let tangent = (public_jvp || args.hvp || args.hessian)
        .then(|| codegen::jvp::tangent_fn(&function, &activity, public_jvp));
    let jacobian = if args.jacobian {
        codegen::jacobian::jacobian_fn(&function, &activity)?
    } else {
        TokenStream::new()
    };
    let second = if args.hvp || args.hessian {
        codegen::hvp::second_order(&function, &activity, args.hvp, args.hessian)?
    } else {
        TokenStream::new()
    };
    let stand_ins = codegen::missing::stand_ins(&function, &activity, &args);
    Ok(quote!(#gradient #jvp #tangent #jacobian #second #stand_ins))
}

/// A function returning a struct: the twin of its numbers through the pipeline, hidden,
/// and the functions of the struct around it (see [`crate::struct_output`]).
fn struct_output(
    tokens: TokenStream,
    function: ItemFn,
    ty: &Type,
    layout: &DeriveInput,
    context: &Context,
) -> syn::Result<TokenStream> {
    let args = args::parse(tokens.clone())?;
    let returned = match &function.sig.output {
        syn::ReturnType::Type(_, returned) => (**returned).clone(),
        syn::ReturnType::Default => ty.clone(),
    };
    if args.hvp || args.hessian {
        return Err(syn::Error::new_spanned(
            &function.sig.output,
            "`hvp` and `hessian` need a function that returns one number; for a struct \
             output, ask for `jacobian`",
        ));
    }
    let layout = layout::parse(layout)?;
    let (twin, fixed) = crate::struct_output::twin(&function, &layout, &returned, context.layouts)?;
    let inner = try_expand(tokens, twin.clone(), context)?;
    let lowered = lower::lower(twin.clone(), &args, context)?;
    let wrappers = crate::struct_output::wrappers(&function, &returned, &lowered, &args, fixed)?;
    // Under the function's own name, the stand-ins of what it does not have: `_grad`
    // (not a scalar output), `_jvp` unless asked for.
    let stand_ins = named_stand_ins(&function.sig.ident, &twin, &args, context);
    let hidden = hide(quote!(#twin #inner));
    Ok(quote!(#hidden #wrappers #stand_ins))
}

/// A function that writes through `&mut` parameters: its twin that takes them by value
/// through the pipeline, hidden, and the functions around it (see [`crate::inplace`]).
fn inplace(
    tokens: TokenStream,
    function: &ItemFn,
    twin: ItemFn,
    context: &Context,
) -> syn::Result<TokenStream> {
    let tokens = crate::inplace::rename_wrt(tokens, function);
    let args = args::parse(tokens.clone())?;
    let inner = try_expand(tokens.clone(), twin.clone(), context)?;
    let wrappers = crate::inplace::wrappers(function, &inner, context.self_ty.is_some());
    // Under the function's own name, the stand-ins of what it does not have.
    let stand_ins = named_stand_ins(&function.sig.ident, &twin, &args, context);
    // A caller's `f(&mut y, x);` of a function that also returns a value reaches the
    // twin of what `f` leaves in `y`. Its errors are the function's own, reported above.
    let left = crate::inplace::left_twin(function).and_then(|left| {
        let inner = try_expand(tokens.clone(), left.clone(), context).ok()?;
        Some(quote!(#left #inner))
    });
    let hidden = hide(quote!(#twin #inner #left));
    Ok(quote!(#hidden #wrappers #stand_ins))
}

/// The stand-ins (`codegen::missing`) of a twin's missing functions under the name
/// `ident` of the function it stands for, whose callers use that name.
fn named_stand_ins(
    ident: &syn::Ident,
    twin: &ItemFn,
    args: &args::GradArgs,
    context: &Context,
) -> TokenStream {
    let named = ItemFn {
        sig: syn::Signature {
            ident: ident.clone(),
            ..twin.sig.clone()
        },
        ..twin.clone()
    };
    lower::lower(named, args, context)
        .and_then(|named| {
            let activity = check::check(&named)?;
            Ok(codegen::missing::stand_ins(&named, &activity, args))
        })
        .unwrap_or_default()
}

/// Every function of `items`, `#[doc(hidden)]`, without warnings of unused variables.
fn hide(items: TokenStream) -> TokenStream {
    match syn::parse2::<syn::File>(items.clone()) {
        Ok(file) => file
            .items
            .into_iter()
            .map(|item| match item {
                syn::Item::Fn(mut function) => {
                    function.attrs.retain(|a| !a.path().is_ident("doc"));
                    function.attrs.insert(0, syn::parse_quote!(#[doc(hidden)]));
                    // The numbers' twin leaves the struct's constant fields out, and
                    // with them what only they read.
                    function
                        .attrs
                        .insert(1, syn::parse_quote!(#[allow(unused_variables)]));
                    quote::ToTokens::into_token_stream(function)
                }
                item => quote::ToTokens::into_token_stream(item),
            })
            .collect(),
        Err(_) => items,
    }
}

fn with_error(item: TokenStream, error: syn::Error) -> TokenStream {
    let error = error.into_compile_error();
    quote!(#item #error)
}

/// The stand-ins of a function returning a struct whose body has an error: its `_vjp`,
/// `_jvp` and `_jacobian` with the struct's types, never reached, and the stand-ins of
/// what it does not have. `None` for any other function.
fn struct_output_stub(
    function: &ItemFn,
    args: &args::GradArgs,
    context: &Context,
) -> Option<TokenStream> {
    let ty = struct_output_type(function, context.self_ty)?;
    context.layouts.get(&ty)?;
    let returned = match &function.sig.output {
        syn::ReturnType::Type(_, returned) => (**returned).clone(),
        syn::ReturnType::Default => return None,
    };
    let numbers = |ident: syn::Ident| ItemFn {
        sig: syn::Signature {
            ident,
            output: syn::parse_quote!(-> Vec<f64>),
            ..function.sig.clone()
        },
        block: syn::parse_quote!({ Vec::new() }),
        ..function.clone()
    };
    let twin = numbers(crate::struct_output::twin_ident(&function.sig.ident));
    let lowered = lower::lower(twin, args, context).ok()?;
    let wrappers =
        crate::struct_output::wrappers(function, &returned, &lowered, args, false).ok()?;
    let file = syn::parse2::<syn::File>(wrappers).ok()?;
    let mut out = TokenStream::new();
    for item in file.items {
        if let syn::Item::Fn(mut item) = item {
            *item.block = syn::parse_quote!({ ::core::unreachable!() });
            item.attrs
                .push(syn::parse_quote!(#[allow(unused_variables)]));
            out.extend(quote!(#item));
        }
    }
    let named = lower::lower(numbers(function.sig.ident.clone()), args, context).ok()?;
    if let Ok(activity) = check::check(&named) {
        out.extend(codegen::missing::stand_ins(&named, &activity, args));
    }
    Some(out)
}

/// A body-less stand-in for `<name>_grad` when the signature itself is fine, with the
/// partials `wrt(..)` asks for, so that callers see no second error.
fn stub(function: &ItemFn, args: TokenStream, context: &Context) -> TokenStream {
    if context.self_ty.is_some() && crate::nalgebra::uses(function) {
        return crate::nalgebra::method_stand_in(function, args);
    }
    if context.self_ty.is_none() && crate::nalgebra::in_signature(function) {
        // The twin's body, the user's, would only repeat the compiler's errors about it.
        let mut function = function.clone();
        function.block = syn::parse_quote!({ ::core::unreachable!() });
        return crate::nalgebra::wrapped(args, &function, |args, twin| {
            Ok(stub(&twin, args, context))
        })
        .unwrap_or_default();
    }
    match crate::generic::float_param(function, context.self_ty.is_some()) {
        Ok(Some(param)) => {
            return crate::generic::monomorphised(&args, function, &param, |args, twin| {
                Ok(stub(&twin, args, context))
            })
            .unwrap_or_default();
        }
        Ok(None) => {}
        // A method generic over its float type: its callers in `f64` see no second error.
        Err(_) if context.self_ty.is_some() => {
            if let Some(twin) = crate::generic::f64_twin(function) {
                let stand_ins = stub(&twin, args.clone(), context);
                if !stand_ins.is_empty() {
                    return stand_ins;
                }
            }
        }
        Err(_) => {}
    }
    let args = args::parse(args).unwrap_or_default();
    // A method that takes `&mut self` (rejected) gets a stand-in that takes `&self`,
    // which its callers' `x.method_grad(..)` reach all the same.
    let mut function = function.clone();
    if let Some(FnArg::Receiver(receiver)) = function.sig.inputs.first_mut() {
        if receiver.reference.is_some() && receiver.mutability.is_some() {
            receiver.mutability = None;
            *receiver.ty = syn::parse_quote!(&Self);
        }
    }
    let function = &function;
    if let Some(stubs) = struct_output_stub(function, &args, context) {
        return stubs;
    }
    let value = match &function.sig.output {
        syn::ReturnType::Type(_, ty) => match &**ty {
            Type::Tuple(tuple) => {
                let zeros = tuple.elems.iter().map(|_| quote!(0.0));
                quote!((#(#zeros),*))
            }
            Type::Array(_) => {
                let dims = crate::types::array_dims(ty, crate::types::Float::F64)
                    .or_else(|| crate::types::array_dims(ty, crate::types::Float::F32))
                    .unwrap_or_default();
                dims.iter()
                    .rev()
                    .fold(quote!(0.0), |inner, dim| quote!([#inner; #dim]))
            }
            Type::Path(path) if path.path.segments.last().is_some_and(|s| s.ident == "Vec") => {
                quote!(Vec::new())
            }
            _ => quote!(0.0),
        },
        syn::ReturnType::Default => quote!(0.0),
    };
    let Ok(lowered) = lower::lower(
        ItemFn {
            block: syn::parse_quote!({ #value }),
            ..function.clone()
        },
        &args,
        context,
    ) else {
        return TokenStream::new();
    };
    let scalar = lowered.outputs == 1 && lowered.output.is_none();
    let gradient = scalar.then(|| {
        let (signature, signature_into) = codegen::signatures(&lowered);
        quote! {
            #[allow(unused_variables)] #signature { ::core::unreachable!() }
            #[allow(unused_variables)] #signature_into { ::core::unreachable!() }
        }
    });
    let pullback = codegen::vjp_signature(&lowered)
        .map(|signature| quote!(#[allow(unused_variables)] #signature { ::core::unreachable!() }));
    let jvp = (args.jvp || args.jacobian).then(|| {
        let signature = codegen::jvp::jvp_signature(&lowered);
        quote!(#[allow(unused_variables)] #signature { ::core::unreachable!() })
    });
    let jacobian = args.jacobian.then(|| {
        let signature = codegen::jacobian::jacobian_signature(&lowered);
        quote!(#[allow(unused_variables)] #signature { ::core::unreachable!() })
    });
    let second = codegen::hvp::signatures(&lowered, args.hvp, args.hessian)
        .into_iter()
        .map(|signature| quote!(#[allow(unused_variables)] #signature { ::core::unreachable!() }));
    let stand_ins = check::check(&lowered)
        .map(|activity| codegen::missing::stand_ins(&lowered, &activity, &args))
        .unwrap_or_default();
    quote! {
        #gradient
        #stand_ins
        #pullback
        #jvp
        #jacobian
        #(#second)*
    }
}
