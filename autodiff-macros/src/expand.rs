//! The one error boundary: attribute and item in, tokens out; errors become
//! `compile_error!` next to the untouched original function.

use crate::{args, check, codegen, lower};
use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;

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
    match try_expand(args.clone(), function.clone()) {
        Ok(gradient) => quote!(#function #gradient),
        Err(error) => {
            // Keep the original function, and give callers of `<name>_grad` something to
            // resolve to, so the user sees the real error and not a cascade after it.
            let stub = stub(&function, args);
            let mut tokens = with_error(quote!(#function), error);
            tokens.extend(stub);
            tokens
        }
    }
}

fn try_expand(args: TokenStream, function: ItemFn) -> syn::Result<TokenStream> {
    let args = args::parse(args)?;
    let function = lower::lower(function, &args)?;
    let activity = check::check(&function)?;
    Ok(codegen::gradient_fn(&function, &activity))
}

fn with_error(item: TokenStream, error: syn::Error) -> TokenStream {
    let error = error.into_compile_error();
    quote!(#item #error)
}

/// A body-less stand-in for `<name>_grad` when the signature itself is fine, with the
/// partials `wrt(..)` asks for, so that callers see no second error.
fn stub(function: &ItemFn, args: TokenStream) -> TokenStream {
    let args = args::parse(args).unwrap_or_default();
    let Ok(lowered) = lower::lower(
        ItemFn {
            block: syn::parse_quote!({ 0.0 }),
            ..function.clone()
        },
        &args,
    ) else {
        return TokenStream::new();
    };
    let (signature, signature_into) = codegen::signatures(&lowered);
    quote! {
        #[allow(unused_variables)] #signature { ::core::unreachable!() }
        #[allow(unused_variables)] #signature_into { ::core::unreachable!() }
    }
}
