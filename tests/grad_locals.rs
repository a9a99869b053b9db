//! Closures bound to a name and called, and nested array literals with differentiated
//! elements: against closed forms and central differences, in every mode.

mod common;

use autodiff::prelude::*;
use common::{assert_all_close, assert_close, fd_gradient};

/// A closure reads `k` as it was where it was made, though a later `let` shadows it.
#[grad]
fn captured(a: f64, b: f64) -> f64 {
    let k = a * b;
    let sq = |t: f64| t * t * k;
    let k = 100.0;
    sq(a) + sq(b) + 0.0 * k
}

#[test]
fn a_named_closure_captures_where_it_is_made() {
    let (a, b) = (1.5, 2.0);
    let (value, da, db) = captured_grad(a, b);
    // f = ab(a² + b²): ∂f/∂a = 3a²b + b³, ∂f/∂b = a³ + 3ab².
    assert_close(value, a * b * (a * a + b * b), 1e-12, "value");
    assert_close(da, 3.0 * a * a * b + b * b * b, 1e-12, "∂f/∂a");
    assert_close(db, a * a * a + 3.0 * a * b * b, 1e-12, "∂f/∂b");
}

/// Closures of one and two parameters, untyped, one calling another, in a loop.
#[grad(jvp, hvp, wrt(w))]
fn layer(w: &[f64], xs: &[f64]) -> f64 {
    let act = |z: f64| z.tanh();
    let gate = |p, q| act(p) * q + p;
    let mut total = 0.0;
    for (i, x) in xs.iter().enumerate() {
        let z = w[i % w.len()] * x;
        total += gate(z, act(z));
    }
    total
}

#[test]
fn named_closures_in_a_loop_in_every_mode() {
    let w = [0.3, -0.2, 0.7];
    let xs = [1.0, 2.0, -0.5, 0.25];
    let (value, dw) = layer_grad(&w, &xs);
    assert_eq!(value, layer(&w, &xs));
    let fd = fd_gradient(|w| layer(w, &xs), &w);
    assert_all_close(&dw, &fd, 1e-7, "∂f/∂w");
    // Closed form: each term is tanh(z)² + z, z = w·x, so ∂/∂w_j = Σ x (2 tanh(z)(1 − tanh²(z)) + 1).
    let mut expected = [0.0; 3];
    for (i, x) in xs.iter().enumerate() {
        let t = (w[i % 3] * x).tanh();
        expected[i % 3] += x * (2.0 * t * (1.0 - t * t) + 1.0);
    }
    assert_all_close(&dw, &expected, 1e-12, "closed form");
    let v = [1.0, 0.5, -2.0];
    let (_, along) = layer_jvp(&w, &xs, &v);
    let directional: f64 = dw.iter().zip(&v).map(|(d, v)| d * v).sum();
    assert_close(along, directional, 1e-12, "jvp");
    let (_, gradient, hv) = layer_hvp(&w, &xs, &v);
    assert_all_close(&gradient, &dw, 1e-12, "hvp's gradient");
    let h = 1e-5;
    let plus: Vec<f64> = w.iter().zip(&v).map(|(w, v)| w + h * v).collect();
    let minus: Vec<f64> = w.iter().zip(&v).map(|(w, v)| w - h * v).collect();
    let fd_hv: Vec<f64> = layer_grad(&plus, &xs)
        .1
        .iter()
        .zip(&layer_grad(&minus, &xs).1)
        .map(|(p, m)| (p - m) / (2.0 * h))
        .collect();
    assert_all_close(&hv, &fd_hv, 1e-6, "H·v");
}

/// A rotation matrix written out, its entries differentiated.
#[grad(hessian)]
fn rotated(x: [f64; 2], theta: f64) -> f64 {
    let (c, s) = (theta.cos(), theta.sin());
    let r = [[c, -s], [s, c]];
    let y0 = r[0][0] * x[0] + r[0][1] * x[1];
    let y1 = r[1][0] * x[0] + r[1][1] * x[1];
    y0 * y1
}

