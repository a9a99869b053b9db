//! Unit tests of the pipeline: expansion snapshots, robustness (property tests, in
//! `tests/robustness.rs`), and the operation table.

mod robustness;

mod expansion {
    use crate::grad;
    use quote::quote;

    /// The expansion of `#[grad(args)] item`, pretty-printed.
    fn expand(args: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
        let tokens = grad(args, item);
        match syn::parse2::<syn::File>(tokens.clone()) {
            Ok(file) => prettyplease::unparse(&file),
            Err(error) => panic!("expansion does not parse ({error}): {tokens}"),
        }
    }

    #[test]
    fn design_example() {
        insta::assert_snapshot!(expand(
            quote!(),
            quote! {
                pub fn f(x: f64, y: f64) -> f64 { (x * y).tanh() + x.powi(2) }
            }
        ));
    }

    /// `_hessian` of straight-line code: one sweep over lanes (`codegen/hvp/lanes.rs`),
    /// the value held constant so that only the tangent's lanes go back; with a loop, one
    /// `_hvp` per number.
    #[test]
    fn hessian_in_lanes() {
        insta::assert_snapshot!(expand(
            quote!(hessian),
            quote! {
                pub fn f(x: f64, y: [f64; 2]) -> f64 {
                    let mut a = x * y[0];
                    if a > 0.0 {
                        a = a.sin();
                    }
                    a * y[1]
                }
            }
        ));
        let looped = expand(
            quote!(hessian),
            quote! {
                pub fn g(x: [f64; 3]) -> f64 {
                    let mut s = 0.0;
                    for i in 0..3 {
                        s += x[i] * x[i];
                    }
                    s
                }
            },
        );
        assert!(looped.contains("g_hvp(") && !looped.contains("Lanes"));
    }

    /// A function generic over its float type: a twin per float type through the pipeline,
    /// and each generated function generic again, dispatching through a trait.
    #[test]
    fn generic_float() {
        insta::assert_snapshot!(expand(
            quote!(),
            quote! {
                pub fn f<T: Float>(x: T, n: usize) -> T { x * T::from(n).unwrap() + T::one() }
            }
        ));
    }

    /// nalgebra's types: the body in arrays (a matrix by its columns, operations written
    /// out element by element), a twin with arrays in its signature, and functions of the
    /// user's types around its generated ones.
    #[test]
    fn nalgebra_types() {
        insta::assert_snapshot!(expand(
            quote!(),
            quote! {
                pub fn f(m: &Matrix2<f64>, x: Vector2<f64>) -> f64 {
                    let y = m * x + x * 2.0;
                    y.dot(&x) + y.norm()
                }
            }
        ));
    }

    /// Forward mode beside the gradient: a tangent per value, the rule's partial written
    /// out, a loop run once forward.
    #[test]
    fn forward_mode() {
        insta::assert_snapshot!(expand(
            quote!(jvp, wrt(w, x)),
            quote! {
                pub fn f(w: &[f64; 2], x: f64, n: usize) -> f64 {
                    let mut acc = 0.0;
                    for i in 0..n {
                        acc += (w[i % 2] * x).tanh();
                    }
                    acc * x
                }
            }
        ));
    }

    #[test]
    fn loss_with_lets() {
        insta::assert_snapshot!(expand(
            quote!(),
            quote! {
                pub fn loss(w: f64, b: f64, x: f64) -> f64 {
                    let z = w * x + b;
                    let t = z.tanh();
                    (t - 0.5).powi(2)
                }
            }
        ));
    }

    #[test]
    fn reuse_mutation_calls_and_constants() {
        insta::assert_snapshot!(expand(
            quote!(),
            quote! {
                fn g(x: f64, y: f64, unused: f64) -> f64 {
                    let mut s = x * x;
                    s += x.powf(2.5) / y;
                    let scale = stop_gradient(y).exp();
                    softplus(s) * scale - PI
                }
            }
        ));
    }

    #[test]
    fn loop_over_an_array() {
        insta::assert_snapshot!(expand(
            quote!(wrt(w)),
            quote! {
                pub fn dot(w: &[f64; N], x: &[f64; N]) -> f64 {
                    let mut acc = 0.0;
                    for i in 0..N {
                        acc += (w[i] * x[i]).tanh();
                    }
                    acc
                }
            }
        ));
    }

