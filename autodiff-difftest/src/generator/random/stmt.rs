//! Statements, blocks and loops of random programs.

use super::*;

impl Gen {
    // ----------------------------------------------------------------------------------
    // Statements.

    pub(super) fn block(&mut self, depth: usize, len: usize) -> Vec<Stmt> {
        self.push_scope();
        let mut out = Vec::new();
        for _ in 0..len {
            if self.budget <= 0 {
                break;
            }
            self.stmt(depth, &mut out);
        }
        self.pop_scope();
        out
    }

    /// Up to `len` statements in the current scope (the body of a loop whose scope is
    /// pushed already, and which goes on after them: what they declare, or shadow, is seen
    /// there).
    pub(super) fn block_here(&mut self, depth: usize, len: usize) -> Vec<Stmt> {
        let mut out = Vec::new();
        for _ in 0..len {
            if self.budget <= 0 {
                break;
            }
            self.stmt(depth, &mut out);
        }
        out
    }

    pub(super) fn assignable_reals(&self) -> Vec<Var> {
        self.reals()
            .into_iter()
            .filter(|v| v.mutable && !v.protected)
            .collect()
    }

    pub(super) fn assignable_arrays(&self) -> Vec<Var> {
        self.arrays()
            .into_iter()
            .filter(|v| v.mutable && !self.frozen.contains(&v.name))
            .collect()
    }

    /// A compound assignment operator and a value for it that keeps the variable tame.
    pub(super) fn update(&mut self, depth: usize) -> (&'static str, Expr) {
        let e = self.expr(depth);
        match self.rng.random_range(0..6) {
            0 => ("", e),
            1 | 2 => ("+", e),
            3 => ("-", e),
            4 => {
                let b = self.bounded(e);
                (
                    "*",
                    Expr::Bin(BinOp::Add, Box::new(Expr::Lit("0.5".into())), Box::new(b)),
                )
            }
            _ => ("/", self.positive(e)),
        }
    }