#[test]
fn a_nested_array_literal_of_differentiated_entries() {
    let (x, theta) = ([1.0, 2.0], 0.3);
    let (value, dx, dtheta) = rotated_grad(x, theta);
    let (c, s) = (theta.cos(), theta.sin());
    let (y0, y1) = (c * x[0] - s * x[1], s * x[0] + c * x[1]);
    assert_close(value, y0 * y1, 1e-15, "value");
    // ∂y0/∂θ = −y1, ∂y1/∂θ = y0: ∂f/∂θ = y0² − y1².
    assert_close(dtheta, y0 * y0 - y1 * y1, 1e-12, "∂f/∂θ");
    assert_close(dx[0], c * y1 + s * y0, 1e-12, "∂f/∂x0");
    assert_close(dx[1], -s * y1 + c * y0, 1e-12, "∂f/∂x1");
    let (_, _, _, h) = rotated_hessian(x, theta);
    assert_hessian!(
        |p: &[f64; 3]| {
            let (_, dx, dt) = rotated_grad([p[0], p[1]], p[2]);
            [dx[0], dx[1], dt]
        },
        &h,
        &[x[0], x[1], theta]
    );
}

/// Three rows of two, and a row of rows of one.
#[grad]
fn table(a: f64, b: f64) -> f64 {
    let m = [[a, b], [a * b, 1.0], [b.sin(), a]];
    let col = [[a], [b]];
    let mut total = 0.0;
    for row in m {
        total += row[0] * row[1];
    }
    total + col[0][0] * col[1][0]
}

#[test]
fn a_rectangular_literal_and_a_column() {
    let (a, b) = (0.7, -1.3);
    let (value, da, db) = table_grad(a, b);
    assert_close(value, a * b + a * b + b.sin() * a + a * b, 1e-15, "value");
    let fd = fd_gradient(|p| table(p[0], p[1]), &[a, b]);
    assert_all_close(&[da, db], &fd, 1e-8, "gradient");
    assert_close(da, 3.0 * b + b.sin(), 1e-12, "∂f/∂a");
    assert_close(db, 3.0 * a + b.cos() * a, 1e-12, "∂f/∂b");
}

/// `.to_vec()` copies: writes to the copy leave the parameter as it was.
#[grad]
fn copied(w: &[f64], a: [f64; 2]) -> f64 {
    let v = w.to_vec();
    let mut u = a.to_vec();
    u[0] *= w[1];
    v.iter().map(|x| x * x).sum::<f64>() + u[0] * a[0] + u[1] * w[0]
}

#[test]
fn to_vec_copies_a_slice_and_an_array() {
    let (w, a) = ([0.5, -1.0, 2.0], [1.5, 2.0]);
    let (value, dw, da) = copied_grad(&w, a);
    // f = Σ w² + a0² w1 + a1 w0.
    assert_close(
        value,
        5.25 + a[0] * a[0] * w[1] + a[1] * w[0],
        1e-15,
        "value",
    );
    assert_all_close(
        &dw,
        &[2.0 * w[0] + a[1], 2.0 * w[1] + a[0] * a[0], 2.0 * w[2]],
        1e-12,
        "∂f/∂w",
    );
    assert_all_close(&da, &[2.0 * a[0] * w[1], w[0]], 1e-12, "∂f/∂a");
    let fd = fd_gradient(
        |p| copied(&p[..3], [p[3], p[4]]),
        &[w[0], w[1], w[2], a[0], a[1]],
    );
    assert_all_close(
        &[dw[0], dw[1], dw[2], da[0], da[1]],
        &fd,
        1e-7,
        "central differences",
    );
}

/// Two numbers built together, as a user keeps them.
#[derive(Clone, Copy)]
struct Pair {
    a: f64,
    b: f64,
}

/// A particle: arrays and a number.
struct Particle {
    pos: [f64; 2],
    vel: [f64; 2],
    mass: f64,
}

/// A struct holding a struct.
struct Spring {
    ends: Pair,
    k: f64,
}

/// Struct literals read by field, written through a field, destructured (an array field
/// copied whole), nested; a value used twice.
#[grad(jvp, hvp)]
fn structs(x: f64, y: f64) -> f64 {
    let p = Pair { a: x * y, b: x + y };
    let mut q = Particle {
        pos: [x, y],
        vel: [p.a, 1.0],
        mass: 2.0,
    };
    q.pos[0] += q.vel[0] * 0.1;
    let Particle { pos, mass, .. } = q;
    let s = Spring {
        ends: Pair { a: p.b, b: 3.0 },
        k: x,
    };
    // A struct local as the field of another: copied field by field.
    let t = Spring { ends: p, k: y };
    pos[0] * p.a + p.b.sin() * mass + s.ends.a * s.k * s.ends.b + t.ends.a * t.k
}

