//! `calc`: a tiny line-oriented language for trying out reverse-mode differentiation.
//!
//! ```text
//! # comment
//! VAR a = 2
//! VAR b = 3
//! EXPR (a + b) * a
//! GRAD
//! ```
//! prints
//! ```text
//! = 10
//! da = 7
//! db = 2
//! ```
//!
//! # Statements
//! One statement per line; blank lines and everything from a `#` to the end of a line are
//! ignored. Keywords are case-sensitive.
//! - `VAR name = number` declares the variable `name`, or sets it again. The number may
//!   carry a sign (`VAR w = -3`, `VAR eps = 1e-3`).
//! - `EXPR expression` evaluates the expression at the current values of the variables and
//!   prints `= value`.
//! - `GRAD` prints the gradient of the last `EXPR` with respect to every declared variable,
//!   in declaration order, one `d<name> = value` line each. The gradient is the one at the
//!   values the variables had **when that `EXPR` ran**: setting a variable again with `VAR`
//!   does not change it (run `EXPR` again for that). A variable declared after the `EXPR`
//!   gets 0, since the expression cannot depend on it.
//!
//! Numbers are printed with Rust's `{}` formatting of `f64` (`10`, `0.7071067811865476`).
//!
//! # Expressions
//! - numbers (`2`, `2.5`, `.5`, `1e-3`), variables, parentheses;
//! - `+ - * /`, unary `-` (and unary `+`), and `^`; precedence from loosest to tightest:
//!   `+ -`, then `* /`, then unary `-`, then `^`. So `-2^2` is `-4`; `^` is
//!   right-associative, so `2^3^2` is `512`. The exponent of `^` may itself start with a
//!   sign: `x^-2`.
//! - `x ^ n` with an exponent that evaluates to a constant integer (`2`, `-1`, `(1+1)`)
//!   uses `powi`; any other exponent, a real constant (`x^0.5`) or one that depends on a
//!   variable (`2^x`), uses `powf`.
//! - functions: see [`FUNCTIONS`]. `log` and `ln` are both the natural logarithm.
//!
//! Every declared variable is one leaf of a fresh [`Tape`] per `EXPR`, so a variable used
//! several times is one node whose gradient accumulates every use. Sub-expressions without
//! a variable are folded to constants and put nothing on the tape.
//!
//! # Errors
//! A [`CalcError`] carries the line and the column (both counted from 1, columns in
//! characters) of the offending token and says what is wrong: unknown variable or function,
//! unexpected token, malformed `VAR`, `GRAD` before any `EXPR`, a function applied outside
//! its domain (`log` of a number that is not positive, `sqrt` of a negative number, …). A
//! line that fails changes nothing: a line is evaluated completely before the
//! interpreter's state is updated and its output returned.
//!
//! ```
//! use autodiff_runtime::calc::Interpreter;
//!
//! let mut calc = Interpreter::new();
//! let out = calc.run_script("VAR a = 2\nVAR b = 3\nEXPR (a + b) * a\nGRAD\n").unwrap();
//! assert_eq!(out, "= 10\nda = 7\ndb = 2\n");
//!
//! let err = calc.run_line("EXPR a + c", 5).unwrap_err();
//! assert_eq!((err.line, err.column), (5, 10));
//! assert_eq!(err.to_string(), "line 5, column 10: unknown variable `c`");
//! ```

use std::fmt;

use crate::{rules, Tape, Var};

/// Parentheses, unary signs and `^` may nest this deep in one expression.
pub const MAX_NESTING: usize = 256;

/// An error in a `calc` program, with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalcError {
    /// The line, counted from 1.
    pub line: usize,
    /// The column of the offending token, counted from 1, in characters.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for CalcError {
    /// `line L, column C: message`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for CalcError {}

/// The functions an expression may call, with their number of arguments.
///
/// `log` and `ln` are the natural logarithm. `log`, `ln`, `log2` and `log10` of a number
/// that is not positive, `sqrt` of a negative number and `asin`/`acos` outside `[-1, 1]`
/// are errors.
pub const FUNCTIONS: &[(&str, usize)] = &[
    ("tanh", 1),
    ("relu", 1),
    ("sigmoid", 1),
    ("exp", 1),
    ("exp2", 1),
    ("log", 1),
    ("ln", 1),
    ("log2", 1),
    ("log10", 1),
    ("sqrt", 1),
    ("cbrt", 1),
    ("sin", 1),
    ("cos", 1),
    ("tan", 1),
    ("asin", 1),
    ("acos", 1),
    ("atan", 1),
    ("sinh", 1),
    ("cosh", 1),
    ("abs", 1),
    ("max", 2),
    ("min", 2),
    ("atan2", 2),
    ("hypot", 2),
];