    pub(super) fn stmt(&mut self, depth: usize, out: &mut Vec<Stmt>) {
        self.budget -= 1;
        // The constructs added later, each rare, drawn first.
        let extra = self.rng.random_range(0..100);
        if extra < 3 {
            self.tuple_let(out);
            return;
        }
        if extra < 8 && !self.callable(2).is_empty() {
            self.tuple_call(out);
            return;
        }
        if (8..11).contains(&extra) && !self.straight {
            self.named_closure(out);
            return;
        }
        if (11..15).contains(&extra) && depth < 2 && !self.straight {
            let ragged: Vec<Var> = self
                .visible()
                .into_iter()
                .filter(|v| matches!(v.kind, Kind::Ragged))
                .collect();
            if !ragged.is_empty() {
                let rows = self.pick(&ragged).name;
                self.ragged_loop(rows, depth, out);
                return;
            }
        }
        if (15..35).contains(&extra) && depth < 2 && !self.straight && !self.collections.is_empty()
        {
            self.struct_loop(depth, out);
            return;
        }
        if (35..40).contains(&extra) && !self.array_callable().is_empty() {
            self.array_call(out);
            return;
        }
        if (40..44).contains(&extra) && !self.straight && self.long.is_none() {
            self.pair_let(out);
            return;
        }
        if extra >= 90 && depth == 0 && self.control == 0 && !self.straight {
            self.push_vector(out);
            return;
        }
        let roll = self.rng.random_range(0..100);
        let nested = depth > 0;
        match roll {
            0..=17 => {
                // let, shadowing, let mut
                // Not a field (`m.b`), which a `let` cannot name.
                let reals: Vec<Var> = self
                    .reals()
                    .into_iter()
                    .filter(|v| !v.name.contains('.'))
                    .collect();
                let reals: Vec<Var> = reals
                    .into_iter()
                    .filter(|v| !self.settled.contains(&v.name))
                    .collect();
                let shadow = !reals.is_empty() && self.chance(0.25);
                let name = if shadow {
                    self.pick(&reals).name
                } else {
                    self.fresh("v")
                };
                let init = if self.chance(0.1) {
                    self.constant()
                } else {
                    self.expr(2)
                };
                let mutable = self.chance(0.5);
                let annotated = self.chance(0.3);
                out.push(Stmt::Let {
                    name: name.clone(),
                    mutable,
                    annotated,
                    init,
                });
                self.declare(&name, Kind::Real { deref: false }, mutable);
            }
            18..=29 => {
                // assignment to a variable or an array element
                let targets = self.assignable_reals();
                let arrays = self.assignable_arrays();
                if !arrays.is_empty() && (targets.is_empty() || self.chance(0.5)) {
                    let a = self.pick(&arrays);
                    if let Kind::Array {
                        len, inner, owner, ..
                    } = a.kind
                    {
                        let hide = matches!(owner, Owner::Vec | Owner::MutRef);
                        if hide {
                            self.hidden.push(a.name.clone());
                        }
                        // A `&mut` slice, which an index may not read while it is written
                        // (`xs[i % xs.len()] += …` does not borrow-check), and which may be
                        // the only thing of the run-time length in scope: a literal index
                        // below the smallest run-time length.
                        let first = if owner == Owner::MutRef && len == ALen::Run {
                            IExpr::Lit(self.rng.random_range(0..SLICE_MIN))
                        } else {
                            self.index(&len)
                        };
                        let mut indices = vec![first];
                        if let Some(k) = inner {
                            indices.push(self.index(&ALen::Fixed(Len::Lit(k))));
                        }
                        let (op, value) = self.update(2);
                        if hide {
                            self.hidden.pop();
                        }
                        out.push(Stmt::Assign(Place::Index(a.name, indices), op, value));
                    }
                } else if !targets.is_empty() {
                    let v = self.pick(&targets);
                    let (op, value) = self.update(2);
                    out.push(Stmt::Assign(Place::Var(v.name), op, value));
                } else {
                    self.let_const_then_update(out);
                }
            }
            30..=33 => self.let_const_then_update(out),
            34..=37 => {
                // deferred let
                let name = self.fresh("d");
                let annotated = self.chance(0.4);
                out.push(Stmt::Deferred {
                    name: name.clone(),
                    annotated,
                });
                if self.chance(0.3) || self.straight {
                    let e = self.expr(2);
                    out.push(Stmt::Assign(Place::Var(name.clone()), "", e));
                } else {
                    let c = self.cond(1);
                    let then = self.deferred_branch(depth, &name);
                    let otherwise = self.deferred_branch(depth, &name);
                    out.push(Stmt::If(vec![(c, then)], Some(otherwise)));
                }
                self.declare(&name, Kind::Real { deref: false }, false);
            }
            38..=41 => self.local_array(out),
            42..=57 if depth < 3 && !self.straight => self.for_loop(depth, out),
            58..=61 if depth < 3 && !self.straight && !self.sample => self.while_loop(depth, out),
            62..=64 if depth < 3 && !self.straight && !self.sample => self.loop_loop(depth, out),
            65..=74 if depth < 3 && !self.straight => {
                let mut branches = Vec::new();
                let n = self.rng.random_range(1..=3);
                for _ in 0..n {
                    let c = self.cond(1);
                    self.control += 1;
                    let body = self.block(depth + 1, 2);
                    self.control -= 1;
                    branches.push((c, body));
                }
                let otherwise = if self.chance(0.5) {
                    self.control += 1;
                    let b = self.block(depth + 1, 2);
                    self.control -= 1;
                    Some(b)
                } else {
                    None
                };
                out.push(Stmt::If(branches, otherwise));
            }
            75..=77 if depth < 3 && !self.straight => {
                let scrutinee = self.scrutinee();
                let mut arms = Vec::new();
                for (pattern, guard) in self.arm_patterns(&scrutinee, 1) {
                    self.push_scope();
                    if let Scrutinee::Real(_) = scrutinee {
                        self.declare(&pattern, Kind::Real { deref: false }, false);
                    }
                    self.control += 1;
                    let body = self.block(depth + 1, 2);
                    self.control -= 1;
                    self.pop_scope();
                    arms.push((pattern, guard, body));
                }
                out.push(Stmt::Match(Match { scrutinee, arms }));
            }
            78..=83 if nested && !self.loops.is_empty() && !self.sample => {
                // break / continue under a condition
                let c = self.cond(1);
                // Out of a labelled value loop a third of the time there is one.
                let valued: Vec<usize> = (0..self.loops.len())
                    .filter(|&i| self.loops[i].value && self.loops[i].label.is_some())
                    .collect();
                let which = if !valued.is_empty() && self.chance(0.33) {
                    self.pick(&valued)
                } else {
                    self.rng.random_range(0..self.loops.len())
                };
                let target = self.loops[which].clone();
                let innermost = which == self.loops.len() - 1;
                let label = if innermost && self.chance(0.6) {
                    None
                } else {
                    target.label.clone()
                };
                if !innermost && label.is_none() {
                    return;
                }
                let exit = if self.chance(0.3) {
                    Stmt::Continue(label)
                } else if target.value {
                    // `break 'l e` out of an inner loop, or of the value loop itself.
                    Stmt::Break(label, Some(self.expr(2)))
                } else {
                    Stmt::Break(label, None)
                };
                out.push(Stmt::If(vec![(c, vec![exit])], None));
            }
            // Not in a long program: `#[grad]` puts what follows a `return` in a block of its
            // own, where its gradient is not cut into segments.
            84..=86 if nested && !self.no_return && self.long.is_none() && !self.sample => {
                self.returned = true;
                let c = self.cond(1);
                let e = self.expr(2);
                out.push(Stmt::If(vec![(c, vec![Stmt::Return(e)])], None));
            }
            87..=88 if !self.straight => {
                let body = self.block(depth + 1, 2);
                out.push(Stmt::Block(body));
            }
            89..=90 if !self.straight => {
                // an integer counter
                let name = self.fresh("k");
                let init = self.rng.random_range(0..3);
                out.push(Stmt::LetInt {
                    name: name.clone(),
                    mutable: true,
                    init: IExpr::Lit(init),
                });
                self.declare(&name, Kind::Int { hi: Hi::Unknown }, true);
            }
            91..=92 => {
                let counters: Vec<Var> = self
                    .ints()
                    .into_iter()
                    .filter(|v| v.mutable && !v.protected)
                    .collect();
                if !counters.is_empty() {
                    let v = self.pick(&counters);
                    out.push(Stmt::Increment(v.name, 1));
                }
            }
            93 if depth == 0
                && self.long.is_none()
                && !self.consts.iter().any(|c| c == "LN_10")
                && self.chance(0.3) =>
            {
                out.push(Stmt::Item("use std::f64::consts::LN_10;".into()));
                self.consts.push("LN_10".into());
            }
            93 if depth == 0 && self.long.is_none() => {
                let name = self.fresh("K");
                let value = self.positive_literal();
                let Expr::Lit(text) = value else {
                    unreachable!()
                };
                out.push(Stmt::Item(format!("const {name}: f64 = {text};")));
                self.consts.push(name);
            }
            94 if self.chance(0.3) => {
                // `let [a, _, c] = [e1, e2, e3];`
                let n = self.rng.random_range(1..4);
                let values: Vec<Expr> = (0..n).map(|_| self.expr(1)).collect();
                let names: Vec<Option<String>> = (0..n)
                    .map(|_| (!self.chance(0.3)).then(|| self.fresh("e")))
                    .collect();
                out.push(Stmt::DestructureLiteral(names.clone(), values));
                for name in names.into_iter().flatten() {
                    self.declare(&name, Kind::Real { deref: false }, false);
                }
            }
            94 => {
                let arrays: Vec<Var> = self
                    .arrays()
                    .into_iter()
                    .filter(|v| {
                        // Parameters (`w…`) and local arrays (`h…`): `let [a, b] = row;` of
                        // a row bound by a loop is rejected ("takes apart one-dimensional
                        // arrays"), a form the README does not show.
                        (v.name.starts_with('w') || v.name.starts_with('h'))
                            && matches!(&v.kind, Kind::Array { len: ALen::Fixed(n), inner: None, owner: Owner::Array, .. } if n.value() <= 4 && !matches!(n, Len::Generic(_)))
                    })
                    .collect();
                if !arrays.is_empty() {
                    let a = self.pick(&arrays);
                    let Kind::Array {
                        len: ALen::Fixed(n),
                        ..
                    } = a.kind
                    else {
                        unreachable!()
                    };
                    let mut names = Vec::new();
                    for _ in 0..n.value() {
                        if self.chance(0.3) {
                            names.push(None);
                        } else {
                            names.push(Some(self.fresh("e")));
                        }
                    }
                    out.push(Stmt::Destructure(names.clone(), a.name));
                    for name in names.into_iter().flatten() {
                        self.declare(&name, Kind::Real { deref: false }, false);
                    }
                }
            }
            _ => {
                // accumulate into a mutable variable: the common case of loops
                let targets = self.assignable_reals();
                if targets.is_empty() {
                    self.let_const_then_update(out);
                } else {
                    let v = self.pick(&targets);
                    let e = self.expr(2);
                    out.push(Stmt::Assign(Place::Var(v.name), "+", e));
                }
            }
        }
    }