/// The same, written with plain locals.
fn structs_by_hand(x: f64, y: f64) -> f64 {
    let (a, b) = (x * y, x + y);
    let pos0 = x + a * 0.1;
    pos0 * a + b.sin() * 2.0 + b * x * 3.0 + a * y
}

#[test]
fn struct_literals_are_locals_field_by_field() {
    for (x, y) in [(0.7, 1.3), (-1.1, 0.4)] {
        let (value, dx, dy) = structs_grad(x, y);
        assert_close(value, structs_by_hand(x, y), 1e-14, "value");
        assert_close(value, structs(x, y), 1e-14, "value");
        let fd = fd_gradient(|p| structs_by_hand(p[0], p[1]), &[x, y]);
        assert_all_close(&[dx, dy], &fd, 1e-8, "central differences");
        let (_, tangent) = structs_jvp(x, y, 0.5, -2.0);
        assert_close(tangent, 0.5 * dx - 2.0 * dy, 1e-13, "jvp");
        let (_, _, _, hx, hy) = structs_hvp(x, y, 0.0, 1.0);
        let h = 1e-5;
        let (_, dx_plus, dy_plus) = structs_grad(x, y + h);
        let (_, dx_minus, dy_minus) = structs_grad(x, y - h);
        let column = [
            (dx_plus - dx_minus) / (2.0 * h),
            (dy_plus - dy_minus) / (2.0 * h),
        ];
        assert_all_close(&[hx, hy], &column, 1e-6, "hvp");
    }
}

/// A struct built per sample in a loop over a slice.
#[grad(wrt(w))]
fn per_sample(w: &[f64; 2], xs: &[f64]) -> f64 {
    let mut loss = 0.0;
    for &x in xs {
        let p = Pair {
            a: w[0] * x,
            b: w[1],
        };
        let Pair { a, b } = p;
        loss += (a + b).tanh() * p.a;
    }
    loss
}

#[test]
fn a_struct_per_sample_in_a_loop() {
    let xs = [0.3, -1.2, 2.0, 0.7];
    let w = [0.8, -0.4];
    let (value, dw) = per_sample_grad(&w, &xs);
    let by_hand = |w: &[f64]| {
        xs.iter()
            .map(|x| (w[0] * x + w[1]).tanh() * w[0] * x)
            .sum::<f64>()
    };
    assert_close(value, by_hand(&w), 1e-14, "value");
    assert_all_close(&dw, &fd_gradient(by_hand, &w), 1e-8, "central differences");
}

/// Rows read whole: of a 2-D local (`let row = h[t];`) and of a slice of arrays
/// (`let x = xs[t % xs.len()];`), copies that the sweep differentiates through.
#[grad(wrt(w), jvp)]
#[allow(clippy::needless_range_loop)] // the row read whole is what is tested
fn recurrent(w: &[f64; 2], xs: &[[f64; 2]]) -> f64 {
    let mut h = [[0.0; 2]; 4];
    for t in 0..4 {
        let x = xs[t % xs.len()];
        h[t][0] = (w[0] * x[0] + w[1] * x[1]).tanh();
        h[t][1] = h[t][0] * x[1];
    }
    let mut total = 0.0;
    for t in 0..4 {
        let row = h[t];
        total += row[0] * row[1] + row[0];
    }
    total
}

#[test]
fn rows_read_whole_are_copies() {
    let xs = [[0.3, -0.5], [1.2, 0.4], [-0.7, 0.9]];
    let w = [0.6, -1.1];
    let by_hand = |w: &[f64]| {
        (0..4)
            .map(|t| {
                let x = xs[t % 3];
                let a = (w[0] * x[0] + w[1] * x[1]).tanh();
                a * a * x[1] + a
            })
            .sum::<f64>()
    };
    let (value, dw) = recurrent_grad(&w, &xs);
    assert_close(value, by_hand(&w), 1e-14, "value");
    assert_all_close(&dw, &fd_gradient(by_hand, &w), 1e-8, "central differences");
    let (_, tangent) = recurrent_jvp(&w, &xs, &[1.0, 0.5]);
    assert_close(tangent, dw[0] + 0.5 * dw[1], 1e-13, "jvp");
}

