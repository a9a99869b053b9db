//! placeholder
use proc_macro::TokenStream;
/// placeholder
#[proc_macro_attribute]
pub fn grad(_args: TokenStream, item: TokenStream) -> TokenStream { item }
