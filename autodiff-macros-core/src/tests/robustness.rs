//! The expansion never panics and never emits broken code: property tests (proptest) over
//! mutations of every `#[grad]` item and derived struct of the repository's tests and
//! examples, and over random token streams.
//!
//! Each property runs `PROPTEST_CASES` cases (a few hundred to a few thousand by default,
//! see [`cases`]). The documented long run is 100,000 cases per property:
//!
//! ```sh
//! PROPTEST_CASES=100000 cargo test --release -p autodiff-macros-core robustness
//! ```
//!
//! A failure is shrunk to a small edit list and saved under `proptest-regressions/`; commit
//! that file with the fix, so that the case runs first from then on.

use crate::{derive_differentiable as derive, grad, grad_resume as resume};
use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use proptest::prelude::*;
use proptest::sample::Index;
use quote::{quote, ToTokens};
use std::path::{Path, PathBuf};

/// How many cases each property runs: `PROPTEST_CASES` if set, else `default`.
fn cases(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|cases| cases.parse().ok())
        .unwrap_or(default);
    ProptestConfig::with_cases(cases)
}

/// What the properties start from: the `#[grad]` items (attribute arguments, item) and the
/// deriving structs of the facade's tests and examples, the trybuild cases among them.
struct Corpus {
    functions: Vec<(TokenStream, TokenStream)>,
    structs: Vec<TokenStream>,
}

thread_local! {
    /// Loaded once per test thread: tokens are not `Sync`.
    static CORPUS: Corpus = load();
}

fn load() -> Corpus {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut corpus = Corpus {
        functions: Vec::new(),
        structs: Vec::new(),
    };
    let mut dirs = vec![root.join("tests"), root.join("examples")];
    while let Some(dir) = dirs.pop() {
        for path in entries(&dir) {
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let source = std::fs::read_to_string(&path).expect("a readable source file");
                if let Ok(file) = syn::parse_file(&source) {
                    collect(&file.items, &mut corpus);
                }
            }
        }
    }
    assert!(
        corpus.functions.len() > 50 && corpus.structs.len() >= 5,
        "found only {} #[grad] items and {} derived structs",
        corpus.functions.len(),
        corpus.structs.len()
    );
    corpus
}

/// The paths in `dir`, sorted (so that a case's index names the same item on every run).
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("a readable directory")
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    paths.sort();
    paths
}

/// Adds the items of `items` that carry `#[grad]` or derive `Differentiable`, without
/// that attribute, looking into inline modules and `macro_rules!` bodies.
fn collect(items: &[syn::Item], corpus: &mut Corpus) {
    for item in items {
        match item {
            syn::Item::Fn(function) => {
                let mut function = function.clone();
                if let Some(at) = function
                    .attrs
                    .iter()
                    .position(|a| a.path().is_ident("grad"))
                {
                    let args = match function.attrs.remove(at).meta {
                        syn::Meta::List(list) => list.tokens,
                        _ => TokenStream::new(),
                    };
                    corpus.functions.push((args, function.to_token_stream()));
                }
            }
            syn::Item::Impl(block) if block.attrs.iter().any(|a| a.path().is_ident("grad")) => {
                let mut block = block.clone();
                block.attrs.retain(|a| !a.path().is_ident("grad"));
                corpus
                    .functions
                    .push((TokenStream::new(), block.to_token_stream()));
            }
            syn::Item::Struct(item) => {
                let derives = item.attrs.iter().any(|a| {
                    a.path().is_ident("derive")
                        && a.to_token_stream().to_string().contains("Differentiable")
                });
                if derives {
                    let mut item = item.clone();
                    item.attrs.retain(|a| !a.path().is_ident("derive"));
                    corpus.structs.push(item.to_token_stream());
                }
            }
            syn::Item::Mod(module) => {
                if let Some((_, items)) = &module.content {
                    collect(items, corpus);
                }
            }
            syn::Item::Macro(mac) => {
                if let Ok(file) = syn::parse2::<syn::File>(mac.mac.tokens.clone()) {
                    collect(&file.items, corpus);
                }
            }
            _ => {}
        }
    }
}

