//! Loops and the control flow that leaves them.

use super::*;

impl Lowering {
    /// `for i in start..end { … }` with constant bounds.
    pub(super) fn for_loop(&mut self, for_loop: &syn::ExprForLoop) {
        if let Some(label) = &for_loop.label {
            self.error(label, "#[grad] does not support loop labels");
        }
        let ident = match &*for_loop.pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => pat.ident.clone(),
            Pat::Wild(wild) => Ident::new("index", wild.span()),
            pat => {
                self.error(pat, "the loop variable must be a name (`for i in 0..N`)");
                return;
            }
        };
        let range = match &*for_loop.expr {
            Expr::Range(range) => range,
            other => {
                self.error(
                    other,
                    "#[grad] loops run over a constant range: `for i in 0..N` or `0..=N`",
                );
                return;
            }
        };
        let (Some(start), Some(end)) = (&range.start, &range.end) else {
            self.error(
                range,
                "the range of a #[grad] loop needs both bounds: `0..N`",
            );
            return;
        };
        let mut constant = true;
        for bound in [&**start, &**end] {
            if !self.is_constant_expr(bound) {
                self.error(
                    bound,
                    "a loop bound must be a constant (a literal, a `const`, or integer \
                     arithmetic on them): the forward pass keeps one slot per iteration on \
                     the stack",
                );
                constant = false;
            }
        }
        if !constant {
            return;
        }
        let inclusive = matches!(range.limits, syn::RangeLimits::Closed(_));
        self.blocks.push(Vec::new());
        self.scopes.push();
        let var = self.declare(&ident, VarKind::Int, Vec::new(), Num::Int);
        self.block_value(&for_loop.body, false);
        self.scopes.pop();
        let body = self.blocks.pop().unwrap_or_default();
        self.emit(Stmt::For {
            var,
            start: start.to_token_stream(),
            end: end.to_token_stream(),
            inclusive,
            body,
        });
    }

    /// Whether an expression is a compile-time integer constant: literals, paths that are
    /// not local variables, and arithmetic on them.
    pub(super) fn is_constant_expr(&self, expr: &Expr) -> bool {
        match expr {
            Expr::Lit(lit) => matches!(lit.lit, Lit::Int(_)),
            Expr::Path(path) => match path.path.get_ident() {
                Some(ident) => self.scopes.lookup(ident).is_none(),
                None => path.qself.is_none(),
            },
            Expr::Paren(paren) => self.is_constant_expr(&paren.expr),
            Expr::Group(group) => self.is_constant_expr(&group.expr),
            Expr::Binary(binary) => {
                matches!(
                    binary.op,
                    BinOp::Add(_) | BinOp::Sub(_) | BinOp::Mul(_) | BinOp::Div(_) | BinOp::Rem(_)
                ) && self.is_constant_expr(&binary.left)
                    && self.is_constant_expr(&binary.right)
            }
            Expr::Cast(cast) => is_integer(&cast.ty) && self.is_constant_expr(&cast.expr),
            _ => false,
        }
    }
}
