//! Fuzzes the expansion of `#[grad]` and `#[derive(Differentiable)]`: it must return tokens
//! (code or a spanned `compile_error!`) for any input, never panic, and, for an input that
//! parses as an item, return a list of items.
//!
//! An input is text: its first line is the attribute's arguments, the rest the item. Text
//! that does not lex as Rust tokens is skipped (the compiler never hands such text to a
//! macro).
#![no_main]

use libfuzzer_sys::fuzz_target;
use proc_macro2::TokenStream;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (args, item) = text.split_once('\n').unwrap_or(("", text));
    let (Ok(args), Ok(item)) = (args.parse::<TokenStream>(), item.parse::<TokenStream>()) else {
        return;
    };
    let expanded = autodiff_macros_core::grad(args, item.clone());
    let derived = autodiff_macros_core::derive_differentiable(item.clone());
    if syn::parse2::<syn::Item>(item.clone()).is_ok() {
        for output in [&expanded, &derived] {
            if let Err(error) = syn::parse2::<syn::File>(output.clone()) {
                panic!("the expansion of {item}\ndoes not parse ({error}):\n{output}");
            }
        }
    }
    autodiff_macros_core::grad_resume(item);
});