    /// A loop over the numbers of rows of run-time length (see [`Stmt::RaggedLoop`]):
    /// random statements, then an update of a number with one that reads the item.
    fn ragged_loop(&mut self, rows: String, depth: usize, out: &mut Vec<Stmt>) {
        let by_index = self.chance(0.5);
        let (row, column, item) = (self.fresh("r"), self.fresh("j"), self.fresh("x"));
        self.push_scope();
        if by_index {
            self.declare(&row, Kind::Int { hi: Hi::BelowN }, false);
            self.declare(&column, Kind::Int { hi: Hi::Unknown }, false);
        }
        self.declare(&item, Kind::Real { deref: false }, false);
        for _ in 0..2 {
            self.loops.push(LoopCtx {
                label: None,
                value: false,
            });
        }
        self.control += 1;
        let n = self.rng.random_range(0..3);
        // In the loop's own scope: the update below sees what the statements shadow.
        let mut body = self.block_here(depth + 2, n);
        let targets = self.assignable_reals();
        if !targets.is_empty() {
            let target = self.pick(&targets).name;
            let e = self.expr(1);
            let read = Expr::Var {
                name: item.clone(),
                deref: false,
            };
            body.push(Stmt::Assign(
                Place::Var(target),
                "+",
                Expr::Bin(BinOp::Mul, Box::new(read), Box::new(e)),
            ));
        }
        self.control -= 1;
        self.loops.truncate(self.loops.len() - 2);
        self.pop_scope();
        out.push(Stmt::RaggedLoop {
            rows,
            row,
            column,
            item,
            by_index,
            body,
        });
    }

    /// `let c = |q| e; let v = c(a1) + c(a2);`: a closure of one number, capturing what
    /// is in scope, called at once (never after a capture is assigned).
    fn named_closure(&mut self, out: &mut Vec<Stmt>) {
        let name = self.fresh("c");
        let param = self.fresh("q");
        self.push_scope();
        self.in_closure += 1;
        self.declare(&param, Kind::Real { deref: false }, false);
        let body = self.expr(2);
        self.in_closure -= 1;
        self.pop_scope();
        let count = self.rng.random_range(1..4);
        let args = (0..count).map(|_| self.expr(1)).collect();
        let op = if self.chance(0.7) { "+" } else { "*" };
        let result = self.fresh("v");
        // Typed: a method of an untyped parameter (`|q| q.tanh()`) does not compile.
        let typed = true;
        out.push(Stmt::LetClosure {
            name,
            param,
            typed,
            body,
            args,
            op,
            result: result.clone(),
        });
        self.declare(&result, Kind::Real { deref: false }, false);
    }

    /// A branch of a deferred `let` (`let d; if c { …; d = e; } else { …; d = e; }`): a
    /// statement half the time (below depth 3), then the assignment of `name`. Its value
    /// is drawn inside the branch (where a local array is not passed whole), from the
    /// names in scope before the branch, each as the statement leaves it: a `let` there
    /// may shadow one (`let (t, y, _) = …;` of a loop's `y: &f64`, after which `y` reads
    /// as `y`, not `*y`).
    fn deferred_branch(&mut self, depth: usize, name: &str) -> Vec<Stmt> {
        self.push_scope();
        self.control += 1;
        let mut body = Vec::new();
        if depth < 3 && !self.chance(0.5) && self.budget > 0 {
            self.stmt(depth + 1, &mut body);
        }
        // What the statement declares replaces the declaration it shadows, for the draw.
        let mark = *self.scopes.last().expect("scope");
        let declared = self.vars.split_off(mark);
        let before = self.vars.clone();
        for v in declared {
            if let Some(i) = self.vars.iter().rposition(|o| o.name == v.name) {
                self.vars[i] = v;
            }
        }
        let e = self.expr(2);
        self.vars = before;
        body.push(Stmt::Assign(Place::Var(name.into()), "", e));
        self.control -= 1;
        self.pop_scope();
        body
    }

    /// `let mut y = <constant path or literal>; y op= e;`
    pub(super) fn let_const_then_update(&mut self, out: &mut Vec<Stmt>) {
        let name = self.fresh("c");
        let init = if self.chance(0.6) {
            self.constant()
        } else {
            self.literal()
        };
        out.push(Stmt::Let {
            name: name.clone(),
            mutable: true,
            annotated: self.chance(0.2),
            init,
        });
        self.declare(&name, Kind::Real { deref: false }, true);
        let (op, value) = self.update(2);
        out.push(Stmt::Assign(Place::Var(name), op, value));
    }

