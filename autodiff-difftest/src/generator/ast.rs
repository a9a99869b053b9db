//! The programs the generator writes: a small AST of the subset of Rust that `#[grad]`
//! documents, rendered either as the plain `f64` function or as the same computation on a
//! `Tape` (see [`Target`]).

use std::fmt::Write as _;

/// What a program is rendered as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The plain `f64` function, as a user writes it (and marks it `#[grad]`).
    Grad,
    /// The same computation on a `Tape`: every number a `Var<'t>`, constants as nodes
    /// (`t.c(2.0)`), comparisons and non-smooth operations through the context `t`, which
    /// records how close the point is to a kink or a branch boundary.
    Tape,
}

/// The length of a fixed-size array: a literal, or a `const` item of the module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Len {
    /// `[f64; 3]`.
    Lit(usize),
    /// `[f64; N0]`, with `const N0: usize = 3;`.
    Named(String, usize),
    /// `[f64; N]` in a function generic over `const N: usize`: at least one element.
    Generic(String),
}

impl Len {
    /// The number of elements.
    pub fn value(&self) -> usize {
        match self {
            Len::Lit(n) | Len::Named(_, n) => *n,
            Len::Generic(_) => 1,
        }
    }

    /// As written in a type or an expression.
    pub fn render(&self) -> String {
        match self {
            Len::Lit(n) => n.to_string(),
            Len::Named(name, _) | Len::Generic(name) => name.clone(),
        }
    }
}

/// The shape of a number-valued parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `f64`.
    Scalar,
    /// `[f64; N]`.
    Array(Len),
    /// `[[f64; K]; N]`: `N` rows of `K`.
    Nested(Len, usize),
    /// `[f64]` (of the program's run-time length).
    Slice,
    /// `[[f64; K]]` (of the program's run-time length).
    Rows(usize),
}

/// How a parameter is passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// By value (`[f64; 3]`).
    Value,
    /// By reference (`&[f64; 3]`, `&[f64]`).
    Ref,
    /// A slice as `&Vec<…>`.
    VecRef,
}

/// The type of a parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// Numbers (differentiable).
    Real(Shape, Pass),
    /// A `usize` constant, whose values the test draws from `lo..=hi`.
    Int {
        /// The smallest value passed.
        lo: usize,
        /// The largest value passed.
        hi: usize,
    },
    /// A `bool` constant.
    Bool,
    /// `m: &S`, the program's struct (deriving `Differentiable`).
    Struct,
    /// `ms: &[S]` (or `&Vec<S>`): a collection of the program's struct, of the program's
    /// run-time length.
    Structs(Pass),
}

/// A parameter of a generated function.
#[derive(Clone, Debug)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// Its type.
    pub kind: ParamKind,
    /// Declared `mut` (and then assigned in the body).
    pub mutable: bool,
}

/// An integer expression (`usize`): indices, loop bounds, counters.
#[derive(Clone, Debug)]
pub enum IExpr {
    /// `3`.
    Lit(usize),
    /// An integer variable or parameter.
    Var(String),
    /// `xs.len()`.
    Len(String),
    /// A named `const` (`N0`).
    Const(String),
    /// `(a + b)`.
    Add(Box<IExpr>, Box<IExpr>),
    /// `(a * b)`.
    Mul(Box<IExpr>, Box<IExpr>),
    /// `(a % b)`: how any integer becomes an index that is in bounds.
    Rem(Box<IExpr>, Box<IExpr>),
    /// `(stop_gradient(e).sigmoid() * 2.99) as usize`: an index computed from a number,
    /// below `n` (converting a differentiated number to an integer is an error, so the
    /// number is a constant, as data would be).
    FromReal(Box<Expr>, usize),
}

/// An integer power: a literal or an integer expression converted with `as i32`.
#[derive(Clone, Debug)]
pub enum Exponent {
    /// `x.powi(3)`.
    Lit(i32),
    /// `x.powi(k as i32)`.
    Int(IExpr),
}

/// A binary arithmetic operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`.
    Div,
}

impl BinOp {
    fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
        }
    }
}

/// How an operation of the table is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `x.tanh()`.
    Method,
    /// `f64::tanh(x)` (`F64Ext::relu(x)` for the extension methods).
    Path,
}

/// Operations whose derivative jumps (or is unbounded) somewhere: on a `Tape` they go
/// through the context, which records the distance of the point to that place.
pub const KINKS: &[&str] = &[
    "abs", "relu", "max", "min", "clamp", "floor", "ceil", "round", "trunc", "signum", "cbrt",
    "atan2", "hypot",
];

/// A number-valued expression.
#[derive(Clone, Debug)]
pub enum Expr {
    /// A float literal, as written (`0.5`, `2.0_f64`, `5e-1`).
    Lit(String),
    /// A constant path (`PI`, `std::f64::consts::E`, `f64::EPSILON`, `C0`).
    Path(String),
    /// A variable; `deref` for a binding of type `&f64` (rendered `*x`).
    Var {
        /// Its name.
        name: String,
        /// Whether it is a reference.
        deref: bool,
    },
    /// `w[i]`, `w[i][j]`.
    Index(String, Vec<IExpr>),
    /// `W0[i]`: an element of a `const` table.
    Table(String, IExpr),
    /// `(a + b)` …
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// `-a`.
    Neg(Box<Expr>),
    /// An operation of the table: the receiver first.
    Op {
        /// The method's name (`tanh`, `max`, `mul_add`).
        name: &'static str,
        /// The receiver, then the other operands.
        args: Vec<Expr>,
        /// How it is written.
        form: Form,
    },
    /// `x.powi(n)`.
    Powi(Box<Expr>, Exponent),
    /// `if c { a } else { b }` as a value.
    If(Box<Cond>, Box<Expr>, Box<Expr>),
    /// `match` as a value.
    Match(Box<Match<Expr>>),
    /// `{ let a = …; a * 2.0 }`.
    Block(Vec<Stmt>, Box<Expr>),
    /// A call of a generated function.
    Call(String, Vec<Arg>),
    /// `stop_gradient(e)`.
    Stop(Box<Expr>),
    /// `(i as f64)`.
    FromInt(IExpr),
    /// An iterator reduction.
    Reduce(Box<Reduce>),
}

