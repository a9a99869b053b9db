//! A generated program as a module of Rust source: the `#[grad]` functions, their `Tape`
//! twins, and four adapters over [`Args`](crate::Args) that the test calls (the
//! original, the gradient flattened, forward mode along tangents, the `Tape` gradient
//! flattened), plus its entry in the table of cases.

use super::ast::{
    Field, Param, ParamKind, Pass, Program, RowsOf, Shape, StructDef, Target, INNER, STRUCT,
};
use super::render::{param_type, render_function};
use std::fmt::Write as _;

/// The module `name` holding `program` and its adapters.
pub fn module(name: &str, program: &Program) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "#[allow(warnings, clippy::all)]");
    let _ = writeln!(s, "pub mod {name} {{");
    s.push_str("use autodiff::prelude::*;\n");
    s.push_str("use autodiff_difftest::{Args, Ctx, FlatOut, JacobianRow, Leaves};\n");
    let single = program.single;
    for item in &program.items {
        if single {
            s.push_str(&item.replace("f64", "f32"));
        } else {
            s.push_str(item);
        }
        s.push('\n');
    }
    if let Some(def) = &program.structure {
        s.push_str(&structure(def, single));
    }
    // The functions as written, then their `Tape` twins (the methods in an `impl` of the
    // struct, or of its twin).
    for (target, methods_of) in [
        (Target::Grad, format!("#[grad]\nimpl {STRUCT}")),
        (Target::Tape, format!("impl<'t> {STRUCT}Tape<'t>")),
    ] {
        // Second order follows calls: the helpers and methods of a program whose main
        // function gets `hvp` get it too.
        let second_order = program.second_order_applies();
        for f in &program.helpers {
            let mut f = f.clone();
            f.second_order = second_order;
            s.push_str(&render_function(&f, target, false, single, program.generic));
        }
        if !program.methods.is_empty() {
            let _ = writeln!(s, "{methods_of} {{");
            for f in &program.methods {
                let mut f = f.clone();
                f.second_order = second_order;
                s.push_str(&render_function(&f, target, false, single, program.generic));
            }
            s.push_str("}\n");
        }
        let mut main = program.main.clone();
        main.second_order = second_order;
        main.hessian = program.hessian_applies();
        s.push_str(&render_function(
            &main,
            target,
            true,
            single,
            program.generic,
        ));
    }
    let main = &program.main;
    let args: Vec<String> = main
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| grad_arg("a", i, p, single))
        .collect();
    let args = args.join(", ");
    let widen = if single { " as f64" } else { "" };
    let _ = writeln!(
        s,
        "pub fn original(a: &Args) -> f64 {{ {}({args}){widen} }}",
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
    let _ = writeln!(s, "    (r.0{widen}, d)\n}}");
    // The pullback (of a function that takes more than numbers) with the seed 2, which
    // scales every adjoint exactly, and `_grad_into`: both add into buffers that start as
    // copies of the arguments. The pullback has a buffer for every parameter that holds
    // numbers, whatever `wrt(..)` says.
    let real = if single { "f32" } else { "f64" };
    if program.pullback_applies() {
        let buffered: Vec<usize> = (0..main.params.len())
            .filter(|&i| {
                !matches!(
                    main.params[i].kind,
                    ParamKind::Int { .. }
                        | ParamKind::Bool
                        | ParamKind::Ragged(_)
                        | ParamKind::Choice(_)
                )
            })
            .collect();
        let call = format!("{}_vjp({args}, 2.0 as {real}", main.name);
        adding_adapter(&mut s, "vjp", &call, &buffered, program, single);
    }
    let call = format!("{}_grad_into({args}", main.name);
    adding_adapter(&mut s, "grad_into", &call, &partials, program, single);
    // Forward mode: the tangents are the parameters of `t`, a copy of `a` with other
    // numbers in the differentiated parameters.
    let tangents: Vec<String> = partials
        .iter()
        .map(|&i| tangent_arg(i, &main.params[i], single))
        .collect();
    let _ = writeln!(
        s,
        "pub fn jvp(a: &Args, t: &Args) -> (f64, f64) {{\n    let r = {}_jvp({args}, {});\n    (r.0{widen}, r.1{widen})\n}}",
        main.name,
        tangents.join(", ")
    );
    // The Jacobian of a vector function of the main function's value: `_jacobian` through
    // a call of it, by forward sweeps (its `_jvp`) or reverse sweeps (its pullback) as the
    // shape decides.
    if program.vector_applies() {
        let real = if single { "f32" } else { "f64" };
        let params: Vec<String> = main
            .params
            .iter()
            .map(|p| {
                let ty = param_type(&p.kind, Target::Grad);
                let ty = if single { ty.replace("f64", "f32") } else { ty };
                format!("{}: {ty}", p.name)
            })
            .collect();
        let names: Vec<&str> = main.params.iter().map(|p| p.name.as_str()).collect();
        let _ = writeln!(
            s,
            "#[grad(jacobian)]\npub fn {0}_vector({1}) -> [{real}; 3] {{\n    let y = {0}({2});\n    [y, y * y, (0.5 * y).sin()]\n}}",
            main.name,
            params.join(", "),
            names.join(", ")
        );
        let _ = writeln!(
            s,
            "pub fn jacobian(a: &Args) -> (Vec<f64>, Vec<Vec<f64>>) {{\n    let r = {}_vector_jacobian({args});\n    let mut value = Vec::new();\n    r.0.flat_out(&mut value);\n    let mut rows = vec![Vec::new(); 3];\n    for (i, row) in rows.iter_mut().enumerate() {{",
            main.name
        );
        for k in 0..partials.len() {
            let _ = writeln!(s, "        JacobianRow::row_out(&r.{}, i, row);", k + 1);
        }
        let _ = writeln!(s, "    }}\n    (value, rows)\n}}");
    }
    // Second order, where the main function has it: the value, the gradient and H·t.
    if program.second_order_applies() {
        let _ = writeln!(
            s,
            "pub fn hvp(a: &Args, t: &Args) -> (f64, Vec<f64>, Vec<f64>) {{\n    let r = {}_hvp({args}, {});\n    let (mut g, mut h) = (Vec::new(), Vec::new());",
            main.name,
            tangents.join(", ")
        );
        let k = partials.len();
        for i in 0..k {
            let _ = writeln!(s, "    r.{}.flat_out(&mut g);", i + 1);
            let _ = writeln!(s, "    r.{}.flat_out(&mut h);", i + 1 + k);
        }
        let _ = writeln!(s, "    (r.0{widen}, g, h)\n}}");
    }
    // The Hessian, where the main function has it: the value, the gradient and `H` by rows.
    if program.hessian_applies() {
        let _ = writeln!(
            s,
            "pub fn hessian(a: &Args) -> (f64, Vec<f64>, Vec<Vec<f64>>) {{\n    let r = {}_hessian({args});\n    let mut g = Vec::new();",
            main.name
        );
        let k = partials.len();
        for i in 0..k {
            let _ = writeln!(s, "    r.{}.flat_out(&mut g);", i + 1);
        }
        let _ = writeln!(
            s,
            "    (r.0, g, r.{}.iter().map(|row| row.to_vec()).collect())\n}}",
            k + 1
        );
    }
    s.push_str(
        "pub fn tape(a: &Args, direction: Option<&[f64]>) -> autodiff_difftest::TapeRun {\n",
    );
    let ctx = if program.long { "moving_only" } else { "new" };
    let _ = writeln!(
        s,
        "    let tape = Tape::new();\n    let t = Ctx::{ctx}(&tape);"
    );
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
        "    let y = {}_tape({});\n    let mut v = Vec::new();",
        main.name,
        tape_args.join(", ")
    );
    for &i in &partials {
        let _ = writeln!(s, "    p{i}.vars(&mut v);");
    }
    s.push_str(
        "    let g = y.gradient();\n    let d = v.iter().map(|&x| g[x]).collect();\n    \
         let hv = direction.map(|dir| tape.hvp(y, &v, dir).1);\n    \
         autodiff_difftest::TapeRun { value: y.value(), partials: d, margin: t.margin(), \
         largest: t.largest(), rounding: y.rounding_error(), product: hv }\n}\n",
    );
    s.push_str("}\n");
    s
}