    pub(super) fn local_array(&mut self, out: &mut Vec<Stmt>) {
        let name = self.fresh("h");
        let roll = self.rng.random_range(0..10);
        let slice_param = self.slice_param_name();
        let has_slice = slice_param.is_some();
        if self.chance(0.4) && self.newer_local_array(&name, out) {
            return;
        }
        let (init, len, inner, owner) = if roll < 4 {
            let n = self.length();
            (
                ArrayInit::Zeros(n.clone()),
                ALen::Fixed(n),
                None,
                Owner::Array,
            )
        } else if roll < 6 {
            let n = self.length();
            let k = self.rng.random_range(1..4);
            (
                ArrayInit::Zeros2(n.clone(), k),
                ALen::Fixed(n),
                Some(k),
                Owner::Array,
            )
        } else if roll < 8 || !has_slice {
            let n = self.rng.random_range(1..4);
            let items = (0..n).map(|_| self.expr(1)).collect();
            (
                ArrayInit::Literal(items),
                ALen::Fixed(Len::Lit(n)),
                None,
                Owner::Array,
            )
        } else if self.chance(0.5) || self.number_slice().is_none() {
            let of = slice_param.expect("a slice parameter");
            (ArrayInit::VecZeros(of), ALen::Run, None, Owner::Vec)
        } else {
            // A vector collected from a slice of numbers mapped:
            // `let v = xs.iter().map(|&m| …).collect::<Vec<_>>();`.
            let of = self.number_slice().expect("a slice of numbers");
            let var = self.fresh("m");
            self.push_scope();
            self.declare(&var, Kind::Real { deref: false }, false);
            let value = self.expr(1);
            self.pop_scope();
            (
                ArrayInit::Collect { of, var, value },
                ALen::Run,
                None,
                Owner::Vec,
            )
        };
        let mutable = !matches!(init, ArrayInit::Literal(_)) || self.chance(0.5);
        self.let_local_array(&name, mutable, 0.3, (init, len, inner, owner), out);
    }

    /// `let [mut] name[: type] = init;` (typed with probability `typed`), and the local
    /// array `made` (its value, length, rows' length and owner) declared.
    fn let_local_array(
        &mut self,
        name: &str,
        mutable: bool,
        typed: f64,
        made: (ArrayInit, ALen, Option<usize>, Owner),
        out: &mut Vec<Stmt>,
    ) {
        let (init, len, inner, owner) = made;
        let typed = self.chance(typed).then(|| match &len {
            ALen::Fixed(n) => (Some(n.clone()), inner),
            ALen::Run => (None, None),
        });
        out.push(Stmt::LetArray {
            name: name.to_string(),
            mutable,
            typed,
            init,
        });
        self.declare(
            name,
            Kind::Array {
                len,
                inner,
                owner,
                local: true,
            },
            mutable,
        );
    }

    /// `let h = [[a, b], [c, d]];`, `let h = w;` (`*w`), `let h = m[i];`, or
    /// `let h = xs.to_vec();`, typed or not: the forms of local arrays added later.
    /// Whether it wrote one.
    fn newer_local_array(&mut self, name: &str, out: &mut Vec<Stmt>) -> bool {
        let arrays = self.arrays();
        let (init, len, inner, owner) = match self.rng.random_range(0..4) {
            0 => {
                let n = self.rng.random_range(1..4);
                let k = self.rng.random_range(1..4);
                let rows = (0..n)
                    .map(|_| (0..k).map(|_| self.expr(1)).collect())
                    .collect();
                (
                    ArrayInit::Literal2(rows),
                    ALen::Fixed(Len::Lit(n)),
                    Some(k),
                    Owner::Array,
                )
            }
            1 => {
                // A whole array of a fixed length, a value or behind a reference.
                let whole: Vec<Var> = arrays
                    .into_iter()
                    .filter(|v| {
                        matches!(&v.kind, Kind::Array { len: ALen::Fixed(n), owner: Owner::Array | Owner::Borrowed, .. } if !matches!(n, Len::Generic(_)))
                            && !v.name.contains('.')
                    })
                    .collect();
                if whole.is_empty() {
                    return false;
                }
                let v = self.pick(&whole);
                let Kind::Array {
                    len, inner, owner, ..
                } = v.kind
                else {
                    unreachable!()
                };
                let deref = owner == Owner::Borrowed;
                (ArrayInit::Copy(v.name, deref), len, inner, Owner::Array)
            }
            2 => {
                // A row of a 2-D array or of a slice of rows.
                let nested: Vec<Var> = arrays
                    .into_iter()
                    .filter(|v| {
                        matches!(&v.kind, Kind::Array { inner: Some(_), owner, len, .. } if *owner != Owner::Grown && !matches!(len, ALen::Fixed(Len::Generic(_))))
                    })
                    .collect();
                if nested.is_empty() {
                    return false;
                }
                let v = self.pick(&nested);
                let Kind::Array { len, inner, .. } = v.kind else {
                    unreachable!()
                };
                let i = self.index(&len);
                let k = inner.expect("rows");
                (
                    ArrayInit::Row(v.name, i),
                    ALen::Fixed(Len::Lit(k)),
                    None,
                    Owner::Array,
                )
            }
            _ => {
                let Some(of) = self.number_slice() else {
                    return false;
                };
                (ArrayInit::ToVec(of), ALen::Run, None, Owner::Vec)
            }
        };
        let mutable = self.chance(0.5);
        self.let_local_array(name, mutable, 0.4, (init, len, inner, owner), out);
        true
    }

    pub(super) fn length(&mut self) -> Len {
        let named: Vec<String> = self
            .consts
            .iter()
            .filter(|c| c.starts_with('N'))
            .cloned()
            .collect();
        if let Some(n) = self.generic.clone() {
            if self.chance(0.5) {
                return Len::Generic(n);
            }
        }
        if !named.is_empty() && self.chance(0.3) {
            let name = self.pick(&named);
            let value = name[name.find('_').map_or(1, |i| i + 1)..]
                .parse()
                .unwrap_or(2);
            Len::Named(name, value)
        } else {
            Len::Lit(self.rng.random_range(1..5))
        }
    }

    pub(super) fn label(&mut self) -> Option<String> {
        if self.chance(0.25) {
            Some(self.fresh("'l"))
        } else {
            None
        }
    }

    pub(super) fn for_loop(&mut self, depth: usize, out: &mut Vec<Stmt>) {
        let label = self.label();
        self.push_scope();
        let frozen = self.frozen.len();
        let (pattern, iter) = self.iterable();
        self.loops.push(LoopCtx {
            label: label.clone(),
            value: false,
        });
        self.control += 1;
        let mut body = Vec::new();
        self.row_call(&mut body);
        let n = self.rng.random_range(1..4);
        body.extend(self.block(depth + 1, n));
        self.end_for(frozen, label, pattern, iter, body, out);
    }

