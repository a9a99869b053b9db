//! Calls that pass arrays, slices and structs whole (`dot(&w[j], x)`, `layer(&m.first, x)`,
//! `self.layer.forward(x)`), differentiated through the callee's pullback `<name>_vjp`,
//! and the pullbacks themselves. Checked against central finite differences, closed forms
//! and the `Tape` engine.
#![allow(clippy::needless_range_loop)] // the loops are written the way users write them

use autodiff::prelude::*;

mod common;
use common::{assert_all_close, fd_flat_gradient, fd_gradient as numeric};

fn assert_close(actual: &[f64], expected: &[f64], tolerance: f64) {
    assert_all_close(actual, expected, tolerance, "gradient");
}

// ----- arrays and slices passed whole -------------------------------------------------

#[grad]
fn dot(w: &[f64; 3], x: &[f64; 3]) -> f64 {
    let mut s = 0.0;
    for i in 0..3 {
        s += w[i] * x[i];
    }
    s
}

/// Rows of a parameter passed whole, the same `x` to both, and a result used twice.
#[grad]
fn two_units(w: &[[f64; 3]; 2], x: &[f64; 3], c: f64) -> f64 {
    let a = dot(&w[0], x).tanh();
    let b = dot(&w[1], x);
    a * b + c * a
}

#[test]
fn rows_passed_whole() {
    let w = [[0.5, -0.3, 0.8], [1.2, 0.4, -0.7]];
    let x = [0.9, -1.1, 0.3];
    let c = 0.6;
    let (value, dw, dx, dc) = two_units_grad(&w, &x, c);
    assert_eq!(value.to_bits(), two_units(&w, &x, c).to_bits());
    let flat: Vec<f64> = w.iter().flatten().chain(&x).copied().chain([c]).collect();
    let f = |v: &[f64]| {
        let w = [[v[0], v[1], v[2]], [v[3], v[4], v[5]]];
        two_units(&w, &[v[6], v[7], v[8]], v[9])
    };
    let got: Vec<f64> = dw
        .iter()
        .flatten()
        .chain(&dx)
        .copied()
        .chain([dc])
        .collect();
    assert_close(&got, &numeric(f, &flat), 1e-7);
}

#[grad]
fn mean_square(xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for x in xs {
        s += x * x;
    }
    s / xs.len() as f64
}

/// A slice parameter passed whole, and a data slice passed whole (scratch buffer).
#[grad(wrt(p, a))]
fn scaled(p: &[f64], data: &[f64], a: f64) -> f64 {
    mean_square(p) * a + mean_square(data) * a * a
}

#[test]
fn slices_passed_whole() {
    let p = [0.5, -1.5, 2.0, 0.25];
    let data = [1.0, 2.0, 3.0];
    let a = 0.7;
    let (value, dp, da) = scaled_grad(&p, &data, a);
    assert_eq!(value.to_bits(), scaled(&p, &data, a).to_bits());
    let ms_p = p.iter().map(|x| x * x).sum::<f64>() / 4.0;
    let ms_d = data.iter().map(|x| x * x).sum::<f64>() / 3.0;
    let expected_dp: Vec<f64> = p.iter().map(|x| 2.0 * x / 4.0 * a).collect();
    assert_close(&dp, &expected_dp, 1e-12);
    assert!((da - (ms_p + 2.0 * a * ms_d)).abs() < 1e-12);
}

/// Takes its array by value.
#[grad]
fn weighted(w: [f64; 3], x: f64) -> f64 {
    (w[0] * x).sin() + w[1] * w[2] * x
}

/// Generic over the length, by value.
#[grad]
fn ends<const N: usize>(w: [f64; N], x: f64) -> f64 {
    w[0] * w[N - 1] * x
}

/// A reference parameter dereferenced into calls that take the array by value,
/// `weighted(*w, x)`, next to the same parameter passed as the reference it is. Found by
/// the random programs: the pullback call dropped the `*` and passed the reference, which
/// did not compile.
#[grad]
fn dereferenced(w: &[f64; 3], x: f64) -> f64 {
    weighted(*w, x) * ends(*w, x) + dot(w, w)
}

