//! Rows of run-time length, `&[Vec<f64>]`, `&Vec<Vec<f64>>` and `&[&[f64]]`: data (samples
//! of different lengths) that the body reads by index, by loops over rows and over a row,
//! through iterator chains, windows and subslices of a row, and passes whole to other
//! `#[grad]` functions. Every mode is checked against central differences, the modes
//! against each other, and a plain function against the `Tape` engine.
#![allow(clippy::needless_range_loop)] // the loops are written the way users write them
#![allow(clippy::ptr_arg)] // `&Vec<Vec<f64>>` as users write it

use autodiff::prelude::*;

mod common;
use common::assert_close;

fn samples() -> (Vec<Vec<f64>>, Vec<f64>) {
    let rows = vec![
        vec![1.0, 2.0],
        vec![3.0, -4.0, 5.0],
        vec![0.5],
        vec![-1.5, 0.25, 2.0, -0.75],
    ];
    (rows, vec![1.0, 2.0, -1.0, 0.5])
}

/// Every way of reading the rows: by index with each row's `len()`, a row's iterator, a
/// subslice of a row with `enumerate`, a loop over the rows and over a row (a number
/// reused), a row's length as a number, and a chain over the rows.
#[grad(jvp, jacobian, hvp, hessian, wrt(w))]
fn fit(w: [f64; 3], rows: &[Vec<f64>], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..rows.len() {
        let mut s = 0.0;
        for j in 0..rows[i].len() {
            s += w[j % 3] * rows[i][j];
        }
        for x in rows[i].iter() {
            s += 0.1 * w[0] * x;
        }
        for (k, x) in rows[i][1..].iter().enumerate() {
            s += w[k % 3] * x * x;
        }
        total += (s - ys[i]).tanh().powi(2);
    }
    for row in rows {
        for &x in row {
            total += w[1] * x * w[1];
        }
        total += row.len() as f64 * w[2];
    }
    let t: f64 = rows.iter().map(|r| r[0] * w[0]).sum();
    total + t
}

#[test]
fn every_way_of_reading_rows_matches_central_differences() {
    let (rows, ys) = samples();
    let w = [0.5, -0.25, 0.1];
    let (value, gradient) = fit_grad(w, &rows, &ys);
    assert_eq!(value, fit(w, &rows, &ys));
    assert_gradient!(
        |w: &[f64; 3]| fit(*w, &rows, &ys),
        |w: &[f64; 3]| fit_grad(*w, &rows, &ys),
        &w
    );
    // Forward mode is the gradient along a direction; the Jacobian of a number is the
    // gradient; the Hessian is symmetric and the derivative of the gradient.
    let v = [0.3, -1.0, 2.0];
    let (value_jvp, tangent) = fit_jvp(w, &rows, &ys, v);
    assert_eq!(value_jvp, value);
    let expected: f64 = (0..3).map(|k| gradient[k] * v[k]).sum();
    assert_close(tangent, expected, 1e-14, "jvp against the gradient");
    let (_, jacobian) = fit_jacobian(w, &rows, &ys);
    for k in 0..3 {
        assert_close(
            jacobian[k],
            gradient[k],
            1e-15,
            "jacobian against the gradient",
        );
    }
    let (_, g, hessian) = fit_hessian(w, &rows, &ys);
    assert_eq!(g, gradient);
    for i in 0..3 {
        for k in 0..3 {
            assert_eq!(hessian[i][k], hessian[k][i]);
        }
    }
    assert_hessian!(|w: &[f64; 3]| fit_grad(*w, &rows, &ys).1, &hessian, &w);
    let (_, _, hv) = fit_hvp(w, &rows, &ys, v);
    for i in 0..3 {
        let expected: f64 = (0..3).map(|k| hessian[i][k] * v[k]).sum();
        assert_close(hv[i], expected, 1e-13, "hvp against the Hessian");
    }
}

/// A loss users write: a linear model over samples of different lengths (the missing
/// features are zero), squared error, as an iterator chain over rows and a row.
#[grad(wrt(w))]
fn linear_loss(w: &[f64], rows: &Vec<Vec<f64>>, ys: &[f64]) -> f64 {
    rows.iter()
        .zip(ys)
        .map(|(row, &y)| {
            let p: f64 = w.iter().zip(row).map(|(a, x)| a * x).sum();
            (p - y).powi(2)
        })
        .sum()
}

