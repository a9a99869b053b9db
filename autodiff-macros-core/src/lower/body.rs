//! The function's body and what it returns: one number, a tuple, or an array or vector
//! (and, for a vector output's pullback, its contraction with the seed).

use super::control::strip as strip_expr;
use super::iter::expr_span;
use super::stmt::{map_collect, Tail};
use super::*;

impl Lowering {
    /// The function body: statements, then a tail expression or a final `return expr;`.
    /// With a `return` before the end, every exit assigns a result variable instead, and
    /// the function returns that.
    pub(super) fn function_body(&mut self, block: &syn::Block) {
        if self.outputs > 1 {
            return self.tuple_body(block);
        }
        if let Some((dims, vector, ty)) = self.vector_output.clone() {
            return self.vector_body(block, &dims, vector, ty);
        }
        if control::has_early_return(block) {
            let span = block.brace_token.span.join();
            let result = self.temporary(span);
            let flag = self.new_flag(0, span);
            self.early_return = Some((result, flag));
            self.statements(&block.stmts, Tail::Return, span);
            let (value, nodes) = self.collect(|this| this.read_var(result, span));
            self.emit(Stmt::Return { value, nodes });
            return;
        }
        let Some((last, init)) = block.stmts.split_last() else {
            self.error(
                block,
                "a #[grad] function must return a value: end the body with an expression",
            );
            return;
        };
        for stmt in init {
            self.statement(stmt);
        }
        let value = match last {
            syn::Stmt::Expr(Expr::Return(ret), _) => match &ret.expr {
                Some(value) => Some(&**value),
                None => {
                    self.error(ret, "`return` needs a value");
                    None
                }
            },
            syn::Stmt::Expr(expr, None) if !is_statement_only(expr) => Some(expr),
            stmt => {
                self.statement(stmt);
                self.error(
                    stmt,
                    "a #[grad] function must end with the value it returns \
                     (a tail expression or `return expr;`)",
                );
                None
            }
        };
        if let Some(value) = value {
            // Under a rejected return type, the value's type is not a second error.
            let rejected = self.return_rejected;
            let (value, nodes) = self.collect(|this| match rejected {
                true => this.expr(value),
                false => this.real(value),
            });
            self.emit(Stmt::Return { value, nodes });
        }
    }

    /// The body of a function returning an array or a vector: statements, then the value
    /// returned, which becomes a local variable returned whole. The tail may name a local
    /// (`out`), build one (`[a, b]`, `[0.0; N]`, `vec![0.0; n]`), or map an iterator into a
    /// vector (`xs.iter().map(|x| …).collect()`, which becomes a loop of pushes).
    fn vector_body(&mut self, block: &syn::Block, dims: &[TokenStream], vector: bool, ty: Type) {
        let shape = if vector { "a vector" } else { "an array" };
        if control::has_early_return(block) {
            self.error(
                block,
                format!(
                    "a #[grad] function that returns {shape} must end with it, without \
                     `return` before"
                ),
            );
            return;
        }
        let tail = match block.stmts.split_last() {
            Some((syn::Stmt::Expr(expr, None), init)) if !is_statement_only(expr) => {
                for stmt in init {
                    self.statement(stmt);
                }
                expr
            }
            _ => {
                self.error(
                    block,
                    format!("a #[grad] function that returns {shape} must end with it"),
                );
                return;
            }
        };
        let mut output = Ident::new("__autodiff_output", Span::mixed_site());
        let var = match strip_expr(tail) {
            Expr::Path(path) if path.qself.is_none() && path.path.get_ident().is_some() => {
                let ident = path.path.get_ident().cloned();
                match ident.and_then(|ident| Some((self.scopes.lookup(&ident)?, ident))) {
                    Some((var, ident)) if !self.vars[var].is_param => {
                        output = ident;
                        var
                    }
                    _ => {
                        self.error(
                            tail,
                            format!(
                                "#[grad] returns {shape} built in the body: name a local \
                                 (`out`), or write it out (`[a, b]`, `….collect()`)"
                            ),
                        );
                        return;
                    }
                }
            }
            expr => {
                let statements: Vec<syn::Stmt> = match map_collect(expr) {
                    // `xs.iter().map(|x| f(x)).collect()`: the loop that pushes each value.
                    Some((items, pat, value)) => {
                        let new = self.collected_vec(items);
                        syn::parse_quote! {
                            let mut #output = #new;
                            for #pat in #items {
                                #output.push(#value);
                            }
                        }
                    }
                    None => syn::parse_quote!(let #output = #expr;),
                };
                let errors = self.errors.count();
                for statement in &statements {
                    self.statement(statement);
                }
                if self.errors.count() > errors {
                    return;
                }
                match self.scopes.lookup(&output) {
                    Some(var) => var,
                    None => return,
                }
            }
        };
        // Lengths written differently (`N` and `3`) are for the compiler to compare.
        let found = &self.vars[var];
        let other_lengths = found.dims.len() != dims.len()
            || found
                .dims
                .iter()
                .zip(dims)
                .any(|(a, b)| other_literals(a, b));
        if found.kind != VarKind::Real || found.slice != vector || other_lengths {
            self.error(
                tail,
                format!(
                    "this is not the `{}` that the signature says the function returns",
                    ty.to_token_stream()
                ),
            );
            return;
        }
        self.output = Some(crate::ir::VectorOutput {
            var,
            ty,
            seed: None,
        });
        let span = expr_span(tail);
        if let Some(seed) = self.contract.clone() {
            return self.contraction(&output, &seed, dims, vector, span);
        }
        let (value, nodes) = self.collect(|this| {
            this.push(
                NodeKind::Read(Place {
                    var,
                    indices: Vec::new(),
                }),
                Num::Real,
                span,
            )
        });
        self.emit(Stmt::Return { value, nodes });
    }