    #[test]
    fn branch_in_a_loop() {
        insta::assert_snapshot!(expand(
            quote!(),
            quote! {
                fn hinge(w: [f64; 3], t: f64) -> f64 {
                    let mut total = 0.0;
                    for i in 0..3 {
                        if w[i] * t > 1.0 {
                            total += w[i].ln();
                        } else {
                            total -= t * w[i];
                        }
                    }
                    total
                }
            }
        ));
    }

    #[test]
    fn wrt_subset() {
        insta::assert_snapshot!(expand(
            quote!(wrt(c, a)),
            quote! {
                fn h(a: f64, b: f64, c: f64) -> f64 { a * b + c.sin() * b }
            }
        ));
    }

    #[test]
    fn sums_in_lanes() {
        insta::assert_snapshot!(expand(
            quote!(wrt(w), reassociate),
            quote! {
                fn score(w: &[f64], x: &[f64]) -> f64 {
                    let mut s = 0.0;
                    for k in 0..w.len() {
                        s += w[k] * x[k];
                    }
                    s.tanh()
                }
            }
        ));
    }

    #[test]
    fn preaccumulated_sample_loop() {
        insta::assert_snapshot!(expand(
            quote!(wrt(w), reassociate),
            quote! {
                fn fit(w: &[f64; 2], xs: &[[f64; 2]]) -> f64 {
                    let mut loss = 0.0;
                    for x in xs {
                        let mut z = 0.0;
                        for i in 0..2 {
                            z += w[i] * x[i];
                        }
                        loss += z.tanh();
                    }
                    loss / 2.0
                }
            }
        ));
    }

    #[test]
    fn parallel_sample_loop() {
        insta::assert_snapshot!(expand(
            quote!(wrt(w, b), parallel),
            quote! {
                fn fit(w: &[f64; 2], b: &[f64], xs: &[[f64; 2]]) -> f64 {
                    let mut loss = 0.0;
                    for x in xs {
                        let mut z = b[0];
                        for i in 0..2 {
                            z += w[i] * x[i];
                        }
                        loss += z.tanh();
                    }
                    loss / 2.0
                }
            }
        ));
    }

    #[test]
    fn parallel_splits_loops_over_samples_not_loops_of_constant_length() {
        // The sample loop (run-time length) is split; the L2 term's loop over the
        // weights (constant length, nothing inside) is not.
        let expanded = expand(
            quote!(parallel),
            quote! {
                fn loss(w: &[f64; 4], xs: &[f64], ys: &[f64]) -> f64 {
                    let mut sse = 0.0;
                    for i in 0..xs.len() {
                        let r = w[0] * xs[i] + w[1] - ys[i];
                        sse += r * r;
                    }
                    let mut l2 = 0.0;
                    for k in 0..4 {
                        l2 += w[k] * w[k];
                    }
                    sse + l2
                }
            },
        );
        assert_eq!(
            expanded.matches("parallel::reduce").count(),
            1,
            "{expanded}"
        );
    }

    #[test]
    fn run_time_loop_over_slices() {
        insta::assert_snapshot!(expand(
            quote!(wrt(w)),
            quote! {
                pub fn mse(w: &[f64], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
                    let mut loss = 0.0;
                    for (x, y) in xs.iter().zip(ys) {
                        let pred = (w[0] * x[0] + w[1] * x[1]).tanh();
                        loss += (pred - y).powi(2);
                    }
                    loss
                }
            }
        ));
    }

    #[test]
    fn while_break_and_early_return() {
        insta::assert_snapshot!(expand(
            quote!(),
            quote! {
                fn g(x: f64, n: usize) -> f64 {
                    let mut y = x;
                    let mut k = 0;
                    while k < n {
                        if y > 10.0 {
                            return y;
                        }
                        y = y * y + 1.0;
                        k += 1;
                    }
                    y
                }
            }
        ));
    }

    #[test]
    fn f32_slices_and_a_while() {
        // Everything in `f32`: rules, adjoints, stack tapes; values saved on the (`f64`)
        // workspace converted both ways.
        insta::assert_snapshot!(expand(
            quote!(wrt(w)),
            quote! {
                pub fn fit(w: &[f32], xs: &[[f32; 2]], n: usize) -> f32 {
                    let mut loss = 0.0;
                    for x in xs {
                        let mut h = [0.0; 2];
                        for j in 0..2 {
                            h[j] = (w[j] * x[j]).tanh();
                        }
                        loss += (h[0] * h[1]).relu() + h[0];
                    }
                    let mut k = 0;
                    while k < n {
                        loss = loss.sin() * 2.0;
                        k += 1;
                    }
                    loss / xs.len() as f32
                }
            }
        ));
    }

