//! Number expressions, conditions, calls, reductions and `match`es of random programs.

use super::*;

impl Gen {
    // ----------------------------------------------------------------------------------
    // Number expressions.

    pub(super) fn leaf(&mut self) -> Expr {
        let visible = self.visible();
        let (mut reals, mut arrays, mut ints) = (Vec::new(), Vec::new(), Vec::new());
        let mut ragged = Vec::new();
        for v in visible {
            match v.kind {
                Kind::Real { .. } => reals.push(v),
                Kind::Array { .. } => arrays.push(v),
                Kind::Int { .. } => ints.push(v),
                Kind::Ragged if !self.straight => ragged.push(v),
                Kind::Bool
                | Kind::Struct
                | Kind::Ragged
                | Kind::Choice(_)
                | Kind::Pair
                | Kind::Inner { .. } => {}
            }
        }
        if !ragged.is_empty() && self.chance(0.1) {
            // `rows[i][j]`, both indices in bounds by `%`.
            let rows = self.pick(&ragged).name;
            let any = |g: &mut Gen| match g.ints().as_slice() {
                [] => IExpr::Lit(g.rng.random_range(0..4)),
                ints => IExpr::Var(ints[g.rng.random_range(0..ints.len())].name.clone()),
            };
            let i = IExpr::Rem(Box::new(any(self)), Box::new(IExpr::Len(rows.clone())));
            let len = IExpr::RowLen(rows.clone(), Box::new(i.clone()));
            let j = IExpr::Rem(Box::new(any(self)), Box::new(len));
            return Expr::Ragged(rows, i, j);
        }
        let roll = self.rng.random_range(0..20);
        if roll < 9 && !reals.is_empty() {
            let v = self.pick(&reals);
            let deref = matches!(v.kind, Kind::Real { deref: true });
            return Expr::Var {
                name: v.name,
                deref,
            };
        }
        if roll < 15 && !arrays.is_empty() {
            let v = self.pick(&arrays);
            if let Kind::Array { len, inner, .. } = v.kind {
                let mut indices = vec![self.index(&len)];
                if let Some(k) = inner {
                    indices.push(self.index(&ALen::Fixed(Len::Lit(k))));
                }
                return Expr::Index(v.name, indices);
            }
        }
        if roll < 16 && !ints.is_empty() && !self.config.value_ops_only {
            let v = self.pick(&ints);
            return Expr::FromInt(IExpr::Var(v.name));
        }
        if roll < 17 && !self.config.value_ops_only {
            return self.constant();
        }
        if reals.is_empty() || self.chance(0.5) {
            self.literal()
        } else {
            let v = self.pick(&reals);
            let deref = matches!(v.kind, Kind::Real { deref: true });
            Expr::Var {
                name: v.name,
                deref,
            }
        }
    }

    pub(super) fn form(&mut self) -> Form {
        if self.chance(0.2) && !self.config.value_ops_only {
            Form::Path
        } else {
            Form::Method
        }
    }

    pub(super) fn op(&mut self, name: &'static str, args: Vec<Expr>) -> Expr {
        // A long program draws three in four of its kinks as smooth operations instead:
        // every point would be near one of thousands (`hypot` is one at the origin only).
        if self.long.is_some() && KINKS.contains(&name) && name != "hypot" && self.chance(0.75) {
            return self.smooth(args);
        }
        let form = self.form();
        Expr::Op { name, args, form }
    }

    /// A smooth operation of the operands of a kink: a unary one of one operand, an
    /// arithmetic one of two, a squashing of the first of three (`clamp`).
    fn smooth(&mut self, mut args: Vec<Expr>) -> Expr {
        if args.len() == 2 {
            let op = self.pick(&[BinOp::Add, BinOp::Sub, BinOp::Mul]);
            let b = args.pop().expect("two operands");
            let a = args.pop().expect("two operands");
            return Expr::Bin(op, Box::new(a), Box::new(b));
        }
        let name = self.pick(&["sin", "cos", "atan", "tanh", "asinh", "sigmoid"]);
        let form = self.form();
        args.truncate(1);
        Expr::Op { name, args, form }
    }

    /// A number in roughly [-1.6, 1.6] whatever `e` is.
    pub(super) fn bounded(&mut self, e: Expr) -> Expr {
        let name = self.pick(&["tanh", "sin", "cos", "atan", "sigmoid"]);
        self.op(name, vec![e])
    }

