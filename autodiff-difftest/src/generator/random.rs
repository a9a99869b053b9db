//! Random programs: a seeded walk over the constructs of the documented subset, with every
//! operation's argument kept inside its domain by construction (`ln` of `e·e + 0.5`,
//! `acos` of `tanh(e)·0.9`, …) and every loop bounded.

use super::ast::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The largest value an integer variable can hold, as far as indexing is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hi {
    /// At most this.
    Max(usize),
    /// Below the program's run-time slice length.
    BelowN,
    /// Not known (a counter): only used after `% len`, or as a number.
    Unknown,
}

/// How long an array variable is.
#[derive(Clone, Debug, PartialEq, Eq)]
enum ALen {
    Fixed(Len),
    /// The program's run-time length.
    Run,
}

/// What kind of place owns an array's elements (which decides what iterating it yields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Owner {
    /// An array value (a by-value parameter or a local array).
    Array,
    /// A local `Vec`.
    Vec,
    /// A reference (`&[f64; N]`, `&[f64]`, a row bound by a loop).
    Borrowed,
    /// A window or chunk of a slice: a `&[f64]` of known length, not an array.
    Window,
}

#[derive(Clone, Debug)]
enum Kind {
    Real {
        deref: bool,
    },
    Array {
        len: ALen,
        inner: Option<usize>,
        owner: Owner,
        /// A local array (not a parameter): passed whole only outside loops and branches.
        local: bool,
    },
    Int {
        hi: Hi,
    },
    Bool,
}

#[derive(Clone, Debug)]
struct Var {
    name: String,
    kind: Kind,
    mutable: bool,
    /// Loop counters that keep a loop finite: never assigned by random statements.
    protected: bool,
}

#[derive(Clone, Debug)]
struct LoopCtx {
    label: Option<String>,
    /// A `loop` used as a value: its `break`s carry a number.
    value: bool,
}

/// The signature of a callable helper.
#[derive(Clone, Debug)]
struct Helper {
    name: String,
    params: Vec<ParamKind>,
}

/// Which constructs and operations the generator may use.
#[derive(Clone, Debug)]
pub struct Config {
    /// Only operations the `Value` engine has (for graphs run on `Value` and `Tape`).
    pub value_ops_only: bool,
}

/// The operations of the table, with the shape of their domain.
const UNARY_ANY: &[&str] = &[
    "sin",
    "cos",
    "atan",
    "tanh",
    "asinh",
    "sigmoid",
    "abs",
    "relu",
    "floor",
    "ceil",
    "round",
    "trunc",
    "signum",
    "to_radians",
    "cbrt",
];
/// Unary operations that grow fast: their argument is bounded first.
const UNARY_BOUNDED: &[&str] = &["exp", "exp2", "exp_m1", "sinh", "cosh", "to_degrees", "tan"];
/// Unary operations of positive numbers.
const UNARY_POSITIVE: &[&str] = &["sqrt", "ln", "ln_1p", "log2", "log10", "recip"];
/// Unary operations of numbers in (-1, 1).
const UNARY_UNIT: &[&str] = &["asin", "acos", "atanh"];
/// Operations `Value` does not have.
const NOT_ON_VALUE: &[&str] = &["ln_1p", "log2", "log10", "log"];

struct Gen {
    rng: StdRng,
    config: Config,
    vars: Vec<Var>,
    scopes: Vec<usize>,
    loops: Vec<LoopCtx>,
    /// How many loops and branches enclose the statement being generated.
    control: usize,
    fresh: usize,
    helpers: Vec<Helper>,
    /// `const` items: (name, value) of `f64`s and of 3-element tables.
    consts: Vec<String>,
    tables: Vec<(String, usize)>,
    /// Statements left for the function.
    budget: i64,
    /// Whether a `return` may be written (not inside closures and expression blocks).
    in_closure: usize,
    /// Inside an index computed from a number (which computes no further such index).
    in_index: usize,
    /// Arrays a loop is iterating over: not written in its body.
    frozen: Vec<String>,
    /// Names hidden from expressions (a vector while one of its elements is assigned,
    /// which Rust's borrow rules make unreadable in the assignment).
    hidden: Vec<String>,
}

