//! The `#[grad]` attribute of the [`autodiff`](https://docs.rs/autodiff) crate. Use it
//! through the facade: `use autodiff::prelude::*;`.
//!
//! The pipeline, one module a step: `args` parses the attribute, `lower` turns the
//! function into a list of nodes (`ir`) using the table of operations (`ops`), `check`
//! finds the nodes that carry adjoints, and `codegen` emits the forward pass and the
//! reverse sweep. `expand` is the one place where errors become `compile_error!`; it also
//! runs the steps that wait for struct layouts (`layout`), which `derive` provides.
#![forbid(unsafe_code)]

mod args;
mod check;
mod codegen;
mod derive;
mod errors;
mod expand;
mod ir;
mod layout;
mod lower;
mod ops;
#[cfg(test)]
mod tests;
mod types;

/// Generates `<name>_grad`, the value and gradient of a plain `fn(f64, …) -> f64`.
///
/// See the `autodiff` crate for the full documentation.
#[proc_macro_attribute]
pub fn grad(
    args: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    expand::grad(args.into(), item.into()).into()
}

/// Derives `autodiff::Differentiable` for a struct of `f64`s, arrays, `Vec`s and other
/// such structs, so that `#[grad]` functions can take it as a parameter.
///
/// See the `autodiff` crate for the full documentation.
#[proc_macro_derive(Differentiable, attributes(differentiable))]
pub fn derive_differentiable(item: proc_macro::TokenStream) -> proc_macro::TokenStream {
    derive::derive(item.into()).into()
}

/// The step of `#[grad]` that runs once a struct's layout macro has given its fields. Not
/// a public API.
#[doc(hidden)]
#[proc_macro]
pub fn __grad_resume(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    expand::resume(input.into()).into()
}