fn grad_arg(a: &str, i: usize, p: &Param, single: bool) -> String {
    match &p.kind {
        ParamKind::Int { .. } => format!("{a}.int({i})"),
        ParamKind::Bool => format!("{a}.flag({i})"),
        ParamKind::Choice(choice) => format!("[{}][{a}.int({i})]", choice.values().join(", ")),
        ParamKind::Inner => unreachable!("only helpers take an inner struct"),
        ParamKind::Tuple(k, pass) => {
            let amp = if *pass == Pass::Value { "" } else { "&" };
            let n = p.kind.tuple_count().expect("a tuple");
            let arr = if single { "arr32" } else { "arr" };
            format!("{amp}{{ let v = {a}.{arr}::<{n}>({i}); {} }}", tuple_of(*k))
        }
        ParamKind::Struct => format!("&make_{}({a}, {i})", STRUCT.to_lowercase()),
        ParamKind::Structs(_) => format!("&make_{}_vec({a}, {i})", STRUCT.to_lowercase()),
        ParamKind::Ragged(rows) => {
            let owned = if single {
                format!("{a}.ragged32({i})")
            } else {
                format!("{a}.ragged({i}).clone()")
            };
            match rows {
                RowsOf::Slices => {
                    format!("&{owned}.iter().map(|r| r.as_slice()).collect::<Vec<_>>()")
                }
                _ => format!("&{owned}"),
            }
        }
        ParamKind::Real(shape, pass) if single => {
            let amp = pass.sigil();
            match shape {
                Shape::Scalar => format!("{a}.f32({i})"),
                Shape::Array(n) => format!("{amp}{a}.arr32::<{}>({i})", n.value()),
                Shape::Nested(n, k) => format!("{amp}{a}.arr2_32::<{}, {k}>({i})", n.value()),
                Shape::Slice if *pass == Pass::MutRef => format!("&mut {a}.slice32({i})"),
                Shape::Slice => format!("&{a}.slice32({i})"),
                Shape::Rows(k) => format!("&{a}.rows32::<{k}>({i})"),
            }
        }
        ParamKind::Real(shape, pass) => {
            let amp = pass.sigil();
            match shape {
                Shape::Scalar => format!("{a}.f({i})"),
                Shape::Array(n) => format!("{amp}{a}.arr::<{}>({i})", n.value()),
                Shape::Nested(n, k) => format!("{amp}{a}.arr2::<{}, {k}>({i})", n.value()),
                Shape::Slice if *pass == Pass::VecRef => format!("{a}.vec({i})"),
                Shape::Slice if *pass == Pass::MutRef => format!("&mut {a}.slice({i}).to_vec()"),
                Shape::Slice => format!("{a}.slice({i})"),
                Shape::Rows(k) => format!("&{a}.rows::<{k}>({i})"),
            }
        }
    }
}