#[test]
fn a_reference_parameter_dereferenced_into_a_by_value_call() {
    let (w, x) = ([0.4, -1.2, 0.7], 0.9);
    let (value, dw, dx) = dereferenced_grad(&w, x);
    assert_eq!(value.to_bits(), dereferenced(&w, x).to_bits());
    // Closed form: f = a b + |w|², a = sin(w0 x) + w1 w2 x, b = w0 w2 x.
    let a = (w[0] * x).sin() + w[1] * w[2] * x;
    let b = w[0] * w[2] * x;
    let da = [x * (w[0] * x).cos(), w[2] * x, w[1] * x];
    let db = [w[2] * x, 0.0, w[0] * x];
    let expected: Vec<f64> = (0..3).map(|i| da[i] * b + a * db[i] + 2.0 * w[i]).collect();
    assert_close(&dw, &expected, 1e-12);
    let expected_dx = ((w[0] * (w[0] * x).cos() + w[1] * w[2]) * b) + a * w[0] * w[2];
    assert!((dx - expected_dx).abs() < 1e-12, "{dx} vs {expected_dx}");
    let at = [w[0], w[1], w[2], x];
    let f = |v: &[f64]| dereferenced(&[v[0], v[1], v[2]], v[3]);
    let got = [dw[0], dw[1], dw[2], dx];
    assert_close(&got, &numeric(f, &at), 1e-7);
}

// ----- rows bound by loops passed whole -----------------------------------------------

#[grad(jvp, hvp)]
fn dot2(a: &[f64; 2], b: &[f64; 2]) -> f64 {
    a[0] * b[0] + a[1] * b[1]
}

/// Takes its arrays by value.
#[grad(jvp, hvp)]
fn cross2(a: [f64; 2], b: [f64; 2]) -> f64 {
    a[0] * b[1] - a[1] * b[0]
}

/// A row of `m.iter()` passed to a function taking `&[f64; 2]` as the reference it is.
/// It did not compile: the row was passed as the array `m[k]`.
#[grad(wrt(x))]
fn row_sum(m: &[[f64; 2]], x: &[f64; 2]) -> f64 {
    let mut s = 0.0;
    for row in m.iter() {
        s += dot2(row, x);
    }
    s
}

/// Every way a loop binds a row, passed as written: a reference (`row` of `m`,
/// `m.iter()`, `.zip(..)`, `.enumerate()`, `.rev()`, closures of `map`, `filter` and
/// `fold`) or the row itself (`*row`, `for &row in m`, `.copied()`).
#[grad]
fn rows_bound_by_loops(m: &[[f64; 2]], ys: &[f64], x: &[f64; 2]) -> f64 {
    let mut s = 0.0;
    for row in m {
        s += dot2(row, x).tanh() * cross2(*row, *x);
    }
    for (row, y) in m.iter().zip(ys) {
        s += (dot2(row, x) - y).powi(2);
    }
    for (i, row) in m.iter().enumerate().rev() {
        s += dot2(row, row) * (i + 1) as f64;
    }
    for &row in m {
        s += dot2(&row, x) * cross2(row, *x);
    }
    for row in m.iter().copied() {
        s += cross2(row, *x).sin();
    }
    s += m.iter().map(|row| dot2(row, x).exp()).sum::<f64>();
    s += m
        .iter()
        .filter(|row| dot2(row, x) > 0.0)
        .map(|row| cross2(*row, *x))
        .sum::<f64>();
    s + m.iter().fold(0.5, |acc, row| acc + dot2(row, x) * acc)
}

/// Rows of rows, and rows of arrays taken by value or by reference.
#[grad]
fn rows_of_arrays(m: &[[f64; 2]; 2], n: [[f64; 2]; 2], blocks: &[[[f64; 2]; 2]]) -> f64 {
    let mut s = 0.0;
    for row in m {
        s += dot2(row, &n[0]);
    }
    for row in n {
        s += dot2(&row, &m[1]) * cross2(row, m[0]);
    }
    for block in blocks {
        for row in block {
            s += dot2(row, &block[0]).sin();
        }
        s += cross2(block[1], n[1]);
    }
    s
}

