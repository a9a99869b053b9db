//! Arrays, constant-bound loops, branches, integer and boolean parameters, and `wrt`:
//! each checked against central finite differences and against the same computation on
//! the `Tape` engine.

// `#[grad]` code indexes arrays with loop variables (iterators are not differentiated),
// and one test spells out `!(a > b)` on purpose.
#![allow(clippy::needless_range_loop, clippy::neg_cmp_op_on_partial_ord)]

mod common;

use autodiff::prelude::*;
use common::{assert_all_close, assert_close, central_difference};

const N: usize = 4;
const H: usize = 3;

#[grad(wrt(w))]
fn dot(w: &[f64; N], x: &[f64; N]) -> f64 {
    let mut acc = 0.0;
    for i in 0..N {
        acc += w[i] * x[i];
    }
    acc
}

#[test]
fn dot_product_gradient_is_the_other_vector() {
    let w = [0.5, -1.0, 2.0, 0.25];
    let x = [1.5, 2.0, -0.5, 4.0];
    let (value, dw) = dot_grad(&w, &x);
    assert_eq!(value, dot(&w, &x));
    assert_eq!(dw, x);
}

/// A matrix-vector product through a local array, a nonlinearity, and a sum.
#[grad]
fn matvec(m: [[f64; N]; H], v: &[f64; N]) -> f64 {
    let mut h = [0.0; H];
    for j in 0..H {
        for i in 0..N {
            h[j] += m[j][i] * v[i];
        }
        h[j] = h[j].tanh();
    }
    let mut total = 0.0;
    for j in 0..H {
        total += h[j] * (j as f64 + 1.0);
    }
    total
}

fn matvec_on_tape(m: &[[f64; N]; H], v: &[f64; N]) -> (f64, Vec<f64>) {
    let tape = Tape::new();
    let mv: Vec<Vec<Var>> = m
        .iter()
        .map(|row| row.iter().map(|&x| tape.var(x)).collect())
        .collect();
    let vv: Vec<Var> = v.iter().map(|&x| tape.var(x)).collect();
    let mut total = tape.var(0.0);
    let zero = total;
    for j in 0..H {
        let mut h = zero * 0.0;
        for i in 0..N {
            h += mv[j][i] * vv[i];
        }
        total += h.tanh() * (j as f64 + 1.0);
    }
    let grad = total.gradient();
    let mut all: Vec<f64> = mv.iter().flatten().map(|&x| grad.wrt(x)).collect();
    all.extend(vv.iter().map(|&x| grad.wrt(x)));
    (total.value(), all)
}

#[test]
fn matrix_vector_product_matches_tape_and_finite_differences() {
    let m = [
        [0.1, -0.2, 0.3, 0.4],
        [0.5, 0.6, -0.7, 0.8],
        [-0.9, 1.0, 1.1, -1.2],
    ];
    let v = [0.3, -0.1, 0.7, 0.2];
    let (value, dm, dv) = matvec_grad(m, &v);
    assert_eq!(value, matvec(m, &v));
    let mut ours: Vec<f64> = dm.iter().flatten().copied().collect();
    ours.extend(dv);
    let (tape_value, tape_grad) = matvec_on_tape(&m, &v);
    assert_close(value, tape_value, 1e-14, "value vs tape");
    assert_all_close(&ours, &tape_grad, 1e-14, "gradient vs tape");

    let flat = |p: &[f64]| {
        let mut m2 = [[0.0; N]; H];
        for j in 0..H {
            for i in 0..N {
                m2[j][i] = p[j * N + i];
            }
        }
        let v2 = [p[12], p[13], p[14], p[15]];
        matvec(m2, &v2)
    };
    let point: Vec<f64> = m.iter().flatten().chain(v.iter()).copied().collect();
    for (k, g) in ours.iter().enumerate() {
        assert_close(
            *g,
            central_difference(flat, &point, k),
            1e-7,
            &format!("fd {k}"),
        );
    }
}

/// Nested loops that overwrite a local array every outer iteration, with index arithmetic
/// on a flat parameter and an inclusive range.
#[grad]
fn overwrite(p: &[f64; H * N], x: f64) -> f64 {
    let mut state = [0.0; N];
    let mut out = 0.0;
    for step in 0..=2 {
        for i in 0..N {
            let k = (i + step) % N;
            state[i] = (state[k] * x + p[(step % H) * N + i]).sin();
        }
        out += state[step];
    }
    out * x
}

