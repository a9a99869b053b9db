//! Parameters of a type `#[grad]` does not look into (an enum, a `&str`, a setting): they
//! are constants, chosen by `match` or compared in conditions that read nothing else, and
//! every mode differentiates the rest (`lower/opaque.rs`). Checked against closed forms
//! and central differences, for each value of the constant.

mod common;

use autodiff::prelude::*;
use common::{assert_all_close, assert_close, fd_gradient};
use std::f64::consts::FRAC_1_SQRT_2;

/// An operation chosen at run time: data, never differentiated.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Op {
    Add,
    Mul,
    Pow,
    Scale(i32),
}

#[grad(wrt(x, y), jvp, hvp)]
fn apply(x: f64, y: f64, op: Op) -> f64 {
    match op {
        Op::Add => x + y,
        Op::Mul => x * y,
        Op::Pow => x.powf(y),
        // A variant with data, matched without binding it.
        Op::Scale(_) => 2.0 * x * x,
    }
}

#[test]
fn an_enum_chosen_by_match_is_a_constant_and_each_arm_is_differentiated() {
    let (x, y) = (1.7, 0.6);
    let closed = [
        (Op::Add, x + y, [1.0, 1.0]),
        (Op::Mul, x * y, [y, x]),
        (
            Op::Pow,
            x.powf(y),
            [y * x.powf(y - 1.0), x.powf(y) * x.ln()],
        ),
        (Op::Scale(3), 2.0 * x * x, [4.0 * x, 0.0]),
    ];
    for (op, value, partials) in closed {
        let (v, dx, dy) = apply_grad(x, y, op);
        assert_close(v, value, 1e-15, "value");
        assert_all_close(&[dx, dy], &partials, 1e-14, "closed form");
        let fd = fd_gradient(|p| apply(p[0], p[1], op), &[x, y]);
        assert_all_close(&[dx, dy], &fd, 1e-8, "central differences");
        // Forward mode: the directional derivative along (0.3, -0.8).
        let (jv, tangent) = apply_jvp(x, y, op, 0.3, -0.8);
        assert_close(jv, value, 1e-15, "jvp value");
        assert_close(tangent, 0.3 * dx - 0.8 * dy, 1e-14, "jvp");
        // Second order: H·v by central differences of the gradient.
        let (_, _, _, hx, hy) = apply_hvp(x, y, op, 1.0, 0.0);
        let h = 1e-5;
        let (_, dx_plus, dy_plus) = apply_grad(x + h, y, op);
        let (_, dx_minus, dy_minus) = apply_grad(x - h, y, op);
        let column = [
            (dx_plus - dx_minus) / (2.0 * h),
            (dy_plus - dy_minus) / (2.0 * h),
        ];
        assert_all_close(&[hx, hy], &column, 1e-6, "hvp");
    }
}

/// Without `wrt`: the constant is left out of the partials, as an integer would be.
#[grad]
fn conditioned(x: f64, y: f64, op: Op, name: &str) -> f64 {
    let mut z = x * y;
    if op == Op::Add || matches!(op, Op::Scale(_)) {
        z += x.sin();
    }
    if name == "square" {
        z = z * z;
    }
    // A constant read from the `&str`, mixed with the differentiated values.
    z * name.len() as f64
}

#[test]
fn conditions_on_constants_of_other_types_choose_the_branch() {
    let (x, y) = (0.9, -1.3);
    for op in [Op::Add, Op::Mul, Op::Scale(1)] {
        for name in ["square", "plain"] {
            let (value, dx, dy) = conditioned_grad(x, y, op, name);
            assert_close(value, conditioned(x, y, op, name), 1e-15, "value");
            let fd = fd_gradient(|p| conditioned(p[0], p[1], op, name), &[x, y]);
            assert_all_close(&[dx, dy], &fd, 1e-7, "central differences");
        }
    }
    // One closed form: op = Add, name = "square": 6 (xy + sin x)².
    let (_, dx, dy) = conditioned_grad(x, y, Op::Add, "square");
    let z = x * y + x.sin();
    assert_all_close(
        &[dx, dy],
        &[12.0 * z * (y + x.cos()), 12.0 * z * x],
        1e-13,
        "closed",
    );
}

/// A setting of the user's, passed by reference and used only as a whole.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Penalty {
    None,
    L2,
}

