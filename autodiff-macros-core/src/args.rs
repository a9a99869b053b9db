//! The arguments of the attribute: `#[grad]` or `#[grad(wrt(a, c))]`.

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::Ident;

/// What the attribute asked for.
#[derive(Default)]
pub struct GradArgs {
    /// `wrt(a, c)`: the parameters to differentiate, in the order of the returned partials.
    /// `None` differentiates every parameter.
    pub wrt: Option<Vec<Ident>>,
}

/// Parses the attribute's arguments.
///
/// ```text
/// #[grad]              → GradArgs { wrt: None }
/// #[grad(wrt(a, c))]   → GradArgs { wrt: Some([a, c]) }
/// ```
pub fn parse(tokens: TokenStream) -> syn::Result<GradArgs> {
    let mut args = GradArgs::default();
    if tokens.is_empty() {
        return Ok(args);
    }
    let parser = syn::meta::parser(|meta: ParseNestedMeta| {
        if meta.path.is_ident("wrt") {
            if args.wrt.is_some() {
                return Err(meta.error("`wrt` is given twice"));
            }
            let mut names = Vec::new();
            meta.parse_nested_meta(|name| match name.path.get_ident() {
                Some(ident) => {
                    names.push(ident.clone());
                    Ok(())
                }
                None => Err(name.error("expected a parameter name")),
            })?;
            args.wrt = Some(names);
            Ok(())
        } else {
            Err(meta.error("unknown #[grad] argument; supported: `wrt(param, …)`"))
        }
    });
    syn::parse::Parser::parse2(parser, tokens)?;
    Ok(args)
}
