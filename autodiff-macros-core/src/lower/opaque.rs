//! Parameters of a type that `#[grad]` does not look into ("opaque constants"): an enum
//! chosen by `match op { Op::Add => x + y, … }`, a `&str` name, a setting compared with a
//! constant. They are never differentiated, and the body uses them only where nothing
//! else is read:
//!
//! - in an expression that reads no other variable (`op == Op::Add`, `name == "l2"`,
//!   `name.len()`, `matches!(op, Op::Add | Op::Sub)`, `weight(op)`), which the generated
//!   code evaluates as written, a constant;
//! - as the scrutinee of a `match` whose patterns bind nothing (`Op::Scale(_)`, not
//!   `Op::Scale(k)`), whose arms become tests `matches!(op, pattern)`.
//!
//! A parameter is opaque when its type mentions no float (not `f64`, `[f64; N]`, …; those
//! keep their errors), and it is not an integer or a `bool`. A type that may be a struct
//! (a plain path, `Op` or `Model`) is opaque only where the body names it and never reads
//! a field of it, calls a method on it or passes it to a function (what a struct
//! parameter is for):
//! this is decided on the tokens, before any layout is asked for, so an enum needs none.
//! `wrt(..)` naming the parameter makes it a struct parameter again.

use super::*;

/// Whether parameter `ident: ty` is an opaque constant in a function with `body` and the
/// attribute's `wrt` list.
pub fn is_opaque(ident: &Ident, ty: &Type, body: &syn::Block, wrt: Option<&[Ident]>) -> bool {
    if wrt.is_some_and(|names| names.contains(ident)) {
        return false;
    }
    let referenced = match ty {
        Type::Reference(reference) if reference.mutability.is_none() => &*reference.elem,
        ty => ty,
    };
    let floats = crate::types::mentions(&ty.to_token_stream(), &|i| {
        i == "f64" || i == "f32" || i == "Self"
    });
    if floats
        || is_integer(ty)
        || is_bool(ty)
        || matches!(ty, Type::Reference(r) if r.mutability.is_some())
    {
        return false;
    }
    if crate::layout::collection(referenced).is_some() {
        // A collection of structs when the body reads its elements' fields or loops
        // over it, or does not name it (with a zero partial, as a struct); else
        // (`&[Op]` of an enum) a constant.
        let body = body.to_token_stream();
        return crate::types::mentions(&body, &|name| name == ident)
            && !elements_read(ident, &body)
            && !bound_elements(ident, &body)
                .iter()
                .any(|element| elements_read(element, &body));
    }
    if matches!(referenced, Type::Tuple(_) | Type::Array(_) | Type::Slice(_)) {
        return false;
    }
    if crate::layout::struct_path(referenced).is_some() {
        // Unread, it stays a struct parameter (with a zero partial when differentiated),
        // as before constants of other types existed.
        let body = body.to_token_stream();
        return crate::types::mentions(&body, &|name| name == ident)
            && used_as_a_whole(ident, &body);
    }
    true
}

/// Whether `tokens` read the elements of the collection `ident` as structs: `ident[..].`,
/// `ident.` (a method or `.len()`), or `in ident` / `in &ident` (a loop over it).
fn elements_read(ident: &Ident, tokens: &TokenStream) -> bool {
    use proc_macro2::{Delimiter, TokenTree};
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let dot = |k: usize| matches!(trees.get(k), Some(TokenTree::Punct(p)) if p.as_char() == '.');
    trees.iter().enumerate().any(|(k, tree)| match tree {
        TokenTree::Ident(name) if name == ident => {
            let indexed = matches!(trees.get(k + 1),
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket);
            let looped = match k.checked_sub(1).and_then(|j| trees.get(j)) {
                Some(TokenTree::Ident(word)) => word == "in",
                Some(TokenTree::Punct(p)) if p.as_char() == '&' => matches!(
                    k.checked_sub(2).and_then(|j| trees.get(j)),
                    Some(TokenTree::Ident(word)) if word == "in"
                ),
                _ => false,
            };
            dot(k + 1) || (indexed && dot(k + 2)) || looped
        }
        TokenTree::Group(group) => elements_read(ident, &group.stream()),
        _ => false,
    })
}

