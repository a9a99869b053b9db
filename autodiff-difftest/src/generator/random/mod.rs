//! Random programs: a seeded walk over the constructs of the documented subset, with every
//! operation's argument kept inside its domain by construction (`ln` of `e·e + 0.5`,
//! `acos` of `tanh(e)·0.9`, …) and every loop bounded.

use super::ast::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

mod expr;
mod long;
mod reassociated;
mod stmt;
mod structs;

use reassociated::{lanes_sum, sample_loop};
use structs::{declare_inner, declare_struct, random_struct};

pub use long::{long_program, LONG_OPS};

/// The largest value an integer variable can hold, as far as indexing is concerned.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Hi {
    /// At most this.
    Max(usize),
    /// Below the program's run-time slice length.
    BelowN,
    /// Not known (a counter): only used after `% len`, or as a number.
    Unknown,
    /// Below the const generic parameter of this name.
    Below(String),
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
    /// A field of a struct parameter (or of `self`), behind a reference.
    Field,
    /// A local `Vec` filled by `push`, some pushes under a condition: at least as long as
    /// it says, so its own indices (`0..v.len()`, `enumerate`) bound nothing.
    Grown,
    /// A `&mut` parameter the body writes through: iterated by `.iter()`, never passed
    /// whole.
    MutRef,
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
        /// A local array (not a parameter), or a row a loop binds of a local or `mut`
        /// array (which `#[grad]` reads as that array at an index): passed whole only
        /// outside loops and branches, so never such a row.
        local: bool,
    },
    Int {
        hi: Hi,
    },
    Bool,
    /// A struct parameter, or `self` (its fields are variables of their own, `m.w`).
    Struct,
    /// Rows of run-time length (data).
    Ragged,
    /// A constant parameter of another type.
    Choice(Choice),
    /// A [`PAIR`] built in the body (its fields are variables of their own, `p.a`, `p.b`).
    Pair,
    /// An [`INNER`] (its fields are variables of their own, `q.c`, `q.v`): passed whole
    /// to helpers that take one, unless it is a field of an element of a collection of the
    /// program's struct (`ms[0].i1`, which `#[grad]` reads by field only).
    Inner {
        /// Whether it may be passed whole.
        whole: bool,
    },
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

/// The elements of a collection of structs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Elem {
    /// The program's struct, of the run-time length.
    S,
    /// [`INNER`]: of the run-time length (`None`), or `K` of them.
    Inner(Option<usize>),
}

/// The signature of a callable helper.
#[derive(Clone, Debug)]
struct Helper {
    name: String,
    params: Vec<ParamKind>,
    /// How many numbers it returns (more than one: a tuple, unpacked by a `let`).
    outputs: usize,
    /// Returns them as an array, not a tuple.
    array: bool,
    /// A method of the struct, called on a struct variable.
    method: bool,
}