/// An argument of a call.
#[derive(Clone, Debug)]
pub enum Arg {
    /// A number.
    Real(Expr),
    /// An array, slice or row passed whole, as written (`&w`, `w`, `&m[1]`, `xs`).
    Whole(String),
    /// An integer.
    Int(IExpr),
}

/// An iterator reduction: `src.iter()…map(|pat| body).sum::<f64>()` and its relatives.
#[derive(Clone, Debug)]
pub struct Reduce {
    /// The chain up to the closure, as written (`xs.iter().zip(ys.iter())`).
    pub chain: String,
    /// An optional `.filter(|pat| cond)` before the map (its pattern and condition).
    pub filter: Option<(String, Cond)>,
    /// The closure's pattern (`x`, `(i, x)`, `(x, y)`).
    pub pattern: String,
    /// How the mapped values are combined.
    pub kind: ReduceKind,
    /// The closure's body.
    pub body: Expr,
}

/// How a reduction combines.
#[derive(Clone, Debug)]
pub enum ReduceKind {
    /// `.map(|p| body).sum::<f64>()`.
    Sum,
    /// `.map(|p| body).product::<f64>()`.
    Product,
    /// `.fold(init, |acc, p| body)`.
    Fold(Expr, String),
}

/// A condition.
#[derive(Clone, Debug)]
pub enum Cond {
    /// A comparison of numbers (`<`, `>`, `<=`, `>=`): a branch boundary.
    Cmp(&'static str, Expr, Expr),
    /// A comparison of integers.
    ICmp(&'static str, IExpr, IExpr),
    /// A `bool` parameter.
    Flag(String),
    /// `!c`.
    Not(Box<Cond>),
    /// `a && b`.
    And(Box<Cond>, Box<Cond>),
    /// `a || b`.
    Or(Box<Cond>, Box<Cond>),
}

/// A `match` whose arms are `T`s (expressions or statement lists).
#[derive(Clone, Debug)]
pub struct Match<T> {
    /// What is matched.
    pub scrutinee: Scrutinee,
    /// The arms: pattern, optional guard, body.
    pub arms: Vec<(String, Option<Cond>, T)>,
}

/// What a `match` looks at.
#[derive(Clone, Debug)]
pub enum Scrutinee {
    /// An integer (patterns: literals, ranges, `|`, `_`).
    Int(IExpr),
    /// A `bool` parameter.
    Flag(String),
    /// A number (patterns: bindings with guards).
    Real(Expr),
}

/// Where an assignment writes.
#[derive(Clone, Debug)]
pub enum Place {
    /// A variable.
    Var(String),
    /// An element `h[i]` or `h[i][j]`.
    Index(String, Vec<IExpr>),
}

/// The initial value of a local array.
#[derive(Clone, Debug)]
pub enum ArrayInit {
    /// `[0.0; N]`.
    Zeros(Len),
    /// `[[0.0; K]; N]`.
    Zeros2(Len, usize),
    /// `[a, b, c]`.
    Literal(Vec<Expr>),
    /// `vec![0.0; xs.len()]`.
    VecZeros(String),
    /// `xs.iter().map(|&x| e).collect::<Vec<_>>()`: a vector of `xs.len()` elements.
    Collect {
        /// The slice mapped.
        of: String,
        /// The closure's parameter.
        var: String,
        /// The closure's value.
        value: Expr,
    },
}

/// A statement.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `let [mut] x[: f64] = e;`
    Let {
        /// The variable.
        name: String,
        /// `let mut`.
        mutable: bool,
        /// Written with `: f64`.
        annotated: bool,
        /// Its value.
        init: Expr,
    },
    /// `let x;` (`let x: f64;`), assigned later.
    Deferred {
        /// The variable.
        name: String,
        /// Written with `: f64`.
        annotated: bool,
    },
    /// `let [mut] h = [0.0; N];` and the other array forms.
    LetArray {
        /// The variable.
        name: String,
        /// `let mut`.
        mutable: bool,
        /// Its value.
        init: ArrayInit,
    },
    /// `let [mut] k = 0usize;`
    LetInt {
        /// The variable.
        name: String,
        /// `let mut`.
        mutable: bool,
        /// Its value.
        init: IExpr,
    },
    /// `let [a, _, c] = w;`
    Destructure(Vec<Option<String>>, String),
    /// `let [a, _, c] = [e1, e2, e3];`
    DestructureLiteral(Vec<Option<String>>, Vec<Expr>),
    /// `place op= e;` (`op` is `""` for plain `=`).
    Assign(Place, &'static str, Expr),
    /// `k += 1;`
    Increment(String, usize),
    /// `[label:] for pat in iter { … }`: the pattern and iterable hold no numbers, so
    /// they are written the same for both targets.
    For {
        /// `'outer`, if labelled.
        label: Option<String>,
        /// The pattern.
        pattern: String,
        /// The iterable.
        iter: String,
        /// The body.
        body: Vec<Stmt>,
    },
    /// `while c { … }`.
    While(Cond, Vec<Stmt>),
    /// `[label:] loop { … }`, or `let x = loop { … };` when `value` names `x`.
    Loop {
        /// `'outer`, if labelled.
        label: Option<String>,
        /// The variable bound to the `break` value, if the loop is a value.
        value: Option<String>,
        /// The body.
        body: Vec<Stmt>,
    },
    /// `if … else if … else …`.
    If(Vec<(Cond, Vec<Stmt>)>, Option<Vec<Stmt>>),
    /// `match` as a statement.
    Match(Match<Vec<Stmt>>),
    /// `break ['label] [value];`
    Break(Option<String>, Option<Expr>),
    /// `continue ['label];`
    Continue(Option<String>),
    /// `return e;`
    Return(Expr),
    /// `{ … }`.
    Block(Vec<Stmt>),
    /// An item or a `use`, written as is (`const K: f64 = 1.5;`).
    Item(String),
    /// `v.push(e);`
    Push(String, Expr),
    /// `let mut v = Vec::with_capacity(n);` (`Vec::new()` without a capacity).
    LetVec(String, Option<IExpr>),
    /// `let (a, mut b, _) = (e1, e2, e3);` or `let (a, b) = h(..);`: the names (`None`
    /// for `_`, with `mut`), and the values.
    LetTuple(Vec<Option<(String, bool)>>, TupleInit),
}

/// The value a tuple `let` takes apart.
#[derive(Clone, Debug)]
pub enum TupleInit {
    /// `(e1, e2)`.
    Exprs(Vec<Expr>),
    /// A call of a helper returning a tuple: its name and arguments.
    Call(String, Vec<Arg>),
}

/// A generated function.
#[derive(Clone, Debug)]
pub struct Function {
    /// Its name (the `Tape` rendering appends `_tape`).
    pub name: String,
    /// Its parameters.
    pub params: Vec<Param>,
    /// `#[grad(wrt(…))]`: indices into `params`, in the order named.
    pub wrt: Option<Vec<usize>>,
    /// The statements.
    pub body: Vec<Stmt>,
    /// The final expression.
    pub result: Expr,
    /// Further results: the function returns the tuple `(result, outputs…)`.
    pub outputs: Vec<Expr>,
    /// Const generic parameters (`N` of `<const N: usize>`).
    pub generics: Vec<String>,
    /// A method of the program's struct, taking `&self` first.
    pub method: bool,
    /// `#[grad(reassociate)]`: the gradient may add the sums its loops accumulate in
    /// another order (its value may differ from the function's in the last bits).
    pub reassociate: bool,
    /// `#[grad(hvp)]` too: the program's main function and its helpers, when the program
    /// has no methods, struct or tuple output (see [`Program::second_order_applies`]).
    pub second_order: bool,
}

impl Function {
    /// The parameters whose partials `_grad` returns, in its order.
    pub fn partials(&self) -> Vec<usize> {
        match &self.wrt {
            Some(wrt) => wrt.clone(),
            None => (0..self.params.len())
                .filter(|&i| {
                    matches!(
                        self.params[i].kind,
                        ParamKind::Real(..) | ParamKind::Struct | ParamKind::Structs(_)
                    )
                })
                .collect(),
        }
    }
}

/// A generated program: module items, helper functions it calls, and the function under
/// test.
#[derive(Clone, Debug)]
pub struct Program {
    /// `const` items of the module.
    pub items: Vec<String>,
    /// Functions called by `main` (each may call the ones before it).
    pub helpers: Vec<Function>,
    /// The function under test.
    pub main: Function,
    /// The smallest run-time length of the program's slices.
    pub slice_min: usize,
    /// The struct its functions take, if any.
    pub structure: Option<StructDef>,
    /// Methods of the struct (in a `#[grad] impl` block).
    pub methods: Vec<Function>,
    /// Written in `f32` throughout (the `Tape` twin computes in `f64`).
    pub single: bool,
    /// Generic over its float type, `fn f<T: Float + …>(x: T) -> T` (called in `f64`),
    /// its constants written as generic code writes them (`T::from(0.5).unwrap()`,
    /// `T::PI()`); helpers too.
    pub generic: bool,
    /// A long program (`random::long_program`): its `Tape` twin passes over the kinks and
    /// branch boundaries that no input moves (see `Ctx::moving_only`).
    pub long: bool,
}

/// The type of a field of the program's struct.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Field {
    /// `f64`.
    Scalar,
    /// `[f64; N]`.
    Array(usize),
    /// `[[f64; K]; N]`: `N` rows of `K`.
    Nested(usize, usize),
    /// `Vec<f64>` of the program's run-time length.
    Vec,
    /// A `usize` constant in `0..=hi`.
    Int(usize),
    /// A `bool` constant.
    Bool,
}

/// The program's struct, `S`, deriving `Differentiable`; its `Tape` twin is `STape<'t>`.
#[derive(Clone, Debug)]
pub struct StructDef {
    /// The fields, in order.
    pub fields: Vec<(String, Field)>,
}

/// The name of the generated struct.
pub const STRUCT: &str = "S";

impl StructDef {
    /// How many numbers it holds outside its `Vec` fields, and in them per element of the
    /// run-time length.
    pub fn counts(&self) -> (usize, usize) {
        let mut fixed = 0;
        let mut run = 0;
        for (_, f) in &self.fields {
            match f {
                Field::Scalar => fixed += 1,
                Field::Array(n) => fixed += n,
                Field::Nested(n, k) => fixed += n * k,
                Field::Vec => run += 1,
                Field::Int(_) | Field::Bool => {}
            }
        }
        (fixed, run)
    }
}

/// Writes code with indentation.
pub(crate) struct Writer {
    pub(crate) out: String,
    indent: usize,
    target: Target,
    /// Every float literal written with its suffix (in an expression of literals only,
    /// whose type nothing else fixes).
    typed: bool,
    /// The program is in `f32`: the `Tape` twin widens its constants (`t.c(PI as f64)`,
    /// `t.c(0.3_f32 as f64)`), and the `f32` rendering is the `f64` one with every `f64`
    /// spelled `f32`.
    single: bool,
    /// The program is generic over its float type (see [`Program::generic`]): the `#[grad]`
    /// rendering writes `T` for `f64`.
    generic: bool,
}

/// Whether `e` is a constant: made of literals, constant paths, integers and
/// `stop_gradient`s, so no perturbation of the inputs can move it across a kink (the
/// `Tape` twin records no distance for it).
pub fn is_constant(e: &Expr) -> bool {
    match e {
        Expr::Lit(_) | Expr::Path(_) | Expr::Table(..) | Expr::FromInt(_) | Expr::Stop(_) => true,
        Expr::Bin(_, a, b) => is_constant(a) && is_constant(b),
        Expr::Neg(a) | Expr::Powi(a, _) => is_constant(a),
        Expr::Op { args, .. } => args.iter().all(is_constant),
        _ => false,
    }
}

/// Whether `e` is made of float literals only (so Rust cannot infer its type).
fn literals_only(e: &Expr) -> bool {
    match e {
        Expr::Lit(_) => true,
        Expr::Bin(_, a, b) => literals_only(a) && literals_only(b),
        Expr::Neg(a) | Expr::Powi(a, _) | Expr::Stop(a) => literals_only(a),
        Expr::Op { args, .. } => literals_only(&args[0]),
        Expr::If(_, a, b) => literals_only(a) && literals_only(b),
        _ => false,
    }
}

fn real_type(target: Target) -> &'static str {
    match target {
        Target::Grad => "f64",
        Target::Tape => "Var<'t>",
    }
}