#[test]
fn rows_bound_by_loops_are_passed_as_written() {
    let m = [[0.5, -0.3], [1.2, 0.4], [-0.7, 0.9]];
    let x = [0.8, -0.6];
    let (value, dx) = row_sum_grad(&m, &x);
    assert_eq!(value.to_bits(), row_sum(&m, &x).to_bits());
    // Closed form: the sum of the rows.
    let rows = [m[0][0] + m[1][0] + m[2][0], m[0][1] + m[1][1] + m[2][1]];
    assert_close(&dx, &rows, 1e-12);

    let ys = [0.3, -0.2, 0.6];
    let (value, dm, dys, dx) = rows_bound_by_loops_grad(&m, &ys, &x);
    assert_eq!(value.to_bits(), rows_bound_by_loops(&m, &ys, &x).to_bits());
    // Away from the filter's kink: every `dot2(row, x)` is at least 0.1 from 0.
    assert!(m.iter().all(|row| dot2(row, &x).abs() > 0.1));
    let at: Vec<f64> = m.iter().flatten().chain(&ys).chain(&x).copied().collect();
    let f = |v: &[f64]| {
        let m: Vec<[f64; 2]> = v[..6].chunks(2).map(|c| [c[0], c[1]]).collect();
        rows_bound_by_loops(&m, &v[6..9], &[v[9], v[10]])
    };
    let got: Vec<f64> = dm
        .iter()
        .flatten()
        .chain(&dys)
        .chain(&dx)
        .copied()
        .collect();
    assert_close(&got, &numeric(f, &at), 1e-6);

    let n = [[0.3, 1.1], [-0.4, 0.2]];
    let blocks = [[[0.6, -0.5], [0.1, 0.7]], [[-0.2, 0.3], [0.9, -0.8]]];
    let sq = [m[0], m[1]];
    let (value, dsq, dn, dblocks) = rows_of_arrays_grad(&sq, n, &blocks);
    assert_eq!(value.to_bits(), rows_of_arrays(&sq, n, &blocks).to_bits());
    let at: Vec<f64> = sq
        .iter()
        .chain(&n)
        .chain(blocks.iter().flatten())
        .flatten()
        .copied()
        .collect();
    let f = |v: &[f64]| {
        let pair = |k: usize| [v[k], v[k + 1]];
        let blocks = [[pair(8), pair(10)], [pair(12), pair(14)]];
        rows_of_arrays(&[pair(0), pair(2)], [pair(4), pair(6)], &blocks)
    };
    let got: Vec<f64> = dsq
        .iter()
        .chain(&dn)
        .chain(dblocks.iter().flatten())
        .flatten()
        .copied()
        .collect();
    assert_close(&got, &numeric(f, &at), 1e-6);
}

// ----- local arrays passed whole in loops and branches --------------------------------
// The sweep calls the callee's pullback with the array as it was at the call: a copy kept
// per iteration (a stack slot, a slab's frame, or the workspace in a `while`).

#[grad(jvp, hvp)]
fn cell(w: &[[f64; 2]; 2], h: &[f64; 2]) -> f64 {
    (w[0][0] * h[0] + w[0][1] * h[1]).tanh() * (w[1][0] * h[0] + w[1][1] * h[1]).sin()
}

/// A recurrence of constant length: the state passed by reference and by value.
#[grad(jvp, hvp)]
fn recurrent(w: [[f64; 2]; 2], x0: [f64; 2]) -> f64 {
    let mut h = x0;
    let mut total = 0.0;
    for _ in 0..3 {
        total += cell(&w, &h) + cross2(h, x0);
        h = [h[0] * 0.5 + h[1], h[1] * 0.9 - h[0]];
    }
    total
}

/// Of run-time length, the call in a branch, and the state read after the call.
#[grad(jvp, hvp)]
fn recurrent_runtime(w: [[f64; 2]; 2], x0: [f64; 2], n: usize) -> f64 {
    let mut h = x0;
    let mut total = 0.0;
    for k in 0..n {
        if k % 2 == 0 {
            total += cell(&w, &h) * h[1];
        }
        h = [h[0] * 0.5 + h[1], h[1] * 0.9 - h[0]];
    }
    total
}

/// A `while` loop, a row of a local table passed whole, and a `mut` parameter changed
/// in the loop and passed too.
#[grad(jvp, hvp)]
fn recurrent_while(w: [[f64; 2]; 2], mut x: [f64; 2]) -> f64 {
    let mut table = [[0.0; 2]; 2];
    let mut total = 0.0;
    let mut k = 0;
    while k < 4 {
        table[k % 2] = [x[0] * 0.7, x[1] + x[0]];
        total += cell(&w, &table[k % 2]) + dot2(&x, &x) * 0.1;
        x[0] = x[1].sin();
        k += 1;
    }
    total
}