#[grad(wrt(w))]
fn fit(w: &[f64; 2], xs: &[f64], ys: &[f64], penalty: &Penalty) -> f64 {
    let mut loss = 0.0;
    for i in 0..xs.len() {
        let r = w[0] * xs[i] + w[1] - ys[i];
        loss += r * r;
    }
    match penalty {
        Penalty::None => loss,
        Penalty::L2 => loss + 0.1 * (w[0] * w[0] + w[1] * w[1]),
    }
}

#[test]
fn a_setting_passed_by_reference_chooses_the_penalty() {
    let (xs, ys) = ([0.0, 1.0, 2.0], [1.0, 2.5, 5.2]);
    let w = [1.5, 0.8];
    for penalty in [Penalty::None, Penalty::L2] {
        let (value, dw) = fit_grad(&w, &xs, &ys, &penalty);
        assert_close(value, fit(&w, &xs, &ys, &penalty), 1e-15, "value");
        let fd = fd_gradient(|p| fit(&[p[0], p[1]], &xs, &ys, &penalty), &w);
        assert_all_close(&dw, &fd, 1e-7, "central differences");
    }
    let (_, plain) = fit_grad(&w, &xs, &ys, &Penalty::None);
    let (_, l2) = fit_grad(&w, &xs, &ys, &Penalty::L2);
    assert_all_close(
        &[l2[0] - plain[0], l2[1] - plain[1]],
        &[0.2 * w[0], 0.2 * w[1]],
        1e-13,
        "L2",
    );
}

/// Plain helpers (not `#[grad]`) called with constant arguments: their values are
/// constants, a tuple unpacked or read by field.
fn bounds(n: usize) -> (f64, f64) {
    (-(n as f64), n as f64)
}

fn rate(step: usize, name: &str) -> f64 {
    if name == "decay" {
        1.0 / (1.0 + step as f64)
    } else {
        0.5
    }
}

#[grad(wrt(x), jvp, hvp)]
fn scheduled(x: f64, n: usize, name: &str) -> f64 {
    let (lo, hi) = bounds(n);
    let mut total = 0.0;
    for k in 0..n {
        // A helper of the loop variable and an opaque constant, inside the loop.
        total += (x * x * rate(k, name)).clamp(lo, hi) + bounds(k).1 * x;
    }
    // A string literal among constant arguments (in an array literal too).
    let scale = [rate(0, "decay"), x * rate(1, "flat")];
    total * hi * scale[0] + scale[1] - 0.5 * x
}

#[test]
fn plain_helpers_with_constant_arguments_are_constants() {
    for (x, n, name) in [(0.8, 3, "decay"), (1.7, 4, "flat"), (2.5, 2, "decay")] {
        let by_hand = |x: f64| {
            let n_f = n as f64;
            (0..n)
                .map(|k| {
                    let r = if name == "decay" {
                        1.0 / (1.0 + k as f64)
                    } else {
                        0.5
                    };
                    (x * x * r).clamp(-n_f, n_f) + k as f64 * x
                })
                .sum::<f64>()
                * n_f
        };
        let (value, dx) = scheduled_grad(x, n, name);
        assert_close(value, by_hand(x), 1e-14, "value");
        let h = 1e-6;
        let fd = (by_hand(x + h) - by_hand(x - h)) / (2.0 * h);
        assert_close(dx, fd, 1e-6, "central differences");
        let (_, tangent) = scheduled_jvp(x, n, name, 1.0);
        assert_close(tangent, dx, 1e-13, "jvp");
        let (_, _, hx) = scheduled_hvp(x, n, name, 1.0);
        let second =
            (scheduled_grad(x + 1e-5, n, name).1 - scheduled_grad(x - 1e-5, n, name).1) / 2e-5;
        assert_close(hx, second, 1e-5, "hvp");
    }
}

const TABLE: [f64; 3] = [-0.99, -1.66, -1.36];

#[grad]
fn squash(x: f64) -> f64 {
    x.tanh() + x.sin()
}