    /// A positive number (at least 0.1) whatever `e` is.
    pub(super) fn positive(&mut self, e: Expr) -> Expr {
        let half = Expr::Lit("0.5".into());
        match self.rng.random_range(0..5) {
            0 => Expr::Bin(
                BinOp::Add,
                Box::new(Expr::Bin(BinOp::Mul, Box::new(e.clone()), Box::new(e))),
                Box::new(half),
            ),
            1 => Expr::Bin(
                BinOp::Add,
                Box::new(Expr::Powi(Box::new(e), Exponent::Lit(2))),
                Box::new(Expr::Lit("1.0".into())),
            ),
            2 => {
                let b = self.bounded(e);
                self.op("exp", vec![b])
            }
            3 => self.op("hypot", vec![e, Expr::Lit("1.0".into())]),
            _ => {
                let s = self.op("sigmoid", vec![e]);
                Expr::Bin(BinOp::Add, Box::new(s), Box::new(Expr::Lit("0.1".into())))
            }
        }
    }

    /// A number in (-0.9, 0.9).
    pub(super) fn unit(&mut self, e: Expr) -> Expr {
        let name = self.pick(&["tanh", "sin", "cos"]);
        let b = self.op(name, vec![e]);
        Expr::Bin(BinOp::Mul, Box::new(b), Box::new(Expr::Lit("0.9".into())))
    }