/// The type of a parameter as written for `target`.
pub fn param_type(kind: &ParamKind, target: Target) -> String {
    let e = real_type(target);
    match kind {
        ParamKind::Int { .. } => "usize".into(),
        ParamKind::Bool => "bool".into(),
        ParamKind::Struct => match target {
            Target::Grad => format!("&{STRUCT}"),
            Target::Tape => format!("&{STRUCT}Tape<'t>"),
        },
        ParamKind::Structs(pass) => {
            let element = match target {
                Target::Grad => STRUCT.to_string(),
                Target::Tape => format!("{STRUCT}Tape<'t>"),
            };
            match pass {
                Pass::VecRef => format!("&Vec<{element}>"),
                _ => format!("&[{element}]"),
            }
        }
        ParamKind::Real(shape, pass) => {
            let amp = if *pass == Pass::Value { "" } else { "&" };
            match shape {
                Shape::Scalar => e.into(),
                Shape::Array(n) => format!("{amp}[{e}; {}]", n.render()),
                Shape::Nested(n, k) => format!("{amp}[[{e}; {k}]; {}]", n.render()),
                Shape::Slice if *pass == Pass::VecRef => format!("&Vec<{e}>"),
                Shape::Slice => format!("&[{e}]"),
                Shape::Rows(k) if *pass == Pass::VecRef => format!("&Vec<[{e}; {k}]>"),
                Shape::Rows(k) => format!("&[[{e}; {k}]]"),
            }
        }
    }
}

