//! The programs the generator writes: a small AST of the subset of Rust that `#[grad]`
//! documents, rendered ([`super::render`]) either as the plain `f64` function or as the
//! same computation on a `Tape` (see [`Target`]).

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
    /// `&mut [f64; N]` or `&mut [f64]`, written through by the body: differentiated with
    /// respect to its value on entry, its tangent passed by value (an array) or as `&[f64]`.
    MutRef,
}

impl Pass {
    /// How a parameter passed so is borrowed: `""`, `"&"` or `"&mut "`.
    pub fn sigil(self) -> &'static str {
        match self {
            Pass::Value => "",
            Pass::Ref | Pass::VecRef => "&",
            Pass::MutRef => "&mut ",
        }
    }
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
    /// Rows of run-time length (`&[Vec<f64>]`, `&Vec<Vec<f64>>`, `&[&[f64]]`), as many as
    /// the program's run-time length, each of one to three numbers: data, never
    /// differentiated.
    Ragged(RowsOf),
    /// A constant of another type, one of three values: the module's enum or a `&str`.
    Choice(Choice),
    /// A tuple of numbers, `(f64, f64)` (`None`) or `(f64, [f64; K])`, read as `p.0`,
    /// `p.1[k]`: differentiable, its partial a tuple.
    Tuple(Option<usize>, Pass),
    /// `q: &Inner` ([`INNER`]), in helpers of a program whose struct holds one: called
    /// with a field (`&m.i0`), an element (`&m.it1[0]`) or a name bound to one.
    Inner,
}

impl ParamKind {
    /// How many numbers a tuple parameter holds.
    pub fn tuple_count(&self) -> Option<usize> {
        match self {
            ParamKind::Tuple(k, _) => Some(1 + k.unwrap_or(1)),
            _ => None,
        }
    }
}

/// The type of a constant parameter that holds no number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// `op: Mode`, the module's enum ([`ENUM`]).
    Enum,
    /// `name: &str`.
    Str,
}

/// The name of the enum of [`Choice::Enum`] parameters.
pub const ENUM: &str = "Mode";

impl Choice {
    /// Its three values, as written.
    pub fn values(self) -> [&'static str; 3] {
        match self {
            Choice::Enum => ["Mode::Add", "Mode::Scale", "Mode::Skip"],
            Choice::Str => ["\"l1\"", "\"l2\"", "\"huber\""],
        }
    }
}

/// How rows of run-time length are passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowsOf {
    /// `&[Vec<f64>]`.
    Vecs,
    /// `&Vec<Vec<f64>>`.
    VecOfVecs,
    /// `&[&[f64]]`.
    Slices,
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
    /// `usize::min(a, b)`, or `a.min(b)` (`true`) where `a`'s type is known to be `usize`
    /// (a literal range's variable is `{integer}` until an index makes it `usize`): another
    /// way to an index in bounds, with `b` the last index.
    Min(Box<IExpr>, Box<IExpr>, bool),
    /// `usize::max(a, b)`, or `a.max(b)` (`true`).
    Max(Box<IExpr>, Box<IExpr>, bool),
    /// `(a - 1)` of an `a` of at least 1: the last index of a length.
    Pred(Box<IExpr>),
    /// `rows[i].len()` of rows of run-time length.
    RowLen(String, Box<IExpr>),
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
    pub(crate) fn symbol(self) -> &'static str {
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
    "abs", "relu", "max", "min", "clamp", "floor", "ceil", "round", "trunc", "signum", "fract",
    "rem", "cbrt", "atan2", "hypot",
];

