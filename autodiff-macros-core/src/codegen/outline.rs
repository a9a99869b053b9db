//! Long runs of `let`s as functions of their own ("segments").
//!
//! A gradient of thousands of operations is one function of tens of thousands of
//! statements, and some of the compiler's passes take time that grows faster than the
//! length of a block: on a 5,000-operation chain, LLVM's SLP vectorizer (1.6–1.8 s, its
//! trees starting at the stores of the returned partials and growing through the long,
//! uniform chains of additions behind them) and the two-address pass of code generation.
//! So a body with more than [`MIN_LETS`] `let`s has its runs of `let`s and simple
//! statements (`a = b;`, `d_w[i] += t;`: the forward pass and the sweep outside loops and
//! branches are nothing else) cut into segments of at most [`SEGMENT`] statements, each an
//! `#[inline(never)]` function in a module of its own, beside the generated function:
//!
//! ```text
//! mod __f_grad_segment_3 {
//!     use super::*;
//!     pub(super) fn __segment_3(__segment_values_1: &[f64; 300], x0: f64) -> [f64; 10] {
//!         let [.., mut __primal_7, _] = *__segment_values_1; // values of earlier segments
//!         …the statements…
//!         [__adjoint_var_0, …]                               // what later statements name
//!     }
//! }
//! // in f_grad:
//! let __segment_values_3 = __f_grad_segment_3::__segment_3(&__segment_values_1, x0);
//! ```
//!
//! - A segment returns, in one array, the real values it binds or assigns that later
//!   statements name; a later segment takes the arrays it reads from by reference, and the
//!   values it needs from each in one array pattern (a `let` per value, with its index,
//!   took rustc longer); a statement left in the function takes a value from its array
//!   just before it needs it.
//! - It takes the function's locals it reads by value, with the types the code generator
//!   knows (`f64` values, partials and adjoints, casts `as f64`) or the parameters' types;
//!   a buffer (`&mut`) is lent, and so is a local array whose elements alone it reads or
//!   writes.
//! - Integer constants (the indices `w[k % 4]`) are bound again where needed.
//! - A segment that would need anything else (a value of unknown type, a whole local
//!   array) stays in the function as it was, and so do loops and branches.
//! - The modules: rustc compiles the functions of one module in one codegen unit, on one
//!   thread, and a gradient's segments nested in it were compiled one after the other,
//!   after the original function. In modules of their own they are compiled in parallel.
//!   A segment names what the function names through `use super::*`, which does not see
//!   the items of a function's own body: a body that defines items (or names the keyword
//!   of one anywhere, as `fn(f64) -> f64` does) keeps its segments nested in it, as
//!   before. A `#[grad]` function in another function's body whose long gradient names an
//!   item of that outer body does not compile; move the item or the function out.
//!
//! The values are the same, bit for bit, computed by the same operations in the same
//! order. What crosses from one segment to another goes through memory: the
//! 5,000-operation chain's gradient takes 6% longer to run (46.7 µs against 44.2 µs).
//!
//! Only functions with no generic parameters, outside `impl` blocks and without `self`
//! are cut: a segment sees neither the outer function's generics nor `Self`.

use super::scopes::{self, idents, Types};
use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::{format_ident, quote};
use std::collections::{HashMap, HashSet};

/// Bodies with at most this many `let`s are left as they are.
const MIN_LETS: usize = 2_000;
/// The most statements in a segment.
const SEGMENT: usize = 250;
/// Runs shorter than this stay in the function.
const MIN_SEGMENT: usize = 50;

/// What the pass needs to know of the function.
pub struct Outer<'a> {
    /// The generated function's name, which its segments' modules begin with.
    pub name: String,
    /// The float type, as the code generator writes it.
    pub real: TokenStream,
    /// The parameters' types as written, by name.
    pub params: HashMap<String, TokenStream>,
    /// The types of generated bindings (see `codegen::binding_type`).
    pub types: Types<'a>,
}

/// Whether `ty` is the float type, `real` as [`Outer::real`] writes (`:: core ::
/// primitive :: f64`), or as the user's casts do (`x as f64`).
fn is_real(ty: &TokenStream, real: &str) -> bool {
    let written = ty.to_string();
    written == real || real.rsplit(' ').next() == Some(written.as_str())
}

/// Where a value that a segment returned is: its segment's number, its index in the
/// segment's array, and its name as the statements write it (with its hygiene).
type Home = (usize, usize, Ident);

/// One piece of the body: a `let` or a simple statement, which may go into a segment, or
/// any other tokens.
enum Piece {
    Let {
        trees: std::ops::Range<usize>,
        value: std::ops::Range<usize>,
        bound: Vec<Ident>,
    },
    /// A statement without blocks that ends in `;`, such as `a = b;` or `d_w[i] += t;`,
    /// and what it assigns to (its first name, if it is followed by an assignment).
    Simple {
        trees: std::ops::Range<usize>,
        target: Option<Ident>,
    },
    Other(std::ops::Range<usize>),
}

impl Piece {
    /// Whether it may go into a segment.
    fn movable(&self) -> bool {
        !matches!(self, Piece::Other(_))
    }