/// A `calc` interpreter: the declared variables and the result of the last `EXPR`.
///
/// Feed it a whole program with [`run_script`](Self::run_script), or one line at a time
/// with [`run_line`](Self::run_line) (what an interactive prompt does).
#[derive(Debug, Clone, Default)]
pub struct Interpreter {
    /// Declared variables and their current values, in declaration order.
    variables: Vec<(String, f64)>,
    /// The last successful `EXPR`.
    last: Option<Evaluation>,
}

/// The result of one `EXPR`.
#[derive(Debug, Clone)]
struct Evaluation {
    value: f64,
    /// One partial per variable declared when the `EXPR` ran, in declaration order.
    gradient: Vec<f64>,
}

impl Interpreter {
    /// An interpreter with no variables and no `EXPR` yet.
    #[must_use]
    pub fn new() -> Interpreter {
        Interpreter::default()
    }

    /// Runs one line (`line_no` is the line number used in errors) and returns what it
    /// prints, one string per output line, without line terminators: nothing for a blank
    /// line, a comment or a `VAR`, `= value` for an `EXPR`, the `d<name> = value` lines
    /// for a `GRAD`.
    ///
    /// # Errors
    /// A [`CalcError`] at `line_no` if the line is malformed or cannot be evaluated; the
    /// interpreter is then left exactly as it was.
    pub fn run_line(&mut self, line: &str, line_no: usize) -> Result<Vec<String>, CalcError> {
        let error = |column: usize, message: String| CalcError {
            line: line_no,
            column,
            message,
        };
        let tokens = lex(line).map_err(|(column, message)| error(column, message))?;
        let mut parser = Parser {
            tokens: &tokens,
            pos: 0,
            end_column: line.chars().count() + 1,
            variables: &self.variables,
            depth: 0,
        };
        let statement = parser
            .statement()
            .map_err(|(column, message)| error(column, message))?;
        match statement {
            Statement::Empty => Ok(Vec::new()),
            Statement::Var { name, value } => {
                match self.variables.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, slot)) => *slot = value,
                    None => self.variables.push((name, value)),
                }
                Ok(Vec::new())
            }
            Statement::Expr(program) => {
                let values: Vec<f64> = self.variables.iter().map(|&(_, v)| v).collect();
                let evaluation = evaluate(&program, &values)
                    .map_err(|(column, message)| error(column, message))?;
                let output = vec![format!("= {}", evaluation.value)];
                self.last = Some(evaluation);
                Ok(output)
            }
            Statement::Grad { column } => {
                let Some(last) = &self.last else {
                    return Err(error(
                        column,
                        "GRAD before any EXPR: there is no expression to differentiate".into(),
                    ));
                };
                Ok(self
                    .variables
                    .iter()
                    .enumerate()
                    .map(|(i, (name, _))| {
                        let partial = last.gradient.get(i).copied().unwrap_or(0.0);
                        format!("d{name} = {partial}")
                    })
                    .collect())
            }
        }
    }

    /// Runs a whole program, numbering its lines from 1, and returns everything it prints,
    /// each line terminated by `\n`.
    ///
    /// # Errors
    /// The first [`CalcError`]; the output of the lines before it is dropped (call
    /// [`run_line`](Self::run_line) line by line to keep it). Lines before the failing one
    /// have taken effect.
    pub fn run_script(&mut self, source: &str) -> Result<String, CalcError> {
        let mut output = String::new();
        for (index, line) in source.lines().enumerate() {
            for out in self.run_line(line, index + 1)? {
                output.push_str(&out);
                output.push('\n');
            }
        }
        Ok(output)
    }

    /// The current value of a declared variable.
    #[must_use]
    pub fn variable(&self, name: &str) -> Option<f64> {
        self.variables
            .iter()
            .find(|(n, _)| n == name)
            .map(|&(_, v)| v)
    }

    /// The declared variables and their current values, in declaration order.
    pub fn variables(&self) -> impl Iterator<Item = (&str, f64)> + '_ {
        self.variables.iter().map(|(n, v)| (n.as_str(), *v))
    }

    /// The value of the last successful `EXPR`, if any.
    #[must_use]
    pub fn last_value(&self) -> Option<f64> {
        self.last.as_ref().map(|e| e.value)
    }

    /// The gradient of the last successful `EXPR` with respect to every declared variable,
    /// in declaration order: what `GRAD` prints.
    #[must_use]
    pub fn last_gradient(&self) -> Option<Vec<(&str, f64)>> {
        let last = self.last.as_ref()?;
        Some(
            self.variables
                .iter()
                .enumerate()
                .map(|(i, (n, _))| (n.as_str(), last.gradient.get(i).copied().unwrap_or(0.0)))
                .collect(),
        )
    }
}

// ---------------------------------------------------------------------------------------
// Lexer

/// An error before it is given its line: (column, message).
type Located = (usize, String);

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Number(f64),
    Ident(String),
    Plus,
    Minus,
    Star,
    Slash,
    Caret,
    LParen,
    RParen,
    Comma,
    Equals,
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    /// The token as written.
    text: String,
    column: usize,
}

