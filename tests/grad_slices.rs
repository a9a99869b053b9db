//! Slices of run-time length, iterator loops and reductions, `while`, `loop`, `break`,
//! `continue`, early `return` and `match`: each checked against central differences and
//! against the `Tape` engine.

use autodiff::prelude::*;

mod common;

/// Central differences of `f` at `x`, one component at a time.
fn numeric(f: impl Fn(&[f64]) -> f64, x: &[f64]) -> Vec<f64> {
    (0..x.len())
        .map(|i| {
            let h = 1e-6 * (1.0 + x[i].abs());
            let mut plus = x.to_vec();
            let mut minus = x.to_vec();
            plus[i] += h;
            minus[i] -= h;
            (f(&plus) - f(&minus)) / (2.0 * h)
        })
        .collect()
}

fn assert_close(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let scale = 1.0 + w.abs();
        assert!(
            (g - w).abs() <= 1e-6 * scale,
            "{what}[{i}]: got {g}, want {w}"
        );
    }
}

#[grad]
#[allow(clippy::needless_range_loop)]
fn sum_sq(p: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..p.len() {
        s += p[i] * p[i];
    }
    s
}

#[test]
fn index_loop_over_a_slice() {
    let p = vec![1.0, -2.0, 3.5];
    let (v, dp) = sum_sq_grad(&p);
    assert_eq!(v, sum_sq(&p));
    assert_eq!(dp, vec![2.0, -4.0, 7.0]);
    let empty: Vec<f64> = Vec::new();
    assert_eq!(sum_sq_grad(&empty), (0.0, vec![]));
}

#[grad(wrt(w))]
fn mse(w: &[f64], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
    let mut loss = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        let pred = w[0] * x[0] + w[1] * x[1] + w[2];
        loss += (pred - y).powi(2);
    }
    loss / xs.len() as f64
}

#[grad(wrt(w))]
fn mse_chain(w: &[f64], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
    xs.iter()
        .zip(ys.iter())
        .map(|(x, &y)| (w[0] * x[0] + w[1] * x[1] + w[2] - y).powi(2))
        .sum::<f64>()
        / xs.len() as f64
}

fn data(n: usize) -> (Vec<[f64; 2]>, Vec<f64>) {
    let xs: Vec<[f64; 2]> = (0..n)
        .map(|i| [(i as f64 * 0.7).sin(), (i as f64 * 0.3).cos()])
        .collect();
    let ys = xs.iter().map(|x| 2.0 * x[0] - x[1] + 0.5).collect();
    (xs, ys)
}

#[test]
fn zip_loop_and_chain_agree_with_differences() {
    let (xs, ys) = data(17);
    let w = [0.3, -0.2, 0.1];
    let (v, dw) = mse_grad(&w, &xs, &ys);
    assert_eq!(v, mse(&w, &xs, &ys));
    let want = numeric(|w| mse(w, &xs, &ys), &w);
    assert_close(&dw, &want, "mse");
    let (v2, dw2) = mse_chain_grad(&w, &xs, &ys);
    assert_eq!(v2, mse_chain(&w, &xs, &ys));
    assert_close(&dw2, &want, "mse_chain");
}

#[grad]
fn full(p: &[f64], rows: &[[f64; 2]]) -> f64 {
    let mut s = 0.0;
    for (i, r) in rows.iter().enumerate() {
        s += (p[i % p.len()] * r[0]).tanh() * r[1];
    }
    s
}

#[test]
fn partial_of_a_slice_of_rows() {
    let p = vec![0.5, -1.0];
    let rows = vec![[0.1, 0.2], [0.3, -0.4], [1.0, 2.0]];
    let (v, dp, drows) = full_grad(&p, &rows);
    assert_eq!(v, full(&p, &rows));
    let flat: Vec<f64> = rows.iter().flatten().copied().collect();
    let want_rows = numeric(
        |f| {
            let r: Vec<[f64; 2]> = f.chunks(2).map(|c| [c[0], c[1]]).collect();
            full(&p, &r)
        },
        &flat,
    );
    let got_rows: Vec<f64> = drows.iter().flatten().copied().collect();
    assert_close(&got_rows, &want_rows, "rows");
    assert_close(&dp, &numeric(|p| full(p, &rows), &p), "p");
}