    #[test]
    fn errors_keep_the_original_and_a_stub() {
        insta::assert_snapshot!(expand(
            quote!(),
            quote! {
                fn bad(x: f64) -> f64 { let c = move || x; x.frobnicate() + c() }
            }
        ));
    }

    #[test]
    fn two_thousand_operations_expand() {
        let mut body = quote!(let mut acc = x;);
        for i in 0..1000 {
            let k = i as f64 + 0.5;
            body.extend(quote!(acc = (acc * #k).sin();));
        }
        let out = expand(quote!(), quote!(fn big(x: f64) -> f64 { #body acc }));
        assert!(
            out.contains(
                "fn big_grad(x: f64) -> (::core::primitive::f64, ::core::primitive::f64) {"
            ),
            "{out}"
        );
        assert_eq!(out.matches("rules::generic::sin").count(), 1000);
        // The gradient has some 7,000 bindings, but its runs of `let`s are cut into
        // functions of at most 500 `let`s each (`codegen/outline.rs`), which take up to a
        // few hundred values from earlier ones, and what stays in the gradient's own block
        // is declared 64 to a `let` (`codegen/scopes.rs`): scopes nest some hundreds deep,
        // not 7,000 (rustc crashes at about 3,000).
        let file: syn::File = syn::parse_str(&out).expect("the expansion parses");
        let gradient = file
            .items
            .iter()
            .find_map(|item| match item {
                syn::Item::Fn(f) if f.sig.ident == "big_grad" => Some(f),
                _ => None,
            })
            .expect("the gradient");
        let bindings = out.matches("__primal_").count();
        let depth = scope_depth(&gradient.block.stmts);
        assert!(bindings > 6_000, "{bindings} bindings");
        assert!(depth <= 1_000, "scopes nest {depth} deep");
        assert!(out.contains("fn __segment_0"), "{out}");
    }

    /// How deep the scopes of `stmts` nest: each `let` opens one that lasts to the end of
    /// its block.
    fn scope_depth(stmts: &[syn::Stmt]) -> usize {
        struct Inner(usize);
        impl<'a> syn::visit::Visit<'a> for Inner {
            fn visit_block(&mut self, block: &'a syn::Block) {
                self.0 = self.0.max(scope_depth(&block.stmts));
            }
        }
        let (mut lets, mut depth) = (0, 0);
        for stmt in stmts {
            let mut inner = Inner(0);
            syn::visit::Visit::visit_stmt(&mut inner, stmt);
            if matches!(stmt, syn::Stmt::Local(_)) {
                lets += 1;
            }
            depth = depth.max(lets + inner.0);
        }
        depth
    }
}

mod table {
    use crate::ops::{Arg::Real, *};

    #[test]
    fn every_op_is_consistent() {
        for op in OPS {
            let reals = op.args.iter().filter(|a| **a == Real).count();
            assert_eq!(op.partials.len(), reals, "{}", op.name);
            assert!(op.rule_wrt_only.is_empty() || op.rule_wrt_only.len() == reals);
            assert_eq!(op.args[0], Real, "{}: the receiver is an f64", op.name);
        }
    }

    #[test]
    fn operations_with_an_edge_are_in_the_table() {
        let edges: Vec<_> = OPS
            .iter()
            .filter(|op| op.has_edge())
            .map(|op| op.name)
            .collect();
        assert_eq!(edges.len(), 8, "{edges:?}");
        for op in OPS.iter().filter(|op| op.has_edge()) {
            assert!(op.calls_rule(), "{}: a partial from a rule", op.name);
        }
    }

    #[test]
    fn names_are_unique_per_syntax() {
        for (i, a) in OPS.iter().enumerate() {
            for b in &OPS[i + 1..] {
                assert_ne!(a.name, b.name, "an operation appears twice in the table");
            }
        }
    }

    /// The guide's table of operations (in the facade's `src/guide/language.md`) is this
    /// table. `UPDATE_GUIDE=1 cargo test -p autodiff-macros-core guide` rewrites it after a
    /// change to `OPS`.
    #[test]
    fn guide_table_matches() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../src/guide/language.md");
        let readme = std::fs::read_to_string(path).expect("the guide is readable");
        let start = "<!-- ops-table:start -->\n";
        let end = "<!-- ops-table:end -->";
        let from = readme
            .find(start)
            .expect("the guide has the ops table markers")
            + start.len();
        let to = readme[from..].find(end).expect("end marker") + from;
        let table = markdown_table();
        if std::env::var_os("UPDATE_GUIDE").is_some() {
            let updated = format!("{}{}{}", &readme[..from], table, &readme[to..]);
            std::fs::write(path, updated).expect("the guide is writable");
        } else {
            assert_eq!(
                readme[from..to],
                table,
                "the guide's operation table is out of date: run with UPDATE_GUIDE=1"
            );
        }
    }
}
/// The facade's path in generated code: found for a renamed dependency, or given by
/// `crate = path`, and then nowhere `::autodiff` (see `krate`).
mod facade_path {
    use quote::quote;

    fn mentions(tokens: &proc_macro2::TokenStream, path: &str) -> bool {
        tokens.to_string().contains(path)
    }

    #[test]
    fn a_renamed_dependency_is_named_everywhere() {
        let item = quote! {
            fn f(x: [f64; 2], v: &[f64]) -> f64 { x[0].tanh() * v.iter().sum::<f64>() }
        };
        let tokens = crate::grad_in(Some("ad"), quote!(jvp, hvp, wrt(x)), item);
        assert!(mentions(&tokens, ":: ad :: __private"), "{tokens}");
        assert!(!mentions(&tokens, ":: autodiff ::"), "{tokens}");
    }

    #[test]
    fn the_crate_option_wins() {
        let item = quote!(
            fn f(x: f64) -> f64 {
                x.exp().ln_1p()
            }
        );
        for option in [
            quote!(crate = crate::reexported),
            quote!(crate = "crate::reexported"),
        ] {
            let tokens = crate::grad_in(Some("ad"), option, item.clone());
            assert!(
                mentions(&tokens, "crate :: reexported :: __private"),
                "{tokens}"
            );
            assert!(!mentions(&tokens, ":: autodiff ::"), "{tokens}");
            assert!(!mentions(&tokens, ":: ad ::"), "{tokens}");
        }
    }

    #[test]
    fn the_derive_takes_the_option_on_the_struct() {
        let item = quote! {
            #[differentiable(crate = ::ad)]
            struct Line { a: f64, b: f64 }
        };
        let tokens = crate::derive_differentiable(item);
        assert!(mentions(&tokens, ":: ad :: Differentiable"), "{tokens}");
        assert!(!mentions(&tokens, ":: autodiff ::"), "{tokens}");
    }
}

/// The size of the generated code against the size of the function: linear, also where
/// a loop saves many values for its sweep (the offsets of a loop's frame once grew with
/// the square of the number of values it saves, found by the random programs: a
/// twenty-line function expanded to 3 MB with `hvp`).
mod growth {
    use quote::quote;

    /// The words of the pretty-printed code.
    fn count(tokens: proc_macro2::TokenStream) -> usize {
        let file: syn::File = syn::parse2(tokens).expect("the expansion parses");
        prettyplease::unparse(&file).split_whitespace().count()
    }

    /// The expansion's size, in words, of a loop whose body saves about `n` values.
    fn size(n: usize, args: &proc_macro2::TokenStream) -> f64 {
        let updates = (0..n).map(|_| quote!(s = (s * x).sin() + s.tanh();));
        let item = quote! {
            fn f(x: f64) -> f64 {
                let mut total = 0.0;
                for k in 0..3 {
                    let mut s = x + (k as f64);
                    for j in 0..2 {
                        #(#updates)*
                        s += j as f64;
                    }
                    total += s;
                }
                total
            }
        };
        count(crate::grad(args.clone(), item)) as f64
    }

    #[test]
    fn the_code_of_a_loop_grows_linearly_with_what_it_saves() {
        for args in [quote!(), quote!(hvp)] {
            let (small, large) = (size(20, &args), size(80, &args));
            // Four times the statements: about four times the code, not sixteen.
            assert!(
                large / small < 4.4,
                "{args}: {small} words for 20 statements, {large} for 80"
            );
        }
    }
}
