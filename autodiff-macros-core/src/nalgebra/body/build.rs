//! Arrays built element by element: written out for small integer sizes, loops that fill
//! a local array otherwise; sums (in nalgebra's order for dot products) and products.

use super::{parse_stmts, Pre, Rewriter};
use crate::nalgebra::shape::Shape;
use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::{Expr, Ident, Stmt};

/// Sizes up to this are written out; larger ones, and sizes named by constants, are loops.
const WRITTEN_OUT: usize = 16;

/// Dot products and norms of integer sizes up to this are written out in nalgebra's order
/// of additions (so their values are nalgebra's bit for bit).
const WRITTEN_OUT_SUMS: usize = 256;

impl Rewriter {
    /// Statements `body(at)` for every element, `at(name)` reading the element of `name`:
    /// written out, or as loops.
    pub(super) fn each(
        &mut self,
        shape: &Shape,
        stmts: &mut Vec<Stmt>,
        body: impl Fn(&dyn Fn(&TokenStream) -> TokenStream) -> TokenStream,
    ) {
        match shape {
            Shape::Scalar => {}
            Shape::Dynamic { len } => {
                let i = self.fresh("i");
                let tokens = body(&|name| quote!(#name[#i]));
                stmts.push(syn::parse_quote!(for #i in 0..#len { #tokens }));
            }
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
    pub(super) fn build(
        &mut self,
        shape: &Shape,
        pre: &mut Pre,
        element: impl Fn(&TokenStream, &TokenStream) -> TokenStream,
    ) -> Expr {
        let zero = quote!(0);
        match shape {
            Shape::Scalar => syn::parse_quote!(0.0),
            Shape::Dynamic { .. } => self.filled(shape, pre, |name, i, _| {
                let value = element(&i.to_token_stream(), &zero);
                quote!(#name[#i] = #value;)
            }),
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
    pub(super) fn filled(
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
            Shape::Dynamic { len } => parse_stmts(quote! {
                let mut #name = vec![0.0; #len];
                for #i in 0..#name.len() { #body }
            }),
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
    pub(super) fn sum(
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
    pub(super) fn dot(
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
    pub(super) fn reduce(
        &mut self,
        shape: &Shape,
        pre: &mut Pre,
        term: impl Fn(&TokenStream, &TokenStream) -> TokenStream,
    ) -> Expr {
        let zero = quote!(0);
        match shape {
            Shape::Scalar => syn::parse_quote!(0.0),
            Shape::Vector { len, .. } | Shape::Dynamic { len } => {
                self.sum(len, pre, |k| term(k, &zero))
            }
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

    /// An array of `shape` whose element (i, j) is `Σ_k term(i, j, k)` for `k` in
    /// `0..inner`.
    pub(super) fn product(
        &mut self,
        shape: &Shape,
        inner: &TokenStream,
        pre: &mut Pre,
        term: impl Fn(&TokenStream, &TokenStream, &TokenStream) -> TokenStream,
    ) -> Expr {
        let all_small = small(inner).is_some()
            && match shape {
                Shape::Vector { len, .. } => small(len).is_some(),
                Shape::Dynamic { .. } => false,
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
}

/// `[value; len]`, nested for a matrix.
pub(super) fn filled_with(shape: &Shape, value: &TokenStream) -> TokenStream {
    match shape {
        Shape::Scalar => value.clone(),
        Shape::Vector { len, .. } => quote!([#value; #len]),
        Shape::Dynamic { len } => quote!(vec![#value; #len]),
        Shape::Matrix { rows, cols } => quote!([[#value; #rows]; #cols]),
    }
}

/// The element (row `i`, column `j`) of the array `name` of `shape`: `name[i]` of a
/// vector, `name[j][i]` of a matrix (stored by columns).
pub(super) fn at(
    name: &TokenStream,
    shape: &Shape,
    i: &TokenStream,
    j: &TokenStream,
) -> TokenStream {
    match shape {
        Shape::Matrix { .. } => quote!(#name[#j][#i]),
        _ => quote!(#name[#i]),
    }
}

/// A size that is an integer small enough to write out.
pub(super) fn small(len: &TokenStream) -> Option<usize> {
    integer(len).filter(|&n| n <= WRITTEN_OUT)
}

/// A size that is an integer.
pub(super) fn integer(len: &TokenStream) -> Option<usize> {
    syn::parse2::<syn::LitInt>(len.clone())
        .ok()
        .and_then(|lit| lit.base10_parse::<usize>().ok())
}