/// What kind of function [`random_function`] writes.
#[derive(Clone, Copy, Debug, Default)]
struct Role {
    /// A helper (fewer statements, no `wrt`).
    helper: bool,
    /// Returns a tuple of this many numbers (1: an `f64`).
    outputs: usize,
    /// Returns them as an array instead.
    array: bool,
    /// Generic over `const N: usize`, with arrays `[f64; N]`.
    generic: bool,
    /// A method of the struct.
    method: bool,
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
    "fract",
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
    /// The const generic parameter of the function being written, if any.
    generic: Option<String>,
    /// The function being written returns a tuple, which it must do at its end only.
    no_return: bool,
    /// A `return` has been written in the function: `#[grad]` lowers the statements after
    /// the one holding it into a block of their own, which passes no local (or `mut`)
    /// array whole.
    returned: bool,
    /// The program's struct, if any.
    structure: Option<StructDef>,
    /// A long program (see [`long_program`]): its function under test performs at least
    /// this many operations, and no function body defines items.
    long: Option<usize>,
    /// Statements and expressions without loops, branches, blocks or closures (the
    /// straight runs of a long program), and without what `#[grad]` binds to a value of
    /// a type it does not know, which keeps the statements around it out of segments:
    /// constant paths and tables (`let __primal_7 = PI;`), integer variables (indices
    /// `w[(k + 1) % 3]`, casts `k as f64`, counters); nor integers it binds to a value
    /// of a type it knows, which a segment does not take either (indices computed from
    /// numbers, `let __primal_9 = __primal_8 as usize;`, and exponents `powi(n as i32)`).
    /// Array elements are read and written at constant indices there.
    straight: bool,
    /// Names that a `let` does not shadow (the values a long program threads from one
    /// run to the next).
    settled: Vec<String>,
    /// Inside the body of a sample loop (see [`sample_loop`]): no `while`, `loop`,
    /// `break`, `continue` or `return`, whose control flags would keep `#[grad]` from
    /// preaccumulating the loop's gradient.
    sample: bool,
    /// The collections of structs of the function being written (`ms2` of
    /// `ms2: &[S]`, `m1.it0` of a field `Vec<Inner>`), which loops go over (see
    /// `struct_loop`), with their elements' type.
    collections: Vec<(String, Elem)>,
    /// Some function builds a [`PAIR`]: the module defines it.
    pairs: bool,
}

impl Gen {
    /// A generator with nothing declared, drawing from the stream `seed`.
    fn new(seed: u64, config: Config) -> Gen {
        Gen {
            rng: StdRng::seed_from_u64(seed),
            config,
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
            generic: None,
            no_return: false,
            returned: false,
            structure: None,
            long: None,
            straight: false,
            settled: Vec::new(),
            sample: false,
            collections: Vec::new(),
            pairs: false,
        }
    }

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

    /// The integer variables in reach; none in a straight run of a long program (see
    /// [`Gen::straight`]).
    fn ints(&self) -> Vec<Var> {
        if self.straight {
            return Vec::new();
        }
        self.visible()
            .into_iter()
            .filter(|v| matches!(v.kind, Kind::Int { .. }))
            .collect()
    }