/// Samples of run-time number, each a short recurrence of constant length.
#[grad]
fn over_samples(w: &[[f64; 2]; 2], xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for &x in xs {
        let mut h = [x, x * x];
        for _ in 0..2 {
            total += cell(w, &h);
            h = [h[1].tanh(), h[0] + x];
        }
    }
    total
}

/// A `mut` parameter written after the call that takes it whole: the sweep passes the
/// value it had at the call (it passed the parameter's last value before).
#[grad]
fn written_after(mut w: [f64; 2], x: f64) -> f64 {
    w[0] += x;
    let a = dot2(&w, &w);
    w[0] = x * 3.0;
    a + w[0] * w[1]
}

/// Outside any loop, in a branch.
#[grad(jvp, hvp)]
fn in_branch(w: [[f64; 2]; 2], x: [f64; 2]) -> f64 {
    let h = [x[0] * x[1], x[1]];
    if x[0] > 0.0 {
        cell(&w, &h) * 2.0
    } else {
        cell(&w, &h)
    }
}

#[test]
fn local_arrays_passed_whole_in_loops_and_branches() {
    let w = [[0.1, 0.2], [0.3, 0.4]];
    let x = [1.0, 2.0];
    let at: Vec<f64> = w.iter().flatten().chain(&x).copied().collect();
    let split = |v: &[f64]| ([[v[0], v[1]], [v[2], v[3]]], [v[4], v[5]]);
    type Primal<'a> = &'a dyn Fn([[f64; 2]; 2], [f64; 2]) -> f64;
    let functions: [(&str, Primal); 4] = [
        ("recurrent", &recurrent),
        ("recurrent_runtime", &|w, x| recurrent_runtime(w, x, 7)),
        ("recurrent_while", &recurrent_while),
        ("in_branch", &in_branch),
    ];
    type Grad = fn([[f64; 2]; 2], [f64; 2]) -> (f64, [[f64; 2]; 2], [f64; 2]);
    let grads: [Grad; 4] = [
        recurrent_grad,
        |w, x| recurrent_runtime_grad(w, x, 7),
        recurrent_while_grad,
        in_branch_grad,
    ];
    for ((name, f), grad) in functions.iter().zip(grads) {
        let (value, dw, dx) = grad(w, x);
        assert_eq!(value.to_bits(), f(w, x).to_bits(), "{name}");
        let got: Vec<f64> = dw.iter().flatten().chain(&dx).copied().collect();
        let expected = numeric(
            |v| {
                let (w, x) = split(v);
                f(w, x)
            },
            &at,
        );
        assert_all_close(&got, &expected, 1e-7, name);
    }

    let xs = [0.5, -1.5, 2.0];
    let (value, dw, dxs) = over_samples_grad(&w, &xs);
    assert_eq!(value.to_bits(), over_samples(&w, &xs).to_bits());
    let at_samples: Vec<f64> = w.iter().flatten().chain(&xs).copied().collect();
    let got: Vec<f64> = dw.iter().flatten().chain(&dxs).copied().collect();
    let expected = numeric(
        |v| over_samples(&[[v[0], v[1]], [v[2], v[3]]], &v[4..]),
        &at_samples,
    );
    assert_all_close(&got, &expected, 1e-7, "over_samples");

    let (value, dw, dx) = written_after_grad([0.5, -1.5], 0.25);
    assert_eq!(value.to_bits(), written_after([0.5, -1.5], 0.25).to_bits());
    // a = (w0 + x)² + w1², then + 3x·w1.
    let expected = [2.0 * 0.75, 2.0 * -1.5 + 0.75, 2.0 * 0.75 + 3.0 * -1.5];
    assert_all_close(&[dw[0], dw[1], dx], &expected, 1e-12, "written_after");

    // Forward mode along a direction is the gradient's dot product with it, and the
    // Hessian–vector product is the slope of the gradient along it.
    let (vw, vx) = ([[1.0, -0.5], [0.25, 0.75]], [0.3, -0.2]);
    let direction: Vec<f64> = vw.iter().flatten().chain(&vx).copied().collect();
    let (_, dw, dx) = recurrent_runtime_grad(w, x, 7);
    let gradient: Vec<f64> = dw.iter().flatten().chain(&dx).copied().collect();
    let (_, tangent) = recurrent_runtime_jvp(w, x, 7, vw, vx);
    let along: f64 = gradient.iter().zip(&direction).map(|(g, v)| g * v).sum();
    assert!(
        (tangent - along).abs() < 1e-12 * along.abs().max(1.0),
        "{tangent} vs {along}"
    );
    let (_, gw, gx, hw, hx) = recurrent_runtime_hvp(w, x, 7, vw, vx);
    let again: Vec<f64> = gw.iter().flatten().chain(&gx).copied().collect();
    assert_all_close(&again, &gradient, 1e-13, "recurrent_runtime_hvp's gradient");
    let hv: Vec<f64> = hw.iter().flatten().chain(&hx).copied().collect();
    // The slope of a gradient along the direction (the reference of `H·v`).
    let slope_of = |grad: Grad| {
        common::slope(
            |h| {
                let moved: Vec<f64> = at.iter().zip(&direction).map(|(a, v)| a + h * v).collect();
                let (w, x) = split(&moved);
                let (_, dw, dx) = grad(w, x);
                dw.iter().flatten().chain(&dx).copied().collect()
            },
            1e-5,
        )
    };
    assert_all_close(&hv, &slope_of(grads[1]), 1e-6, "recurrent_runtime_hvp");
    let (_, _, _, hw, hx) = recurrent_while_hvp(w, x, vw, vx);
    let hv: Vec<f64> = hw.iter().flatten().chain(&hx).copied().collect();
    assert_all_close(&hv, &slope_of(grads[2]), 1e-6, "recurrent_while_hvp");
}