impl Writer {
    pub(crate) fn new(target: Target, single: bool) -> Writer {
        Writer {
            out: String::new(),
            indent: 0,
            target,
            typed: false,
            single,
            generic: false,
        }
    }

    /// A writer of the same program, for a nested block.
    fn nested(&self) -> Writer {
        Writer {
            generic: self.generic,
            ..Writer::new(self.target, self.single)
        }
    }

    /// Whether constants are written generically (the `#[grad]` rendering of a generic
    /// program).
    fn generic_constants(&self) -> bool {
        self.generic && !self.tape()
    }

    fn line(&mut self, text: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn tape(&self) -> bool {
        self.target == Target::Tape
    }

    /// An expression in a place where nothing else fixes its type (a `let`, an array
    /// literal, a branch's value): a float literal there gets the `_f64` suffix, as a
    /// user writes it to call a method on it later.
    fn root(&self, e: &Expr) -> String {
        if !self.tape() && literals_only(e) {
            let typed = Writer {
                typed: true,
                ..self.nested()
            };
            return typed.expr(e);
        }
        self.expr(e)
    }

    /// The receiver of a method call: made of literals only, it is typed
    /// (`(-1.5_f64).tanh()`).
    fn receiver(&self, e: &Expr) -> String {
        self.root(e)
    }

    /// A number expression.
    pub(crate) fn expr(&self, e: &Expr) -> String {
        match e {
            Expr::Lit(text) if self.generic_constants() => {
                // `T::from(-1.17).unwrap()`: an `f64` literal, converted.
                let bare = text.trim_end_matches("_f64");
                format!("T::from({bare}).unwrap()")
            }
            Expr::Lit(text) => {
                if self.tape() && self.single {
                    let text = if text.contains("f64") {
                        text.replace("f64", "f32")
                    } else {
                        format!("{text}_f32")
                    };
                    format!("t.c({text} as f64)")
                } else if self.tape() {
                    format!("t.c({text})")
                } else if self.typed && !text.contains("f64") {
                    format!("({text}_f64)")
                } else if text.starts_with('-') {
                    format!("({text})")
                } else {
                    text.clone()
                }
            }
            Expr::Path(text) if self.generic_constants() => generic_constant(text),
            Expr::Path(text) => {
                if self.tape() && self.single {
                    format!("t.c({} as f64)", text.replace("f64", "f32"))
                } else if self.tape() {
                    format!("t.c({text})")
                } else {
                    text.clone()
                }
            }
            Expr::Var { name, deref } => {
                if *deref {
                    format!("(*{name})")
                } else {
                    name.clone()
                }
            }
            Expr::Index(name, indices) => {
                let mut s = name.clone();
                for i in indices {
                    let _ = write!(s, "[{}]", self.iexpr(i));
                }
                s
            }
            Expr::Table(name, i) => {
                let s = format!("{name}[{}]", self.iexpr(i));
                if self.generic_constants() {
                    format!("T::from({s}).unwrap()")
                } else if self.tape() {
                    format!("t.c({s} as f64)")
                } else {
                    s
                }
            }
            Expr::Bin(op, a, b) => {
                format!("({} {} {})", self.expr(a), op.symbol(), self.expr(b))
            }
            Expr::Neg(a) => format!("(-{})", self.expr(a)),
            Expr::Op { name, args, form } => self.op(name, args, *form),
            Expr::Powi(base, n) => {
                let n = match n {
                    Exponent::Lit(n) => n.to_string(),
                    Exponent::Int(i) => format!("({} as i32)", self.iexpr(i)),
                };
                format!("{}.powi({n})", self.receiver(base))
            }
            Expr::If(c, a, b) => format!(
                "(if {} {{ {} }} else {{ {} }})",
                self.cond(c),
                self.root(a),
                self.root(b)
            ),
            Expr::Match(m) => {
                let mut s = format!("(match {} {{ ", self.scrutinee(&m.scrutinee));
                for (pattern, guard, body) in &m.arms {
                    let guard = guard
                        .as_ref()
                        .map(|g| format!(" if {}", self.cond(g)))
                        .unwrap_or_default();
                    let _ = write!(s, "{pattern}{guard} => {}, ", self.root(body));
                }
                s.push_str("})");
                s
            }
            Expr::Block(stmts, result) => {
                let mut inner = self.nested();
                for stmt in stmts {
                    inner.stmt(stmt);
                }
                format!(
                    "{{ {} {} }}",
                    inner.out.replace('\n', " "),
                    self.root(result)
                )
            }
            Expr::Call(name, args) => self.call(name, args),
            Expr::Stop(a) => {
                if self.tape() {
                    format!("t.c({}.value())", self.expr(a))
                } else {
                    format!("stop_gradient({})", self.expr(a))
                }
            }
            Expr::FromInt(i) => {
                if self.tape() {
                    format!("t.c({} as f64)", self.iexpr(i))
                } else if self.generic {
                    format!("T::from({}).unwrap()", self.iexpr(i))
                } else {
                    format!("({} as f64)", self.iexpr(i))
                }
            }
            Expr::Reduce(r) => self.reduce(r),
        }
    }

    fn call(&self, name: &str, args: &[Arg]) -> String {
        let mut parts = Vec::new();
        if self.tape() {
            parts.push("t".to_string());
        }
        for a in args {
            parts.push(match a {
                Arg::Real(e) => self.expr(e),
                Arg::Whole(text) => text.clone(),
                Arg::Int(i) => self.iexpr(i),
            });
        }
        let suffix = if self.tape() { "_tape" } else { "" };
        format!("{name}{suffix}({})", parts.join(", "))
    }

    fn op(&self, name: &str, args: &[Expr], form: Form) -> String {
        let mut rendered: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
        if form == Form::Method {
            rendered[0] = self.receiver(&args[0]);
        } else {
            rendered[0] = self.root(&args[0]);
        }
        if self.tape() {
            if KINKS.contains(&name) && !args.iter().all(is_constant) {
                return format!("t.{name}({})", rendered.join(", "));
            }
            return format!("{}.{name}({})", rendered[0], rendered[1..].join(", "));
        }
        match form {
            Form::Method => format!("{}.{name}({})", rendered[0], rendered[1..].join(", ")),
            Form::Path => {
                let owner = if name == "relu" || name == "sigmoid" {
                    "F64Ext"
                } else {
                    "f64"
                };
                format!("{owner}::{name}({})", rendered.join(", "))
            }
        }
    }

    fn reduce(&self, r: &Reduce) -> String {
        let mut s = r.chain.clone();
        if let Some((pattern, cond)) = &r.filter {
            let _ = write!(s, ".filter(|{pattern}| {})", self.cond(cond));
        }
        let body = self.expr(&r.body);
        match &r.kind {
            ReduceKind::Sum if self.tape() => {
                let _ = write!(
                    s,
                    ".map(|{}| {body}).fold(t.c(-0.0), |a, b| a + b)",
                    r.pattern
                );
            }
            ReduceKind::Product if self.tape() => {
                let _ = write!(
                    s,
                    ".map(|{}| {body}).fold(t.c(1.0), |a, b| a * b)",
                    r.pattern
                );
            }
            ReduceKind::Sum => {
                let _ = write!(s, ".map(|{}| {body}).sum::<f64>()", r.pattern);
            }
            ReduceKind::Product => {
                let _ = write!(s, ".map(|{}| {body}).product::<f64>()", r.pattern);
            }
            ReduceKind::Fold(init, acc) => {
                let _ = write!(
                    s,
                    ".fold({}, |{acc}, {}| {body})",
                    self.root(init),
                    r.pattern
                );
            }
        }
        format!("({s})")
    }

    pub(crate) fn iexpr(&self, i: &IExpr) -> String {
        match i {
            IExpr::Lit(n) => n.to_string(),
            IExpr::Var(name) | IExpr::Const(name) => name.clone(),
            IExpr::Len(name) => format!("{name}.len()"),
            IExpr::Add(a, b) => format!("({} + {})", self.iexpr(a), self.iexpr(b)),
            IExpr::Mul(a, b) => format!("({} * {})", self.iexpr(a), self.iexpr(b)),
            IExpr::Rem(a, b) => format!("({} % {})", self.iexpr(a), self.iexpr(b)),
            IExpr::FromReal(number, n) => {
                let e = self.expr(number);
                let scale = format!("{}.99", n - 1);
                if self.tape() && is_constant(number) {
                    format!("({e}.sigmoid() * {scale}).value() as usize")
                } else if self.tape() {
                    format!("t.index({e}.sigmoid() * {scale})")
                } else if self.generic {
                    // A `T` has no `as usize`; `#[grad]` reads `to_usize().unwrap()` as it.
                    format!(
                        "(stop_gradient({e}).sigmoid() * T::from({scale}).unwrap()).to_usize().unwrap()"
                    )
                } else {
                    format!("(stop_gradient({e}).sigmoid() * {scale}) as usize")
                }
            }
        }
    }

    fn cond(&self, c: &Cond) -> String {
        match c {
            Cond::Cmp(op, a, b) => {
                if self.tape() && is_constant(a) && is_constant(b) {
                    format!("{}.value() {op} {}.value()", self.expr(a), self.expr(b))
                } else if self.tape() {
                    let method = match *op {
                        "<" => "lt",
                        ">" => "gt",
                        "<=" => "le",
                        _ => "ge",
                    };
                    format!("t.{method}({}, {})", self.expr(a), self.expr(b))
                } else {
                    format!("{} {op} {}", self.expr(a), self.expr(b))
                }
            }
            Cond::ICmp(op, a, b) => format!("{} {op} {}", self.iexpr(a), self.iexpr(b)),
            Cond::Flag(name) => name.clone(),
            Cond::Not(c) => format!("!({})", self.cond(c)),
            Cond::And(a, b) => format!("({} && {})", self.cond(a), self.cond(b)),
            Cond::Or(a, b) => format!("({} || {})", self.cond(a), self.cond(b)),
        }
    }

    fn scrutinee(&self, s: &Scrutinee) -> String {
        match s {
            Scrutinee::Int(i) => self.iexpr(i),
            Scrutinee::Flag(name) => name.clone(),
            Scrutinee::Real(e) => self.root(e),
        }
    }

    fn block(&mut self, head: &str, body: &[Stmt], tail: &str) {
        self.line(&format!("{head} {{"));
        self.indent += 1;
        for stmt in body {
            self.stmt(stmt);
        }
        self.indent -= 1;
        self.line(&format!("}}{tail}"));
    }

    pub(crate) fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let {
                name,
                mutable,
                annotated,
                init,
            } => {
                let m = if *mutable { "mut " } else { "" };
                let ty = if *annotated {
                    format!(": {}", real_type(self.target))
                } else {
                    String::new()
                };
                let init = self.root(init);
                if self.tape() {
                    // The context records the largest value a variable takes.
                    self.line(&format!("let {m}{name}{ty} = t.v({init});"));
                } else {
                    self.line(&format!("let {m}{name}{ty} = {init};"));
                }
            }
            Stmt::Deferred { name, annotated } => {
                let ty = if *annotated {
                    format!(": {}", real_type(self.target))
                } else {
                    String::new()
                };
                self.line(&format!("let {name}{ty};"));
            }
            Stmt::LetArray {
                name,
                mutable,
                init,
            } => {
                let m = if *mutable { "mut " } else { "" };
                let zero = if self.tape() {
                    "t.c(0.0)"
                } else if self.generic {
                    "T::zero()"
                } else {
                    "0.0_f64"
                };
                let init = match init {
                    ArrayInit::Zeros(n) => format!("[{zero}; {}]", n.render()),
                    ArrayInit::Zeros2(n, k) => format!("[[{zero}; {k}]; {}]", n.render()),
                    ArrayInit::Literal(items) => format!(
                        "[{}]",
                        items
                            .iter()
                            .map(|e| self.root(e))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    ArrayInit::VecZeros(of) => format!("vec![{zero}; {of}.len()]"),
                    ArrayInit::Collect { of, var, value } => format!(
                        "{of}.iter().map(|&{var}| {}).collect::<Vec<_>>()",
                        self.root(value)
                    ),
                };
                self.line(&format!("let {m}{name} = {init};"));
            }
            Stmt::LetInt {
                name,
                mutable,
                init,
            } => {
                let m = if *mutable { "mut " } else { "" };
                let init = self.iexpr(init);
                self.line(&format!("let {m}{name}: usize = {init};"));
            }
            Stmt::Destructure(names, array) => {
                let names: Vec<&str> = names.iter().map(|n| n.as_deref().unwrap_or("_")).collect();
                self.line(&format!("let [{}] = {array};", names.join(", ")));
            }
            Stmt::DestructureLiteral(names, values) => {
                let names: Vec<&str> = names.iter().map(|n| n.as_deref().unwrap_or("_")).collect();
                let values: Vec<String> = values.iter().map(|e| self.root(e)).collect();
                self.line(&format!(
                    "let [{}] = [{}];",
                    names.join(", "),
                    values.join(", ")
                ));
            }
            Stmt::Assign(place, op, value) => {
                let place = match place {
                    Place::Var(name) => name.clone(),
                    Place::Index(name, indices) => {
                        let mut s = name.clone();
                        for i in indices {
                            let _ = write!(s, "[{}]", self.iexpr(i));
                        }
                        s
                    }
                };
                let value = self.root(value);
                if self.tape() && op.is_empty() {
                    self.line(&format!("{place} = t.v({value});"));
                } else if self.tape() {
                    // `x += e` is `x = x + e` on a tape too; written so, the context sees
                    // the new value.
                    self.line(&format!("{place} = t.v({place} {op} {value});"));
                } else {
                    self.line(&format!("{place} {op}= {value};"));
                }
            }
            Stmt::Increment(name, by) => self.line(&format!("{name} += {by};")),
            Stmt::For {
                label,
                pattern,
                iter,
                body,
            } => {
                let label = label.as_ref().map(|l| format!("{l}: ")).unwrap_or_default();
                self.block(&format!("{label}for {pattern} in {iter}"), body, "");
            }
            Stmt::While(cond, body) => {
                let head = format!("while {}", self.cond(cond));
                self.block(&head, body, "");
            }
            Stmt::Loop { label, value, body } => match value {
                Some(name) => self.block(&format!("let {name} = loop"), body, ";"),
                None => {
                    let label = label.as_ref().map(|l| format!("{l}: ")).unwrap_or_default();
                    self.block(&format!("{label}loop"), body, "");
                }
            },
            Stmt::If(branches, otherwise) => {
                for (i, (cond, body)) in branches.iter().enumerate() {
                    let head = if i == 0 {
                        format!("if {}", self.cond(cond))
                    } else {
                        format!("}} else if {}", self.cond(cond))
                    };
                    if i == 0 {
                        self.line(&format!("{head} {{"));
                    } else {
                        self.indent_line_raw(&format!("{head} {{"));
                    }
                    self.indent += 1;
                    for stmt in body {
                        self.stmt(stmt);
                    }
                    self.indent -= 1;
                }
                if let Some(body) = otherwise {
                    self.indent_line_raw("} else {");
                    self.indent += 1;
                    for stmt in body {
                        self.stmt(stmt);
                    }
                    self.indent -= 1;
                }
                self.line("}");
            }
            Stmt::Match(m) => {
                let head = format!("match {}", self.scrutinee(&m.scrutinee));
                self.line(&format!("{head} {{"));
                self.indent += 1;
                for (pattern, guard, body) in &m.arms {
                    let guard = guard
                        .as_ref()
                        .map(|g| format!(" if {}", self.cond(g)))
                        .unwrap_or_default();
                    self.block(&format!("{pattern}{guard} =>"), body, "");
                }
                self.indent -= 1;
                self.line("}");
            }
            Stmt::Break(label, value) => {
                let mut s = "break".to_string();
                if let Some(l) = label {
                    s.push(' ');
                    s.push_str(l);
                }
                if let Some(v) = value {
                    s.push(' ');
                    s.push_str(&self.root(v));
                }
                s.push(';');
                self.line(&s);
            }
            Stmt::Continue(label) => match label {
                Some(l) => self.line(&format!("continue {l};")),
                None => self.line("continue;"),
            },
            Stmt::Return(e) => {
                let e = self.root(e);
                self.line(&format!("return {e};"));
            }
            Stmt::Block(body) => self.block("", body, ""),
            Stmt::Item(text) if self.single => self.line(&text.replace("f64", "f32")),
            // An item keeps its `f64` (a `const` cannot be generic): see `render_function`.
            Stmt::Item(text) if self.generic_constants() => {
                self.line(&text.replace("f64", KEPT_F64));
            }
            Stmt::Item(text) => self.line(text),
            Stmt::LetVec(name, capacity) => {
                let init = match capacity {
                    Some(n) => format!("Vec::with_capacity({})", self.iexpr(n)),
                    None => "Vec::new()".into(),
                };
                self.line(&format!("let mut {name} = {init};"));
            }
            Stmt::LetTuple(names, init) => {
                let names: Vec<String> = names
                    .iter()
                    .map(|n| match n {
                        Some((name, true)) => format!("mut {name}"),
                        Some((name, false)) => name.clone(),
                        None => "_".into(),
                    })
                    .collect();
                let init = match init {
                    TupleInit::Exprs(items) => {
                        let items: Vec<String> = items
                            .iter()
                            .map(|e| {
                                let e = self.root(e);
                                if self.tape() {
                                    format!("t.v({e})")
                                } else {
                                    e
                                }
                            })
                            .collect();
                        format!("({})", items.join(", "))
                    }
                    TupleInit::Call(name, args) => self.call(name, args),
                };
                self.line(&format!("let ({}) = {init};", names.join(", ")));
            }
            Stmt::Push(name, e) => {
                let e = self.root(e);
                self.line(&format!("{name}.push({e});"));
            }
        }
    }

