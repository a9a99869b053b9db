//! Where the generated code finds the facade crate.
//!
//! Code generation writes every path into the facade as `::autodiff::…`. A user who
//! renamed the dependency (`ad = { package = "autodiff-static", … }`) has no `::autodiff`:
//! the entry points ask Cargo's manifest for the name (`autodiff-macros` does, with
//! `proc-macro-crate`), or take it from `#[grad(crate = path)]`, and [`relocate`] rewrites
//! the generated items, once, at the error boundary.

use proc_macro2::{Delimiter, Group, Spacing, TokenStream, TokenTree};
use quote::quote;

/// The path the generated code names when nothing says otherwise.
pub fn default_path() -> syn::Path {
    syn::parse_quote!(::autodiff)
}

/// `::name` for the facade seen under `name`, `::autodiff` for `None` (or for a name that
/// is not an identifier).
pub fn path(name: Option<&str>) -> syn::Path {
    let ident = name.and_then(|name| syn::parse_str::<syn::Ident>(name).ok());
    match ident {
        Some(ident) => syn::parse_quote!(::#ident),
        None => default_path(),
    }
}

/// The value of a `crate = …` option: a path (`crate = ::ad`) or, as serde spells it, a
/// string holding one (`crate = "::ad"`).
pub fn parse_option(meta: &syn::meta::ParseNestedMeta) -> syn::Result<syn::Path> {
    let value = meta.value()?;
    if value.peek(syn::LitStr) {
        value.parse::<syn::LitStr>()?.parse()
    } else {
        value.parse()
    }
}

/// `tokens` with each leading `::autodiff` of a path replaced by `path` (nothing to do
/// when `path` is `::autodiff`). A path that continues another (`m::autodiff::x`) is left
/// alone.
pub fn relocate(tokens: TokenStream, path: &syn::Path) -> TokenStream {
    let replacement = quote!(#path);
    if replacement.to_string() == quote!(::autodiff).to_string() {
        return tokens;
    }
    rewrite(tokens, &replacement)
}

fn rewrite(tokens: TokenStream, replacement: &TokenStream) -> TokenStream {
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::with_capacity(trees.len());
    let mut i = 0;
    while i < trees.len() {
        if starts_crate_path(&trees, i) {
            out.extend(replacement.clone());
            i += 3;
            continue;
        }
        match &trees[i] {
            TokenTree::Group(group) => {
                let mut inner = Group::new(group.delimiter(), rewrite(group.stream(), replacement));
                inner.set_span(group.span());
                out.push(TokenTree::Group(inner));
            }
            tree => out.push(tree.clone()),
        }
        i += 1;
    }
    out.into_iter().collect()
}

/// Whether `trees[i..]` starts `:: autodiff ::` and no path goes on before it.
fn starts_crate_path(trees: &[TokenTree], i: usize) -> bool {
    let colon = |k: usize, spacing: Spacing| matches!(trees.get(k), Some(TokenTree::Punct(p)) if p.as_char() == ':' && p.spacing() == spacing);
    let name = matches!(trees.get(i + 2), Some(TokenTree::Ident(ident)) if ident == "autodiff");
    if !(colon(i, Spacing::Joint) && colon(i + 1, Spacing::Alone) && name) {
        return false;
    }
    if !(colon(i + 3, Spacing::Joint) && colon(i + 4, Spacing::Alone)) {
        return false;
    }
    match i.checked_sub(1).map(|k| &trees[k]) {
        // `m::autodiff::…` goes on from `m`; `as ::autodiff::…` starts a path. (After `>`
        // a path starts too: `-> ::autodiff::…`, `for<'a> ::autodiff::…`; no path goes on
        // from a generic type into a module named `autodiff`.)
        Some(TokenTree::Ident(ident)) => is_keyword(&ident.to_string()),
        Some(TokenTree::Group(group)) => group.delimiter() != Delimiter::None,
        _ => true,
    }
}

/// The keywords a path can follow (`as ::autodiff::Real`, `impl ::autodiff::…`).
fn is_keyword(word: &str) -> bool {
    matches!(
        word,
        "as" | "break"
            | "const"
            | "dyn"
            | "else"
            | "for"
            | "if"
            | "impl"
            | "in"
            | "let"
            | "match"
            | "move"
            | "mut"
            | "pub"
            | "ref"
            | "return"
            | "static"
            | "struct"
            | "type"
            | "unsafe"
            | "use"
            | "where"
            | "while"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_leading_paths_only() {
        let tokens = quote! {
            let a = ::autodiff::__private::rules::tanh(x);
            let b = <f64 as ::autodiff::Real>::ONE;
            let c = my::autodiff::thing();
            fn f() -> ::autodiff::Matrix<f64> { crate::autodiff::x() }
            fn g() where for<'a> ::autodiff::Missing: ::autodiff::Real {}
            let d = [::autodiff::__private::Flat::flat_len(&v)];
        };
        let path: syn::Path = syn::parse_quote!(::ad);
        let out = relocate(tokens, &path).to_string();
        assert_eq!(
            out,
            quote! {
                let a = ::ad::__private::rules::tanh(x);
                let b = <f64 as ::ad::Real>::ONE;
                let c = my::autodiff::thing();
                fn f() -> ::ad::Matrix<f64> { crate::autodiff::x() }
                fn g() where for<'a> ::ad::Missing: ::ad::Real {}
                let d = [::ad::__private::Flat::flat_len(&v)];
            }
            .to_string()
        );
    }

    #[test]
    fn the_default_path_changes_nothing() {
        let tokens = quote!(::autodiff::__private::rules::sin(x));
        let out = relocate(tokens.clone(), &default_path());
        assert_eq!(out.to_string(), tokens.to_string());
    }
}
