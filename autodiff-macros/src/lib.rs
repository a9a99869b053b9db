//! The `#[grad]` attribute of the [`autodiff`](https://docs.rs/autodiff-static) crate. Use it
//! through the facade: `use autodiff::prelude::*;`.
//!
//! This crate is the compiler's entry point only: each macro converts its tokens and calls
//! `autodiff-macros-core`, where the expansion lives as an ordinary library.
#![forbid(unsafe_code)]

/// Generates `<name>_grad`, the value and gradient of a plain `fn(f64, …) -> f64`.
///
/// See the `autodiff` crate for the full documentation.
#[proc_macro_attribute]
pub fn grad(
    args: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    autodiff_macros_core::grad_in(facade().as_deref(), args.into(), item.into()).into()
}

/// Derives `autodiff::Differentiable` for a struct of `f64`s, arrays, `Vec`s and other
/// such structs, so that `#[grad]` functions can take it as a parameter.
///
/// See the `autodiff` crate for the full documentation.
#[proc_macro_derive(Differentiable, attributes(differentiable))]
pub fn derive_differentiable(item: proc_macro::TokenStream) -> proc_macro::TokenStream {
    autodiff_macros_core::derive_differentiable_in(facade().as_deref(), item.into()).into()
}

/// The step of `#[grad]` that runs once a struct's layout macro has given its fields. Not
/// a public API.
#[doc(hidden)]
#[proc_macro]
pub fn __grad_resume(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    autodiff_macros_core::grad_resume_in(facade().as_deref(), input.into()).into()
}

/// The name under which the crate being compiled sees the facade, from its `Cargo.toml`:
/// `Some("ad")` for `ad = { package = "autodiff-static", … }`; `None` for the library's
/// own name `autodiff` — a dependency not renamed (whose key, `autodiff-static`, is not the
/// library's name), the facade's own tests and examples, and anything the manifest does
/// not tell (then `#[grad(crate = path)]` says where it is).
fn facade() -> Option<String> {
    match proc_macro_crate::crate_name("autodiff-static") {
        Ok(proc_macro_crate::FoundCrate::Name(name))
            if name != "autodiff_static" && name != "autodiff" =>
        {
            Some(name)
        }
        _ => None,
    }
}