/// Splits a line into tokens, dropping whitespace and a trailing `#` comment.
fn lex(line: &str) -> Result<Vec<Token>, Located> {
    let chars: Vec<char> = line.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let column = i + 1;
        if c == '#' {
            break;
        }
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let tok = if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            i = scan_number(&chars, i);
            let text: String = chars[start..i].iter().collect();
            let value = text
                .parse::<f64>()
                .map_err(|_| (column, format!("malformed number `{text}`")))?;
            Tok::Number(value)
        } else if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            Tok::Ident(chars[start..i].iter().collect())
        } else {
            i += 1;
            match c {
                '+' => Tok::Plus,
                '-' => Tok::Minus,
                '*' => Tok::Star,
                '/' => Tok::Slash,
                '^' => Tok::Caret,
                '(' => Tok::LParen,
                ')' => Tok::RParen,
                ',' => Tok::Comma,
                '=' => Tok::Equals,
                _ => return Err((column, format!("unexpected character `{c}`"))),
            }
        };
        tokens.push(Token {
            tok,
            text: chars[start..i].iter().collect(),
            column,
        });
    }
    Ok(tokens)
}

/// The end of the number starting at `i`: digits, an optional fraction, an optional
/// exponent. A dangling `e` (as in `2e`) is kept so that the number is reported malformed.
fn scan_number(chars: &[char], mut i: usize) -> usize {
    let digits = |mut i: usize| {
        while i < chars.len() && chars[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    i = digits(i);
    if chars.get(i) == Some(&'.') {
        i = digits(i + 1);
    }
    if matches!(chars.get(i), Some('e' | 'E')) {
        i += 1;
        if matches!(chars.get(i), Some('+' | '-')) {
            i += 1;
        }
        i = digits(i);
        // `2e`, `2e+`: swallow trailing letters too, so the whole word is reported.
        while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
            i += 1;
        }
    }
    i
}

// ---------------------------------------------------------------------------------------
// Parser: statements, and expressions compiled to postfix code

enum Statement {
    Empty,
    Var { name: String, value: f64 },
    Expr(Vec<Op>),
    Grad { column: usize },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Binary {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Func {
    Tanh,
    Relu,
    Sigmoid,
    Exp,
    Exp2,
    Ln,
    Log2,
    Log10,
    Sqrt,
    Cbrt,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Abs,
    Max,
    Min,
    Atan2,
    Hypot,
}

impl Func {
    fn from_name(name: &str) -> Option<Func> {
        Some(match name {
            "tanh" => Func::Tanh,
            "relu" => Func::Relu,
            "sigmoid" => Func::Sigmoid,
            "exp" => Func::Exp,
            "exp2" => Func::Exp2,
            "log" | "ln" => Func::Ln,
            "log2" => Func::Log2,
            "log10" => Func::Log10,
            "sqrt" => Func::Sqrt,
            "cbrt" => Func::Cbrt,
            "sin" => Func::Sin,
            "cos" => Func::Cos,
            "tan" => Func::Tan,
            "asin" => Func::Asin,
            "acos" => Func::Acos,
            "atan" => Func::Atan,
            "sinh" => Func::Sinh,
            "cosh" => Func::Cosh,
            "abs" => Func::Abs,
            "max" => Func::Max,
            "min" => Func::Min,
            "atan2" => Func::Atan2,
            "hypot" => Func::Hypot,
            _ => return None,
        })
    }

    fn arity(self) -> usize {
        match self {
            Func::Max | Func::Min | Func::Atan2 | Func::Hypot => 2,
            _ => 1,
        }
    }
}

/// One instruction of an expression in postfix order.
#[derive(Debug, Clone, PartialEq)]
enum Op {
    Const(f64),
    /// A declared variable, by its index in declaration order.
    Load(usize),
    Neg,
    Binary(Binary),
    /// A function call; `name` and `column` are where it was written, for domain errors.
    Call {
        func: Func,
        name: String,
        column: usize,
    },
}

struct Parser<'a> {
    tokens: &'a [Token],
    pos: usize,
    /// The column just past the end of the line, where "end of line" errors point.
    end_column: usize,
    variables: &'a [(String, f64)],
    depth: usize,
}

const KEYWORDS: [&str; 3] = ["VAR", "EXPR", "GRAD"];

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn next(&mut self) -> Option<&Token> {
        let token = self.tokens.get(self.pos);
        self.pos += 1;
        token
    }

    /// The column of the next token, or of the end of the line.
    fn column(&self) -> usize {
        self.peek().map_or(self.end_column, |t| t.column)
    }

    /// How the next token is called in messages.
    fn describe_next(&self) -> String {
        match self.peek() {
            None => "end of line".into(),
            Some(Token {
                tok: Tok::Number(_),
                text,
                ..
            }) => format!("number `{text}`"),
            Some(t) => format!("`{}`", t.text),
        }
    }

    fn unexpected(&self, expected: &str) -> Located {
        (
            self.column(),
            format!("expected {expected}, found {}", self.describe_next()),
        )
    }

    fn at_end(&self) -> bool {
        self.pos >= self.tokens.len()
    }

    fn expect_end(&self, after: &str) -> Result<(), Located> {
        if self.at_end() {
            Ok(())
        } else {
            Err((
                self.column(),
                format!("unexpected {} after {after}", self.describe_next()),
            ))
        }
    }

    fn statement(&mut self) -> Result<Statement, Located> {
        let Some(first) = self.next().cloned() else {
            return Ok(Statement::Empty);
        };
        let keyword = match &first.tok {
            Tok::Ident(word) => word.as_str(),
            _ => "",
        };
        match keyword {
            "VAR" => self.var_statement(),
            "EXPR" => {
                if self.at_end() {
                    return Err((self.end_column, "expected an expression after EXPR".into()));
                }
                let mut code = Vec::new();
                self.expression(&mut code)?;
                self.expect_end("the expression")?;
                Ok(Statement::Expr(code))
            }
            "GRAD" => {
                self.expect_end("GRAD")?;
                Ok(Statement::Grad {
                    column: first.column,
                })
            }
            _ => {
                let hint = KEYWORDS
                    .iter()
                    .find(|k| k.eq_ignore_ascii_case(keyword))
                    .map(|k| format!(" (keywords are case-sensitive: write `{k}`)"))
                    .unwrap_or_default();
                Err((
                    first.column,
                    format!(
                        "expected VAR, EXPR or GRAD at the start of the line, found `{}`{hint}",
                        first.text
                    ),
                ))
            }
        }
    }

    fn var_statement(&mut self) -> Result<Statement, Located> {
        let name = match self.peek() {
            Some(Token {
                tok: Tok::Ident(name),
                column,
                ..
            }) => {
                if KEYWORDS.contains(&name.as_str()) {
                    return Err((
                        *column,
                        format!("`{name}` is a keyword, not a variable name"),
                    ));
                }
                if Func::from_name(name).is_some() {
                    return Err((
                        *column,
                        format!("`{name}` is a function, it cannot be a variable name"),
                    ));
                }
                name.clone()
            }
            _ => return Err(self.unexpected("a variable name after VAR")),
        };
        self.pos += 1;
        if self.peek().map(|t| &t.tok) != Some(&Tok::Equals) {
            return Err(self.unexpected(&format!("`=` after `VAR {name}`")));
        }
        self.pos += 1;
        let negative = match self.peek().map(|t| &t.tok) {
            Some(Tok::Minus) => {
                self.pos += 1;
                true
            }
            Some(Tok::Plus) => {
                self.pos += 1;
                false
            }
            _ => false,
        };
        let value = match self.peek() {
            Some(Token {
                tok: Tok::Number(value),
                ..
            }) => *value,
            _ => return Err(self.unexpected(&format!("a number after `VAR {name} =`"))),
        };
        self.pos += 1;
        self.expect_end("the number (VAR takes a single, optionally signed, number)")?;
        let value = if negative { -value } else { value };
        Ok(Statement::Var { name, value })
    }

    /// Enters one level of nesting (parenthesis, unary sign, exponent, call).
    fn nest(&mut self) -> Result<(), Located> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err((
                self.column(),
                format!("expression nested too deeply (more than {MAX_NESTING} levels)"),
            ));
        }
        Ok(())
    }

    /// expression := term (('+' | '-') term)*
    fn expression(&mut self, code: &mut Vec<Op>) -> Result<(), Located> {
        self.term(code)?;
        loop {
            let op = match self.peek().map(|t| &t.tok) {
                Some(Tok::Plus) => Binary::Add,
                Some(Tok::Minus) => Binary::Sub,
                _ => return Ok(()),
            };
            self.pos += 1;
            self.term(code)?;
            code.push(Op::Binary(op));
        }
    }

    /// term := unary (('*' | '/') unary)*
    fn term(&mut self, code: &mut Vec<Op>) -> Result<(), Located> {
        self.unary(code)?;
        loop {
            let op = match self.peek().map(|t| &t.tok) {
                Some(Tok::Star) => Binary::Mul,
                Some(Tok::Slash) => Binary::Div,
                _ => return Ok(()),
            };
            self.pos += 1;
            self.unary(code)?;
            code.push(Op::Binary(op));
        }
    }

    /// unary := ('-' | '+') unary | power
    fn unary(&mut self, code: &mut Vec<Op>) -> Result<(), Located> {
        let sign = match self.peek().map(|t| &t.tok) {
            Some(Tok::Minus) => Some(true),
            Some(Tok::Plus) => Some(false),
            _ => None,
        };
        match sign {
            None => self.power(code),
            Some(negate) => {
                self.pos += 1;
                self.nest()?;
                self.unary(code)?;
                self.depth -= 1;
                if negate {
                    code.push(Op::Neg);
                }
                Ok(())
            }
        }
    }

    /// power := primary ('^' unary)?   (right-associative, binds tighter than unary minus)
    fn power(&mut self, code: &mut Vec<Op>) -> Result<(), Located> {
        self.primary(code)?;
        if self.peek().map(|t| &t.tok) == Some(&Tok::Caret) {
            self.pos += 1;
            self.nest()?;
            self.unary(code)?;
            self.depth -= 1;
            code.push(Op::Binary(Binary::Pow));
        }
        Ok(())
    }

    /// primary := number | variable | function '(' arguments ')' | '(' expression ')'
    fn primary(&mut self, code: &mut Vec<Op>) -> Result<(), Located> {
        let Some(token) = self.peek().cloned() else {
            return Err(self.unexpected("an expression"));
        };
        match token.tok {
            Tok::Number(value) => {
                self.pos += 1;
                code.push(Op::Const(value));
                Ok(())
            }
            Tok::LParen => {
                self.pos += 1;
                self.nest()?;
                self.expression(code)?;
                self.depth -= 1;
                self.close_paren(token.column)
            }
            Tok::Ident(name) => {
                self.pos += 1;
                let is_call = self.peek().map(|t| &t.tok) == Some(&Tok::LParen);
                if is_call {
                    self.call(&name, token.column, code)
                } else if let Some(index) = self.variables.iter().position(|(n, _)| *n == name) {
                    code.push(Op::Load(index));
                    Ok(())
                } else if Func::from_name(&name).is_some() {
                    Err((
                        token.column,
                        format!("function `{name}` needs its argument in parentheses: `{name}(x)`"),
                    ))
                } else {
                    Err((token.column, format!("unknown variable `{name}`")))
                }
            }
            _ => Err(self.unexpected("an expression")),
        }
    }

    fn close_paren(&mut self, open_column: usize) -> Result<(), Located> {
        if self.peek().map(|t| &t.tok) == Some(&Tok::RParen) {
            self.pos += 1;
            Ok(())
        } else {
            let (column, message) =
                self.unexpected(&format!("`)` to close the `(` at column {open_column}"));
            Err((column, message))
        }
    }

    /// A call `name(arg, …)`; the next token is the `(`.
    fn call(&mut self, name: &str, column: usize, code: &mut Vec<Op>) -> Result<(), Located> {
        let Some(func) = Func::from_name(name) else {
            let known: Vec<&str> = FUNCTIONS.iter().map(|&(n, _)| n).collect();
            return Err((
                column,
                format!("unknown function `{name}` (known: {})", known.join(", ")),
            ));
        };
        let open_column = self.column();
        self.pos += 1;
        self.nest()?;
        let mut count = 0;
        if self.peek().map(|t| &t.tok) != Some(&Tok::RParen) {
            loop {
                self.expression(code)?;
                count += 1;
                if self.peek().map(|t| &t.tok) == Some(&Tok::Comma) {
                    self.pos += 1;
                } else {
                    break;
                }
            }
        }
        self.depth -= 1;
        self.close_paren(open_column)?;
        if count != func.arity() {
            let plural = if func.arity() == 1 { "" } else { "s" };
            return Err((
                column,
                format!(
                    "`{name}` takes {} argument{plural}, found {count}",
                    func.arity()
                ),
            ));
        }
        code.push(Op::Call {
            func,
            name: name.to_string(),
            column,
        });
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------
// Evaluation on a Tape

/// An operand: a constant (no gradient, not on the tape) or a node of the tape.
#[derive(Clone, Copy)]
enum Val<'t> {
    Const(f64),
    Node(Var<'t>),
}

impl<'t> Val<'t> {
    fn value(self) -> f64 {
        match self {
            Val::Const(c) => c,
            Val::Node(v) => v.value(),
        }
    }

    fn node(self, tape: &'t Tape) -> Var<'t> {
        match self {
            Val::Const(c) => tape.var(c),
            Val::Node(v) => v,
        }
    }
}

/// Runs postfix `code` on a fresh tape whose leaves are the variables (`values`, in
/// declaration order), and returns the value and the gradient with respect to every leaf.
fn evaluate(code: &[Op], values: &[f64]) -> Result<Evaluation, Located> {
    let tape = Tape::new();
    let leaves: Vec<Var<'_>> = values.iter().map(|&v| tape.var(v)).collect();
    let mut stack: Vec<Val<'_>> = Vec::new();
    for op in code {
        let result = match op {
            Op::Const(c) => Val::Const(*c),
            Op::Load(index) => Val::Node(leaves[*index]),
            Op::Neg => match pop(&mut stack) {
                Val::Const(c) => Val::Const(rules::neg(c).0),
                Val::Node(v) => Val::Node(-v),
            },
            Op::Binary(op) => {
                let right = pop(&mut stack);
                let left = pop(&mut stack);
                binary(&tape, *op, left, right)
            }
            Op::Call { func, name, column } => {
                let mut args = [Val::Const(0.0); 2];
                for slot in args[..func.arity()].iter_mut().rev() {
                    *slot = pop(&mut stack);
                }
                check_domain(*func, args[0].value())
                    .map_err(|what| (*column, format!("{name} of {what}")))?;
                call(&tape, *func, args[0], args[1])
            }
        };
        stack.push(result);
    }
    let result = pop(&mut stack);
    debug_assert!(stack.is_empty(), "the parser emits balanced code");
    Ok(match result {
        Val::Const(value) => Evaluation {
            value,
            gradient: vec![0.0; values.len()],
        },
        Val::Node(output) => {
            let gradient = output.gradient();
            Evaluation {
                value: output.value(),
                gradient: leaves.iter().map(|&leaf| gradient.wrt(leaf)).collect(),
            }
        }
    })
}

fn pop<'t>(stack: &mut Vec<Val<'t>>) -> Val<'t> {
    stack.pop().expect("the parser emits balanced code")
}