/// A `#[grad]` function called with a real constant (`TABLE[1] + 1.19`) in a loop whose
/// reverse sweep recomputes its integers (found by the random programs: the call was
/// computed again from an argument the sweep did not have).
#[grad(reassociate, jvp)]
fn constant_argument_in_loops(x: f64, w: [f64; 3]) -> f64 {
    let mut total = 0.0;
    for i in 0..=2 {
        let mut v = w[i] * x;
        for k in (0..3).rev() {
            v -= (x * w[k]).hypot(1.0).ln();
        }
        if x > -0.5 {
            total += v * squash(TABLE[1] + 1.19);
        }
    }
    total
}

#[test]
fn a_call_with_a_real_constant_argument_in_nested_loops() {
    let (x, w) = (0.7, [0.3, -1.2, 0.8]);
    let (value, dx, dw) = constant_argument_in_loops_grad(x, w);
    assert_close(value, constant_argument_in_loops(x, w), 1e-13, "value");
    let mut p = vec![x];
    p.extend(w);
    let fd = fd_gradient(|q| constant_argument_in_loops(q[0], [q[1], q[2], q[3]]), &p);
    let mut ours = vec![dx];
    ours.extend(dw);
    assert_all_close(&ours, &fd, 1e-8, "central differences");
}

/// A loss chosen by name, with a slice: its pullback takes the name as it is.
#[grad(jvp, hvp)]
fn named_loss(x: f64, name: &str, w: &[f64]) -> f64 {
    let s: f64 = w.iter().map(|v| v * x).sum();
    if name == "l2" {
        s * s
    } else {
        s.abs()
    }
}

/// A number scaled by name, of numbers only but for the name.
#[grad(jvp, hvp)]
fn scaled(x: f64, name: &str) -> f64 {
    if name.len() > 2 {
        3.0 * x * x
    } else {
        x.sin()
    }
}

/// The name passed along, and string literals passed: constants with no partial.
#[grad(jvp, hvp)]
fn passes_names(x: f64, name: &str, w: &[f64]) -> f64 {
    named_loss(x, name, w) + named_loss(2.0 * x, "l1", w) * x + scaled(x, name) + scaled(x, "abs")
}

#[test]
fn constants_of_other_types_passed_to_calls() {
    let w = [0.5, -0.25, 1.0];
    let x = 0.7;
    let sum: f64 = w.iter().sum();
    for name in ["l2", "l1"] {
        let (value, dx, dw) = passes_names_grad(x, name, &w);
        assert_eq!(value.to_bits(), passes_names(x, name, &w).to_bits());
        // By hand: s = x Σw; the first loss by name, the second |2x Σw| · x, then the
        // scaled terms ("l2" and "l1" are short: sin x; "abs" is long: 3x²).
        let (mut d_x, mut d_w) = if name == "l2" {
            (2.0 * x * sum * sum, 2.0 * x * x * sum)
        } else {
            (sum * (x * sum).signum(), (x * sum).signum() * x)
        };
        d_x += 4.0 * x * sum.abs() + x.cos() + 6.0 * x;
        d_w += 2.0 * x * x * sum.signum();
        assert_close(dx, d_x, 1e-14, "∂/∂x");
        assert_all_close(&dw, &[d_w; 3], 1e-14, "∂/∂w");
        let mut p = vec![x];
        p.extend(w);
        let fd = fd_gradient(|q| passes_names(q[0], name, &q[1..]), &p);
        let mut ours = vec![dx];
        ours.extend(&dw);
        assert_all_close(&ours, &fd, 1e-7, "central differences");
        // Forward mode and second order along x.
        let (_, tangent) = passes_names_jvp(x, name, &w, 1.0, &[0.0; 3]);
        assert_close(tangent, dx, 1e-14, "jvp");
        let (_, _, _, hx, _) = passes_names_hvp(x, name, &w, 1.0, &[0.0; 3]);
        let h = 1e-5;
        let column = (passes_names_grad(x + h, name, &w).1 - passes_names_grad(x - h, name, &w).1)
            / (2.0 * h);
        assert_close(hx, column, 1e-6, "hvp");
    }
}

/// Conditions written in parentheses (`if (op == Op::Add && …)`, as random programs write
/// them): the parentheses after `if` are not a call passing `op` to a function, which would
/// make it a struct parameter (found by the random programs).
#[grad(jvp)]
#[allow(unused_parens, clippy::needless_return)]
fn parenthesized(x: f64, op: Op) -> f64 {
    let mut y = x;
    if (op == Op::Add && x > 0.0) {
        y += x * x;
    }
    while (op == Op::Mul && y < 10.0) {
        y *= 2.0;
    }
    return (y * x);
}