/// The adapter `name` of a generated function that adds into buffers (`_vjp`,
/// `_grad_into`): one buffer per parameter of `buffered`, a copy of its argument, passed
/// after the arguments `call` opens with; returns the value and the buffers of the
/// differentiated parameters, flattened.
fn adding_adapter(
    s: &mut String,
    name: &str,
    call: &str,
    buffered: &[usize],
    program: &Program,
    single: bool,
) {
    let main = &program.main;
    let widen = if single { " as f64" } else { "" };
    let _ = writeln!(s, "pub fn {name}(a: &Args) -> (f64, Vec<f64>) {{");
    let mut buffers = Vec::new();
    for &i in buffered {
        let _ = writeln!(
            s,
            "    let mut d{i} = {};",
            a_owned(i, &main.params[i], single)
        );
        buffers.push(format!("&mut d{i}"));
    }
    let _ = writeln!(
        s,
        "    let v = {call}, {});\n    let mut d = Vec::new();",
        buffers.join(", ")
    );
    for &i in &main.partials() {
        let _ = writeln!(s, "    d{i}.flat_out(&mut d);");
    }
    let _ = writeln!(s, "    (v{widen}, d)\n}}");
}

/// A parameter's argument as an owned value (the buffer `_grad_into` adds into starts as
/// a copy of it): `grad_arg` without the borrow.
fn a_owned(i: usize, p: &Param, single: bool) -> String {
    let lower = STRUCT.to_lowercase();
    match &p.kind {
        ParamKind::Struct => format!("make_{lower}(a, {i})"),
        ParamKind::Structs(_) => format!("make_{lower}_vec(a, {i})"),
        ParamKind::Real(Shape::Slice, _) if single => format!("a.slice32({i})"),
        ParamKind::Real(Shape::Slice, _) => format!("a.slice({i}).to_vec()"),
        ParamKind::Real(Shape::Array(n), Pass::MutRef) if single => {
            format!("a.arr32::<{}>({i})", n.value())
        }
        ParamKind::Real(Shape::Array(n), Pass::MutRef) => format!("a.arr::<{}>({i})", n.value()),
        _ => grad_arg("a", i, p, single)
            .trim_start_matches('&')
            .to_string(),
    }
}

