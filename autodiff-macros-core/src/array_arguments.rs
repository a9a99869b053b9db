//! Array literals passed to calls, bound by `let` first: a step in front of the pipeline.
//!
//! ```text
//! dot([x, y], &[y, x]) + 1.0        { let __array_0 = [x, y]; let __array_1 = [y, x];
//!                                     dot(__array_0, &__array_1) + 1.0 }
//! ```
//!
//! The lowering takes an array literal as a `let` value, where its elements become a
//! local array; a call then passes that array whole, as it passes any other. The `let`s go
//! right before the statement of the call, in the order the arguments are evaluated,
//! from the parts of the statement that are evaluated once and always: not from inside
//! closures, loops, `match` arms, `if` conditions and branches (a branch is a block, whose
//! statements are taken the same way; a closure's body too, made a block if it is an
//! expression), or the right operand of `&&` and `||`, which may not be evaluated at all
//! (`i < n && g([w[i]]) > 0.0`).

use proc_macro2::Span;
use syn::visit_mut::VisitMut;
use syn::{Block, Expr, ItemFn, Stmt};

/// Binds the array literals that `function`'s body passes to calls.
pub fn bind(function: &mut ItemFn) {
    Binder { count: 0 }.visit_block_mut(&mut function.block);
}

/// The walk over the blocks, numbering the locals.
struct Binder {
    count: usize,
}

impl VisitMut for Binder {
    /// A closure whose body is an expression (`|t| pair([t, t])`) gets a block for its
    /// `let`s, evaluated once per call as its body is.
    fn visit_expr_closure_mut(&mut self, closure: &mut syn::ExprClosure) {
        syn::visit_mut::visit_expr_closure_mut(self, closure);
        if matches!(&*closure.body, Expr::Block(_)) {
            return;
        }
        let mut bound = Vec::new();
        self.take(&mut closure.body, &mut bound);
        if !bound.is_empty() {
            let body = &closure.body;
            *closure.body = syn::parse_quote!({ #(#bound)* #body });
        }
    }

    fn visit_block_mut(&mut self, block: &mut Block) {
        // Nested blocks first, whose statements are taken on their own.
        syn::visit_mut::visit_block_mut(self, block);
        let mut stmts = Vec::with_capacity(block.stmts.len());
        for mut stmt in std::mem::take(&mut block.stmts) {
            let mut bound = Vec::new();
            match &mut stmt {
                Stmt::Local(local) => {
                    if let Some(init) = &mut local.init {
                        self.take(&mut init.expr, &mut bound);
                    }
                }
                Stmt::Expr(expr, _) => self.take(expr, &mut bound),
                Stmt::Item(_) | Stmt::Macro(_) => {}
            }
            stmts.extend(bound);
            stmts.push(stmt);
        }
        block.stmts = stmts;
    }
}

impl Binder {
    /// Replaces each array literal passed to a call in the parts of `expr` evaluated once
    /// and always by a new local, whose `let` it adds to `bound`.
    fn take(&mut self, expr: &mut Expr, bound: &mut Vec<Stmt>) {
        match expr {
            Expr::Call(call) => {
                self.take(&mut call.func, bound);
                for arg in &mut call.args {
                    self.argument(arg, bound);
                }
            }
            Expr::MethodCall(call) => {
                self.take(&mut call.receiver, bound);
                for arg in &mut call.args {
                    self.argument(arg, bound);
                }
            }
            Expr::Binary(binary) => {
                self.take(&mut binary.left, bound);
                let short_circuits = matches!(binary.op, syn::BinOp::And(_) | syn::BinOp::Or(_));
                if !short_circuits {
                    self.take(&mut binary.right, bound);
                }
            }
            Expr::Unary(unary) => self.take(&mut unary.expr, bound),
            Expr::Paren(paren) => self.take(&mut paren.expr, bound),
            Expr::Cast(cast) => self.take(&mut cast.expr, bound),
            Expr::Field(field) => self.take(&mut field.base, bound),
            Expr::Index(index) => {
                self.take(&mut index.expr, bound);
                self.take(&mut index.index, bound);
            }
            Expr::Reference(reference) => self.take(&mut reference.expr, bound),
            Expr::Tuple(tuple) => tuple.elems.iter_mut().for_each(|e| self.take(e, bound)),
            Expr::Array(array) => array.elems.iter_mut().for_each(|e| self.take(e, bound)),
            Expr::Assign(assign) => self.take(&mut assign.right, bound),
            Expr::Return(ret) => {
                if let Some(value) = &mut ret.expr {
                    self.take(value, bound);
                }
            }
            Expr::Struct(literal) => {
                for field in &mut literal.fields {
                    self.take(&mut field.expr, bound);
                }
            }
            _ => {}
        }
    }

    /// A call's argument: an array literal, or a reference to one, becomes a local.
    fn argument(&mut self, arg: &mut Expr, bound: &mut Vec<Stmt>) {
        let literal = match arg {
            Expr::Array(_) => arg,
            Expr::Reference(reference) if matches!(&*reference.expr, Expr::Array(_)) => {
                &mut *reference.expr
            }
            other => return self.take(other, bound),
        };
        // Its elements' own calls first.
        self.take(literal, bound);
        let span = match literal {
            Expr::Array(array) => array.bracket_token.span.join(),
            _ => Span::call_site(),
        };
        let name = syn::Ident::new(&format!("__array_{}", self.count), span);
        self.count += 1;
        let value = std::mem::replace(literal, syn::parse_quote_spanned!(span=> #name));
        bound.push(syn::parse_quote_spanned!(span=> let #name = #value;));
    }
}