#[grad]
fn newton_sqrt(a: f64) -> f64 {
    let mut x = a;
    let mut k = 0;
    while k < 20 {
        x = 0.5 * (x + a / x);
        k += 1;
    }
    x
}

#[grad]
fn until_small(x: f64) -> f64 {
    let mut y = x;
    let mut n = 0;
    loop {
        y *= 0.5;
        n += 1;
        if y.abs() < 0.1 {
            break;
        }
    }
    y * n as f64
}

#[test]
fn while_and_loop() {
    let (v, d) = newton_sqrt_grad(2.0);
    assert_eq!(v, newton_sqrt(2.0));
    assert!((d - 0.5 / 2f64.sqrt()).abs() < 1e-12);
    let (v, d) = until_small_grad(3.0);
    assert_eq!(v, until_small(3.0));
    // y = x / 2^n with n fixed near x = 3 (n = 5): dy/dx = n / 2^n.
    assert!((d - 5.0 / 32.0).abs() < 1e-12);
}

#[grad]
fn early(x: f64, xs: &[f64]) -> f64 {
    if x < 0.0 {
        return x * x;
    }
    let mut s = 0.0;
    for &v in xs {
        if v > 10.0 {
            return s * x;
        }
        if v < 0.0 {
            continue;
        }
        s += (v * x).sin();
    }
    s
}

#[test]
fn early_return_and_continue() {
    let xs = vec![1.0, -2.0, 3.0, 20.0, 5.0];
    for x in [-1.5, 0.7] {
        let (v, dx, dxs) = early_grad(x, &xs);
        assert_eq!(v, early(x, &xs));
        let want = numeric(|x| early(x[0], &xs), &[x]);
        assert_close(&[dx], &want, "dx");
        let want = numeric(|xs| early(x, xs), &xs);
        assert_close(&dxs, &want, "dxs");
    }
}

#[grad]
fn pick(x: f64, k: i32) -> f64 {
    match k {
        0 => x.sin(),
        1 | 2 => x * x,
        3..=5 => {
            let t = x.exp();
            t * x
        }
        _ => x,
    }
}

#[test]
fn match_arms() {
    for k in 0..8 {
        let (v, d) = pick_grad(0.3, k);
        assert_eq!(v, pick(0.3, k));
        let want = numeric(|x| pick(x[0], k), &[0.3]);
        assert_close(&[d], &want, "pick");
    }
}

#[grad]
fn reductions(xs: &[f64]) -> f64 {
    let p = xs.iter().map(|x| 1.0 + x * 0.1).product::<f64>();
    let m = xs.iter().fold(f64::NEG_INFINITY, |m, &x| m.max(x));
    let pos: f64 = xs.iter().filter(|x| **x > 0.0).map(|x| x * x).sum();
    let w: f64 = xs.windows(2).map(|w| (w[1] - w[0]).powi(2)).sum();
    let back: f64 = xs.iter().rev().enumerate().map(|(i, x)| i as f64 * x).sum();
    p + m + pos + w + back
}

#[test]
fn iterator_reductions() {
    let xs = vec![0.5, -1.5, 2.0, 0.25];
    let (v, d) = reductions_grad(&xs);
    assert_eq!(v, reductions(&xs));
    assert_close(&d, &numeric(reductions, &xs), "reductions");
}

#[grad]
fn stepping(xs: &[f64], n: usize) -> f64 {
    let mut s = 0.0;
    for i in (0..n).rev().step_by(2) {
        s += xs[i] * (i as f64 + 1.0);
    }
    for c in xs.chunks(3) {
        s += c[0] * c[c.len() - 1];
    }
    let mut k = 0;
    let mut t = 0.0;
    while k < xs.len() {
        t += xs[k].sin();
        k += 2;
    }
    s + t
}