    fn indent_line_raw(&mut self, text: &str) {
        self.line(text);
    }

    /// A whole function.
    pub(crate) fn function(&mut self, f: &Function, public: bool) {
        let vis = if public || f.method { "pub " } else { "" };
        let mut params = Vec::new();
        if f.method {
            params.push("&self".to_string());
        }
        if self.tape() {
            params.push("t: &Ctx<'t>".to_string());
        }
        for p in &f.params {
            let m = if p.mutable { "mut " } else { "" };
            params.push(format!(
                "{m}{}: {}",
                p.name,
                param_type(&p.kind, self.target)
            ));
        }
        let count = 1 + f.outputs.len();
        let returns = |one: &str| {
            if count == 1 {
                one.to_string()
            } else {
                format!("({})", vec![one; count].join(", "))
            }
        };
        let mut generics: Vec<String> = f
            .generics
            .iter()
            .map(|n| format!("const {n}: usize"))
            .collect();
        if self.tape() {
            // A method's `'t` is the impl block's.
            if !f.method {
                generics.insert(0, "'t".into());
            }
            let generics = if generics.is_empty() {
                String::new()
            } else {
                format!("<{}>", generics.join(", "))
            };
            self.line(&format!(
                "{vis}fn {}_tape{generics}({}) -> {} {{",
                f.name,
                params.join(", "),
                returns("Var<'t>")
            ));
        } else {
            let mut args = Vec::new();
            if let Some(wrt) = &f.wrt {
                let names: Vec<&str> = wrt.iter().map(|&i| f.params[i].name.as_str()).collect();
                args.push(format!("wrt({})", names.join(", ")));
            }
            if f.reassociate {
                args.push("reassociate".into());
            }
            // Forward mode everywhere: a function's `_jvp` calls its callees' `_jvp`.
            args.push("jvp".into());
            if f.second_order {
                args.push("hvp".into());
            }
            if args.is_empty() {
                self.line("#[grad]");
            } else {
                self.line(&format!("#[grad({})]", args.join(", ")));
            }
            if self.generic {
                generics.insert(0, format!("T: {GENERIC_BOUNDS}"));
            }
            let generics = if generics.is_empty() {
                String::new()
            } else {
                format!("<{}>", generics.join(", "))
            };
            self.line(&format!(
                "{vis}fn {}{generics}({}) -> {} {{",
                f.name,
                params.join(", "),
                returns("f64")
            ));
        }
        self.indent += 1;
        for stmt in &f.body {
            self.stmt(stmt);
        }
        let mut results = vec![self.root(&f.result)];
        results.extend(f.outputs.iter().map(|e| self.root(e)));
        if results.len() == 1 {
            self.line(&results[0]);
        } else {
            self.line(&format!("({})", results.join(", ")));
        }
        self.indent -= 1;
        self.line("}");
    }
}