    /// Ends a `for` loop begun by pushing its scope, its context and what it freezes
    /// (`frozen`: how many arrays were frozen before it), with one control level: pops them
    /// and writes the loop.
    pub(super) fn end_for(
        &mut self,
        frozen: usize,
        label: Option<String>,
        pattern: String,
        iter: String,
        body: Vec<Stmt>,
        out: &mut Vec<Stmt>,
    ) {
        self.control -= 1;
        self.loops.pop();
        self.frozen.truncate(frozen);
        self.pop_scope();
        out.push(Stmt::For {
            label,
            pattern,
            iter,
            body,
        });
    }

    /// The loop that the body of a sample loop (see [`sample_loop`]) holds: a `for` loop of
    /// random statements, ending with an update of `local`, a variable of the sample
    /// loop's body, so that each iteration of the sample loop has values of its own for
    /// its sweep to keep.
    pub(super) fn inner_loop(&mut self, depth: usize, local: &str, out: &mut Vec<Stmt>) {
        self.push_scope();
        let frozen = self.frozen.len();
        let (pattern, iter) = self.iterable();
        self.loops.push(LoopCtx {
            label: None,
            value: false,
        });
        self.control += 1;
        let mut body = Vec::new();
        self.row_call(&mut body);
        // In the loop's own scope, so that the update reads what they declare (`local` is
        // settled: not shadowed).
        for _ in 0..self.rng.random_range(0..3) {
            if self.budget <= 0 {
                break;
            }
            self.stmt(depth + 1, &mut body);
        }
        // Added or subtracted, a value that does not read `local` (iterated over two
        // loops, `v *= …` or `v -= v.powi(2)` would take the values out of the range the
        // check uses, or near it, where finite differences have few correct digits).
        let op = if self.chance(0.3) { "-" } else { "+" };
        self.hidden.push(local.into());
        let value = self.expr(2);
        self.hidden.pop();
        body.push(Stmt::Assign(Place::Var(local.into()), op, value));
        self.end_for(frozen, None, pattern, iter, body, out);
    }

    /// First in a loop body where a row bound by a loop is in scope (`x` of
    /// `for x in m.iter()`, `for &x in m`): `let v = h(…);` of a helper taking an array of
    /// the row's length, to which the row is passed as written half the time (`x`, or `*x`
    /// to a helper taking the array by value; see `whole_array`).
    fn row_call(&mut self, body: &mut Vec<Stmt>) {
        // Loops name what they bind `x…` and `y…`; parameters are `w…`.
        let rows: Vec<usize> = self
            .arrays()
            .into_iter()
            .filter_map(|v| match v.kind {
                Kind::Array {
                    len: ALen::Fixed(len),
                    inner: None,
                    owner: Owner::Borrowed | Owner::Array,
                    local: false,
                } if v.name.starts_with('x') || v.name.starts_with('y') => Some(len.value()),
                _ => None,
            })
            .collect();
        if rows.is_empty() {
            return;
        }
        let takes_a_row = |h: &Helper| {
            h.params.iter().any(|p| match p {
                ParamKind::Real(Shape::Array(Len::Generic(_)), _) => true,
                ParamKind::Real(Shape::Array(n), _) => rows.contains(&n.value()),
                _ => false,
            })
        };
        let helpers: Vec<(String, Helper)> = self
            .callable(1)
            .into_iter()
            .filter(|(_, h)| takes_a_row(h))
            .collect();
        if helpers.is_empty() {
            return;
        }
        let (name, helper) = self.pick(&helpers);
        let Some(args) = self.call_args(&helper, 1) else {
            return;
        };
        let v = self.fresh("v");
        body.push(Stmt::Let {
            name: v.clone(),
            mutable: false,
            annotated: false,
            init: Expr::Call(name, args),
        });
        self.declare(&v, Kind::Real { deref: false }, false);
    }