/// The names bound to an element of `ident` by `let p = &ident[i];` (or without `&`),
/// at any depth: their fields read or methods called (`p.w`, `p.g(x)`) make `ident` a
/// collection of structs.
fn bound_elements(ident: &Ident, tokens: &TokenStream) -> Vec<Ident> {
    use proc_macro2::{Delimiter, TokenTree};
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    let mut out = Vec::new();
    for (k, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Ident(word) if word == "let" => {
                let mut at = k + 1;
                if matches!(trees.get(at), Some(TokenTree::Ident(m)) if m == "mut") {
                    at += 1;
                }
                let Some(TokenTree::Ident(name)) = trees.get(at) else {
                    continue;
                };
                let mut value = at + 1;
                if !matches!(trees.get(value), Some(TokenTree::Punct(p)) if p.as_char() == '=') {
                    continue;
                }
                value += 1;
                if matches!(trees.get(value), Some(TokenTree::Punct(p)) if p.as_char() == '&') {
                    value += 1;
                }
                let indexed = matches!(trees.get(value), Some(TokenTree::Ident(c)) if c == ident)
                    && matches!(trees.get(value + 1),
                        Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket);
                if indexed {
                    out.push(name.clone());
                }
            }
            TokenTree::Group(group) => out.extend(bound_elements(ident, &group.stream())),
            _ => {}
        }
    }
    out
}

/// Whether every use of `ident` in `tokens` is of the value as a whole: never followed by
/// `.` (a field or a method) and never an argument of a call (`f(ident)`, `.g(ident)`).
fn used_as_a_whole(ident: &Ident, tokens: &TokenStream) -> bool {
    use proc_macro2::{Delimiter, TokenTree};
    let trees: Vec<TokenTree> = tokens.clone().into_iter().collect();
    trees.iter().enumerate().all(|(k, tree)| match tree {
        TokenTree::Ident(name) if name == ident => {
            !matches!(trees.get(k + 1), Some(TokenTree::Punct(p)) if p.as_char() == '.')
        }
        TokenTree::Group(group) => {
            // `f(..)`, not `if (..)`, `while (..)` or `return (..)`.
            let call = group.delimiter() == Delimiter::Parenthesis
                && matches!(
                    k.checked_sub(1).and_then(|j| trees.get(j)),
                    Some(TokenTree::Ident(callee)) if !is_keyword(callee)
                );
            let argument = call
                && group
                    .stream()
                    .into_iter()
                    .any(|t| matches!(&t, TokenTree::Ident(n) if n == ident));
            !argument && used_as_a_whole(ident, &group.stream())
        }
        _ => true,
    })
}

/// Whether `ident` is a keyword that a parenthesized expression may follow (`if (a)`),
/// which is not a call.
fn is_keyword(ident: &Ident) -> bool {
    [
        "if", "while", "match", "return", "in", "else", "break", "let", "mut", "move", "as",
        "loop", "for", "await", "yield", "unsafe",
    ]
    .iter()
    .any(|keyword| ident == keyword)
}