    pub(super) fn expr(&mut self, depth: usize) -> Expr {
        if depth == 0 {
            return self.leaf();
        }
        let d = depth - 1;
        let roll = self.rng.random_range(0..100);
        match roll {
            0..=7 => self.leaf(),
            8..=27 => {
                let op = self.pick(&[BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Add, BinOp::Mul]);
                Expr::Bin(op, Box::new(self.expr(d)), Box::new(self.expr(d)))
            }
            28..=31 => {
                let a = self.expr(d);
                let b = if self.chance(0.3) {
                    self.positive_literal()
                } else {
                    let b = self.expr(d);
                    self.positive(b)
                };
                Expr::Bin(BinOp::Div, Box::new(a), Box::new(b))
            }
            32..=33 => Expr::Neg(Box::new(self.expr(d))),
            34..=45 => {
                let name = self.pick(UNARY_ANY);
                let a = self.expr(d);
                self.op(name, vec![a])
            }
            46..=51 => {
                let mut name = self.pick(UNARY_BOUNDED);
                // Not in a long program: up to 92 (of a bounded number), then cubed by a
                // `powi` (to 8e5), somewhere in every long program.
                if name == "to_degrees" && self.long.is_some() {
                    name = "to_radians";
                }
                let a = self.expr(d);
                let a = self.bounded(a);
                self.op(name, vec![a])
            }
            52..=58 => {
                let candidates: Vec<&'static str> = UNARY_POSITIVE
                    .iter()
                    .copied()
                    .filter(|n| !self.config.value_ops_only || !NOT_ON_VALUE.contains(n))
                    .collect();
                let name = self.pick(&candidates);
                let a = self.expr(d);
                let a = self.positive(a);
                self.op(name, vec![a])
            }
            59..=61 => {
                let name = self.pick(UNARY_UNIT);
                let a = self.expr(d);
                let a = self.unit(a);
                self.op(name, vec![a])
            }
            62..=63 => {
                // acosh of at least 1.5.
                let a = self.expr(d);
                let a = Expr::Bin(
                    BinOp::Add,
                    Box::new(Expr::Bin(BinOp::Mul, Box::new(a.clone()), Box::new(a))),
                    Box::new(Expr::Lit("1.5".into())),
                );
                self.op("acosh", vec![a])
            }
            64..=67 => {
                let a = self.expr(d);
                let n = self.rng.random_range(-2..5);
                if n < 0 {
                    let a = self.positive(a);
                    Expr::Powi(Box::new(a), Exponent::Lit(n))
                } else if self.chance(0.3) && !self.config.value_ops_only && !self.straight {
                    let a = self.bounded(a);
                    Expr::Powi(Box::new(a), Exponent::Int(self.small_int()))
                } else {
                    Expr::Powi(Box::new(a), Exponent::Lit(n))
                }
            }
            68..=70 => {
                // powf of a positive base; the exponent a literal or a bounded number.
                let a = self.expr(d);
                let a = self.positive(a);
                let y = if self.chance(0.5) || self.config.value_ops_only {
                    self.literal()
                } else {
                    let y = self.expr(d);
                    self.bounded(y)
                };
                self.op("powf", vec![a, y])
            }
            71..=72 if !self.config.value_ops_only => {
                // log of a positive number in a base of at least 2.
                let a = self.expr(d);
                let a = self.positive(a);
                let b = self.expr(d);
                let b = Expr::Bin(
                    BinOp::Add,
                    Box::new(Expr::Bin(BinOp::Mul, Box::new(b.clone()), Box::new(b))),
                    Box::new(Expr::Lit("2.0".into())),
                );
                self.op("log", vec![a, b])
            }
            73..=80 => {
                let name = self.pick(&["atan2", "max", "min", "hypot", "max", "min", "rem"]);
                let a = self.expr(d);
                let b = if name == "rem" {
                    // A remainder by a constant modulus, as angles and phases wrap.
                    Expr::Lit(self.pick(&["0.7", "1.3", "2.5"]).into())
                } else {
                    self.expr(d)
                };
                self.op(name, vec![a, b])
            }
            81..=82 => {
                let (a, b, c) = (self.expr(d), self.expr(d), self.expr(d));
                self.op("mul_add", vec![a, b, c])
            }
            83..=84 => {
                let x = self.expr(d);
                if self.chance(0.5) || self.config.value_ops_only {
                    self.op(
                        "clamp",
                        vec![x, Expr::Lit("-0.5".into()), Expr::Lit("0.75".into())],
                    )
                } else {
                    // Bounds of active values, lo <= -0.1 < 0.1 <= hi.
                    let lo = self.expr(d);
                    let hi = self.expr(d);
                    let lo = Expr::Neg(Box::new(Expr::Bin(
                        BinOp::Add,
                        Box::new(Expr::Powi(Box::new(lo), Exponent::Lit(2))),
                        Box::new(Expr::Lit("0.1".into())),
                    )));
                    let hi = Expr::Bin(
                        BinOp::Add,
                        Box::new(Expr::Powi(Box::new(hi), Exponent::Lit(2))),
                        Box::new(Expr::Lit("0.1".into())),
                    );
                    self.op("clamp", vec![x, lo, hi])
                }
            }
            85..=88 if !self.config.value_ops_only && !self.straight => {
                let c = self.cond(d.min(1));
                // Branches: `#[grad]` lowers them into blocks of their own.
                self.control += 1;
                let (a, b) = (self.expr(d), self.expr(d));
                self.control -= 1;
                Expr::If(Box::new(c), Box::new(a), Box::new(b))
            }
            89 if !self.config.value_ops_only && self.long.is_none() => {
                let a = self.expr(d);
                Expr::Stop(Box::new(a))
            }
            90..=91
                if !self.config.value_ops_only
                    && !self.callable(1).is_empty()
                    && self.in_closure == 0 =>
            {
                self.call(d)
            }
            92..=93 if !self.config.value_ops_only && self.in_closure == 0 && !self.straight => {
                self.reduce(d)
            }
            94 if !self.config.value_ops_only && !self.straight => {
                self.control += 1;
                let m = self.match_expr(d);
                self.control -= 1;
                m
            }
            95 if !self.config.value_ops_only && self.in_closure == 0 && !self.straight => {
                self.control += 1;
                let block = self.block_expr(d);
                self.control -= 1;
                block
            }
            _ => {
                let a = self.expr(d);
                self.op("tanh", vec![a])
            }
        }
    }

    /// `{ let b = e; r }`.
    pub(super) fn block_expr(&mut self, d: usize) -> Expr {
        self.push_scope();
        let name = self.fresh("b");
        let init = self.expr(d);
        self.declare(&name, Kind::Real { deref: false }, false);
        let result = self.expr(d);
        self.pop_scope();
        Expr::Block(
            vec![Stmt::Let {
                name,
                mutable: false,
                annotated: false,
                init,
            }],
            Box::new(result),
        )
    }

    /// A condition; `Cmp`s of numbers are branch boundaries the test keeps away from.
    /// Counted as nested (an operand of `&&` or `||`, an `else if`, a guard, a `while`'s
    /// condition are evaluated in blocks of their own).
    pub(super) fn cond(&mut self, depth: usize) -> Cond {
        self.control += 1;
        let c = self.cond_inner(depth);
        self.control -= 1;
        c
    }