    /// The end of the pullback's function (`codegen::vjp`): the output contracted with
    /// the seed, `Σ seed[k]·output[k]`, returned as one number whose gradient is the
    /// vector–Jacobian product.
    fn contraction(
        &mut self,
        output: &Ident,
        seed: &Ident,
        dims: &[TokenStream],
        vector: bool,
        span: Span,
    ) {
        let dot = Ident::new("__autodiff_dot", span.resolved_at(Span::mixed_site()));
        let mut bounds: Vec<TokenStream> = Vec::new();
        if vector {
            bounds.push(quote!(#output.len()));
        }
        bounds.extend(dims.iter().cloned());
        let counters: Vec<Ident> = (0..bounds.len())
            .map(|k| Ident::new(&format!("__autodiff_k{k}"), Span::mixed_site()))
            .collect();
        let mut step = quote!(#dot += #seed #([#counters])* * #output #([#counters])*;);
        for (counter, bound) in counters.iter().zip(&bounds).rev() {
            step = quote!(for #counter in 0..#bound { #step });
        }
        let statements: Vec<syn::Stmt> = syn::parse_quote! {
            let mut #dot = 0.0;
            #step
        };
        for statement in &statements {
            self.statement(statement);
        }
        let tail: Expr = syn::parse_quote!(#dot);
        let (value, nodes) = self.collect(|this| this.real(&tail));
        self.emit(Stmt::Return { value, nodes });
    }

    /// The body of a function returning a tuple: statements, then the tuple `(a, b)`.
    fn tuple_body(&mut self, block: &syn::Block) {
        if control::has_early_return(block) {
            self.error(
                block,
                "a #[grad] function that returns a tuple must end with it, without `return` \
                 before",
            );
            return;
        }
        let tail = match block.stmts.split_last() {
            Some((syn::Stmt::Expr(Expr::Tuple(tuple), None), init))
                if tuple.elems.len() == self.outputs =>
            {
                for stmt in init {
                    self.statement(stmt);
                }
                tuple
            }
            _ => {
                self.error(
                    block,
                    format!(
                        "a #[grad] function that returns a tuple must end with one of {} \
                         values: `(a, b)`",
                        self.outputs
                    ),
                );
                return;
            }
        };
        let (value, nodes) = self.collect(|this| {
            let parts = tail.elems.iter().map(|part| this.real(part)).collect();
            this.push(
                NodeKind::Tuple(parts),
                Num::Real,
                tail.paren_token.span.join(),
            )
        });
        self.emit(Stmt::Return { value, nodes });
    }
}

/// Whether two array lengths are integer literals of different values (`3usize` is `3`).
fn other_literals(a: &TokenStream, b: &TokenStream) -> bool {
    match (
        syn::parse2::<syn::LitInt>(a.clone()),
        syn::parse2::<syn::LitInt>(b.clone()),
    ) {
        (Ok(a), Ok(b)) => a.base10_digits() != b.base10_digits(),
        _ => false,
    }
}