#[test]
fn parenthesized_conditions_on_an_enum() {
    let x = 1.5;
    let (value, dx) = parenthesized_grad(x, Op::Add);
    assert_eq!(value, parenthesized(x, Op::Add));
    assert_close(dx, 2.0 * x + 3.0 * x * x, 1e-14, "Add");
    // Mul: y doubles from x = 1.5 until it is 12, so y = 8x and the value 8x².
    let (value, dx) = parenthesized_grad(x, Op::Mul);
    assert_eq!(value, parenthesized(x, Op::Mul));
    assert_close(dx, 16.0 * x, 1e-14, "Mul");
}

const START: f64 = 0.25;

fn start_pair(n: usize) -> (f64, f64) {
    (0.5 + n as f64, 0.25)
}

#[grad(jvp, hvp)]
fn bump(a: f64, b: f64) -> f64 {
    a.tanh() * b + a.sin()
}

/// Locals that start as constants of unknown type (a `const`, a part of a plain helper's
/// tuple) and that a loop assigns numbers to after reading them: in the iterations after
/// the first, the reads are of numbers (found by the random programs: the call before the
/// assignment was computed as a constant, so the gradient missed its part).
#[grad(jvp, hvp)]
fn promoted_in_a_loop(x: f64) -> f64 {
    let mut y = START;
    let (c, mut z) = start_pair(0);
    let mut total = 0.0;
    for k in 2..4 {
        total += bump(y, 0.5) + bump(z, c);
        y *= 0.5 + (y + x).sigmoid();
        z += (k as f64) * x * z;
    }
    total + y.sin() + z
}

#[test]
fn constants_that_a_loop_makes_numbers() {
    for x in [0.8, -0.3] {
        let (value, dx) = promoted_in_a_loop_grad(x);
        assert_eq!(value.to_bits(), promoted_in_a_loop(x).to_bits());
        let fd = fd_gradient(|p| promoted_in_a_loop(p[0]), &[x]);
        assert_close(dx, fd[0], 1e-8, "central differences");
        let (_, tangent) = promoted_in_a_loop_jvp(x, 1.0);
        assert_close(tangent, dx, 1e-13, "jvp");
        let (_, _, hx) = promoted_in_a_loop_hvp(x, 1.0);
        let h = 1e-5;
        let second =
            (promoted_in_a_loop_grad(x + h).1 - promoted_in_a_loop_grad(x - h).1) / (2.0 * h);
        assert_close(hx, second, 1e-6, "hvp");
    }
}

#[grad(jvp, hvp)]
fn flagged(x: f64, on: bool, c: f64) -> f64 {
    if on {
        x * c
    } else {
        x + c
    }
}

/// A call of constants only (`flagged(FRAC_1_SQRT_2, true, …)`) in a branch: the sweep
/// computes it again there, `true` included (found by the random programs, seed 502:
/// the sweep named a `bool` it had not computed, and the program did not compile).
#[grad(jvp, hvp)]
fn constant_call_in_a_branch(x: f64, y: f64, name: &str) -> f64 {
    let mut a = x * y;
    match name {
        "l2" => a += flagged(y, false, -1.86),
        _ => a += flagged(FRAC_1_SQRT_2, true, FRAC_1_SQRT_2),
    }
    a * x
}

#[test]
fn constant_calls_in_branches_pass_their_flags() {
    for name in ["l2", "l1"] {
        let (x, y) = (0.7, -1.3);
        let (value, dx, dy) = constant_call_in_a_branch_grad(x, y, name);
        assert_eq!(
            value.to_bits(),
            constant_call_in_a_branch(x, y, name).to_bits()
        );
        let fd = fd_gradient(|p| constant_call_in_a_branch(p[0], p[1], name), &[x, y]);
        assert_close(dx, fd[0], 1e-8, "∂/∂x");
        assert_close(dy, fd[1], 1e-8, "∂/∂y");
        let (_, tangent) = constant_call_in_a_branch_jvp(x, y, name, 1.0, 0.0);
        assert_close(tangent, dx, 1e-13, "jvp");
    }
}