    fn cond_inner(&mut self, depth: usize) -> Cond {
        let flags = self.flags();
        let ints = self.ints();
        let roll = self.rng.random_range(0..20);
        if roll < 2 && !flags.is_empty() {
            let f = self.pick(&flags);
            let c = Cond::Flag(f.name);
            return if self.chance(0.3) {
                Cond::Not(Box::new(c))
            } else {
                c
            };
        }
        let choices = self.choices();
        if roll == 3 && !choices.is_empty() {
            let (name, choice) = self.pick(&choices);
            let [a, b, _] = choice.values();
            let text = match (choice, self.rng.random_range(0..3)) {
                (_, 0) => format!("{name} == {a}"),
                (_, 1) => format!("{name} != {b}"),
                (Choice::Enum, _) => format!("matches!({name}, {a} | {b})"),
                (Choice::Str, _) => format!("{name}.len() > 2"),
            };
            return Cond::Choice(text);
        }
        if roll == 2 && !self.straight {
            let slices: Vec<Var> = self
                .visible()
                .into_iter()
                .filter(|v| {
                    matches!(
                        v.kind,
                        Kind::Array {
                            len: ALen::Run,
                            owner: Owner::Borrowed | Owner::Field,
                            ..
                        }
                    )
                })
                .collect();
            if !slices.is_empty() {
                let c = Cond::Empty(self.pick(&slices).name);
                return if self.chance(0.5) {
                    Cond::Not(Box::new(c))
                } else {
                    c
                };
            }
        }
        if roll < 5 && !ints.is_empty() {
            let v = self.pick(&ints);
            let op = self.pick(&["<", ">", "<=", ">=", "==", "!="]);
            let k = self.rng.random_range(0..4);
            return Cond::ICmp(op, IExpr::Var(v.name), IExpr::Lit(k));
        }
        if roll < 7 && depth > 0 {
            let (a, b) = (self.cond(0), self.cond(0));
            return if self.chance(0.5) {
                Cond::And(Box::new(a), Box::new(b))
            } else {
                Cond::Or(Box::new(a), Box::new(b))
            };
        }
        let op = self.pick(&["<", ">", "<=", ">="]);
        let a = self.expr(depth.min(2));
        let b = if self.chance(0.6) {
            self.literal()
        } else {
            self.expr(depth.min(1))
        };
        Cond::Cmp(op, a, b)
    }

    /// The helpers and methods that can be called here returning `outputs` numbers, each
    /// with the name it is called by (`h0`, `m1.g0`, `self.g1`).
    pub(super) fn callable(&self, outputs: usize) -> Vec<(String, Helper)> {
        let receiver = self
            .visible()
            .into_iter()
            .find(|v| matches!(v.kind, Kind::Struct))
            .map(|v| v.name);
        self.helpers
            .iter()
            .filter(|h| h.outputs == outputs && !h.array)
            .filter_map(|h| match (&receiver, h.method) {
                (_, false) => Some((h.name.clone(), h.clone())),
                (Some(r), true) => Some((format!("{r}.{}", h.name), h.clone())),
                (None, true) => None,
            })
            .collect()
    }

    /// The helpers returning arrays that can be called here.
    pub(super) fn array_callable(&self) -> Vec<(String, Helper)> {
        self.helpers
            .iter()
            .filter(|h| h.array)
            .map(|h| (h.name.clone(), h.clone()))
            .collect()
    }

    pub(super) fn call(&mut self, depth: usize) -> Expr {
        let (name, helper) = self.pick(&self.callable(1));
        match self.call_args(&helper, depth) {
            Some(args) => Expr::Call(name, args),
            None => self.expr(depth),
        }
    }

