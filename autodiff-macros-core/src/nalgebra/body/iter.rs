//! Slices of nalgebra values: what their iterators yield, and the closures and loop
//! patterns that take their elements.

use super::{Pre, Rewriter};
use crate::nalgebra::shape::Shape;
use syn::{Expr, Pat, UnOp};

/// What an iterator yields: one value (of a shape, or `None` for anything else), or a
/// pair (`enumerate`, `zip`).
pub(super) enum Yield {
    One(Option<Shape>),
    Pair(Box<Yield>, Box<Yield>),
}

impl Rewriter {
    /// The element shape of `expr` if it names a slice of nalgebra values (`pts`, `&pts`,
    /// `*pts`), and that slice is not shadowed.
    pub(super) fn slice_of(&self, expr: &Expr) -> Option<Shape> {
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
    pub(super) fn yields(&self, expr: &Expr) -> Option<Yield> {
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
    pub(super) fn bind_numbers(&mut self, pat: &Pat) {
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
    pub(super) fn bind_pattern(&mut self, pat: &Pat, yielded: &Yield) {
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

    /// A link of an iterator chain over a slice of nalgebra values whose closure takes its
    /// elements (`pts.iter().map(|p| (p - c).norm()).sum()`, `.fold(0.0, |acc, p| …)`,
    /// `.filter(|p| p.z > 0.0)`): the closure's parameter has the element's shape. `None`
    /// (nothing rewritten) for any other call.
    pub(super) fn iterator_method(
        &mut self,
        call: &mut syn::ExprMethodCall,
        pre: &mut Pre,
    ) -> Option<Shape> {
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
                Expr::Closure(closure) => self.closure(closure, Some((position, &yielded))),
                arg => {
                    self.expr(arg, pre);
                }
            }
        }
        Some(Shape::Scalar)
    }
}