#[test]
fn nested_loops_that_overwrite() {
    let p = [
        0.1, 0.2, -0.3, 0.4, -0.5, 0.6, 0.7, -0.8, 0.9, 1.0, -1.1, 1.2,
    ];
    let x = 0.7;
    let (value, dp, dx) = overwrite_grad(&p, x);
    assert_eq!(value, overwrite(&p, x));
    let mut point = p.to_vec();
    point.push(x);
    let f = |q: &[f64]| {
        let mut p2 = [0.0; H * N];
        p2.copy_from_slice(&q[..12]);
        overwrite(&p2, q[12])
    };
    for k in 0..12 {
        assert_close(
            dp[k],
            central_difference(f, &point, k),
            1e-7,
            &format!("dp[{k}]"),
        );
    }
    assert_close(dx, central_difference(f, &point, 12), 1e-7, "dx");
}

#[grad]
fn piecewise(x: f64) -> f64 {
    if x > 1.0 {
        x * x
    } else if x > 0.0 {
        x.sin() * 2.0
    } else {
        -x * 3.0
    }
}

#[test]
fn branches_taken_every_way() {
    for (x, expected) in [(2.0, 4.0), (0.5, 2.0 * 0.5f64.cos()), (-1.5, -3.0)] {
        let (value, dx) = piecewise_grad(x);
        assert_eq!(value, piecewise(x));
        assert_close(dx, expected, 1e-15, &format!("piecewise at {x}"));
        assert_close(
            dx,
            central_difference(|p| piecewise(p[0]), &[x], 0),
            1e-7,
            "fd",
        );
    }
}

/// Assignments to `mut` variables inside branches inside a loop, with `&&`, `||` and `!`.
#[grad]
fn branchy(w: &[f64; N], scale: f64) -> f64 {
    let mut acc = 0.0;
    let mut last = 1.0;
    for i in 0..N {
        if w[i] > 0.0 && !(w[i] > 10.0) {
            acc += w[i] * scale;
            last = w[i];
        } else if w[i] < -1.0 || i == 0 {
            acc -= 0.5 * w[i] * w[i];
        } else {
            last *= scale;
        }
    }
    acc * last
}

#[test]
fn branches_inside_loops() {
    for w in [
        [0.5, -2.0, 0.3, -0.4],
        [-0.5, 2.0, -3.0, 0.4],
        [1.5, 0.5, -0.2, -1.4],
    ] {
        let scale = 1.3;
        let (value, dw, dscale) = branchy_grad(&w, scale);
        assert_eq!(value, branchy(&w, scale));
        let mut point = w.to_vec();
        point.push(scale);
        let f = |q: &[f64]| branchy(&[q[0], q[1], q[2], q[3]], q[4]);
        for k in 0..N {
            assert_close(
                dw[k],
                central_difference(f, &point, k),
                1e-7,
                &format!("dw[{k}]"),
            );
        }
        assert_close(dscale, central_difference(f, &point, N), 1e-7, "dscale");
    }
}

/// An `if` as a value, in the middle of an expression, and a block as a value.
#[grad]
fn if_value(x: f64, y: f64) -> f64 {
    let sign = if x * y > 0.0 { 1.0 } else { -1.0 };
    let magnitude = (x * y).abs() + if y > x { y.exp() } else { x.ln_1p() };
    sign * magnitude + {
        let t = x - y;
        t * t
    }
}

#[test]
fn if_as_a_value() {
    for (x, y) in [(0.5, 1.5), (1.5, 0.5), (-0.5, 0.7), (0.9, -0.4)] {
        let (value, dx, dy) = if_value_grad(x, y);
        assert_eq!(value, if_value(x, y));
        let f = |p: &[f64]| if_value(p[0], p[1]);
        assert_close(dx, central_difference(f, &[x, y], 0), 1e-7, "dx");
        assert_close(dy, central_difference(f, &[x, y], 1), 1e-7, "dy");
    }
}

/// Tests of a float's class in conditions (`is_nan`, `is_finite`, `is_sign_negative`),
/// with a shared sub-expression, in every mode: a guard as numeric code writes it.
#[grad(jvp, hvp)]
fn guarded(x: f64, y: f64) -> f64 {
    let product = x * y;
    if y.is_nan() || !product.is_finite() {
        0.0
    } else if (x - y).is_sign_negative() {
        -product * x
    } else {
        product * x + y
    }
}

#[test]
fn float_class_tests_are_conditions() {
    for (x, y) in [(1.5, 0.5), (-1.5, 0.5), (0.7, -2.0)] {
        let (value, dx, dy) = guarded_grad(x, y);
        assert_eq!(value, guarded(x, y));
        let f = |p: &[f64]| guarded(p[0], p[1]);
        assert_close(dx, central_difference(f, &[x, y], 0), 1e-7, "dx");
        assert_close(dy, central_difference(f, &[x, y], 1), 1e-7, "dy");
        let (_, tangent) = guarded_jvp(x, y, 1.0, 0.0);
        assert_close(tangent, dx, 1e-15, "jvp");
        let (_, _, _, hv_x, _) = guarded_hvp(x, y, 1.0, 0.0);
        let slope = (guarded_grad(x + 1e-5, y).1 - guarded_grad(x - 1e-5, y).1) / 2e-5;
        assert_close(hv_x, slope, 1e-6, "hvp");
    }
    // The guarded branch: a constant, so no gradient (a condition is not differentiated).
    assert_eq!(guarded_grad(1e300, 1e300), (0.0, 0.0, 0.0));
    // A NaN partial of `product` meets its zero adjoint: `0·NaN`, as the guide says.
    assert_eq!(guarded_grad(1.0, f64::NAN).0, 0.0);
}

