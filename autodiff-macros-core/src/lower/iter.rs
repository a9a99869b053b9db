//! Iterator chains: the iterable of a `for` loop, and reductions (`sum`, `product`,
//! `fold`) of a chain with closures, lowered to counted loops.
//!
//! A chain is read from its source outwards. Every adapter that moves items (`rev`,
//! `step_by`, `skip`, `take`, `zip`, `enumerate`, `windows`, `chunks`) is a change of
//! position: the item at counter `k` is found by mapping `k` back through the adapters to a
//! position in the source. `map` is part of the item; `filter` (and every `map` after it)
//! runs in the loop body, around what follows.
//!
//! ```text
//! xs.iter().zip(ys).map(|(x, y)| (x - y).powi(2)).sum::<f64>()
//!
//! let mut acc = 0.0;
//! loop k in 0..min(xs.len(), ys.len()) {   // count, evaluated once
//!     let m = (xs[k] - ys[k]).powi(2);     // the closure, its pattern bound to the items
//!     acc = acc + m;
//! }
//! acc
//! ```

use super::control::strip;
use super::*;

/// A position in a source, as a function of the loop counter.
#[derive(Clone)]
pub(super) enum Pos {
    /// The counter itself.
    Counter,
    /// `count - 1 - p` (`rev`).
    Back { count: VarId, inner: Box<Pos> },
    /// `p * step` (`step_by`, `chunks`).
    Scale { step: VarId, inner: Box<Pos> },
    /// `p + n` (`skip`).
    Shift { by: VarId, inner: Box<Pos> },
}

/// What the chain yields at a position.
#[derive(Clone)]
pub(super) enum Plan<'a> {
    /// `xs[prefix…][p]` of a slice or array (the prefix when iterating over a row), as a
    /// reference to it (`refs` 1: `xs.iter()`, `&xs`, a slice) or by value (0: `.copied()`,
    /// an array owned by the function).
    Element {
        var: VarId,
        prefix: Vec<VarId>,
        pos: Pos,
        refs: usize,
    },
    /// The `p`-th value of a range.
    Range { start: VarId, end: VarId, pos: Pos },
    /// `p` itself (`enumerate`).
    Index(Pos),
    /// `(a, b)` (`zip`, `enumerate`).
    Tuple(Vec<Plan<'a>>),
    /// `xs[prefix…][p..p + size]` (`windows`), or `xs[prefix…][p * size..]` up to `size`
    /// long (`chunks`), the prefix when the sequence is a row bound to a name.
    Window {
        var: VarId,
        prefix: Vec<VarId>,
        start: Pos,
        len: Option<VarId>,
        size: VarId,
    },
    /// A closure applied to an item (`map`).
    Map(Box<Plan<'a>>, &'a syn::ExprClosure),
}

/// A stage that runs in the loop body, in order.
pub(super) enum Stage<'a> {
    Map(&'a syn::ExprClosure),
    Filter(&'a syn::ExprClosure),
}

/// A lowered chain: how many items, what each one is, and the body stages.
pub(super) struct Chain<'a> {
    /// The number of items, with the nodes that compute it (before the loop).
    pub count: (NodeId, Vec<NodeId>),
    /// A constant bound on the count, when the source is an array or a constant range.
    pub max_trips: Option<TokenStream>,
    pub plan: Plan<'a>,
    pub stages: Vec<Stage<'a>>,
}

/// An item, ready to bind: the value of a stage, or part of a source.
pub(super) enum Item<'a> {
    /// A variable holding the item (a counter, a range value, a mapped value).
    Var(VarId),
    /// An alias into a slice or array.
    Alias(Alias),
    /// A tuple of items.
    Tuple(Vec<Item<'a>>),
    /// A closure still to apply to an item (a `map` before the item is used).
    Map(Box<Item<'a>>, &'a syn::ExprClosure),
}

const SUPPORTED_CHAINS: &str = "supported iterables: a range `a..b` or `a..=b`, a slice or \
    array `xs`, `&xs`, `xs.iter()` (also `.copied()`, `.cloned()`), `xs.windows(k)`, \
    `xs.chunks(k)`, `xs.chunks_exact(k)`; then `.rev()`, `.step_by(k)`, `.skip(n)`, \
    `.take(n)`, `.enumerate()`, `.zip(ys)`, `.map(|x| …)`, `.filter(|x| …)`";

