//! Loops and the control flow that leaves them.
//!
//! A `for` over a constant range with no `break`, `continue` or `return` inside stays a
//! [`Stmt::For`]. Every other loop becomes a [`Stmt::Loop`] run by a counter `k = 0, 1, …`:
//! the user's loop variable is computed from `k` (`start + k`, `end - 1 - k`, `xs[k]`), so
//! the reverse sweep can run the same loop backwards.
//!
//! `break`, `continue` and `return` become control flags. The statement that sets one ends
//! its block's straight line: what follows runs under `if !flag { … }`, and a loop stops
//! before an iteration once a flag that ends it is set. The reverse sweep then needs no
//! notion of jumps: it replays the branches the forward pass took.
//!
//! ```text
//! for x in xs {                     let brk = false;
//!     if x > 1.0 { break; }         loop k in 0..xs.len(), until brk {
//!     s += x;                           if xs[k] > 1.0 { brk = true; }
//! }                                     if !brk { s += xs[k]; }
//!                                   }
//! ```

use super::*;
use syn::visit::Visit;

/// Whether `break`, `continue` or `return` occurs in a block (closures excluded).
pub(super) fn contains_exit(block: &syn::Block) -> bool {
    struct Finder(bool);
    impl<'ast> Visit<'ast> for Finder {
        fn visit_expr_break(&mut self, _: &'ast syn::ExprBreak) {
            self.0 = true;
        }
        fn visit_expr_continue(&mut self, _: &'ast syn::ExprContinue) {
            self.0 = true;
        }
        fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut finder = Finder(false);
    finder.visit_block(block);
    finder.0
}

/// Whether a function body has a `return` other than as its last statement.
pub(super) fn has_early_return(block: &syn::Block) -> bool {
    struct Finder(bool);
    impl<'ast> Visit<'ast> for Finder {
        fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
            self.0 = true;
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut finder = Finder(false);
    match block.stmts.split_last() {
        Some((syn::Stmt::Expr(Expr::Return(ret), _), init)) => {
            for stmt in init {
                finder.visit_stmt(stmt);
            }
            if let Some(value) = &ret.expr {
                finder.visit_expr(value);
            }
        }
        _ => finder.visit_block(block),
    }
    finder.0
}

/// A loop's count (with the nodes computing it) and its constant bound, if any.
pub(super) type Counted = (Option<(NodeId, Vec<NodeId>)>, Option<TokenStream>);

impl Lowering {
    // ----- flags -------------------------------------------------------------------------

    /// A new control flag, `false`, declared by a `let` in the current block.
    pub(super) fn new_flag(&mut self, depth: usize, span: Span) -> VarId {
        let var = self.declare_hidden(VarKind::Bool, Num::Bool);
        self.vars[var].mutable = true;
        let (value, nodes) =
            self.collect(|this| this.push(NodeKind::Const(quote!(false)), Num::Bool, span));
        self.emit(Stmt::Let {
            var,
            value: Some(value),
            nodes,
        });
        self.flag_depth.insert(var, depth);
        var
    }

    /// Sets a control flag, and records that it was set.
    fn set_flag(&mut self, var: VarId) {
        self.emit(Stmt::SetFlag { var, value: true });
        self.flags_set.push(var);
    }

    /// The flags set since `before` that still matter at the current depth (those of the
    /// loops around, and `return`'s), without repeats.
    pub(super) fn live_flags(&self, before: usize) -> Vec<VarId> {
        let depth = self.loops.len();
        let mut live = Vec::new();
        for &flag in &self.flags_set[before..] {
            if self.flag_depth.get(&flag).is_some_and(|&d| d <= depth) && !live.contains(&flag) {
                live.push(flag);
            }
        }
        live
    }

    /// A node that is true when none of `flags` is set.
    pub(super) fn none_set(&mut self, flags: &[VarId], span: Span) -> NodeId {
        let any = self.any_set(flags, span);
        self.push(NodeKind::Not(any), Num::Bool, span)
    }

    /// A node that is true when one of `flags` (not empty) is set.
    fn any_set(&mut self, flags: &[VarId], span: Span) -> NodeId {
        let mut any: Option<NodeId> = None;
        for &flag in flags {
            let read = self.read_var(flag, span);
            any = Some(match any {
                None => read,
                Some(lhs) => self.push(
                    NodeKind::Infix {
                        op: quote!(||),
                        lhs,
                        rhs: read,
                    },
                    Num::Bool,
                    span,
                ),
            });
        }
        any.unwrap_or_else(|| self.push(NodeKind::Const(quote!(false)), Num::Bool, span))
    }

    // ----- loops -------------------------------------------------------------------------

    /// `for pattern in iterable { … }`.
    pub(super) fn for_loop(&mut self, for_loop: &syn::ExprForLoop) {
        let exits = contains_exit(&for_loop.body);
        if !exits && for_loop.label.is_none() {
            if let Some((ident, start, end, inclusive)) = self.constant_range(for_loop) {
                if !self.outermost_with_loops(for_loop) {
                    return self.constant_for(for_loop, ident, start, end, inclusive);
                }
            }
        }
        let span = for_loop.for_token.span;
        let Some(chain) = self.chain(&for_loop.expr) else {
            return;
        };
        self.run_loop(
            for_loop.label.as_ref(),
            exits,
            None,
            Some((Some(chain.count), chain.max_trips)),
            span,
            |this, counter| {
                let Some(item) = this.item(&chain.plan, counter, span) else {
                    return;
                };
                this.through_stages(&chain.stages, item, &mut |this, item| {
                    this.bind(&for_loop.pat, item);
                    this.block_statements(&for_loop.body.stmts);
                });
            },
        );
    }

    /// Whether a `for` over a constant range is in the function's outermost block and holds
    /// a loop, where the runtime has its pool of workspaces (the `std` feature): lowered
    /// as a counted loop, whose frames code generation lays out in a slab rather than in
    /// stack arrays zeroed at each call, and which is then not limited by the stack (see
    /// the guide's "Stack use").
    fn outermost_with_loops(&self, for_loop: &syn::ExprForLoop) -> bool {
        struct Loops(bool);
        impl<'ast> syn::visit::Visit<'ast> for Loops {
            fn visit_expr_for_loop(&mut self, _: &'ast syn::ExprForLoop) {
                self.0 = true;
            }
            fn visit_expr_while(&mut self, _: &'ast syn::ExprWhile) {
                self.0 = true;
            }
            fn visit_expr_loop(&mut self, _: &'ast syn::ExprLoop) {
                self.0 = true;
            }
            fn visit_item(&mut self, _: &'ast syn::Item) {}
        }
        if !cfg!(feature = "std") || self.loop_bodies > 0 || self.blocks.len() > 1 {
            return false;
        }
        let mut loops = Loops(false);
        syn::visit::Visit::visit_block(&mut loops, &for_loop.body);
        loops.0
    }

    /// `while cond { … }`.
    pub(super) fn while_loop(&mut self, expr: &syn::ExprWhile) {
        let span = expr.while_token.span;
        if let Expr::Let(let_expr) = &*expr.cond {
            self.error(
                let_expr.let_token,
                "#[grad] does not support `while let`; write `while cond { … }` or a `for` loop",
            );
            return;
        }
        self.run_loop(expr.label.as_ref(), true, None, None, span, |this, _| {
            let (cond, nodes) = this.collect(|this| this.condition(&expr.cond));
            let then = this.nested_block(|this| this.block_statements(&expr.body.stmts));
            let brk = this.loops.last().and_then(|l| l.break_flag);
            let otherwise = this.nested_block(|this| {
                if let Some(brk) = brk {
                    this.set_flag(brk);
                }
            });
            this.emit(Stmt::If {
                cond,
                nodes,
                then,
                otherwise,
            });
        });
    }

    /// `loop { … }`, as a statement or (with `value`) as the value `break value` gives.
    pub(super) fn loop_expr(&mut self, expr: &syn::ExprLoop, value: Option<VarId>) {
        let span = expr.loop_token.span;
        self.run_loop(expr.label.as_ref(), true, value, None, span, |this, _| {
            this.block_statements(&expr.body.stmts);
        });
    }

    /// `loop` used as a value: a temporary that `break value` assigns.
    pub(super) fn loop_value(&mut self, expr: &syn::ExprLoop) -> NodeId {
        let span = expr.loop_token.span;
        let var = self.temporary(span);
        self.loop_expr(expr, Some(var));
        self.read_var(var, span)
    }

    /// Lowers a counted (`count`) or unbounded loop whose body `body` builds, given the
    /// counter variable.
    pub(super) fn run_loop(
        &mut self,
        label: Option<&syn::Label>,
        exits: bool,
        value: Option<VarId>,
        count: Option<Counted>,
        span: Span,
        body: impl FnOnce(&mut Self, VarId),
    ) {
        let depth = self.loops.len() + 1;
        let (break_flag, continue_flag) = if exits {
            (
                Some(self.new_flag(depth, span)),
                Some(self.new_flag(depth, span)),
            )
        } else {
            (None, None)
        };
        let (count, max_trips) = count.unwrap_or((None, None));
        let max_trips = max_trips.filter(|trips| !self.mentions_generic(trips));
        if max_trips.is_none() {
            self.needs_alloc_at(span, "a loop whose trip count is known only at run time");
        }
        let (count, nodes) = match count {
            Some((count, nodes)) => (Some(count), nodes),
            None => (None, Vec::new()),
        };
        self.loops.push(LoopContext {
            label: label.map(|l| l.name.ident.to_string()),
            break_flag,
            continue_flag,
            value,
        });
        let before = self.flags_set.len();
        self.blocks.push(Vec::new());
        self.scopes.push();
        self.loop_bodies += 1;
        let counter = self.declare_hidden(VarKind::Int, Num::Int);
        if let Some(flag) = continue_flag {
            self.emit(Stmt::SetFlag {
                var: flag,
                value: false,
            });
        }
        body(self, counter);
        self.loop_bodies -= 1;
        self.scopes.pop();
        let body = self.blocks.pop().unwrap_or_default();
        self.loops.pop();
        let mut exits = Vec::new();
        for &flag in &self.flags_set[before..] {
            let ends = self.flag_depth.get(&flag).is_some_and(|&d| d <= depth);
            if ends && Some(flag) != continue_flag && !exits.contains(&flag) {
                exits.push(flag);
            }
        }
        // The flags of this loop matter no more once it is over.
        let own = [break_flag, continue_flag];
        let mut index = before;
        while index < self.flags_set.len() {
            if own.contains(&Some(self.flags_set[index])) {
                self.flags_set.remove(index);
            } else {
                index += 1;
            }
        }
        self.emit(Stmt::Loop {
            counter,
            count,
            max_trips,
            nodes,
            exits,
            body,
        });
    }

    /// `for i in start..end` (or `..=`) with constant bounds: `(i, start, end, inclusive)`.
    fn constant_range(
        &self,
        for_loop: &syn::ExprForLoop,
    ) -> Option<(Option<Ident>, TokenStream, TokenStream, bool)> {
        let ident = match &*for_loop.pat {
            Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                Some(pat.ident.clone())
            }
            Pat::Wild(_) => None,
            _ => return None,
        };
        let range = match strip(&for_loop.expr) {
            Expr::Range(range) => range,
            _ => return None,
        };
        let (Some(start), Some(end)) = (&range.start, &range.end) else {
            return None;
        };
        if !(self.is_constant_expr(start) && self.is_constant_expr(end)) {
            return None;
        }
        let inclusive = matches!(range.limits, syn::RangeLimits::Closed(_));
        Some((
            ident,
            start.to_token_stream(),
            end.to_token_stream(),
            inclusive,
        ))
    }

    /// The loop of constant bounds with no exit: the reverse sweep runs the same range
    /// backwards, and saved values live in stack arrays.
    fn constant_for(
        &mut self,
        for_loop: &syn::ExprForLoop,
        ident: Option<Ident>,
        start: TokenStream,
        end: TokenStream,
        inclusive: bool,
    ) {
        self.blocks.push(Vec::new());
        self.scopes.push();
        self.loop_bodies += 1;
        let var = self.declare_named(ident.as_ref(), VarKind::Int, Vec::new(), Num::Int);
        self.block_statements(&for_loop.body.stmts);
        self.loop_bodies -= 1;
        self.scopes.pop();
        let body = self.blocks.pop().unwrap_or_default();
        self.emit(Stmt::For {
            var,
            start,
            end,
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
                Some(ident) => {
                    self.scopes.lookup(ident).is_none()
                        && !self.generic_consts.contains(&ident.to_string())
                }
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

    // ----- leaving -----------------------------------------------------------------------

    /// The loop a `break` or `continue` with this label leaves.
    fn target_loop(
        &mut self,
        label: Option<&syn::Lifetime>,
        tokens: &impl ToTokens,
    ) -> Option<usize> {
        let found = match label {
            None => self.loops.len().checked_sub(1),
            Some(label) => {
                let name = label.ident.to_string();
                self.loops
                    .iter()
                    .rposition(|l| l.label.as_deref() == Some(&*name))
            }
        };
        if found.is_none() {
            self.error(
                tokens,
                "`break` and `continue` must be inside a loop of this function",
            );
        }
        found
    }

    /// `break`, `break 'label`, `break value`. Its own value is never used.
    pub(super) fn break_expr(&mut self, expr: &syn::ExprBreak) -> NodeId {
        let span = expr.break_token.span;
        if let Some(index) = self.target_loop(expr.label.as_ref(), expr) {
            if let Some(value) = &expr.expr {
                match self.loops[index].value {
                    Some(var) => {
                        let (value, nodes) = self.collect(|this| this.real(value));
                        self.assign_var(var, value, nodes);
                    }
                    None => {
                        self.error(value, "`break` with a value needs a `loop` used as a value");
                    }
                }
            }
            if let Some(flag) = self.loops[index].break_flag {
                self.set_flag(flag);
            }
        }
        self.push(NodeKind::Const(quote!(0.0)), Num::Unknown, span)
    }

    /// `continue` or `continue 'label`.
    pub(super) fn continue_expr(&mut self, expr: &syn::ExprContinue) -> NodeId {
        let span = expr.continue_token.span;
        if let Some(index) = self.target_loop(expr.label.as_ref(), expr) {
            // Leaving inner loops for an outer one: they end, and the outer one skips ahead.
            let flag = self.loops[index].continue_flag;
            if let Some(flag) = flag {
                self.set_flag(flag);
            }
        }
        self.push(NodeKind::Const(quote!(0.0)), Num::Unknown, span)
    }

    /// `return value` before the end of the function: the result is assigned, and the
    /// return flag ends every loop and guards everything after.
    pub(super) fn return_expr(&mut self, expr: &syn::ExprReturn) -> NodeId {
        let span = expr.return_token.span;
        let Some(value) = &expr.expr else {
            return self.error(expr, "`return` needs a value");
        };
        if self.closures > 0 {
            return self.error(
                expr,
                "#[grad] does not support `return` inside a closure; write the closure's \
                 body as one expression (`if c { a } else { b }`)",
            );
        }
        let Some((result, flag)) = self.early_return else {
            return self.error(expr, "`return` is not supported here");
        };
        let (value, nodes) = self.collect(|this| this.real(value));
        self.assign_var(result, value, nodes);
        self.set_flag(flag);
        self.push(NodeKind::Const(quote!(0.0)), Num::Unknown, span)
    }

    // ----- match -------------------------------------------------------------------------

    /// `match` on an integer, a `bool` or an `f64`, as a statement or (with `result`) as
    /// the value assigned to that variable in every arm: an `if`/`else if` chain.
    pub(super) fn match_expr(&mut self, expr: &syn::ExprMatch, result: Option<VarId>) {
        let span = expr.match_token.span;
        if let Some(tokens) = self.opaque_scrutinee(&expr.expr) {
            // On a constant of a type #[grad] does not look into: `matches!` per arm.
            self.match_arms(&expr.arms, &Scrutinee::Opaque(tokens), result, span);
            return;
        }
        let scrutinee = self.collect(|this| this.expr(&expr.expr));
        let var = self.let_value(scrutinee);
        self.match_arms(&expr.arms, &Scrutinee::Var(var), result, span);
    }

    fn match_arms(
        &mut self,
        arms: &[syn::Arm],
        scrutinee: &Scrutinee,
        result: Option<VarId>,
        span: Span,
    ) {
        let Some((arm, rest)) = arms.split_first() else {
            return;
        };
        let last = rest.is_empty();
        if last && arm.guard.is_none() {
            // The match is exhaustive (the original compiles): the last arm is the `else`.
            self.scopes.push();
            match scrutinee {
                Scrutinee::Var(var) => self.match_bind(&arm.pat, *var),
                Scrutinee::Opaque(_) => {
                    self.opaque_bindings(&arm.pat);
                }
            }
            self.arm_body(&arm.body, result);
            self.scopes.pop();
            return;
        }
        self.scopes.push();
        let (cond, nodes) = self.collect(|this| {
            let test = match scrutinee {
                Scrutinee::Var(var) => {
                    let test = this.pattern_test(&arm.pat, *var, span);
                    this.match_bind(&arm.pat, *var);
                    test
                }
                Scrutinee::Opaque(tokens) => this.opaque_pattern_test(&arm.pat, tokens, span),
            };
            match &arm.guard {
                Some((_, guard)) => {
                    let guard = this.condition(guard);
                    this.push(
                        NodeKind::Infix {
                            op: quote!(&&),
                            lhs: test,
                            rhs: guard,
                        },
                        Num::Bool,
                        span,
                    )
                }
                None => test,
            }
        });
        let then = self.nested_block(|this| this.arm_body(&arm.body, result));
        self.scopes.pop();
        let otherwise = self.nested_block(|this| this.match_arms(rest, scrutinee, result, span));
        self.emit(Stmt::If {
            cond,
            nodes,
            then,
            otherwise,
        });
    }

    fn arm_body(&mut self, body: &Expr, result: Option<VarId>) {
        match result {
            None => self.expr_statement(body),
            Some(var) => {
                let (value, nodes) = self.collect(|this| {
                    let value = this.expr(body);
                    this.expect_real_node(value, body)
                });
                self.assign_var(var, value, nodes);
            }
        }
    }

    /// The tokens of a scrutinee that reads opaque constants and nothing else.
    fn opaque_scrutinee(&self, expr: &Expr) -> Option<TokenStream> {
        self.is_opaque_expr(expr).then(|| expr.to_token_stream())
    }

    /// Binds the names a pattern introduces (`x`, `n @ 1..=3`) to the scrutinee.
    fn match_bind(&mut self, pat: &Pat, scrutinee: VarId) {
        match pat {
            Pat::Ident(ident) => {
                if ident.subpat.is_none()
                    && self.scopes.lookup(&ident.ident).is_none()
                    && is_binding_name(&ident.ident)
                {
                    self.scopes.bind(&ident.ident, scrutinee);
                } else if let Some((_, sub)) = &ident.subpat {
                    self.scopes.bind(&ident.ident, scrutinee);
                    self.match_bind(sub, scrutinee);
                }
            }
            Pat::Or(or) => {
                if let Some(first) = or.cases.first() {
                    self.match_bind(first, scrutinee);
                }
            }
            Pat::Paren(paren) => self.match_bind(&paren.pat, scrutinee),
            _ => {}
        }
    }

    /// A boolean node: whether the scrutinee matches the pattern.
    fn pattern_test(&mut self, pat: &Pat, scrutinee: VarId, span: Span) -> NodeId {
        let compare = |this: &mut Self, op: TokenStream, bound: &Expr| {
            let lhs = this.read_var(scrutinee, span);
            let rhs = this.expr(bound);
            this.push(NodeKind::Infix { op, lhs, rhs }, Num::Bool, span)
        };
        match pat {
            Pat::Lit(lit) => {
                let bound = Expr::Lit(lit.clone());
                compare(self, quote!(==), &bound)
            }
            Pat::Path(path) => {
                let bound = Expr::Path(path.clone());
                compare(self, quote!(==), &bound)
            }
            Pat::Range(range) => {
                let mut test: Option<NodeId> = None;
                if let Some(start) = &range.start {
                    test = Some(compare(self, quote!(>=), start));
                }
                if let Some(end) = &range.end {
                    let op = match range.limits {
                        syn::RangeLimits::Closed(_) => quote!(<=),
                        syn::RangeLimits::HalfOpen(_) => quote!(<),
                    };
                    let upper = compare(self, op, end);
                    test = Some(match test {
                        None => upper,
                        Some(lhs) => self.push(
                            NodeKind::Infix {
                                op: quote!(&&),
                                lhs,
                                rhs: upper,
                            },
                            Num::Bool,
                            span,
                        ),
                    });
                }
                test.unwrap_or_else(|| self.push(NodeKind::Const(quote!(true)), Num::Bool, span))
            }
            Pat::Or(or) => {
                let mut test: Option<NodeId> = None;
                for case in &or.cases {
                    let rhs = self.pattern_test(case, scrutinee, span);
                    test = Some(match test {
                        None => rhs,
                        Some(lhs) => self.push(
                            NodeKind::Infix {
                                op: quote!(||),
                                lhs,
                                rhs,
                            },
                            Num::Bool,
                            span,
                        ),
                    });
                }
                test.unwrap_or_else(|| self.push(NodeKind::Const(quote!(false)), Num::Bool, span))
            }
            Pat::Paren(paren) => self.pattern_test(&paren.pat, scrutinee, span),
            Pat::Wild(_) => self.push(NodeKind::Const(quote!(true)), Num::Bool, span),
            Pat::Ident(ident) if ident.subpat.is_none() && is_binding_name(&ident.ident) => {
                self.push(NodeKind::Const(quote!(true)), Num::Bool, span)
            }
            Pat::Ident(ident) => match &ident.subpat {
                Some((_, sub)) => self.pattern_test(sub, scrutinee, span),
                None => {
                    // An upper-case name is a constant to compare with.
                    let bound: Expr = syn::parse_quote!(#ident);
                    compare(self, quote!(==), &bound)
                }
            },
            pat => self.error(
                pat,
                "#[grad] matches integers, `bool`s and `f64`s against literals, ranges \
                 (`1..=3`), constants, `|`, `_` and names, with `if` guards; for enums and \
                 `Option` (`Some(..)`), compute the value outside the #[grad] function",
            ),
        }
    }
}

/// What a `match` is on.
enum Scrutinee {
    /// A number or a `bool`, in a variable of its own.
    Var(VarId),
    /// An expression of opaque constants, as written (see `opaque`).
    Opaque(TokenStream),
}

/// A name that a pattern binds (lower case), rather than a constant it compares with.
pub(super) fn is_binding_name(ident: &Ident) -> bool {
    ident
        .to_string()
        .chars()
        .next()
        .is_some_and(|c| c.is_lowercase() || c == '_')
}

/// An expression without the parentheses and invisible groups around it.
pub fn strip(expr: &Expr) -> &Expr {
    match expr {
        Expr::Paren(paren) => strip(&paren.expr),
        Expr::Group(group) => strip(&group.expr),
        expr => expr,
    }
}

/// [`strip`], and then one shared reference taken off (`&xs[1..]` → `xs[1..]`): what a
/// name bound to it reads.
pub fn strip_shared(expr: &Expr) -> &Expr {
    match strip(expr) {
        Expr::Reference(reference) if reference.mutability.is_none() => strip(&reference.expr),
        expr => expr,
    }
}