#[test]
fn a_linear_loss_matches_the_tape_and_its_closed_form() {
    let (rows, ys) = samples();
    let w = vec![0.5, -0.25, 0.1, 0.7];
    let (value, gradient) = linear_loss_grad(&w, &rows, &ys);
    // Closed form: ∂/∂w_k = Σ 2·(p − y)·x_k over the rows that have a k-th number.
    let mut expected = [0.0; 4];
    let mut loss = 0.0;
    for (row, &y) in rows.iter().zip(&ys) {
        let p: f64 = w.iter().zip(row).map(|(a, x)| a * x).sum();
        loss += (p - y).powi(2);
        for (k, x) in row.iter().enumerate() {
            expected[k] += 2.0 * (p - y) * x;
        }
    }
    assert_close(value, loss, 1e-15, "value");
    for k in 0..4 {
        assert_close(gradient[k], expected[k], 1e-14, "closed form");
    }
    // The Tape, built from the same rows.
    let tape = Tape::new();
    let ws: Vec<Var> = w.iter().map(|&a| tape.var(a)).collect();
    let mut total = tape.var(0.0);
    for (row, &y) in rows.iter().zip(&ys) {
        let mut p = tape.var(0.0);
        for (a, &x) in ws.iter().zip(row) {
            p += *a * x;
        }
        let d = p - y;
        total += d * d;
    }
    let reference = total.gradient();
    for k in 0..4 {
        assert_close(gradient[k], reference.wrt(ws[k]), 1e-14, "Tape");
    }
}

#[grad(hvp)]
fn dot(w: &[f64], x: &[f64]) -> f64 {
    let mut s = 0.0;
    for (a, b) in w.iter().zip(x) {
        s += a * b;
    }
    s
}

/// Rows passed whole to another `#[grad]` function, bound by a loop and by index.
#[grad(jvp)]
fn through_calls(w: &[f64], rows: &[Vec<f64>]) -> f64 {
    let mut total = 0.0;
    for row in rows.iter() {
        total += dot(w, row).tanh();
    }
    for i in 0..rows.len() {
        let r = &rows[i];
        total += dot(w, r).powi(2) + dot(w, &rows[i]) * r.len() as f64;
    }
    total
}

#[test]
fn rows_passed_whole_to_calls() {
    let (rows, _) = samples();
    let w = [0.5, -0.25, 0.1, 0.7];
    assert_gradient!(
        |w: &[f64; 4]| through_calls(w, &rows),
        |w: &[f64; 4]| {
            let (value, g) = through_calls_grad(w, &rows);
            (value, [g[0], g[1], g[2], g[3]])
        },
        &w
    );
    let (_, g) = through_calls_grad(&w, &rows);
    let v = [1.0, 0.5, -2.0, 0.25];
    let (_, tangent) = through_calls_jvp(&w, &rows, &v);
    let expected: f64 = (0..4).map(|k| g[k] * v[k]).sum();
    assert_close(tangent, expected, 1e-13, "jvp through calls");
}

/// Rows as slices (`&[&[f64]]`), their windows, and a local bound to a row.
#[grad]
fn windows_of_rows(w: f64, rows: &[&[f64]]) -> f64 {
    let mut s = 0.0;
    for r in rows {
        for pair in r.windows(2) {
            s += w * pair[0] * pair[1] * w;
        }
    }
    let last = &rows[rows.len() - 1];
    s + w * last[last.len() - 1]
}

#[test]
fn windows_of_rows_of_slices() {
    let (a, b, c) = ([1.0, 2.0, 3.0], [4.0], [0.5, -2.0]);
    let rows: [&[f64]; 3] = [&a, &b, &c];
    let w = 1.5;
    let (value, d_w) = windows_of_rows_grad(w, &rows);
    // w²·(1·2 + 2·3 + 0.5·(−2)) + w·(−2)
    assert_close(value, w * w * 7.0 - 2.0 * w, 1e-15, "value");
    assert_close(d_w, 2.0 * w * 7.0 - 2.0, 1e-15, "∂/∂w");
}