    /// Its tokens.
    fn trees(&self) -> std::ops::Range<usize> {
        match self {
            Piece::Let { trees, .. } | Piece::Simple { trees, .. } | Piece::Other(trees) => {
                trees.clone()
            }
        }
    }

    /// The tokens that name values: a `let`'s value, all of other pieces.
    fn named(&self) -> std::ops::Range<usize> {
        match self {
            Piece::Let { value, .. } => value.clone(),
            piece => piece.trees(),
        }
    }
}

/// The statements of `trees[range]` as pieces: simple statements (see [`Piece::Simple`])
/// on their own, anything else in between as other tokens.
fn statements(trees: &[TokenTree], range: std::ops::Range<usize>, out: &mut Vec<Piece>) {
    let mut start = range.start;
    let mut other = range.start;
    while start < range.end {
        // A statement from here: up to the first `;` or block at this level.
        let mut end = start;
        while end < range.end
            && !matches!(&trees[end], TokenTree::Punct(p) if p.as_char() == ';')
            && !matches!(&trees[end], TokenTree::Group(g) if g.delimiter() == proc_macro2::Delimiter::Brace)
        {
            end += 1;
        }
        let simple = end < range.end
            && matches!(&trees[end], TokenTree::Punct(_))
            && matches!(&trees[start], TokenTree::Ident(i) if !is_keyword(&i.to_string()))
            && plain_value(&trees[start..end]);
        if !simple {
            start = end + 1;
            continue;
        }
        if other < start {
            out.push(Piece::Other(other..start));
        }
        out.push(Piece::Simple {
            trees: start..end + 1,
            target: assigned(&trees[start..end]),
        });
        start = end + 1;
        other = start;
    }
    if other < range.end {
        out.push(Piece::Other(other..range.end));
    }
}

/// Keywords that begin statements which are not simple ones.
fn is_keyword(word: &str) -> bool {
    matches!(
        word,
        "let"
            | "if"
            | "for"
            | "while"
            | "loop"
            | "match"
            | "unsafe"
            | "return"
            | "break"
            | "continue"
            | "fn"
            | "const"
            | "static"
            | "use"
            | "struct"
            | "enum"
            | "impl"
            | "mod"
            | "type"
            | "trait"
            | "macro_rules"
    )
}

/// The name a statement assigns to, `a` in `a = …`, `a += …` or `a[i] -= …`.
fn assigned(trees: &[TokenTree]) -> Option<Ident> {
    let TokenTree::Ident(target) = trees.first()? else {
        return None;
    };
    let mut k = 1;
    while matches!(trees.get(k), Some(TokenTree::Group(g)) if g.delimiter() == proc_macro2::Delimiter::Bracket)
    {
        k += 1;
    }
    let assignment = match (trees.get(k), trees.get(k + 1)) {
        (Some(TokenTree::Punct(p)), _)
            if p.as_char() == '=' && p.spacing() == proc_macro2::Spacing::Alone =>
        {
            true
        }
        (Some(TokenTree::Punct(p)), Some(TokenTree::Punct(q))) => {
            "+-*/%".contains(p.as_char())
                && p.spacing() == proc_macro2::Spacing::Joint
                && q.as_char() == '='
        }
        _ => false,
    };
    assignment.then(|| target.clone())
}