/// A tuple of the numbers `v[0]`, `v[1]`, … of an array `v`: `(v[0], v[1])`, or
/// `(v[0], [v[1], …, v[k]])`.
fn tuple_of(k: Option<usize>) -> String {
    match k {
        None => "(v[0], v[1])".into(),
        Some(k) => {
            let rest: Vec<String> = (1..=k).map(|j| format!("v[{j}]")).collect();
            format!("(v[0], [{}])", rest.join(", "))
        }
    }
}

/// The `let` making a parameter's leaves on the tape (if it has numbers), and the
/// argument passed.
fn tape_leaf(i: usize, p: &Param) -> (Option<String>, String) {
    if let ParamKind::Tuple(k, pass) = &p.kind {
        let n = p.kind.tuple_count().expect("a tuple");
        let amp = if *pass == Pass::Value { "" } else { "&" };
        return (
            Some(format!(
                "let p{i} = {{ let v = a.arr::<{n}>({i}).map(|v| t.leaf(v)); {} }};",
                tuple_of(*k)
            )),
            format!("{amp}p{i}"),
        );
    }
    if p.kind == ParamKind::Struct {
        let lower = STRUCT.to_lowercase();
        return (
            Some(format!(
                "let p{i} = make_{lower}_tape(&t, &make_{lower}(a, {i}));"
            )),
            format!("&p{i}"),
        );
    }
    if let ParamKind::Structs(_) = p.kind {
        let lower = STRUCT.to_lowercase();
        return (
            Some(format!(
                "let p{i}: Vec<_> = make_{lower}_vec(a, {i}).iter().map(|s| make_{lower}_tape(&t, s)).collect();"
            )),
            format!("&p{i}"),
        );
    }
    let ParamKind::Real(shape, pass) = &p.kind else {
        return (None, grad_arg("a", i, p, false));
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
    if *pass == Pass::MutRef {
        // The body writes through it: a working copy, while `p{i}` keeps the leaves of
        // the value on entry, with respect to which it is differentiated.
        return (
            Some(format!(
                "let p{i} = {init};\n    let mut q{i} = p{i}.clone();"
            )),
            format!("&mut q{i}"),
        );
    }
    let amp = pass.sigil();
    (Some(format!("let p{i} = {init};")), format!("{amp}p{i}"))
}

/// A differentiated parameter's tangent (or direction) in `_jvp` and `_hvp`: of the
/// parameter's type, but for a `&mut` (always written through, see `random_function`),
/// whose tangent is of the value on entry: an array by value, or a `&[f64]`.
fn tangent_arg(i: usize, p: &Param, single: bool) -> String {
    match &p.kind {
        ParamKind::Real(shape @ (Shape::Array(_) | Shape::Slice), Pass::MutRef) => {
            let pass = if matches!(shape, Shape::Array(_)) {
                Pass::Value
            } else {
                Pass::Ref
            };
            let as_read = Param {
                kind: ParamKind::Real(shape.clone(), pass),
                ..p.clone()
            };
            grad_arg("t", i, &as_read, single)
        }
        _ => grad_arg("t", i, p, single),
    }
}

/// The entry of the table of cases for the module `name`, whose source ([`module`]) is
/// `source`.
pub fn case(name: &str, program: &Program, source: &str) -> String {
    let params: Vec<String> = program
        .main
        .params
        .iter()
        .map(|p| match &p.kind {
            ParamKind::Int { lo, hi } => format!("Spec::Int({lo}, {hi})"),
            ParamKind::Choice(_) => "Spec::Int(0, 2)".into(),
            ParamKind::Inner => unreachable!("only helpers take an inner struct"),
            ParamKind::Tuple(..) => format!("Spec::Real({})", p.kind.tuple_count().unwrap_or(0)),
            ParamKind::Ragged(_) => "Spec::Ragged".into(),
            ParamKind::Bool => "Spec::Bool".into(),
            ParamKind::Real(Shape::Scalar, _) => "Spec::Real(1)".into(),
            ParamKind::Real(Shape::Array(n), _) => format!("Spec::Real({})", n.value()),
            ParamKind::Real(Shape::Nested(n, k), _) => {
                format!("Spec::Real({})", n.value() * k)
            }
            ParamKind::Real(Shape::Slice, _) => "Spec::Run(1)".into(),
            ParamKind::Real(Shape::Rows(k), _) => format!("Spec::Run({k})"),
            ParamKind::Structs(_) => {
                let def = program.structure.as_ref().expect("a struct parameter");
                format!("Spec::Run({})", def.counts().0)
            }
            ParamKind::Struct => {
                let def = program.structure.as_ref().expect("a struct parameter");
                let (fixed, run) = def.counts();
                let ints: Vec<String> = def
                    .fields
                    .iter()
                    .filter_map(|(_, f)| match f {
                        Field::Int(hi) => Some(hi.to_string()),
                        _ => None,
                    })
                    .collect();
                let flags = def.fields.iter().filter(|(_, f)| *f == Field::Bool).count();
                format!(
                    "Spec::Struct {{ fixed: {fixed}, run: {run}, ints: &[{}], flags: {flags} }}",
                    ints.join(", ")
                )
            }
        })
        .collect();
    let partials: Vec<String> = program
        .main
        .partials()
        .iter()
        .map(|i| i.to_string())
        .collect();
    format!(
        "Case {{ name: {name:?}, params: &[{}], partials: &[{}], slice_min: {}, differences: {}, single: {}, generic: {}, reassociate: {}, powi: {}, original: {name}::original, gradient: {name}::gradient, vjp: {}, grad_into: {name}::grad_into, jvp: {name}::jvp, hvp: {}, hessian: {}, tape: {name}::tape, jacobian: {} }},\n",
        params.join(", "),
        partials.join(", "),
        program.slice_min,
        program.differences_apply(),
        program.single,
        program.generic,
        program.reassociates(),
        source.contains(".powi("),
        if program.pullback_applies() {
            format!("Some({name}::vjp)")
        } else {
            "None".to_string()
        },
        if program.second_order_applies() {
            format!("Some({name}::hvp)")
        } else {
            "None".to_string()
        },
        if program.hessian_applies() {
            format!("Some({name}::hessian)")
        } else {
            "None".to_string()
        },
        if program.vector_applies() {
            format!("Some({name}::jacobian)")
        } else {
            "None".to_string()
        },
    )
}

/// The struct `S` (deriving `Differentiable`), its `Tape` twin `STape<'t>`, how both are
/// made from the arguments, and how their numbers are flattened: the partial through
/// `to_flat_vec`, the twin's leaves field by field. `single`: its numbers are `f32`s (the
/// twin's leaves the `f64`s of the same values).
fn structure(def: &StructDef, single: bool) -> String {
    let real = if single { "f32" } else { "f64" };
    let lower = STRUCT.to_lowercase();
    let mut s = String::new();
    let ty = |f: &Field, e: &str| {
        // The inner struct, or its twin where the numbers are the tape's.
        let inner = if e.starts_with("Var") {
            format!("{INNER}Tape<'t>")
        } else {
            INNER.to_string()
        };
        match f {
            Field::Scalar => e.to_string(),
            Field::Array(n) => format!("[{e}; {n}]"),
            Field::Nested(n, k) => format!("[[{e}; {k}]; {n}]"),
            Field::Vec => format!("Vec<{e}>"),
            Field::Int(_) => "usize".into(),
            Field::Bool => "bool".into(),
            Field::Inner => inner,
            Field::Items => format!("Vec<{inner}>"),
            Field::Parts(k) => format!("[{inner}; {k}]"),
        }
    };
    if def.holds_inner() {
        let _ = writeln!(
            s,
            "#[derive(Differentiable, Clone, Copy, Debug)]\npub struct {INNER} {{\n    pub c: {real},\n    pub v: [{real}; 2],\n}}\n\
             #[derive(Clone, Copy)]\npub struct {INNER}Tape<'t> {{\n    pub c: Var<'t>,\n    pub v: [Var<'t>; 2],\n}}\n\
             impl<'t> Leaves<'t> for {INNER}Tape<'t> {{\n    fn vars(&self, out: &mut Vec<Var<'t>>) {{\n        self.c.vars(out);\n        self.v.vars(out);\n    }}\n}}\n\
             pub fn make_inner_tape<'t>(t: &Ctx<'t>, s: &{INNER}) -> {INNER}Tape<'t> {{\n    {INNER}Tape {{ c: t.leaf(f64::from(s.c)), v: s.v.map(|v| t.leaf(f64::from(v))) }}\n}}"
        );
    }
    let _ = writeln!(
        s,
        "#[derive(Differentiable, Clone, Debug)]\npub struct {STRUCT} {{"
    );
    for (name, f) in &def.fields {
        let _ = writeln!(s, "    pub {name}: {},", ty(f, real));
    }
    let _ = writeln!(s, "}}\npub struct {STRUCT}Tape<'t> {{");
    for (name, f) in &def.fields {
        let _ = writeln!(s, "    pub {name}: {},", ty(f, "Var<'t>"));
    }
    let _ = writeln!(
        s,
        "}}\nimpl FlatOut for {STRUCT} {{\n    fn flat_out(&self, out: &mut Vec<f64>) {{\n        out.extend(self.to_flat_vec());\n    }}\n}}"
    );
    let _ = writeln!(
        s,
        "impl<'t> Leaves<'t> for {STRUCT}Tape<'t> {{\n    fn vars(&self, out: &mut Vec<Var<'t>>) {{"
    );
    for (name, f) in &def.fields {
        if !matches!(f, Field::Int(_) | Field::Bool) {
            let _ = writeln!(s, "        self.{name}.vars(out);");
        }
    }
    s.push_str("    }\n}\n");
    let (fixed, run) = def.counts();
    let _ = writeln!(
        s,
        "pub fn make_{lower}(a: &Args, i: usize) -> {STRUCT} {{\n    let (x, ints, flags) = a.structure(i);"
    );
    if run > 0 {
        let _ = writeln!(s, "    let n = (x.len() - {fixed}) / {run};");
    }
    // The numbers' fields start at zero, to be written from the flat view.
    let inner_zero = format!("{INNER} {{ c: 0.0, v: [0.0; 2] }}");
    let zero = |f: &Field| match f {
        Field::Scalar => Some("0.0".to_string()),
        Field::Array(n) => Some(format!("[0.0; {n}]")),
        Field::Nested(n, k) => Some(format!("[[0.0; {k}]; {n}]")),
        Field::Inner => Some(inner_zero.clone()),
        Field::Parts(k) => Some(format!("[{inner_zero}; {k}]")),
        _ => None,
    };
    let (mut ints, mut flags) = (0, 0);
    let mut fields = Vec::new();
    for (name, f) in &def.fields {
        let init = match f {
            Field::Scalar
            | Field::Array(_)
            | Field::Nested(..)
            | Field::Inner
            | Field::Parts(_) => zero(f).unwrap_or_default(),
            Field::Vec => "vec![0.0; n]".into(),
            Field::Items => format!("vec![{inner_zero}; n]"),
            Field::Int(_) => {
                ints += 1;
                format!("ints[{}]", ints - 1)
            }
            Field::Bool => {
                flags += 1;
                format!("flags[{}]", flags - 1)
            }
        };
        fields.push(format!("{name}: {init}"));
    }
    let _ = writeln!(
        s,
        "    let mut s = {STRUCT} {{ {} }};\n    s.copy_from_flat(x);\n    s\n}}",
        fields.join(", ")
    );
    if run == 0 {
        // A collection of the struct: `fixed` numbers per element, and constants that
        // vary along it.
        let mut fields = Vec::new();
        for (name, f) in &def.fields {
            let init = match f {
                Field::Scalar
                | Field::Array(_)
                | Field::Nested(..)
                | Field::Inner
                | Field::Parts(_) => zero(f).unwrap_or_default(),
                Field::Vec | Field::Items => "Vec::new()".into(),
                Field::Int(hi) => format!("j % {}", hi + 1),
                Field::Bool => "j % 2 == 0".into(),
            };
            fields.push(format!("{name}: {init}"));
        }
        let _ = writeln!(
            s,
            "pub fn make_{lower}_vec(a: &Args, i: usize) -> Vec<{STRUCT}> {{
    a.slice(i).chunks({fixed}).enumerate().map(|(j, x)| {{
        let mut s = {STRUCT} {{ {} }};
        s.copy_from_flat(x);
        s
    }}).collect()
}}",
            fields.join(", ")
        );
    }
    let mut fields = Vec::new();
    for (name, f) in &def.fields {
        let init = match f {
            Field::Scalar => format!("t.leaf(f64::from(s.{name}))"),
            Field::Array(_) => format!("s.{name}.map(|v| t.leaf(f64::from(v)))"),
            Field::Nested(..) => format!("s.{name}.map(|r| r.map(|v| t.leaf(f64::from(v))))"),
            Field::Vec => format!("s.{name}.iter().map(|&v| t.leaf(f64::from(v))).collect()"),
            Field::Int(_) | Field::Bool => format!("s.{name}"),
            Field::Inner => format!("make_inner_tape(t, &s.{name})"),
            Field::Items => format!("s.{name}.iter().map(|x| make_inner_tape(t, x)).collect()"),
            Field::Parts(_) => format!("s.{name}.map(|x| make_inner_tape(t, &x))"),
        };
        fields.push(format!("{name}: {init}"));
    }
    let _ = writeln!(
        s,
        "pub fn make_{lower}_tape<'t>(t: &Ctx<'t>, s: &{STRUCT}) -> {STRUCT}Tape<'t> {{\n    {STRUCT}Tape {{ {} }}\n}}",
        fields.join(", ")
    );
    s
}