/// Windows of a row of a 2-D array bound by a loop (the same path, rows of one length).
#[grad(wrt(w))]
fn windows_of_array_rows(w: f64, m: &[[f64; 3]]) -> f64 {
    let mut s = 0.0;
    for r in m {
        for pair in r.windows(2) {
            s += w * pair[0] * pair[1];
        }
    }
    s
}

#[test]
fn windows_of_a_row_bound_by_a_loop() {
    let m = [[1.0, 2.0, 3.0], [-1.0, 0.5, 4.0]];
    let (value, d_w) = windows_of_array_rows_grad(0.5, &m);
    let pairs = 2.0 + 6.0 - 0.5 + 2.0;
    assert_close(value, 0.5 * pairs, 1e-15, "value");
    assert_close(d_w, pairs, 1e-15, "∂/∂w");
}

#[grad]
fn f32_rows(w: f32, rows: &[Vec<f32>]) -> f32 {
    rows.iter()
        .map(|r| r.iter().map(|x| w * x * x).sum::<f32>())
        .sum()
}

#[test]
fn rows_of_f32() {
    let rows = vec![vec![1.0f32, 2.0], vec![3.0]];
    let (value, d_w) = f32_rows_grad(2.0, &rows);
    assert_eq!(value, 28.0);
    assert_eq!(d_w, 14.0);
}

/// With `reassociate`, the same gradient (to rounding) as without.
#[grad(reassociate, wrt(w))]
fn reassociated(w: &[f64], rows: &[Vec<f64>]) -> f64 {
    let mut total = 0.0;
    for row in rows {
        let mut s = 0.0;
        for (a, x) in w.iter().zip(row) {
            s += a * x;
        }
        total += s.tanh();
    }
    total
}

/// A function generic over the float type, at `f64` and `f32`.
#[grad]
fn generic_rows<T: num_traits::Float>(w: T, rows: &[Vec<T>]) -> T {
    let mut s = T::zero();
    for r in rows {
        for &x in r {
            s = s + w * x * x;
        }
    }
    s
}

#[derive(Differentiable, Clone)]
struct Model {
    w: [f64; 3],
}

#[grad]
impl Model {
    /// The first three numbers of each row at most (`min` of integers).
    #[grad(jvp)]
    fn loss(&self, rows: &[Vec<f64>]) -> f64 {
        let mut total = 0.0;
        for i in 0..rows.len() {
            for j in 0..rows[i].len().min(3) {
                total += (self.w[j] * rows[i][j]).sin();
            }
        }
        total
    }
}

#[test]
fn rows_with_reassociate_generic_floats_and_methods() {
    let (rows, _) = samples();
    let w = [0.5, -0.25, 0.1, 0.7];
    let (value, g) = reassociated_grad(&w, &rows);
    let reference = linear_tanh_reference(&w, &rows);
    assert_close(value, reference.0, 1e-15, "value");
    for k in 0..4 {
        assert_close(g[k], reference.1[k], 1e-14, "reassociated gradient");
    }

    let sum_of_squares: f64 = rows.iter().flatten().map(|x| x * x).sum();
    let (value, d_w) = generic_rows_grad(2.0f64, &rows);
    assert_close(value, 2.0 * sum_of_squares, 1e-14, "f64 value");
    assert_close(d_w, sum_of_squares, 1e-14, "f64 partial");
    let rows32: Vec<Vec<f32>> = rows
        .iter()
        .map(|r| r.iter().map(|&x| x as f32).collect())
        .collect();
    let (_, d_w32) = generic_rows_grad(2.0f32, &rows32);
    assert!((f64::from(d_w32) - sum_of_squares).abs() < 1e-5);

    let model = Model {
        w: [0.5, -0.25, 0.1],
    };
    let (value, d_model) = model.loss_grad(&rows);
    assert_eq!(value, model.loss(&rows));
    let mut expected = [0.0; 3];
    for row in &rows {
        for j in 0..row.len().min(3) {
            expected[j] += (model.w[j] * row[j]).cos() * row[j];
        }
    }
    for j in 0..3 {
        assert_close(d_model.w[j], expected[j], 1e-15, "method, closed form");
    }
}