    /// The pattern and iterable of a `for` loop; declares what the pattern binds.
    pub(super) fn iterable(&mut self) -> (String, String) {
        let arrays = self.arrays();
        let roll = self.rng.random_range(0..10);
        if roll < 5 || arrays.is_empty() {
            let i = self.fresh("i");
            let slices: Vec<Var> = arrays
                .iter()
                .filter(|v| matches!(v.kind, Kind::Array { len: ALen::Run, .. }))
                .cloned()
                .collect();
            let int_params: Vec<Var> = self
                .ints()
                .into_iter()
                .filter(|v| {
                    matches!(v.kind, Kind::Int { hi: Hi::Max(h) } if h <= 4) && !v.protected
                })
                .collect();
            let (text, hi) = match self.rng.random_range(0..6) {
                0 | 1 if !slices.is_empty() => {
                    let s = self.pick(&slices);
                    (format!("0..{}.len()", s.name), Hi::BelowN)
                }
                2 if !int_params.is_empty() => {
                    let k = self.pick(&int_params);
                    let Kind::Int { hi: Hi::Max(h) } = k.kind else {
                        unreachable!()
                    };
                    (format!("0..{}", k.name), Hi::Max(h.saturating_sub(1)))
                }
                3 if self.generic.is_some() => {
                    let n = self.generic.clone().expect("generic");
                    (format!("0..{n}"), Hi::Below(n))
                }
                3 => {
                    let a = self.rng.random_range(0..2);
                    let b = self.rng.random_range(1..4);
                    (format!("{a}..={b}"), Hi::Max(b))
                }
                4 => {
                    let named: Vec<String> = self
                        .consts
                        .iter()
                        .filter(|c| c.starts_with('N'))
                        .cloned()
                        .collect();
                    if named.is_empty() {
                        (String::from("0..3"), Hi::Max(2))
                    } else {
                        let name = self.pick(&named);
                        let value: usize = name[2..].parse().unwrap_or(2);
                        (format!("0..{name}"), Hi::Max(value - 1))
                    }
                }
                _ => {
                    let b = self.rng.random_range(1..5);
                    (format!("0..{b}"), Hi::Max(b - 1))
                }
            };
            let text = match self.rng.random_range(0..8) {
                0 => format!("({text}).rev()"),
                1 => format!("({text}).step_by(2)"),
                2 => format!("({text}).skip(1)"),
                3 => format!("({text}).take(2)"),
                _ => text,
            };
            self.declare(&i, Kind::Int { hi }, false);
            return (i, text);
        }
        // Over rows half the time there are some (a row may then be passed whole, see
        // `row_call`).
        let nested: Vec<Var> = arrays
            .iter()
            .filter(|v| matches!(v.kind, Kind::Array { inner: Some(_), .. }))
            .cloned()
            .collect();
        let src = if !nested.is_empty() && self.chance(0.5) {
            self.pick(&nested)
        } else {
            self.pick(&arrays)
        };
        self.frozen.push(src.name.clone());
        let Kind::Array {
            len,
            inner,
            owner,
            local,
        } = src.kind.clone()
        else {
            unreachable!()
        };
        let idx_hi = if owner == Owner::Grown {
            Hi::Unknown
        } else {
            below(&len)
        };
        // A row of a local (or `mut`) array, by value or by reference, is to `#[grad]` that
        // array at an index, which it copies when passed whole: a `local` row, never passed
        // whole in the loop that binds it.
        let copied = local || src.mutable;
        // The item: an element (a number, or a row of `k`), by value or by reference.
        let declare_item = |g: &mut Gen, name: &str, by_ref: bool| match inner {
            None => g.declare(name, Kind::Real { deref: by_ref }, false),
            Some(k) => g.declare(
                name,
                Kind::Array {
                    len: ALen::Fixed(Len::Lit(k)),
                    inner: None,
                    owner: if by_ref {
                        Owner::Borrowed
                    } else {
                        Owner::Array
                    },
                    local: copied,
                },
                false,
            ),
        };
        let x = self.fresh("x");
        match self.rng.random_range(0..9) {
            0 => {
                // `for x in xs` / `for x in &h`
                let (text, by_ref) = match owner {
                    Owner::Array if self.chance(0.5) => (src.name.clone(), false),
                    Owner::Array | Owner::Vec | Owner::Grown | Owner::Field => {
                        (format!("&{}", src.name), true)
                    }
                    Owner::Borrowed | Owner::Window => (src.name.clone(), true),
                    Owner::MutRef => (format!("{}.iter()", src.name), true),
                };
                declare_item(self, &x, by_ref);
                (x, text)
            }
            1 => {
                declare_item(self, &x, false);
                (format!("&{x}"), format!("{}.iter()", src.name))
            }
            2 => {
                declare_item(self, &x, false);
                (x, format!("{}.iter().copied()", src.name))
            }
            3 => {
                let i = self.fresh("i");
                self.declare(&i, Kind::Int { hi: idx_hi }, false);
                declare_item(self, &x, true);
                (
                    format!("({i}, {x})"),
                    format!("{}.iter().enumerate()", src.name),
                )
            }
            4 => {
                // zip with an array of the same kind
                let partners: Vec<Var> = arrays
                    .iter()
                    .filter(|v| same_kind_of_length(&v.kind, &len))
                    .cloned()
                    .collect();
                let partner = self.pick(&partners);
                self.frozen.push(partner.name.clone());
                let Kind::Array {
                    inner: p_inner,
                    local: p_local,
                    ..
                } = partner.kind.clone()
                else {
                    unreachable!()
                };
                // Its rows, as the source's (see `copied`).
                let p_copied = p_local || partner.mutable;
                let y = self.fresh("y");
                declare_item(self, &x, true);
                let by_value = self.chance(0.5);
                match p_inner {
                    None => self.declare(&y, Kind::Real { deref: !by_value }, false),
                    Some(k) => self.declare(
                        &y,
                        Kind::Array {
                            len: ALen::Fixed(Len::Lit(k)),
                            inner: None,
                            owner: if by_value {
                                Owner::Array
                            } else {
                                Owner::Borrowed
                            },
                            local: p_copied,
                        },
                        false,
                    ),
                }
                let y_pat = if by_value { format!("&{y}") } else { y };
                (
                    format!("({x}, {y_pat})"),
                    format!("{}.iter().zip({}.iter())", src.name, partner.name),
                )
            }
            // Windows and chunks of a slice, or of an array of at least 2 (a parameter, a
            // field, a local array or vector).
            5 | 6
                if inner.is_none()
                    && owner != Owner::Window
                    && match &len {
                        ALen::Run => true,
                        ALen::Fixed(n) => n.value() >= 2 && !matches!(n, Len::Generic(_)),
                    } =>
            {
                let k = self.rng.random_range(1..3);
                let (method, known) = match self.rng.random_range(0..3) {
                    0 => ("windows", k),
                    1 => ("chunks_exact", k),
                    _ => ("chunks", 1),
                };
                self.declare(
                    &x,
                    Kind::Array {
                        len: ALen::Fixed(Len::Lit(known)),
                        inner: None,
                        owner: Owner::Window,
                        local: false,
                    },
                    false,
                );
                (x, format!("{}.{method}({k})", src.name))
            }
            _ => {
                let by_ref = owner != Owner::Array || self.chance(0.5);
                let text = if self.chance(0.5) {
                    format!("{}.iter().rev()", src.name)
                } else {
                    format!("{}.iter()", src.name)
                };
                if by_ref {
                    declare_item(self, &x, true);
                    (x, text)
                } else {
                    declare_item(self, &x, false);
                    (format!("&{x}"), text)
                }
            }
        }
    }

    pub(super) fn counter(&mut self, out: &mut Vec<Stmt>) -> (String, usize) {
        let k = self.fresh("w");
        let bound = self.rng.random_range(1..5);
        out.push(Stmt::LetInt {
            name: k.clone(),
            mutable: true,
            init: IExpr::Lit(0),
        });
        (k, bound)
    }

    pub(super) fn declare_counter(&mut self, k: &str, bound: usize) {
        self.vars.push(Var {
            name: k.into(),
            kind: Kind::Int {
                hi: Hi::Max(bound + 1),
            },
            mutable: true,
            protected: true,
        });
    }