// ----- structs passed whole and methods calling methods -------------------------------

#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Layer {
    pub w: [[f64; 2]; 2],
    pub b: [f64; 2],
}

#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Net {
    pub first: Layer,
    pub second: Layer,
    pub head: [f64; 2],
}

#[grad]
impl Layer {
    /// `tanh(W x + b)`, one unit `j` at a time.
    #[grad]
    pub fn unit(&self, x: [f64; 2], j: usize) -> f64 {
        (self.w[j][0] * x[0] + self.w[j][1] * x[1] + self.b[j]).tanh()
    }
}

#[grad]
impl Net {
    /// Calls methods of its fields and of itself, inside a loop over samples.
    #[grad(wrt(self))]
    pub fn loss(&self, xs: &[[f64; 2]], ys: &[f64]) -> f64 {
        let mut total = 0.0;
        for (x, &y) in xs.iter().zip(ys) {
            let out = self.predict(*x);
            total += (out - y) * (out - y);
        }
        total / xs.len() as f64
    }

    #[grad]
    pub fn predict(&self, x: [f64; 2]) -> f64 {
        let h = [self.first.unit(x, 0), self.first.unit(x, 1)];
        let z = [self.second.unit(h, 0), self.second.unit(h, 1)];
        self.head[0] * z[0] + self.head[1] * z[1]
    }
}

/// A free function taking a struct, called with struct fields.
#[grad]
fn both_layers(first: &Layer, second: &Layer, x: [f64; 2]) -> f64 {
    first.unit(x, 0) * second.unit(x, 1)
}

#[grad]
fn through_fields(net: &Net, x: [f64; 2]) -> f64 {
    both_layers(&net.first, &net.second, x) + net.head[0] * both_layers(&net.second, &net.first, x)
}

fn net() -> Net {
    Net {
        first: Layer {
            w: [[0.5, -0.3], [0.8, 0.2]],
            b: [0.1, -0.4],
        },
        second: Layer {
            w: [[1.5, -0.6], [0.7, 0.9]],
            b: [0.05, 0.3],
        },
        head: [0.8, -1.1],
    }
}

fn numeric_struct(net: &Net, f: impl Fn(&Net) -> f64) -> Vec<f64> {
    fd_flat_gradient(net, f)
}

#[test]
fn methods_calling_methods_of_fields() {
    let net = net();
    let xs = [[0.9, -0.4], [0.1, 0.7], [-1.2, 0.3], [0.5, 0.5]];
    let ys = [0.3, -0.2, 0.8, 0.1];
    let (value, d_net) = net.loss_grad(&xs, &ys);
    assert_eq!(value.to_bits(), net.loss(&xs, &ys).to_bits());
    let expected = numeric_struct(&net, |n| n.loss(&xs, &ys));
    assert_close(&d_net.to_flat_vec(), &expected, 1e-7);

    let x = [0.9, -0.4];
    let (value, d_net, dx) = net.predict_grad(x);
    assert_eq!(value.to_bits(), net.predict(x).to_bits());
    assert_close(
        &d_net.to_flat_vec(),
        &numeric_struct(&net, |n| n.predict(x)),
        1e-7,
    );
    let numeric_x = numeric(|v| net.predict([v[0], v[1]]), &x);
    assert_close(&dx, &numeric_x, 1e-7);
}

