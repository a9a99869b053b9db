//! Structs and tuples built in the body and read by field: `let p = Pair { a: x * y, b:
//! x + y };` then `p.a`, `p.b`, and `let Pair { a, b, .. } = p;`; `let t = (x * y, x + y);`
//! then `t.0`, `t.1`, and `let (a, b) = t;`.
//!
//! Before lowering, each such `let` becomes one `let` per field, `let p·a = x * y;` (a
//! name no user can write, as for the fields of struct parameters, see `fields`), nested
//! literals field by field (`p·inner·w`), and the reads `p.a` that follow in the block
//! become `p·a`. A destructuring `let` of such a local binds each name to its field's
//! local. The fields are then ordinary locals: numbers, arrays, integers, of any
//! expression the language accepts, differentiated like any other.
//!
//! A copy, `let q = p;`, is one `let` per field too. What a struct is needed for as a
//! whole otherwise (passing it to a function, returning it, calling a method on it) is one
//! error under the use. Nothing needs the struct's definition: the literal names its
//! fields.

use super::*;
use std::collections::HashMap;
use syn::visit::Visit;
use syn::visit_mut::{self, VisitMut};

/// `block` with its struct literals bound to names split into one local per field; an
/// error for each use of such a struct as a whole.
pub(super) fn scalarize(block: &syn::Block, errors: &mut Errors) -> syn::Block {
    let mut block = block.clone();
    Scalarize {
        errors,
        scope: Vec::new(),
    }
    .visit_block_mut(&mut block);
    block
}

struct Scalarize<'a> {
    errors: &'a mut Errors,
    /// The struct locals of the enclosing blocks and their fields' locals by path, as
    /// they are where the nested block being visited starts: a nested block (a loop's
    /// body) copies and destructures them as its own.
    scope: Vec<(Vec<Ident>, HashMap<String, Ident>)>,
}

/// The name of the local holding field `member` of the struct local named `base`.
fn field_local(base: &Ident, member: &syn::Member) -> Ident {
    let member = match member {
        syn::Member::Named(name) => name.to_string().trim_start_matches("r#").to_owned(),
        syn::Member::Unnamed(index) => index.index.to_string(),
    };
    let base = base.to_string();
    Ident::new(
        &format!("{}·{member}", base.trim_start_matches("r#")),
        Span::call_site(),
    )
}