    /// `let mut k = 0; while k < B [&& c] { k += 1; … }`
    pub(super) fn while_loop(&mut self, depth: usize, out: &mut Vec<Stmt>) {
        let (k, bound) = self.counter(out);
        self.push_scope();
        self.declare_counter(&k, bound);
        let mut cond = Cond::ICmp("<", IExpr::Var(k.clone()), IExpr::Lit(bound));
        if self.chance(0.4) {
            let c = self.cond(0);
            cond = Cond::And(Box::new(cond), Box::new(c));
        }
        self.loops.push(LoopCtx {
            label: None,
            value: false,
        });
        self.control += 1;
        let n = self.rng.random_range(1..4);
        let mut body = vec![Stmt::Increment(k.clone(), 1)];
        body.extend(self.block(depth + 1, n));
        self.control -= 1;
        self.loops.pop();
        self.pop_scope();
        out.push(Stmt::While(cond, body));
    }

    /// `let mut k = 0; [let r =] ['l:] loop { k += 1; if k > B { break [e]; } … }`, whose
    /// body's loops may leave it with `break 'l e`.
    pub(super) fn loop_loop(&mut self, depth: usize, out: &mut Vec<Stmt>) {
        let (k, bound) = self.counter(out);
        let value = if self.chance(0.4) {
            Some(self.fresh("r"))
        } else {
            None
        };
        // A value loop is labelled more often, for `break 'l e` out of the loops inside.
        let label = if value.is_some() && self.chance(0.6) {
            Some(self.fresh("'l"))
        } else {
            self.label()
        };
        self.push_scope();
        self.declare_counter(&k, bound);
        self.control += 1;
        let exit_value = value.as_ref().map(|_| self.expr(2));
        self.control -= 1;
        self.loops.push(LoopCtx {
            label: label.clone(),
            value: value.is_some(),
        });
        self.control += 1;
        let n = self.rng.random_range(1..4);
        let mut body = vec![
            Stmt::Increment(k.clone(), 1),
            Stmt::If(
                vec![(
                    Cond::ICmp(">", IExpr::Var(k.clone()), IExpr::Lit(bound)),
                    vec![Stmt::Break(None, exit_value)],
                )],
                None,
            ),
        ];
        // The statements of the body in a scope of their own, which the inner loop below
        // shares (a `let` among them shadows for it too).
        self.push_scope();
        for _ in 0..n {
            if self.budget <= 0 {
                break;
            }
            self.stmt(depth + 1, &mut body);
        }
        if value.is_some() && label.is_some() && depth < 2 && self.chance(0.5) {
            // `for i in 0..b { if c { break 'l e; } … }`: the value out of an inner loop.
            let i = self.fresh("i");
            let b = self.rng.random_range(1..4);
            self.push_scope();
            self.declare(&i, Kind::Int { hi: Hi::Max(b - 1) }, false);
            self.loops.push(LoopCtx {
                label: None,
                value: false,
            });
            let c = self.cond(1);
            let e = self.expr(2);
            let mut inner = vec![Stmt::If(
                vec![(c, vec![Stmt::Break(label.clone(), Some(e))])],
                None,
            )];
            inner.extend(self.block(depth + 2, 1));
            self.loops.pop();
            self.pop_scope();
            body.push(Stmt::For {
                label: None,
                pattern: i,
                iter: format!("0..{b}"),
                body: inner,
            });
        }
        self.pop_scope();
        self.control -= 1;
        self.loops.pop();
        self.pop_scope();
        out.push(Stmt::Loop {
            label,
            value: value.clone(),
            body,
        });
        if let Some(name) = value {
            self.declare(&name, Kind::Real { deref: false }, false);
        }
    }

    /// `let (a, mut b, _) = (e1, e2, e3);`: the values are computed before any name is
    /// bound, so a name may also be read (or shadowed).
    pub(super) fn tuple_let(&mut self, out: &mut Vec<Stmt>) {
        let count = self.rng.random_range(2..4);
        let values: Vec<Expr> = (0..count).map(|_| self.expr(2)).collect();
        let reals: Vec<Var> = self
            .reals()
            .into_iter()
            .filter(|v| !v.name.contains('.') && !self.settled.contains(&v.name))
            .collect();
        let mut names: Vec<Option<(String, bool)>> = Vec::new();
        for _ in 0..count {
            if self.chance(0.15) {
                names.push(None);
                continue;
            }
            let shadow = !reals.is_empty() && self.chance(0.25);
            let name = if shadow {
                self.pick(&reals).name
            } else {
                self.fresh("t")
            };
            if name.contains('.') || names.iter().flatten().any(|(n, _)| *n == name) {
                names.push(Some((self.fresh("t"), false)));
            } else {
                names.push(Some((name, self.chance(0.3))));
            }
        }
        if names.iter().all(Option::is_none) {
            names[0] = Some((self.fresh("t"), false));
        }
        for (name, mutable) in names.iter().flatten() {
            self.declare(name, Kind::Real { deref: false }, *mutable);
        }
        out.push(Stmt::LetTuple(names, TupleInit::Exprs(values)));
    }

    /// `let (a, b) = h(..);` of a helper returning a tuple.
    pub(super) fn tuple_call(&mut self, out: &mut Vec<Stmt>) {
        let (name, helper) = self.pick(&self.callable(2));
        let Some(args) = self.call_args(&helper, 1) else {
            return;
        };
        let mut names: Vec<Option<(String, bool)>> = Vec::new();
        for _ in 0..helper.outputs {
            if self.chance(0.1) {
                names.push(None);
            } else {
                names.push(Some((self.fresh("t"), self.chance(0.3))));
            }
        }
        if names.iter().all(Option::is_none) {
            names[0] = Some((self.fresh("t"), false));
        }
        for (name, mutable) in names.iter().flatten() {
            self.declare(name, Kind::Real { deref: false }, *mutable);
        }
        out.push(Stmt::LetTuple(names, TupleInit::Call(name, args)));
    }