    /// Arguments for a call of `helper`, if what it takes whole is in scope.
    pub(super) fn call_args(&mut self, helper: &Helper, depth: usize) -> Option<Vec<Arg>> {
        let mut args = Vec::new();
        // The length of the arrays passed for `[f64; N]`, once chosen.
        let mut generic: Option<usize> = None;
        for p in &helper.params {
            match p {
                ParamKind::Real(Shape::Scalar, _) => args.push(Arg::Real(self.expr(depth))),
                ParamKind::Real(Shape::Array(Len::Generic(_)), pass) => {
                    let n = match generic {
                        Some(n) => n,
                        None => {
                            let lengths = self.whole_lengths();
                            if lengths.is_empty() {
                                return None;
                            }
                            self.pick(&lengths)
                        }
                    };
                    generic = Some(n);
                    args.push(Arg::Whole(self.whole_array(n, *pass)?));
                }
                ParamKind::Real(Shape::Array(n), pass) => {
                    args.push(Arg::Whole(self.whole_array(n.value(), *pass)?));
                }
                ParamKind::Real(Shape::Slice, _) => args.push(Arg::Whole(self.whole_slice()?)),
                ParamKind::Int { hi, .. } => {
                    let hi = *hi;
                    let i = self.small_int();
                    args.push(Arg::Int(IExpr::Rem(
                        Box::new(i),
                        Box::new(IExpr::Lit(hi + 1)),
                    )));
                }
                ParamKind::Bool => {
                    let flags = self.flags();
                    let text = if !flags.is_empty() && self.chance(0.7) {
                        self.pick(&flags).name
                    } else {
                        self.pick(&["true", "false"]).to_string()
                    };
                    args.push(Arg::Whole(text));
                }
                ParamKind::Choice(choice) => {
                    let same: Vec<String> = self
                        .choices()
                        .into_iter()
                        .filter(|(_, c)| c == choice)
                        .map(|(name, _)| name)
                        .collect();
                    let text = if !same.is_empty() && self.chance(0.6) {
                        self.pick(&same)
                    } else {
                        self.pick(&choice.values()).to_string()
                    };
                    args.push(Arg::Whole(text));
                }
                ParamKind::Inner => {
                    // A field or an element borrowed (`&m0.i1`, `&m0.it2[0]`); a name
                    // bound to one, or a parameter, is a reference already.
                    let inners: Vec<Var> = self
                        .visible()
                        .into_iter()
                        .filter(|v| matches!(v.kind, Kind::Inner { whole: true }))
                        .collect();
                    if inners.is_empty() {
                        return None;
                    }
                    let name = self.pick(&inners).name;
                    let text = if name.contains('.') || name.contains('[') {
                        format!("&{name}")
                    } else {
                        name
                    };
                    args.push(Arg::Whole(text));
                }
                ParamKind::Struct => {
                    // `m0` and names bound to elements are references already; an element
                    // read by index is borrowed (`&ms0[1]`).
                    let structs: Vec<Var> = self
                        .visible()
                        .into_iter()
                        .filter(|v| matches!(v.kind, Kind::Struct))
                        .collect();
                    if structs.is_empty() {
                        return None;
                    }
                    let name = self.pick(&structs).name;
                    let text = if name.contains('[') {
                        format!("&{name}")
                    } else {
                        name
                    };
                    args.push(Arg::Whole(text));
                }
                _ => return None,
            }
        }
        Some(args)
    }

    /// Whether an array of length `len` may be passed whole here. A local or `mut` array
    /// is copied at the call (kept per iteration in a loop, for the sweep); windows,
    /// vectors and arrays of generic length are never passed.
    fn passable_whole(len: &Len, owner: &Owner) -> bool {
        !(matches!(
            owner,
            Owner::Window | Owner::Vec | Owner::Grown | Owner::MutRef
        ) || matches!(len, Len::Generic(_)))
    }

    /// The arrays of constant length that could be passed whole here, or their rows:
    /// each with its length, its rows' length (`None` for numbers), its owner and whether
    /// it is a local.
    fn whole_arrays(&self) -> Vec<(Var, usize, Option<usize>, Owner, bool)> {
        let mut out = Vec::new();
        for v in self.arrays() {
            if let Kind::Array {
                len: ALen::Fixed(len),
                inner,
                owner,
                local,
            } = &v.kind
            {
                if Self::passable_whole(len, owner) {
                    let (len, inner, owner, local) = (len.value(), *inner, *owner, *local);
                    out.push((v, len, inner, owner, local));
                }
            }
        }
        out
    }

    /// The lengths of the arrays and rows that could be passed whole here.
    pub(super) fn whole_lengths(&self) -> Vec<usize> {
        self.whole_arrays()
            .into_iter()
            .filter_map(|(_, len, inner, _, local)| match inner {
                None => Some(len),
                Some(k) if !local => Some(k),
                _ => None,
            })
            .collect()
    }

