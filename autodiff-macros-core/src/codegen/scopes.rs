//! Flat scopes for long generated functions.
//!
//! Every `let` opens a scope that lasts to the end of its block, and in a debug build
//! rustc describes each as a lexical block nested in the one before; LLVM builds that debug
//! information recursively, one stack frame per level. A function of about 3,000 `let`s
//! in a row overflows rustc's stack (a crash, not an error), and a gradient has about
//! twelve `let`s per line of the original: without this pass, the gradient of a
//! 250-line function would not compile in a debug build.
//!
//! So a block with more than [`MAX_LETS`] `let`s declares its generated bindings up
//! front, [`PER_DECLARATION`] to a `let (a, mut b, …): (f64, f64, …);`, and each
//! `let a = e;` becomes the assignment `a = e;`. The nesting falls from one level per
//! `let` to one per declaration. The machine code is the same: a deferred initialization
//! is a `let` to the compiler's optimizer.
//!
//! Only bindings that are safe to move are moved: names the code generator made (`__…`),
//! bound once in the block, not named before their `let`, in a plain pattern (a name, or
//! a tuple of names), by a `let` with no attribute and no `else`. The declarations give
//! the types that the code generator knows (the `types` it passes: real values, partials
//! and adjoints). The others (integers, saved values) keep their `let`s unless more than
//! [`MAX_UNTYPED_LETS`] of them would stay; only then are they declared as `_`. Bindings declared
//! as `_`, whose types are inferred from assignments further down, are slow to type-check:
//! with `_` for all, a 1,000-operation chain took 3.8 s instead of 0.1 s.
//! Handing bindings on
//! from blocks of their own, `let (a, b) = { …; (a, b) };`, was tried as well: its tuples
//! made rustc's MIR optimizations (the scalar replacement of aggregates) four times
//! slower on a 5,000-operation chain.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use std::collections::{HashMap, HashSet};
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, Local, Pat, Stmt, Type};

/// Blocks with at most this many `let`s are left as they are, so that the expansion of
/// ordinary functions stays easy to read; rustc crashes at about 3,000.
const MAX_LETS: usize = 1_000;
/// Bindings of unknown type keep their `let`s in blocks with at most this many of them:
/// their nesting stays well below the crash, and declaring them as `_` is slow.
const MAX_UNTYPED_LETS: usize = 2_000;
/// Bindings per up-front declaration.
const PER_DECLARATION: usize = 64;

/// The type of a generated binding, by its name, where the code generator knows it.
pub type Types<'a> = &'a dyn Fn(&str) -> Option<Type>;

/// `body` (a function body's statements and final expression), with the scopes of long
/// blocks, at any depth, flattened. A body that does not parse is returned as it is.
pub fn flatten(body: TokenStream, types: Types) -> TokenStream {
    if count_lets(&body) <= MAX_LETS {
        return body;
    }
    let Ok(mut stmts) = syn::parse::Parser::parse2(Block::parse_within, body.clone()) else {
        return body;
    };
    flatten_stmts(&mut stmts, types);
    let mut nested = Flatten(types);
    for stmt in &mut stmts {
        nested.visit_stmt_mut(stmt);
    }
    quote!(#(#stmts)*)
}

/// An upper bound on the `let`s of the longest block: all of them.
fn count_lets(tokens: &TokenStream) -> usize {
    tokens
        .clone()
        .into_iter()
        .map(|tree| match tree {
            proc_macro2::TokenTree::Ident(ident) if ident == "let" => 1,
            proc_macro2::TokenTree::Group(group) => count_lets(&group.stream()),
            _ => 0,
        })
        .sum()
}

/// Flattens every block below the top level.
struct Flatten<'a>(Types<'a>);

impl VisitMut for Flatten<'_> {
    fn visit_block_mut(&mut self, block: &mut Block) {
        syn::visit_mut::visit_block_mut(self, block);
        flatten_stmts(&mut block.stmts, self.0);
    }
}

/// One binding a `let` makes.
struct Binding {
    name: String,
    ident: syn::Ident,
    mutable: bool,
}

/// The bindings of a `let` that can be declared up front, with their types and the value
/// assigned to them; `None` if it must stay.
fn movable(local: &Local, types: Types) -> Option<(Vec<Binding>, Vec<Option<Type>>, Expr)> {
    let init = local.init.as_ref()?;
    if init.diverge.is_some() || !local.attrs.is_empty() {
        return None;
    }
    let (pat, ty) = match &local.pat {
        Pat::Type(typed) => (&*typed.pat, Some((*typed.ty).clone())),
        pat => (pat, None),
    };
    let binding = |pat: &Pat| match pat {
        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
            let name = p.ident.to_string();
            name.starts_with("__").then(|| Binding {
                name,
                ident: p.ident.clone(),
                mutable: p.mutability.is_some(),
            })
        }
        _ => None,
    };
    let bindings = match pat {
        Pat::Tuple(tuple) => tuple
            .elems
            .iter()
            .map(binding)
            .collect::<Option<Vec<_>>>()?,
        pat => vec![binding(pat)?],
    };
    // The types as written, else as the code generator knows them.
    let types = match (ty, bindings.len()) {
        (None, _) => bindings.iter().map(|b| types(&b.name)).collect(),
        (Some(ty), 1) => vec![Some(ty)],
        (Some(Type::Tuple(tuple)), n) if tuple.elems.len() == n => {
            tuple.elems.into_iter().map(Some).collect()
        }
        // A tuple pattern with a type that is not a tuple of as many: leave it.
        _ => return None,
    };
    Some((bindings, types, (*init.expr).clone()))
}