/// A number-valued expression.
#[derive(Clone, Debug)]
pub enum Expr {
    /// A float literal, as written (`0.5`, `2.0_f64`, `5e-1`).
    Lit(String),
    /// `rows[i][j]` of rows of run-time length (data: a constant).
    Ragged(String, IExpr, IExpr),
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
    /// `xs.is_empty()` of a slice (never true: slices hold at least two numbers).
    Empty(String),
    /// A test of a constant parameter of another type, as written (`op == Mode::Add`,
    /// `matches!(op, Mode::Add | Mode::Skip)`, `name != "l1"`, `name.len() > 2`).
    Choice(String),
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
    /// A constant parameter of another type (patterns: its values, `|`, `_`).
    Choice(String, Choice),
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
    /// `[[a, b], [c, d]]`: rows of numbers computed in the body (a rotation matrix).
    Literal2(Vec<Vec<Expr>>),
    /// `w` (or `*w` of a reference, `true`): a copy of a whole array.
    Copy(String, bool),
    /// `m[i]`: a copy of a row of a 2-D array or of a slice of rows.
    Row(String, IExpr),
    /// `xs.to_vec()` of a slice.
    ToVec(String),
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
        /// Written with its type (`: [f64; 3]`, `: [[f64; 2]; 3]`, `: Vec<f64>`): the
        /// array's length and the rows' length, or `None` for a vector.
        typed: Option<(Option<Len>, Option<usize>)>,
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
    /// `let p = &ms[i];`: a name for an element of a collection of structs.
    LetElement(String, String, IExpr),
    /// `let [mut] p = Pair { a: e, b: [e1, e2] };`: a struct built in the body ([`PAIR`]).
    LetPair {
        /// The local.
        name: String,
        /// `let mut`.
        mutable: bool,
        /// Its field `a`.
        a: Expr,
        /// Its field `b`, of two numbers.
        b: Vec<Expr>,
        /// Written with field shorthand: `let a = e; let p = Pair { a, b: … };`.
        shorthand: bool,
    },
    /// `let q = p;` of a `Pair`.
    CopyPair(String, String),
    /// `let Pair { a: x, b: y } = p;` (`..` for a part left out).
    DestructurePair {
        /// The name bound to `a`, if any.
        a: Option<String>,
        /// The name bound to `b`, if any.
        b: Option<String>,
        /// The `Pair` taken apart.
        of: String,
    },
    /// A call of a helper returning an array, and where its value goes.
    CallArray {
        /// Where the array goes.
        to: ArrayBinding,
        /// The helper.
        call: String,
        /// Its arguments.
        args: Vec<Arg>,
    },
    /// `let [a, _, c] = [e1, e2, e3];`
    DestructureLiteral(Vec<Option<String>>, Vec<Expr>),
    /// `for row in rows.iter() { for &x in row.iter() { body } }`, or by index
    /// (`for i in 0..rows.len() { for j in 0..rows[i].len() { let x = rows[i][j]; body } }`):
    /// the numbers of rows of run-time length, `x` a constant in `body`.
    RaggedLoop {
        /// The rows.
        rows: String,
        /// The row (or the rows' index).
        row: String,
        /// The index in the row (by index).
        column: String,
        /// The number.
        item: String,
        /// By index rather than by iterators.
        by_index: bool,
        /// The body.
        body: Vec<Stmt>,
    },
    /// `let c = |q[: f64]| body; let v = c(a1) op c(a2) …;`: a closure bound to a name and
    /// called at once, its value bound to `v`.
    LetClosure {
        /// The closure's name.
        name: String,
        /// Its parameter.
        param: String,
        /// The parameter written with its type.
        typed: bool,
        /// Its value, of the parameter and of what it captures.
        body: Expr,
        /// The arguments of its calls.
        args: Vec<Expr>,
        /// How their values combine: `+` or `*`.
        op: &'static str,
        /// The variable bound to the calls' value.
        result: String,
    },
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

/// Where the value of a call returning an array goes.
#[derive(Clone, Debug)]
pub enum ArrayBinding {
    /// `let [a, _, c] = h(..);`
    Destructure(Vec<Option<String>>),
    /// `let [mut] v: [f64; K] = h(..);`
    Let {
        /// The local.
        name: String,
        /// `let mut`.
        mutable: bool,
        /// Written with its type, `[f64; K]` of this `K` (always: `#[grad]` cannot see
        /// what a call returns, and says so).
        typed: Option<usize>,
    },
    /// `v = h(..);` of a local array of the same length.
    Assign(String),
}

/// The struct that bodies build with a literal, `Pair { a: f64, b: [f64; 2] }`, and its
/// `Tape` twin `PairTape<'t>`: items of a module whose functions build one.
pub const PAIR: &str = "Pair";

/// The items defining [`PAIR`] and its twin.
pub fn pair_items() -> [String; 2] {
    [
        format!("#[derive(Clone, Copy, Debug)]\npub struct {PAIR} {{ pub a: f64, pub b: [f64; 2] }}"),
        format!("#[derive(Clone, Copy)]\npub struct {PAIR}Tape<'t> {{ pub a: Var<'t>, pub b: [Var<'t>; 2] }}"),
    ]
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
    /// Further results: the function returns the tuple `(result, outputs…)`, or the
    /// array `[result, outputs…]` where `array` says so.
    pub outputs: Vec<Expr>,
    /// Returns its results as an array (`-> [f64; 2]`), not a tuple.
    pub array: bool,
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
    /// `#[grad(hessian)]` too: the program's main function, when
    /// [`Program::hessian_applies`].
    pub hessian: bool,
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
                        ParamKind::Real(..)
                            | ParamKind::Struct
                            | ParamKind::Structs(_)
                            | ParamKind::Tuple(..)
                            | ParamKind::Inner
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
    /// A struct of its own, [`INNER`].
    Inner,
    /// `Vec<Inner>` of the program's run-time length.
    Items,
    /// `[Inner; K]`.
    Parts(usize),
}

/// The struct that the program's struct may hold ([`Field::Inner`], [`Field::Items`],
/// [`Field::Parts`]): `Inner { c: f64, v: [f64; 2] }`, deriving `Differentiable`, its
/// twin `InnerTape<'t>`.
pub const INNER: &str = "Inner";

/// How many numbers an [`INNER`] holds.
pub const INNER_COUNT: usize = 3;

/// The program's struct, `S`, deriving `Differentiable`; its `Tape` twin is `STape<'t>`.
#[derive(Clone, Debug)]
pub struct StructDef {
    /// The fields, in order.
    pub fields: Vec<(String, Field)>,
}

/// The name of the generated struct.
pub const STRUCT: &str = "S";

impl StructDef {
    /// Whether it holds an [`INNER`] (a field of that type, or a collection of them).
    pub fn holds_inner(&self) -> bool {
        self.fields
            .iter()
            .any(|(_, f)| matches!(f, Field::Inner | Field::Items | Field::Parts(_)))
    }

