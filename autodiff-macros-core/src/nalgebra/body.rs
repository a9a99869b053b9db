//! The body rewritten in arrays: each value of a nalgebra type becomes the array that
//! stands for it ([`Shape::array_type`]), and each operation on such values the code
//! that computes it element by element, which the pipeline differentiates as it does any
//! code over arrays.
//!
//! Operations whose sizes are integers are written out (`a + b` of two `Vector3`s is
//! `[a[0] + b[0], a[1] + b[1], a[2] + b[2]]`); with a size named by a const generic
//! parameter they are loops that fill a local array. An operand that is not a name is
//! first bound to one by a `let` before the statement (so it is computed once); inside
//! a `while` condition, evaluated again at each turn, that is an error.

use super::shape::Shape;
use crate::errors::Errors;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, ToTokens};
use std::collections::HashMap;
use syn::visit_mut::VisitMut;
use syn::{BinOp, Block, Expr, Ident, Pat, Stmt, Type, UnOp};

/// What an iterator yields: one value (of a shape, or `None` for anything else), or a
/// pair (`enumerate`, `zip`).
enum Yield {
    One(Option<Shape>),
    Pair(Box<Yield>, Box<Yield>),
}

/// Sizes up to this are written out; larger ones, and sizes named by constants, are loops.
const WRITTEN_OUT: usize = 16;

/// Dot products and norms of integer sizes up to this are written out in nalgebra's order
/// of additions (so their values are nalgebra's bit for bit).
const WRITTEN_OUT_SUMS: usize = 256;

/// The rewriting of one function's body.
pub struct Rewriter {
    /// The type of the numbers (`f64`).
    real: Type,
    /// The shapes of the variables in scope, innermost scope last.
    scopes: Vec<HashMap<String, Shape>>,
    /// The parameters that are slices of nalgebra values, with their elements' shape.
    slices: HashMap<String, Shape>,
    /// What cannot be rewritten.
    pub errors: Errors,
    /// How many temporaries and loop variables have been named.
    counter: usize,
}

/// Statements to place before the statement being rewritten, or `None` where there is no
/// such place (a `while` condition).
type Pre = Option<Vec<Stmt>>;

impl Rewriter {
    /// A rewriter whose outer scope holds the parameters' shapes.
    pub fn new(
        real: Type,
        params: HashMap<String, Shape>,
        slices: HashMap<String, Shape>,
    ) -> Rewriter {
        Rewriter {
            real,
            scopes: vec![params],
            slices,
            errors: Errors::default(),
            counter: 0,
        }
    }

    fn fresh(&mut self, stem: &str) -> Ident {
        self.counter += 1;
        format_ident!("__nalgebra_{}_{}", stem, self.counter)
    }

    fn lookup(&self, name: &str) -> Shape {
        self.scopes
            .iter()
            .rev()
            .find_map(|scope| scope.get(name))
            .cloned()
            .unwrap_or(Shape::Scalar)
    }