/// `Σ tanh(w·row)` and its gradient, by hand.
fn linear_tanh_reference(w: &[f64], rows: &[Vec<f64>]) -> (f64, Vec<f64>) {
    let mut value = 0.0;
    let mut gradient = vec![0.0; w.len()];
    for row in rows {
        let s: f64 = w.iter().zip(row).map(|(a, x)| a * x).sum();
        value += s.tanh();
        let d = 1.0 - s.tanh().powi(2);
        for (k, x) in row.iter().enumerate().take(w.len()) {
            gradient[k] += d * x;
        }
    }
    (value, gradient)
}

/// Locals naming rows and parts of them: a row bound again (`let s = r;`), typed
/// (`let r: &[f64] = &rows[i];`), a subslice of a row (`&row[1..]`), an empty row skipped
/// with `is_empty`.
#[grad(wrt(w))]
fn row_locals(w: f64, rows: &[Vec<f64>]) -> f64 {
    let mut t = 0.0;
    for r in rows {
        let s = r;
        if s.is_empty() {
            continue;
        }
        let tail = &s[1..];
        for x in tail.iter() {
            t += x * w * w;
        }
        t += s[0] * w + tail.len() as f64;
    }
    for i in 0..rows.len() {
        let r: &[f64] = &rows[i];
        if !r.is_empty() {
            let last = &rows[i][r.len() - 1..];
            t += last[0] * w;
        }
    }
    t
}

/// The same locals over a slice parameter and a 2-D array, which are differentiated.
#[grad]
fn slice_locals(xs: &[f64], m: [[f64; 3]; 2]) -> f64 {
    let all = xs;
    let s = &all[1..=2];
    let head = &xs[..2];
    let row = &m[1];
    let part = &m[1][..2];
    let mut t = 0.0;
    for (a, b) in s.iter().zip(head) {
        t += a * b;
    }
    t + part[0] * part[1] * s.len() as f64 + row[2]
}