#[test]
fn struct_fields_passed_to_free_functions() {
    let net = net();
    let x = [0.4, -0.8];
    let (value, d_net, _) = through_fields_grad(&net, x);
    assert_eq!(value.to_bits(), through_fields(&net, x).to_bits());
    let expected = numeric_struct(&net, |n| through_fields(n, x));
    assert_close(&d_net.to_flat_vec(), &expected, 1e-7);
}

// ----- the pullbacks themselves ------------------------------------------------------

#[test]
fn pullbacks_scale_by_the_seed_and_accumulate() {
    let net = net();
    let x = [0.3, 0.6];
    let (_, d_net, dx) = net.predict_grad(x);
    let mut buffer = net.zero_like();
    let mut dx_buffer = [1.0, 1.0];
    let value = net.predict_vjp(x, -2.5, &mut buffer, &mut dx_buffer);
    assert_eq!(value.to_bits(), net.predict(x).to_bits());
    let scaled: Vec<f64> = d_net.to_flat_vec().iter().map(|g| -2.5 * g).collect();
    assert_close(&buffer.to_flat_vec(), &scaled, 1e-12);
    assert_close(&dx_buffer, &[1.0 - 2.5 * dx[0], 1.0 - 2.5 * dx[1]], 1e-12);

    // A function of arrays only: the pullback scales `_grad`'s partials.
    let (w, v) = ([1.0, 2.0, 3.0], [0.5, -0.5, 2.0]);
    let (mut dw, mut dv) = ([0.0; 3], [0.0; 3]);
    assert_eq!(dot_vjp(&w, &v, 3.0, &mut dw, &mut dv), dot(&w, &v));
    assert_eq!(dw, [1.5, -1.5, 6.0]);
    assert_eq!(dv, [3.0, 6.0, 9.0]);

    // `wrt(..)` leaves `data` out of `_grad`, but the pullback differentiates everything.
    let (p, data) = ([1.0, -2.0], [3.0]);
    let (mut dp, mut ddata, mut da) = ([0.0; 2], [0.0; 1], 0.0);
    scaled_vjp(&p, &data, 2.0, 1.0, &mut dp, &mut ddata, &mut da);
    assert_eq!(dp, [2.0 * 1.0 / 2.0 * 2.0, 2.0 * -2.0 / 2.0 * 2.0]);
    assert_eq!(ddata, [2.0 * 3.0 * 2.0 * 2.0]);
}

