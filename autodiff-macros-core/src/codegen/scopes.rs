//! Flat scopes for long generated functions.
//!
//! Every `let` opens a scope that lasts to the end of its block, and in a debug build
//! rustc describes each as a lexical block nested in the one before; LLVM builds that debug
//! information recursively, one stack frame per level. A function of about 3,000 `let`s
//! in a row overflows rustc's stack (a crash, not an error, in any build with debug
//! information), and a long gradient has several `let`s per operation of the original.
//!
//! So a block with more than [`MAX_LETS`] `let`s declares its generated bindings up
//! front, [`PER_DECLARATION`] to a `let (a, mut b, …): (f64, f64, …);`, and each
//! `let a = e;` becomes the assignment `a = e;`. The nesting falls from one level per
//! `let` to one per declaration. The machine code is the same: a deferred initialization
//! is a `let` to the compiler's optimizer.
//!
//! Only bindings that are safe to move are moved: names the code generator made (`__…`),
//! not named before their first `let` nor in its value, in a plain pattern (a name, or a
//! tuple of names), by a `let` with no attribute and no `else`. A name bound again in the
//! block (the sweep's `let mut a = a + t;`) is moved only if all its `let`s are, and each
//! of them then declares a name of its own, `a__1`, `a__2`, …, which the statements up to
//! the next one name instead of `a` (`Versions`). The declarations give
//! the types that the code generator knows (the `types` it passes: real values, partials
//! and adjoints). The others (integers, saved values) keep their `let`s unless more than
//! [`MAX_UNTYPED_LETS`] of them would stay; only then are they declared as `_`. Bindings
//! declared as `_`, whose types are inferred from assignments further down, are slow to
//! type-check: with `_` for all, a 1,000-operation chain took 3.8 s instead of 0.1 s.
//! Handing bindings on from blocks of their own, `let (a, b) = { …; (a, b) };`, was
//! tried as well: its tuples made rustc's MIR optimizations (the scalar replacement of
//! aggregates) four times slower on a 5,000-operation chain.
//!
//! The pass works on the tokens, statement by statement, rather than on a `syn` tree:
//! procedural macros run unoptimized in release builds (cargo's default), and parsing a
//! long gradient again took longer than generating it (6 s of a 5,000-operation chain's
//! expansion).

use proc_macro2::{Delimiter, Group, Ident, Spacing, TokenStream, TokenTree};
use quote::{quote, ToTokens};
use std::collections::{HashMap, HashSet};

/// Blocks with at most this many `let`s are left as they are, so that the expansion of
/// ordinary functions stays easy to read; rustc crashes at about 3,000.
const MAX_LETS: usize = 1_000;
/// Bindings of unknown type keep their `let`s in blocks with at most this many of them:
/// their nesting stays well below the crash, and declaring them as `_` is slow.
const MAX_UNTYPED_LETS: usize = 2_000;
/// Bindings per up-front declaration.
const PER_DECLARATION: usize = 64;

/// The type of a generated binding, by its name, where the code generator knows it.
pub type Types<'a> = &'a dyn Fn(&str) -> Option<TokenStream>;

/// `body` (a function body's statements and final expression), with the scopes of long
/// blocks, at any depth, flattened.
pub fn flatten(body: TokenStream, types: Types) -> TokenStream {
    if count_lets(&body) <= MAX_LETS {
        return body;
    }
    flatten_block(body, types)
}

/// An upper bound on the `let`s of the longest block: all of them.
pub(super) fn count_lets(tokens: &TokenStream) -> usize {
    tokens
        .clone()
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Ident(ident) if ident == "let" => 1,
            TokenTree::Group(group) => count_lets(&group.stream()),
            _ => 0,
        })
        .sum()
}

/// The statements of a block (or of any group), with long blocks inside flattened, then
/// this one.
fn flatten_block(stream: TokenStream, types: Types) -> TokenStream {
    let trees: Vec<TokenTree> = stream
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Group(group) if count_lets(&group.stream()) > MAX_LETS => {
                let mut flat = Group::new(group.delimiter(), flatten_block(group.stream(), types));
                flat.set_span(group.span());
                TokenTree::Group(flat)
            }
            tree => tree,
        })
        .collect();
    flatten_statements(trees, types)
}

/// One binding a `let` makes.
pub(super) struct Binding {
    pub(super) ident: Ident,
    mutable: bool,
}