/// One edit of a token stream, at a place chosen by indices (so that proptest can shrink
/// a failing case to fewer and simpler edits).
#[derive(Clone, Debug)]
enum Edit {
    /// Drop the token at the index.
    Drop(Index),
    /// Insert a copy of the second token before the first.
    Duplicate(Index, Index),
    /// Swap two tokens.
    Swap(Index, Index),
    /// Put a random token in place of the one at the index.
    Replace(Index, Token),
    /// Apply the edit inside the group that the index picks among the stream's groups
    /// (at the top level if it has none).
    Inside(Index, Box<Edit>),
}

fn edit() -> impl Strategy<Value = Edit> {
    let leaf = prop_oneof![
        any::<Index>().prop_map(Edit::Drop),
        (any::<Index>(), any::<Index>()).prop_map(|(at, from)| Edit::Duplicate(at, from)),
        (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Edit::Swap(a, b)),
        (any::<Index>(), token()).prop_map(|(at, token)| Edit::Replace(at, token)),
    ];
    leaf.prop_recursive(6, 12, 1, |inner| {
        (any::<Index>(), inner).prop_map(|(group, edit)| Edit::Inside(group, Box::new(edit)))
    })
}

fn apply(stream: TokenStream, edit: &Edit) -> TokenStream {
    let mut trees: Vec<TokenTree> = stream.into_iter().collect();
    if trees.is_empty() {
        return TokenStream::new();
    }
    match edit {
        Edit::Drop(at) => {
            trees.remove(at.index(trees.len()));
        }
        Edit::Duplicate(at, from) => {
            let copy = trees[from.index(trees.len())].clone();
            trees.insert(at.index(trees.len()), copy);
        }
        Edit::Swap(a, b) => {
            let (a, b) = (a.index(trees.len()), b.index(trees.len()));
            trees.swap(a, b);
        }
        Edit::Replace(at, token) => {
            let at = at.index(trees.len());
            trees[at] = token.tree();
        }
        Edit::Inside(group, edit) => {
            let groups: Vec<usize> = (0..trees.len())
                .filter(|&k| matches!(trees[k], TokenTree::Group(_)))
                .collect();
            if groups.is_empty() {
                return apply(trees.into_iter().collect(), edit);
            }
            let k = groups[group.index(groups.len())];
            if let TokenTree::Group(old) = &trees[k] {
                let mut new = Group::new(old.delimiter(), apply(old.stream(), edit));
                new.set_span(old.span());
                trees[k] = TokenTree::Group(new);
            }
        }
    }
    trees.into_iter().collect()
}

