//! What the programs of `#[grad(reassociate)]` get: a sum added in lanes, and a sample
//! loop whose gradient `#[grad]` preaccumulates.

use super::*;

/// Puts a sum that `#[grad(reassociate)]` adds in lanes at the top of `f`, and adds it to
/// the result: the random statements seldom accumulate into a local that the loop reads
/// nowhere else. Over the elements of an array or slice parameter if `f` has one, else
/// over a constant range; the accumulator starts at a literal, so that even two terms are
/// added in another order than the original's.
pub(super) fn lanes_sum(g: &mut Gen, f: &mut Function) {
    let (acc, k) = ("s_lanes".to_string(), "k_lanes".to_string());
    let scalar = f
        .params
        .iter()
        .find(|p| matches!(p.kind, ParamKind::Real(Shape::Scalar, _)))
        .map(|p| Expr::Var {
            name: p.name.clone(),
            deref: false,
        });
    let array = f.params.iter().find_map(|p| match &p.kind {
        ParamKind::Real(Shape::Array(n), _) => Some((p.name.clone(), n.value().to_string())),
        ParamKind::Real(Shape::Slice, _) => Some((p.name.clone(), format!("{}.len()", p.name))),
        _ => None,
    });
    let (iter, read) = match array {
        Some((name, len)) if scalar.is_none() || g.chance(0.7) => (
            format!("0..{len}"),
            Expr::Index(name, vec![IExpr::Var(k.clone())]),
        ),
        _ => (
            format!("0..{}", g.rng.random_range(2..8)),
            Expr::FromInt(IExpr::Var(k.clone())),
        ),
    };
    let factor = scalar.unwrap_or_else(|| g.positive_literal());
    // A product alone keeps nothing per iteration for the sweep (its partials are its
    // operands), so the gradient writes the loop out once per lane; a `sin` keeps its
    // partial, so the loop stays one and rotates its lanes. Both forms are drawn.
    let product = Expr::Bin(BinOp::Mul, Box::new(read), Box::new(factor));
    let term = if g.chance(0.5) {
        product
    } else {
        Expr::Op {
            name: "sin",
            args: vec![product],
            form: Form::Method,
        }
    };
    let op = if g.chance(0.3) { "-" } else { "+" };
    let init = g.literal();
    f.body.insert(
        0,
        Stmt::For {
            label: None,
            pattern: k,
            iter,
            body: vec![Stmt::Assign(Place::Var(acc.clone()), op, term)],
        },
    );
    f.body.insert(
        0,
        Stmt::Let {
            name: acc.clone(),
            mutable: true,
            annotated: false,
            init,
        },
    );
    let result = std::mem::replace(&mut f.result, Expr::Lit("0.0".into()));
    f.result = Expr::Bin(
        BinOp::Add,
        Box::new(result),
        Box::new(Expr::Var {
            name: acc,
            deref: false,
        }),
    );
}