/// A `let` of the block: where it is, what it binds, with which types, and its value.
pub(super) struct Let {
    /// Its first and last token (the `let` and the `;`).
    pub(super) start: usize,
    pub(super) end: usize,
    /// Its bindings, with their types; `None` if it must stay as it is.
    pub(super) moved: Option<(Vec<Binding>, Vec<Option<TokenStream>>)>,
    /// Whether its pattern is a tuple.
    tuple: bool,
    /// The tokens of its value, between `=` and `;`.
    pub(super) value: std::ops::Range<usize>,
}

impl Let {
    /// Whether it would move a binding whose type the code generator does not know.
    fn untyped(&self) -> bool {
        self.moved
            .as_ref()
            .is_some_and(|(_, types)| types.iter().any(Option::is_none))
    }
}

fn is_punct(tree: &TokenTree, c: char) -> bool {
    matches!(tree, TokenTree::Punct(p) if p.as_char() == c)
}

/// Whether `trees[k]` is a `let` that begins a statement (first, after `;` or after a
/// block).
pub(super) fn let_at(trees: &[TokenTree], k: usize) -> bool {
    let statement_start = k == 0
        || is_punct(&trees[k - 1], ';')
        || matches!(&trees[k - 1], TokenTree::Group(g) if g.delimiter() == Delimiter::Brace);
    statement_start && matches!(&trees[k], TokenTree::Ident(i) if i == "let")
}

/// The `let`s that begin statements of `trees` (after `;`, after a block, or first).
pub(super) fn lets(trees: &[TokenTree], types: Types) -> Vec<Let> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < trees.len() {
        if !let_at(trees, start) {
            start += 1;
            continue;
        }
        let Some(end) = (start..trees.len()).find(|&k| is_punct(&trees[k], ';')) else {
            break;
        };
        out.push(parse_let(trees, start, end, types));
        start = end + 1;
    }
    out
}

/// The `let` of `trees[start..=end]`.
fn parse_let(trees: &[TokenTree], start: usize, end: usize, types: Types) -> Let {
    let stays = |value| Let {
        start,
        end,
        moved: None,
        tuple: false,
        value,
    };
    // The `=` that ends the pattern and its type (neither holds one).
    let Some(equals) = (start + 1..end).find(|&k| {
        matches!(&trees[k], TokenTree::Punct(p) if p.as_char() == '=' && p.spacing() == Spacing::Alone)
    }) else {
        return stays(end..end);
    };
    let value = equals + 1..end;
    let has_else = trees[value.clone()]
        .iter()
        .any(|t| matches!(t, TokenTree::Ident(i) if i == "else"));
    let head = &trees[start + 1..equals];
    let colon = head.iter().position(|t| is_punct(t, ':'));
    let (pattern, written) = match colon {
        Some(k) => (&head[..k], Some(&head[k + 1..])),
        None => (head, None),
    };
    let (bindings, tuple) = match pattern {
        [TokenTree::Group(g)] if g.delimiter() == Delimiter::Parenthesis => {
            let trees: Vec<TokenTree> = g.stream().into_iter().collect();
            let elements: Option<Vec<Binding>> = trees
                .split(|t| is_punct(t, ','))
                .filter(|element| !element.is_empty())
                .map(binding)
                .collect();
            (elements, true)
        }
        pattern => (binding(pattern).map(|b| vec![b]), false),
    };
    let Some(bindings) = bindings.filter(|_| !has_else) else {
        return stays(value);
    };
    // The types as written, else as the code generator knows them.
    let known = match (written, tuple) {
        (None, _) => bindings
            .iter()
            .map(|b| types(&b.ident.to_string()))
            .collect(),
        (Some(ty), false) => vec![Some(ty.iter().cloned().collect())],
        (Some([TokenTree::Group(g)]), true) if g.delimiter() == Delimiter::Parenthesis => {
            let trees: Vec<TokenTree> = g.stream().into_iter().collect();
            let parts: Vec<Option<TokenStream>> = trees
                .split(|t| is_punct(t, ','))
                .filter(|part| !part.is_empty())
                .map(|part| Some(part.iter().cloned().collect()))
                .collect();
            if parts.len() != bindings.len() {
                return stays(value);
            }
            parts
        }
        (Some(_), true) => return stays(value),
    };
    Let {
        start,
        end,
        moved: Some((bindings, known)),
        tuple,
        value,
    }
}

/// A name the code generator made (`__…`), with or without `mut`.
fn binding(pattern: &[TokenTree]) -> Option<Binding> {
    let (mutable, ident) = match pattern {
        [TokenTree::Ident(m), TokenTree::Ident(ident)] if m == "mut" => (true, ident),
        [TokenTree::Ident(ident)] => (false, ident),
        _ => return None,
    };
    ident.to_string().starts_with("__").then(|| Binding {
        ident: ident.clone(),
        mutable,
    })
}

