//! Rendering the AST ([`super::ast`]) as Rust source: the `#[grad]` function as a user
//! writes it (in `f64`, in `f32`, or generic over its float type) and its `Tape` twin.

use super::ast::*;
use std::fmt::Write as _;

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
        Expr::Lit(_)
        | Expr::Path(_)
        | Expr::Table(..)
        | Expr::FromInt(_)
        | Expr::Stop(_)
        | Expr::Ragged(..) => true,
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
        ParamKind::Choice(Choice::Enum) => ENUM.into(),
        ParamKind::Inner => match target {
            Target::Grad => format!("&{INNER}"),
            Target::Tape => format!("&{INNER}Tape<'t>"),
        },
        ParamKind::Choice(Choice::Str) => "&str".into(),
        ParamKind::Tuple(k, pass) => {
            let amp = if *pass == Pass::Value { "" } else { "&" };
            match k {
                None => format!("{amp}({e}, {e})"),
                Some(k) => format!("{amp}({e}, [{e}; {k}])"),
            }
        }
        ParamKind::Struct => match target {
            Target::Grad => format!("&{STRUCT}"),
            Target::Tape => format!("&{STRUCT}Tape<'t>"),
        },
        // Data: `f64`s on the tape too.
        ParamKind::Ragged(rows) => match rows {
            RowsOf::Vecs => "&[Vec<f64>]".into(),
            RowsOf::VecOfVecs => "&Vec<Vec<f64>>".into(),
            RowsOf::Slices => "&[&[f64]]".into(),
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
            let amp = pass.sigil();
            match shape {
                Shape::Scalar => e.into(),
                Shape::Array(n) => format!("{amp}[{e}; {}]", n.render()),
                Shape::Nested(n, k) => format!("{amp}[[{e}; {k}]; {}]", n.render()),
                Shape::Slice if *pass == Pass::VecRef => format!("&Vec<{e}>"),
                Shape::Slice => format!("{amp}[{e}]"),
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
            Expr::Ragged(rows, i, j) => {
                let read = format!("{rows}[{}][{}]", self.iexpr(i), self.iexpr(j));
                if self.tape() {
                    format!("t.c({read})")
                } else {
                    read
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
        if self.tape() && KINKS.contains(&name) && !args.iter().all(is_constant) {
            return format!("t.{name}({})", rendered.join(", "));
        }
        if name == "rem" {
            // The table's `rem` is the operator `%`, on every engine.
            return format!("({} % {})", self.expr(&args[0]), self.expr(&args[1]));
        }
        if self.tape() {
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
            IExpr::Min(a, b, method) | IExpr::Max(a, b, method) => {
                let name = if matches!(i, IExpr::Min(..)) {
                    "min"
                } else {
                    "max"
                };
                if *method {
                    format!("{}.{name}({})", self.iexpr(a), self.iexpr(b))
                } else {
                    format!("usize::{name}({}, {})", self.iexpr(a), self.iexpr(b))
                }
            }
            IExpr::Pred(a) => format!("({} - 1)", self.iexpr(a)),
            IExpr::RowLen(rows, i) => format!("{rows}[{}].len()", self.iexpr(i)),
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
            Cond::Empty(name) => format!("{name}.is_empty()"),
            Cond::Choice(text) => text.clone(),
            Cond::Not(c) => format!("!({})", self.cond(c)),
            Cond::And(a, b) => format!("({} && {})", self.cond(a), self.cond(b)),
            Cond::Or(a, b) => format!("({} || {})", self.cond(a), self.cond(b)),
        }
    }

    fn scrutinee(&self, s: &Scrutinee) -> String {
        match s {
            Scrutinee::Int(i) => self.iexpr(i),
            Scrutinee::Flag(name) | Scrutinee::Choice(name, _) => name.clone(),
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
                typed,
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
                    ArrayInit::Literal2(rows) => {
                        let rows: Vec<String> = rows
                            .iter()
                            .map(|row| {
                                let items: Vec<String> = row.iter().map(|e| self.root(e)).collect();
                                format!("[{}]", items.join(", "))
                            })
                            .collect();
                        format!("[{}]", rows.join(", "))
                    }
                    ArrayInit::Copy(of, deref) => {
                        format!("{}{of}", if *deref { "*" } else { "" })
                    }
                    ArrayInit::Row(of, i) => format!("{of}[{}]", self.iexpr(i)),
                    ArrayInit::ToVec(of) => format!("{of}.to_vec()"),
                    ArrayInit::VecZeros(of) => format!("vec![{zero}; {of}.len()]"),
                    ArrayInit::Collect { of, var, value } => format!(
                        "{of}.iter().map(|&{var}| {}).collect::<Vec<_>>()",
                        self.root(value)
                    ),
                };
                let e = real_type(self.target);
                let ty = match typed {
                    None => String::new(),
                    Some((None, _)) => format!(": Vec<{e}>"),
                    Some((Some(n), None)) => format!(": [{e}; {}]", n.render()),
                    Some((Some(n), Some(k))) => format!(": [[{e}; {k}]; {}]", n.render()),
                };
                self.line(&format!("let {m}{name}{ty} = {init};"));
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
            Stmt::CallArray { to, call, args } => {
                let call = self.call(call, args);
                match to {
                    ArrayBinding::Destructure(names) => {
                        let names: Vec<&str> =
                            names.iter().map(|n| n.as_deref().unwrap_or("_")).collect();
                        self.line(&format!("let [{}] = {call};", names.join(", ")));
                    }
                    ArrayBinding::Let {
                        name,
                        mutable,
                        typed,
                    } => {
                        let m = if *mutable { "mut " } else { "" };
                        let ty = typed
                            .map(|k| format!(": [{}; {k}]", real_type(self.target)))
                            .unwrap_or_default();
                        self.line(&format!("let {m}{name}{ty} = {call};"));
                    }
                    ArrayBinding::Assign(name) => self.line(&format!("{name} = {call};")),
                }
            }
            Stmt::LetPair {
                name,
                mutable,
                a,
                b,
                shorthand,
            } => {
                let m = if *mutable { "mut " } else { "" };
                let ty = if self.tape() {
                    format!("{PAIR}Tape")
                } else {
                    PAIR.to_string()
                };
                let wrap = |w: &Writer, e: &Expr| {
                    let e = w.root(e);
                    if w.tape() {
                        format!("t.v({e})")
                    } else {
                        e
                    }
                };
                let b: Vec<String> = b.iter().map(|e| wrap(self, e)).collect();
                let a = wrap(self, a);
                if *shorthand {
                    self.line(&format!("let a = {a};"));
                    self.line(&format!(
                        "let {m}{name} = {ty} {{ a, b: [{}] }};",
                        b.join(", ")
                    ));
                } else {
                    self.line(&format!(
                        "let {m}{name} = {ty} {{ a: {a}, b: [{}] }};",
                        b.join(", ")
                    ));
                }
            }
            Stmt::CopyPair(name, of) => self.line(&format!("let {name} = {of};")),
            Stmt::DestructurePair { a, b, of } => {
                let ty = if self.tape() {
                    format!("{PAIR}Tape")
                } else {
                    PAIR.to_string()
                };
                let mut parts = Vec::new();
                if let Some(a) = a {
                    parts.push(format!("a: {a}"));
                }
                if let Some(b) = b {
                    parts.push(format!("b: {b}"));
                }
                if a.is_none() || b.is_none() {
                    parts.push("..".into());
                }
                self.line(&format!("let {ty} {{ {} }} = {of};", parts.join(", ")));
            }
            Stmt::LetElement(name, of, index) => {
                let index = self.iexpr(index);
                self.line(&format!("let {name} = &{of}[{index}];"));
            }
            Stmt::Destructure(names, array) => {
                let names: Vec<&str> = names.iter().map(|n| n.as_deref().unwrap_or("_")).collect();
                self.line(&format!("let [{}] = {array};", names.join(", ")));
            }
            Stmt::RaggedLoop {
                rows,
                row,
                column,
                item,
                by_index,
                body,
            } => {
                // On the tape the number is a constant node.
                let item_raw = if self.tape() {
                    format!("{item}_raw")
                } else {
                    item.clone()
                };
                if *by_index {
                    self.line(&format!("for {row} in 0..{rows}.len() {{"));
                    self.indent += 1;
                    self.line(&format!("for {column} in 0..{rows}[{row}].len() {{"));
                    self.indent += 1;
                    self.line(&format!("let {item_raw} = {rows}[{row}][{column}];"));
                } else {
                    self.line(&format!("for {row} in {rows}.iter() {{"));
                    self.indent += 1;
                    self.line(&format!("for &{item_raw} in {row}.iter() {{"));
                    self.indent += 1;
                }
                if self.tape() {
                    self.line(&format!("let {item} = t.c({item_raw});"));
                }
                for s in body {
                    self.stmt(s);
                }
                self.indent -= 1;
                self.line("}");
                self.indent -= 1;
                self.line("}");
            }
            Stmt::LetClosure {
                name,
                param,
                typed,
                body,
                args,
                op,
                result,
            } => {
                let ty = if *typed {
                    format!(": {}", real_type(self.target))
                } else {
                    String::new()
                };
                self.line(&format!("let {name} = |{param}{ty}| {};", self.root(body)));
                let calls: Vec<String> = args
                    .iter()
                    .map(|a| format!("{name}({})", self.root(a)))
                    .collect();
                let value = calls.join(&format!(" {op} "));
                if self.tape() {
                    self.line(&format!("let {result} = t.v({value});"));
                } else {
                    self.line(&format!("let {result} = {value};"));
                }
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
            Stmt::Loop { label, value, body } => {
                let label = label.as_ref().map(|l| format!("{l}: ")).unwrap_or_default();
                match value {
                    Some(name) => self.block(&format!("let {name} = {label}loop"), body, ";"),
                    None => self.block(&format!("{label}loop"), body, ""),
                }
            }
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
                match (label, value) {
                    // `break 'l (e)`: a block after a label reads as a labelled block.
                    (Some(_), Some(v)) => s.push_str(&format!(" ({})", self.root(v))),
                    (None, Some(v)) => {
                        s.push(' ');
                        s.push_str(&self.root(v));
                    }
                    _ => {}
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
                        let tuple = format!("({})", items.join(", "));
                        // One tuple in three is kept in a local first, then destructured
                        // or read by position (`let a = tup.0;`), as users also write it.
                        let choice: usize =
                            names.iter().flat_map(|n| n.bytes()).map(usize::from).sum();
                        if choice % 3 == 0 {
                            let local = format!("tup{}", self.out.len());
                            self.line(&format!("let {local} = {tuple};"));
                            if choice % 2 == 0 {
                                self.line(&format!("let ({}) = {local};", names.join(", ")));
                            } else {
                                for (k, name) in names.iter().enumerate() {
                                    if name != "_" {
                                        self.line(&format!("let {name} = {local}.{k};"));
                                    }
                                }
                            }
                            return;
                        }
                        tuple
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
        let array = f.array;
        let returns = |one: &str| {
            if count == 1 {
                one.to_string()
            } else if array {
                format!("[{one}; {count}]")
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
            if f.hessian {
                args.push("hessian".into());
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
        } else if f.array {
            self.line(&format!("[{}]", results.join(", ")));
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