    /// Whether a collection of it may be a parameter: no `Vec` or collection in it.
    pub fn flat(&self) -> bool {
        self.fields
            .iter()
            .all(|(_, f)| !matches!(f, Field::Vec | Field::Items | Field::Parts(_)))
    }

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
                Field::Inner => fixed += INNER_COUNT,
                Field::Parts(k) => fixed += k * INNER_COUNT,
                Field::Items => run += INNER_COUNT,
                Field::Int(_) | Field::Bool => {}
            }
        }
        (fixed, run)
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
            Stmt::LetClosure { body, args, .. } => {
                visit_expr(body, f);
                args.iter().for_each(|e| visit_expr(e, f));
            }
            Stmt::LetPair { a, b, .. } => {
                visit_expr(a, f);
                b.iter().for_each(|e| visit_expr(e, f));
            }
            Stmt::LetArray {
                init: ArrayInit::Collect { value, .. },
                ..
            } => visit_expr(value, f),
            Stmt::LetArray {
                init: ArrayInit::Literal2(rows),
                ..
            } => rows.iter().flatten().for_each(|e| visit_expr(e, f)),
            Stmt::LetTuple(_, TupleInit::Call(_, args)) | Stmt::CallArray { args, .. } => {
                for a in args {
                    if let Arg::Real(e) = a {
                        visit_expr(e, f);
                    }
                }
            }
            Stmt::For { body, .. }
            | Stmt::Loop { body, .. }
            | Stmt::Block(body)
            | Stmt::RaggedLoop { body, .. } => visit_stmts(body, f),
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