/// Every identifier in `tree`, at any depth.
pub(super) fn idents(tree: &TokenTree, out: &mut Vec<String>) {
    match tree {
        TokenTree::Ident(ident) => out.push(ident.to_string()),
        TokenTree::Group(group) => {
            for tree in group.stream() {
                idents(&tree, out);
            }
        }
        _ => {}
    }
}

fn flatten_statements(trees: Vec<TokenTree>, types: Types) -> TokenStream {
    let mut lets = lets(&trees, types);
    if lets.len() <= MAX_LETS {
        return trees.into_iter().collect();
    }
    // How many `let`s bind each name, and the first token that names it.
    let mut bound: HashMap<String, usize> = HashMap::new();
    for l in &lets {
        for b in l.moved.iter().flat_map(|(bindings, _)| bindings) {
            *bound.entry(b.ident.to_string()).or_default() += 1;
        }
    }
    let mut first_named: HashMap<String, usize> = HashMap::new();
    let mut names = Vec::new();
    for (k, tree) in trees.iter().enumerate() {
        names.clear();
        idents(tree, &mut names);
        for name in names.drain(..) {
            first_named.entry(name).or_insert(k);
        }
    }
    // A binding stays where it is if it is named before its first `let` or in that
    // `let`'s own value. A name bound again (`let mut a = a + t;`, as the sweep does) is
    // moved only if all its `let`s are: each gets a name of its own (`versions`).
    let mut first_let: HashMap<String, usize> = HashMap::new();
    let mut fixed: HashSet<String> = HashSet::new();
    for l in &lets {
        match &l.moved {
            Some((bindings, _)) => {
                for b in bindings {
                    first_let.entry(b.ident.to_string()).or_insert(l.start);
                }
            }
            None => {
                // A pattern this pass does not move: whatever it binds stays.
                let mut pattern = Vec::new();
                for tree in &trees[l.start..l.value.start] {
                    idents(tree, &mut pattern);
                }
                fixed.extend(pattern);
            }
        }
    }
    for l in &mut lets {
        names.clear();
        for tree in &trees[l.value.clone()] {
            idents(tree, &mut names);
        }
        let safe = l.moved.as_ref().is_some_and(|(bindings, _)| {
            bindings.iter().all(|b| {
                let name = b.ident.to_string();
                let first = first_let[&name];
                !fixed.contains(&name)
                    && first_named[&name] > first
                    && (first < l.start || !names.contains(&name))
            })
        });
        if !safe {
            for b in l.moved.iter().flat_map(|(bindings, _)| bindings) {
                fixed.insert(b.ident.to_string());
            }
            l.moved = None;
        }
    }
    // A binding of a name that stays (another of its `let`s is unsafe) stays too.
    for l in &mut lets {
        let stays = l.moved.as_ref().is_some_and(|(bindings, _)| {
            bindings
                .iter()
                .any(|b| fixed.contains(&b.ident.to_string()))
        });
        if stays {
            l.moved = None;
        }
    }
    // Bindings of unknown type are declared up front only where too many would stay.
    if lets.iter().filter(|l| l.untyped()).count() <= MAX_UNTYPED_LETS {
        for l in &mut lets {
            if l.untyped() {
                l.moved = None;
            }
        }
    }

    let mut declared: Vec<(Binding, Option<TokenStream>)> = Vec::new();
    let mut body = TokenStream::new();
    let mut next = 0;
    let mut versions = Versions::new(&bound);
    for l in lets {
        let Some((bindings, types)) = l.moved else {
            continue;
        };
        body.extend(versions.rename(&trees[next..l.start]));
        // The value names the binding before this one.
        let value = versions.rename(&trees[l.value]);
        let bindings: Vec<Binding> = bindings
            .into_iter()
            .map(|b| Binding {
                ident: versions.bind(&b.ident),
                mutable: b.mutable,
            })
            .collect();
        let targets: Vec<&Ident> = bindings.iter().map(|b| &b.ident).collect();
        body.extend(if l.tuple {
            quote!((#(#targets),*) = #value;)
        } else {
            quote!(#(#targets)* = #value;)
        });
        declared.extend(bindings.into_iter().zip(types));
        next = l.end + 1;
    }
    body.extend(versions.rename(&trees[next..]));

    // The declarations, then the statements (an item such as a `const`, which a type may
    // name, is visible in its whole block wherever it stands).
    let mut out = TokenStream::new();
    for chunk in declared.chunks(PER_DECLARATION) {
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
        out.extend(quote!(let (#(#names,)*): (#(#types,)*);));
    }
    out.extend(body);
    out
}

/// The names of the bindings of a name bound more than once in a block: the `k`-th
/// `let` of `a` binds `a__k` (from 1), and the statements up to the next one name that.
/// A name bound once keeps its name.
struct Versions<'a> {
    /// How many `let`s bind each name.
    bound: &'a HashMap<String, usize>,
    /// The binding in scope, for each name bound again, and how many so far.
    current: HashMap<String, (Ident, usize)>,
}

impl<'a> Versions<'a> {
    fn new(bound: &'a HashMap<String, usize>) -> Self {
        Versions {
            bound,
            current: HashMap::new(),
        }
    }

    /// The name that a new `let` of `ident` binds.
    fn bind(&mut self, ident: &Ident) -> Ident {
        let name = ident.to_string();
        if self.bound.get(&name).copied().unwrap_or(0) < 2 {
            return ident.clone();
        }
        let count = self.current.get(&name).map_or(1, |(_, count)| count + 1);
        let version = Ident::new(&format!("{name}__{count}"), ident.span());
        self.current.insert(name, (version.clone(), count));
        version
    }

    /// `trees` with every name bound again replaced by the binding in scope.
    fn rename(&self, trees: &[TokenTree]) -> TokenStream {
        if self.current.is_empty() {
            return trees.iter().cloned().collect();
        }
        trees.iter().map(|tree| self.rename_tree(tree)).collect()
    }

    fn rename_tree(&self, tree: &TokenTree) -> TokenTree {
        match tree {
            TokenTree::Ident(ident) => match self.current.get(&ident.to_string()) {
                Some((version, _)) => TokenTree::Ident(version.clone()),
                None => tree.clone(),
            },
            TokenTree::Group(group) => {
                let stream = group
                    .stream()
                    .into_iter()
                    .map(|t| self.rename_tree(&t))
                    .collect();
                let mut renamed = Group::new(group.delimiter(), stream);
                renamed.set_span(group.span());
                TokenTree::Group(renamed)
            }
            tree => tree.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `flatten` of `lines` after enough filler `let`s to be flattened, with every
    /// binding typed `f64`, as a string without the filler.
    fn flattened(lines: &str) -> String {
        let filler: String = (0..MAX_LETS)
            .map(|k| format!("let __fill_{k} = 0.0;"))
            .collect();
        let body: TokenStream = format!("{filler} {lines}").parse().unwrap();
        let out = flatten(body, &|_| Some(quote!(f64))).to_string();
        let start = out.find("__fill_999 = 0.0 ;").expect("the filler is moved") + 18;
        out[start..].trim().to_string()
    }

    #[test]
    fn a_name_bound_again_gets_a_name_per_binding() {
        let out = flattened(
            "let mut __a = 1.0; let __b = __a * 2.0; let mut __a = __a + __b; \
             for i in 0..3 { __a += 1.0; } let mut __a = __a - 1.0; (__a, __b)",
        );
        assert_eq!(
            out,
            "__a__1 = 1.0 ; __b = __a__1 * 2.0 ; __a__2 = __a__1 + __b ; \
             for i in 0 .. 3 { __a__2 += 1.0 ; } __a__3 = __a__2 - 1.0 ; (__a__3 , __b)"
        );
    }

    #[test]
    fn a_name_bound_again_is_declared_once_per_binding() {
        let body: TokenStream = format!(
            "{} let mut __a = 1.0; let mut __a = __a + 1.0; __a",
            (0..MAX_LETS)
                .map(|k| format!("let __fill_{k} = 0.0;"))
                .collect::<String>()
        )
        .parse()
        .unwrap();
        let out = flatten(body, &|_| Some(quote!(f64))).to_string();
        assert!(out.contains("mut __a__1 , mut __a__2 ,"), "{out}");
        assert!(!out.contains("let mut __a"), "{out}");
    }

    #[test]
    fn a_name_named_before_its_first_binding_keeps_its_lets() {
        // `__a` names a binding from outside the block before the block binds it.
        let out = flattened("let __c = __a; let mut __a = __c + 1.0; let mut __a = __a * 2.0; __a");
        assert_eq!(
            out,
            "__c = __a ; let mut __a = __c + 1.0 ; let mut __a = __a * 2.0 ; __a"
        );
    }

    #[test]
    fn a_name_with_a_binding_that_stays_keeps_all_its_lets() {
        // The second `let` of `__a` has an `else`, so it stays, and so does the first.
        let out = flattened("let __a = 1.0; let Some(__a) = Some(__a) else { return; }; __a");
        assert!(out.starts_with("let __a = 1.0 ;"), "{out}");
    }
}