/// Integer and boolean parameters are constants with no entry in the gradient.
#[grad]
fn with_constants(x: f64, n: i32, flag: bool, count: usize) -> f64 {
    let mut total = 0.0;
    for i in 0..4 {
        if i < count {
            total += x.powi(n) * (i as f64);
        }
    }
    if flag {
        total * x
    } else {
        total
    }
}

#[test]
fn integer_and_boolean_parameters() {
    let (value, dx) = with_constants_grad(1.5, 3, true, 3);
    assert_eq!(value, with_constants(1.5, 3, true, 3));
    // total = 3·x³ (i = 0, 1, 2), times x: 3x⁴ → 12x³.
    assert_close(dx, 12.0 * 1.5f64.powi(3), 1e-14, "flag");
    let (_, dx) = with_constants_grad(1.5, 2, false, 4);
    // total = 6·x² → 12x.
    assert_close(dx, 18.0, 1e-14, "no flag");
}

#[grad(wrt(b))]
fn only_b(a: &[f64; 2], b: &[f64; 2], c: f64) -> f64 {
    let mut s = 0.0;
    for i in 0..2 {
        s += a[i] * b[i] * c;
    }
    s
}

#[test]
fn wrt_an_array_subset() {
    let (value, db) = only_b_grad(&[1.0, 2.0], &[3.0, 4.0], 0.5);
    assert_eq!(value, 0.5 * (3.0 + 8.0));
    assert_eq!(db, [0.5, 1.0]);
}

/// Found by the random programs of `autodiff-difftest`: a `for` loop over two arrays
/// zipped keeps its saved values in a stack array whose length is the smaller trip
/// count, computed in a constant (it was `core::cmp::min`, which is not a `const fn`).
#[grad]
fn zip_of_arrays(w: [f64; 3], x: &[f64; 2]) -> f64 {
    let mut s = 0.0;
    for (a, b) in w.iter().zip(x.iter()) {
        s += (a * b).tanh();
    }
    s
}

#[test]
fn a_loop_over_two_zipped_arrays_saves_the_shorter_trip_count() {
    let (w, x) = ([0.5, -1.0, 2.0], [1.5, -0.25]);
    let (value, dw, dx) = zip_of_arrays_grad(w, &x);
    assert_eq!(value, zip_of_arrays(w, &x));
    let at = [w[0], w[1], w[2], x[0], x[1]];
    let f = |p: &[f64]| zip_of_arrays([p[0], p[1], p[2]], &[p[3], p[4]]);
    let got = [dw[0], dw[1], dw[2], dx[0], dx[1]];
    for (i, &g) in got.iter().enumerate() {
        assert_close(g, central_difference(f, &at, i), 1e-8, "zip");
    }
    assert_eq!(dw[2], 0.0, "the third weight is never read");
}

/// Found by the random programs of `autodiff-difftest`: a `let d;` assigned after an
/// early `return` (or `break`, `continue`) in the same branch. The exit becomes a flag
/// and the assignment runs under `if !flag`, where Rust cannot prove `d` assigned
/// before it is read: the generated code did not compile.
#[allow(clippy::needless_late_init)] // the late initialisations are what is tested
#[grad]
fn deferred_let_after_an_exit(x: f64, y: f64) -> f64 {
    let d;
    if x > 0.0 {
        if x > 1.0 {
            return x * y;
        }
        d = x.sin() * y;
    } else {
        d = x * 3.0;
    }
    let mut s = d * x;
    for i in 0..3 {
        let e: f64;
        if y > i as f64 {
            if y > 2.5 {
                break;
            }
            e = y * y;
        } else {
            if x < -1.0 {
                continue;
            }
            e = x;
        }
        s += e.tanh();
    }
    s
}

#[test]
fn a_deferred_let_assigned_after_an_exit_compiles_and_is_right() {
    for (x, y) in [
        (0.5, 0.7),
        (1.5, -0.3),
        (-0.5, 1.2),
        (-1.5, 2.7),
        (0.25, 3.0),
    ] {
        let (value, dx, dy) = deferred_let_after_an_exit_grad(x, y);
        assert_eq!(value, deferred_let_after_an_exit(x, y));
        let f = |p: &[f64]| deferred_let_after_an_exit(p[0], p[1]);
        assert_close(dx, central_difference(f, &[x, y], 0), 1e-7, "dx");
        assert_close(dy, central_difference(f, &[x, y], 1), 1e-7, "dy");
    }
}
