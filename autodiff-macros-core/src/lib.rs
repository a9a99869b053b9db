//! The expansion behind the [`autodiff`](https://docs.rs/autodiff-static) crate's `#[grad]` and
//! `#[derive(Differentiable)]`, on `proc_macro2` tokens. `autodiff-macros` is the thin
//! proc-macro crate that calls it; users depend on `autodiff-static` (library `autodiff`).
//!
//! It is a library of its own so that the expansion can be driven outside a compiler: by
//! its unit and property tests, by the benchmark of expansion time (`benches/expand.rs`)
//! and by the fuzz target (`fuzz/`). Each entry point returns tokens, never panics, and
//! turns every error into `compile_error!` spanned at the offending tokens.
//!
//! The pipeline, one module a step: `args` parses the attribute, `lower` turns the
//! function into a list of nodes (`ir`) using the table of operations (`ops`), `check`
//! finds the nodes that carry adjoints, and `codegen` emits the forward pass and the
//! reverse sweep. `expand` is the one place where errors become `compile_error!`; it also
//! runs the steps that wait for struct layouts (`layout`), which `derive` provides.
#![forbid(unsafe_code)]

mod args;
mod array_arguments;
mod check;
mod codegen;
mod derive;
mod errors;
mod expand;
mod generic;
mod inplace;
mod ir;
mod krate;
mod layout;
mod lower;
mod nalgebra;
mod ops;
mod shared_refs;
mod struct_output;
#[cfg(test)]
mod tests;
mod types;

use proc_macro2::TokenStream;

/// Expands `#[grad(args)] item`: the item as written, then `<name>_grad` and the other
/// generated functions, or the item and a `compile_error!`. The generated code names the
/// facade `::autodiff`; see [`grad_in`].
pub fn grad(args: TokenStream, item: TokenStream) -> TokenStream {
    grad_in(None, args, item)
}

/// [`grad`] for a crate that sees the facade under the name `facade` (`Some("ad")` for
/// `ad = { package = "autodiff-static", … }` in its `Cargo.toml`; `None` for `autodiff`).
/// `#[grad(crate = path)]` overrides it.
pub fn grad_in(facade: Option<&str>, args: TokenStream, item: TokenStream) -> TokenStream {
    expand::grad(krate::path(facade), args, item)
}

/// Expands `#[derive(Differentiable)]` on `item`: the trait's implementation and the
/// struct's layout macro, or a `compile_error!`.
pub fn derive_differentiable(item: TokenStream) -> TokenStream {
    derive_differentiable_in(None, item)
}

/// [`derive_differentiable`] for a crate that sees the facade under the name `facade`
/// (see [`grad_in`]); `#[differentiable(crate = path)]` on the struct overrides it.
pub fn derive_differentiable_in(facade: Option<&str>, item: TokenStream) -> TokenStream {
    derive::derive(krate::path(facade), item)
}

/// Expands a later step of `#[grad]` on a function with struct parameters: `input` is a
/// struct's layout followed by the state that asked for it (what the layout macro passes
/// to `autodiff::__private::grad_resume`).
pub fn grad_resume(input: TokenStream) -> TokenStream {
    grad_resume_in(None, input)
}

/// [`grad_resume`] for a crate that sees the facade under the name `facade` (see
/// [`grad_in`]).
pub fn grad_resume_in(facade: Option<&str>, input: TokenStream) -> TokenStream {
    expand::resume(krate::path(facade), input)
}