/// Whether `stmts` (at any depth, in expression blocks too) assign to an element of the
/// array `name` (`name[i] = …`, `name[i] += …`).
pub fn assigns(stmts: &[Stmt], name: &str) -> bool {
    let mut found = false;
    for s in stmts {
        found |= match s {
            Stmt::Assign(Place::Index(array, _), ..) => array == name,
            Stmt::For { body, .. }
            | Stmt::Loop { body, .. }
            | Stmt::Block(body)
            | Stmt::While(_, body)
            | Stmt::RaggedLoop { body, .. } => assigns(body, name),
            Stmt::If(branches, otherwise) => {
                branches.iter().any(|(_, body)| assigns(body, name))
                    || otherwise.as_ref().is_some_and(|body| assigns(body, name))
            }
            Stmt::Match(m) => m.arms.iter().any(|(_, _, body)| assigns(body, name)),
            _ => false,
        };
    }
    // Statements inside expressions (`{ let a = …; a }`).
    visit_stmts(stmts, &mut |e| {
        if let Expr::Block(inner, _) = e {
            found |= assigns(inner, name);
        }
    });
    found
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
        Cond::ICmp(..) | Cond::Flag(_) | Cond::Empty(_) | Cond::Choice(_) => {}
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

    /// Whether its main function also gets `#[grad(hessian)]`, whose Hessian is checked
    /// against `_hvp`'s products at every point: a program with second order, in `f64`
    /// and not generic, whose main function is not a method and differentiates numbers
    /// and arrays of fixed sizes only, 1 to 16 numbers in all. Those of straight-line
    /// code get `_hessian` in one sweep over lanes; the others one `_hvp` per number.
    pub fn hessian_applies(&self) -> bool {
        if !self.second_order_applies() || self.single || self.generic || self.main.method {
            return false;
        }
        let mut numbers = 0;
        for &i in &self.main.partials() {
            numbers += match &self.main.params[i].kind {
                ParamKind::Real(Shape::Scalar, _) => 1,
                ParamKind::Real(Shape::Array(len), _) if !matches!(len, Len::Generic(_)) => {
                    len.value()
                }
                ParamKind::Real(Shape::Nested(len, k), _) if !matches!(len, Len::Generic(_)) => {
                    len.value() * k
                }
                _ => return false,
            };
        }
        (1..=16).contains(&numbers)
    }

    /// Whether its main function has a pullback `_vjp`: it takes more than numbers (an
    /// array, a slice, a struct, an integer, a flag or a constant of another type; rows of
    /// run-time length do not count).
    pub fn pullback_applies(&self) -> bool {
        self.main.params.iter().any(|p| {
            !matches!(
                p.kind,
                ParamKind::Real(Shape::Scalar, _) | ParamKind::Ragged(_)
            )
        })
    }

    /// Whether the program gets a vector function of its main function's value, whose
    /// Jacobian is checked: its main function has no struct parameter (which `_jacobian`
    /// does not take yet), no `wrt(..)`, no const generics and one output, and takes no
    /// enum (which the vector function would pass to it: a type that could be a struct
    /// is a struct parameter where it is passed to a function), nor a `&mut` (a call
    /// passing one whose value is used is not supported).
    pub fn vector_applies(&self) -> bool {
        let main = &self.main;
        main.wrt.is_none()
            && main.generics.is_empty()
            && main.outputs.is_empty()
            && !main.method
            && main.params.iter().all(|p| {
                !matches!(
                    p.kind,
                    ParamKind::Struct
                        | ParamKind::Structs(_)
                        | ParamKind::Choice(Choice::Enum)
                        | ParamKind::Real(_, Pass::MutRef)
                )
            })
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