impl Gen {
    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.rng.random_range(0..items.len())].clone()
    }

    fn fresh(&mut self, prefix: &str) -> String {
        self.fresh += 1;
        format!("{prefix}{}", self.fresh)
    }

    fn push_scope(&mut self) {
        self.scopes.push(self.vars.len());
    }

    fn pop_scope(&mut self) {
        let mark = self.scopes.pop().expect("scope");
        self.vars.truncate(mark);
    }

    fn declare(&mut self, name: &str, kind: Kind, mutable: bool) {
        self.vars.push(Var {
            name: name.into(),
            kind,
            mutable,
            protected: false,
        });
    }

    /// Visible variables (the latest declaration of each name).
    fn visible(&self) -> Vec<Var> {
        let mut seen: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        for v in self.vars.iter().rev() {
            if !seen.contains(&v.name.as_str()) {
                seen.push(&v.name);
                if !self.hidden.contains(&v.name) {
                    out.push(v.clone());
                }
            }
        }
        out
    }

    fn reals(&self) -> Vec<Var> {
        self.visible()
            .into_iter()
            .filter(|v| matches!(v.kind, Kind::Real { .. }))
            .collect()
    }

    fn arrays(&self) -> Vec<Var> {
        self.visible()
            .into_iter()
            .filter(|v| matches!(v.kind, Kind::Array { .. }))
            .collect()
    }

    fn ints(&self) -> Vec<Var> {
        self.visible()
            .into_iter()
            .filter(|v| matches!(v.kind, Kind::Int { .. }))
            .collect()
    }

    fn flags(&self) -> Vec<Var> {
        self.visible()
            .into_iter()
            .filter(|v| matches!(v.kind, Kind::Bool))
            .collect()
    }

    // ----------------------------------------------------------------------------------
    // Literals and integers.

    fn literal(&mut self) -> Expr {
        let v: f64 = self.rng.random_range(-2.0..2.0);
        let v = (v * 100.0).round() / 100.0;
        let text = match self.rng.random_range(0..6) {
            0 => format!("{v:?}_f64"),
            1 if v != 0.0 => format!("{:e}", v),
            _ => format!("{v:?}"),
        };
        // `{:e}` of 0.5 is "5e-1": a valid float literal; of 2 it is "2e0".
        Expr::Lit(text)
    }

    fn positive_literal(&mut self) -> Expr {
        let v: f64 = self.rng.random_range(0.1..2.0);
        Expr::Lit(format!("{:?}", (v * 100.0).round() / 100.0))
    }

    fn constant(&mut self) -> Expr {
        let mut options = vec![
            "PI".to_string(),
            "std::f64::consts::E".to_string(),
            "std::f64::consts::FRAC_1_SQRT_2".to_string(),
            "f64::EPSILON".to_string(),
            "core::f64::consts::LN_2".to_string(),
        ];
        options.extend(self.consts.iter().filter(|c| !c.starts_with("N_")).cloned());
        let path = self.pick(&options);
        if !self.tables.is_empty() && self.chance(0.3) {
            let (table, n) = self.pick(&self.tables.clone());
            let i = self.index(&ALen::Fixed(Len::Lit(n)));
            return Expr::Table(table, i);
        }
        Expr::Path(path)
    }

    /// An integer expression whose value is a valid index into an array of length `len`.
    fn index(&mut self, len: &ALen) -> IExpr {
        let ints = self.ints();
        let fits = |hi: Hi| match (len, hi) {
            (ALen::Fixed(n), Hi::Max(h)) => h < n.value(),
            (ALen::Run, Hi::Max(h)) => h < SLICE_MIN,
            (ALen::Run, Hi::BelowN) => true,
            _ => false,
        };
        let direct: Vec<Var> = ints
            .iter()
            .filter(|v| matches!(v.kind, Kind::Int { hi } if fits(hi)))
            .cloned()
            .collect();
        let len_expr = |g: &mut Gen| match len {
            ALen::Fixed(Len::Named(name, _)) => IExpr::Const(name.clone()),
            ALen::Fixed(n) => {
                if g.chance(0.5) || n.value() < 2 {
                    IExpr::Lit(n.value())
                } else {
                    // `% (2 + 1)`: a length computed in the index.
                    IExpr::Add(Box::new(IExpr::Lit(n.value() - 1)), Box::new(IExpr::Lit(1)))
                }
            }
            ALen::Run => IExpr::Len(g.any_slice_name()),
        };
        let roll = self.rng.random_range(0..10);
        if roll < 4 && !direct.is_empty() {
            let v = self.pick(&direct);
            return IExpr::Var(v.name);
        }
        if roll < 7 && !ints.is_empty() {
            let v = self.pick(&ints);
            let mut i = IExpr::Var(v.name);
            if self.chance(0.5) {
                let k = self.rng.random_range(1..3);
                i = IExpr::Add(Box::new(i), Box::new(IExpr::Lit(k)));
            } else if self.chance(0.3) {
                i = IExpr::Mul(Box::new(i), Box::new(IExpr::Lit(2)));
            }
            return IExpr::Rem(Box::new(i), Box::new(len_expr(self)));
        }
        if roll < 8 && self.in_closure == 0 && self.in_index == 0 {
            if let ALen::Fixed(n) = len {
                if n.value() >= 2 {
                    self.in_index += 1;
                    let e = self.expr(1);
                    self.in_index -= 1;
                    return IExpr::FromReal(Box::new(e), n.value());
                }
            }
        }
        let max = match len {
            ALen::Fixed(n) => n.value(),
            ALen::Run => SLICE_MIN,
        };
        IExpr::Lit(self.rng.random_range(0..max))
    }

    fn any_slice_name(&self) -> String {
        self.visible()
            .into_iter()
            .find(|v| matches!(&v.kind, Kind::Array { len: ALen::Run, .. }))
            .map(|v| v.name)
            .expect("a run-time length with no slice in scope")
    }

    /// A slice parameter (`vec![0.0; xs.len()]` inside a loop or a branch must take its
    /// length from a parameter, as the README's error list says).
    fn slice_param_name(&self) -> Option<String> {
        self.visible()
            .into_iter()
            .find(|v| {
                matches!(
                    &v.kind,
                    Kind::Array {
                        len: ALen::Run,
                        owner: Owner::Borrowed,
                        ..
                    }
                )
            })
            .map(|v| v.name)
    }

    /// A small integer (a trip count, an exponent): a literal or an integer variable of
    /// known small range.
    fn small_int(&mut self) -> IExpr {
        let small: Vec<Var> = self
            .ints()
            .into_iter()
            .filter(|v| matches!(v.kind, Kind::Int { hi: Hi::Max(h) } if h <= 4))
            .collect();
        if !small.is_empty() && self.chance(0.5) {
            IExpr::Var(self.pick(&small).name)
        } else {
            IExpr::Lit(self.rng.random_range(0..4))
        }
    }

    // ----------------------------------------------------------------------------------
    // Number expressions.

    fn leaf(&mut self) -> Expr {
        let visible = self.visible();
        let (mut reals, mut arrays, mut ints) = (Vec::new(), Vec::new(), Vec::new());
        for v in visible {
            match v.kind {
                Kind::Real { .. } => reals.push(v),
                Kind::Array { .. } => arrays.push(v),
                Kind::Int { .. } => ints.push(v),
                Kind::Bool => {}
            }
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

    fn form(&mut self) -> Form {
        if self.chance(0.2) && !self.config.value_ops_only {
            Form::Path
        } else {
            Form::Method
        }
    }

    fn op(&mut self, name: &'static str, args: Vec<Expr>) -> Expr {
        let form = self.form();
        Expr::Op { name, args, form }
    }

    /// A number in roughly [-1.6, 1.6] whatever `e` is.
    fn bounded(&mut self, e: Expr) -> Expr {
        let name = self.pick(&["tanh", "sin", "cos", "atan", "sigmoid"]);
        self.op(name, vec![e])
    }

    /// A positive number (at least 0.1) whatever `e` is.
    fn positive(&mut self, e: Expr) -> Expr {
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
    fn unit(&mut self, e: Expr) -> Expr {
        let name = self.pick(&["tanh", "sin", "cos"]);
        let b = self.op(name, vec![e]);
        Expr::Bin(BinOp::Mul, Box::new(b), Box::new(Expr::Lit("0.9".into())))
    }

    fn expr(&mut self, depth: usize) -> Expr {
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
                let name = self.pick(UNARY_BOUNDED);
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
                } else if self.chance(0.3) && !self.config.value_ops_only {
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
                let name = self.pick(&["atan2", "max", "min", "hypot", "max", "min"]);
                let a = self.expr(d);
                let b = self.expr(d);
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
            85..=88 if !self.config.value_ops_only => {
                let c = self.cond(d.min(1));
                let (a, b) = (self.expr(d), self.expr(d));
                Expr::If(Box::new(c), Box::new(a), Box::new(b))
            }
            89 if !self.config.value_ops_only => {
                let a = self.expr(d);
                Expr::Stop(Box::new(a))
            }
            90..=91
                if !self.config.value_ops_only
                    && !self.helpers.is_empty()
                    && self.in_closure == 0 =>
            {
                self.call(d)
            }
            92..=93 if !self.config.value_ops_only && self.in_closure == 0 => self.reduce(d),
            94 if !self.config.value_ops_only => self.match_expr(d),
            95 if !self.config.value_ops_only && self.in_closure == 0 => {
                // A block with a `let`.
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
            _ => {
                let a = self.expr(d);
                self.op("tanh", vec![a])
            }
        }
    }

    /// A condition; `Cmp`s of numbers are branch boundaries the test keeps away from.
    fn cond(&mut self, depth: usize) -> Cond {
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

    fn call(&mut self, depth: usize) -> Expr {
        let helper = self.pick(&self.helpers.clone());
        let mut args = Vec::new();
        for p in &helper.params {
            match p {
                ParamKind::Real(Shape::Scalar, _) => args.push(Arg::Real(self.expr(depth))),
                ParamKind::Real(Shape::Array(n), pass) => {
                    let whole = self.whole_array(n.value(), *pass);
                    match whole {
                        Some(text) => args.push(Arg::Whole(text)),
                        None => return self.expr(depth),
                    }
                }
                ParamKind::Real(Shape::Slice, _) => match self.whole_slice() {
                    Some(text) => args.push(Arg::Whole(text)),
                    None => return self.expr(depth),
                },
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
                _ => return self.expr(depth),
            }
        }
        Expr::Call(helper.name, args)
    }

    /// An array of `n` numbers passed whole (`&w`, `w`, `&m[1]`), if one is in scope.
    fn whole_array(&mut self, n: usize, pass: Pass) -> Option<String> {
        let control = self.control;
        let mut options = Vec::new();
        for v in self.arrays() {
            if let Kind::Array {
                len: ALen::Fixed(len),
                inner,
                owner,
                local,
            } = &v.kind
            {
                if (*local && control > 0) || *owner == Owner::Window {
                    continue;
                }
                let amp = if pass == Pass::Value { "" } else { "&" };
                match inner {
                    None if len.value() == n && !*local => {
                        if *owner == Owner::Borrowed && pass == Pass::Value {
                            options.push(format!("*{}", v.name));
                        } else if *owner == Owner::Borrowed {
                            options.push(v.name.clone());
                        } else {
                            options.push(format!("{amp}{}", v.name));
                        }
                    }
                    None if len.value() == n => {
                        if *owner == Owner::Borrowed && pass == Pass::Value {
                            options.push(format!("*{}", v.name));
                        } else if *owner == Owner::Borrowed {
                            options.push(v.name.clone());
                        } else {
                            options.push(format!("{amp}{}", v.name));
                        }
                    }
                    Some(k) if *k == n && !local => {
                        let row = self.rng.random_range(0..len.value());
                        options.push(format!("{amp}{}[{row}]", v.name));
                    }
                    _ => {}
                }
            }
        }
        if options.is_empty() {
            None
        } else {
            Some(self.pick(&options))
        }
    }

    /// A slice parameter passed whole.
    fn whole_slice(&mut self) -> Option<String> {
        let options: Vec<String> = self
            .arrays()
            .into_iter()
            .filter(|v| {
                matches!(
                    v.kind,
                    Kind::Array {
                        len: ALen::Run,
                        inner: None,
                        owner: Owner::Borrowed,
                        ..
                    }
                )
            })
            .map(|v| v.name)
            .collect();
        if options.is_empty() {
            None
        } else {
            Some(self.pick(&options))
        }
    }

    /// An iterator reduction over an array of numbers in scope.
    fn reduce(&mut self, depth: usize) -> Expr {
        let sources: Vec<Var> = self
            .arrays()
            .into_iter()
            .filter(|v| matches!(v.kind, Kind::Array { inner: None, .. }))
            .collect();
        if sources.is_empty() {
            return self.leaf();
        }
        let src = self.pick(&sources);
        let Kind::Array { len, .. } = src.kind.clone() else {
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
            self.declare(
                &i,
                Kind::Int {
                    hi: match &len {
                        ALen::Fixed(n) => Hi::Max(n.value() - 1),
                        ALen::Run => Hi::BelowN,
                    },
                },
                false,
            );
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

    fn match_expr(&mut self, depth: usize) -> Expr {
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

    fn scrutinee(&mut self) -> Scrutinee {
        let ints = self.ints();
        let flags = self.flags();
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
    fn arm_patterns(&mut self, s: &Scrutinee, depth: usize) -> Vec<(String, Option<Cond>)> {
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

    // ----------------------------------------------------------------------------------
    // Statements.

    fn block(&mut self, depth: usize, len: usize) -> Vec<Stmt> {
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

    fn assignable_reals(&self) -> Vec<Var> {
        self.reals()
            .into_iter()
            .filter(|v| v.mutable && !v.protected)
            .collect()
    }

    fn assignable_arrays(&self) -> Vec<Var> {
        self.arrays()
            .into_iter()
            .filter(|v| v.mutable && !self.frozen.contains(&v.name))
            .collect()
    }

    /// A compound assignment operator and a value for it that keeps the variable tame.
    fn update(&mut self, depth: usize) -> (&'static str, Expr) {
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

    fn stmt(&mut self, depth: usize, out: &mut Vec<Stmt>) {
        self.budget -= 1;
        let roll = self.rng.random_range(0..100);
        let nested = depth > 0;
        match roll {
            0..=17 => {
                // let, shadowing, let mut
                let reals = self.reals();
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
                        let hide = owner == Owner::Vec;
                        if hide {
                            self.hidden.push(a.name.clone());
                        }
                        let mut indices = vec![self.index(&len)];
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
                if self.chance(0.3) {
                    let e = self.expr(2);
                    out.push(Stmt::Assign(Place::Var(name.clone()), "", e));
                } else {
                    let c = self.cond(1);
                    let mut then = self.branch_body(depth);
                    let e = self.expr(2);
                    then.push(Stmt::Assign(Place::Var(name.clone()), "", e));
                    let mut otherwise = self.branch_body(depth);
                    let e = self.expr(2);
                    otherwise.push(Stmt::Assign(Place::Var(name.clone()), "", e));
                    out.push(Stmt::If(vec![(c, then)], Some(otherwise)));
                }
                self.declare(&name, Kind::Real { deref: false }, false);
            }
            38..=41 => self.local_array(out),
            42..=57 if depth < 3 => self.for_loop(depth, out),
            58..=61 if depth < 3 => self.while_loop(depth, out),
            62..=64 if depth < 3 => self.loop_loop(depth, out),
            65..=74 if depth < 3 => {
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
            75..=77 if depth < 3 => {
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
            78..=83 if nested && !self.loops.is_empty() => {
                // break / continue under a condition
                let c = self.cond(1);
                let which = self.rng.random_range(0..self.loops.len());
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
                    if !innermost {
                        return;
                    }
                    Stmt::Break(None, Some(self.expr(2)))
                } else {
                    Stmt::Break(label, None)
                };
                out.push(Stmt::If(vec![(c, vec![exit])], None));
            }
            84..=86 if nested => {
                let c = self.cond(1);
                let e = self.expr(2);
                out.push(Stmt::If(vec![(c, vec![Stmt::Return(e)])], None));
            }
            87..=88 => {
                let body = self.block(depth + 1, 2);
                out.push(Stmt::Block(body));
            }
            89..=90 => {
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
            93 if depth == 0 && !self.consts.iter().any(|c| c == "LN_10") && self.chance(0.3) => {
                out.push(Stmt::Item("use std::f64::consts::LN_10;".into()));
                self.consts.push("LN_10".into());
            }
            93 if depth == 0 => {
                let name = self.fresh("K");
                let value = self.positive_literal();
                let Expr::Lit(text) = value else {
                    unreachable!()
                };
                out.push(Stmt::Item(format!("const {name}: f64 = {text};")));
                self.consts.push(name);
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
                            && matches!(&v.kind, Kind::Array { len: ALen::Fixed(n), inner: None, owner: Owner::Array, .. } if n.value() <= 4)
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

    fn branch_body(&mut self, depth: usize) -> Vec<Stmt> {
        if depth >= 3 || self.chance(0.5) {
            return Vec::new();
        }
        self.control += 1;
        let body = self.block(depth + 1, 1);
        self.control -= 1;
        body
    }

    /// `let mut y = <constant path or literal>; y op= e;`
    fn let_const_then_update(&mut self, out: &mut Vec<Stmt>) {
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

    fn local_array(&mut self, out: &mut Vec<Stmt>) {
        let name = self.fresh("h");
        let roll = self.rng.random_range(0..10);
        let slice_param = self.slice_param_name();
        let has_slice = slice_param.is_some();
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
        } else {
            let of = slice_param.expect("a slice parameter");
            (ArrayInit::VecZeros(of), ALen::Run, None, Owner::Vec)
        };
        let mutable = !matches!(init, ArrayInit::Literal(_)) || self.chance(0.5);
        out.push(Stmt::LetArray {
            name: name.clone(),
            mutable,
            init,
        });
        self.declare(
            &name,
            Kind::Array {
                len,
                inner,
                owner,
                local: true,
            },
            mutable,
        );
    }

    fn length(&mut self) -> Len {
        let named: Vec<String> = self
            .consts
            .iter()
            .filter(|c| c.starts_with('N'))
            .cloned()
            .collect();
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

    fn label(&mut self) -> Option<String> {
        if self.chance(0.25) {
            Some(self.fresh("'l"))
        } else {
            None
        }
    }

    fn for_loop(&mut self, depth: usize, out: &mut Vec<Stmt>) {
        let label = self.label();
        self.push_scope();
        let frozen = self.frozen.len();
        let (pattern, iter) = self.iterable();
        self.loops.push(LoopCtx {
            label: label.clone(),
            value: false,
        });
        self.control += 1;
        let n = self.rng.random_range(1..4);
        let body = self.block(depth + 1, n);
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

    /// The pattern and iterable of a `for` loop; declares what the pattern binds.
    fn iterable(&mut self) -> (String, String) {
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
        let src = self.pick(&arrays);
        self.frozen.push(src.name.clone());
        let Kind::Array {
            len, inner, owner, ..
        } = src.kind.clone()
        else {
            unreachable!()
        };
        let idx_hi = match &len {
            ALen::Fixed(n) => Hi::Max(n.value().saturating_sub(1)),
            ALen::Run => Hi::BelowN,
        };
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
                    local: false,
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
                    Owner::Array | Owner::Vec => (format!("&{}", src.name), true),
                    Owner::Borrowed | Owner::Window => (src.name.clone(), true),
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
                let Kind::Array { inner: p_inner, .. } = partner.kind.clone() else {
                    unreachable!()
                };
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
                            local: false,
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
            5 | 6 if inner.is_none() && len == ALen::Run => {
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

    fn counter(&mut self, out: &mut Vec<Stmt>) -> (String, usize) {
        let k = self.fresh("w");
        let bound = self.rng.random_range(1..5);
        out.push(Stmt::LetInt {
            name: k.clone(),
            mutable: true,
            init: IExpr::Lit(0),
        });
        (k, bound)
    }

    fn declare_counter(&mut self, k: &str, bound: usize) {
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
    fn while_loop(&mut self, depth: usize, out: &mut Vec<Stmt>) {
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

    /// `let mut k = 0; [let r =] loop { k += 1; if k > B { break [e]; } … }`
    fn loop_loop(&mut self, depth: usize, out: &mut Vec<Stmt>) {
        let (k, bound) = self.counter(out);
        let value = if self.chance(0.4) {
            Some(self.fresh("r"))
        } else {
            None
        };
        let label = if value.is_none() { self.label() } else { None };
        self.push_scope();
        self.declare_counter(&k, bound);
        let exit_value = value.as_ref().map(|_| self.expr(2));
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
        body.extend(self.block(depth + 1, n));
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
}

/// Whether an array of kind `kind` has a length of the same kind as `len` (both fixed,
/// or both the run-time length): zipped arrays.
fn same_kind_of_length(kind: &Kind, len: &ALen) -> bool {
    matches!(
        (kind, len),
        (Kind::Array { len: ALen::Run, .. }, ALen::Run)
            | (
                Kind::Array {
                    len: ALen::Fixed(_),
                    ..
                },
                ALen::Fixed(_)
            )
    )
}

/// The smallest run-time length of a program's slices (so that `xs[1]` is in bounds).
pub const SLICE_MIN: usize = 2;

/// Parameter kinds of the function under test (and of helpers, fewer of them).
fn random_params(g: &mut Gen, count: usize, helper: bool) -> Vec<Param> {
    let mut params = Vec::new();
    for i in 0..count {
        let roll = g.rng.random_range(0..20);
        let kind = if roll < 8 || (helper && roll < 14) || i == 0 {
            ParamKind::Real(Shape::Scalar, Pass::Value)
        } else if roll < 11 {
            let n = g.length();
            let pass = if g.chance(0.5) {
                Pass::Value
            } else {
                Pass::Ref
            };
            ParamKind::Real(Shape::Array(n), pass)
        } else if roll < 12 && !helper {
            let n = g.length();
            let k = g.rng.random_range(1..4);
            let pass = if g.chance(0.5) {
                Pass::Value
            } else {
                Pass::Ref
            };
            ParamKind::Real(Shape::Nested(n, k), pass)
        } else if roll < 15 {
            let pass = if g.chance(0.7) || helper {
                Pass::Ref
            } else {
                Pass::VecRef
            };
            ParamKind::Real(Shape::Slice, pass)
        } else if roll < 16 && !helper {
            let k = g.rng.random_range(1..4);
            let pass = if g.chance(0.7) {
                Pass::Ref
            } else {
                Pass::VecRef
            };
            ParamKind::Real(Shape::Rows(k), pass)
        } else if roll < 18 {
            ParamKind::Int {
                lo: 0,
                hi: g.rng.random_range(1..5),
            }
        } else {
            ParamKind::Bool
        };
        let mutable = matches!(
            kind,
            ParamKind::Real(Shape::Scalar, _) | ParamKind::Real(Shape::Array(_), Pass::Value)
        ) && g.chance(0.15);
        let prefix = match &kind {
            ParamKind::Real(Shape::Scalar, _) => "x",
            ParamKind::Real(Shape::Array(_) | Shape::Nested(..), _) => "w",
            ParamKind::Real(..) => "xs",
            ParamKind::Int { .. } => "n",
            ParamKind::Bool => "flag",
        };
        params.push(Param {
            name: format!("{prefix}{i}"),
            kind,
            mutable,
        });
    }
    // A call passes integers and flags only along with an array or slice passed whole
    // (through the callee's pullback); a call of numbers alone goes through `_grad`,
    // which takes `f64`s only.
    if helper
        && !params
            .iter()
            .any(|p| matches!(p.kind, ParamKind::Real(Shape::Array(_) | Shape::Slice, _)))
    {
        for p in &mut params {
            if matches!(p.kind, ParamKind::Int { .. } | ParamKind::Bool) {
                p.kind = ParamKind::Real(Shape::Scalar, Pass::Value);
                p.name = p.name.replace("flag", "x").replace('n', "x");
            }
        }
    }
    params
}

fn declare_params(g: &mut Gen, params: &[Param]) {
    for p in params {
        let kind = match &p.kind {
            ParamKind::Real(Shape::Scalar, _) => Kind::Real { deref: false },
            ParamKind::Real(Shape::Array(n), pass) => Kind::Array {
                len: ALen::Fixed(n.clone()),
                inner: None,
                owner: if *pass == Pass::Value {
                    Owner::Array
                } else {
                    Owner::Borrowed
                },
                local: false,
            },
            ParamKind::Real(Shape::Nested(n, k), pass) => Kind::Array {
                len: ALen::Fixed(n.clone()),
                inner: Some(*k),
                owner: if *pass == Pass::Value {
                    Owner::Array
                } else {
                    Owner::Borrowed
                },
                local: false,
            },
            ParamKind::Real(Shape::Slice, _) => Kind::Array {
                len: ALen::Run,
                inner: None,
                owner: Owner::Borrowed,
                local: false,
            },
            ParamKind::Real(Shape::Rows(k), _) => Kind::Array {
                len: ALen::Run,
                inner: Some(*k),
                owner: Owner::Borrowed,
                local: false,
            },
            ParamKind::Int { hi, .. } => Kind::Int { hi: Hi::Max(*hi) },
            ParamKind::Bool => Kind::Bool,
        };
        g.declare(&p.name, kind, p.mutable);
    }
}

fn random_function(g: &mut Gen, name: &str, helper: bool) -> Function {
    let count = if helper {
        g.rng.random_range(1..4)
    } else {
        g.rng.random_range(1..6)
    };
    let params = random_params(g, count, helper);
    // Fresh names are numbered after the parameters' (`x0`, `w1`, …), so they never
    // collide.
    g.fresh = g.fresh.max(params.len());
    g.vars.clear();
    g.scopes.clear();
    g.loops.clear();
    g.control = 0;
    g.budget = if helper {
        g.rng.random_range(1..6)
    } else {
        g.rng.random_range(3..14)
    };
    declare_params(g, &params);
    let mut body = Vec::new();
    let n = g.rng.random_range(1..6);
    for _ in 0..n {
        if g.budget <= 0 {
            break;
        }
        g.stmt(0, &mut body);
    }
    // The result reads what the body computed: every number in scope, almost always
    // (parameters the body changed among them).
    let mut result = g.expr(2);
    let reals = g.reals();
    for v in reals.iter().take(6) {
        if g.chance(0.85) {
            let read = Expr::Var {
                name: v.name.clone(),
                deref: false,
            };
            let read = if g.chance(0.3) { g.bounded(read) } else { read };
            result = Expr::Bin(BinOp::Add, Box::new(result), Box::new(read));
        }
    }
    // wrt: all numbers (no attribute argument), or a non-empty subset in any order.
    let reals: Vec<usize> = (0..params.len())
        .filter(|&i| matches!(params[i].kind, ParamKind::Real(..)))
        .collect();
    let wrt = if !helper && g.chance(0.35) {
        let mut subset: Vec<usize> = reals.iter().copied().filter(|_| g.chance(0.6)).collect();
        if subset.is_empty() {
            subset.push(reals[0]);
        }
        // shuffle
        for i in (1..subset.len()).rev() {
            let j = g.rng.random_range(0..=i);
            subset.swap(i, j);
        }
        Some(subset)
    } else {
        None
    };
    Function {
        name: name.into(),
        params,
        wrt,
        body,
        result,
    }
}

/// The program numbered `index` of the stream seeded by `seed`: the same pair always
/// gives the same program.
pub fn program(seed: u64, index: u64) -> Program {
    let mut g = Gen {
        rng: StdRng::seed_from_u64(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        config: Config {
            value_ops_only: false,
        },
        vars: Vec::new(),
        scopes: Vec::new(),
        loops: Vec::new(),
        control: 0,
        fresh: 0,
        helpers: Vec::new(),
        consts: Vec::new(),
        tables: Vec::new(),
        budget: 0,
        in_closure: 0,
        in_index: 0,
        frozen: Vec::new(),
        hidden: Vec::new(),
    };
    let mut items = vec!["use std::f64::consts::PI;".to_string()];
    if g.chance(0.5) {
        let v = g.positive_literal();
        let Expr::Lit(text) = v else { unreachable!() };
        items.push(format!("const C0: f64 = {text};"));
        g.consts.push("C0".into());
    }
    if g.chance(0.4) {
        let n = g.rng.random_range(2..4);
        items.push(format!("const N_{n}: usize = {n};"));
        g.consts.push(format!("N_{n}"));
    }
    if g.chance(0.4) {
        let values: Vec<String> = (0..3)
            .map(|_| match g.literal() {
                Expr::Lit(t) => t,
                _ => unreachable!(),
            })
            .collect();
        items.push(format!("const W0: [f64; 3] = [{}];", values.join(", ")));
        g.tables.push(("W0".into(), 3));
    }
    // Module consts of type f64 are read as numbers; N_ consts are lengths.
    let module_consts = g.consts.clone();
    let mut helpers = Vec::new();
    let helper_count = if g.chance(0.3) {
        g.rng.random_range(1..3)
    } else {
        0
    };
    for h in 0..helper_count {
        let f = random_function(&mut g, &format!("h{h}"), true);
        g.helpers.push(Helper {
            name: f.name.clone(),
            params: f.params.iter().map(|p| p.kind.clone()).collect(),
        });
        helpers.push(f);
        g.consts = module_consts.clone();
    }
    let main = random_function(&mut g, "f", false);
    Program {
        items,
        helpers,
        main,
        slice_min: SLICE_MIN,
    }
}

/// A straight-line program of `lets` over `inputs` scalar parameters, with at least
/// `nodes` operations, using only what both dynamic engines have (for `Value` against
/// `Tape`): the statements and the final expression.
pub fn graph(seed: u64, inputs: usize, nodes: usize) -> (Vec<Stmt>, Expr) {
    let mut g = Gen {
        rng: StdRng::seed_from_u64(seed),
        config: Config {
            value_ops_only: true,
        },
        vars: Vec::new(),
        scopes: Vec::new(),
        loops: Vec::new(),
        control: 0,
        fresh: 0,
        helpers: Vec::new(),
        consts: Vec::new(),
        tables: Vec::new(),
        budget: 0,
        in_closure: 0,
        in_index: 0,
        frozen: Vec::new(),
        hidden: Vec::new(),
    };
    for i in 0..inputs {
        g.declare(&format!("x{i}"), Kind::Real { deref: false }, false);
    }
    let mut stmts = Vec::new();
    let mut count = 0;
    while count < nodes {
        let e = g.expr(2);
        // Half the values squashed, so that a long chain neither overflows nor vanishes.
        let e = if g.chance(0.5) { g.bounded(e) } else { e };
        count += size(&e);
        let name = format!("v{}", stmts.len());
        stmts.push(Stmt::Let {
            name: name.clone(),
            mutable: false,
            annotated: false,
            init: e,
        });
        g.declare(&name, Kind::Real { deref: false }, false);
        // Keep a window of recent values in reach, and the inputs.
        if g.vars.len() > inputs + 64 {
            let drop = g.rng.random_range(inputs..g.vars.len() - 1);
            g.vars.remove(drop);
        }
    }
    let reals = g.reals();
    let mut result = Expr::Var {
        name: reals[0].name.clone(),
        deref: false,
    };
    for v in reals.iter().skip(1).take(16) {
        result = Expr::Bin(
            BinOp::Add,
            Box::new(result),
            Box::new(Expr::Var {
                name: v.name.clone(),
                deref: false,
            }),
        );
    }
    (stmts, result)
}

/// The nodes `e` adds to a graph on a dynamic engine: one per operation and constant.
pub fn size(e: &Expr) -> usize {
    match e {
        Expr::Var { .. } | Expr::Index(..) => 0,
        Expr::Lit(_) | Expr::Path(_) | Expr::Table(..) => 1,
        Expr::Bin(_, a, b) => 1 + size(a) + size(b),
        Expr::Neg(a) | Expr::Powi(a, _) | Expr::Stop(a) => 1 + size(a),
        Expr::Op { args, .. } => 1 + args.iter().map(size).sum::<usize>(),
        _ => 1,
    }
}