impl Scalarize<'_> {
    /// `let [mut] name = literal;` as one `let` per field (nested literals field by
    /// field), with the names of the fields' locals added to `names` under their paths
    /// (`p.inner.w`).
    fn split(
        &mut self,
        name: &Ident,
        path: &str,
        mutable: bool,
        literal: &[(syn::Member, Expr)],
        names: &mut HashMap<String, Ident>,
        out: &mut Vec<syn::Stmt>,
    ) {
        for (field_member, field_expr) in literal {
            let mut local = field_local(name, field_member);
            local.set_span(field_member.span());
            let member = match field_member {
                syn::Member::Named(ident) => ident.to_string(),
                syn::Member::Unnamed(index) => index.index.to_string(),
            };
            let field_path = format!("{path}.{member}");
            if let Some(inner) = literal_fields(field_expr) {
                self.split(&local, &field_path, mutable, &inner, names, out);
                continue;
            }
            if let Some(source) = struct_local(field_expr, names) {
                // A struct local as the field (`Outer { inner, b }`): its fields' locals,
                // copied under this field's path.
                let copied = field_locals(&source, names);
                copy_fields(copied, &local, &field_path, mutable, names, out);
                continue;
            }
            let mutability = mutable.then(|| quote!(mut));
            out.push(syn::parse_quote!(let #mutability #local = #field_expr;));
            names.insert(field_path, local);
        }
    }
}

/// The locals of the fields of the struct or tuple local `source`, by their paths below
/// it (`a`, `inner.w`), in the order of those paths.
fn field_locals(source: &Ident, names: &HashMap<String, Ident>) -> Vec<(String, Ident)> {
    let prefix = format!("{source}.");
    let mut fields: Vec<(String, Ident)> = names
        .iter()
        .filter_map(|(p, l)| Some((p.strip_prefix(&prefix)?.to_owned(), l.clone())))
        .collect();
    fields.sort_by(|a, b| a.0.cmp(&b.0));
    fields
}

/// `let [mut] to·rest = from;` for each field local of `fields`, recorded in `names`
/// under `path.rest`: a copy of a struct or tuple local, field by field, under the name
/// `to` (its span that of the copies).
fn copy_fields(
    fields: Vec<(String, Ident)>,
    to: &Ident,
    path: &str,
    mutable: bool,
    names: &mut HashMap<String, Ident>,
    out: &mut Vec<syn::Stmt>,
) {
    let mutability = mutable.then(|| quote!(mut));
    let base = to.to_string();
    let base = base.trim_start_matches("r#");
    for (rest, from) in fields {
        let mut local = Ident::new(
            &format!("{base}·{}", rest.replace('.', "·")),
            Span::call_site(),
        );
        local.set_span(to.span());
        out.push(syn::parse_quote!(let #mutability #local = #from;));
        names.insert(format!("{path}.{rest}"), local);
    }
}

/// The struct local that `expr` names (`inner`), if it is one: one whose fields' locals
/// are in `names`.
fn struct_local(expr: &Expr, names: &HashMap<String, Ident>) -> Option<Ident> {
    let Expr::Path(path) = control::strip(expr) else {
        return None;
    };
    let ident = path.path.get_ident()?;
    let prefix = format!("{ident}.");
    names
        .keys()
        .any(|p| p.starts_with(&prefix))
        .then(|| ident.clone())
}

/// The struct locals named as whole field values of `literal` (`Outer { inner, b }`), at
/// any depth of nested literals: copied field by field when the literal is split.
fn field_struct_locals(literal: &[(syn::Member, Expr)], locals: &[Ident], out: &mut Vec<Ident>) {
    for (_, expr) in literal {
        if let Some(inner) = literal_fields(expr) {
            field_struct_locals(&inner, locals, out);
            continue;
        }
        if let Expr::Path(path) = control::strip(expr) {
            if let Some(ident) = path.path.get_ident().filter(|i| locals.contains(i)) {
                out.push(ident.clone());
            }
        }
    }
}

/// The fields of a literal that a `let` splits: a struct literal's without `..rest`
/// (`Type { … }`), a tuple's by position (`(a, b)`).
fn literal_fields(expr: &Expr) -> Option<Vec<(syn::Member, Expr)>> {
    match control::strip(expr) {
        Expr::Struct(literal) if literal.rest.is_none() && literal.qself.is_none() => Some(
            literal
                .fields
                .iter()
                .map(|field| (field.member.clone(), field.expr.clone()))
                .collect(),
        ),
        Expr::Tuple(tuple) if !tuple.elems.is_empty() => Some(
            tuple
                .elems
                .iter()
                .enumerate()
                .map(|(position, element)| {
                    let mut index = syn::Index::from(position);
                    index.span = element.span();
                    (syn::Member::Unnamed(index), element.clone())
                })
                .collect(),
        ),
        _ => None,
    }
}

/// The name a `let` binds with a plain name pattern (`p`, `mut p`, `p: Pair`), and
/// whether it is `mut`.
fn let_name(local: &Local) -> Option<(&Ident, bool)> {
    let pat = match &local.pat {
        Pat::Type(typed) => &*typed.pat,
        pat => pat,
    };
    match pat {
        Pat::Ident(ident) if ident.subpat.is_none() && ident.by_ref.is_none() => {
            Some((&ident.ident, ident.mutability.is_some()))
        }
        _ => None,
    }
}

/// Names bound by a pattern, at any depth.
fn bound_names(pat: &Pat, out: &mut Vec<Ident>) {
    struct Names<'a>(&'a mut Vec<Ident>);
    impl<'ast> Visit<'ast> for Names<'_> {
        fn visit_pat_ident(&mut self, ident: &'ast syn::PatIdent) {
            self.0.push(ident.ident.clone());
            syn::visit::visit_pat_ident(self, ident);
        }
    }
    Names(out).visit_pat(pat);
}

/// The uses of any of `locals` as a whole in `stmt` (a path expression naming one).
fn whole_uses(stmt: &syn::Stmt, locals: &[Ident]) -> Vec<Ident> {
    struct Uses<'a> {
        locals: &'a [Ident],
        found: Vec<Ident>,
    }
    impl<'ast> Visit<'ast> for Uses<'_> {
        // A nested block is checked on its own, where its copies and destructurings are
        // known (see `Scalarize::visit_block_mut`).
        fn visit_block(&mut self, _: &'ast syn::Block) {}

        fn visit_expr_path(&mut self, path: &'ast syn::ExprPath) {
            if let Some(ident) = path.path.get_ident() {
                if let Some(local) = self.locals.iter().find(|l| *l == ident) {
                    let mut found = local.clone();
                    found.set_span(ident.span());
                    self.found.push(found);
                }
            }
        }
    }
    let mut uses = Uses {
        locals,
        found: Vec::new(),
    };
    uses.visit_stmt(stmt);
    uses.found
}