#[test]
fn step_by_rev_chunks_and_counters() {
    let xs = vec![0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7];
    let (v, d) = stepping_grad(&xs, 5);
    assert_eq!(v, stepping(&xs, 5));
    assert_close(&d, &numeric(|x| stepping(x, 5), &xs), "stepping");
}

#[grad]
fn pi_local(x: f64) -> f64 {
    let mut y = std::f64::consts::PI;
    y += x;
    let v = [x * y, y, 1.0];
    v[0] + v[1] * v[2]
}

#[test]
fn constant_initialised_locals_and_array_literals() {
    let (v, d) = pi_local_grad(0.5);
    assert_eq!(v, pi_local(0.5));
    assert_close(&[d], &numeric(|x| pi_local(x[0]), &[0.5]), "pi");
}

#[test]
fn into_accumulates_without_allocating_new_buffers() {
    let (xs, ys) = data(9);
    let w = [0.3, -0.2, 0.1];
    let mut dw = [0.0; 3];
    let v = mse_grad_into(&w, &xs, &ys, &mut dw);
    let v2 = mse_grad_into(&w, &xs, &ys, &mut dw);
    assert_eq!(v, v2);
    let (_, once) = mse_grad(&w, &xs, &ys);
    // Contributions are added straight into the buffer, so the rounding may differ in
    // the last bit from adding them up first.
    let twice: Vec<f64> = once.iter().map(|g| 2.0 * g).collect();
    assert_close(&dw, &twice, "accumulated");
}

#[test]
#[should_panic(expected = "the buffer for the partial of `w` has length 2, but `w` has length 3")]
fn into_checks_lengths() {
    let (xs, ys) = data(3);
    let mut dw = [0.0; 2];
    let _ = mse_grad_into(&[0.0; 3], &xs, &ys, &mut dw);
}

const WEIGHTS: [f64; 4] = [0.5, -1.0, 2.0, 0.25];

#[grad]
fn vectors_and_tables(xs: &[f64], n: usize) -> f64 {
    let mut h = vec![0.0; n];
    for i in 0..n {
        h[i] = (xs[i % xs.len()] * WEIGHTS[i % 4]).tanh();
    }
    let mut s = 0.0;
    for i in 1..h.len() {
        s += h[i] * h[i - 1];
    }
    s
}

#[test]
fn local_vectors_and_constant_tables() {
    let xs = vec![0.3, -0.7, 1.1];
    let (v, d) = vectors_and_tables_grad(&xs, 6);
    assert_eq!(v, vectors_and_tables(&xs, 6));
    assert_close(&d, &numeric(|x| vectors_and_tables(x, 6), &xs), "vectors");
}

// ----- the same functions on the `Tape` engine -------------------------------------------

#[allow(clippy::assign_op_pattern)] // `Var` has no `+=`
fn mse_tape(w: &[f64], xs: &[[f64; 2]], ys: &[f64]) -> (f64, Vec<f64>) {
    let tape = Tape::new();
    let wv: Vec<Var> = w.iter().map(|&x| tape.var(x)).collect();
    let mut loss = tape.var(0.0);
    for (x, y) in xs.iter().zip(ys) {
        let pred = wv[0] * x[0] + wv[1] * x[1] + wv[2];
        loss = loss + (pred - *y).powi(2);
    }
    let loss = loss / xs.len() as f64;
    let g = loss.gradient();
    (loss.value(), wv.iter().map(|&v| g.wrt(v)).collect())
}

#[allow(clippy::assign_op_pattern)] // `Var` has no `+=`
fn early_tape(x: f64, xs: &[f64]) -> (f64, f64, Vec<f64>) {
    let tape = Tape::new();
    let xv = tape.var(x);
    let xsv: Vec<Var> = xs.iter().map(|&v| tape.var(v)).collect();
    let result = (|| {
        if x < 0.0 {
            return xv * xv;
        }
        let mut s = tape.var(0.0);
        for &v in &xsv {
            if v.value() > 10.0 {
                return s * xv;
            }
            if v.value() < 0.0 {
                continue;
            }
            s = s + (v * xv).sin();
        }
        s
    })();
    let g = result.gradient();
    (
        result.value(),
        g.wrt(xv),
        xsv.iter().map(|&v| g.wrt(v)).collect(),
    )
}