    /// A call of a helper returning an array of `K` numbers: taken apart
    /// (`let [a, _, c] = h(..);`), kept in a local array (`let v: [f64; K] = h(..);`), or
    /// assigned to a local array of that length (`v = h(..);`), its arguments varying or
    /// constant.
    pub(super) fn array_call(&mut self, out: &mut Vec<Stmt>) {
        let (name, helper) = self.pick(&self.array_callable());
        let Some(args) = self.call_args(&helper, 1) else {
            return;
        };
        let k = helper.outputs;
        let assignable: Vec<String> = self
            .assignable_arrays()
            .into_iter()
            .filter(|v| {
                matches!(&v.kind, Kind::Array { len: ALen::Fixed(Len::Lit(n)), inner: None, owner: Owner::Array, local: true } if *n == k)
            })
            .map(|v| v.name)
            .collect();
        let to = match self.rng.random_range(0..3) {
            0 if !assignable.is_empty() => ArrayBinding::Assign(self.pick(&assignable)),
            0 | 1 => {
                let local = self.fresh("h");
                let mutable = self.chance(0.4);
                // Written with its type, as the guide asks: a macro cannot see what the
                // helper returns.
                let typed = Some(k);
                self.declare(
                    &local,
                    Kind::Array {
                        len: ALen::Fixed(Len::Lit(k)),
                        inner: None,
                        owner: Owner::Array,
                        local: true,
                    },
                    mutable,
                );
                ArrayBinding::Let {
                    name: local,
                    mutable,
                    typed,
                }
            }
            _ => {
                let mut names: Vec<Option<String>> = (0..k)
                    .map(|_| (!self.chance(0.2)).then(|| self.fresh("e")))
                    .collect();
                if names.iter().all(Option::is_none) {
                    names[0] = Some(self.fresh("e"));
                }
                for name in names.iter().flatten() {
                    self.declare(name, Kind::Real { deref: false }, false);
                }
                ArrayBinding::Destructure(names)
            }
        };
        out.push(Stmt::CallArray {
            to,
            call: name,
            args,
        });
    }

    /// In the function's body, outside loops and branches (maybe after an early `return`,
    /// where `#[grad]` declares it in the block that runs while nothing has returned):
    /// `let mut v = Vec::with_capacity(n);` (or `Vec::new()`), filled by `push` in a loop
    /// (and maybe before and after it, or under a condition); then read like any array,
    /// of the length it has for certain.
    pub(super) fn push_vector(&mut self, out: &mut Vec<Stmt>) {
        let name = self.fresh("v");
        let arrays: Vec<Var> = self
            .arrays()
            .into_iter()
            .filter(|v| {
                matches!(&v.kind, Kind::Array { len, inner: None, owner, .. }
                    if *owner != Owner::Window && !matches!(len, ALen::Fixed(Len::Generic(_))))
            })
            .collect();
        let mut stmts = Vec::new();
        let capacity = match self.rng.random_range(0..3) {
            0 => None,
            1 => Some(IExpr::Lit(self.rng.random_range(0..5))),
            _ => Some(self.small_int()),
        };
        stmts.push(Stmt::LetVec(name.clone(), capacity));
        let mut certain = 0;
        if self.chance(0.3) {
            let e = self.expr(2);
            stmts.push(Stmt::Push(name.clone(), e));
            certain += 1;
        }
        self.push_scope();
        self.control += 1;
        // The loop: its pattern, iterable and trip count (`None`: the run-time length).
        let (pattern, iter, trips) = if arrays.is_empty() || self.chance(0.3) {
            let i = self.fresh("i");
            let k = self.rng.random_range(1..5);
            self.declare(&i, Kind::Int { hi: Hi::Max(k - 1) }, false);
            (i, format!("0..{k}"), Some(k))
        } else {
            let src = self.pick(&arrays);
            let Kind::Array { len, owner, .. } = src.kind.clone() else {
                unreachable!()
            };
            let trips = match &len {
                ALen::Fixed(n) => Some(n.value()),
                ALen::Run => None,
            };
            let x = self.fresh("x");
            match self.rng.random_range(0..4) {
                0 => {
                    let i = self.fresh("i");
                    let hi = if owner == Owner::Grown {
                        Hi::Unknown
                    } else {
                        below(&len)
                    };
                    self.declare(&i, Kind::Int { hi }, false);
                    (i, format!("0..{}.len()", src.name), trips)
                }
                1 => {
                    self.declare(&x, Kind::Real { deref: false }, false);
                    (format!("&{x}"), format!("{}.iter()", src.name), trips)
                }
                _ => {
                    self.declare(&x, Kind::Real { deref: true }, false);
                    let text = if owner == Owner::Borrowed && self.chance(0.5) {
                        src.name.clone()
                    } else {
                        format!("{}.iter()", src.name)
                    };
                    (x, text, trips)
                }
            }
        };
        let mut body = Vec::new();
        if self.chance(0.3) {
            let v = self.fresh("v");
            let e = self.expr(2);
            body.push(Stmt::Let {
                name: v.clone(),
                mutable: false,
                annotated: false,
                init: e,
            });
            self.declare(&v, Kind::Real { deref: false }, false);
        }
        let e = self.expr(2);
        body.push(Stmt::Push(name.clone(), e));
        let conditional = self.chance(0.2);
        if conditional {
            let c = self.cond(1);
            let e = self.expr(2);
            body.push(Stmt::If(vec![(c, vec![Stmt::Push(name.clone(), e)])], None));
        }
        self.control -= 1;
        self.pop_scope();
        stmts.push(Stmt::For {
            label: None,
            pattern,
            iter,
            body,
        });
        if self.chance(0.2) {
            let e = self.expr(2);
            stmts.push(Stmt::Push(name.clone(), e));
            certain += 1;
        }
        let len = match trips {
            None if certain == 0 && !conditional => ALen::Run,
            None => ALen::Fixed(Len::Lit(certain + SLICE_MIN)),
            Some(k) => ALen::Fixed(Len::Lit(certain + k)),
        };
        out.extend(stmts);
        // Pushes besides a loop over a slice give a length of at least `certain +
        // SLICE_MIN` (the slice may be longer; seed 103's program 1305 indexed a table of
        // 3 by `0..v.len()` of such a vector of 4): a lower bound, as of conditional pushes.
        let at_least = conditional || (trips.is_none() && certain > 0);
        self.declare(
            &name,
            Kind::Array {
                len,
                inner: None,
                owner: if at_least { Owner::Grown } else { Owner::Vec },
                local: true,
            },
            false,
        );
    }
}