#[test]
fn locals_naming_rows_subslices_and_slices() {
    let rows = vec![vec![1.0, 2.0], vec![], vec![3.0, 4.0, 5.0]];
    let w = 1.5;
    let (value, d_w) = row_locals_grad(w, &rows);
    // Non-empty rows: tails [2] and [4, 5] (sum 11, lengths 1 and 2), first numbers 1
    // and 3, last numbers 2 and 5.
    let expected = 11.0 * w * w + 4.0 * w + 3.0 + 7.0 * w;
    assert_close(value, expected, 1e-15, "value");
    assert_close(d_w, 22.0 * w + 4.0 + 7.0, 1e-15, "∂/∂w");

    let xs = [1.0, 2.0, 3.0, 4.0];
    let m = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let (value, d_xs, d_m) = slice_locals_grad(&xs, m);
    assert_eq!(value, slice_locals(&xs, m));
    assert_gradient!(
        |p: &[f64; 10]| slice_locals(&p[..4], [[p[4], p[5], p[6]], [p[7], p[8], p[9]]]),
        |p: &[f64; 10]| {
            let (value, d_xs, d_m) =
                slice_locals_grad(&p[..4], [[p[4], p[5], p[6]], [p[7], p[8], p[9]]]);
            let mut g = [0.0; 10];
            g[..4].copy_from_slice(&d_xs);
            g[4..7].copy_from_slice(&d_m[0]);
            g[7..].copy_from_slice(&d_m[1]);
            (value, g)
        },
        &[1.0, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    );
    assert_eq!(d_xs, vec![2.0, 4.0, 2.0, 0.0]);
    assert_eq!(d_m, [[0.0, 0.0, 0.0], [10.0, 8.0, 1.0]]);
}

/// Logistic regression over samples of different lengths, through a call that takes each
/// row whole: Newton's method needs its Hessian.
#[grad(hvp, hessian, wrt(w))]
fn logistic(w: &[f64], rows: &[Vec<f64>], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (row, &y) in rows.iter().zip(ys) {
        let z = dot(w, row);
        total += (1.0 + (-y * z).exp()).ln();
    }
    for i in 0..rows.len() {
        total += 0.1 * dot(w, &rows[i]).powi(2);
    }
    total
}

#[test]
fn second_order_through_calls_that_take_rows() {
    let (rows, _) = samples();
    let ys = [1.0, -1.0, 1.0, -1.0];
    let w = [0.5, -0.25, 0.1, 0.7];
    let (value, gradient, hessian) = logistic_hessian(&w, &rows, &ys);
    let (value_grad, reference) = logistic_grad(&w, &rows, &ys);
    assert_eq!(value, value_grad);
    assert_eq!(gradient, reference);
    assert_gradient!(
        |w: &[f64; 4]| logistic(w, &rows, &ys),
        |w: &[f64; 4]| {
            let (value, g) = logistic_grad(w, &rows, &ys);
            (value, [g[0], g[1], g[2], g[3]])
        },
        &w
    );
    let h: Vec<[f64; 4]> = (0..4)
        .map(|i| std::array::from_fn(|k| hessian[(i, k)]))
        .collect();
    for i in 0..4 {
        for k in 0..4 {
            assert_eq!(h[i][k], h[k][i]);
        }
    }
    assert_hessian!(
        |w: &[f64; 4]| {
            let g = logistic_grad(w, &rows, &ys).1;
            [g[0], g[1], g[2], g[3]]
        },
        &[h[0], h[1], h[2], h[3]],
        &w
    );
}

/// Windows of a row written as an index, `rows[i].windows(2)`: each row's own length.
#[grad]
fn row_index_windows(w: [f64; 2], rows: &[Vec<f64>]) -> f64 {
    let mut s = 0.0;
    for i in 0..rows.len() {
        for pair in rows[i].windows(2) {
            s += (w[0] * pair[0] + w[1] * pair[1]).tanh();
        }
    }
    s
}

#[test]
fn windows_of_a_row_at_an_index() {
    let (rows, _) = samples();
    let w = [0.3, -0.2];
    let (value, d_w) = row_index_windows_grad(w, &rows);
    assert_eq!(value, row_index_windows(w, &rows));
    // By hand: the pairs of consecutive numbers of each row.
    let mut want = [0.0; 2];
    for row in &rows {
        for pair in row.windows(2) {
            let d = 1.0 - (w[0] * pair[0] + w[1] * pair[1]).tanh().powi(2);
            want[0] += d * pair[0];
            want[1] += d * pair[1];
        }
    }
    assert_close(d_w[0], want[0], 1e-12, "∂w0");
    assert_close(d_w[1], want[1], 1e-12, "∂w1");
}

/// A callee whose only parameter besides numbers is the rows: it gets a pullback, and a
/// caller passes it all the rows with no buffer and no tangent (the rows are data on
/// both sides). f = x + x²·Σ rows, g = f·x.
#[grad(jvp, hvp)]
fn rows_only_callee(x: f64, rows: &Vec<Vec<f64>>) -> f64 {
    let mut s = x;
    for r in rows.iter() {
        for &v in r.iter() {
            s += v * x * x;
        }
    }
    s
}

#[grad(jvp, hvp, jacobian)]
fn rows_only_caller(x: f64, rows: &Vec<Vec<f64>>) -> f64 {
    rows_only_callee(x, rows) * x
}

#[test]
fn all_the_rows_passed_to_a_callee_of_numbers_and_rows() {
    let (rows, _) = samples();
    let total: f64 = rows.iter().flatten().sum();
    let x = 0.3;
    let f = x + x * x * total;
    let (df, d2f) = (1.0 + 2.0 * x * total, 2.0 * total);
    let (value, g) = rows_only_caller_grad(x, &rows);
    assert_close(value, f * x, 1e-15, "value");
    assert_close(g, f + x * df, 1e-14, "g'");
    let (_, tangent) = rows_only_caller_jvp(x, &rows, 2.0);
    assert_close(tangent, 2.0 * (f + x * df), 1e-14, "jvp");
    let (_, _, hv) = rows_only_caller_hvp(x, &rows, 1.0);
    assert_close(hv, 2.0 * df + x * d2f, 1e-13, "g''");
    let (_, jacobian) = rows_only_caller_jacobian(x, &rows);
    assert_close(jacobian, f + x * df, 1e-14, "jacobian");
}
