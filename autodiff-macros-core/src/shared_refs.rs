//! `&mut` parameters that the function only reads: differentiated as `&`.
//!
//! A step in front of the pipeline. A parameter `m: &mut Model` (or `&mut self`) whose
//! body never writes through it is given to the pipeline as `m: &Model`, so the generated
//! functions take `&Model`, which a caller's `&mut Model` coerces to: the user's code
//! calls them as it calls the original, which is emitted unchanged. A parameter that the
//! body writes through (or may: it is the root of an assignment, borrowed `&mut`, the
//! receiver of a method that mutates, the iterable of a `for` loop, or bound whole by a
//! `let`) keeps its `&mut`, which the lowering reports.

use proc_macro2::Ident;
use syn::visit::Visit;
use syn::{Expr, FnArg, ItemFn, Pat, Type};

/// Methods of slices, arrays and vectors that write through their receiver.
const MUTATING: &[&str] = &[
    "push",
    "pop",
    "insert",
    "remove",
    "clear",
    "fill",
    "fill_with",
    "swap",
    "sort",
    "sort_by",
    "sort_unstable",
    "sort_unstable_by",
    "reverse",
    "copy_from_slice",
    "clone_from_slice",
    "extend",
    "extend_from_slice",
    "truncate",
    "resize",
    "retain",
    "drain",
    "append",
    "dedup",
    "rotate_left",
    "rotate_right",
    "split_at_mut",
    "as_mut",
    "as_mut_slice",
    "as_mut_ptr",
];

/// Rewrites each `&mut` parameter (and `&mut self`) that `function`'s body only reads to
/// a shared reference.
pub fn share_read_only(function: &mut ItemFn) {
    let block = function.block.clone();
    for input in &mut function.sig.inputs {
        match input {
            FnArg::Receiver(receiver) => {
                if receiver.reference.is_some()
                    && receiver.mutability.is_some()
                    && !writes(&block, "self")
                {
                    receiver.mutability = None;
                    if let Type::Reference(reference) = &mut *receiver.ty {
                        reference.mutability = None;
                    }
                }
            }
            FnArg::Typed(typed) => {
                let Pat::Ident(pat) = &*typed.pat else {
                    continue;
                };
                let name = pat.ident.to_string();
                if let Type::Reference(reference) = &mut *typed.ty {
                    if reference.mutability.is_some() && !writes(&block, &name) {
                        reference.mutability = None;
                    }
                }
            }
        }
    }
}

/// Whether `block` may write through the variable `name`.
fn writes(block: &syn::Block, name: &str) -> bool {
    let mut finder = Writes { name, found: false };
    finder.visit_block(block);
    finder.found
}

struct Writes<'a> {
    name: &'a str,
    found: bool,
}

impl Writes<'_> {
    /// Whether `expr` is a place rooted at the variable: `m`, `m.w[i]`, `*m`, `(m).w`.
    fn rooted(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Path(path) => path.qself.is_none() && path.path.is_ident(self.name),
            Expr::Field(field) => self.rooted(&field.base),
            Expr::Index(index) => self.rooted(&index.expr),
            Expr::Paren(paren) => self.rooted(&paren.expr),
            Expr::Group(group) => self.rooted(&group.expr),
            Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => {
                self.rooted(&unary.expr)
            }
            Expr::MethodCall(call) => {
                // `m.iter_mut()`, `m.w.as_mut_slice()`: a place reached mutably.
                let method = call.method.to_string();
                method.ends_with("_mut") && self.rooted(&call.receiver)
            }
            _ => false,
        }
    }

    /// Whether `expr` is the variable itself.
    fn is_name(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Path(path) => path.qself.is_none() && path.path.is_ident(self.name),
            Expr::Paren(paren) => self.is_name(&paren.expr),
            Expr::Group(group) => self.is_name(&group.expr),
            _ => false,
        }
    }
}

impl<'ast> Visit<'ast> for Writes<'_> {
    fn visit_expr(&mut self, expr: &'ast Expr) {
        let write = match expr {
            Expr::Assign(assign) => self.rooted(&assign.left),
            Expr::Binary(binary) => {
                use syn::BinOp::*;
                matches!(
                    binary.op,
                    AddAssign(_)
                        | SubAssign(_)
                        | MulAssign(_)
                        | DivAssign(_)
                        | RemAssign(_)
                        | BitXorAssign(_)
                        | BitAndAssign(_)
                        | BitOrAssign(_)
                        | ShlAssign(_)
                        | ShrAssign(_)
                ) && self.rooted(&binary.left)
            }
            Expr::Reference(reference) => {
                reference.mutability.is_some() && self.rooted(&reference.expr)
            }
            Expr::MethodCall(call) => {
                let method = call.method.to_string();
                (MUTATING.contains(&method.as_str()) || method.ends_with("_mut"))
                    && self.rooted(&call.receiver)
            }
            Expr::ForLoop(for_loop) => self.is_name(&for_loop.expr),
            _ => false,
        };
        self.found |= write;
        syn::visit::visit_expr(self, expr);
    }

    fn visit_local(&mut self, local: &'ast syn::Local) {
        if let Some(init) = &local.init {
            self.found |= self.is_name(&init.expr);
        }
        syn::visit::visit_local(self, local);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        // A macro's tokens are not parsed; one that names the variable may write it.
        let mentions = crate::types::mentions(&mac.tokens, &|ident: &Ident| ident == self.name);
        self.found |= mentions;
    }
}