/// A token of the kind `#[grad]` functions are made of, or a group of such tokens.
#[derive(Clone, Debug)]
enum Token {
    Ident(&'static str),
    Punct(char, Spacing),
    Literal(&'static str),
    Group(Delimiter, Vec<Token>),
}

impl Token {
    fn tree(&self) -> TokenTree {
        match self {
            Token::Ident(name) => match name.strip_prefix("r#") {
                Some(raw) => Ident::new_raw(raw, Span::call_site()).into(),
                None => Ident::new(name, Span::call_site()).into(),
            },
            Token::Punct(c, spacing) => Punct::new(*c, *spacing).into(),
            Token::Literal(text) => text
                .parse::<Literal>()
                .expect("the literals below parse")
                .into(),
            Token::Group(delimiter, inner) => {
                Group::new(*delimiter, inner.iter().map(Token::tree).collect()).into()
            }
        }
    }
}

const IDENTS: &[&str] = &[
    "fn",
    "let",
    "mut",
    "for",
    "in",
    "if",
    "else",
    "while",
    "loop",
    "break",
    "continue",
    "return",
    "match",
    "impl",
    "struct",
    "self",
    "Self",
    "const",
    "as",
    "pub",
    "ref",
    "move",
    "unsafe",
    "async",
    "where",
    "dyn",
    "x",
    "y",
    "i",
    "n",
    "xs",
    "w",
    "acc",
    "f",
    "g",
    "f_grad",
    "f64",
    "f32",
    "usize",
    "i32",
    "u8",
    "bool",
    "Vec",
    "Option",
    "wrt",
    "grad",
    "powi",
    "powf",
    "tanh",
    "relu",
    "exp",
    "ln",
    "sqrt",
    "max",
    "min",
    "abs",
    "sin",
    "len",
    "iter",
    "iter_mut",
    "zip",
    "enumerate",
    "sum",
    "map",
    "fold",
    "push",
    "stop_gradient",
    "autodiff",
    "std",
    "core",
    "true",
    "_",
    "r#type",
    "__ad_slot",
    "__ws",
    "Differentiable",
];
const PUNCTS: &[char] = &[
    '+', '-', '*', '/', '%', '=', ';', ':', ',', '.', '&', '|', '!', '<', '>', '#', '?', '@', '^',
    '~', '$', '\'',
];
const LITERALS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "0.0",
    "0.5",
    "1.5",
    "2.0",
    "1e308",
    "1e-308",
    "4294967296",
    "18446744073709551615",
    "2.0f32",
    "3usize",
    "7i32",
    "\"s\"",
    "'c'",
    "b'x'",
];

fn token() -> impl Strategy<Value = Token> {
    let leaf = prop_oneof![
        4 => prop::sample::select(IDENTS).prop_map(Token::Ident),
        3 => (
            prop::sample::select(PUNCTS),
            prop_oneof![Just(Spacing::Alone), Just(Spacing::Joint)],
        )
            .prop_map(|(c, spacing)| Token::Punct(c, spacing)),
        2 => prop::sample::select(LITERALS).prop_map(Token::Literal),
    ];
    leaf.prop_recursive(4, 48, 8, |inner| {
        (
            prop_oneof![
                Just(Delimiter::Parenthesis),
                Just(Delimiter::Bracket),
                Just(Delimiter::Brace),
                Just(Delimiter::None),
            ],
            prop::collection::vec(inner, 0..8),
        )
            .prop_map(|(delimiter, inner)| Token::Group(delimiter, inner))
    })
}

fn stream(tokens: &[Token]) -> TokenStream {
    tokens.iter().map(Token::tree).collect()
}

/// The expansion of an item that parses as an item is a list of items (the original and
/// the generated functions, or the original and `compile_error!`): it never hands the
/// compiler tokens that do not parse. Of an item that does not parse, the tokens pass
/// through as they are, with the error.
fn assert_well_formed(item: &TokenStream, expanded: &TokenStream) {
    if syn::parse2::<syn::Item>(item.clone()).is_ok() {
        if let Err(error) = syn::parse2::<syn::File>(expanded.clone()) {
            panic!("the expansion of {item}\ndoes not parse ({error}):\n{expanded}");
        }
    }
}

proptest! {
    #![proptest_config(cases(1_000))]

    /// Mutated `#[grad]` items of the repository (tokens dropped, duplicated, swapped or
    /// replaced, at any depth), with their own or mutated attribute arguments.
    #[test]
    fn mutated_functions_expand(
        which in any::<Index>(),
        edits in prop::collection::vec(edit(), 0..6),
        args_edits in prop::collection::vec(edit(), 0..2),
    ) {
        let (args, item) = CORPUS.with(|c| c.functions[which.index(c.functions.len())].clone());
        let item = edits.iter().fold(item, apply);
        let args = args_edits.iter().fold(args, apply);
        let expanded = grad(args, item.clone());
        assert_well_formed(&item, &expanded);
    }
}

proptest! {
    #![proptest_config(cases(500))]

    /// Random bodies, attribute arguments and parameter lists under a function header,
    /// and random token streams as whole items.
    #[test]
    fn random_tokens_expand(
        args in prop::collection::vec(token(), 0..4),
        params in prop::collection::vec(token(), 0..8),
        body in prop::collection::vec(token(), 0..24),
    ) {
        let (args, params, body) = (stream(&args), stream(&params), stream(&body));
        let item = quote!(fn f(x: f64, #params) -> f64 { #body });
        let expanded = grad(args.clone(), item.clone());
        assert_well_formed(&item, &expanded);
        grad(args, body.clone());
        derive(body.clone());
        resume(body);
    }

    /// Mutated deriving structs through the derive, and the later steps of `#[grad]` on
    /// a function with struct parameters, handed (mutated, and wrong) layouts.
    #[test]
    fn mutated_structs_and_layouts_expand(
        which_struct in any::<Index>(),
        which_function in any::<Index>(),
        self_ty in prop_oneof![Just(quote!()), Just(quote!(Self)), Just(quote!(Net))],
        edits in prop::collection::vec(edit(), 0..4),
    ) {
        let layout = CORPUS.with(|c| c.structs[which_struct.index(c.structs.len())].clone());
        let mutated = edits.iter().fold(layout.clone(), apply);
        let expanded = derive(mutated.clone());
        assert_well_formed(&mutated, &expanded);
        let (args, item) =
            CORPUS.with(|c| c.functions[which_function.index(c.functions.len())].clone());
        let state = quote!([#layout] @grad [#args] [] [#self_ty] #item);
        resume(edits.iter().fold(state, apply));
    }
}

/// A field named `_` (an unstable unnamed field, which parses) is an error, not a
/// derive that writes `self._` (found by the long run of the property tests).
#[test]
fn a_field_named_underscore_is_an_error() {
    let item = quote!(struct M { pub _: f64, w: f64 });
    let expanded = derive(item.clone());
    assert_well_formed(&item, &expanded);
    assert!(expanded.to_string().contains("compile_error"), "{expanded}");
}

/// A layout that says a struct holds itself, as a mutated one can, is an error at once,
/// rather than fields unfolded 16 levels deep, twice at each (found by the property
/// tests, whose runs took minutes when a mutation made one).
#[test]
fn a_struct_that_holds_itself_is_an_error() {
    for layout in [
        quote!(
            struct Net {
                a: Net,
                b: Net,
                w: f64,
            }
        ),
        quote!(
            struct Net {
                a: Layer,
                w: f64,
            }
        ),
    ] {
        let layer = quote!(
            struct Layer {
                n: Net,
                m: Net,
            }
        );
        let item = quote!(
            fn f(m: &Net) -> f64 {
                m.w
            }
        );
        let state = quote!([#layout] @grad [] [(Layer) [#layer]] [] #item);
        let expanded = resume(state).to_string();
        assert!(
            expanded.contains("holds a field of its own type"),
            "{expanded}"
        );
    }
}

/// Attribute arguments that are not `wrt(..)` are errors, spanned, next to the function.
#[test]
fn malformed_arguments_are_errors() {
    for args in [
        quote!(wrt),
        quote!(wrt()),
        quote!(wrt(1)),
        quote!(= 3),
        quote!(wrt(x) wrt(y)),
    ] {
        let expanded = grad(
            args.clone(),
            quote!(
                fn f(x: f64) -> f64 {
                    x
                }
            ),
        );
        let text = expanded.to_string();
        assert!(
            text.contains("compile_error"),
            "`{args}` was accepted: {text}"
        );
        assert!(text.contains("fn f"), "the original is missing: {text}");
    }
}

/// Writes the corpus as the fuzz target's seed inputs (`fuzz/corpus/expand/`), one file
/// per item: the attribute's arguments on the first line, the item after it.
///
/// `cargo test -p autodiff-macros-core write_fuzz_seeds -- --ignored`
#[test]
#[ignore = "writes files: run by hand before fuzzing"]
fn write_fuzz_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/expand");
    std::fs::create_dir_all(&dir).expect("the corpus folder can be made");
    CORPUS.with(|corpus| {
        let functions = corpus.functions.iter().map(|(args, item)| (args, item));
        let empty = TokenStream::new();
        let structs = corpus.structs.iter().map(|item| (&empty, item));
        for (k, (args, item)) in functions.chain(structs).enumerate() {
            let seed = format!("{args}\n{item}");
            std::fs::write(dir.join(format!("seed-{k:04}")), seed).expect("a seed is written");
        }
    });
}
