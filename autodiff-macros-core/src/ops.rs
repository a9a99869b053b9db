//! The table of supported operations: the one place that says what `#[grad]` can
//! differentiate and how. Lowering looks operations up here, code generation emits the
//! primal and the partials from here, and the guide's table (`src/guide/language.md`) is checked against it.

/// How an operation is written in user code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// A binary or unary operator: `x + y`, `-x`.
    Operator(&'static str),
    /// An inherent `f64` method: `x.tanh()` or `f64::tanh(x)`.
    Method,
    /// A method of the `F64Ext` trait: `x.relu()` or `F64Ext::relu(x)`.
    ExtMethod,
}

/// The type an argument must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arg {
    /// An `f64` that may carry a gradient.
    Real,
    /// An integer constant (`powi`'s exponent).
    Int,
}

/// The local partial derivative of an operation with respect to one `Real` argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partial {
    /// The constant 1: the adjoint passes through unchanged.
    One,
    /// The constant -1: the adjoint passes through negated.
    MinusOne,
    /// The primal value of argument `n` (`∂(x·y)/∂x = y`).
    Primal(usize),
    /// Computed by the rule: the `n`-th partial it returns.
    Rule(usize),
}

/// One supported operation.
#[derive(Debug)]
pub struct Op {
    /// The method name (`tanh`) or the operator's name (`add`).
    pub name: &'static str,
    /// How it is written.
    pub syntax: Syntax,
    /// Its arguments, the receiver first.
    pub args: &'static [Arg],
    /// The function in `autodiff::rules` that returns the value and the partials of every
    /// `Real` argument.
    pub rule: &'static str,
    /// For each `Real` argument, a rule returning `(value, that partial)` alone, used when
    /// it is the only argument that carries a gradient.
    pub rule_wrt_only: &'static [Option<&'static str>],
    /// The partial with respect to each `Real` argument.
    pub partials: &'static [Partial],
    /// The derivative in words, for the guide's table (built by a test).
    #[cfg_attr(not(test), allow(dead_code))]
    pub derivative: &'static str,
}

impl Op {
    /// Whether the partials come from calling the rule (rather than from the operands).
    pub fn calls_rule(&self) -> bool {
        self.partials.iter().any(|p| matches!(p, Partial::Rule(_)))
    }

    /// Whether a partial can be infinite or `NaN` where the value is finite, so that
    /// forward mode scales a tangent by it only where the tangent is not zero (see
    /// `autodiff_runtime::rules::through_edge`).
    pub fn has_edge(&self) -> bool {
        EDGES.contains(&self.name)
    }
}

/// The operations whose partial can be infinite or `NaN` where their value is finite:
/// `sqrt` and `cbrt` at 0, `asin` and `acos` at ±1, `acosh` at 1, `hypot` and `atan2` at
/// the origin, `powf` at a zero base.
const EDGES: &[&str] = &[
    "sqrt", "cbrt", "asin", "acos", "acosh", "hypot", "atan2", "powf",
];

use Arg::{Int, Real};
use Partial::{MinusOne, One, Primal, Rule};

const R1: &[Partial] = &[Rule(0)];
const R2: &[Partial] = &[Rule(0), Rule(1)];
const R3: &[Partial] = &[Rule(0), Rule(1), Rule(2)];

macro_rules! unary {
    ($name:literal, $syntax:expr, $derivative:literal) => {
        Op {
            name: $name,
            syntax: $syntax,
            args: &[Real],
            rule: $name,
            rule_wrt_only: &[],
            partials: R1,
            derivative: $derivative,
        }
    };
}

macro_rules! binary {
    ($name:literal, $derivative:literal) => {
        Op {
            name: $name,
            syntax: Syntax::Method,
            args: &[Real, Real],
            rule: $name,
            rule_wrt_only: &[],
            partials: R2,
            derivative: $derivative,
        }
    };
}