    /// An array of `n` numbers passed whole (`&w`, `w`, `&m[1]`), if one is in scope; a
    /// row bound by a loop (`x` of `for x in m.iter()`, `*x` to a callee taking the array
    /// by value) in half the calls where one is.
    pub(super) fn whole_array(&mut self, n: usize, pass: Pass) -> Option<String> {
        let mut options = Vec::new();
        let mut rows = Vec::new();
        let amp = if pass == Pass::Value { "" } else { "&" };
        for (v, len, inner, owner, local) in self.whole_arrays() {
            match inner {
                None if len == n => {
                    let text = if owner == Owner::Borrowed && pass == Pass::Value {
                        format!("*{}", v.name)
                    } else if owner == Owner::Borrowed {
                        v.name.clone()
                    } else {
                        format!("{amp}{}", v.name)
                    };
                    // Loops name what they bind `x…` and `y…`; parameters are `w…`.
                    if v.name.starts_with('x') || v.name.starts_with('y') {
                        rows.push(text.clone());
                    }
                    options.push(text);
                }
                Some(k) if k == n && !local => {
                    let row = self.rng.random_range(0..len);
                    options.push(format!("{amp}{}[{row}]", v.name));
                }
                _ => {}
            }
        }
        if !rows.is_empty() && self.chance(0.5) {
            Some(self.pick(&rows))
        } else if options.is_empty() {
            None
        } else {
            Some(self.pick(&options))
        }
    }

    /// A slice parameter passed whole.
    pub(super) fn whole_slice(&mut self) -> Option<String> {
        let options: Vec<String> = self
            .arrays()
            .into_iter()
            .filter(|v| {
                matches!(
                    v.kind,
                    Kind::Array {
                        len: ALen::Run,
                        inner: None,
                        owner: Owner::Borrowed | Owner::Field,
                        ..
                    }
                )
            })
            .map(|v| {
                if v.name.contains('.') {
                    format!("&{}", v.name)
                } else {
                    v.name
                }
            })
            .collect();
        if options.is_empty() {
            None
        } else {
            Some(self.pick(&options))
        }
    }

    /// An iterator reduction over an array of numbers in scope.
    pub(super) fn reduce(&mut self, depth: usize) -> Expr {
        let sources: Vec<Var> = self
            .arrays()
            .into_iter()
            .filter(|v| matches!(v.kind, Kind::Array { inner: None, .. }))
            .collect();
        if sources.is_empty() {
            return self.leaf();
        }
        let src = self.pick(&sources);
        let Kind::Array { len, owner, .. } = src.kind.clone() else {
            unreachable!()
        };
        let mut chain = src.name.clone();
        // A sub-slice of a fixed array.
        if let ALen::Fixed(n) = &len {
            if n.value() >= 3 && self.chance(0.2) {
                chain = format!("{}[1..{}]", src.name, n.value());
            }
        }
        chain.push_str(".iter()");
        let fold_init = if self.chance(0.2) {
            Some(self.expr(depth.min(1)))
        } else {
            None
        };
        self.push_scope();
        self.in_closure += 1;
        let pattern;
        let roll = self.rng.random_range(0..10);
        if roll < 2 {
            // zip with another array of the same kind of length
            let partners: Vec<Var> = sources
                .iter()
                .filter(|v| same_kind_of_length(&v.kind, &len))
                .cloned()
                .collect();
            let partner = self.pick(&partners);
            chain.push_str(&format!(".zip({}.iter())", partner.name));
            let (x, y) = (self.fresh("x"), self.fresh("y"));
            pattern = format!("({x}, {y})");
            self.declare(&x, Kind::Real { deref: true }, false);
            self.declare(&y, Kind::Real { deref: true }, false);
        } else if roll < 4 {
            chain.push_str(".enumerate()");
            let (i, x) = (self.fresh("i"), self.fresh("x"));
            pattern = format!("({i}, {x})");
            let hi = if owner == Owner::Grown {
                Hi::Unknown
            } else {
                below(&len)
            };
            self.declare(&i, Kind::Int { hi }, false);
            self.declare(&x, Kind::Real { deref: true }, false);
        } else {
            if roll < 5 {
                chain.push_str(".rev()");
            }
            let x = self.fresh("x");
            if roll < 7 {
                chain.push_str(".copied()");
                pattern = x.clone();
                self.declare(&x, Kind::Real { deref: false }, false);
            } else {
                pattern = x.clone();
                self.declare(&x, Kind::Real { deref: true }, false);
            }
        }
        let filter = if self.chance(0.15) && !pattern.starts_with('(') {
            // `.filter(|x| **x > c)`: the item of the filter is a reference to the item.
            let deref = if chain.ends_with(".copied()") {
                "*"
            } else {
                "**"
            };
            let c = self.literal();
            let name = pattern.clone();
            let item = Expr::Var {
                name: format!("({deref}{name})"),
                deref: false,
            };
            Some((name, Cond::Cmp(">", item, c)))
        } else {
            None
        };
        let roll = self.rng.random_range(0..8);
        let (kind, body) = if let Some(init) = fold_init {
            let acc = self.fresh("acc");
            self.declare(&acc, Kind::Real { deref: false }, false);
            let term = self.expr(depth);
            let body = Expr::Bin(
                BinOp::Add,
                Box::new(Expr::Bin(
                    BinOp::Mul,
                    Box::new(Expr::Var {
                        name: acc.clone(),
                        deref: false,
                    }),
                    Box::new(Expr::Lit("0.5".into())),
                )),
                Box::new(term),
            );
            (ReduceKind::Fold(init, acc), body)
        } else if roll < 6 {
            (ReduceKind::Sum, self.expr(depth))
        } else {
            let b = self.expr(depth);
            let b = self.op("sigmoid", vec![b]);
            let body = Expr::Bin(BinOp::Add, Box::new(Expr::Lit("0.5".into())), Box::new(b));
            (ReduceKind::Product, body)
        };
        self.in_closure -= 1;
        self.pop_scope();
        Expr::Reduce(Box::new(Reduce {
            chain,
            filter,
            pattern,
            kind,
            body,
        }))
    }