/// `Ok` if `func` is defined at `x`, else a description of the bad argument.
fn check_domain(func: Func, x: f64) -> Result<(), String> {
    match func {
        Func::Ln | Func::Log2 | Func::Log10 if x <= 0.0 => Err(format!(
            "a non-positive number ({x}): the argument must be positive"
        )),
        Func::Sqrt if x < 0.0 => Err(format!(
            "a negative number ({x}): the argument must not be negative"
        )),
        Func::Asin | Func::Acos if !(-1.0..=1.0).contains(&x) => {
            Err(format!("a number outside [-1, 1] ({x})"))
        }
        _ => Ok(()),
    }
}

/// `left op right`. Constants are folded with the same rules the tape uses.
fn binary<'t>(tape: &'t Tape, op: Binary, left: Val<'t>, right: Val<'t>) -> Val<'t> {
    use Val::{Const, Node};
    match (op, left, right) {
        (Binary::Add, Const(a), Const(b)) => Const(rules::add(a, b).0),
        (Binary::Add, Node(a), Const(b)) => Node(a + b),
        (Binary::Add, Const(a), Node(b)) => Node(a + b),
        (Binary::Add, Node(a), Node(b)) => Node(a + b),
        (Binary::Sub, Const(a), Const(b)) => Const(rules::sub(a, b).0),
        (Binary::Sub, Node(a), Const(b)) => Node(a - b),
        (Binary::Sub, Const(a), Node(b)) => Node(a - b),
        (Binary::Sub, Node(a), Node(b)) => Node(a - b),
        (Binary::Mul, Const(a), Const(b)) => Const(rules::mul(a, b).0),
        (Binary::Mul, Node(a), Const(b)) => Node(a * b),
        (Binary::Mul, Const(a), Node(b)) => Node(a * b),
        (Binary::Mul, Node(a), Node(b)) => Node(a * b),
        (Binary::Div, Const(a), Const(b)) => Const(rules::div(a, b).0),
        (Binary::Div, Node(a), Const(b)) => Node(a / b),
        (Binary::Div, Const(a), Node(b)) => Node(a / b),
        (Binary::Div, Node(a), Node(b)) => Node(a / b),
        (Binary::Pow, base, Const(exponent)) => match integer_exponent(exponent) {
            Some(n) => match base {
                Const(b) => Const(rules::powi(b, n).0),
                Node(b) => Node(b.powi(n)),
            },
            None => match base {
                Const(b) => Const(rules::powf(b, exponent).0),
                Node(b) => Node(b.powf(exponent)),
            },
        },
        (Binary::Pow, base, Node(exponent)) => Node(base.node(tape).powf(exponent)),
    }
}