    fn bind(&mut self, name: String, shape: Shape) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.insert(name, shape);
        }
    }

    /// The element shape of `expr` if it names a slice of nalgebra values (`pts`, `&pts`,
    /// `*pts`), and that slice is not shadowed.
    fn slice_of(&self, expr: &Expr) -> Option<Shape> {
        let expr = match expr {
            Expr::Reference(reference) => &*reference.expr,
            Expr::Paren(paren) => &*paren.expr,
            Expr::Unary(unary) if matches!(unary.op, UnOp::Deref(_)) => &*unary.expr,
            expr => expr,
        };
        let Expr::Path(path) = expr else {
            return None;
        };
        let name = path.path.get_ident()?.to_string();
        let shadowed = self
            .scopes
            .iter()
            .skip(1)
            .any(|scope| scope.contains_key(&name));
        if shadowed {
            return None;
        }
        self.slices.get(&name).cloned()
    }

    /// What an iterator yields, position by position of the tuples it yields: for an
    /// iterator over a slice of nalgebra values (`pts`, `pts.iter()`, `.copied()`,
    /// `.enumerate()`, `.zip(..)`, `.rev()`, `.skip(n)`, …), the element shape where an
    /// element is. `None` for any other iterator.
    fn yields(&self, expr: &Expr) -> Option<Yield> {
        if let Some(shape) = self.slice_of(expr) {
            return Some(Yield::One(Some(shape)));
        }
        let Expr::MethodCall(call) = expr else {
            return None;
        };
        let inner = self.yields(&call.receiver);
        match call.method.to_string().as_str() {
            "iter" | "into_iter" | "copied" | "cloned" | "rev" | "skip" | "take" | "step_by"
            | "filter" => inner,
            "enumerate" => Some(Yield::Pair(
                Box::new(Yield::One(None)),
                Box::new(inner.unwrap_or(Yield::One(None))),
            )),
            "zip" => {
                let other = call.args.first().and_then(|arg| self.yields(arg));
                if inner.is_none() && other.is_none() {
                    return None;
                }
                Some(Yield::Pair(
                    Box::new(inner.unwrap_or(Yield::One(None))),
                    Box::new(other.unwrap_or(Yield::One(None))),
                ))
            }
            _ => None,
        }
    }

    /// Binds every name of `pat` as a number (shadowing a nalgebra value of that name).
    fn bind_numbers(&mut self, pat: &Pat) {
        struct Names(Vec<String>);
        impl<'ast> syn::visit::Visit<'ast> for Names {
            fn visit_pat_ident(&mut self, ident: &'ast syn::PatIdent) {
                self.0.push(ident.ident.to_string());
                syn::visit::visit_pat_ident(self, ident);
            }
        }
        let mut names = Names(Vec::new());
        syn::visit::Visit::visit_pat(&mut names, pat);
        for name in names.0 {
            self.bind(name, Shape::Scalar);
        }
    }

    /// Binds the names of `pat` to the shapes `yielded` gives them, in the current scope.
    fn bind_pattern(&mut self, pat: &Pat, yielded: &Yield) {
        match (pat, yielded) {
            (Pat::Reference(reference), _) => self.bind_pattern(&reference.pat, yielded),
            (Pat::Type(typed), _) => self.bind_pattern(&typed.pat, yielded),
            (Pat::Paren(paren), _) => self.bind_pattern(&paren.pat, yielded),
            (Pat::Ident(ident), Yield::One(Some(shape))) => {
                self.bind(ident.ident.to_string(), shape.clone());
            }
            (Pat::Tuple(tuple), Yield::Pair(first, second)) if tuple.elems.len() == 2 => {
                self.bind_pattern(&tuple.elems[0], first);
                self.bind_pattern(&tuple.elems[1], second);
            }
            _ => {}
        }
    }

    /// Rewrites a block in place, in a scope of its own; the shape of its tail value.
    pub fn block(&mut self, block: &mut Block) -> Shape {
        self.scopes.push(HashMap::new());
        let mut out = Vec::with_capacity(block.stmts.len());
        let mut tail = Shape::Scalar;
        for stmt in std::mem::take(&mut block.stmts) {
            let is_tail = matches!(stmt, Stmt::Expr(_, None));
            let (mut stmts, shape) = self.stmt(stmt);
            if is_tail {
                tail = shape;
            }
            out.append(&mut stmts);
        }
        block.stmts = out;
        self.scopes.pop();
        tail
    }

    /// One statement: what it becomes, preceded by the statements its operands need.
    fn stmt(&mut self, stmt: Stmt) -> (Vec<Stmt>, Shape) {
        let mut pre = Some(Vec::new());
        match stmt {
            Stmt::Local(mut local) => {
                let declared = match &mut local.pat {
                    Pat::Type(typed) => {
                        let declared = super::shape::of_type(&typed.ty).map(|(shape, _)| shape);
                        if let Some(shape) = &declared {
                            *typed.ty = syn::parse2(shape.array_type(&self.real))
                                .unwrap_or_else(|_| (*typed.ty).clone());
                        }
                        declared
                    }
                    _ => None,
                };
                // `let r: Matrix3<f64> = rotation(angle);`: a function returning a nalgebra
                // value returns its array through its twin.
                if declared.is_some() {
                    if let Some(init) = &mut local.init {
                        if let Expr::Call(call) = &mut *init.expr {
                            if let Expr::Path(path) = &mut *call.func {
                                let constructor =
                                    super::shape::of_constructor(&path.path).is_some();
                                if !constructor && path.qself.is_none() {
                                    if let Some(last) = path.path.segments.last_mut() {
                                        last.ident = twin_ident(&last.ident);
                                    }
                                }
                            }
                        }
                    }
                }
                // `let (s, d) = (a + b, a - b);`: one `let` per element, through
                // temporaries (so `let (a, b) = (b, a);` swaps).
                if let (Pat::Tuple(tuple), Some(init)) = (&local.pat, &local.init) {
                    if let Expr::Tuple(values) = &*init.expr {
                        if tuple.elems.len() == values.elems.len() && init.diverge.is_none() {
                            return (self.split_tuple(tuple, values), Shape::Scalar);
                        }
                    }
                }
                // `let mut acc: SVector<f64, N> = SVector::zeros();`: the size from the type.
                let built = match (&declared, local.init.as_mut()) {
                    (Some(shape), Some(init)) => match &*init.expr {
                        Expr::Call(call) => match &*call.func {
                            Expr::Path(path) => match super::shape::of_constructor(&path.path) {
                                Some((None, function)) => {
                                    let args: Vec<Expr> = call.args.iter().cloned().collect();
                                    let path = path.path.clone();
                                    self.constructor(
                                        Some(shape.clone()),
                                        &function,
                                        &args,
                                        &path,
                                        &mut pre,
                                    )
                                    .map(|(built, _)| built)
                                }
                                _ => None,
                            },
                            _ => None,
                        },
                        _ => None,
                    },
                    _ => None,
                };
                if let (Some(built), Some(init)) = (built, local.init.as_mut()) {
                    *init.expr = built;
                }
                let init = local
                    .init
                    .as_mut()
                    .map(|init| self.expr(&mut init.expr, &mut pre));
                // `let v: Vector3<f64>;`, assigned later: a local of zeros, assigned whole.
                if let (Some(shape), None) = (&declared, &local.init) {
                    let zeros = filled_with(shape, &quote!(0.0));
                    local.init = Some(syn::LocalInit {
                        eq_token: Default::default(),
                        expr: Box::new(syn::parse_quote!(#zeros)),
                        diverge: None,
                    });
                    make_mut(&mut local.pat);
                }
                let shape = declared.or(init).unwrap_or(Shape::Scalar);
                // `let v = w;` of a vector: a copy of its elements.
                if let Some(name) = pattern_name(&local.pat) {
                    self.bind(name, shape.clone());
                } else {
                    self.bind_numbers(&local.pat);
                    if shape.is_array() {
                        self.errors.at(
                            &local.pat,
                            format!(
                                "#[grad] binds {} to a name (`let v = …;`), not a pattern",
                                shape.describe()
                            ),
                        );
                    }
                }
                let mut out = pre.unwrap_or_default();
                out.push(Stmt::Local(local));
                (out, Shape::Scalar)
            }
            Stmt::Expr(expr, semi) => {
                if let Some(stmts) = self.assignment(&expr) {
                    return (stmts, Shape::Scalar);
                }
                let mut expr = expr;
                let shape = self.expr(&mut expr, &mut pre);
                let mut out = pre.unwrap_or_default();
                out.push(Stmt::Expr(expr, semi));
                (out, shape)
            }
            Stmt::Item(item) => (vec![Stmt::Item(item)], Shape::Scalar),
            Stmt::Macro(mac) => (vec![Stmt::Macro(mac)], Shape::Scalar),
        }
    }

    /// `let (a, b) = (x, y);` as `let t1 = x; let t2 = y; let a = t1; let b = t2;`,
    /// each rewritten.
    fn split_tuple(&mut self, pats: &syn::PatTuple, values: &syn::ExprTuple) -> Vec<Stmt> {
        let mut out = Vec::new();
        let mut temporaries = Vec::new();
        for value in &values.elems {
            let name = self.fresh("t");
            let (stmts, _) = self.stmt(syn::parse_quote!(let #name = #value;));
            out.extend(stmts);
            temporaries.push(name);
        }
        for (pat, name) in pats.elems.iter().zip(temporaries) {
            let (stmts, _) = self.stmt(syn::parse_quote!(let #pat = #name;));
            out.extend(stmts);
        }
        out
    }

    /// `v = e;`, `v += e;`, `v -= e;`, `v *= s;`, `v /= s;` of a whole vector or matrix
    /// `v`: element by element. `None` for any other statement.
    fn assignment(&mut self, expr: &Expr) -> Option<Vec<Stmt>> {
        let (lhs, rhs, op) = match expr {
            Expr::Assign(assign) => (&*assign.left, &*assign.right, None),
            Expr::Binary(binary)
                if matches!(
                    binary.op,
                    BinOp::AddAssign(_)
                        | BinOp::SubAssign(_)
                        | BinOp::MulAssign(_)
                        | BinOp::DivAssign(_)
                ) =>
            {
                (&*binary.left, &*binary.right, Some(binary.op))
            }
            _ => return None,
        };
        let lhs = match lhs {
            Expr::Unary(unary) if matches!(unary.op, UnOp::Deref(_)) => &*unary.expr,
            lhs => lhs,
        };
        let Expr::Path(path) = lhs else {
            return None;
        };
        let name = path.path.get_ident()?.clone();
        let shape = self.lookup(&name.to_string());
        if !shape.is_array() {
            return None;
        }
        let mut pre = Some(Vec::new());
        let mut rhs = rhs.clone();
        let rhs_shape = self.expr(&mut rhs, &mut pre);
        let scalar_op = matches!(op, Some(BinOp::MulAssign(_) | BinOp::DivAssign(_)));
        if scalar_op == rhs_shape.is_array() || (!scalar_op && !shape.same_lengths(&rhs_shape)) {
            let wanted = if scalar_op {
                "a number".to_string()
            } else {
                shape.describe()
            };
            self.errors.at(
                &rhs,
                format!(
                    "#[grad]: `{name}` is {}, and this is {}; expected {wanted}",
                    shape.describe(),
                    rhs_shape.describe()
                ),
            );
            return Some(Vec::new());
        }
        let mut stmts = pre.unwrap_or_default();
        let rhs = if scalar_op {
            let value = self.fresh("s");
            stmts.push(syn::parse_quote!(let #value = #rhs;));
            value.to_token_stream()
        } else {
            self.named(rhs, &mut stmts).to_token_stream()
        };
        let op = op.map(|op| op.to_token_stream()).unwrap_or(quote!(=));
        let lhs = name.to_token_stream();
        self.each(&shape, &mut stmts, |at| {
            let target = at(&lhs);
            let value = if scalar_op { rhs.clone() } else { at(&rhs) };
            quote!(#target #op #value;)
        });
        Some(stmts)
    }

    /// Places `stmts` before the statement being rewritten, or reports at `at` that there
    /// is no such place (a `while` condition, a match guard).
    fn place(&mut self, stmts: Vec<Stmt>, pre: &mut Pre, at: impl ToTokens) {
        match pre {
            Some(pre) => pre.extend(stmts),
            None => self.errors.at(
                at,
                "#[grad] computes a nalgebra value with `let`s before the statement that \
                 uses it, which a `while` condition (evaluated at each turn) or a match guard \
                 does not have: bind it to a `let` inside the loop (`loop { let d = …; if … \
                 { break; } … }`) or in the arm",
            ),
        }
    }

    /// Binds `expr` (an array) to a name by a `let` in `stmts`, unless it is one.
    fn named(&mut self, expr: Expr, stmts: &mut Vec<Stmt>) -> Ident {
        if let Expr::Path(path) = &expr {
            if let Some(ident) = path.path.get_ident() {
                return ident.clone();
            }
        }
        let name = self.fresh("v");
        stmts.push(syn::parse_quote!(let #name = #expr;));
        name
    }

    /// [`Rewriter::named`] for an operand: an error inside a `while` condition.
    fn operand(&mut self, expr: Expr, pre: &mut Pre) -> Ident {
        match pre {
            Some(stmts) => self.named(expr, stmts),
            None => {
                if let Expr::Path(path) = &expr {
                    if let Some(ident) = path.path.get_ident() {
                        return ident.clone();
                    }
                }
                self.place(Vec::new(), &mut None, &expr);
                Ident::new("__nalgebra_error", Span::call_site())
            }
        }
    }

    /// Statements `body(at)` for every element, `at(name)` reading the element of `name`:
    /// written out, or as loops.
    fn each(
        &mut self,
        shape: &Shape,
        stmts: &mut Vec<Stmt>,
        body: impl Fn(&dyn Fn(&TokenStream) -> TokenStream) -> TokenStream,
    ) {
        match shape {
            Shape::Scalar => {}
            Shape::Vector { len, .. } => match small(len) {
                Some(n) => {
                    for i in 0..n {
                        let tokens = body(&|name| quote!(#name[#i]));
                        stmts.extend(parse_stmts(tokens));
                    }
                }
                None => {
                    let i = self.fresh("i");
                    let tokens = body(&|name| quote!(#name[#i]));
                    stmts.push(syn::parse_quote!(for #i in 0..#len { #tokens }));
                }
            },
            Shape::Matrix { rows, cols } => match (small(rows), small(cols)) {
                (Some(r), Some(c)) => {
                    for j in 0..c {
                        for i in 0..r {
                            let tokens = body(&|name| quote!(#name[#j][#i]));
                            stmts.extend(parse_stmts(tokens));
                        }
                    }
                }
                _ => {
                    let (i, j) = (self.fresh("i"), self.fresh("j"));
                    let tokens = body(&|name| quote!(#name[#j][#i]));
                    stmts.push(syn::parse_quote! {
                        for #j in 0..#cols { for #i in 0..#rows { #tokens } }
                    });
                }
            },
        }
    }

    /// An array of `shape` whose element at (row `i`, column `j`) is `element(i, j)` (`j`
    /// is `0` for a vector): a literal for small sizes, else a local filled by loops.
    fn build(
        &mut self,
        shape: &Shape,
        pre: &mut Pre,
        element: impl Fn(&TokenStream, &TokenStream) -> TokenStream,
    ) -> Expr {
        let zero = quote!(0);
        match shape {
            Shape::Scalar => syn::parse_quote!(0.0),
            Shape::Vector { len, .. } => match small(len) {
                Some(n) => {
                    let elements = (0..n).map(|i| element(&quote!(#i), &zero));
                    syn::parse_quote!([#(#elements),*])
                }
                None => self.filled(shape, pre, |name, i, _| {
                    let value = element(&i.to_token_stream(), &zero);
                    quote!(#name[#i] = #value;)
                }),
            },
            Shape::Matrix { rows, cols } => match (small(rows), small(cols)) {
                (Some(r), Some(c)) => {
                    let columns = (0..c).map(|j| {
                        let column = (0..r).map(|i| element(&quote!(#i), &quote!(#j)));
                        quote!([#(#column),*])
                    });
                    syn::parse_quote!([#(#columns),*])
                }
                _ => self.filled(shape, pre, |name, i, j| {
                    let value = element(&i.to_token_stream(), &j.to_token_stream());
                    quote!(#name[#j][#i] = #value;)
                }),
            },
        }
    }

    /// A local array of `shape`, declared zero and filled by loops whose body is
    /// `fill(name, i, j)`; its name.
    fn filled(
        &mut self,
        shape: &Shape,
        pre: &mut Pre,
        fill: impl Fn(&Ident, &Ident, &Ident) -> TokenStream,
    ) -> Expr {
        let name = self.fresh("v");
        let (i, j) = (self.fresh("i"), self.fresh("j"));
        let body = fill(&name, &i, &j);
        let real = &self.real;
        let stmts: Vec<Stmt> = match shape {
            Shape::Scalar => Vec::new(),
            Shape::Vector { len, .. } => parse_stmts(quote! {
                let mut #name = [0.0 as #real; #len];
                for #i in 0..#len { #body }
            }),
            Shape::Matrix { rows, cols } => parse_stmts(quote! {
                let mut #name = [[0.0 as #real; #rows]; #cols];
                for #j in 0..#cols { for #i in 0..#rows { #body } }
            }),
        };
        self.place(stmts, pre, &name);
        syn::parse_quote!(#name)
    }

    /// `Σ term(k)` for `k` in `0..len`: written out for small sizes, else a local summed by
    /// a loop.
    fn sum(
        &mut self,
        len: &TokenStream,
        pre: &mut Pre,
        term: impl Fn(&TokenStream) -> TokenStream,
    ) -> Expr {
        match small(len) {
            Some(0) => syn::parse_quote!(0.0),
            Some(n) => {
                let terms = (0..n).map(|k| term(&quote!(#k)));
                syn::parse_quote!((#(#terms)+*))
            }
            None => {
                let (sum, k) = (self.fresh("sum"), self.fresh("k"));
                let value = term(&k.to_token_stream());
                let real = &self.real;
                let stmts = parse_stmts(quote! {
                    let mut #sum: #real = 0.0;
                    for #k in 0..#len { #sum += #value; }
                });
                self.place(stmts, pre, len);
                syn::parse_quote!(#sum)
            }
        }
    }

    /// `Σ term(k)` for `k` in `0..len` added in the order nalgebra's `dot` adds them, so
    /// that the value is its value bit for bit: pairs for 4 elements, eight running sums
    /// from 8 on (a size named by a constant adds one by one).
    fn dot(
        &mut self,
        len: &TokenStream,
        pre: &mut Pre,
        term: impl Fn(&TokenStream) -> TokenStream,
    ) -> Expr {
        let Some(n) = integer(len).filter(|&n| n <= WRITTEN_OUT_SUMS) else {
            return self.sum(len, pre, term);
        };
        let p = |k: usize| term(&quote!(#k));
        match n {
            4 => {
                let (a, b, c, d) = (p(0), p(1), p(2), p(3));
                syn::parse_quote!(((#a + #c) + (#b + #d)))
            }
            n if n >= 8 => {
                let chunks = n / 8;
                let acc = |r: usize| {
                    let terms = (0..chunks).map(|c| p(8 * c + r));
                    quote!((#(#terms)+*))
                };
                let pairs = (0..4).map(|r| {
                    let (a, b) = (acc(r), acc(r + 4));
                    quote!((#a + #b))
                });
                let rest = (8 * chunks..n).map(p);
                syn::parse_quote!((#(#pairs)+* #(+ #rest)*))
            }
            _ => self.sum(len, pre, term),
        }
    }

    /// `Σ term(i, j)` over every element (row `i`, column `j`) of `shape`.
    fn reduce(
        &mut self,
        shape: &Shape,
        pre: &mut Pre,
        term: impl Fn(&TokenStream, &TokenStream) -> TokenStream,
    ) -> Expr {
        let zero = quote!(0);
        match shape {
            Shape::Scalar => syn::parse_quote!(0.0),
            Shape::Vector { len, .. } => self.sum(len, pre, |k| term(k, &zero)),
            Shape::Matrix { rows, cols } => match (small(rows), small(cols)) {
                (Some(r), Some(c)) if r * c > 0 => {
                    let terms = (0..c)
                        .flat_map(|j| (0..r).map(move |i| (i, j)))
                        .map(|(i, j)| term(&quote!(#i), &quote!(#j)));
                    syn::parse_quote!((#(#terms)+*))
                }
                _ => {
                    let (sum, i, j) = (self.fresh("sum"), self.fresh("i"), self.fresh("j"));
                    let value = term(&i.to_token_stream(), &j.to_token_stream());
                    let real = &self.real;
                    let stmts = parse_stmts(quote! {
                        let mut #sum: #real = 0.0;
                        for #j in 0..#cols { for #i in 0..#rows { #sum += #value; } }
                    });
                    self.place(stmts, pre, rows);
                    syn::parse_quote!(#sum)
                }
            },
        }
    }

    /// Rewrites `expr` in place; its shape. Statements its operands need go to `pre`.
    pub fn expr(&mut self, expr: &mut Expr, pre: &mut Pre) -> Shape {
        match expr {
            Expr::Path(path) => match path.path.get_ident() {
                Some(ident) => self.lookup(&ident.to_string()),
                None => Shape::Scalar,
            },
            Expr::Lit(_) => Shape::Scalar,
            Expr::Paren(paren) => self.expr(&mut paren.expr, pre),
            Expr::Group(group) => self.expr(&mut group.expr, pre),
            Expr::Reference(reference) => self.expr(&mut reference.expr, pre),
            Expr::Unary(unary) => {
                let shape = self.expr(&mut unary.expr, pre);
                match (&unary.op, shape.is_array()) {
                    (_, false) => Shape::Scalar,
                    (UnOp::Neg(_), true) => {
                        let a = self.operand((*unary.expr).clone(), pre);
                        let a = a.to_token_stream();
                        *expr = self.build(&shape, pre, |i, j| {
                            let x = at(&a, &shape, i, j);
                            quote!(-#x)
                        });
                        shape
                    }
                    (UnOp::Deref(_), true) => {
                        *expr = (*unary.expr).clone();
                        shape
                    }
                    _ => self.unsupported(expr, &shape),
                }
            }
            Expr::Binary(binary) => {
                let left = self.expr(&mut binary.left, pre);
                let right = self.expr(&mut binary.right, pre);
                if !left.is_array() && !right.is_array() {
                    return Shape::Scalar;
                }
                let (lhs, rhs) = ((*binary.left).clone(), (*binary.right).clone());
                let (rewritten, shape) = match self.binary(binary.op, lhs, &left, rhs, &right, pre)
                {
                    Some(done) => done,
                    None => {
                        let unknown = matches!(binary.op, BinOp::Add(_) | BinOp::Sub(_))
                            && left.is_array() != right.is_array();
                        let message = if unknown {
                            format!(
                                "#[grad] sees `{}` of {} and {}: where the number is a \
                                 nalgebra value whose type it cannot see (a constant, a \
                                 struct's field, a call without a `let` of its type), build \
                                 it in the function (`Vector3::new(..)`) or write its type on \
                                 a `let`",
                                binary.op.to_token_stream(),
                                left.describe(),
                                right.describe()
                            )
                        } else {
                            format!(
                                "#[grad] does not support `{}` of {} and {} (supported: `+` \
                                 and `-` of the same shape, `*` of a matrix and a vector or \
                                 matrix, `*` and `/` by a number)",
                                binary.op.to_token_stream(),
                                left.describe(),
                                right.describe()
                            )
                        };
                        self.errors.at(binary.op, message);
                        return Shape::Scalar;
                    }
                };
                *expr = rewritten;
                shape
            }
            Expr::Index(index) => {
                if let Some(element) = self.slice_of(&index.expr) {
                    // `pts[i]`: a row of the slice of arrays.
                    self.expr(&mut index.index, pre);
                    return element;
                }
                let shape = self.expr(&mut index.expr, pre);
                self.expr(&mut index.index, pre);
                match shape {
                    Shape::Scalar => Shape::Scalar,
                    Shape::Vector { .. } => {
                        let base = self.operand((*index.expr).clone(), pre);
                        *index.expr = syn::parse_quote!(#base);
                        Shape::Scalar
                    }
                    Shape::Matrix { .. } => {
                        let base = self.operand((*index.expr).clone(), pre);
                        match &*index.index {
                            Expr::Tuple(tuple) if tuple.elems.len() == 2 => {
                                let (i, j) = (&tuple.elems[0], &tuple.elems[1]);
                                *expr = syn::parse_quote!(#base[#j][#i]);
                            }
                            other => {
                                self.errors
                                    .at(other, "#[grad] reads a matrix's elements as `m[(i, j)]`");
                            }
                        }
                        Shape::Scalar
                    }
                }
            }
            Expr::Field(field) => {
                let shape = self.expr(&mut field.base, pre);
                let syn::Member::Named(member) = &field.member else {
                    return Shape::Scalar;
                };
                match (&shape, member.to_string().as_str()) {
                    (Shape::Vector { len, point }, "coords") if *point => {
                        *expr = (*field.base).clone();
                        Shape::Vector {
                            len: len.clone(),
                            point: false,
                        }
                    }
                    (Shape::Vector { .. }, name @ ("x" | "y" | "z" | "w")) => {
                        let i = match name {
                            "x" => 0usize,
                            "y" => 1,
                            "z" => 2,
                            _ => 3,
                        };
                        let base = self.operand((*field.base).clone(), pre);
                        *expr = syn::parse_quote!(#base[#i]);
                        Shape::Scalar
                    }
                    (Shape::Scalar, _) => Shape::Scalar,
                    (shape, _) => self.unsupported(expr, &shape.clone()),
                }
            }
            Expr::MethodCall(call) => {
                if let Some(shape) = self.iterator_method(call, pre) {
                    return shape;
                }
                let shape = self.expr(&mut call.receiver, pre);
                let args: Vec<Shape> = call
                    .args
                    .iter_mut()
                    .map(|arg| self.expr(arg, pre))
                    .collect();
                if !shape.is_array() {
                    if let Some(arg) = args.iter().position(Shape::is_array) {
                        return self.passed(&call.args[arg], &args[arg]);
                    }
                    return Shape::Scalar;
                }
                match self.method(call, &shape, &args, pre) {
                    Some((rewritten, shape)) => {
                        *expr = rewritten;
                        shape
                    }
                    None if call.method == "transpose" => {
                        self.errors.at(
                            &call.method,
                            "#[grad] does not support row vectors, such as a vector's \
                             transpose; for `aᵀ·b` write `a.dot(&b)`, for `a·bᵀ` build the \
                             matrix with `Matrix3::new(..)`",
                        );
                        Shape::Scalar
                    }
                    None if matches!(
                        call.method.to_string().as_str(),
                        "dot" | "cross" | "component_mul" | "component_div"
                    ) && args.first().is_some_and(|arg| !arg.same_lengths(&shape)) =>
                    {
                        let message = format!(
                            "#[grad] sees `.{}(..)` of {} and {}: the argument must be a \
                             vector of the same length (a value whose type #[grad] cannot see, \
                             a constant or a struct's field, reads as a number: build it in \
                             the function or write its type on a `let`)",
                            call.method,
                            shape.describe(),
                            args.first().map(Shape::describe).unwrap_or_default()
                        );
                        self.errors.at(&call.method, message);
                        Shape::Scalar
                    }
                    None => {
                        let name = call.method.to_string();
                        self.errors.at(
                            &call.method,
                            format!(
                                "#[grad] does not support `.{name}(..)` of {}; supported: \
                                 dot, norm, norm_squared, magnitude, magnitude_squared, \
                                 normalize, cross, transpose, sum, component_mul, \
                                 component_div, scale, column",
                                shape.describe()
                            ),
                        );
                        Shape::Scalar
                    }
                }
            }
            Expr::Call(call) => {
                let args: Vec<Shape> = call
                    .args
                    .iter_mut()
                    .map(|arg| self.expr(arg, pre))
                    .collect();
                if let Expr::Path(path) = &*call.func {
                    if let Some((shape, function)) = super::shape::of_constructor(&path.path) {
                        let args: Vec<Expr> = call.args.iter().cloned().collect();
                        return match self.constructor(shape, &function, &args, &path.path, pre) {
                            Some((rewritten, shape)) => {
                                *expr = rewritten;
                                shape
                            }
                            None => Shape::Scalar,
                        };
                    }
                }
                if args.iter().any(Shape::is_array) {
                    // A `#[grad]` function of nalgebra's types: its twin in arrays, with
                    // what the pipeline generated for it.
                    match &mut *call.func {
                        Expr::Path(path) if path.qself.is_none() => {
                            if let Some(last) = path.path.segments.last_mut() {
                                last.ident = twin_ident(&last.ident);
                            }
                        }
                        _ => {
                            let arg = args.iter().position(Shape::is_array).unwrap_or(0);
                            return self.passed(&call.args[arg], &args[arg]);
                        }
                    }
                }
                Shape::Scalar
            }
            Expr::If(expr_if) => {
                self.expr(&mut expr_if.cond, pre);
                let then = self.block(&mut expr_if.then_branch);
                if let Some((_, otherwise)) = &mut expr_if.else_branch {
                    // An `else if`'s condition, computed before the `if` (it has no
                    // effects, and nothing it reads changes unless the first branch runs).
                    self.expr(otherwise, pre);
                }
                if then.is_array() {
                    self.errors.at(
                        expr_if.if_token,
                        "#[grad] computes an `if` whose value is a nalgebra type only as a \
                         statement: declare the value before (`let mut v = …;`) and assign \
                         it in the branches",
                    );
                }
                Shape::Scalar
            }
            Expr::Block(block) => {
                let shape = self.block(&mut block.block);
                if shape.is_array() {
                    self.errors.push(syn::Error::new(
                        block.block.brace_token.span.join(),
                        "#[grad] does not support a block whose value is a nalgebra type: \
                         compute the value with `let`s before it",
                    ));
                }
                Shape::Scalar
            }
            Expr::While(expr_while) => {
                let mut none: Pre = None;
                self.expr(&mut expr_while.cond, &mut none);
                self.block(&mut expr_while.body);
                Shape::Scalar
            }
            Expr::ForLoop(expr_for) => {
                let yielded = self.yields(&expr_for.expr);
                self.expr(&mut expr_for.expr, pre);
                self.scopes.push(HashMap::new());
                self.bind_numbers(&expr_for.pat);
                if let Some(yielded) = &yielded {
                    self.bind_pattern(&expr_for.pat, yielded);
                }
                self.block(&mut expr_for.body);
                self.scopes.pop();
                Shape::Scalar
            }
            Expr::Loop(expr_loop) => {
                self.block(&mut expr_loop.body);
                Shape::Scalar
            }
            Expr::Closure(closure) => {
                self.scopes.push(HashMap::new());
                for input in &closure.inputs {
                    self.bind_numbers(input);
                }
                let mut inner = Some(Vec::new());
                let shape = self.expr(&mut closure.body, &mut inner);
                self.scopes.pop();
                let stmts = inner.unwrap_or_default();
                if !stmts.is_empty() {
                    let body = &closure.body;
                    *closure.body = syn::parse_quote!({ #(#stmts)* #body });
                }
                if shape.is_array() {
                    self.errors.at(
                        &closure.body,
                        "#[grad] does not support closures whose value is a nalgebra type",
                    );
                }
                Shape::Scalar
            }
            Expr::Match(expr_match) => {
                self.expr(&mut expr_match.expr, pre);
                for arm in &mut expr_match.arms {
                    if let Some((_, guard)) = &mut arm.guard {
                        let mut none: Pre = None;
                        self.expr(guard, &mut none);
                    }
                    let mut inner = Some(Vec::new());
                    let shape = self.expr(&mut arm.body, &mut inner);
                    let stmts = inner.unwrap_or_default();
                    if !stmts.is_empty() {
                        let body = &arm.body;
                        *arm.body = syn::parse_quote!({ #(#stmts)* #body });
                    }
                    if shape.is_array() {
                        self.errors.at(
                            &arm.body,
                            "#[grad] computes a `match` whose value is a nalgebra type only \
                             as a statement: declare the value before and assign it in the arms",
                        );
                    }
                }
                Shape::Scalar
            }
            _ => {
                // Anything else: its operands, in place.
                let mut children = Children {
                    rewriter: self,
                    pre,
                };
                syn::visit_mut::visit_expr_mut(&mut children, expr);
                Shape::Scalar
            }
        }
    }

    /// A link of an iterator chain over a slice of nalgebra values whose closure takes its
    /// elements (`pts.iter().map(|p| (p - c).norm()).sum()`, `.fold(0.0, |acc, p| …)`,
    /// `.filter(|p| p.z > 0.0)`): the closure's parameter has the element's shape. `None`
    /// (nothing rewritten) for any other call.
    fn iterator_method(&mut self, call: &mut syn::ExprMethodCall, pre: &mut Pre) -> Option<Shape> {
        let method = call.method.to_string();
        let position = match method.as_str() {
            "map" | "filter" | "for_each" | "any" | "all" | "filter_map" | "flat_map" => 0,
            "fold" => 1,
            _ => return None,
        };
        let yielded = self.yields(&call.receiver)?;
        // The receiver's own operands (`.zip(..)` arguments, …).
        self.expr(&mut call.receiver, pre);
        for arg in call.args.iter_mut() {
            match arg {
                Expr::Closure(closure) => {
                    self.scopes.push(HashMap::new());
                    for input in &closure.inputs {
                        self.bind_numbers(input);
                    }
                    if let Some(pat) = closure.inputs.iter().nth(position) {
                        let pat = pat.clone();
                        self.bind_pattern(&pat, &yielded);
                    }
                    let mut inner = Some(Vec::new());
                    let shape = self.expr(&mut closure.body, &mut inner);
                    self.scopes.pop();
                    let stmts = inner.unwrap_or_default();
                    if !stmts.is_empty() {
                        let body = &closure.body;
                        *closure.body = syn::parse_quote!({ #(#stmts)* #body });
                    }
                    if shape.is_array() {
                        self.errors.at(
                            &closure.body,
                            "#[grad] does not support closures whose value is a nalgebra type",
                        );
                    }
                }
                arg => {
                    self.expr(arg, pre);
                }
            }
        }
        Some(Shape::Scalar)
    }

    /// The error for a nalgebra value passed to what is not a function's path.
    fn passed(&mut self, arg: &Expr, shape: &Shape) -> Shape {
        self.errors.at(
            arg,
            format!(
                "#[grad] passes nalgebra values (this is {}) to functions named by a path, \
                 `#[grad]` functions of nalgebra's types; pass its elements, or call this \
                 outside the #[grad] function",
                shape.describe()
            ),
        );
        Shape::Scalar
    }

    fn unsupported(&mut self, expr: &Expr, shape: &Shape) -> Shape {
        self.errors.at(
            expr,
            format!(
                "#[grad] does not support this use of {} (see the guide's nalgebra section)",
                shape.describe()
            ),
        );
        Shape::Scalar
    }

    /// `lhs op rhs` with at least one nalgebra operand; `None` if unsupported.
    fn binary(
        &mut self,
        op: BinOp,
        lhs: Expr,
        left: &Shape,
        rhs: Expr,
        right: &Shape,
        pre: &mut Pre,
    ) -> Option<(Expr, Shape)> {
        use Shape::{Matrix, Scalar, Vector};
        match (op, left, right) {
            (BinOp::Add(_) | BinOp::Sub(_), _, _) if left.same_lengths(right) => {
                let shape = match (left, right, op) {
                    // point - point = vector; point + vector = point.
                    (Vector { len, point: true }, Vector { point: true, .. }, BinOp::Sub(_)) => {
                        Vector {
                            len: len.clone(),
                            point: false,
                        }
                    }
                    (Vector { len, point: a }, Vector { point: b, .. }, _) => Vector {
                        len: len.clone(),
                        point: *a || *b,
                    },
                    (shape, ..) => shape.clone(),
                };
                let a = self.operand(lhs, pre).to_token_stream();
                let b = self.operand(rhs, pre).to_token_stream();
                let built = self.build(&shape, pre, |i, j| {
                    let (x, y) = (at(&a, left, i, j), at(&b, right, i, j));
                    quote!(#x #op #y)
                });
                Some((built, shape))
            }
            (BinOp::Mul(_), Scalar, shape) | (BinOp::Mul(_) | BinOp::Div(_), shape, Scalar) => {
                let scalar_left = !left.is_array();
                let (array, scalar) = if scalar_left { (rhs, lhs) } else { (lhs, rhs) };
                let a = self.operand(array, pre).to_token_stream();
                let s = match pre {
                    Some(stmts) => {
                        let s = self.fresh("s");
                        stmts.push(syn::parse_quote!(let #s = #scalar;));
                        s.to_token_stream()
                    }
                    None => quote!((#scalar)),
                };
                let shape = shape.clone();
                let built = self.build(&shape, pre, |i, j| {
                    let x = at(&a, &shape, i, j);
                    if scalar_left {
                        quote!(#s * #x)
                    } else {
                        quote!(#x #op #s)
                    }
                });
                Some((built, shape))
            }
            (BinOp::Mul(_), Matrix { rows, cols }, Vector { len, point })
                if cols.to_string() == len.to_string() =>
            {
                let m = self.operand(lhs, pre).to_token_stream();
                let v = self.operand(rhs, pre).to_token_stream();
                // A matrix times a point is a point (a rotation of it).
                let shape = Vector {
                    len: rows.clone(),
                    point: *point,
                };
                let (left, right) = (left.clone(), right.clone());
                let built = self.product(&shape, cols, pre, |i, _, k| {
                    let (x, y) = (at(&m, &left, i, k), at(&v, &right, k, &quote!(0)));
                    quote!(#x * #y)
                });
                Some((built, shape))
            }
            (
                BinOp::Mul(_),
                Matrix { rows, cols },
                Matrix {
                    rows: inner,
                    cols: out,
                },
            ) if cols.to_string() == inner.to_string() => {
                let a = self.operand(lhs, pre).to_token_stream();
                let b = self.operand(rhs, pre).to_token_stream();
                let shape = Matrix {
                    rows: rows.clone(),
                    cols: out.clone(),
                };
                let (left, right) = (left.clone(), right.clone());
                let built = self.product(&shape, cols, pre, |i, j, k| {
                    let (x, y) = (at(&a, &left, i, k), at(&b, &right, k, j));
                    quote!(#x * #y)
                });
                Some((built, shape))
            }
            _ => None,
        }
    }

    /// An array of `shape` whose element (i, j) is `Σ_k term(i, j, k)` for `k` in
    /// `0..inner`.
    fn product(
        &mut self,
        shape: &Shape,
        inner: &TokenStream,
        pre: &mut Pre,
        term: impl Fn(&TokenStream, &TokenStream, &TokenStream) -> TokenStream,
    ) -> Expr {
        let all_small = small(inner).is_some()
            && match shape {
                Shape::Vector { len, .. } => small(len).is_some(),
                Shape::Matrix { rows, cols } => small(rows).is_some() && small(cols).is_some(),
                Shape::Scalar => true,
            };
        if all_small {
            let n = small(inner).unwrap_or(0);
            return self.build(shape, pre, |i, j| {
                let terms = (0..n).map(|k| term(i, j, &quote!(#k)));
                quote!((#(#terms)+*))
            });
        }
        let k = self.fresh("k");
        let real = self.real.clone();
        self.filled(shape, pre, |name, i, j| {
            let value = term(&quote!(#i), &quote!(#j), &quote!(#k));
            let target = match shape {
                Shape::Matrix { .. } => quote!(#name[#j][#i]),
                _ => quote!(#name[#i]),
            };
            quote! {
                let mut __nalgebra_dot: #real = 0.0;
                for #k in 0..#inner { __nalgebra_dot += #value; }
                #target = __nalgebra_dot;
            }
        })
    }

    /// A method of a nalgebra value; `None` if unsupported.
    fn method(
        &mut self,
        call: &syn::ExprMethodCall,
        shape: &Shape,
        args: &[Shape],
        pre: &mut Pre,
    ) -> Option<(Expr, Shape)> {
        let name = call.method.to_string();
        let receiver = (*call.receiver).clone();
        let arg = |k: usize| -> Option<Expr> {
            let arg = call.args.iter().nth(k)?;
            Some(match arg {
                Expr::Reference(reference) => (*reference.expr).clone(),
                arg => arg.clone(),
            })
        };
        let elements = |shape: &Shape| -> Option<TokenStream> {
            match shape {
                Shape::Vector { len, .. } => Some(len.clone()),
                _ => None,
            }
        };
        match (name.as_str(), args) {
            ("clone" | "to_owned" | "into_owned", []) => Some((receiver, shape.clone())),
            ("dot", [other]) if shape.same_lengths(other) => {
                let len = elements(shape)?;
                let a = self.operand(receiver, pre).to_token_stream();
                let b = self.operand(arg(0)?, pre).to_token_stream();
                let sum = self.dot(&len, pre, |k| quote!(#a[#k] * #b[#k]));
                Some((sum, Shape::Scalar))
            }
            ("norm_squared" | "magnitude_squared" | "norm" | "magnitude", []) => {
                let a = self.operand(receiver, pre).to_token_stream();
                // nalgebra's order: each column's `dot` with itself, then their sum.
                let squares = match shape {
                    Shape::Vector { len, .. } => self.dot(len, pre, |k| quote!(#a[#k] * #a[#k])),
                    Shape::Matrix { rows, cols } => match small(cols) {
                        Some(c) => {
                            let rows = rows.clone();
                            let columns: Vec<Expr> = (0..c)
                                .map(|j| self.dot(&rows, pre, |i| quote!(#a[#j][#i] * #a[#j][#i])))
                                .collect();
                            syn::parse_quote!((#(#columns)+*))
                        }
                        None => self.reduce(shape, pre, |i, j| {
                            let x = at(&a, shape, i, j);
                            quote!(#x * #x)
                        }),
                    },
                    Shape::Scalar => return None,
                };
                let value = if name.ends_with("squared") {
                    squares
                } else {
                    syn::parse_quote!(#squares.sqrt())
                };
                Some((value, Shape::Scalar))
            }
            ("normalize", []) => {
                let len = elements(shape)?;
                let a = self.operand(receiver, pre).to_token_stream();
                let squares = self.dot(&len, pre, |k| quote!(#a[#k] * #a[#k]));
                let norm = self.fresh("norm");
                pre.as_mut()?
                    .push(syn::parse_quote!(let #norm = #squares.sqrt();));
                let shape = Shape::Vector { len, point: false };
                let built = self.build(&shape, pre, |i, _| quote!(#a[#i] / #norm));
                Some((built, shape))
            }
            ("cross", [other])
                if shape.same_lengths(other) && small(&elements(shape)?) == Some(3) =>
            {
                let a = self.operand(receiver, pre).to_token_stream();
                let b = self.operand(arg(0)?, pre).to_token_stream();
                let built = syn::parse_quote!([
                    #a[1] * #b[2] - #a[2] * #b[1],
                    #a[2] * #b[0] - #a[0] * #b[2],
                    #a[0] * #b[1] - #a[1] * #b[0]
                ]);
                let shape = Shape::Vector {
                    len: quote!(3),
                    point: false,
                };
                Some((built, shape))
            }
            ("transpose", []) => {
                let Shape::Matrix { rows, cols } = shape else {
                    return None;
                };
                let a = self.operand(receiver, pre).to_token_stream();
                let transposed = Shape::Matrix {
                    rows: cols.clone(),
                    cols: rows.clone(),
                };
                let built = self.build(&transposed, pre, |i, j| quote!(#a[#i][#j]));
                Some((built, transposed))
            }
            ("sum", []) => {
                let a = self.operand(receiver, pre).to_token_stream();
                let sum = self.reduce(shape, pre, |i, j| at(&a, shape, i, j));
                Some((sum, Shape::Scalar))
            }
            ("component_mul" | "component_div", [other]) if shape.same_lengths(other) => {
                let op = if name == "component_mul" {
                    quote!(*)
                } else {
                    quote!(/)
                };
                let a = self.operand(receiver, pre).to_token_stream();
                let b = self.operand(arg(0)?, pre).to_token_stream();
                let result = match shape {
                    Shape::Vector { len, .. } => Shape::Vector {
                        len: len.clone(),
                        point: false,
                    },
                    shape => shape.clone(),
                };
                let (left, right) = (shape.clone(), other.clone());
                let built = self.build(&result, pre, |i, j| {
                    let (x, y) = (at(&a, &left, i, j), at(&b, &right, i, j));
                    quote!(#x #op #y)
                });
                Some((built, result))
            }
            ("column", [Shape::Scalar]) => {
                let Shape::Matrix { rows, .. } = shape else {
                    return None;
                };
                let a = self.operand(receiver, pre).to_token_stream();
                let j = arg(0)?;
                let column = Shape::Vector {
                    len: rows.clone(),
                    point: false,
                };
                let built = self.build(&column, pre, |i, _| quote!(#a[#j][#i]));
                Some((built, column))
            }
            ("scale", [Shape::Scalar]) => {
                let s = arg(0)?;
                let mul: Expr = syn::parse_quote!(#receiver * #s);
                let Expr::Binary(binary) = mul else {
                    return None;
                };
                self.binary(
                    binary.op,
                    *binary.left,
                    shape,
                    *binary.right,
                    &Shape::Scalar,
                    pre,
                )
            }
            _ => None,
        }
    }

    /// `Vector3::new(a, b, c)`, `Matrix3::new(…)` (rows first, as nalgebra takes them),
    /// `::zeros()`, `::identity()`, `Point3::new`; `None` (reported) if unsupported.
    fn constructor(
        &mut self,
        shape: Option<Shape>,
        function: &str,
        args: &[Expr],
        path: &syn::Path,
        pre: &mut Pre,
    ) -> Option<(Expr, Shape)> {
        let Some(shape) = shape else {
            self.errors.at(
                path,
                "#[grad] needs the size of a nalgebra value where it is built: write \
                 `SVector::<f64, 3>::zeros()`, or annotate the `let`",
            );
            return None;
        };
        let real = self.real.clone();
        let built: Expr = match (function, &shape) {
            ("new", Shape::Vector { len, .. }) if small(len) == Some(args.len()) => {
                syn::parse_quote!([#(#args),*])
            }
            ("new", Shape::Matrix { rows, cols })
                if small(rows)
                    .zip(small(cols))
                    .is_some_and(|(r, c)| r * c == args.len()) =>
            {
                let (r, c) = (small(rows)?, small(cols)?);
                let columns = (0..c).map(|j| {
                    let column = (0..r).map(|i| &args[i * c + j]);
                    quote!([#(#column),*])
                });
                syn::parse_quote!([#(#columns),*])
            }
            ("zeros", _) if args.is_empty() => {
                syn::parse2(filled_with(&shape, &quote!(0.0 as #real))).ok()?
            }
            ("identity", Shape::Matrix { .. }) if args.is_empty() => {
                let (one, zero) = (quote!(1.0 as #real), quote!(0.0 as #real));
                let built = self.build(&shape, pre, |i, j| {
                    if i.to_string() == j.to_string() {
                        one.clone()
                    } else if small(i).is_some() && small(j).is_some() {
                        zero.clone()
                    } else {
                        quote!(if #i == #j { #one } else { #zero })
                    }
                });
                if matches!(built, Expr::Path(_)) {
                    // Filled by loops: an `if` on the indices.
                    return Some((built, shape));
                }
                built
            }
            _ => {
                self.errors.at(
                    path,
                    format!(
                        "#[grad] builds nalgebra values with `::new(…)` (every element), \
                         `::zeros()` and `::identity()`, not `::{function}`"
                    ),
                );
                return None;
            }
        };
        Some((built, shape))
    }
}

/// The name of the twin in arrays of a function of nalgebra's types, where the user wrote
/// `ident` (see [`super::twin`]).
fn twin_ident(ident: &Ident) -> Ident {
    let name = ident.to_string();
    if name.ends_with("_nalgebra") {
        return ident.clone(); // named already
    }
    format_ident!("{}_nalgebra", ident, span = ident.span())
}

/// `mut` on the name a `let` binds.
fn make_mut(pat: &mut Pat) {
    match pat {
        Pat::Ident(ident) => ident.mutability = Some(Default::default()),
        Pat::Type(typed) => make_mut(&mut typed.pat),
        _ => {}
    }
}

/// `[value; len]`, nested for a matrix.
fn filled_with(shape: &Shape, value: &TokenStream) -> TokenStream {
    match shape {
        Shape::Scalar => value.clone(),
        Shape::Vector { len, .. } => quote!([#value; #len]),
        Shape::Matrix { rows, cols } => quote!([[#value; #rows]; #cols]),
    }
}

/// The element (row `i`, column `j`) of the array `name` of `shape`: `name[i]` of a
/// vector, `name[j][i]` of a matrix (stored by columns).
fn at(name: &TokenStream, shape: &Shape, i: &TokenStream, j: &TokenStream) -> TokenStream {
    match shape {
        Shape::Matrix { .. } => quote!(#name[#j][#i]),
        _ => quote!(#name[#i]),
    }
}

/// A size that is an integer small enough to write out.
fn small(len: &TokenStream) -> Option<usize> {
    integer(len).filter(|&n| n <= WRITTEN_OUT)
}

/// A size that is an integer.
fn integer(len: &TokenStream) -> Option<usize> {
    syn::parse2::<syn::LitInt>(len.clone())
        .ok()
        .and_then(|lit| lit.base10_parse::<usize>().ok())
}

/// The name a `let` binds, `v` of `let v`, `let mut v`, `let v: T`.
fn pattern_name(pat: &Pat) -> Option<String> {
    match pat {
        Pat::Ident(ident) if ident.subpat.is_none() => Some(ident.ident.to_string()),
        Pat::Type(typed) => pattern_name(&typed.pat),
        _ => None,
    }
}

fn parse_stmts(tokens: TokenStream) -> Vec<Stmt> {
    syn::parse::Parser::parse2(Block::parse_within, tokens).unwrap_or_default()
}

/// Visits the direct operands of an expression with the rewriter.
struct Children<'a> {
    rewriter: &'a mut Rewriter,
    pre: &'a mut Pre,
}

impl VisitMut for Children<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        self.rewriter.expr(expr, self.pre);
    }

    fn visit_block_mut(&mut self, block: &mut Block) {
        self.rewriter.block(block);
    }
}
