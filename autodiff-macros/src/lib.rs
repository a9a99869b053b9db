//! The `#[grad]` attribute of the [`autodiff`](https://docs.rs/autodiff) crate. Use it
//! through the facade: `use autodiff::prelude::*;`.
//!
//! The pipeline, one file a step: [`args`] parses the attribute, [`lower`] turns the
//! function into a list of nodes ([`ir`]) using the table of operations ([`ops`]),
//! [`check`] finds the nodes that carry adjoints, and [`codegen`] emits the forward pass and
//! the reverse sweep. [`expand`] is the one place where errors become `compile_error!`.
#![forbid(unsafe_code)]

mod args;
mod check;
mod codegen;
mod errors;
mod expand;
mod ir;
mod lower;
mod ops;
#[cfg(test)]
mod tests;

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