fn flatten_stmts(stmts: &mut Vec<Stmt>, types: Types) {
    let lets = stmts.iter().filter(|s| matches!(s, Stmt::Local(_))).count();
    if lets <= MAX_LETS {
        return;
    }
    // How many `let`s bind each name, and the first statement that names it.
    let mut bound: HashMap<String, usize> = HashMap::new();
    let mut first_named: HashMap<String, usize> = HashMap::new();
    for (k, stmt) in stmts.iter().enumerate() {
        if let Stmt::Local(local) = stmt {
            for name in pattern_names(&local.pat) {
                *bound.entry(name).or_default() += 1;
            }
        }
        for name in idents(&stmt.to_token_stream()) {
            first_named.entry(name).or_insert(k);
        }
    }

    // Bindings of unknown type are declared up front only where too many would stay.
    let untyped = stmts
        .iter()
        .filter(|stmt| match stmt {
            Stmt::Local(local) => {
                movable(local, types).is_some_and(|(_, types, _)| types.iter().any(Option::is_none))
            }
            _ => false,
        })
        .count();
    let inferred = untyped > MAX_UNTYPED_LETS;

    let mut declared: Vec<(Binding, Option<Type>)> = Vec::new();
    let mut rewritten = Vec::with_capacity(stmts.len());
    for (k, stmt) in std::mem::take(stmts).into_iter().enumerate() {
        let Stmt::Local(local) = &stmt else {
            rewritten.push(stmt);
            continue;
        };
        let candidate = movable(local, types).filter(|(bindings, types, init)| {
            let named_in_init: HashSet<String> = idents(&init.to_token_stream()).collect();
            (inferred || types.iter().all(Option::is_some))
                && bindings.iter().all(|b| {
                    bound[&b.name] == 1
                        && first_named[&b.name] == k
                        && !named_in_init.contains(&b.name)
                })
        });
        let Some((bindings, types, init)) = candidate else {
            rewritten.push(stmt);
            continue;
        };
        let targets: Vec<&syn::Ident> = bindings.iter().map(|b| &b.ident).collect();
        let assignment = if let [target] = &targets[..] {
            quote!(#target = #init;)
        } else {
            quote!((#(#targets),*) = #init;)
        };
        declared.extend(bindings.into_iter().zip(types));
        rewritten.push(syn::parse_quote!(#assignment));
    }

    let declarations = declared.chunks(PER_DECLARATION).map(|chunk| {
        let names = chunk.iter().map(|(b, _)| {
            let ident = &b.ident;
            if b.mutable {
                quote!(mut #ident)
            } else {
                quote!(#ident)
            }
        });
        let types = chunk.iter().map(|(_, ty)| match ty {
            Some(ty) => ty.to_token_stream(),
            None => quote!(_),
        });
        let declaration: Stmt = syn::parse_quote!(let (#(#names,)*): (#(#types,)*););
        declaration
    });
    // The declarations, then the statements (an item such as a `const`, which a type
    // may name, is visible in its whole block wherever it stands).
    let mut out: Vec<Stmt> = declarations.collect();
    out.extend(rewritten);
    *stmts = out;
}

/// The names a pattern binds.
fn pattern_names(pat: &Pat) -> Vec<String> {
    struct Names(Vec<String>);
    impl<'a> syn::visit::Visit<'a> for Names {
        fn visit_pat_ident(&mut self, p: &'a syn::PatIdent) {
            self.0.push(p.ident.to_string());
            syn::visit::visit_pat_ident(self, p);
        }
    }
    let mut names = Names(Vec::new());
    syn::visit::Visit::visit_pat(&mut names, pat);
    names.0
}

/// Every identifier in `tokens`, at any depth.
fn idents(tokens: &TokenStream) -> impl Iterator<Item = String> {
    let mut out = Vec::new();
    let mut stack = vec![tokens.clone()];
    while let Some(tokens) = stack.pop() {
        for tree in tokens {
            match tree {
                proc_macro2::TokenTree::Ident(ident) => out.push(ident.to_string()),
                proc_macro2::TokenTree::Group(group) => stack.push(group.stream()),
                _ => {}
            }
        }
    }
    out.into_iter()
}