#[allow(clippy::assign_op_pattern)] // `Var` has no `+=`
fn newton_sqrt_tape(a: f64) -> (f64, f64) {
    let tape = Tape::new();
    let av = tape.var(a);
    let mut x = av;
    for _ in 0..20 {
        x = (x + av / x) * 0.5;
    }
    let g = x.gradient();
    (x.value(), g.wrt(av))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn the_tape_engine_agrees() {
    let (xs, ys) = data(23);
    let w = [0.3, -0.2, 0.1];
    let (v, d) = mse_grad(&w, &xs, &ys);
    let (tv, td) = mse_tape(&w, &xs, &ys);
    assert!(close(v, tv));
    assert!(
        d.iter().zip(&td).all(|(a, b)| close(*a, *b)),
        "{d:?} {td:?}"
    );
    let (v, d) = mse_chain_grad(&w, &xs, &ys);
    assert!(close(v, tv));
    assert!(
        d.iter().zip(&td).all(|(a, b)| close(*a, *b)),
        "{d:?} {td:?}"
    );

    let list = vec![1.0, -2.0, 3.0, 20.0, 5.0];
    for x in [-1.5, 0.7, 2.0] {
        let (v, dx, dxs) = early_grad(x, &list);
        let (tv, tdx, tdxs) = early_tape(x, &list);
        assert!(close(v, tv) && close(dx, tdx), "{x}: {v} {tv} {dx} {tdx}");
        assert!(dxs.iter().zip(&tdxs).all(|(a, b)| close(*a, *b)));
    }

    for a in [0.5, 2.0, 9.0] {
        let (v, d) = newton_sqrt_grad(a);
        let (tv, td) = newton_sqrt_tape(a);
        assert!(close(v, tv) && close(d, td), "{a}: {v} {tv} {d} {td}");
    }
}

#[grad]
#[allow(clippy::vec_init_then_push)]
fn pushed(xs: &[f64], scale: f64) -> f64 {
    let mut v = Vec::with_capacity(xs.len());
    for x in xs {
        v.push((x * scale).sin());
    }
    let mut w = Vec::new();
    w.push(scale * scale);
    let mut s = w[0];
    for i in 0..v.len() {
        s += v[i] * v[v.len() - 1 - i];
    }
    s
}

#[test]
fn vectors_filled_by_push() {
    let xs = vec![0.2, 0.9, -0.4];
    let (v, dxs, ds) = pushed_grad(&xs, 1.7);
    assert_eq!(v, pushed(&xs, 1.7));
    assert_close(&dxs, &numeric(|x| pushed(x, 1.7), &xs), "xs");
    assert_close(&[ds], &numeric(|s| pushed(&xs, s[0]), &[1.7]), "scale");
}

/// A vector filled by `push` after an early `return`: it exists only on the path that
/// does not return. It was rejected as not at the top of the function.
#[grad]
#[allow(clippy::vec_init_then_push)]
fn pushed_after_return(x: f64) -> f64 {
    if x > 1.0 {
        return x;
    }
    let mut v = Vec::new();
    v.push(x * 2.0);
    v[0] * x
}

/// Vectors declared in branches: after an early `return`, pushed in a loop and read in a
/// reduction and in a loop that returns; in an `if`, pushed under a condition; a
/// `vec![0.0; 2]` grown by `push` in an `if` (its adjoint had the length it started
/// with: an index out of bounds); and a `vec![0.0; k]` whose length `k` a loop counted.
#[grad]
fn vectors_in_branches(x: f64, xs: &[f64]) -> f64 {
    if x > 2.0 {
        return x * x;
    }
    let mut v = Vec::with_capacity(xs.len());
    for y in xs {
        v.push(x * y);
    }
    let mut s = 0.0;
    if x > 0.0 {
        let mut w = Vec::new();
        w.push(x.sin());
        if xs.len() > 2 {
            w.push(v[2] * v[0]);
        }
        for a in &w {
            s += a * x;
        }
        let mut z = vec![0.0; 2];
        z[0] = x;
        z.push(x * x);
        s += z[2] * z[0];
    }
    let mut k = 0;
    for a in &v {
        if *a < 0.0 {
            k += 1;
        }
    }
    let mut u = vec![0.0; k + 1];
    u[k] = x * 3.0;
    for a in &v {
        if *a > 1.0 {
            return s + a * u[k];
        }
    }
    s + v.iter().map(|a| a * a).sum::<f64>() + u[0]
}

#[test]
fn vectors_declared_after_a_return_or_in_a_branch() {
    // Closed form: x for x > 1, 2 x² below.
    for x in [-0.75, 0.5, 0.9, 1.5, 3.0] {
        let (v, d) = pushed_after_return_grad(x);
        assert_eq!(v.to_bits(), pushed_after_return(x).to_bits());
        let want = if x > 1.0 { 1.0 } else { 4.0 * x };
        assert_close(&[d], &[want], &format!("pushed_after_return at {x}"));
    }
    // Both returns, both sides of `x > 0` and of `k`; no `x * y` within 0.1 of 0 or 1.
    let xs = vec![0.3, -0.8, 1.7];
    for x in [-0.6, 0.4, 0.9, 2.5] {
        let (v, dx, dxs) = vectors_in_branches_grad(x, &xs);
        assert_eq!(v.to_bits(), vectors_in_branches(x, &xs).to_bits());
        let mut at = vec![x];
        at.extend(&xs);
        let want = numeric(|p| vectors_in_branches(p[0], &p[1..]), &at);
        let mut got = vec![dx];
        got.extend(&dxs);
        assert_close(&got, &want, &format!("vectors_in_branches at {x}"));
    }
}

#[grad]
fn unpack(abc: [f64; 3]) -> f64 {
    let [a, b, _] = abc;
    a * b + abc[2]
}

#[test]
fn array_destructuring() {
    let (v, d) = unpack_grad([2.0, 3.0, 5.0]);
    assert_eq!(v, 11.0);
    assert_eq!(d, [3.0, 2.0, 1.0]);
}

/// Softmax cross-entropy with integer labels, a row dot product as an iterator, and a
/// maximum by `fold(f64::NEG_INFINITY, f64::max)`.
#[grad(wrt(w))]
fn cross_entropy(w: &[[f64; 3]], xs: &[[f64; 3]], labels: &[usize]) -> f64 {
    let mut total = 0.0;
    for (x, &label) in xs.iter().zip(labels) {
        let mut z = [0.0; 2];
        for (k, row) in w.iter().enumerate() {
            z[k] = row.iter().zip(x).map(|(a, b)| a * b).sum::<f64>();
        }
        let m = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let lse = z.iter().map(|v| (v - m).exp()).sum::<f64>().ln() + m;
        total += lse - z[label];
    }
    total / xs.len() as f64
}

#[test]
fn integer_labels_row_products_and_path_folds() {
    let w = vec![[0.2, -0.3, 0.1], [0.5, 0.4, -0.2]];
    let xs = vec![[1.0, 0.5, -1.0], [0.3, -0.7, 0.2], [-0.4, 0.9, 0.6]];
    let labels = vec![0usize, 1, 1];
    let (v, dw) = cross_entropy_grad(&w, &xs, &labels);
    assert_eq!(v, cross_entropy(&w, &xs, &labels));
    let flat: Vec<f64> = w.iter().flatten().copied().collect();
    let got: Vec<f64> = dw.iter().flatten().copied().collect();
    let f = |f: &[f64]| {
        let w: Vec<[f64; 3]> = f.chunks(3).map(|c| [c[0], c[1], c[2]]).collect();
        cross_entropy(&w, &xs, &labels)
    };
    assert_close(&got, &numeric(f, &flat), "cross_entropy");
}

/// Indices clamped by integer `min` and `max` in both forms, `usize::min(k, xs.len() - 1)`
/// and `i.min(xs.len() - 1)`: a length is not a read of the slice's numbers, so the path
/// form is integer arithmetic as the method form is (it was an error: "an index must be
/// an integer"). Every clamped index repeats the last element, a number read many times.
#[grad]
fn clamped(xs: &[f64], n: usize) -> f64 {
    let mut s = 0.0;
    let mut k = 0;
    while k < 4 {
        k += 1;
        s += xs[usize::min(k, xs.len() - 1)] * xs[std::cmp::max(k, n) % xs.len()];
    }
    for i in 0..xs.len() + 2 {
        s += xs[i.min(xs.len() - 1)].sin();
    }
    s
}

#[test]
fn indices_clamped_by_integer_min_and_max() {
    let xs = [0.3, -1.2, 0.8];
    let (value, grad) = clamped_grad(&xs, 2);
    assert_eq!(value, clamped(&xs, 2));
    let want = numeric(|p| clamped(p, 2), &xs);
    assert_close(&grad, &want, "clamped");
    // By hand: k = 1..=4 reads xs[min(k, 2)] · xs[max(k, 2) % 3], that is b·c + c·c +
    // c·a + c·b, and i = 0..5 reads sin(xs[min(i, 2)]): sin a + sin b + 3 sin c.
    let [a, b, c] = xs;
    let by_hand = [
        c + a.cos(),
        2.0 * c + b.cos(),
        2.0 * b + 2.0 * c + a + 3.0 * c.cos(),
    ];
    assert_close(&grad, &by_hand, "clamped by hand");
}

/// Windows and chunks of a row written as an index (`m[1].windows(2)`): of a 2-D array
/// parameter, of a slice of rows at a run-time index, and of a local 2-D array.
#[grad]
fn row_windows(m: &[[f64; 4]; 2], rows: &[[f64; 3]], k: usize) -> f64 {
    let mut s = 0.0;
    for w in m[1].windows(2) {
        s += w[0] * w[1];
    }
    for c in rows[k].chunks(2) {
        s += c[0] * c[c.len() - 1];
    }
    let mut h = [[0.0; 3]; 2];
    for j in 0..3 {
        h[1][j] = m[0][j].sin();
    }
    for w in h[1].windows(3) {
        s += w[0] + w[1] * w[2];
    }
    s
}

#[test]
fn windows_of_a_row_written_as_an_index() {
    let m = [[0.4, -0.3, 1.1, 0.7], [0.9, 1.3, -0.6, 0.2]];
    let rows = vec![[0.5, 1.5, -2.0], [0.25, -0.75, 1.25]];
    let flat = |m: &[[f64; 4]; 2], rows: &[[f64; 3]]| -> Vec<f64> {
        m.iter()
            .flatten()
            .chain(rows.iter().flatten())
            .copied()
            .collect()
    };
    let unflat = |p: &[f64]| -> ([[f64; 4]; 2], Vec<[f64; 3]>) {
        let m = [[p[0], p[1], p[2], p[3]], [p[4], p[5], p[6], p[7]]];
        (m, vec![[p[8], p[9], p[10]], [p[11], p[12], p[13]]])
    };
    let (value, d_m, d_rows) = row_windows_grad(&m, &rows, 1);
    assert_eq!(value, row_windows(&m, &rows, 1));
    let want = numeric(
        |p| {
            let (m, rows) = unflat(p);
            row_windows(&m, &rows, 1)
        },
        &flat(&m, &rows),
    );
    assert_close(&flat(&d_m, &d_rows), &want, "row_windows");
    // By hand, for the row of `rows`: chunks [0.25, -0.75] and [1.25] read c[0]·c[last].
    assert_eq!(d_rows[0], [0.0; 3]);
    assert_close(&d_rows[1], &[-0.75, 0.25, 2.0 * 1.25], "chunks by hand");
}