/// `tanh(W x + b)` for unit `j` of the layer whose parameters start at `base` in `params`.
fn unit_on_tape<'t>(params: &[Var<'t>], base: usize, x: [Var<'t>; 2], j: usize) -> Var<'t> {
    (params[base + 2 * j] * x[0] + params[base + 2 * j + 1] * x[1] + params[base + 4 + j]).tanh()
}

/// The same loss on the `Tape` engine.
fn loss_on_tape(net: &Net, xs: &[[f64; 2]], ys: &[f64]) -> Vec<f64> {
    let tape = Tape::new();
    let params: Vec<Var> = net.to_flat_vec().iter().map(|&v| tape.var(v)).collect();
    // Flat order: first.w (4), first.b (2), second.w (4), second.b (2), head (2).
    let mut total = tape.var(0.0);
    for (x, &y) in xs.iter().zip(ys) {
        let x = [tape.var(x[0]), tape.var(x[1])];
        let h = [
            unit_on_tape(&params, 0, x, 0),
            unit_on_tape(&params, 0, x, 1),
        ];
        let z = [
            unit_on_tape(&params, 6, h, 0),
            unit_on_tape(&params, 6, h, 1),
        ];
        let out = params[12] * z[0] + params[13] * z[1];
        total += (out - y) * (out - y);
    }
    let loss = total / xs.len() as f64;
    let grads = loss.gradient();
    params.iter().map(|&p| grads.wrt(p)).collect()
}

#[test]
fn nested_method_calls_agree_with_the_tape() {
    let net = net();
    let xs = [[0.2, -0.9], [1.1, 0.4], [-0.3, -0.3]];
    let ys = [0.5, -0.1, 0.2];
    let (_, d_net) = net.loss_grad(&xs, &ys);
    assert_close(&d_net.to_flat_vec(), &loss_on_tape(&net, &xs, &ys), 1e-12);
}

// ----- the same variable passed twice ------------------------------------------------

#[grad]
fn rows_twice(w: &[[f64; 3]; 2], x: &[f64; 3]) -> f64 {
    dot(&w[0], &w[0]) + dot(&w[0], &w[1]) * dot(x, x)
}

#[grad]
fn layers_twice(net: &Net, x: [f64; 2]) -> f64 {
    both_layers(&net.first, &net.first, x)
        + through_fields(net, x) * both_layers(&net.second, &net.first, x)
}

#[test]
fn the_same_variable_passed_twice() {
    let w = [[0.5, -0.3, 0.8], [1.2, 0.4, -0.7]];
    let x = [0.9, -1.1, 0.3];
    let (value, dw, dx) = rows_twice_grad(&w, &x);
    assert_eq!(value.to_bits(), rows_twice(&w, &x).to_bits());
    let at: Vec<f64> = w.iter().flatten().chain(&x).copied().collect();
    let f = |v: &[f64]| {
        rows_twice(
            &[[v[0], v[1], v[2]], [v[3], v[4], v[5]]],
            &[v[6], v[7], v[8]],
        )
    };
    let got: Vec<f64> = dw.iter().flatten().chain(&dx).copied().collect();
    assert_close(&got, &numeric(f, &at), 1e-7);

    let net = net();
    let x = [0.35, -0.65];
    let (value, d_net, _) = layers_twice_grad(&net, x);
    assert_eq!(value.to_bits(), layers_twice(&net, x).to_bits());
    assert_close(
        &d_net.to_flat_vec(),
        &numeric_struct(&net, |n| layers_twice(n, x)),
        1e-7,
    );
}

// ----- integers and flags passed along with a slice ------------------------------------

#[grad]
fn pick(x: f64, xs: &[f64], k: usize, square: bool) -> f64 {
    let v = xs[k % xs.len()];
    if square {
        x * v * v
    } else {
        x * v
    }
}

/// A pullback call inside loops whose integer and `bool` arguments the sweep must pass
/// again: an expression of the loop variable (computed again), a counter the loop changes
/// and a flag (both saved). Found by the random programs: the integer was saved as an
/// `f64`, which did not compile.
#[grad]
fn calls_with_integers(x: f64, xs: &[f64]) -> f64 {
    let mut s = 0.0;
    let mut k: usize = 1;
    for i in 0..3 {
        s += pick(x, xs, i % 5, i == 1).powi(2);
        k = k * 3 + 1;
        s += pick(s, xs, k, k % 2 == 0);
    }
    s
}

#[test]
fn integer_and_flag_arguments_of_pullbacks_in_loops() {
    let (x, xs) = (0.7, [0.5, -1.25, 2.0, 0.75]);
    let (value, dx, dxs) = calls_with_integers_grad(x, &xs);
    assert_eq!(value.to_bits(), calls_with_integers(x, &xs).to_bits());
    let mut point = vec![x];
    point.extend(xs);
    let expected = numeric(|p| calls_with_integers(p[0], &p[1..]), &point);
    let mut actual = vec![dx];
    actual.extend(&dxs);
    assert_close(&actual, &expected, 1e-6);
}

// ----- integers and flags passed among numbers ------------------------------------------------
// `g(x, n)` goes through the callee's pullback, which takes integers and flags (`_grad`
// takes numbers only).

/// A power and a choice.
#[grad(jvp, hvp)]
fn term(x: f64, n: i32, odd: bool) -> f64 {
    if odd {
        x.powi(n) * x.sin()
    } else {
        x.powi(n)
    }
}

/// Called with literals, a loop counter and a flag computed in the loop, the same
/// number passed twice.
#[grad(jvp, hvp)]
fn series(x: f64, y: f64, terms: usize) -> f64 {
    let mut total = term(x * y, 2, false);
    for k in 0..terms {
        total += term(x, k as i32, k % 2 == 1) / (k as f64 + 1.0) + term(y, 1, true) * x;
    }
    total
}

#[test]
fn integers_and_flags_passed_with_numbers() {
    let (x, y) = (0.7, -0.4);
    let (value, dx, dy) = series_grad(x, y, 5);
    assert_eq!(value.to_bits(), series(x, y, 5).to_bits());
    let expected = common::fd_gradient(|p| series(p[0], p[1], 5), &[x, y]);
    common::assert_all_close(&[dx, dy], &expected, 1e-8, "series");
    let (_, tangent) = series_jvp(x, y, 5, 1.5, -0.5);
    common::assert_close(tangent, 1.5 * dx - 0.5 * dy, 1e-12, "series_jvp");
    let (_, _, _, hx, hy) = series_hvp(x, y, 5, 1.5, -0.5);
    let g = |h: f64| {
        let (_, dx, dy) = series_grad(x + 1.5 * h, y - 0.5 * h, 5);
        vec![dx, dy]
    };
    let expected = common::slope(g, 1e-5);
    common::assert_all_close(&[hx, hy], &expected, 1e-6, "series_hvp");
}

// ----- array literals passed to calls ---------------------------------------------------

#[grad(jvp, hvp)]
fn pair_dot(a: [f64; 2], b: &[f64; 2]) -> f64 {
    a[0] * b[0] + a[1] * b[1]
}

#[grad(jvp, hvp)]
fn to_polar(p: [f64; 2]) -> (f64, f64) {
    ((p[0] * p[0] + p[1] * p[1]).sqrt(), p[1].atan2(p[0]))
}

/// Array literals as arguments, by value and by reference, nested in another call's
/// literal, in a branch, the same variable in several, and a tuple-returning call.
#[grad(jvp, hvp)]
fn literals_passed(x: f64, y: f64) -> f64 {
    let (r, t) = to_polar([x, y * 2.0]);
    let s = if x > 0.0 {
        pair_dot([x, r], &[t, y])
    } else {
        0.0
    };
    s + pair_dot([pair_dot([x, x], &[y, y]), 1.0], &[y, r * t])
}

#[test]
fn array_literals_passed_to_calls() {
    for (x, y) in [(0.7, -0.4), (-0.3, 1.2)] {
        let (value, dx, dy) = literals_passed_grad(x, y);
        assert_eq!(value.to_bits(), literals_passed(x, y).to_bits());
        // Closed form: s + 2xy·y + r·t with r, t the polar coordinates of (x, 2y).
        let (r, t) = ((x * x + 4.0 * y * y).sqrt(), (2.0 * y).atan2(x));
        let s = if x > 0.0 { x * t + r * y } else { 0.0 };
        common::assert_close(value, s + 2.0 * x * y * y + r * t, 1e-14, "value");
        let expected = numeric(|p| literals_passed(p[0], p[1]), &[x, y]);
        assert_all_close(&[dx, dy], &expected, 1e-8, "literals_passed");
        let (_, tangent) = literals_passed_jvp(x, y, 0.5, 2.0);
        common::assert_close(tangent, 0.5 * dx + 2.0 * dy, 1e-12, "literals_passed_jvp");
        let (_, _, _, hx, hy) = literals_passed_hvp(x, y, 0.5, 2.0);
        let g = |h: f64| {
            let (_, dx, dy) = literals_passed_grad(x + 0.5 * h, y + 2.0 * h);
            vec![dx, dy]
        };
        assert_all_close(
            &[hx, hy],
            &common::slope(g, 1e-5),
            1e-6,
            "literals_passed_hvp",
        );
    }
}

/// In a closure's body, once per element.
#[grad]
fn literals_in_closure(xs: &[f64], y: f64) -> f64 {
    xs.iter()
        .map(|&t| pair_dot([t, y], &[t.sin(), t]))
        .sum::<f64>()
}

#[test]
fn array_literals_passed_to_calls_in_closures() {
    let (xs, y) = ([0.3, -1.1, 2.0], 0.6);
    let (value, dxs, dy) = literals_in_closure_grad(&xs, y);
    let expected: f64 = xs.iter().map(|&t| t * t.sin() + y * t).sum();
    common::assert_close(value, expected, 1e-15, "value");
    let flat = [xs[0], xs[1], xs[2], y];
    let numeric_gradient = numeric(|p| literals_in_closure(&p[..3], p[3]), &flat);
    let ours: Vec<f64> = dxs.iter().copied().chain([dy]).collect();
    assert_all_close(&ours, &numeric_gradient, 1e-8, "literals_in_closure");
}