    /// The constant parameters of other types in reach, with their types.
    fn choices(&self) -> Vec<(String, Choice)> {
        self.visible()
            .into_iter()
            .filter_map(|v| match v.kind {
                Kind::Choice(choice) => Some((v.name, choice)),
                _ => None,
            })
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

    /// A constant path, or an element of a `const` table; a literal in a straight run of
    /// a long program (see [`Gen::straight`]).
    fn constant(&mut self) -> Expr {
        if self.straight {
            return self.literal();
        }
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
        let fits = |hi: &Hi| match (len, hi) {
            (ALen::Fixed(n), Hi::Max(h)) => *h < n.value(),
            (ALen::Run, Hi::Max(h)) => *h < SLICE_MIN,
            (ALen::Run, Hi::BelowN) => true,
            (ALen::Fixed(Len::Generic(n)), Hi::Below(m)) => n == m,
            _ => false,
        };
        let direct: Vec<Var> = ints
            .iter()
            .filter(|v| matches!(&v.kind, Kind::Int { hi } if fits(hi)))
            .cloned()
            .collect();
        let len_expr = |g: &mut Gen| match len {
            ALen::Fixed(Len::Named(name, _) | Len::Generic(name)) => IExpr::Const(name.clone()),
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
            // A variable of a loop over `0..xs.len()` is a `usize`; others may not be known
            // to be one where they are read.
            let method = matches!(v.kind, Kind::Int { hi: Hi::BelowN }) && self.chance(0.7);
            let mut i = IExpr::Var(v.name);
            if self.chance(0.15) {
                // `i.min(len - 1)`, or `k.max(1) % len`.
                return if self.chance(0.5) {
                    let last = IExpr::Pred(Box::new(len_expr(self)));
                    IExpr::Min(Box::new(i), Box::new(last), method)
                } else {
                    let floor = IExpr::Lit(self.rng.random_range(0..3));
                    IExpr::Rem(
                        Box::new(IExpr::Max(Box::new(i), Box::new(floor), method)),
                        Box::new(len_expr(self)),
                    )
                };
            }
            if self.chance(0.5) {
                let k = self.rng.random_range(1..3);
                i = IExpr::Add(Box::new(i), Box::new(IExpr::Lit(k)));
            } else if self.chance(0.3) {
                i = IExpr::Mul(Box::new(i), Box::new(IExpr::Lit(2)));
            }
            return IExpr::Rem(Box::new(i), Box::new(len_expr(self)));
        }
        if roll < 8 && self.in_closure == 0 && self.in_index == 0 && !self.straight {
            if let ALen::Fixed(n) = len {
                if n.value() >= 2 && !matches!(n, Len::Generic(_)) {
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
    /// A visible slice parameter of numbers (not of rows).
    fn number_slice(&self) -> Option<String> {
        self.slice_param(true)
    }

    fn slice_param_name(&self) -> Option<String> {
        self.slice_param(false)
    }

    /// A visible slice parameter; `numbers`: of numbers only, not of rows.
    fn slice_param(&self, numbers: bool) -> Option<String> {
        self.visible()
            .into_iter()
            .find(|v| match &v.kind {
                Kind::Array {
                    len: ALen::Run,
                    owner: Owner::Borrowed,
                    inner,
                    ..
                } => !numbers || inner.is_none(),
                _ => false,
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

/// The integers below the length of an array of length `len` (its indices).
fn below(len: &ALen) -> Hi {
    match len {
        ALen::Fixed(Len::Generic(n)) => Hi::Below(n.clone()),
        ALen::Fixed(n) => Hi::Max(n.value().saturating_sub(1)),
        ALen::Run => Hi::BelowN,
    }
}

/// The prefix of a parameter's name, by its kind.
fn prefix(kind: &ParamKind) -> &'static str {
    match kind {
        ParamKind::Real(Shape::Scalar, _) => "x",
        ParamKind::Real(Shape::Array(_) | Shape::Nested(..), _) => "w",
        ParamKind::Real(..) => "xs",
        ParamKind::Int { .. } => "n",
        ParamKind::Bool => "flag",
        ParamKind::Struct => "m",
        ParamKind::Structs(_) => "ms",
        ParamKind::Ragged(_) => "rows",
        ParamKind::Choice(Choice::Enum) => "op",
        ParamKind::Tuple(..) => "tp",
        ParamKind::Inner => "q",
        ParamKind::Choice(Choice::Str) => "name",
    }
}

/// A parameter of `kind`, not `mut`, named later by [`rename`].
fn unnamed(kind: ParamKind) -> Param {
    Param {
        name: String::new(),
        kind,
        mutable: false,
    }
}

/// Names parameters after their kind and position (`x0`, `w1`, `m2`).
fn rename(params: &mut [Param]) {
    for (i, p) in params.iter_mut().enumerate() {
        p.name = format!("{}{i}", prefix(&p.kind));
    }
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
        params.push(Param {
            name: format!("{}{i}", prefix(&kind)),
            kind,
            mutable,
        });
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
                owner: match pass {
                    Pass::Value => Owner::Array,
                    Pass::MutRef => Owner::MutRef,
                    Pass::Ref | Pass::VecRef => Owner::Borrowed,
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
            ParamKind::Real(Shape::Slice, pass) => Kind::Array {
                len: ALen::Run,
                inner: None,
                owner: if *pass == Pass::MutRef {
                    Owner::MutRef
                } else {
                    Owner::Borrowed
                },
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
            ParamKind::Ragged(_) => Kind::Ragged,
            ParamKind::Choice(choice) => Kind::Choice(*choice),
            ParamKind::Inner => {
                declare_inner(g, &p.name, true);
                continue;
            }
            // Its parts are variables of their own, `tp2.0` and `tp2.1`.
            ParamKind::Tuple(k, _) => {
                g.declare(&format!("{}.0", p.name), Kind::Real { deref: false }, false);
                let second = match k {
                    None => Kind::Real { deref: false },
                    Some(k) => Kind::Array {
                        len: ALen::Fixed(Len::Lit(*k)),
                        inner: None,
                        owner: Owner::Field,
                        local: false,
                    },
                };
                g.declare(&format!("{}.1", p.name), second, false);
                continue;
            }
            ParamKind::Struct => {
                declare_struct(g, &p.name, false);
                continue;
            }
            // Elements by constant and run-time indices (`ms[1].w[k]`, `ms[ms.len() - 1]`),
            // each a struct as a parameter is: its fields read, its methods called.
            ParamKind::Structs(_) => {
                let name = &p.name;
                g.collections.push((name.clone(), Elem::S));
                for index in [
                    "0".to_string(),
                    "1".to_string(),
                    format!("{name}.len() - 1"),
                ] {
                    declare_struct(g, &format!("{name}[{index}]"), true);
                }
                continue;
            }
        };
        // Written through, as a `mut` parameter is assigned.
        let writable = p.mutable || matches!(p.kind, ParamKind::Real(_, Pass::MutRef));
        g.declare(&p.name, kind, writable);
    }
}

fn random_function(g: &mut Gen, name: &str, role: Role) -> Function {
    let helper = role.helper;
    let count = if helper {
        g.rng.random_range(1..4)
    } else {
        g.rng.random_range(1..6)
    };
    let mut params = random_params(g, count, helper);
    let mut generics = Vec::new();
    if role.generic {
        // One or two arrays of the generic length, first.
        generics.push("N".to_string());
        for _ in 0..g.rng.random_range(1..3) {
            let pass = if g.chance(0.6) {
                Pass::Ref
            } else {
                Pass::Value
            };
            params.insert(
                0,
                unnamed(ParamKind::Real(
                    Shape::Array(Len::Generic("N".into())),
                    pass,
                )),
            );
        }
    }
    // A helper generic over a length is called with an array of the function under test.
    let generic_helper = g.helpers.iter().any(|h| {
        h.params
            .iter()
            .any(|p| matches!(p, ParamKind::Real(Shape::Array(Len::Generic(_)), _)))
    });
    let has_array = params
        .iter()
        .any(|p| matches!(p.kind, ParamKind::Real(Shape::Array(_), _)));
    if !helper && generic_helper && !has_array {
        let n = g.length();
        let pass = if g.chance(0.5) {
            Pass::Value
        } else {
            Pass::Ref
        };
        params.push(unnamed(ParamKind::Real(Shape::Array(n), pass)));
    }
    // Rows of the length a helper takes, in half the functions under test that have none
    // and call such a helper: loops over them pass a row whole (`h(x, ..)` of
    // `for x in w.iter()`, see `row_call`).
    let row_length = g
        .helpers
        .iter()
        .flat_map(|h| &h.params)
        .find_map(|p| match p {
            ParamKind::Real(Shape::Array(Len::Generic(_)), _) => Some(None),
            ParamKind::Real(Shape::Array(n), _) => Some(Some(n.value())),
            _ => None,
        });
    let has_rows = params.iter().any(|p| {
        matches!(
            p.kind,
            ParamKind::Real(Shape::Nested(..) | Shape::Rows(_), _)
        )
    });
    if let (false, false, Some(row_length)) = (helper, has_rows, row_length) {
        if g.chance(0.5) {
            let k = row_length.unwrap_or_else(|| g.rng.random_range(1..4));
            let kind = if g.chance(0.5) {
                let pass = if g.chance(0.5) {
                    Pass::Value
                } else {
                    Pass::Ref
                };
                ParamKind::Real(Shape::Nested(g.length(), k), pass)
            } else {
                ParamKind::Real(Shape::Rows(k), Pass::Ref)
            };
            params.push(Param {
                name: String::new(),
                kind,
                mutable: false,
            });
        }
    }
    if let (false, Some(def)) = (helper, &g.structure) {
        let at = g.rng.random_range(0..=params.len());
        // A collection of the struct where its elements hold no `Vec`.
        let flat = def.flat();
        let kind = if flat && g.chance(0.5) {
            ParamKind::Structs(if g.chance(0.7) {
                Pass::Ref
            } else {
                Pass::VecRef
            })
        } else {
            ParamKind::Struct
        };
        params.insert(
            at,
            Param {
                name: String::new(),
                kind,
                mutable: false,
            },
        );
    }
    if helper && !role.method && g.chance(0.15) {
        // A `&str` setting, passed along by the caller or written as a literal.
        let at = g.rng.random_range(1..=params.len());
        params.insert(at, unnamed(ParamKind::Choice(Choice::Str)));
    }
    if helper
        && !role.method
        && g.structure.as_ref().is_some_and(StructDef::holds_inner)
        && g.chance(0.5)
    {
        // A free function taking the inner struct whole.
        let at = g.rng.random_range(0..=params.len());
        params.insert(at, unnamed(ParamKind::Inner));
    }
    if helper && !role.method && g.structure.is_some() && g.chance(0.4) {
        // A free function taking the struct whole (`fn h1(x0: f64, m1: &S)`), called with
        // a struct parameter, an element of a collection, a name bound to one, or `self`.
        let at = g.rng.random_range(0..=params.len());
        params.insert(at, unnamed(ParamKind::Struct));
    }
    if !helper && !role.method && g.chance(0.12) {
        // A tuple of numbers, by value or by reference.
        let at = g.rng.random_range(0..=params.len());
        let k = g.chance(0.5).then(|| g.rng.random_range(1..4));
        let pass = if g.chance(0.5) {
            Pass::Value
        } else {
            Pass::Ref
        };
        params.insert(at, unnamed(ParamKind::Tuple(k, pass)));
    }
    if !helper && !role.method && g.long.is_none() && g.chance(0.15) {
        // A constant of another type: the module's enum, or a `&str`.
        let at = g.rng.random_range(1..=params.len());
        let choice = if g.chance(0.5) {
            Choice::Enum
        } else {
            Choice::Str
        };
        params.insert(at, unnamed(ParamKind::Choice(choice)));
    }
    if !helper && !role.method && g.long.is_none() && g.chance(0.15) {
        // Rows of run-time length, data.
        let at = g.rng.random_range(1..=params.len());
        let rows = g.pick(&[RowsOf::Vecs, RowsOf::VecOfVecs, RowsOf::Slices]);
        params.insert(at, unnamed(ParamKind::Ragged(rows)));
    }
    if !helper && !role.method {
        // Arrays and slices written through: `&mut [f64; N]`, `&mut [f64]`.
        for p in &mut params {
            if let ParamKind::Real(
                Shape::Array(Len::Lit(_) | Len::Named(..)) | Shape::Slice,
                pass,
            ) = &mut p.kind
            {
                if *pass == Pass::Ref && g.rng.random_bool(0.2) {
                    *pass = Pass::MutRef;
                }
            }
        }
    }
    rename(&mut params);
    // Fresh names are numbered after the parameters' (`x0`, `w1`, …), so they never
    // collide.
    g.fresh = g.fresh.max(params.len());
    g.vars.clear();
    g.scopes.clear();
    g.loops.clear();
    g.collections.clear();
    g.control = 0;
    g.generic = generics.first().cloned();
    g.no_return = role.outputs > 1;
    g.returned = false;
    g.budget = if helper {
        g.rng.random_range(1..6)
    } else {
        g.rng.random_range(3..14)
    };
    if role.method {
        declare_struct(g, "self", false);
    }
    declare_params(g, &params);
    let mut body = Vec::new();
    // The function under test unpacks what a helper returning a tuple computes, and
    // calls a method of its struct, more often than random statements would.
    if !helper && !g.callable(2).is_empty() && g.chance(0.6) {
        g.tuple_call(&mut body);
    }
    if !helper && !g.array_callable().is_empty() && g.chance(0.6) {
        g.array_call(&mut body);
    }
    match g.long {
        Some(ops) if !helper => g.long_body(ops, &mut body),
        _ => {
            let n = g.rng.random_range(1..6);
            for _ in 0..n {
                if g.budget <= 0 {
                    break;
                }
                g.stmt(0, &mut body);
            }
        }
    }
    // The result reads what the body computed: every number in scope, almost always
    // (parameters the body changed among them).
    let mut results = Vec::new();
    for _ in 0..role.outputs.max(1) {
        let mut result = g.expr(2);
        // The function under test calls a method of its struct, or a helper taking arrays
        // whole, more often than random expressions would.
        let whole = |h: &Helper| {
            h.method
                || h.params
                    .iter()
                    .any(|p| matches!(p, ParamKind::Real(Shape::Array(_), _)))
        };
        let targets: Vec<(String, Helper)> = g
            .callable(1)
            .into_iter()
            .filter(|(_, h)| whole(h))
            .collect();
        if !helper && !targets.is_empty() && g.chance(0.7) {
            let (name, method) = g.pick(&targets);
            if let Some(args) = g.call_args(&method, 1) {
                let call = Expr::Call(name, args);
                result = Expr::Bin(BinOp::Add, Box::new(result), Box::new(call));
            }
        }
        // Each constant of another type decides a part of the result, so that the body
        // names it (a parameter of a type that could be a struct, never named, is a
        // struct parameter).
        for (name, choice) in g.choices() {
            let part = if g.chance(0.5) {
                let scrutinee = Scrutinee::Choice(name, choice);
                let mut arms = Vec::new();
                for (pattern, guard) in g.arm_patterns(&scrutinee, 1) {
                    arms.push((pattern, guard, g.expr(1)));
                }
                Expr::Match(Box::new(Match { scrutinee, arms }))
            } else {
                let [a, _, _] = choice.values();
                let cond = Cond::Choice(format!("{name} == {a}"));
                Expr::If(Box::new(cond), Box::new(g.expr(1)), Box::new(g.expr(1)))
            };
            result = Expr::Bin(BinOp::Add, Box::new(result), Box::new(part));
        }
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
        results.push(result);
    }
    g.generic = None;
    // A `&mut` parameter is written through (then differentiated with respect to its value
    // on entry, its tangent taken by value): once more at the end where the random
    // statements did not.
    for p in &params {
        if let ParamKind::Real(shape, Pass::MutRef) = &p.kind {
            if !assigns(&body, &p.name) {
                let index = match shape {
                    Shape::Array(n) => g.index(&ALen::Fixed(n.clone())),
                    _ => IExpr::Lit(g.rng.random_range(0..SLICE_MIN)),
                };
                let value = g.expr(1);
                body.push(Stmt::Assign(
                    Place::Index(p.name.clone(), vec![index]),
                    "+",
                    value,
                ));
            }
        }
    }
    let result = results.remove(0);
    // wrt: all numbers (no attribute argument), or a non-empty subset in any order.
    let reals: Vec<usize> = (0..params.len())
        .filter(|&i| {
            matches!(
                params[i].kind,
                ParamKind::Real(..) | ParamKind::Struct | ParamKind::Tuple(..)
            )
        })
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
        outputs: results,
        array: role.array,
        generics,
        method: role.method,
        reassociate: false,
        second_order: false,
        hessian: false,
    }
}

/// The program numbered `index` of the stream seeded by `seed`: the same pair always
/// gives the same program.
pub fn program(seed: u64, index: u64) -> Program {
    build(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15), None)
}

/// A program drawn from the stream `seed`; long (see [`long_program`]) if `long` gives
/// the operations of its function under test.
fn build(seed: u64, long: Option<usize>) -> Program {
    let mut g = Gen::new(
        seed,
        Config {
            value_ops_only: false,
        },
    );
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
    // One program in ten is in `f32`; one in seven takes a struct (of `f32` fields in an
    // `f32` program), with methods.
    let single = g.chance(0.1) && long.is_none();
    if g.chance(0.15) {
        g.structure = Some(random_struct(&mut g));
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
        let roll = g.rng.random_range(0..10);
        // Two numbers in a tuple, two or three in an array, or one.
        let role = Role {
            helper: true,
            outputs: match roll {
                0 | 1 => 2,
                4 => g.rng.random_range(2..4),
                _ => 1,
            },
            array: roll == 4,
            generic: (2..4).contains(&roll),
            method: false,
        };
        let f = random_function(&mut g, &format!("h{h}"), role);
        g.helpers.push(Helper {
            name: f.name.clone(),
            params: f.params.iter().map(|p| p.kind.clone()).collect(),
            outputs: 1 + f.outputs.len(),
            array: f.array,
            method: false,
        });
        helpers.push(f);
        g.consts = module_consts.clone();
    }
    let mut methods = Vec::new();
    if g.structure.is_some() {
        for k in 0..g.rng.random_range(0..3) {
            let role = Role {
                helper: true,
                outputs: 1,
                array: false,
                generic: false,
                method: true,
            };
            let mut f = random_function(&mut g, &format!("g{k}"), role);
            // Methods after the first may leave `self` out with `wrt(..)` (the first
            // differentiates it): callers still differentiate through them.
            let reals: Vec<usize> = (0..f.params.len())
                .filter(|&i| matches!(f.params[i].kind, ParamKind::Real(..)))
                .collect();
            if k > 0 && !reals.is_empty() && g.chance(0.5) {
                let mut subset: Vec<usize> =
                    reals.iter().copied().filter(|_| g.chance(0.6)).collect();
                if subset.is_empty() {
                    subset.push(reals[0]);
                }
                f.wrt = Some(subset);
            }
            g.helpers.push(Helper {
                name: f.name.clone(),
                params: f.params.iter().map(|p| p.kind.clone()).collect(),
                outputs: 1,
                array: false,
                method: true,
            });
            methods.push(f);
            g.consts = module_consts.clone();
        }
    }
    g.long = long;
    let mut main = random_function(
        &mut g,
        "f",
        Role {
            outputs: 1,
            ..Role::default()
        },
    );
    if main
        .params
        .iter()
        .any(|p| p.kind == ParamKind::Choice(Choice::Enum))
    {
        items.push(format!(
            "#[derive(Clone, Copy, Debug, PartialEq)]\npub enum {ENUM} {{ Add, Scale, Skip }}"
        ));
    }
    // One program in six has every function `#[grad(reassociate)]`, and a sum that its
    // gradient adds in lanes; the ordinary ones also a sample loop, whose gradient it
    // preaccumulates. Drawn last, so that the other programs are the same as before the
    // option was generated.
    if g.chance(1.0 / 6.0) {
        for f in helpers.iter_mut().chain(&mut methods) {
            f.reassociate = true;
        }
        main.reassociate = true;
        lanes_sum(&mut g, &mut main);
        if long.is_none() {
            sample_loop(&mut g, &mut main, &module_consts);
        }
    }
    // One program in six of those of `f64` numbers only is written generic over its float
    // type (drawn last, as the option above).
    let generic = !single
        && long.is_none()
        && g.structure.is_none()
        && methods.is_empty()
        && !g.pairs
        && g.chance(1.0 / 6.0);
    if g.pairs {
        items.extend(pair_items());
    }
    Program {
        items,
        helpers,
        main,
        slice_min: SLICE_MIN,
        structure: g.structure,
        methods,
        single,
        generic,
        long: long.is_some(),
    }
}

/// A straight-line program of `lets` over `inputs` scalar parameters, with at least
/// `nodes` operations, using only what both dynamic engines have (for `Value` against
/// `Tape`): the statements and the final expression.
pub fn graph(seed: u64, inputs: usize, nodes: usize) -> (Vec<Stmt>, Expr) {
    let mut g = Gen::new(
        seed,
        Config {
            value_ops_only: true,
        },
    );
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