impl VisitMut for Scalarize<'_> {
    fn visit_block_mut(&mut self, block: &mut syn::Block) {
        // The struct locals of this block so far (those of the enclosing blocks first), and
        // their fields' locals by path.
        let (mut locals, mut names) = self.scope.last().cloned().unwrap_or_default();
        let mut out = Vec::new();
        for mut stmt in std::mem::take(&mut block.stmts) {
            if !names.is_empty() {
                let no_collections = HashMap::new();
                super::fields::Rename::new(&names, &no_collections).visit_stmt_mut(&mut stmt);
            }
            if let syn::Stmt::Local(local) = &stmt {
                // `let Pair { a, b: c, .. } = p;` of a struct local.
                // `let (a, _, c) = t;` of a tuple local.
                let pattern: Option<Vec<(syn::Member, &Pat)>> = match &local.pat {
                    Pat::Struct(pattern) => Some(
                        pattern
                            .fields
                            .iter()
                            .map(|field| (field.member.clone(), &*field.pat))
                            .collect(),
                    ),
                    Pat::Tuple(pattern)
                        if !pattern.elems.iter().any(|p| matches!(p, Pat::Rest(_))) =>
                    {
                        Some(
                            pattern
                                .elems
                                .iter()
                                .enumerate()
                                .map(|(k, pat)| (syn::Member::Unnamed(syn::Index::from(k)), pat))
                                .collect(),
                        )
                    }
                    _ => None,
                };
                if let (Some(pattern), Some(init)) = (pattern, &local.init) {
                    let source = match control::strip(&init.expr) {
                        Expr::Path(path) => path.path.get_ident().cloned(),
                        _ => None,
                    };
                    if let Some(source) = source.filter(|s| locals.contains(s)) {
                        if let Some(lets) = destructure(&source, &pattern, &names) {
                            out.extend(lets);
                            continue;
                        }
                    }
                }
            }
            // `let [mut] u = t;` of a struct or tuple local: a copy, field by field.
            if let syn::Stmt::Local(local) = &stmt {
                let source = local.init.as_ref().and_then(|init| {
                    (init.diverge.is_none()).then_some(())?;
                    struct_local(&init.expr, &names)
                });
                if let (Some((name, mutable)), Some(source)) = (let_name(local), source) {
                    let name = name.clone();
                    let copied = field_locals(&source, &names);
                    // A name bound again ends the local of that name (after its fields are
                    // read: `let t = t;`).
                    if let Some(k) = locals.iter().position(|l| *l == name) {
                        locals.remove(k);
                        let own = format!("{name}.");
                        names.retain(|path, _| !path.starts_with(&own));
                    }
                    let path = name.to_string();
                    copy_fields(copied, &name, &path, mutable, &mut names, &mut out);
                    locals.push(name);
                    continue;
                }
            }
            // The nested blocks first, each with the struct locals known here.
            self.scope.push((locals.clone(), names.clone()));
            visit_mut::visit_stmt_mut(self, &mut stmt);
            self.scope.pop();
            // A struct local as a field of a literal that is split is copied, not used
            // whole.
            let mut copied = Vec::new();
            if let syn::Stmt::Local(local) = &stmt {
                let literal = local
                    .init
                    .as_ref()
                    .and_then(|init| literal_fields(&init.expr));
                if let (Some(_), Some(literal)) = (let_name(local), literal) {
                    field_struct_locals(&literal, &locals, &mut copied);
                }
            }
            for local in whole_uses(&stmt, &locals)
                .into_iter()
                .filter(|l| !copied.contains(l))
            {
                self.errors.at(
                    &local,
                    format!(
                        "`{local}` is a struct or tuple built in this function: #[grad] \
                         reads its fields (`{local}.field`, `{local}.0`), copies it \
                         (`let copy = {local};`) and destructures it, but does not pass it \
                         whole, return it or call its methods"
                    ),
                );
            }
            if let syn::Stmt::Local(local) = &stmt {
                // A name bound again ends the struct local of that name.
                let mut bound = Vec::new();
                bound_names(&local.pat, &mut bound);
                for name in &bound {
                    if let Some(k) = locals.iter().position(|l| l == name) {
                        locals.remove(k);
                        let prefix = format!("{name}.");
                        names.retain(|path, _| !path.starts_with(&prefix));
                    }
                }
                let literal = local.init.as_ref().and_then(|init| {
                    (init.diverge.is_none()).then_some(())?;
                    literal_fields(&init.expr)
                });
                if let (Some((name, mutable)), Some(literal)) = (let_name(local), literal) {
                    let name = name.clone();
                    // Fields read before the `let` are renamed already; nested blocks in
                    // the fields' expressions had their own literals split above.
                    self.split(
                        &name,
                        &name.to_string(),
                        mutable,
                        &literal,
                        &mut names,
                        &mut out,
                    );
                    locals.push(name);
                    continue;
                }
            }
            out.push(stmt);
        }
        block.stmts = out;
    }
}

/// `let Pair { a, b: c, .. } = p;` as `let a = p·a; let c = p·b;` (`let (a, c) = t;` as
/// `let a = t·0; let c = t·1;`), for fields bound to plain names (or `_`); `None` for any
/// other pattern.
fn destructure(
    source: &Ident,
    pattern: &[(syn::Member, &Pat)],
    names: &HashMap<String, Ident>,
) -> Option<Vec<syn::Stmt>> {
    let mut lets = Vec::new();
    for (member, pat) in pattern {
        let member = match member {
            syn::Member::Named(ident) => ident.to_string(),
            syn::Member::Unnamed(index) => index.index.to_string(),
        };
        let local = names.get(&format!("{source}.{member}"))?;
        match pat {
            Pat::Ident(ident) if ident.subpat.is_none() && ident.by_ref.is_none() => {
                lets.push(syn::parse_quote!(let #pat = #local;));
            }
            Pat::Wild(_) => {}
            _ => return None,
        }
    }
    Some(lets)
}