/// Renders `function` for `target`; `single`: the program is in `f32`.
pub fn render_function(
    function: &Function,
    target: Target,
    public: bool,
    single: bool,
    generic: bool,
) -> String {
    let mut w = Writer::new(target, single);
    w.generic = generic;
    w.function(function, public);
    if single && target == Target::Grad {
        w.out.replace("f64", "f32")
    } else if generic && target == Target::Grad {
        // Types, `.sum::<T>()`, `T::tanh(x)`: every `f64` left is the float type's, but
        // those of items.
        w.out.replace("f64", "T").replace(KEPT_F64, "f64")
    } else {
        w.out
    }
}

/// An `f64` of an item in a generic program, until the others are made `T`.
const KEPT_F64: &str = "F64_KEPT_AS_IS";

/// The bounds of a generic program's float type: `Float`, `FloatConst` (`T::PI()`), the
/// extension methods (`relu`, `sigmoid`), the compound assignments and the reductions.
pub const GENERIC_BOUNDS: &str = "num_traits::Float + num_traits::FloatConst + F64Ext \
    + core::ops::AddAssign + core::ops::SubAssign + core::ops::MulAssign \
    + core::ops::DivAssign + core::iter::Sum + core::iter::Product";

/// A constant path as generic code writes it: `PI` → `T::PI()`, `f64::EPSILON` →
/// `T::epsilon()`, a `const` of the module converted.
fn generic_constant(text: &str) -> String {
    let last = text.rsplit("::").next().unwrap_or(text);
    let float_const = text == "PI" || text.contains("consts::");
    match last {
        _ if float_const => format!("T::{last}()"),
        "EPSILON" if text.starts_with("f64") => "T::epsilon()".into(),
        "INFINITY" if text.starts_with("f64") => "T::infinity()".into(),
        "NEG_INFINITY" if text.starts_with("f64") => "T::neg_infinity()".into(),
        "MAX" if text.starts_with("f64") => "T::max_value()".into(),
        "MIN" if text.starts_with("f64") => "T::min_value()".into(),
        _ => format!("T::from({text}).unwrap()"),
    }
}