    pub(super) fn match_expr(&mut self, depth: usize) -> Expr {
        let scrutinee = self.scrutinee();
        let mut arms = Vec::new();
        for (pattern, guard) in self.arm_patterns(&scrutinee, depth) {
            self.push_scope();
            if let Scrutinee::Real(_) = scrutinee {
                self.declare(&pattern, Kind::Real { deref: false }, false);
            }
            let body = self.expr(depth);
            self.pop_scope();
            arms.push((pattern, guard, body));
        }
        Expr::Match(Box::new(Match { scrutinee, arms }))
    }

    pub(super) fn scrutinee(&mut self) -> Scrutinee {
        let ints = self.ints();
        let flags = self.flags();
        let choices = self.choices();
        if !choices.is_empty() && self.chance(0.4) {
            let (name, choice) = self.pick(&choices);
            return Scrutinee::Choice(name, choice);
        }
        let roll = self.rng.random_range(0..10);
        if roll < 4 && !ints.is_empty() {
            Scrutinee::Int(IExpr::Var(self.pick(&ints).name))
        } else if roll < 5 && !flags.is_empty() {
            Scrutinee::Flag(self.pick(&flags).name)
        } else {
            Scrutinee::Real(self.expr(1))
        }
    }

    /// Patterns (and guards) of a `match`, ending in a catch-all.
    pub(super) fn arm_patterns(
        &mut self,
        s: &Scrutinee,
        depth: usize,
    ) -> Vec<(String, Option<Cond>)> {
        match s {
            Scrutinee::Int(_) => {
                let mut arms = vec![("0".to_string(), None)];
                if self.chance(0.5) {
                    arms.push(("1 | 2".into(), None));
                } else {
                    arms.push(("1..=2".into(), None));
                }
                if self.chance(0.3) {
                    let c = self.cond(0);
                    arms.push(("3".into(), Some(c)));
                }
                arms.push(("_".into(), None));
                arms
            }
            Scrutinee::Flag(_) => vec![("true".into(), None), ("false".into(), None)],
            Scrutinee::Choice(_, choice) => {
                // Every value, or one alone, two together, and the rest by `_`.
                let [a, b, c] = choice.values();
                // (A `&str` has more values than these: `_` instead of the last.)
                let last = if *choice == Choice::Str { "_" } else { c };
                match self.rng.random_range(0..3) {
                    0 => vec![(a.into(), None), (b.into(), None), (last.into(), None)],
                    1 => vec![(format!("{a} | {c}"), None), ("_".into(), None)],
                    _ => vec![(b.into(), None), ("_".into(), None)],
                }
            }
            Scrutinee::Real(_) => {
                let v = self.fresh("m");
                let c = self.literal();
                let guard = Cond::Cmp(
                    self.pick(&["<", ">"]),
                    Expr::Var {
                        name: v.clone(),
                        deref: false,
                    },
                    c,
                );
                let _ = depth;
                let w = self.fresh("m");
                vec![(v, Some(guard)), (w, None)]
            }
        }
    }
}