/// Arrays assigned whole: a recurrence that keeps its state in an array (`h = next;`),
/// and a row of a 2-D local assigned from an array (`hs[t] = h;`), both read again later.
#[grad(jvp, hvp)]
#[allow(clippy::needless_range_loop)] // indexed as users write it
fn assigned_whole(w: [f64; 3], x: [f64; 2]) -> f64 {
    let mut h = x;
    let mut hs = [[0.0; 2]; 3];
    for t in 0..3 {
        let next = [(w[0] * h[0] + w[1] * h[1]).tanh(), h[0] * w[2] + h[1]];
        h = next;
        hs[t] = h;
    }
    let mut total = 0.0;
    for t in 0..3 {
        total += hs[t][0] * hs[t][1];
    }
    total + h[0]
}

#[test]
fn arrays_assigned_whole_are_copies() {
    let w = [0.6, -1.1, 0.3];
    let x = [0.4, -0.2];
    let by_hand = |p: &[f64]| {
        let (mut a, mut b) = (p[3], p[4]);
        let mut total = 0.0;
        for _ in 0..3 {
            let next = ((p[0] * a + p[1] * b).tanh(), a * p[2] + b);
            (a, b) = next;
            total += a * b;
        }
        total + a
    };
    let (value, dw, dx) = assigned_whole_grad(w, x);
    let point = [w[0], w[1], w[2], x[0], x[1]];
    assert_close(value, by_hand(&point), 1e-14, "value");
    let numeric = fd_gradient(by_hand, &point);
    assert_all_close(
        &[dw[0], dw[1], dw[2], dx[0], dx[1]],
        &numeric,
        1e-8,
        "differences",
    );
    let (_, tangent) = assigned_whole_jvp(w, x, [1.0, 0.0, 0.5], [0.0, 1.0]);
    assert_close(tangent, dw[0] + 0.5 * dw[2] + dx[1], 1e-13, "jvp");
    let (_, _, _, hv_w, _) = assigned_whole_hvp(w, x, [1.0, 0.0, 0.0], [0.0, 0.0]);
    let h = 1e-5;
    let up = assigned_whole_grad([w[0] + h, w[1], w[2]], x).1;
    let down = assigned_whole_grad([w[0] - h, w[1], w[2]], x).1;
    for k in 0..3 {
        assert_close(hv_w[k], (up[k] - down[k]) / (2.0 * h), 1e-6, "hvp");
    }
}

// ----- vectors collected into locals, arrays written out and taken apart ----------------

/// Predictions collected into a typed local, residuals by a turbofish, and an array
/// written out and taken apart.
#[grad(jvp, wrt(w))]
fn collected(w: [f64; 2], t: &[f64], y: &[f64]) -> f64 {
    let pred: Vec<f64> = t.iter().map(|&t| w[0] * (w[1] * t).exp()).collect();
    let resid = pred.iter().zip(y).map(|(p, y)| p - y).collect::<Vec<f64>>();
    let [a, b] = [w[0] * w[1], w[0] + w[1]];
    let mut total = a * b;
    for r in &resid {
        total += r * r;
    }
    total
}

#[test]
fn vectors_collected_into_locals_and_literals_taken_apart() {
    let (t, y) = ([0.0, 0.5, 1.5], [1.2, 1.9, 4.0]);
    let w = [1.1, 0.7];
    let (value, d_w) = collected_grad(w, &t, &y);
    assert_eq!(value, collected(w, &t, &y));
    // Closed form: f = w0²w1 + w0w1² + Σ (w0·e^(w1 t) − y)².
    let mut expected = [
        2.0 * w[0] * w[1] + w[1] * w[1],
        w[0] * w[0] + 2.0 * w[0] * w[1],
    ];
    for (t, y) in t.iter().zip(&y) {
        let e = (w[1] * t).exp();
        let r = w[0] * e - y;
        expected[0] += 2.0 * r * e;
        expected[1] += 2.0 * r * w[0] * t * e;
    }
    assert_all_close(&d_w, &expected, 1e-13, "∂/∂w");
    let (_, tangent) = collected_jvp(w, &t, &y, [0.0, 1.0]);
    assert_close(tangent, d_w[1], 1e-13, "tangent along w1");
}

/// `let h = *w;` copies an array behind a reference (as `let h = w;` copies one by value):
/// writes to the copy leave the parameter as it was, and both are read after.
#[grad]
fn dereferenced(w: &[f64; 3], m: &[[f64; 2]; 2]) -> f64 {
    let mut h = *w;
    h[0] *= h[1];
    let row: [f64; 2] = m[1];
    let mut copy: [[f64; 2]; 2] = *m;
    copy[0][1] += row[0];
    h[0] + w[0] * h[2] + copy[0][1] * row[1]
}

