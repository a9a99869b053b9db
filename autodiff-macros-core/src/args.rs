//! The arguments of the attribute: `#[grad]`, `#[grad(wrt(a, c))]`, `#[grad(reassociate)]`,
//! `#[grad(parallel)]`,
//! `#[grad(jvp, jacobian, hvp, hessian)]`.

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::Ident;

/// What the attribute asked for.
#[derive(Default)]
pub struct GradArgs {
    /// `wrt(a, c)`: the parameters to differentiate, in the order of the returned partials.
    /// `None` differentiates every parameter.
    pub wrt: Option<Vec<Ident>>,
    /// `reassociate`: sums accumulated in loops may be added in another order (in
    /// interleaved partial sums), which changes their last bits and lets them run in
    /// parallel.
    pub reassociate: bool,
    /// `parallel` (its span): loops over samples run in chunks on rayon's thread pool,
    /// reduced in a fixed order (see `codegen::preaccumulate`). Implies `reassociate`.
    pub parallel: Option<proc_macro2::Span>,
    /// `jvp`: also generate forward mode, `<name>_jvp`.
    pub jvp: bool,
    /// `jacobian`: also generate the Jacobian, `<name>_jacobian` (and forward mode, which it
    /// calls).
    pub jacobian: bool,
    /// `hvp`: also generate the Hessian–vector product, `<name>_hvp`.
    pub hvp: bool,
    /// `hessian`: also generate the Hessian, `<name>_hessian`.
    pub hessian: bool,
    /// `crate = path` (or `crate = "path"`): where the generated code finds the facade
    /// crate, when Cargo's manifest does not say (see [`crate::krate`]).
    pub krate: Option<syn::Path>,
    /// `__self_derives`, added by `#[grad]` on an `impl` block to the arguments of its
    /// methods, never written by users: another method of the block differentiates `self`,
    /// so its type derives `Differentiable`, and a method that leaves `self` out with
    /// `wrt(..)` still takes it as a struct parameter (whose pullback callers pass).
    pub self_derives: bool,
}

/// Parses the attribute's arguments.
///
/// ```text
/// #[grad]                           → GradArgs { wrt: None, reassociate: false }
/// #[grad(wrt(a, c))]                → GradArgs { wrt: Some([a, c]), .. }
/// #[grad(wrt(a), reassociate)]      → GradArgs { wrt: Some([a]), reassociate: true, .. }
/// #[grad(jvp)]                      → GradArgs { jvp: true, .. }
/// #[grad(parallel)]                 → GradArgs { parallel: Some(span), .. }
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
        } else if let Some(flag) = ["jvp", "jacobian", "hvp", "hessian"]
            .into_iter()
            .find(|name| meta.path.is_ident(name))
        {
            let set = match flag {
                "jvp" => &mut args.jvp,
                "jacobian" => &mut args.jacobian,
                "hvp" => &mut args.hvp,
                _ => &mut args.hessian,
            };
            if *set {
                return Err(meta.error(format!("`{flag}` is given twice")));
            }
            *set = true;
            Ok(())
        } else if meta.path.is_ident("crate") {
            if args.krate.is_some() {
                return Err(meta.error("`crate` is given twice"));
            }
            args.krate = Some(crate::krate::parse_option(&meta)?);
            Ok(())
        } else if meta.path.is_ident("parallel") {
            if args.parallel.is_some() {
                return Err(meta.error("`parallel` is given twice"));
            }
            args.parallel = Some(syn::spanned::Spanned::span(&meta.path));
            Ok(())
        } else if meta.path.is_ident("__self_derives") {
            args.self_derives = true;
            Ok(())
        } else if meta.path.is_ident("reassociate") {
            if args.reassociate {
                return Err(meta.error("`reassociate` is given twice"));
            }
            args.reassociate = true;
            Ok(())
        } else {
            Err(meta.error(
                "unknown #[grad] argument; supported: `wrt(param, …)`, `reassociate`, `parallel`, \
                 `jvp`, `jacobian`, `hvp`, `hessian`, `crate = path`",
            ))
        }
    });
    syn::parse::Parser::parse2(parser, tokens)?;
    Ok(args)
}