impl Lowering {
    /// An expression that reads opaque constants and no other variable, evaluated as
    /// written: a constant node (a `bool` for a comparison or `matches!`).
    pub(super) fn opaque_expr(&mut self, expr: &Expr) -> Option<NodeId> {
        if !self.is_opaque_expr(expr) {
            return None;
        }
        let tokens = expr.to_token_stream();
        let num = match control::strip(expr) {
            Expr::Binary(binary) => match binary.op {
                BinOp::Eq(_)
                | BinOp::Ne(_)
                | BinOp::Lt(_)
                | BinOp::Le(_)
                | BinOp::Gt(_)
                | BinOp::Ge(_)
                | BinOp::And(_)
                | BinOp::Or(_) => Num::Bool,
                _ => Num::Unknown,
            },
            Expr::Unary(unary) if matches!(unary.op, UnOp::Not(_)) => Num::Bool,
            Expr::Macro(mac) if mac.mac.path.is_ident("matches") => Num::Bool,
            _ => Num::Unknown,
        };
        Some(self.push(NodeKind::Const(quote!((#tokens))), num, expr.span()))
    }

    /// Whether `expr` reads opaque constants and no other variable.
    pub(super) fn is_opaque_expr(&self, expr: &Expr) -> bool {
        if self.opaque.is_empty() {
            return false;
        }
        let mut reads_opaque = false;
        let only_opaque = self.variables_all(&expr.to_token_stream(), &mut |var| {
            reads_opaque = true;
            self.opaque.contains(&var)
        });
        only_opaque && reads_opaque
    }

    /// Whether `keep` holds for every variable in scope that `tokens` name (visited in
    /// order, stopping at the first that fails). Names after `.` (fields, methods) and
    /// `::` (paths) are not variables.
    pub(super) fn variables_all(
        &self,
        tokens: &TokenStream,
        keep: &mut dyn FnMut(VarId) -> bool,
    ) -> bool {
        use proc_macro2::TokenTree;
        let (mut skip, mut colon) = (false, false);
        tokens.clone().into_iter().all(|tree| {
            let (after, after_colon) = (std::mem::take(&mut skip), std::mem::take(&mut colon));
            match &tree {
                TokenTree::Punct(p) => {
                    colon = p.as_char() == ':';
                    skip = p.as_char() == '.' || (colon && after_colon);
                    true
                }
                TokenTree::Ident(ident) if !after => {
                    self.scopes.lookup(ident).is_none_or(&mut *keep)
                }
                TokenTree::Group(group) => self.variables_all(&group.stream(), keep),
                _ => true,
            }
        })
    }

    /// The test of a `match` arm on an opaque constant: `matches!(scrutinee, pattern)`,
    /// with an error under a name the pattern would bind.
    pub(super) fn opaque_pattern_test(
        &mut self,
        pat: &Pat,
        scrutinee: &TokenStream,
        span: Span,
    ) -> NodeId {
        if self.opaque_bindings(pat) {
            return self.poisoned(span);
        }
        self.push(
            NodeKind::Const(quote!(::core::matches!(#scrutinee, #pat))),
            Num::Bool,
            span,
        )
    }

    /// An error under a name that a pattern matched against an opaque constant binds;
    /// whether there was one.
    pub(super) fn opaque_bindings(&mut self, pat: &Pat) -> bool {
        let Some(binding) = binding(pat) else {
            return false;
        };
        self.errors.at(
            binding,
            format!(
                "#[grad] matches a constant of a type it does not look into against \
                 patterns that bind nothing: `{binding}` would be a value read from it; \
                 write `_` here, or compute that value outside the #[grad] function and \
                 pass it in"
            ),
        );
        true
    }

    /// The error for a read of opaque constant `ident` among other values.
    pub(super) fn opaque_read(&mut self, ident: &Ident) -> NodeId {
        self.error(
            ident,
            format!(
                "`{ident}` is a constant of a type #[grad] does not look into: use it in \
                 an expression that reads no other variable (`{ident} == …`, \
                 `matches!({ident}, …)`, a call `f({ident})`), which is computed as \
                 written, or `match` on it"
            ),
        )
    }
}

/// A name that `pat` binds, if it binds one.
fn binding(pat: &Pat) -> Option<&Ident> {
    match pat {
        Pat::Ident(ident) => match &ident.subpat {
            Some(_) => Some(&ident.ident),
            None => control::is_binding_name(&ident.ident).then_some(&ident.ident),
        },
        Pat::TupleStruct(pat) => pat.elems.iter().find_map(binding),
        Pat::Tuple(pat) => pat.elems.iter().find_map(binding),
        Pat::Slice(pat) => pat.elems.iter().find_map(binding),
        Pat::Or(pat) => pat.cases.iter().find_map(binding),
        Pat::Struct(pat) => pat.fields.iter().find_map(|field| binding(&field.pat)),
        Pat::Paren(pat) => binding(&pat.pat),
        Pat::Reference(pat) => binding(&pat.pat),
        _ => None,
    }
}