/// Every operation `#[grad]` differentiates.
pub const OPS: &[Op] = &[
    Op {
        name: "add",
        syntax: Syntax::Operator("+"),
        args: &[Real, Real],
        rule: "add",
        rule_wrt_only: &[],
        partials: &[One, One],
        derivative: "(1, 1)",
    },
    Op {
        name: "sub",
        syntax: Syntax::Operator("-"),
        args: &[Real, Real],
        rule: "sub",
        rule_wrt_only: &[],
        partials: &[One, MinusOne],
        derivative: "(1, -1)",
    },
    Op {
        name: "mul",
        syntax: Syntax::Operator("*"),
        args: &[Real, Real],
        rule: "mul",
        rule_wrt_only: &[],
        partials: &[Primal(1), Primal(0)],
        derivative: "(y, x)",
    },
    Op {
        name: "div",
        syntax: Syntax::Operator("/"),
        args: &[Real, Real],
        rule: "div",
        rule_wrt_only: &[],
        partials: R2,
        derivative: "(1/y, -x/y²)",
    },
    Op {
        name: "rem",
        syntax: Syntax::Operator("%"),
        args: &[Real, Real],
        rule: "rem",
        rule_wrt_only: &[],
        partials: R2,
        derivative: "(1, -q), q = (x - r)/y the truncated quotient",
    },
    Op {
        name: "neg",
        syntax: Syntax::Operator("-"),
        args: &[Real],
        rule: "neg",
        rule_wrt_only: &[],
        partials: &[MinusOne],
        derivative: "-1",
    },
    unary!("recip", Syntax::Method, "-1/x²"),
    Op {
        name: "powi",
        syntax: Syntax::Method,
        args: &[Real, Int],
        rule: "powi",
        rule_wrt_only: &[],
        partials: R1,
        derivative: "n·xⁿ⁻¹",
    },
    Op {
        name: "powf",
        syntax: Syntax::Method,
        args: &[Real, Real],
        rule: "powf",
        rule_wrt_only: &[Some("powf_wrt_base"), Some("powf_wrt_exp")],
        partials: R2,
        derivative: "(y·x^(y-1), xʸ·ln x)",
    },
    unary!("sqrt", Syntax::Method, "1/(2√x)"),
    unary!("cbrt", Syntax::Method, "1/(3∛x²)"),
    unary!("exp", Syntax::Method, "eˣ"),
    unary!("exp2", Syntax::Method, "2ˣ·ln 2"),
    unary!("exp_m1", Syntax::Method, "eˣ"),
    unary!("ln", Syntax::Method, "1/x"),
    unary!("ln_1p", Syntax::Method, "1/(1+x)"),
    unary!("log2", Syntax::Method, "1/(x·ln 2)"),
    unary!("log10", Syntax::Method, "1/(x·ln 10)"),
    binary!("log", "(1/(x·ln b), -log_b(x)/(b·ln b))"),
    unary!("sin", Syntax::Method, "cos x"),
    unary!("cos", Syntax::Method, "-sin x"),
    unary!("tan", Syntax::Method, "1 + tan²x"),
    unary!("asin", Syntax::Method, "1/√(1-x²)"),
    unary!("acos", Syntax::Method, "-1/√(1-x²)"),
    unary!("atan", Syntax::Method, "1/(1+x²)"),
    binary!("atan2", "(x/(x²+y²), -y/(x²+y²)) for y.atan2(x)"),
    unary!("sinh", Syntax::Method, "cosh x"),
    unary!("cosh", Syntax::Method, "sinh x"),
    unary!("tanh", Syntax::Method, "1 - tanh²x"),
    unary!("asinh", Syntax::Method, "1/√(x²+1)"),
    unary!("acosh", Syntax::Method, "1/√(x²-1)"),
    unary!("atanh", Syntax::Method, "1/(1-x²)"),
    unary!("abs", Syntax::Method, "sign x; abs'(0) = 0"),
    unary!(
        "relu",
        Syntax::ExtMethod,
        "1 if x > 0, else 0; relu'(0) = 0"
    ),
    unary!("sigmoid", Syntax::ExtMethod, "σ(x)·(1-σ(x))"),
    binary!("max", "(1, 0) if x >= y else (0, 1); a tie goes to x"),
    binary!("min", "(1, 0) if x <= y else (0, 1); a tie goes to x"),
    binary!("hypot", "(x/h, y/h)"),
    Op {
        name: "mul_add",
        syntax: Syntax::Method,
        args: &[Real, Real, Real],
        rule: "mul_add",
        rule_wrt_only: &[],
        partials: R3,
        derivative: "(a, x, 1) for x.mul_add(a, b)",
    },
    Op {
        name: "clamp",
        syntax: Syntax::Method,
        args: &[Real, Real, Real],
        rule: "clamp",
        rule_wrt_only: &[],
        partials: R3,
        derivative: "(1, 0, 0) inside [lo, hi] (ends included), else 1 for the bound hit",
    },
    unary!("to_degrees", Syntax::Method, "180/π"),
    unary!("to_radians", Syntax::Method, "π/180"),
    unary!("floor", Syntax::Method, "0"),
    unary!("ceil", Syntax::Method, "0"),
    unary!("round", Syntax::Method, "0"),
    unary!("trunc", Syntax::Method, "0"),
    unary!("signum", Syntax::Method, "0"),
    unary!("fract", Syntax::Method, "1"),
    binary!(
        "rem_euclid",
        "(1, -q), q = (x - r)/y the Euclidean quotient"
    ),
    binary!("div_euclid", "(0, 0)"),
    binary!(
        "copysign",
        "(1, 0) if x and y have the same sign bit, else (-1, 0)"
    ),
];