/// `Some(n)` if `x` is an integer that fits `powi`.
fn integer_exponent(x: f64) -> Option<i32> {
    if x.fract() == 0.0 && x >= f64::from(i32::MIN) && x <= f64::from(i32::MAX) {
        // In range and integral, so the conversion is exact.
        Some(x as i32)
    } else {
        None
    }
}

/// `func(x)` or `func(x, y)`.
fn call<'t>(tape: &'t Tape, func: Func, x: Val<'t>, y: Val<'t>) -> Val<'t> {
    if func.arity() == 2 {
        if let (Val::Const(a), Val::Const(b)) = (x, y) {
            return Val::Const(match func {
                Func::Max => rules::max(a, b).0,
                Func::Min => rules::min(a, b).0,
                Func::Atan2 => rules::atan2(a, b).0,
                _ => rules::hypot(a, b).0,
            });
        }
        let (a, b) = (x.node(tape), y.node(tape));
        return Val::Node(match func {
            Func::Max => a.max(b),
            Func::Min => a.min(b),
            Func::Atan2 => a.atan2(b),
            _ => a.hypot(b),
        });
    }
    match x {
        Val::Const(c) => Val::Const(unary_value(func, c)),
        Val::Node(v) => Val::Node(match func {
            Func::Tanh => v.tanh(),
            Func::Relu => v.relu(),
            Func::Sigmoid => v.sigmoid(),
            Func::Exp => v.exp(),
            Func::Exp2 => v.exp2(),
            Func::Ln => v.ln(),
            Func::Log2 => v.log2(),
            Func::Log10 => v.log10(),
            Func::Sqrt => v.sqrt(),
            Func::Cbrt => v.cbrt(),
            Func::Sin => v.sin(),
            Func::Cos => v.cos(),
            Func::Tan => v.tan(),
            Func::Asin => v.asin(),
            Func::Acos => v.acos(),
            Func::Atan => v.atan(),
            Func::Sinh => v.sinh(),
            Func::Cosh => v.cosh(),
            Func::Abs => v.abs(),
            Func::Max | Func::Min | Func::Atan2 | Func::Hypot => unreachable!("binary"),
        }),
    }
}