impl Lowering {
    /// Lowers an iterable to a chain, emitting the `let`s of its bounds before the loop.
    pub(super) fn chain<'a>(&mut self, expr: &'a Expr) -> Option<Chain<'a>> {
        let (count, max_trips, plan, stages) = self.links(expr)?;
        let (count, nodes) = self.collect(|this| this.read_var(count, expr_span(expr)));
        Some(Chain {
            count: (count, nodes),
            max_trips,
            plan,
            stages,
        })
    }

    /// `(count variable, constant bound, plan, stages)` of a chain.
    #[allow(clippy::type_complexity)]
    fn links<'a>(
        &mut self,
        expr: &'a Expr,
    ) -> Option<(VarId, Option<TokenStream>, Plan<'a>, Vec<Stage<'a>>)> {
        let span = expr_span(expr);
        match strip(expr) {
            Expr::Range(range) => {
                let (Some(start), Some(end)) = (&range.start, &range.end) else {
                    self.error(range, "a #[grad] loop range needs both bounds: `a..b`");
                    return None;
                };
                let constant = self.is_constant_expr(start) && self.is_constant_expr(end);
                let start_var = self.let_int(span, |this| this.expr(start));
                let end_var = self.let_int(span, |this| this.expr(end));
                let inclusive = matches!(range.limits, syn::RangeLimits::Closed(_));
                let count = self.range_count(start_var, end_var, inclusive, span);
                let max_trips = constant.then(|| {
                    let (start, end) = (start.to_token_stream(), end.to_token_stream());
                    if inclusive {
                        quote!(((#end) + 1 - (#start)) as ::core::primitive::usize)
                    } else {
                        quote!(((#end) - (#start)) as ::core::primitive::usize)
                    }
                });
                let plan = Plan::Range {
                    start: start_var,
                    end: end_var,
                    pos: Pos::Counter,
                };
                Some((count, max_trips, plan, Vec::new()))
            }
            Expr::Reference(reference) if reference.mutability.is_none() => {
                let (count, max_trips, plan, stages) = self.links(&reference.expr)?;
                Some((count, max_trips, with_refs(plan, &|_| 1), stages))
            }
            Expr::Index(index) if matches!(strip(&index.index), Expr::Range(_)) => {
                let Expr::Range(range) = strip(&index.index) else {
                    return None;
                };
                self.subslice(index, range)
            }
            Expr::Index(index) if self.row_of(index).is_some() => self.row(index, span),
            Expr::Path(_) | Expr::Field(_) | Expr::Index(_) => {
                let var = self.sequence(expr)?;
                self.source(var, span)
            }
            Expr::MethodCall(call) => self.adapter(call),
            other => {
                self.error(
                    other,
                    format!("#[grad] cannot iterate over this; {SUPPORTED_CHAINS}"),
                );
                None
            }
        }
    }

    /// A slice or array variable named by `expr`, or an error (none for a parameter whose
    /// type was rejected: reported there).
    fn sequence(&mut self, expr: &Expr) -> Option<VarId> {
        if self.rejected_root(expr) {
            return None;
        }
        if let Expr::Path(path) = strip(expr) {
            if let Some(ident) = path.path.get_ident() {
                if let Some(var) = self.scopes.lookup(ident) {
                    let v = &self.vars[var];
                    let numbers = matches!(v.kind, VarKind::Real | VarKind::Int | VarKind::Data);
                    if numbers && (v.slice || !v.dims.is_empty()) {
                        return Some(var);
                    }
                }
            }
        }
        let collection = match strip(expr) {
            Expr::Path(path) => path
                .path
                .get_ident()
                .map(|ident| ident.to_string().replace('·', "."))
                .filter(|name| self.collections.contains_key(name)),
            _ => None,
        };
        let message = match collection {
            Some(name) => format!(
                "`{name}` is a collection of structs: #[grad] reads its elements in a `for` \
                 loop (`for p in &{name} {{ … p.field … }}`) or by index \
                 (`{name}[i].field`), not through iterator adapters"
            ),
            None => "#[grad] iterates over slice and array parameters and local arrays of `f64`"
                .to_owned(),
        };
        self.error(expr, message);
        None
    }

    /// Every item of a slice or array: `xs[k]`; of a row or window that a loop bound to a
    /// name (`for row in rows { for x in row { … } }`): `rows[i][k]`, `xs[offset + k]`.
    /// Iterated as named, a parameter that is a reference (or a row bound as one) yields
    /// references, an array or vector of the function's own its elements.
    fn source<'a>(
        &mut self,
        var: VarId,
        span: Span,
    ) -> Option<(VarId, Option<TokenStream>, Plan<'a>, Vec<Stage<'a>>)> {
        let count = self.let_int(span, |this| this.len_of(var, span));
        let v = &self.vars[var];
        let max_trips = (!v.slice).then(|| v.dims[0].clone());
        let plan = match self.aliases.get(&var).cloned() {
            None => Plan::Element {
                var,
                prefix: Vec::new(),
                pos: Pos::Counter,
                refs: usize::from(self.references.contains(&var)),
            },
            Some(alias) => Plan::Element {
                var: alias.var,
                prefix: alias.prefix,
                pos: match alias.offset {
                    None => Pos::Counter,
                    Some(by) => Pos::Shift {
                        by,
                        inner: Box::new(Pos::Counter),
                    },
                },
                refs: alias.refs.min(1),
            },
        };
        Some((count, max_trips, plan, Vec::new()))
    }

    /// The variable of `w[i]`, a row of a parameter or local of two or more dimensions (a
    /// 2-D array, a slice of arrays, a field of a collection's elements), if it is one.
    fn row_of(&self, index: &syn::ExprIndex) -> Option<VarId> {
        let Expr::Path(path) = strip(&index.expr) else {
            return None;
        };
        let var = self.scopes.lookup(path.path.get_ident()?)?;
        let v = &self.vars[var];
        let rank = v.dims.len() + usize::from(v.slice);
        let numbers = matches!(v.kind, VarKind::Real | VarKind::Int | VarKind::Data);
        (numbers && rank >= 2 && !self.aliases.contains_key(&var) && !self.structs.contains(&var))
            .then_some(var)
    }

    /// The length of the row `w[i]`, a constant expression, if `w[i]` is one of a constant
    /// length.
    fn row_len(&self, index: &syn::ExprIndex) -> Option<TokenStream> {
        let v = &self.vars[self.row_of(index)?];
        (!v.rows).then(|| v.dims[usize::from(!v.slice)].clone())
    }

    /// The length of the row `w[i]` as an integer node, if `w[i]` is a row: its constant
    /// length, or `rows[i].len()` of a row of run-time length.
    pub(super) fn row_length(&mut self, index: &syn::ExprIndex, span: Span) -> Option<NodeId> {
        let var = self.row_of(index)?;
        if self.vars[var].rows {
            let row = self.expr(&index.index);
            return Some(self.row_len_of(var, row, span));
        }
        let len = self.row_len(index)?;
        Some(self.constant_len(len, span))
    }

    /// `rows[row].len()`, the length of a row of run-time length.
    fn row_len_of(&mut self, var: VarId, row: NodeId, span: Span) -> NodeId {
        let place = Place {
            var,
            indices: vec![row],
        };
        self.push(NodeKind::Len(place), Num::Int, span)
    }

    /// `let len = rows[row].len();` of the row at the integer variable `row`, as a hidden
    /// integer.
    fn row_len_var(&mut self, var: VarId, row: VarId, span: Span) -> VarId {
        self.let_int(span, |this| {
            let row = this.read_var(row, span);
            this.row_len_of(var, row, span)
        })
    }

    /// `let r = &rows[i];` (or `rows[i]`, of `&[&[f64]]`) of a row of run-time length:
    /// binds `r` to the row, a slice whose length is read once. Whether `expr` is one.
    pub(super) fn row_local(&mut self, ident: Option<&Ident>, expr: &Expr) -> bool {
        let Expr::Index(index) = super::control::strip_shared(expr) else {
            return false;
        };
        let Some(var) = self.row_of(index).filter(|&var| self.vars[var].rows) else {
            return false;
        };
        let span = index.bracket_token.span.join();
        let row = self.let_int(span, |this| this.expr(&index.index));
        let len = self.row_len_var(var, row, span);
        let alias = Alias {
            var,
            prefix: vec![row],
            offset: None,
            len: Some(len),
            refs: 1,
        };
        self.bind_slice(ident, alias);
        true
    }

    /// Binds `ident` (if any) to a new name for the slice that `alias` names, one row
    /// of a sequence (past the prefix, and the offset if any) of run-time length.
    fn bind_slice(&mut self, ident: Option<&Ident>, alias: Alias) {
        let v = &self.vars[alias.var];
        let used = (alias.prefix.len() + 1).saturating_sub(usize::from(v.slice));
        let dims = v.dims[used.min(v.dims.len())..].to_vec();
        let placeholder = self.declare_hidden(v.kind, self.var_nums[alias.var]);
        self.vars[placeholder].dims = dims;
        self.vars[placeholder].slice = true;
        self.aliases.insert(placeholder, alias);
        if let Some(ident) = ident {
            self.scopes.bind(ident, placeholder);
        }
    }

    /// `let s = &xs[a..b];` (also `xs[a..]`, `..=`, of a slice, an array, a row bound to a
    /// name or `rows[i]`): binds `s` to those numbers, read in place, as a window is.
    /// Whether `expr` is one.
    pub(super) fn subslice_local(&mut self, ident: Option<&Ident>, expr: &Expr) -> bool {
        let Expr::Index(index) = super::control::strip_shared(expr) else {
            return false;
        };
        let Expr::Range(range) = strip(&index.index) else {
            return false;
        };
        let span = index.bracket_token.span.join();
        // The numbers sliced: a row `w[i]`, or a sequence named by a variable (a row
        // bound to a name is its row); not a window, whose offset this would add to.
        let (var, prefix, len) = match strip(&index.expr) {
            Expr::Index(row) if self.row_of(row).is_some() => {
                let Some((count, _, Plan::Element { var, prefix, .. }, _)) = self.row(row, span)
                else {
                    return false;
                };
                (var, prefix, count)
            }
            Expr::Path(path) => {
                let Some(named) = path.path.get_ident().and_then(|i| self.scopes.lookup(i)) else {
                    return false;
                };
                let v = &self.vars[named];
                let numbers = matches!(v.kind, VarKind::Real | VarKind::Data);
                let sequence = v.slice || !v.dims.is_empty();
                if !numbers || !sequence || self.structs.contains(&named) {
                    return false;
                }
                let (var, prefix) = match self.aliases.get(&named) {
                    None => (named, Vec::new()),
                    Some(alias) if alias.offset.is_none() => (alias.var, alias.prefix.clone()),
                    Some(_) => return false,
                };
                let len = self.let_int(span, |this| this.len_of(named, span));
                (var, prefix, len)
            }
            _ => return false,
        };
        let start = self.let_int(span, |this| match &range.start {
            Some(start) => this.expr(start),
            None => this.push(NodeKind::Const(quote!(0usize)), Num::Int, span),
        });
        let end = match &range.end {
            Some(end) => self.let_int(span, |this| this.expr(end)),
            None => len,
        };
        let inclusive = matches!(range.limits, syn::RangeLimits::Closed(_));
        let count = self.range_count(start, end, inclusive, span);
        let alias = Alias {
            var,
            prefix,
            offset: Some(start),
            len: Some(count),
            refs: 1,
        };
        self.bind_slice(ident, alias);
        true
    }

    /// `w[i]` as an iterable (`for x in w[i].iter()`): the items of the row.
    fn row<'a>(
        &mut self,
        index: &syn::ExprIndex,
        span: Span,
    ) -> Option<(VarId, Option<TokenStream>, Plan<'a>, Vec<Stage<'a>>)> {
        let var = self.row_of(index)?;
        let len = self.row_len(index);
        let row = self.let_int(span, |this| this.expr(&index.index));
        let count = match &len {
            Some(len) => self.let_int(span, |this| this.constant_len(len.clone(), span)),
            None => self.row_len_var(var, row, span),
        };
        let plan = Plan::Element {
            var,
            prefix: vec![row],
            pos: Pos::Counter,
            refs: 0,
        };
        Some((count, len, plan, Vec::new()))
    }

    /// `xs[a..b]`, `xs[a..]`, `xs[..b]` (also `..=`) as an iterable: the items of the range.
    fn subslice<'a>(
        &mut self,
        index: &'a syn::ExprIndex,
        range: &'a syn::ExprRange,
    ) -> Option<(VarId, Option<TokenStream>, Plan<'a>, Vec<Stage<'a>>)> {
        let span = index.bracket_token.span.join();
        // Of a variable, or of a row of one (`w[i][1..3]`).
        let (plan, length) = match strip(&index.expr) {
            Expr::Index(row) if self.row_of(row).is_some() => {
                let (count, _, plan, _) = self.row(row, span)?;
                (plan, Ok(count))
            }
            expr => {
                let var = self.sequence(expr)?;
                (self.source(var, span)?.2, Err(var))
            }
        };
        let start = self.let_int(span, |this| match &range.start {
            Some(start) => this.expr(start),
            None => this.push(NodeKind::Const(quote!(0usize)), Num::Int, span),
        });
        let inclusive = matches!(range.limits, syn::RangeLimits::Closed(_));
        let end = self.let_int(span, |this| match (&range.end, length) {
            (Some(end), _) => this.expr(end),
            (None, Ok(count)) => this.read_var(count, span),
            (None, Err(var)) => this.len_of(var, span),
        });
        let count = self.range_count(start, end, inclusive, span);
        let plan = substitute(plan, &|inner| Pos::Shift {
            by: start,
            inner: Box::new(inner),
        });
        Some((count, None, plan, Vec::new()))
    }

    /// `.windows(size)`, `.chunks(size)` or `.chunks_exact(size)` (`name`, of `call`) of
    /// the sequence `var` past the leading indices `prefix`, of length `len`.
    fn windows<'a>(
        &mut self,
        call: &'a syn::ExprMethodCall,
        name: &str,
        var: VarId,
        prefix: Vec<VarId>,
        len: VarId,
    ) -> Option<(VarId, Option<TokenStream>, Plan<'a>, Vec<Stage<'a>>)> {
        let span = call.method.span();
        let size = self.let_int(span, |this| this.expr(&call.args[0]));
        let count_name = match name {
            "windows" => "count_windows",
            "chunks" => "count_chunks",
            _ => "count_chunks_exact",
        };
        let count = self.int_call(count_name, len, size, span);
        let (start, len) = if name == "windows" {
            (Pos::Counter, None)
        } else {
            let start = Pos::Scale {
                step: size,
                inner: Box::new(Pos::Counter),
            };
            (start, (name == "chunks").then_some(len))
        };
        let plan = Plan::Window {
            var,
            prefix,
            start,
            len,
            size,
        };
        Some((count, None, plan, Vec::new()))
    }

    /// `receiver.method(args)` in a chain.
    fn adapter<'a>(
        &mut self,
        call: &'a syn::ExprMethodCall,
    ) -> Option<(VarId, Option<TokenStream>, Plan<'a>, Vec<Stage<'a>>)> {
        let span = call.method.span();
        let name = call.method.to_string();
        let arity = |this: &mut Self, n: usize| {
            if call.args.len() == n {
                true
            } else {
                this.error(call, format!("`{name}` takes {n} argument(s)"));
                false
            }
        };
        let moves_items = matches!(
            name.as_str(),
            "rev" | "step_by" | "skip" | "take" | "enumerate" | "zip"
        );
        match name.as_str() {
            "iter" | "into_iter" | "copied" | "cloned" | "by_ref" => {
                if !arity(self, 0) {
                    return None;
                }
                let (count, max_trips, plan, stages) = self.links(&call.receiver)?;
                // `iter` borrows the elements; `into_iter` and `by_ref` keep what the
                // receiver yields; `copied` and `cloned` take one reference off.
                let plan = match name.as_str() {
                    "iter" => with_refs(plan, &|_| 1),
                    "copied" | "cloned" => with_refs(plan, &|refs| refs.saturating_sub(1)),
                    _ => plan,
                };
                Some((count, max_trips, plan, stages))
            }
            "windows" | "chunks" | "chunks_exact" => {
                if !arity(self, 1) {
                    return None;
                }
                // `m[i].windows(2)`: windows of a row of a 2-D array, a slice of rows or a
                // field of a collection's elements (`ps[i].w`).
                if let Expr::Index(index) = strip(&call.receiver) {
                    if !matches!(strip(&index.index), Expr::Range(_)) {
                        if let Some(var) = self.row_of(index) {
                            let row = self.let_int(span, |this| this.expr(&index.index));
                            let len = self.let_int(span, |this| {
                                if this.vars[var].rows {
                                    let row = this.read_var(row, span);
                                    this.row_len_of(var, row, span)
                                } else {
                                    let len = this.row_len(index).expect("a row");
                                    this.constant_len(len, span)
                                }
                            });
                            return self.windows(call, &name, var, vec![row], len);
                        }
                    }
                }
                let var = self.sequence(&call.receiver)?;
                let len = self.let_int(span, |this| this.len_of(var, span));
                // A row that a loop bound to a name (`for r in rows { r.windows(2) }`):
                // windows of the row it names.
                let (var, prefix) = match self.aliases.get(&var) {
                    None => (var, Vec::new()),
                    Some(alias) if alias.offset.is_none() => (alias.var, alias.prefix.clone()),
                    Some(_) => {
                        self.error(
                            &call.receiver,
                            format!(
                                "#[grad] does not take `.{name}(..)` of a window or chunk; \
                                 index the sequence it came from"
                            ),
                        );
                        return None;
                    }
                };
                self.windows(call, &name, var, prefix, len)
            }
            _ if moves_items || matches!(name.as_str(), "map" | "filter") => {
                let (count, max_trips, plan, mut stages) = self.links(&call.receiver)?;
                if moves_items && !stages.is_empty() {
                    self.error(
                        &call.method,
                        format!(
                            "#[grad] applies `.{name}()` only before `.filter(..)`: move it \
                             ahead of the filter"
                        ),
                    );
                    return None;
                }
                match name.as_str() {
                    "rev" => {
                        if !arity(self, 0) {
                            return None;
                        }
                        let back = |inner: Pos| Pos::Back {
                            count,
                            inner: Box::new(inner),
                        };
                        Some((count, max_trips, substitute(plan, &back), stages))
                    }
                    "step_by" | "skip" | "take" => {
                        if !arity(self, 1) {
                            return None;
                        }
                        let n = self.let_int(span, |this| this.expr(&call.args[0]));
                        let intrinsic = match name.as_str() {
                            "step_by" => "count_step",
                            "skip" => "count_skip",
                            _ => "min_len",
                        };
                        let new_count = self.int_call(intrinsic, count, n, span);
                        let plan = match name.as_str() {
                            "step_by" => substitute(plan, &|inner| Pos::Scale {
                                step: n,
                                inner: Box::new(inner),
                            }),
                            "skip" => substitute(plan, &|inner| Pos::Shift {
                                by: n,
                                inner: Box::new(inner),
                            }),
                            _ => plan,
                        };
                        Some((new_count, None, plan, stages))
                    }
                    "enumerate" => {
                        if !arity(self, 0) {
                            return None;
                        }
                        let plan = Plan::Tuple(vec![Plan::Index(Pos::Counter), plan]);
                        Some((count, max_trips, plan, stages))
                    }
                    "zip" => {
                        if !arity(self, 1) {
                            return None;
                        }
                        let (other_count, other_max, other_plan, other_stages) =
                            self.links(&call.args[0])?;
                        if !other_stages.is_empty() {
                            self.error(&call.args[0], "#[grad] zips chains without `.filter(..)`");
                            return None;
                        }
                        let new_count = self.int_call("min_len", count, other_count, span);
                        let max_trips = match (max_trips, other_max) {
                            // A constant expression (it sizes stack arrays), and
                            // `cmp::min` is not a `const fn`.
                            (Some(a), Some(b)) => Some(quote!((if (#a) < (#b) { #a } else { #b }))),
                            _ => None,
                        };
                        Some((
                            new_count,
                            max_trips,
                            Plan::Tuple(vec![plan, other_plan]),
                            stages,
                        ))
                    }
                    "map" | "filter" => {
                        if !arity(self, 1) {
                            return None;
                        }
                        let Expr::Closure(closure) = strip(&call.args[0]) else {
                            self.error(
                                &call.args[0],
                                format!("#[grad] supports `.{name}(|x| …)` with a closure written in place"),
                            );
                            return None;
                        };
                        if closure.inputs.len() != 1 {
                            self.error(
                                closure,
                                format!("the closure of `.{name}` takes one argument"),
                            );
                            return None;
                        }
                        if name == "map" && stages.is_empty() {
                            return Some((
                                count,
                                max_trips,
                                Plan::Map(Box::new(plan), closure),
                                stages,
                            ));
                        }
                        stages.push(if name == "map" {
                            Stage::Map(closure)
                        } else {
                            Stage::Filter(closure)
                        });
                        let max = max_trips;
                        Some((count, max, plan, stages))
                    }
                    _ => None,
                }
            }
            _ => {
                // On a parameter whose type was rejected (a `&mut` written through), the
                // error under its type is the one.
                if self.rejected_root(&call.receiver) {
                } else if name.ends_with("_mut") {
                    self.error(
                        &call.method,
                        format!(
                            "#[grad] writes elements by index (`for i in 0..xs.len() {{ xs[i] = … }}`), \
                             not through `.{name}()`"
                        ),
                    );
                } else {
                    self.error(
                        &call.method,
                        format!("#[grad] does not support `.{name}(..)` in an iterator chain; {SUPPORTED_CHAINS}"),
                    );
                }
                None
            }
        }
    }

    /// `let k = loops::name(a, b);` of two integer variables, as a hidden integer.
    fn int_call(&mut self, name: &'static str, a: VarId, b: VarId, span: Span) -> VarId {
        self.let_int(span, |this| {
            let a = this.read_var(a, span);
            let b = this.read_var(b, span);
            this.intrinsic(name, vec![a, b], span)
        })
    }

    /// The number of values of `start..end` (or `..=`), as a hidden integer.
    fn range_count(&mut self, start: VarId, end: VarId, inclusive: bool, span: Span) -> VarId {
        let name = if inclusive {
            "count_inclusive"
        } else {
            "count"
        };
        self.int_call(name, start, end, span)
    }

    /// `xs.len()`: the run-time length of a slice, the constant length of an array.
    pub(super) fn len_of(&mut self, var: VarId, span: Span) -> NodeId {
        if let Some(alias) = self.aliases.get(&var).cloned() {
            if let Some(len) = alias.len {
                return self.read_var(len, span);
            }
            // A row: its length is the placeholder's first dimension.
        }
        let v = &self.vars[var];
        if v.slice && !self.aliases.contains_key(&var) {
            let whole = Place {
                var,
                indices: Vec::new(),
            };
            self.push(NodeKind::Len(whole), Num::Int, span)
        } else {
            let dim = v.dims.first().cloned().unwrap_or_else(|| quote!(0));
            self.constant_len(dim, span)
        }
    }

    /// A length known at compile time, `dim` (a constant expression), as a `usize` node.
    pub(super) fn constant_len(&mut self, dim: TokenStream, span: Span) -> NodeId {
        self.push(
            NodeKind::Const(quote!((#dim) as ::core::primitive::usize)),
            Num::Int,
            span,
        )
    }

    /// `let name = value;` of a hidden integer, in the current block.
    pub(super) fn let_int(&mut self, span: Span, value: impl FnOnce(&mut Self) -> NodeId) -> VarId {
        let (value, nodes) = self.collect(value);
        let var = self.declare_hidden(VarKind::Int, Num::Int);
        self.vars[var].stable = self.recomputable(value);
        if self.nodes[value].num == Num::Real {
            self.error_at(span, "expected an integer here");
        }
        self.emit(Stmt::Let {
            var,
            value: Some(value),
            nodes,
        });
        var
    }

    /// A call of a helper of the runtime's `loops` module.
    pub(super) fn intrinsic(
        &mut self,
        name: &'static str,
        args: Vec<NodeId>,
        span: Span,
    ) -> NodeId {
        let name = Ident::new(name, Span::call_site());
        let function = quote!(::autodiff::__private::loops::#name);
        let field = TokenStream::new();
        self.push(
            NodeKind::Intrinsic {
                function,
                args,
                field,
            },
            Num::Int,
            span,
        )
    }

    /// The position `pos` as an integer variable of the loop body.
    fn position(&mut self, pos: &Pos, counter: VarId, span: Span) -> VarId {
        match pos {
            Pos::Counter => counter,
            _ => self.let_int(span, |this| this.position_node(pos, counter, span)),
        }
    }

    fn position_node(&mut self, pos: &Pos, counter: VarId, span: Span) -> NodeId {
        match pos {
            Pos::Counter => self.read_var(counter, span),
            Pos::Back { count, inner } => {
                let zero = self.push(NodeKind::Const(quote!(0usize)), Num::Int, span);
                let count = self.read_var(*count, span);
                let inner = self.position_node(inner, counter, span);
                self.intrinsic("nth_back", vec![zero, count, inner], span)
            }
            Pos::Scale { step, inner } => {
                let inner = self.position_node(inner, counter, span);
                let step = self.read_var(*step, span);
                self.int_op("*", inner, step, span)
            }
            Pos::Shift { by, inner } => {
                let inner = self.position_node(inner, counter, span);
                let by = self.read_var(*by, span);
                self.int_op("+", inner, by, span)
            }
        }
    }

    /// Integer arithmetic `a op b`.
    pub(super) fn int_op(&mut self, symbol: &str, a: NodeId, b: NodeId, span: Span) -> NodeId {
        self.arithmetic(symbol, a, b, Num::Int, span)
    }

    /// `a op b` (`+ - * /`) of operands already checked, giving a `num`.
    fn arithmetic(&mut self, symbol: &str, a: NodeId, b: NodeId, num: Num, span: Span) -> NodeId {
        match ops::operator(symbol, 2) {
            Some(op) => self.push(
                NodeKind::Op {
                    op,
                    args: vec![a, b],
                },
                num,
                span,
            ),
            None => self.poisoned(span),
        }
    }

    /// The item of `plan` at the counter's current value, in the loop body.
    pub(super) fn item<'a>(
        &mut self,
        plan: &Plan<'a>,
        counter: VarId,
        span: Span,
    ) -> Option<Item<'a>> {
        Some(match plan {
            Plan::Element {
                var,
                prefix,
                pos,
                refs,
            } => {
                let pos = self.position(pos, counter, span);
                let mut prefix = prefix.clone();
                prefix.push(pos);
                Item::Alias(Alias {
                    var: *var,
                    prefix,
                    offset: None,
                    len: None,
                    refs: *refs,
                })
            }
            Plan::Range { start, end, pos } => {
                let (start, end) = (*start, *end);
                let pos = self.position(pos, counter, span);
                Item::Var(self.let_int(span, |this| {
                    let a = this.read_var(start, span);
                    let b = this.read_var(end, span);
                    let k = this.read_var(pos, span);
                    this.intrinsic("nth", vec![a, b, k], span)
                }))
            }
            Plan::Index(pos) => Item::Var(self.position(pos, counter, span)),
            Plan::Tuple(plans) => {
                let mut items = Vec::new();
                for plan in plans {
                    items.push(self.item(plan, counter, span)?);
                }
                Item::Tuple(items)
            }
            Plan::Window {
                var,
                prefix,
                start,
                len,
                size,
            } => {
                let offset = self.position(start, counter, span);
                let len = match len {
                    Some(total) => {
                        let (total, size) = (*total, *size);
                        self.let_int(span, |this| {
                            let total = this.read_var(total, span);
                            let offset = this.read_var(offset, span);
                            let size = this.read_var(size, span);
                            this.intrinsic("chunk_len", vec![total, offset, size], span)
                        })
                    }
                    None => *size,
                };
                Item::Alias(Alias {
                    var: *var,
                    prefix: prefix.clone(),
                    offset: Some(offset),
                    len: Some(len),
                    refs: 1,
                })
            }
            Plan::Map(inner, closure) => {
                Item::Map(Box::new(self.item(inner, counter, span)?), closure)
            }
        })
    }

    /// Runs the body stages (`filter`, `map` after a filter) on `item`, then `sink`.
    pub(super) fn through_stages<'a>(
        &mut self,
        stages: &[Stage<'a>],
        item: Item<'a>,
        sink: &mut dyn FnMut(&mut Self, Item<'a>),
    ) {
        let Some((stage, rest)) = stages.split_first() else {
            return sink(self, item);
        };
        match stage {
            Stage::Map(closure) => {
                let value = self.apply(closure, item);
                let var = self.let_value(value);
                self.through_stages(rest, Item::Var(var), sink);
            }
            Stage::Filter(closure) => {
                let (cond, nodes) = self.collect(|this| {
                    this.scopes.push();
                    this.closures += 1;
                    // The closure of `filter` takes a reference to the item.
                    let item = with_item_refs(this.share(&item), &|refs| refs + 1);
                    if let Some(pat) = closure.inputs.first() {
                        this.bind(pat, item);
                    }
                    let cond = this.condition(&closure.body);
                    this.closures -= 1;
                    this.scopes.pop();
                    cond
                });
                let then = self.nested_block(|this| this.through_stages(rest, item, sink));
                self.emit(Stmt::If {
                    cond,
                    nodes,
                    then,
                    otherwise: Vec::new(),
                });
            }
        }
    }

    /// A copy of an item that can be bound a second time.
    fn share<'a>(&mut self, item: &Item<'a>) -> Item<'a> {
        match item {
            Item::Var(var) => Item::Var(*var),
            Item::Alias(alias) => Item::Alias(alias.clone()),
            Item::Tuple(items) => Item::Tuple(items.iter().map(|i| self.share(i)).collect()),
            Item::Map(inner, closure) => Item::Map(Box::new(self.share(inner)), closure),
        }
    }

    /// `let` of a value into a new hidden variable of its kind.
    pub(super) fn let_value(&mut self, (value, nodes): (NodeId, Vec<NodeId>)) -> VarId {
        let num = self.nodes[value].num;
        let kind = kind_of(num);
        let var = self.declare_hidden(kind, num);
        self.vars[var].stable = kind == VarKind::Int && self.recomputable(value);
        self.emit(Stmt::Let {
            var,
            value: Some(value),
            nodes,
        });
        var
    }

    /// A closure applied to an item: its pattern bound in a scope of its own, its body
    /// lowered as a value (collected as the nodes of one statement).
    fn apply<'a>(&mut self, closure: &syn::ExprClosure, item: Item<'a>) -> (NodeId, Vec<NodeId>) {
        self.collect(|this| {
            this.scopes.push();
            this.closures += 1;
            if let Some(pat) = closure.inputs.first() {
                this.bind(pat, item);
            }
            let value = this.expr(&closure.body);
            this.closures -= 1;
            this.scopes.pop();
            value
        })
    }

    /// Binds a pattern (`x`, `&x`, `(i, x)`, `_`, `x: &f64`) to an item.
    pub(super) fn bind(&mut self, pat: &Pat, item: Item<'_>) {
        match (pat, item) {
            (Pat::Reference(reference), item) => {
                let item = with_item_refs(item, &|refs| refs.saturating_sub(1));
                self.bind(&reference.pat, item);
            }
            (Pat::Type(typed), item) => self.bind(&typed.pat, item),
            (Pat::Paren(paren), item) => self.bind(&paren.pat, item),
            (Pat::Wild(_), _) => {}
            (Pat::Ident(ident), item) if ident.subpat.is_none() && ident.by_ref.is_none() => {
                match item {
                    Item::Var(var) => self.scopes.bind(&ident.ident, var),
                    Item::Alias(alias) => {
                        let (kind, num) = (self.vars[alias.var].kind, self.var_nums[alias.var]);
                        let placeholder = self.declare_hidden(kind, num);
                        let v = &self.vars[alias.var];
                        // The dimensions below those the alias fixes: below the prefix,
                        // and for a window or chunk below the dimension it runs along too
                        // (a slice's first index is not among `dims`).
                        let fixed = alias.prefix.len() + usize::from(alias.offset.is_some());
                        let used = fixed.saturating_sub(usize::from(v.slice));
                        let dims = v.dims[used.min(v.dims.len())..].to_vec();
                        let mut alias = alias;
                        if v.rows && alias.offset.is_none() && alias.prefix.len() == 1 {
                            // A row of run-time length: a slice, its length read once.
                            let span = ident.ident.span();
                            alias.len = Some(self.row_len_var(alias.var, alias.prefix[0], span));
                            self.vars[placeholder].slice = true;
                        } else {
                            self.vars[placeholder].dims = dims;
                            self.vars[placeholder].slice = alias.offset.is_some();
                        }
                        self.aliases.insert(placeholder, alias);
                        self.scopes.bind(&ident.ident, placeholder);
                    }
                    item @ Item::Map(..) => {
                        let span = ident.ident.span();
                        let value = self.materialize(item, span);
                        let var = self.let_value(value);
                        self.scopes.bind(&ident.ident, var);
                    }
                    Item::Tuple(_) => {
                        self.error(
                            ident,
                            "this item is a tuple: take it apart with a pattern (`(i, x)`)",
                        );
                    }
                }
            }
            (Pat::Tuple(tuple), Item::Tuple(items)) if tuple.elems.len() == items.len() => {
                for (pat, item) in tuple.elems.iter().zip(items) {
                    self.bind(pat, item);
                }
            }
            (pat, _) => {
                self.error(
                    pat,
                    "this pattern does not fit the item; #[grad] binds names (`x`, `&x`), \
                     tuples of them (`(i, x)`) and `_`",
                );
            }
        }
    }

    /// The value of an item as one node (collected as the nodes of one statement).
    fn materialize(&mut self, item: Item<'_>, span: Span) -> (NodeId, Vec<NodeId>) {
        match item {
            Item::Map(inner, closure) => {
                let inner = match *inner {
                    inner @ Item::Map(..) => {
                        let value = self.materialize(inner, span);
                        Item::Var(self.let_value(value))
                    }
                    inner => inner,
                };
                self.apply(closure, inner)
            }
            Item::Var(var) => self.collect(|this| this.read_var(var, span)),
            Item::Alias(alias) => self.collect(|this| {
                let (kind, num) = (this.vars[alias.var].kind, this.var_nums[alias.var]);
                let placeholder = this.declare_hidden(kind, num);
                this.aliases.insert(placeholder, alias);
                match this.alias_place(placeholder, &[], span) {
                    Some(place) => this.push(NodeKind::Read(place), num, span),
                    None => this.poisoned(span),
                }
            }),
            Item::Tuple(_) => self.collect(|this| {
                this.error_at(
                    span,
                    "a tuple item cannot be summed; `.map(..)` it to a number first",
                )
            }),
        }
    }

    /// `chain.sum()`, `.product()`, `.fold(init, |acc, x| …)`: a loop accumulating into a
    /// new variable, whose read is the value.
    pub(super) fn reduction(&mut self, call: &syn::ExprMethodCall) -> NodeId {
        let span = call.method.span();
        let name = call.method.to_string();
        if let Some(turbofish) = &call.turbofish {
            let float = self.float;
            let is_real = turbofish.args.len() == 1
                && matches!(&turbofish.args[0], syn::GenericArgument::Type(ty) if float.is(ty));
            if !is_real {
                let real = self.real_name();
                let message = format!("#[grad] sums `{real}`s: write `.{name}::<{real}>()`");
                return self.error(turbofish, message);
            }
        }
        let expected = if name == "fold" { 2 } else { 0 };
        if call.args.len() != expected {
            return self.error(call, format!("`{name}` takes {expected} argument(s)"));
        }
        // `.fold(init, f64::max)`: a function path is the closure `|acc, x| f64::max(acc, x)`.
        let from_path: Option<syn::ExprClosure> = match (name.as_str(), call.args.iter().nth(1)) {
            ("fold", Some(Expr::Path(path))) => Some(syn::parse_quote!(
                |__fold_acc, __fold_item| #path(__fold_acc, __fold_item)
            )),
            _ => None,
        };
        let closure = if name == "fold" {
            match (&from_path, strip(&call.args[1])) {
                (Some(closure), _) => Some(closure),
                (None, Expr::Closure(closure)) if closure.inputs.len() == 2 => Some(closure),
                (None, other) => {
                    return self.error(
                        other,
                        "#[grad] supports `.fold(init, |acc, x| …)` (or a function such as \
                         `f64::max`) as the function of a fold",
                    )
                }
            }
        } else {
            None
        };
        // The accumulator starts with its initial value.
        let (init, nodes) = self.collect(|this| match name.as_str() {
            // `-0.0`, as in the standard library: a sum of nothing, or of `-0.0`s only, is
            // `-0.0`.
            "sum" => {
                let zero = this.real_literal("0.0");
                this.push(NodeKind::Const(quote!((-#zero))), Num::Real, span)
            }
            "product" => this.push(NodeKind::Const(this.real_literal("1.0")), Num::Real, span),
            _ => this.real(&call.args[0]),
        });
        let acc = self.declare_hidden(VarKind::Real, Num::Real);
        self.vars[acc].mutable = true;
        self.vars[acc].reassigned = true;
        self.emit(Stmt::Let {
            var: acc,
            value: Some(init),
            nodes,
        });
        let Some(chain) = self.chain(&call.receiver) else {
            return self.poisoned(span);
        };
        let counted = Some((Some(chain.count), chain.max_trips));
        self.run_loop(None, false, None, counted, span, |this, counter| {
            let Some(item) = this.item(&chain.plan, counter, span) else {
                return;
            };
            this.through_stages(&chain.stages, item, &mut |this, item| {
                let (value, nodes) = match closure {
                    Some(closure) => this.collect(|this| {
                        this.scopes.push();
                        this.closures += 1;
                        if let Some(pat) = closure.inputs.first() {
                            this.bind(pat, Item::Var(acc));
                        }
                        if let Some(pat) = closure.inputs.iter().nth(1) {
                            this.bind(pat, item);
                        }
                        let value = this.expr(&closure.body);
                        let value = this.expect_real_node(value, &closure.body);
                        this.closures -= 1;
                        this.scopes.pop();
                        value
                    }),
                    None => {
                        let (value, mut nodes) = this.materialize(item, span);
                        let (value, more) = this.collect(|this| {
                            let value = this.expect_real_node(value, call);
                            let current = this.read_var(acc, span);
                            let symbol = if name == "product" { "*" } else { "+" };
                            this.arithmetic(symbol, current, value, Num::Real, span)
                        });
                        nodes.extend(more);
                        (value, nodes)
                    }
                };
                this.assign_var(acc, value, nodes);
            });
        });
        self.read_var(acc, span)
    }
}

/// Replaces every position of a plan by `f(position)`: an adapter applied on top.
fn substitute<'a>(plan: Plan<'a>, f: &dyn Fn(Pos) -> Pos) -> Plan<'a> {
    match plan {
        Plan::Element {
            var,
            prefix,
            pos,
            refs,
        } => Plan::Element {
            var,
            prefix,
            pos: replace_counter(pos, f),
            refs,
        },
        Plan::Range { start, end, pos } => Plan::Range {
            start,
            end,
            pos: replace_counter(pos, f),
        },
        Plan::Index(pos) => Plan::Index(replace_counter(pos, f)),
        Plan::Tuple(plans) => Plan::Tuple(plans.into_iter().map(|p| substitute(p, f)).collect()),
        Plan::Window {
            var,
            prefix,
            start,
            len,
            size,
        } => Plan::Window {
            var,
            prefix,
            start: replace_counter(start, f),
            len,
            size,
        },
        Plan::Map(inner, closure) => Plan::Map(Box::new(substitute(*inner, f)), closure),
    }
}

/// A plan whose elements are yielded with `f(refs)` references (`iter`, `&xs`, `copied`).
fn with_refs<'a>(plan: Plan<'a>, f: &dyn Fn(usize) -> usize) -> Plan<'a> {
    match plan {
        Plan::Element {
            var,
            prefix,
            pos,
            refs,
        } => Plan::Element {
            var,
            prefix,
            pos,
            refs: f(refs),
        },
        Plan::Tuple(plans) => Plan::Tuple(plans.into_iter().map(|p| with_refs(p, f)).collect()),
        plan => plan,
    }
}

/// An item whose aliases are `f(refs)` references from their elements: a reference
/// pattern `&row` takes one off, the closure of `filter` adds one.
fn with_item_refs<'a>(item: Item<'a>, f: &dyn Fn(usize) -> usize) -> Item<'a> {
    match item {
        Item::Alias(alias) => Item::Alias(Alias {
            refs: f(alias.refs),
            ..alias
        }),
        Item::Tuple(items) => {
            Item::Tuple(items.into_iter().map(|i| with_item_refs(i, f)).collect())
        }
        item => item,
    }
}

/// `pos` with its counter replaced by `f(counter)`.
fn replace_counter(pos: Pos, f: &dyn Fn(Pos) -> Pos) -> Pos {
    match pos {
        Pos::Counter => f(Pos::Counter),
        Pos::Back { count, inner } => Pos::Back {
            count,
            inner: Box::new(replace_counter(*inner, f)),
        },
        Pos::Scale { step, inner } => Pos::Scale {
            step,
            inner: Box::new(replace_counter(*inner, f)),
        },
        Pos::Shift { by, inner } => Pos::Shift {
            by,
            inner: Box::new(replace_counter(*inner, f)),
        },
    }
}

/// A cheap span for an expression: its first token's.
pub(super) fn expr_span(expr: &Expr) -> Span {
    expr.to_token_stream()
        .into_iter()
        .next()
        .map_or_else(Span::call_site, |t| t.span())
}