/// The tests of a float's class, `x.is_nan()`: `bool`s, with no derivative, allowed in
/// conditions.
pub const TESTS: &[&str] = &[
    "is_nan",
    "is_finite",
    "is_infinite",
    "is_normal",
    "is_subnormal",
    "is_sign_positive",
    "is_sign_negative",
];

/// The operator written `symbol` with `arity` operands, if supported.
pub fn operator(symbol: &str, arity: usize) -> Option<&'static Op> {
    OPS.iter().find(|op| {
        matches!(op.syntax, Syntax::Operator(s) if s == symbol) && op.args.len() == arity
    })
}

/// The method called `name`, if supported (inherent `f64` or `F64Ext`).
pub fn method(name: &str) -> Option<&'static Op> {
    OPS.iter().find(|op| !is_operator(op) && op.name == name)
}

fn is_operator(op: &Op) -> bool {
    matches!(op.syntax, Syntax::Operator(_))
}

/// The supported method names, for error messages.
pub fn method_names() -> String {
    OPS.iter()
        .filter(|op| !is_operator(op))
        .map(|op| op.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The table as Markdown, for the guide.
#[cfg(test)]
pub fn markdown_table() -> String {
    let mut table = String::from("| operation | written as | rule | local partials |\n");
    table.push_str("| --- | --- | --- | --- |\n");
    for op in OPS {
        let written = match op.syntax {
            Syntax::Operator(symbol) if op.args.len() == 1 => format!("`{symbol}x`"),
            Syntax::Operator(symbol) => format!("`x {symbol} y`"),
            Syntax::Method | Syntax::ExtMethod => {
                let others = ["y", "a", "b"];
                let args = if op.name == "powi" {
                    "n".to_string()
                } else if op.args.len() == 3 {
                    if op.name == "clamp" {
                        "lo, hi".to_string()
                    } else {
                        "a, b".to_string()
                    }
                } else {
                    others[..op.args.len() - 1].join(", ")
                };
                let ext = if op.syntax == Syntax::ExtMethod {
                    " (`F64Ext`)"
                } else {
                    ""
                };
                format!("`x.{}({args})`{ext}", op.name)
            }
        };
        table.push_str(&format!(
            "| {} | {} | `rules::{}` | {} |\n",
            op.name, written, op.rule, op.derivative
        ));
    }
    table
}