/// The value of a one-argument function at a constant, from the same rule the tape uses.
fn unary_value(func: Func, x: f64) -> f64 {
    let rule: fn(f64) -> (f64, f64) = match func {
        Func::Tanh => rules::tanh,
        Func::Relu => rules::relu,
        Func::Sigmoid => rules::sigmoid,
        Func::Exp => rules::exp,
        Func::Exp2 => rules::exp2,
        Func::Ln => rules::ln,
        Func::Log2 => rules::log2,
        Func::Log10 => rules::log10,
        Func::Sqrt => rules::sqrt,
        Func::Cbrt => rules::cbrt,
        Func::Sin => rules::sin,
        Func::Cos => rules::cos,
        Func::Tan => rules::tan,
        Func::Asin => rules::asin,
        Func::Acos => rules::acos,
        Func::Atan => rules::atan,
        Func::Sinh => rules::sinh,
        Func::Cosh => rules::cosh,
        Func::Abs => rules::abs,
        Func::Max | Func::Min | Func::Atan2 | Func::Hypot => unreachable!("binary"),
    };
    rule(x).0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(source: &str) -> String {
        Interpreter::new()
            .run_script(source)
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn error(source: &str) -> (usize, usize, String) {
        let e = Interpreter::new()
            .run_script(source)
            .expect_err("the script should fail");
        (e.line, e.column, e.message)
    }

    #[test]
    fn the_documented_example() {
        let out = run("# comment\nVAR a = 2\nVAR b = 3\nEXPR (a + b) * a\nGRAD\n");
        assert_eq!(out, "= 10\nda = 7\ndb = 2\n");
    }

    #[test]
    fn blank_lines_comments_and_whitespace_are_ignored() {
        let out = run("\n   \n# only a comment\n\tVAR x = 3   # trailing comment\nEXPR x*x#c\n");
        assert_eq!(out, "= 9\n");
    }

    #[test]
    fn var_accepts_signed_numbers_and_can_be_set_again() {
        let mut calc = Interpreter::new();
        calc.run_script("VAR a = -2.5\nVAR b = +1e-3\nVAR c = .5\nVAR a = 4")
            .unwrap();
        let vars: Vec<_> = calc.variables().collect();
        assert_eq!(vars, [("a", 4.0), ("b", 1e-3), ("c", 0.5)]);
        assert_eq!(calc.variable("b"), Some(1e-3));
        assert_eq!(calc.variable("d"), None);
    }

    #[test]
    fn precedence_and_associativity() {
        let cases = [
            ("1 + 2 * 3", 7.0),
            ("(1 + 2) * 3", 9.0),
            ("8 - 3 - 2", 3.0),
            ("16 / 4 / 2", 2.0),
            ("-2^2", -4.0),
            ("(-2)^2", 4.0),
            ("2^3^2", 512.0),
            ("2^-1", 0.5),
            ("- - 3", 3.0),
            ("+3 - -3", 6.0),
            ("2 * -3", -6.0),
            ("-2 * 3 ^ 2", -18.0),
            ("4^0.5", 2.0),
            ("2^(1+1)", 4.0),
        ];
        for (expr, expected) in cases {
            let out = run(&format!("EXPR {expr}"));
            assert_eq!(out, format!("= {expected}\n"), "{expr}");
        }
    }

    #[test]
    fn numbers_print_with_rust_formatting() {
        assert_eq!(run("EXPR 10"), "= 10\n");
        assert_eq!(run("EXPR 1/2^0.5"), format!("= {}\n", 1.0 / 2f64.powf(0.5)));
        assert_eq!(run("EXPR 1/0"), "= inf\n");
    }

    #[test]
    fn a_variable_used_several_times_accumulates() {
        let out = run("VAR x = 3\nEXPR x * x * x\nGRAD");
        assert_eq!(out, "= 27\ndx = 27\n");
    }

    #[test]
    fn grad_uses_the_values_of_its_expr() {
        let out = run("VAR x = 3\nEXPR x^2\nVAR x = 10\nVAR y = 1\nGRAD\nEXPR x^2\nGRAD");
        assert_eq!(out, "= 9\ndx = 6\ndy = 0\n= 100\ndx = 20\ndy = 0\n");
    }

    #[test]
    fn exponent_kinds() {
        // Integral constant exponents use powi, the others powf: both differentiate.
        let out = run("VAR x = 2\nEXPR x^3 + x^-1 + x^0.5\nGRAD");
        let value = 2f64.powi(3) + 2f64.powi(-1) + 2f64.powf(0.5);
        let d = 3.0 * 4.0 - 0.25 + 0.5 * 2f64.powf(-0.5);
        assert_eq!(out, format!("= {value}\ndx = {d}\n"));
        let out = run("VAR y = 3\nEXPR 2^y\nGRAD");
        assert_eq!(out, format!("= 8\ndy = {}\n", 8.0 * 2f64.ln()));
    }

    #[test]
    fn functions() {
        let out =
            run("VAR x = 0.5\nEXPR tanh(x) + relu(x) + exp(x) + log(x) + ln(x) + sqrt(x)\nGRAD");
        let x = 0.5f64;
        let value = x.tanh() + x + x.exp() + x.ln() + x.ln() + x.sqrt();
        let d = (1.0 - x.tanh() * x.tanh()) + 1.0 + x.exp() + 2.0 / x + 0.5 / x.sqrt();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], format!("= {value}"));
        let got: f64 = lines[1].strip_prefix("dx = ").unwrap().parse().unwrap();
        assert!((got - d).abs() < 1e-12, "{got} vs {d}");
        assert_eq!(
            run("VAR x = 1\nVAR y = 2\nEXPR max(x, y) * 10 + min(x, y)\nGRAD"),
            "= 21\ndx = 1\ndy = 10\n"
        );
    }

    #[test]
    fn a_constant_expression_has_a_zero_gradient() {
        assert_eq!(run("VAR a = 1\nEXPR 2 * 3\nGRAD"), "= 6\nda = 0\n");
    }

    #[test]
    fn errors_carry_line_and_column() {
        assert_eq!(
            error("VAR a = 1\nEXPR a + b"),
            (2, 10, "unknown variable `b`".into())
        );
        let (line, column, message) = error("EXPR foo(1)");
        assert_eq!((line, column), (1, 6));
        assert!(message.starts_with("unknown function `foo`"), "{message}");
        assert_eq!(
            error("EXPR 1 + * 2"),
            (1, 10, "expected an expression, found `*`".into())
        );
        assert_eq!(
            error("EXPR (1 + 2"),
            (
                1,
                12,
                "expected `)` to close the `(` at column 6, found end of line".into()
            )
        );
        assert_eq!(
            error("EXPR 1 2"),
            (1, 8, "unexpected number `2` after the expression".into())
        );
        assert_eq!(
            error("VAR x = -1\nEXPR log(x)"),
            (
                2,
                6,
                "log of a non-positive number (-1): the argument must be positive".into()
            )
        );
        assert_eq!(
            error("VAR a = 1\nGRAD"),
            (
                2,
                1,
                "GRAD before any EXPR: there is no expression to differentiate".into()
            )
        );
        assert_eq!(error("VAR = 2").1, 5);
        assert_eq!(error("VAR a 2").1, 7);
        assert_eq!(error("VAR a = b").1, 9);
        assert_eq!(error("VAR a = 2 3").1, 11);
        assert_eq!(error("EXPR 1 $ 2").1, 8);
        assert!(error("var a = 1").2.contains("write `VAR`"));
    }

    #[test]
    fn a_failing_line_changes_nothing() {
        let mut calc = Interpreter::new();
        calc.run_script("VAR x = 2\nEXPR x^2").unwrap();
        assert!(calc.run_line("EXPR log(-x)", 3).is_err());
        assert!(calc.run_line("VAR x = 1 1", 4).is_err());
        assert_eq!(calc.last_value(), Some(4.0));
        assert_eq!(calc.variable("x"), Some(2.0));
        assert_eq!(calc.run_line("GRAD", 5).unwrap(), ["dx = 4"]);
    }

    #[test]
    fn nesting_is_limited_instead_of_overflowing_the_stack() {
        let deep = format!("EXPR {}1{}", "(".repeat(10_000), ")".repeat(10_000));
        let (line, _, message) = error(&deep);
        assert_eq!(line, 1);
        assert!(message.contains("nested too deeply"), "{message}");
        // Long flat chains are fine: they are loops, not recursion.
        let long = format!("VAR x = 1\nEXPR x{}\nGRAD", " + x".repeat(100_000));
        assert_eq!(run(&long), "= 100001\ndx = 100001\n");
    }
}