/// Calls `f` on every number expression of `stmts` and of their sub-expressions, except
/// inside indices computed from numbers (whose `stop_gradient` changes nothing: an
/// index is piecewise constant).
pub fn visit_stmts(stmts: &[Stmt], f: &mut dyn FnMut(&Expr)) {
    for s in stmts {
        match s {
            Stmt::Let { init: e, .. }
            | Stmt::Assign(_, _, e)
            | Stmt::Return(e)
            | Stmt::Push(_, e)
            | Stmt::Break(_, Some(e)) => visit_expr(e, f),
            Stmt::LetArray {
                init: ArrayInit::Literal(items),
                ..
            }
            | Stmt::DestructureLiteral(_, items)
            | Stmt::LetTuple(_, TupleInit::Exprs(items)) => {
                items.iter().for_each(|e| visit_expr(e, f))
            }
            Stmt::LetArray {
                init: ArrayInit::Collect { value, .. },
                ..
            } => visit_expr(value, f),
            Stmt::LetTuple(_, TupleInit::Call(_, args)) => {
                for a in args {
                    if let Arg::Real(e) = a {
                        visit_expr(e, f);
                    }
                }
            }
            Stmt::For { body, .. } | Stmt::Loop { body, .. } | Stmt::Block(body) => {
                visit_stmts(body, f)
            }
            Stmt::While(c, body) => {
                visit_cond(c, f);
                visit_stmts(body, f);
            }
            Stmt::If(branches, otherwise) => {
                for (c, body) in branches {
                    visit_cond(c, f);
                    visit_stmts(body, f);
                }
                if let Some(body) = otherwise {
                    visit_stmts(body, f);
                }
            }
            Stmt::Match(m) => {
                if let Scrutinee::Real(e) = &m.scrutinee {
                    visit_expr(e, f);
                }
                for (_, guard, body) in &m.arms {
                    if let Some(c) = guard {
                        visit_cond(c, f);
                    }
                    visit_stmts(body, f);
                }
            }
            _ => {}
        }
    }
}