/// `body` with its long runs of `let`s outlined (see the module documentation): the
/// segments' functions, to put first in the body, and the body that calls them.
///
/// The segments are items of their own, beside the function (`Outlined::Beside`), unless
/// the body defines items (a segment could not name them) — then they are nested in the
/// body (`Outlined::Within`).
pub fn outline(body: TokenStream, outer: &Outer) -> (Outlined, TokenStream) {
    // Most bodies are short: counting their `let`s (at any depth) costs less than parsing
    // them.
    if scopes::count_lets(&body) <= MIN_LETS {
        return (Outlined::Within(TokenStream::new()), body);
    }
    let trees: Vec<TokenTree> = body.into_iter().collect();
    let lets = scopes::lets(&trees, outer.types);
    if lets.len() <= MIN_LETS {
        return (
            Outlined::Within(TokenStream::new()),
            trees.into_iter().collect(),
        );
    }
    // (The code generator's own constants, `const __FRAME_0: usize = …;`, do not keep the
    // segments in the body: a segment that names one stays in the function instead.)
    let mut generated = HashSet::new();
    let beside = !defines_items(&trees, &mut generated);
    let real = outer.real.to_string();

    // The pieces, in order.
    let mut pieces = Vec::new();
    let mut constants: HashMap<String, TokenStream> = HashMap::new();
    let mut next = 0;
    for l in &lets {
        let bound = match &l.moved {
            Some((bindings, types))
                if types
                    .iter()
                    .all(|t| t.as_ref().is_some_and(|t| is_real(t, &real)))
                    && plain_value(&trees[l.value.clone()]) =>
            {
                bindings.iter().map(|b| b.ident.clone()).collect()
            }
            // An integer constant (an index): a segment that names it binds it again.
            Some((bindings, _))
                if bindings.len() == 1 && constant_value(&trees[l.value.clone()], &constants) =>
            {
                let name = bindings[0].ident.to_string();
                constants.insert(name, trees[l.start..=l.end].iter().cloned().collect());
                vec![bindings[0].ident.clone()]
            }
            _ => continue,
        };
        statements(&trees, next..l.start, &mut pieces);
        pieces.push(Piece::Let {
            trees: l.start..l.end + 1,
            value: l.value.clone(),
            bound,
        });
        next = l.end + 1;
    }
    statements(&trees, next..trees.len(), &mut pieces);

    // The segments: runs of `let`s and simple statements, cut every `SEGMENT`.
    let mut segments: Vec<std::ops::Range<usize>> = Vec::new();
    let mut k = 0;
    while k < pieces.len() {
        if !pieces[k].movable() {
            k += 1;
            continue;
        }
        let start = k;
        while k < pieces.len() && pieces[k].movable() && k - start < SEGMENT {
            k += 1;
        }
        if k - start >= MIN_SEGMENT {
            segments.push(start..k);
        }
    }
    if segments.is_empty() {
        return (
            Outlined::Within(TokenStream::new()),
            trees.into_iter().collect(),
        );
    }

    // The last piece that names each name (in a value, or anywhere in other tokens).
    let mut names = Vec::new();
    let mut last_named: HashMap<String, usize> = HashMap::new();
    for (k, piece) in pieces.iter().enumerate() {
        names.clear();
        for tree in &trees[piece.named()] {
            idents(tree, &mut names);
        }
        for name in names.drain(..) {
            last_named.insert(name, k);
        }
    }

    let mut home: HashMap<String, Home> = HashMap::new();
    let mut lengths: HashMap<usize, usize> = HashMap::new();
    let mut out = TokenStream::new();
    let mut items = TokenStream::new();
    let mut k = 0;
    let mut segment_of = segments.iter().enumerate().peekable();
    // Names the function binds (or takes) before the current piece: the inputs a segment
    // may need.
    let mut locals: HashSet<String> = outer.params.keys().cloned().collect();
    while k < pieces.len() {
        if let Some((number, range)) = segment_of.peek().filter(|(_, r)| r.start == k) {
            let (number, range) = (*number, (*range).clone());
            segment_of.next();
            let known = Known {
                home: &home,
                lengths: &lengths,
                locals: &locals,
                last_named: &last_named,
                constants: &constants,
                generated: &generated,
                real: &real,
            };
            if let Some((item, call, outputs)) = segment(
                &trees,
                &pieces,
                number,
                range.clone(),
                &known,
                outer,
                beside,
            ) {
                items.extend(item);
                out.extend(call);
                for piece in &pieces[range.clone()] {
                    if let Piece::Let { bound, .. } = piece {
                        for ident in bound {
                            locals.remove(&ident.to_string());
                        }
                    }
                }
                lengths.insert(number, outputs.len());
                for (index, ident) in outputs.into_iter().enumerate() {
                    let name = ident.to_string();
                    locals.remove(&name);
                    home.insert(name, (number, index, ident));
                }
                k = range.end;
                continue;
            }
        }
        // A piece that stays: the values it names that are in segments' arrays first.
        let range = pieces[k].trees();
        names.clear();
        for tree in &trees[pieces[k].named()] {
            idents(tree, &mut names);
        }
        for name in &names {
            if constants.contains_key(name) && !locals.contains(name) {
                let mut bound = HashSet::new();
                out.extend(rebind_constant(name, &constants, &mut bound));
                locals.extend(bound);
            }
            if let Some((segment, index, ident)) = home.remove(name) {
                let values = values_ident(segment);
                // (`unused_mut` is allowed on the generated functions.)
                out.extend(quote!(let mut #ident = #values[#index];));
                locals.insert(name.clone());
            }
        }
        // What it binds is a local from here on, whatever a segment returned before.
        let mut bound = HashSet::new();
        match &pieces[k] {
            Piece::Let { bound: names, .. } => bound.extend(names.iter().map(ToString::to_string)),
            Piece::Other(range) => bound_by_lets(&trees[range.clone()], &mut bound),
            Piece::Simple { .. } => {}
        }
        for name in bound {
            home.remove(&name);
            locals.insert(name);
        }
        out.extend(trees[range].iter().cloned());
        k += 1;
    }
    let items = if beside {
        Outlined::Beside(items)
    } else {
        Outlined::Within(items)
    };
    (items, out)
}

/// The segments' items: beside the function, or within its body.
pub enum Outlined {
    Beside(TokenStream),
    Within(TokenStream),
}

/// Whether `trees` hold the keyword of an item, at any depth: a segment in a module
/// beside the function could not name an item that the function's body defines. (Also
/// true of `fn(f64) -> f64` and other types that name the keywords: the segments then
/// stay nested in the body, as they do for functions with generics.) Constants the code
/// generator declares (`const __FRAME_0`) are not counted but added to `generated`.
fn defines_items(trees: &[TokenTree], generated: &mut HashSet<String>) -> bool {
    for (k, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Ident(ident) => {
                let word = ident.to_string();
                if !matches!(
                    word.as_str(),
                    "fn" | "const"
                        | "static"
                        | "struct"
                        | "enum"
                        | "union"
                        | "use"
                        | "type"
                        | "mod"
                        | "macro_rules"
                        | "trait"
                        | "impl"
                        | "extern"
                ) {
                    continue;
                }
                match trees.get(k + 1) {
                    Some(TokenTree::Ident(name))
                        if word == "const" && name.to_string().starts_with("__") =>
                    {
                        generated.insert(name.to_string());
                    }
                    _ => return true,
                }
            }
            TokenTree::Group(group) => {
                let inner: Vec<TokenTree> = group.stream().into_iter().collect();
                if defines_items(&inner, generated) {
                    return true;
                }
            }
            _ => {}
        }
    }
    false
}

/// The array of segment `number`'s values.
fn values_ident(number: usize) -> Ident {
    format_ident!("__segment_values_{}", number, span = Span::mixed_site())
}

/// What the pass knows at a segment.
struct Known<'a> {
    /// Where each value that earlier segments returned is.
    home: &'a HashMap<String, Home>,
    /// The length of each earlier segment's array.
    lengths: &'a HashMap<usize, usize>,
    /// The names the function binds or takes before the segment.
    locals: &'a HashSet<String>,
    /// The last piece that names each name.
    last_named: &'a HashMap<String, usize>,
    /// The integer constants, by name, with their `let`s.
    constants: &'a HashMap<String, TokenStream>,
    /// The constants the code generator declares in the body (see [`defines_items`]).
    generated: &'a HashSet<String>,
    /// The float type as [`Outer::real`] writes it (a string, made once).
    real: &'a str,
}

