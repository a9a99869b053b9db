//! A generated program as a module of Rust source: the `#[grad]` functions, their `Tape`
//! twins, and three adapters over [`Args`](crate::Args) that the test calls (the
//! original, the gradient flattened, the `Tape` gradient flattened), plus its entry in
//! the table of cases.

use super::ast::{render_function, Param, ParamKind, Pass, Program, Shape, Target};
use std::fmt::Write as _;

/// The module `name` holding `program` and its adapters.
pub fn module(name: &str, program: &Program) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "#[allow(warnings, clippy::all)]");
    let _ = writeln!(s, "pub mod {name} {{");
    s.push_str("use autodiff::prelude::*;\n");
    s.push_str("use autodiff_difftest::{Args, Ctx, FlatOut, Leaves};\n");
    for item in &program.items {
        s.push_str(item);
        s.push('\n');
    }
    for f in &program.helpers {
        s.push_str(&render_function(f, Target::Grad, false));
    }
    s.push_str(&render_function(&program.main, Target::Grad, true));
    for f in &program.helpers {
        s.push_str(&render_function(f, Target::Tape, false));
    }
    s.push_str(&render_function(&program.main, Target::Tape, true));
    let main = &program.main;
    let args: Vec<String> = main
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| grad_arg(i, p))
        .collect();
    let args = args.join(", ");
    let _ = writeln!(
        s,
        "pub fn original(a: &Args) -> f64 {{ {}({args}) }}",
        main.name
    );
    let partials = main.partials();
    let _ = writeln!(
        s,
        "pub fn gradient(a: &Args) -> (f64, Vec<f64>) {{\n    let r = {}_grad({args});\n    let mut d = Vec::new();",
        main.name
    );
    for k in 0..partials.len() {
        let _ = writeln!(s, "    r.{}.flat_out(&mut d);", k + 1);
    }
    s.push_str("    (r.0, d)\n}\n");
    s.push_str("pub fn tape(a: &Args) -> (f64, Vec<f64>, f64, f64) {\n");
    s.push_str("    let tape = Tape::new();\n    let t = Ctx::new(&tape);\n");
    let mut tape_args = vec!["&t".to_string()];
    for (i, p) in main.params.iter().enumerate() {
        let (binding, pass) = tape_leaf(i, p);
        if let Some(binding) = binding {
            let _ = writeln!(s, "    {binding}");
        }
        tape_args.push(pass);
    }
    let _ = writeln!(
        s,
        "    let y = {}_tape({});\n    let g = y.gradient();\n    let mut d = Vec::new();",
        main.name,
        tape_args.join(", ")
    );
    for &i in &partials {
        let _ = writeln!(s, "    p{i}.leaves(&g, &mut d);");
    }
    s.push_str("    (y.value(), d, t.margin(), t.largest())\n}\n");
    s.push_str("}\n");
    s
}

fn grad_arg(i: usize, p: &Param) -> String {
    match &p.kind {
        ParamKind::Int { .. } => format!("a.int({i})"),
        ParamKind::Bool => format!("a.flag({i})"),
        ParamKind::Real(shape, pass) => {
            let amp = if *pass == Pass::Value { "" } else { "&" };
            match shape {
                Shape::Scalar => format!("a.f({i})"),
                Shape::Array(n) => format!("{amp}a.arr::<{}>({i})", n.value()),
                Shape::Nested(n, k) => format!("{amp}a.arr2::<{}, {k}>({i})", n.value()),
                Shape::Slice if *pass == Pass::VecRef => format!("a.vec({i})"),
                Shape::Slice => format!("a.slice({i})"),
                Shape::Rows(k) => format!("&a.rows::<{k}>({i})"),
            }
        }
    }
}

/// The `let` making a parameter's leaves on the tape (if it has numbers), and the
/// argument passed.
fn tape_leaf(i: usize, p: &Param) -> (Option<String>, String) {
    let ParamKind::Real(shape, pass) = &p.kind else {
        return (None, grad_arg(i, p));
    };
    let init = match shape {
        Shape::Scalar => format!("t.leaf(a.f({i}))"),
        Shape::Array(n) => format!("a.arr::<{}>({i}).map(|v| t.leaf(v))", n.value()),
        Shape::Nested(n, k) => format!(
            "a.arr2::<{}, {k}>({i}).map(|r| r.map(|v| t.leaf(v)))",
            n.value()
        ),
        Shape::Slice => format!("a.slice({i}).iter().map(|&v| t.leaf(v)).collect::<Vec<_>>()"),
        Shape::Rows(k) => format!(
            "a.rows::<{k}>({i}).into_iter().map(|r| r.map(|v| t.leaf(v))).collect::<Vec<_>>()"
        ),
    };
    let amp = if *pass == Pass::Value { "" } else { "&" };
    (Some(format!("let p{i} = {init};")), format!("{amp}p{i}"))
}

/// The entry of the table of cases for the module `name`.
pub fn case(name: &str, program: &Program) -> String {
    let params: Vec<String> = program
        .main
        .params
        .iter()
        .map(|p| match &p.kind {
            ParamKind::Int { lo, hi } => format!("Spec::Int({lo}, {hi})"),
            ParamKind::Bool => "Spec::Bool".into(),
            ParamKind::Real(Shape::Scalar, _) => "Spec::Real(1)".into(),
            ParamKind::Real(Shape::Array(n), _) => format!("Spec::Real({})", n.value()),
            ParamKind::Real(Shape::Nested(n, k), _) => {
                format!("Spec::Real({})", n.value() * k)
            }
            ParamKind::Real(Shape::Slice, _) => "Spec::Run(1)".into(),
            ParamKind::Real(Shape::Rows(k), _) => format!("Spec::Run({k})"),
        })
        .collect();
    let partials: Vec<String> = program
        .main
        .partials()
        .iter()
        .map(|i| i.to_string())
        .collect();
    format!(
        "Case {{ name: {name:?}, params: &[{}], partials: &[{}], slice_min: {}, differences: {}, original: {name}::original, gradient: {name}::gradient, tape: {name}::tape }},\n",
        params.join(", "),
        partials.join(", "),
        program.slice_min,
        program.differences_apply(),
    )
}