fn visit_cond(c: &Cond, f: &mut dyn FnMut(&Expr)) {
    match c {
        Cond::Cmp(_, a, b) => {
            visit_expr(a, f);
            visit_expr(b, f);
        }
        Cond::Not(c) => visit_cond(c, f),
        Cond::And(a, b) | Cond::Or(a, b) => {
            visit_cond(a, f);
            visit_cond(b, f);
        }
        Cond::ICmp(..) | Cond::Flag(_) => {}
    }
}

/// Calls `f` on `e` and its sub-expressions (see [`visit_stmts`]).
pub fn visit_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match e {
        Expr::Bin(_, a, b) => {
            visit_expr(a, f);
            visit_expr(b, f);
        }
        Expr::Neg(a) | Expr::Powi(a, _) | Expr::Stop(a) => visit_expr(a, f),
        Expr::Op { args, .. } => args.iter().for_each(|a| visit_expr(a, f)),
        Expr::If(c, a, b) => {
            visit_cond(c, f);
            visit_expr(a, f);
            visit_expr(b, f);
        }
        Expr::Match(m) => {
            if let Scrutinee::Real(e) = &m.scrutinee {
                visit_expr(e, f);
            }
            for (_, guard, body) in &m.arms {
                if let Some(c) = guard {
                    visit_cond(c, f);
                }
                visit_expr(body, f);
            }
        }
        Expr::Block(stmts, result) => {
            visit_stmts(stmts, f);
            visit_expr(result, f);
        }
        Expr::Call(_, args) => {
            for a in args {
                if let Arg::Real(e) = a {
                    visit_expr(e, f);
                }
            }
        }
        Expr::Reduce(r) => {
            if let Some((_, c)) = &r.filter {
                visit_cond(c, f);
            }
            if let ReduceKind::Fold(init, _) = &r.kind {
                visit_expr(init, f);
            }
            visit_expr(&r.body, f);
        }
        _ => {}
    }
}

impl Program {
    /// Whether finite differences of the original function are the gradient: not when
    /// a `stop_gradient` holds a value constant (outside indices), which the difference
    /// quotient moves.
    pub fn differences_apply(&self) -> bool {
        let mut stopped = false;
        for f in self
            .helpers
            .iter()
            .chain(&self.methods)
            .chain(std::iter::once(&self.main))
        {
            let mut check = |e: &Expr| stopped |= matches!(e, Expr::Stop(_));
            visit_stmts(&f.body, &mut check);
            visit_expr(&f.result, &mut check);
            f.outputs.iter().for_each(|e| visit_expr(e, &mut check));
        }
        !stopped
    }

    /// Whether its main function, its helpers and its methods get `#[grad(hvp)]`: every
    /// program of one output but the long ones.
    pub fn second_order_applies(&self) -> bool {
        // Calls of helpers and methods, of numbers or passing arrays, slices and structs
        // whole, returning one number or a tuple, with or without `wrt(..)`, are followed.
        !self.long && self.main.outputs.is_empty()
    }

    /// Whether the program gets a vector function of its main function's value, whose
    /// Jacobian is checked: its main function has no struct parameter (which `_jacobian`
    /// does not take yet), no `wrt(..)`, no const generics and one output.
    pub fn vector_applies(&self) -> bool {
        let main = &self.main;
        main.wrt.is_none()
            && main.generics.is_empty()
            && main.outputs.is_empty()
            && !main.method
            && main
                .params
                .iter()
                .all(|p| !matches!(p.kind, ParamKind::Struct | ParamKind::Structs(_)))
    }

    /// Whether a function of the program is `#[grad(reassociate)]`: then the value of the
    /// gradient may differ from the original's in the last bits.
    pub fn reassociates(&self) -> bool {
        self.helpers
            .iter()
            .chain(&self.methods)
            .chain(std::iter::once(&self.main))
            .any(|f| f.reassociate)
    }
}