/// Segment `number` (pieces `range`, `let`s and simple statements): the nested function,
/// its call, and the names of the values it returns, in order. `None` if it would take a
/// value it cannot (see the module documentation).
fn segment(
    trees: &[TokenTree],
    pieces: &[Piece],
    number: usize,
    range: std::ops::Range<usize>,
    known: &Known,
    outer: &Outer,
    beside: bool,
) -> Option<(TokenStream, TokenStream, Vec<Ident>)> {
    let real = &outer.real;
    // Names bound in the segment (by its `let`s, or taken and assigned to), in order.
    let mut bound: HashSet<String> = HashSet::new();
    let mut bound_in_order: Vec<Ident> = Vec::new();
    // The parameters it takes by value that are not numbers (references, arrays).
    let mut not_numbers: HashSet<String> = HashSet::new();
    // The buffers it borrows.
    let mut lent: HashSet<String> = HashSet::new();
    let mut seen: HashSet<String> = HashSet::new();
    let mut params = Vec::new();
    let mut args = Vec::new();
    let mut reads = TokenStream::new();
    // The earlier segments' arrays it reads, each with the values it takes from it.
    let mut arrays: Vec<(usize, Vec<(usize, Ident)>)> = Vec::new();
    let mut body = TokenStream::new();
    let mut found = Vec::new();
    let segment_pieces = &pieces[range.clone()];
    // Whether the segment names `name` only as `name[…]`.
    let elements_only_here = |name: &str| {
        segment_pieces
            .iter()
            .all(|p| elements_only(&trees[p.trees()], name))
    };
    for piece in segment_pieces {
        found.clear();
        names_in(&trees[piece.named()], &mut found);
        for ident in &found {
            let name = ident.to_string();
            if bound.contains(&name) || !seen.insert(name.clone()) {
                continue;
            }
            if beside && known.generated.contains(&name) {
                // A constant of the body, which a module beside the function cannot name.
                return None;
            }
            if known.constants.contains_key(&name) {
                // Bound again here (its value names only constants bound before it).
                reads.extend(rebind_constant(&name, known.constants, &mut bound));
                continue;
            }
            if let Some(&(segment, index, _)) = known.home.get(&name) {
                match arrays.iter_mut().find(|(s, _)| *s == segment) {
                    Some((_, taken)) => taken.push((index, ident.clone())),
                    None => arrays.push((segment, vec![(index, ident.clone())])),
                }
            } else if known.locals.contains(&name) {
                let ty = (outer.types)(&name).or_else(|| outer.params.get(&name).cloned())?;
                let mut leading = ty.clone().into_iter();
                let (first, second) = (leading.next(), leading.next());
                let reference = matches!(&first, Some(TokenTree::Punct(p)) if p.as_char() == '&');
                let mutable = matches!(&second, Some(TokenTree::Ident(m)) if m == "mut");
                let number = is_real(&ty, known.real);
                let parameter = outer.params.contains_key(&name);
                if reference && mutable {
                    // A buffer: lent to the segment, which adds to it.
                    params.push(quote!(#ident: #ty));
                    args.push(quote!(&mut *#ident));
                    lent.insert(name);
                } else if number || (parameter && reference) {
                    params.push(quote!(mut #ident: #ty));
                    args.push(quote!(#ident));
                    if !number {
                        not_numbers.insert(name);
                    }
                } else if !elements_only_here(&name) {
                    // An array that the segment uses whole: a method could change it
                    // unseen.
                    return None;
                } else if parameter {
                    // An array parameter, of which the segment reads elements.
                    params.push(quote!(mut #ident: #ty));
                    args.push(quote!(#ident));
                    not_numbers.insert(name);
                } else {
                    // An array local, lent: the segment reads and writes its elements.
                    let written = segment_pieces
                        .iter()
                        .any(|p| matches!(p, Piece::Simple { target: Some(t), .. } if *t == name));
                    if written {
                        params.push(quote!(#ident: &mut #ty));
                        args.push(quote!(&mut #ident));
                    } else {
                        params.push(quote!(#ident: &#ty));
                        args.push(quote!(&#ident));
                    }
                    lent.insert(name);
                }
            }
        }
        body.extend(trees[piece.trees()].iter().cloned());
        let names: Vec<&Ident> = match piece {
            Piece::Let { bound, .. } => bound.iter().collect(),
            // A value read from an array or taken, then assigned to, is returned again.
            Piece::Simple {
                target: Some(target),
                ..
            } => {
                let name = target.to_string();
                if lent.contains(&name) {
                    Vec::new()
                } else if not_numbers.contains(&name) {
                    return None;
                } else {
                    vec![target]
                }
            }
            Piece::Simple { target: None, .. } => Vec::new(),
            Piece::Other(_) => return None,
        };
        for ident in names {
            if bound.insert(ident.to_string()) {
                bound_in_order.push(ident.clone());
            }
        }
    }
    // What later pieces name.
    let outputs: Vec<&Ident> = bound_in_order
        .iter()
        .filter(|ident| !known.constants.contains_key(&ident.to_string()))
        .filter(|ident| {
            known
                .last_named
                .get(&ident.to_string())
                .is_some_and(|&k| k >= range.end)
        })
        .collect();
    let count = outputs.len();
    let array_params = arrays.iter().map(|&(segment, _)| {
        let values = values_ident(segment);
        let length = known.lengths[&segment];
        quote!(#values: &[#real; #length])
    });
    let array_args = arrays.iter().map(|&(segment, _)| {
        let values = values_ident(segment);
        quote!(&#values)
    });
    for (segment, taken) in &arrays {
        reads.extend(take(*segment, known.lengths[segment], taken));
    }
    let function = format_ident!("__segment_{}", number, span = Span::mixed_site());
    let values = values_ident(number);
    let segment = |visibility: TokenStream| {
        quote! {
            #[inline(never)]
            #[allow(unused_mut, unused_variables, unused_parens, clippy::all, clippy::pedantic, clippy::nursery)]
            #visibility fn #function(#(#array_params,)* #(#params),*) -> [#real; #count] {
                #reads
                #body
                [#(#outputs),*]
            }
        }
    };
    // Beside the function, each segment is in a module of its own: rustc compiles the
    // functions of one module in one codegen unit, on one thread; in modules of their own
    // the segments are compiled in parallel (and beside the function they are compiled
    // while the original function is).
    let (item, path) = if beside {
        let module = format_ident!(
            "__{}_segment_{}",
            outer.name,
            number,
            span = Span::mixed_site()
        );
        let segment = segment(quote!(pub(super)));
        let item = quote! {
            #[doc(hidden)]
            #[allow(unused_imports, non_snake_case, clippy::all, clippy::pedantic, clippy::nursery)]
            mod #module {
                use super::*;
                #segment
            }
        };
        (item, quote!(#module::#function))
    } else {
        (segment(TokenStream::new()), quote!(#function))
    };
    let call = quote! {
        let #values = #path(#(#array_args,)* #(#args),*);
    };
    Some((item, call, outputs.into_iter().cloned().collect()))
}

/// The `let` that takes the values `taken` (index, name) from the array of segment
/// `number`, of `length` values, by reference: one pattern, `let [_, mut a, .., mut b] =
/// *__segment_values_1;`, whose longest run of values not taken is `..`. (A `let` per
/// value, `let mut a = __segment_values_1[1];`, took rustc longer: every index is a bounds
/// check until MIR optimizations remove it.)
fn take(number: usize, length: usize, taken: &[(usize, Ident)]) -> TokenStream {
    let mut slots: Vec<Option<&Ident>> = vec![None; length];
    for (index, ident) in taken {
        slots[*index] = Some(ident);
    }
    // The longest run of values not taken, `rest`, becomes `..`.
    let mut rest = 0..0;
    let mut start = 0;
    // (A value taken past the end closes the last run.)
    for (k, taken) in slots.iter().map(Option::is_some).chain([true]).enumerate() {
        if !taken {
            continue;
        }
        if k - start > rest.len() {
            rest = start..k;
        }
        start = k + 1;
    }
    let elements = slots.iter().enumerate().filter_map(|(k, slot)| match slot {
        _ if k == rest.start && !rest.is_empty() => Some(quote!(..)),
        _ if rest.contains(&k) => None,
        Some(ident) => Some(quote!(mut #ident)),
        None => Some(quote!(_)),
    });
    let values = values_ident(number);
    quote!(let [#(#elements),*] = *#values;)
}

/// Whether every mention of `name` in `trees` is an element of it, `name[…]`.
fn elements_only(trees: &[TokenTree], name: &str) -> bool {
    trees.iter().enumerate().all(|(k, tree)| match tree {
        TokenTree::Ident(ident) if ident == name => matches!(
            trees.get(k + 1),
            Some(TokenTree::Group(g)) if g.delimiter() == proc_macro2::Delimiter::Bracket
        ),
        TokenTree::Group(group) => {
            elements_only(&group.stream().into_iter().collect::<Vec<_>>(), name)
        }
        _ => true,
    })
}

/// The `let` of constant `name`, after those of the constants its value names that are
/// not in `bound` yet; adds them all to `bound`.
fn rebind_constant(
    name: &str,
    constants: &HashMap<String, TokenStream>,
    bound: &mut HashSet<String>,
) -> TokenStream {
    let mut out = TokenStream::new();
    if !bound.insert(name.to_string()) {
        return out;
    }
    let statement = &constants[name];
    let mut names = Vec::new();
    for tree in statement.clone().into_iter().skip(3) {
        idents(&tree, &mut names);
    }
    for other in names {
        if constants.contains_key(&other) {
            out.extend(rebind_constant(&other, constants, bound));
        }
    }
    out.extend(statement.clone());
    out
}

/// Whether a `let`'s value is an integer constant: literals, operators, parentheses and
/// constants bound before.
fn constant_value(trees: &[TokenTree], constants: &HashMap<String, TokenStream>) -> bool {
    !trees.is_empty()
        && trees.iter().all(|tree| match tree {
            TokenTree::Literal(literal) => integer_literal(&literal.to_string()),
            TokenTree::Punct(p) => "+-*/%".contains(p.as_char()),
            TokenTree::Ident(ident) => constants.contains_key(&ident.to_string()),
            TokenTree::Group(g) => {
                g.delimiter() == proc_macro2::Delimiter::Parenthesis
                    && constant_value(&g.stream().into_iter().collect::<Vec<_>>(), constants)
            }
        })
}

/// Whether `text` is an integer literal written in decimal: `3`, `1_000`, `0usize`.
fn integer_literal(text: &str) -> bool {
    let digits = [
        "usize", "isize", "u8", "u16", "u32", "u64", "u128", "i8", "i16", "i32", "i64", "i128",
    ]
    .iter()
    .find_map(|suffix| text.strip_suffix(suffix))
    .unwrap_or(text);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit() || c == '_')
}

/// Whether a `let`'s value (or a simple statement) can move into another function: no
/// `return`, `break`, `continue`, `?`, `self` or `Self`, at any depth; and nothing that
/// could change a local other than by assigning to it, which the segment would not hand
/// back: no block, no `&mut`.
fn plain_value(trees: &[TokenTree]) -> bool {
    trees.iter().all(|tree| match tree {
        TokenTree::Ident(ident) => !matches!(
            ident.to_string().as_str(),
            "return" | "break" | "continue" | "self" | "Self" | "yield" | "await" | "mut"
        ),
        TokenTree::Punct(punct) => punct.as_char() != '?',
        TokenTree::Group(group) => {
            let inner: Vec<TokenTree> = group.stream().into_iter().collect();
            group.delimiter() != proc_macro2::Delimiter::Brace && plain_value(&inner)
        }
        TokenTree::Literal(_) => true,
    })
}

/// Adds the names that the `let` statements of `trees` (at its top level) bind: the
/// identifiers of each pattern, up to its type or its `=`.
fn bound_by_lets(trees: &[TokenTree], out: &mut HashSet<String>) {
    let mut k = 0;
    while k < trees.len() {
        if !scopes::let_at(trees, k) {
            k += 1;
            continue;
        }
        k += 1;
        let mut names = Vec::new();
        while k < trees.len()
            && !matches!(&trees[k], TokenTree::Punct(p) if p.as_char() == '=' || p.as_char() == ':' || p.as_char() == ';')
        {
            idents(&trees[k], &mut names);
            k += 1;
        }
        out.extend(
            names
                .into_iter()
                .filter(|name| !matches!(name.as_str(), "mut" | "ref" | "_")),
        );
    }
}

/// The identifiers that `trees` name values by, at any depth, with their spans: not
/// fields and methods (after `.`), nor the later segments of paths (after `::`). A field
/// `m.w` is not the variable `w`: taken as it, a segment would declare the variable with
/// the field's token, whose hygiene the variable's own uses do not see.
fn names_in(trees: &[TokenTree], out: &mut Vec<Ident>) {
    for (k, tree) in trees.iter().enumerate() {
        match tree {
            TokenTree::Ident(ident) => {
                let member =
                    k > 0 && matches!(&trees[k - 1], TokenTree::Punct(p) if p.as_char() == '.');
                let path = k > 1
                    && matches!(&trees[k - 1], TokenTree::Punct(p) if p.as_char() == ':')
                    && matches!(&trees[k - 2], TokenTree::Punct(p) if p.as_char() == ':' && p.spacing() == proc_macro2::Spacing::Joint);
                if !member && !path {
                    out.push(ident.clone());
                }
            }
            TokenTree::Group(group) => {
                names_in(&group.stream().into_iter().collect::<Vec<_>>(), out);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `outline` of `body` in a function of `f64`s whose parameters (all `f64`) are
    /// `params`: the segments, then the body, as one string.
    fn outline_of(body: &str, types: Types, params: &[&str]) -> String {
        let outer = Outer {
            name: "f_grad".to_string(),
            real: quote!(f64),
            params: params
                .iter()
                .map(|name| (name.to_string(), quote!(f64)))
                .collect(),
            types,
        };
        let (items, body) = outline(body.parse().unwrap(), &outer);
        match items {
            Outlined::Beside(items) => quote!(#items #body).to_string(),
            Outlined::Within(items) if items.is_empty() => body.to_string(),
            Outlined::Within(items) => format!("within: {}", quote!(#items #body)),
        }
    }

    /// `outline` of `lines` after a chain of `__p_k` values long enough to be cut, with
    /// every `__p_…`, `__a` and `__q` an `f64` and a parameter `x: f64`.
    fn outlined(lines: &str) -> String {
        let chain: String = (1..=MIN_LETS)
            .map(|k| format!("let __p_{k} = __p_{} * x;", k - 1))
            .collect();
        let types = |name: &str| {
            (name.starts_with("__p_") || name == "__a" || name == "__q").then(|| quote!(f64))
        };
        outline_of(&format!("let __p_0 = x; {chain} {lines}"), &types, &["x"])
    }

    #[test]
    fn runs_of_lets_become_segments_whose_values_cross_in_arrays() {
        let out = outlined("__p_2000");
        // 2,001 `let`s: full segments, and one of one `let`, which stays.
        let last = MIN_LETS / SEGMENT - 1;
        assert!(out.contains(&format!("fn __segment_{last}")), "{out}");
        assert!(
            !out.contains(&format!("fn __segment_{}", last + 1)),
            "{out}"
        );
        // The second segment takes the last value of the first from its array.
        assert!(
            out.contains(
                "fn __segment_1 (__segment_values_0 : & [f64 ; 1usize] , mut x : f64) -> [f64 ; 1usize]"
            ),
            "{out}"
        );
        assert!(
            out.contains(&format!(
                "let [mut __p_{}] = * __segment_values_0 ;",
                SEGMENT - 1
            )),
            "{out}"
        );
        assert!(
            out.contains(
                "let __segment_values_1 = __f_grad_segment_1 :: __segment_1 (& __segment_values_0 , x) ;"
            ),
            "{out}"
        );
        // Each in a module of its own, beside the function.
        assert!(
            out.starts_with("# [doc (hidden)] # [allow (unused_imports ,"),
            "{out}"
        );
        assert!(
            out.contains("mod __f_grad_segment_1 { use super :: * ; # [inline (never)]"),
            "{out}"
        );
        assert!(
            out.contains("pub (super) fn __segment_1 (__segment_values_0"),
            "{out}"
        );
        // The last `let` stays, and reads the last segment's value.
        assert!(
            out.ends_with(&format!(
                "let mut __p_1999 = __segment_values_{last} [0usize] ; let __p_2000 = __p_1999 * x ; __p_2000"
            )),
            "{out}"
        );
    }

    #[test]
    fn a_body_that_defines_items_keeps_its_segments_within() {
        // A module beside the function could not name `K`.
        let out = outlined("const K: f64 = 2.0; __p_2000 * K");
        assert!(out.starts_with("within: # [inline (never)]"), "{out}");
        assert!(
            out.contains("let __segment_values_1 = __segment_1 (& __segment_values_0 , x) ;"),
            "{out}"
        );
        assert!(!out.contains("mod "), "{out}");
    }

    #[test]
    fn the_code_generators_constants_leave_segments_beside_the_function() {
        let out = outlined("const __FRAME_0: usize = 4; let __q = __p_2000 * 2.0; __q");
        assert!(out.starts_with("# [doc (hidden)]"), "{out}");
        // The item keyword of a constant of the user's keeps them within.
        let out = outlined("const K: usize = 4; let __q = __p_2000 * 2.0; __q");
        assert!(out.starts_with("within: "), "{out}");
    }

    #[test]
    fn integer_literals_are_constants_and_floats_are_not() {
        for text in ["3", "1_000", "0usize", "7u32", "12i64"] {
            assert!(integer_literal(text), "{text}");
        }
        for text in ["3.0", "1e3", "2f64", "0x1e", "\"s\"", "'c'", "usize"] {
            assert!(!integer_literal(text), "{text}");
        }
    }

    #[test]
    fn a_field_is_not_the_variable_of_its_name() {
        // `q` is a local of unknown type, which a segment cannot take; `m.q` is a field of
        // the parameter `m`, and `x.q()` a method.
        let chain: String = (1..=MIN_LETS)
            .map(|k| format!("let __p_{k} = __p_{} * m.q[0] + x.q();", k - 1))
            .collect();
        let body = format!("let q = vec![1.0]; let __p_0 = x; {chain} __p_2000 + q[0]");
        let types = |name: &str| name.starts_with("__p_").then(|| quote!(f64));
        let out = outline_of(&body, &types, &["x", "m"]);
        assert!(out.contains("fn __segment_1"), "{out}");
        assert!(!out.contains("mut q :"), "{out}");
    }

    #[test]
    fn a_segment_takes_the_values_it_names_in_one_pattern() {
        let ident = |name| Ident::new(name, Span::call_site());
        let taken = [(1, ident("__a")), (4, ident("__b"))];
        // The longest run of values not taken is `..`.
        assert_eq!(
            take(3, 6, &taken).to_string(),
            "let [_ , mut __a , .. , mut __b , _] = * __segment_values_3 ;"
        );
        assert_eq!(
            take(0, 2, &[(0, ident("__a")), (1, ident("__b"))]).to_string(),
            "let [mut __a , mut __b] = * __segment_values_0 ;"
        );
        assert_eq!(
            take(0, 500, &[(499, ident("__a"))]).to_string(),
            "let [.. , mut __a] = * __segment_values_0 ;"
        );
    }

    #[test]
    fn other_statements_get_the_values_they_name_first() {
        let out = outlined("let mut __a = __p_10; __a += __p_20; __a");
        // Each value is taken from its array just before the first statement that names it.
        assert!(
            out.ends_with(
                "let mut __p_10 = __segment_values_0 [0usize] ; \
                 let mut __a = __p_10 ; \
                 let mut __p_20 = __segment_values_0 [1usize] ; \
                 __a += __p_20 ; __a"
            ),
            "{out}"
        );
        // The first segment returns the values named after it, in the order bound.
        assert!(
            out.contains(&format!("[__p_10 , __p_20 , __p_{}]", SEGMENT - 1)),
            "{out}"
        );
    }

    #[test]
    fn a_name_bound_again_outside_segments_is_not_taken_from_an_array() {
        let out = outlined("let __p_10 = 7.0; __p_10");
        assert!(out.ends_with("let __p_10 = 7.0 ; __p_10"), "{out}");
    }

    #[test]
    fn a_parameter_assigned_in_a_segment_is_returned_with_its_own_name() {
        // `x` is the user's: the value taken back from the array keeps its token.
        let chain: String = (1..=MIN_LETS)
            .map(|k| format!("let __p_{k} = __p_{} * x; x = __p_{k};", k - 1))
            .collect();
        let body = format!("let __p_0 = x; {chain} for i in 0..1 {{ x += 1.0; }} x");
        let types = |name: &str| name.starts_with("__p_").then(|| quote!(f64));
        let out = outline_of(&body, &types, &["x"]);
        let tail = &out[out.len() - 300..];
        // Two statements for each `let`: the last segment's is the one before the last.
        let last = 2 * MIN_LETS / SEGMENT - 1;
        assert!(
            out.contains(&format!(
                "fn __segment_{last} (__segment_values_{}",
                last - 1
            )),
            "{tail}"
        );
        assert!(
            out.ends_with(&format!(
                "let mut x = __segment_values_{last} [0usize] ; \
                 let mut __p_2000 = __segment_values_{last} [1usize] ; \
                 x = __p_2000 ; for i in 0 .. 1 {{ x += 1.0 ; }} x"
            )),
            "{tail}"
        );
    }

    #[test]
    fn a_segment_that_would_take_a_value_of_unknown_type_stays() {
        // `__n` has no known type: the segment that reads it stays in the function.
        let chain: String = (1..=MIN_LETS)
            .map(|k| format!("let __p_{k} = __p_{} * __n;", k - 1))
            .collect();
        let body = format!("let __n = 2.0; let __p_0 = 1.0; {chain} __p_2000");
        let types = |name: &str| name.starts_with("__p_").then(|| quote!(f64));
        let out = outline_of(&body, &types, &[]);
        assert!(!out.contains("__segment"), "{out}");
    }

    #[test]
    fn short_bodies_are_left_alone() {
        let body = "let __p_0 = x; let __p_1 = __p_0 * x; __p_1";
        let types = |_: &str| Some(quote!(f64));
        // No segments before the body, and the body as it was.
        let out = outline_of(body, &types, &[]);
        assert_eq!(out, body.parse::<TokenStream>().unwrap().to_string());
    }

    #[test]
    fn values_that_leave_the_function_stay() {
        for value in [
            "return __p_0",
            "__p_0?",
            "self.x",
            "Self::K",
            "loop { break 1.0 }",
        ] {
            let trees: Vec<TokenTree> = value.parse::<TokenStream>().unwrap().into_iter().collect();
            assert!(!plain_value(&trees), "{value}");
        }
        let trees: Vec<TokenTree> = "(__p_0 * x).sin()"
            .parse::<TokenStream>()
            .unwrap()
            .into_iter()
            .collect();
        assert!(plain_value(&trees));
    }
}