#[test]
fn a_copy_through_a_dereference() {
    let (w, m) = ([0.5, -1.5, 2.0], [[1.0, 0.25], [-0.5, 3.0]]);
    let (value, dw, dm) = dereferenced_grad(&w, &m);
    // f = w0·w1 + w0·w2 + (m01 + m10)·m11.
    assert_close(value, dereferenced(&w, &m), 0.0, "value");
    assert_all_close(&dw, &[w[1] + w[2], w[0], w[0]], 1e-15, "∂f/∂w");
    assert_all_close(
        &[dm[0][0], dm[0][1], dm[1][0], dm[1][1]],
        &[0.0, m[1][1], m[1][1], m[0][1] + m[1][0]],
        1e-15,
        "∂f/∂m",
    );
}

/// A row bound by a loop copied whole, `let r = *row;` and `let r = row;` of `for &row`:
/// writes to the copy leave the rows as they were.
#[grad]
fn copied_rows(rows: &[[f64; 2]], w: [f64; 2]) -> f64 {
    let mut s = 0.0;
    for row in rows {
        let mut r = *row;
        r[0] *= w[0];
        s += r[0] * r[1] + row[0] * w[1];
    }
    for &row in rows.iter() {
        let r: [f64; 2] = row;
        s += (r[1] - w[1]).powi(2);
    }
    s
}

#[test]
fn copies_of_rows_bound_by_loops() {
    let rows = vec![[0.5, -1.0], [2.0, 0.25], [-0.75, 1.5]];
    let w = [1.5, -0.5];
    let (value, d_rows, d_w) = copied_rows_grad(&rows, w);
    assert_close(value, copied_rows(&rows, w), 0.0, "value");
    let flat: Vec<f64> = rows.iter().flatten().chain(&w).copied().collect();
    let fd = fd_gradient(
        |p| copied_rows(&[[p[0], p[1]], [p[2], p[3]], [p[4], p[5]]], [p[6], p[7]]),
        &flat,
    );
    let got: Vec<f64> = d_rows.iter().flatten().chain(&d_w).copied().collect();
    assert_all_close(&got, &fd, 1e-6, "∂f against differences");
    // By hand: ∂f/∂w0 = Σ r0·r1.
    let by_hand: f64 = rows.iter().map(|r| r[0] * r[1]).sum();
    assert_close(d_w[0], by_hand, 1e-12, "∂f/∂w0");
}

/// A struct built in the body, with an array field.
#[derive(Clone, Copy)]
struct Span2 {
    a: f64,
    b: [f64; 2],
}

/// Copies and destructurings of a struct local inside loops, branches and blocks
/// (found by the random programs: inside a nested block the local was taken for one used
/// whole).
#[grad(jvp, hvp)]
fn nested_destructuring(x: f64, y: f64) -> f64 {
    let mut p = Span2 {
        a: x * y,
        b: [x, y],
    };
    let mut s = 0.0;
    for k in 0..4 {
        let Span2 { b: h, .. } = p;
        let q = p;
        s += h[k % 2] * x + q.a;
        if k == 2 {
            let Span2 { a, b } = q;
            s += a * b[1];
            p.a += s;
        }
    }
    let r = {
        let Span2 { a, .. } = p;
        a * 2.0
    };
    s + p.a + r
}

#[test]
fn struct_locals_taken_apart_in_nested_blocks() {
    let (x, y) = (0.5, 1.5);
    let (value, dx, dy) = nested_destructuring_grad(x, y);
    assert_eq!(value.to_bits(), nested_destructuring(x, y).to_bits());
    // By hand: k = 0..2 add x² + xy, xy·x + xy, x² + xy; at k = 2 also xy·y, and then
    // p.a = xy + s; k = 3 adds xy·x + p.a. Value s + 3 p.a.
    let f = |x: f64, y: f64| {
        let xy = x * y;
        let mut s = (x * x + xy) + (y * x + xy) + (x * x + xy) + xy * y;
        let a = xy + s;
        s += y * x + a;
        s + 3.0 * a
    };
    assert_close(value, f(x, y), 1e-14, "value by hand");
    let fd = fd_gradient(|p| nested_destructuring(p[0], p[1]), &[x, y]);
    assert_all_close(&[dx, dy], &fd, 1e-7, "central differences");
    let (_, tangent) = nested_destructuring_jvp(x, y, 1.0, -0.5);
    assert_close(tangent, dx - 0.5 * dy, 1e-13, "jvp");
}