/// Puts a sample loop in `f`, whose gradient `#[grad(reassociate)]` preaccumulates (see
/// `autodiff-macros-core/src/codegen/preaccumulate.rs`): a loop in the function's
/// outermost block, over the elements of a slice parameter if `f` has one (a run-time
/// length), else over a constant range, whose body holds a loop and only adds to a sum
/// declared outside it:
///
/// ```text
/// let mut s_pre = -0.3;
/// for k_pre in 0..xs1.len() {
///     let mut v9 = …;          // a local of the body, which its loop accumulates into
///     …                        // random statements (`for` loops and branches among them)
///     for i10 in 0..3 { …; v9 += …; }
///     …
///     s_pre += v9 * …;         // or -=, `s_pre = s_pre + …`, maybe under an `if`
/// }
/// ```
///
/// and adds the sum, maybe scaled, to the result (so that its adjoint is not always 1).
/// The body is random, but writes nothing declared outside it (so the random statements
/// see every outer number protected and every outer array frozen), runs no `while` or
/// `loop` and has no `break`, `continue` or `return` (see [`Gen::sample`]), and does not
/// read rows of run-time length (`&[[f64; 2]]`), whose gradients are not preaccumulated
/// (they are hidden); it reads anything else in scope, calls helpers and methods. One
/// loop in five iterates over whatever [`Gen::iterable`] draws instead, which may or may
/// not qualify.
///
/// At the end of the body four times in five, reading what it computed; else first,
/// where only the parameters (and the items of the module, `module_consts`) are in
/// scope, and always first if the body returns early (`#[grad]` puts what follows a
/// `return` in a block of its own, out of the outermost one).
pub(super) fn sample_loop(g: &mut Gen, f: &mut Function, module_consts: &[String]) {
    let acc = "s_pre".to_string();
    // The scale, read in the scope of the result.
    let scale = if g.chance(0.5) {
        let e = g.expr(1);
        Some(g.bounded(e))
    } else {
        None
    };
    let first = g.returned || g.chance(0.2);
    let (vars, scopes, consts) = (g.vars.clone(), g.scopes.clone(), g.consts.clone());
    if first {
        g.vars.clear();
        g.scopes.clear();
        declare_params(g, &f.params);
        g.consts = module_consts.to_vec();
    }
    // What is outside the loop: read only, and no rows of run-time length.
    let (hidden, frozen) = (g.hidden.len(), g.frozen.len());
    for v in &mut g.vars {
        match &v.kind {
            Kind::Real { .. } => v.protected = true,
            Kind::Int { .. } if v.mutable => v.protected = true,
            _ => {}
        }
    }
    for v in g.visible() {
        match &v.kind {
            Kind::Array {
                len: ALen::Run,
                inner: Some(_),
                ..
            } => g.hidden.push(v.name),
            Kind::Array { .. } => g.frozen.push(v.name),
            _ => {}
        }
    }
    let slices: Vec<String> = f
        .params
        .iter()
        .filter(|p| matches!(p.kind, ParamKind::Real(Shape::Slice, _)))
        .map(|p| p.name.clone())
        .collect();
    g.push_scope();
    let (k, x) = ("k_pre".to_string(), "x_pre".to_string());
    let (pattern, iter) = if !slices.is_empty() && g.chance(0.8) {
        let xs = g.pick(&slices);
        match g.rng.random_range(0..5) {
            0 => {
                g.declare(&k, Kind::Int { hi: Hi::BelowN }, false);
                (k, format!("0..{xs}.len()"))
            }
            1 => {
                g.declare(&x, Kind::Real { deref: true }, false);
                (x, format!("{xs}.iter()"))
            }
            2 => {
                g.declare(&k, Kind::Int { hi: Hi::BelowN }, false);
                g.declare(&x, Kind::Real { deref: true }, false);
                (format!("({k}, {x})"), format!("{xs}.iter().enumerate()"))
            }
            3 if slices.len() > 1 => {
                let ys = g.pick(&slices);
                let y = "y_pre".to_string();
                g.declare(&x, Kind::Real { deref: true }, false);
                g.declare(&y, Kind::Real { deref: false }, false);
                (
                    format!("({x}, &{y})"),
                    format!("{xs}.iter().zip({ys}.iter())"),
                )
            }
            _ => {
                g.declare(&x, Kind::Real { deref: false }, false);
                (format!("&{x}"), format!("{xs}.iter()"))
            }
        }
    } else if g.chance(0.8) {
        let n = g.rng.random_range(2..8);
        g.declare(&k, Kind::Int { hi: Hi::Max(n - 1) }, false);
        (k, format!("0..{n}"))
    } else {
        g.iterable()
    };
    g.loops.push(LoopCtx {
        label: None,
        value: false,
    });
    g.control += 1;
    g.sample = true;
    g.budget = g.rng.random_range(3..9);
    let mut body = Vec::new();
    // A local of the body, which its loop accumulates into, settled so that no `let`
    // shadows it.
    let local = g.fresh("v");
    let init = g.expr(2);
    body.push(Stmt::Let {
        name: local.clone(),
        mutable: true,
        annotated: g.chance(0.3),
        init,
    });
    g.declare(&local, Kind::Real { deref: false }, true);
    g.settled.push(local.clone());
    for _ in 0..g.rng.random_range(0..3) {
        g.stmt(1, &mut body);
    }
    g.inner_loop(1, &local, &mut body);
    for _ in 0..g.rng.random_range(0..2) {
        g.stmt(1, &mut body);
    }
    // The term: the local, with what the body computed and what it reads from outside.
    let other = g.expr(2);
    let read = Expr::Var {
        name: local.clone(),
        deref: false,
    };
    let read = if g.chance(0.3) { g.bounded(read) } else { read };
    let op = if g.chance(0.5) {
        BinOp::Add
    } else {
        BinOp::Mul
    };
    let term = Expr::Bin(op, Box::new(read), Box::new(other));
    let sum = || Expr::Var {
        name: acc.clone(),
        deref: false,
    };
    let place = Place::Var(acc.clone());
    let add = match g.rng.random_range(0..6) {
        0 => Stmt::Assign(place, "-", term),
        1 => Stmt::Assign(
            place,
            "",
            Expr::Bin(BinOp::Add, Box::new(sum()), Box::new(term)),
        ),
        2 => Stmt::Assign(
            place,
            "",
            Expr::Bin(BinOp::Add, Box::new(term), Box::new(sum())),
        ),
        3 => Stmt::Assign(
            place,
            "",
            Expr::Bin(BinOp::Sub, Box::new(sum()), Box::new(term)),
        ),
        _ => Stmt::Assign(place, "+", term),
    };
    if g.chance(0.25) {
        let c = g.cond(1);
        body.push(Stmt::If(vec![(c, vec![add])], None));
    } else {
        body.push(add);
    }
    g.settled.pop();
    g.sample = false;
    g.control -= 1;
    g.loops.pop();
    g.pop_scope();
    g.hidden.truncate(hidden);
    g.frozen.truncate(frozen);
    (g.vars, g.scopes, g.consts) = (vars, scopes, consts);
    let init = g.literal();
    let stmts = [
        Stmt::Let {
            name: acc.clone(),
            mutable: true,
            annotated: false,
            init,
        },
        Stmt::For {
            label: None,
            pattern,
            iter,
            body,
        },
    ];
    if first {
        f.body.splice(0..0, stmts);
    } else {
        f.body.extend(stmts);
    }
    let sum = Expr::Var {
        name: acc,
        deref: false,
    };
    let sum = match scale {
        Some(scale) => Expr::Bin(BinOp::Mul, Box::new(sum), Box::new(scale)),
        None => sum,
    };
    let result = std::mem::replace(&mut f.result, Expr::Lit("0.0".into()));
    f.result = Expr::Bin(BinOp::Add, Box::new(result), Box::new(sum));
}
