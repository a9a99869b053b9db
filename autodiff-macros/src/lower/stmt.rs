//! Statements: `let`, assignments, `if`, blocks.

use super::*;

impl Lowering {
    // ----- statements --------------------------------------------------------------------

    /// The function body: statements, then a tail expression or a final `return expr;`.
    pub(super) fn function_body(&mut self, block: &syn::Block) {
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
            let (value, nodes) = self.collect(|this| this.real(value));
            self.emit(Stmt::Return { value, nodes });
        }
    }

    /// The statements of a block (scoped), and its tail value when `needs_value`.
    pub(super) fn block_value(&mut self, block: &syn::Block, needs_value: bool) -> Option<NodeId> {
        self.scopes.push();
        let mut value = None;
        for (position, stmt) in block.stmts.iter().enumerate() {
            let last = position + 1 == block.stmts.len();
            match stmt {
                syn::Stmt::Expr(expr, None) if last && needs_value && !is_statement_only(expr) => {
                    value = Some(self.expr(expr));
                }
                stmt => self.statement(stmt),
            }
        }
        self.scopes.pop();
        if needs_value && value.is_none() {
            value = Some(self.error(block, "this block must end with the value it produces"));
        }
        value
    }

    pub(super) fn statement(&mut self, stmt: &syn::Stmt) {
        match stmt {
            syn::Stmt::Local(local) => self.local(local),
            syn::Stmt::Item(item @ (Item::Const(_) | Item::Use(_))) => {
                self.items.push(item.clone());
            }
            syn::Stmt::Item(item) => {
                self.error(
                    item,
                    "#[grad] supports only `const` and `use` items inside the function; \
                     move other items out of it",
                );
            }
            syn::Stmt::Macro(mac) => {
                self.error(
                    &mac.mac,
                    "#[grad] cannot look inside macro calls; write the expression out",
                );
            }
            syn::Stmt::Expr(expr, _) => self.expr_statement(expr),
        }
    }

    pub(super) fn expr_statement(&mut self, expr: &Expr) {
        match expr {
            Expr::Assign(assign) => self.assignment(&assign.left, None, &assign.right),
            Expr::Binary(binary) if compound_operator(&binary.op).is_some() => {
                self.assignment(&binary.left, Some(binary), &binary.right);
            }
            Expr::Block(block) if block.label.is_none() => {
                self.block_value(&block.block, false);
            }
            Expr::If(expr_if) => self.if_statement(expr_if, None),
            Expr::ForLoop(for_loop) => self.for_loop(for_loop),
            Expr::Paren(paren) => self.expr_statement(&paren.expr),
            Expr::Group(group) => self.expr_statement(&group.expr),
            Expr::Return(ret) => {
                self.error(
                    ret,
                    "`return` is supported only as the last statement of the function",
                );
            }
            expr => {
                // Evaluated for its own sake (a call may have effects); the value is dropped.
                let ((), nodes) = self.collect(|this| {
                    this.expr(expr);
                });
                self.emit(Stmt::Eval { nodes });
            }
        }
    }

    /// `target = value`, or `target op= value` when `compound` is given.
    pub(super) fn assignment(
        &mut self,
        target: &Expr,
        compound: Option<&syn::ExprBinary>,
        value: &Expr,
    ) {
        let (assigned, nodes) = self.collect(|this| {
            let place = this.place(target)?;
            if this.vars[place.var].kind != VarKind::Real {
                this.error(
                    target,
                    "integer and boolean variables cannot be changed in #[grad] code; \
                     use a `for` loop variable or a new `let`",
                );
                return None;
            }
            this.vars[place.var].reassigned = true;
            let rhs = this.real(value);
            let value = match compound {
                None => rhs,
                Some(binary) => {
                    let symbol = compound_operator(&binary.op)?;
                    let op = ops::operator(symbol, 2)?;
                    let current =
                        this.push(NodeKind::Read(place.clone()), Num::Real, binary.op.span());
                    let exprs = [&*binary.left, &*binary.right];
                    this.op(op, vec![current, rhs], &exprs, binary.op.span())
                }
            };
            Some((place, value))
        });
        if let Some((place, value)) = assigned {
            self.emit(Stmt::Assign {
                place,
                value,
                nodes,
            });
        }
    }

    /// The variable or array element an assignment writes.
    pub(super) fn place(&mut self, target: &Expr) -> Option<Place> {
        let (base, index_exprs) = split_index(target);
        let ident = match base {
            Expr::Path(path) if path.qself.is_none() => path.path.get_ident(),
            _ => None,
        };
        let Some(ident) = ident else {
            self.error(
                target,
                "#[grad] can assign only to local variables and their elements (`x`, `h[i]`)",
            );
            return None;
        };
        let Some(var) = self.scopes.lookup(ident) else {
            self.error(
                ident,
                format!("`{ident}` is not a local variable of this function"),
            );
            return None;
        };
        self.indexed(var, ident, &index_exprs, target)
    }

    /// `var[i][j]…`: checks the number of indices and lowers them to integer nodes.
    pub(super) fn indexed(
        &mut self,
        var: VarId,
        ident: &Ident,
        index_exprs: &[&Expr],
        whole: &Expr,
    ) -> Option<Place> {
        let dims = self.vars[var].dims.len();
        if index_exprs.len() != dims {
            let message = if dims == 0 {
                format!("`{ident}` is not an array")
            } else {
                format!(
                    "`{ident}` has {dims} dimension(s): #[grad] reads and writes arrays one \
                     element at a time (`{ident}{}`)",
                    "[i]".repeat(dims)
                )
            };
            self.error(whole, message);
            return None;
        }
        let mut indices = Vec::with_capacity(dims);
        for index in index_exprs {
            let node = self.expr(index);
            match self.nodes[node].num {
                Num::Int | Num::Unknown if self.recomputable(node) => indices.push(node),
                Num::Int | Num::Unknown | Num::Real | Num::Bool => {
                    self.error(
                        index,
                        "an index must be an integer computed from loop variables, integer \
                         parameters and constants",
                    );
                    return None;
                }
            }
        }
        Some(Place { var, indices })
    }

    pub(super) fn local(&mut self, local: &Local) {
        let (pat, ty) = match &local.pat {
            Pat::Type(typed) => (&*typed.pat, Some(&*typed.ty)),
            pat => (pat, None),
        };
        let mutable = matches!(pat, Pat::Ident(pat) if pat.mutability.is_some());
        let ident = match pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                Some(pat.ident.clone())
            }
            Pat::Wild(_) => None,
            pat => {
                self.error(
                    pat,
                    "#[grad] supports only `let name = …;` (no destructuring patterns)",
                );
                return;
            }
        };
        if let Some(ty) = ty {
            if !(is_f64(ty) || is_integer(ty) || is_bool(ty) || array_dims(ty).is_some()) {
                self.error(
                    ty,
                    "#[grad] locals must be `f64`, `f64` arrays, or integers and `bool` \
                     (constants)",
                );
                return;
            }
        }
        let Some(init) = &local.init else {
            // `let x;` (or `let x: f64;`): declared now, assigned later.
            if let Some(ty) = ty.filter(|ty| !is_f64(ty)) {
                self.error(ty, "a `let` without a value must be an `f64`");
            }
            let ident = ident.unwrap_or_else(|| Ident::new("unnamed", Span::call_site()));
            let var = self.declare(&ident, VarKind::Real, Vec::new(), Num::Real);
            self.vars[var].mutable = mutable;
            self.emit(Stmt::Let {
                var,
                value: None,
                nodes: Vec::new(),
            });
            return;
        };
        if let Some((else_token, _)) = &init.diverge {
            self.error(else_token, "#[grad] does not support `let … else`");
        }

        // `[0.0; N]`, `[[0.0; M]; N]`: a local array.
        if let Expr::Repeat(_) = &*init.expr {
            let ((dims, value), nodes) = self.collect(|this| this.array_init(&init.expr));
            if let (Some(dims), Some(value)) = (dims, value) {
                let ident = ident.unwrap_or_else(|| Ident::new("unnamed", Span::call_site()));
                let var = self.declare(&ident, VarKind::Real, dims, Num::Real);
                self.vars[var].mutable = mutable;
                self.emit(Stmt::Let {
                    var,
                    value: Some(value),
                    nodes,
                });
            }
            return;
        }

        let (value, nodes) = self.collect(|this| {
            let value = this.expr(&init.expr);
            this.declared_type(value, ty, &init.expr)
        });
        let num = self.nodes[value].num;
        let kind = match num {
            Num::Real => VarKind::Real,
            Num::Bool => VarKind::Bool,
            Num::Int | Num::Unknown => {
                if !self.recomputable(value) {
                    self.error(
                        &init.expr,
                        "an integer local must be computed from loop variables, integer \
                         parameters and constants (the reverse sweep recomputes it)",
                    );
                    return;
                }
                VarKind::Int
            }
        };
        let ident = ident.unwrap_or_else(|| Ident::new("unnamed", Span::call_site()));
        let var = self.declare(&ident, kind, Vec::new(), num);
        self.vars[var].mutable = mutable;
        self.emit(Stmt::Let {
            var,
            value: Some(value),
            nodes,
        });
    }

    /// `[c; N]` or `[[c; M]; N]` with a constant `c`: the dimensions and the constant node.
    pub(super) fn array_init(&mut self, expr: &Expr) -> (Option<Vec<TokenStream>>, Option<NodeId>) {
        let mut dims = Vec::new();
        let mut current = expr;
        while let Expr::Repeat(repeat) = current {
            dims.push(repeat.len.to_token_stream());
            current = &repeat.expr;
        }
        let element = self.expr(current);
        let constant = matches!(self.nodes[element].kind, NodeKind::Const(_))
            && self.nodes[element].num != Num::Int;
        if !constant {
            self.error(
                current,
                "a local array starts from a constant (`[0.0; N]`); assign its elements after",
            );
            return (None, None);
        }
        let value = self.push(
            NodeKind::Const(expr.to_token_stream()),
            Num::Real,
            expr.span(),
        );
        (Some(dims), Some(value))
    }

    /// Applies the type written in `let name: ty = value;`.
    pub(super) fn declared_type(
        &mut self,
        value: NodeId,
        ty: Option<&Type>,
        expr: &Expr,
    ) -> NodeId {
        match ty {
            None => value,
            Some(ty) if is_f64(ty) => self.expect_real(value, expr),
            Some(ty) if is_integer(ty) => {
                let span = self.nodes[value].span;
                let arg = value;
                self.push(
                    NodeKind::Typed {
                        arg,
                        ty: ty.clone(),
                    },
                    Num::Int,
                    span,
                )
            }
            Some(_) => value,
        }
    }

    pub(super) fn recomputable(&self, node: NodeId) -> bool {
        crate::ir::recomputable(&self.nodes, &self.vars, node)
    }

    /// `if cond { … } else { … }` as a statement, or, with `result`, as the value assigned
    /// to that variable in every branch.
    pub(super) fn if_statement(&mut self, expr_if: &syn::ExprIf, result: Option<VarId>) {
        let (cond, nodes) = self.collect(|this| this.condition(&expr_if.cond));
        let then = self.nested_block(|this| this.branch(&expr_if.then_branch, result));
        let otherwise = match &expr_if.else_branch {
            None => {
                if result.is_some() {
                    self.error(expr_if, "an `if` used as a value needs an `else`");
                }
                Vec::new()
            }
            Some((_, else_expr)) => self.nested_block(|this| match &**else_expr {
                Expr::If(nested) => this.if_statement(nested, result),
                Expr::Block(block) => this.branch(&block.block, result),
                other => {
                    this.error(other, "expected a block after `else`");
                }
            }),
        };
        self.emit(Stmt::If {
            cond,
            nodes,
            then,
            otherwise,
        });
    }

    /// The body of a branch; with `result`, its tail value is assigned to that variable.
    pub(super) fn branch(&mut self, block: &syn::Block, result: Option<VarId>) {
        match result {
            None => {
                self.block_value(block, false);
            }
            Some(var) => {
                let (value, nodes) = self.collect(|this| {
                    let value = this.block_value(block, true);
                    value.map(|v| this.expect_real_node(v, block))
                });
                if let Some(value) = value {
                    self.emit(Stmt::Assign {
                        place: Place {
                            var,
                            indices: Vec::new(),
                        },
                        value,
                        nodes,
                    });
                }
            }
        }
    }

    /// A condition: a comparison, `&&`, `||`, `!`, or a boolean variable.
    pub(super) fn condition(&mut self, expr: &Expr) -> NodeId {
        let node = self.expr(expr);
        if self.nodes[node].num != Num::Bool {
            return self.error(expr, "expected a condition (a comparison or a `bool`)");
        }
        node
    }
}
