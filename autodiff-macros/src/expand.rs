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
    match try_expand(args, function.clone()) {
        Ok(gradient) => quote!(#function #gradient),
        Err(error) => {
            // Keep the original function, and give callers of `<name>_grad` something to
            // resolve to, so the user sees the real error and not a cascade after it.
            let stub = stub(&function);
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

/// A body-less stand-in for `<name>_grad` when the signature itself is fine.
fn stub(function: &ItemFn) -> TokenStream {
    let Ok(lowered) = lower::lower(
        ItemFn {
            block: syn::parse_quote!({ 0.0 }),
            ..function.clone()
        },
        &args::GradArgs::default(),
    ) else {
        return TokenStream::new();
    };
    let signature = codegen::signature(&lowered);
    quote!(#[allow(unused_variables)] #signature { ::core::unreachable!() })
}

#[cfg(test)]
mod tests {
    use super::grad;
    use quote::quote;

    /// The expansion of `#[grad(args)] item`, pretty-printed.
    fn expand(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
        let tokens = grad(args, item);
        match syn::parse2::<syn::File>(tokens.clone()) {
            Ok(file) => prettyplease::unparse(&file),
            Err(error) => panic!("expansion does not parse ({error}): {tokens}"),
        }
    }

    #[test]
    fn design_example() {
        insta::assert_snapshot!(expand(
            quote!(),
            quote! {
                pub fn f(x: f64, y: f64) -> f64 { (x * y).tanh() + x.powi(2) }
            }
        ));
    }

    #[test]
    fn loss_with_lets() {
        insta::assert_snapshot!(expand(
            quote!(),
            quote! {
                pub fn loss(w: f64, b: f64, x: f64) -> f64 {
                    let z = w * x + b;
                    let t = z.tanh();
                    (t - 0.5).powi(2)
                }
            }
        ));
    }

    #[test]
    fn reuse_mutation_calls_and_constants() {
        insta::assert_snapshot!(expand(
            quote!(),
            quote! {
                fn g(x: f64, y: f64, unused: f64) -> f64 {
                    let mut s = x * x;
                    s += x.powf(2.5) / y;
                    let scale = stop_gradient(y).exp();
                    softplus(s) * scale - PI
                }
            }
        ));
    }

    #[test]
    fn wrt_subset() {
        insta::assert_snapshot!(expand(
            quote!(wrt(c, a)),
            quote! {
                fn h(a: f64, b: f64, c: f64) -> f64 { a * b + c.sin() * b }
            }
        ));
    }

    #[test]
    fn errors_keep_the_original_and_a_stub() {
        insta::assert_snapshot!(expand(
            quote!(),
            quote! {
                fn bad(x: f64) -> f64 { let c = || x; x.frobnicate() + c() }
            }
        ));
    }

    #[test]
    fn two_thousand_operations_expand() {
        let mut body = quote!(let mut acc = x;);
        for i in 0..1000 {
            let k = i as f64 + 0.5;
            body.extend(quote!(acc = (acc * #k).sin();));
        }
        let out = expand(quote!(), quote!(fn big(x: f64) -> f64 { #body acc }));
        assert!(out.contains("fn big_grad(x: f64) -> (f64, f64) {"), "{out}");
        assert_eq!(out.matches("rules::sin").count(), 1000);
    }

    /// Every `#[grad]` item of the trybuild cases and the tests, and thousands of random
    /// mutations of them (tokens dropped, duplicated, swapped), expand without a panic.
    #[test]
    fn never_panics() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests");
        let mut inputs = Vec::new();
        let mut dirs = vec![std::path::PathBuf::from(root)];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).expect("tests/ is readable") {
                let path = entry.expect("directory entry").path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let source = std::fs::read_to_string(&path).expect("test source");
                    let Ok(file) = syn::parse_file(&source) else {
                        continue;
                    };
                    collect_grad_items(&file.items, &mut inputs);
                }
            }
        }
        assert!(
            inputs.len() > 50,
            "found only {} #[grad] items",
            inputs.len()
        );

        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move |bound: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % bound as u64) as usize
        };
        for (args, item) in &inputs {
            let _ = grad(args.clone(), item.clone());
            for _ in 0..100 {
                let mutated = mutate(item.clone(), &mut next);
                // A mutation may no longer be a function at all: that is an error, not a panic.
                let _ = grad(args.clone(), mutated);
            }
        }
        // Arguments that are not `wrt(..)`.
        for args in [
            quote!(wrt),
            quote!(wrt()),
            quote!(wrt(1)),
            quote!(= 3),
            quote!(wrt(x) wrt(y)),
        ] {
            let _ = grad(
                args,
                quote!(
                    fn f(x: f64) -> f64 {
                        x
                    }
                ),
            );
        }
    }

    /// The items carrying a `#[grad]` attribute, as (attribute arguments, item without it).
    fn collect_grad_items(
        items: &[syn::Item],
        out: &mut Vec<(proc_macro2::TokenStream, proc_macro2::TokenStream)>,
    ) {
        use quote::ToTokens;
        for item in items {
            match item {
                syn::Item::Fn(function) => {
                    let mut function = function.clone();
                    if let Some(position) = function
                        .attrs
                        .iter()
                        .position(|a| a.path().is_ident("grad"))
                    {
                        let attr = function.attrs.remove(position);
                        let args = match attr.meta {
                            syn::Meta::List(list) => list.tokens,
                            _ => proc_macro2::TokenStream::new(),
                        };
                        out.push((args, function.to_token_stream()));
                    }
                }
                syn::Item::Mod(module) => {
                    if let Some((_, items)) = &module.content {
                        collect_grad_items(items, out);
                    }
                }
                syn::Item::Macro(mac) => {
                    // `macro_rules!` bodies: look for functions inside them too.
                    if let Ok(file) = syn::parse2::<syn::File>(mac.mac.tokens.clone()) {
                        collect_grad_items(&file.items, out);
                    }
                }
                _ => {}
            }
        }
    }

    /// One random edit (drop, duplicate or swap a token) at a random depth of `stream`.
    fn mutate(
        stream: proc_macro2::TokenStream,
        next: &mut impl FnMut(usize) -> usize,
    ) -> proc_macro2::TokenStream {
        use proc_macro2::{Group, TokenTree};
        let mut trees: Vec<TokenTree> = stream.into_iter().collect();
        if trees.is_empty() {
            return proc_macro2::TokenStream::new();
        }
        let i = next(trees.len());
        let groups: Vec<usize> = (0..trees.len())
            .filter(|&k| matches!(trees[k], TokenTree::Group(_)))
            .collect();
        if !groups.is_empty() && next(3) > 0 {
            let k = groups[next(groups.len())];
            if let TokenTree::Group(group) = &trees[k] {
                let mut inner = Group::new(group.delimiter(), mutate(group.stream(), next));
                inner.set_span(group.span());
                trees[k] = TokenTree::Group(inner);
            }
        } else {
            match next(3) {
                0 => {
                    trees.remove(i);
                }
                1 => {
                    let copy = trees[next(trees.len())].clone();
                    trees.insert(i, copy);
                }
                _ => {
                    let j = next(trees.len());
                    trees.swap(i, j);
                }
            }
        }
        trees.into_iter().collect()
    }
}
