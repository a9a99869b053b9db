//! Combinations that stress the reverse sweep of run-time loops: nesting with constant
//! loops, arrays read across iterations, labelled `break`s, `break` with a value, loops in
//! branches, and `_grad` functions that call each other (each with its own workspace).
//! Every gradient is checked against central differences.

use autodiff::prelude::*;

mod common;
use common::fd_gradient;

fn check(name: &str, f: impl Fn(&[f64]) -> f64, got: (f64, Vec<f64>), x: &[f64]) {
    assert_eq!(got.0, f(x), "{name}: value");
    let want = fd_gradient(&f, x);
    for (i, (g, w)) in got.1.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-6 * (1.0 + w.abs()),
            "{name}[{i}]: got {g}, want {w}"
        );
    }
}

/// A small network over samples of run-time count: constant inner loops, a hidden layer
/// (a local array) read across the next loop, a ReLU kink, shared sub-expressions.
#[grad(wrt(w))]
#[allow(clippy::needless_range_loop)]
fn net(w: &[f64], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        let mut h = [0.0; 3];
        for j in 0..3 {
            let z = w[2 * j] * x[0] + w[2 * j + 1] * x[1];
            h[j] = z.tanh() + 0.1 * z;
        }
        let mut out = w[6];
        for j in 0..3 {
            out += h[j] * w[7 + j] + h[j] * h[j] * 0.01;
        }
        let margin = (1.0 - y * out).relu();
        total += margin * margin + out * 0.001;
    }
    total / xs.len() as f64
}

#[test]
fn network_over_samples() {
    let xs: Vec<[f64; 2]> = (0..13)
        .map(|i| [(i as f64).sin(), (i as f64 * 0.37).cos()])
        .collect();
    let ys: Vec<f64> = (0..13)
        .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
        .collect();
    let w: Vec<f64> = (0..10).map(|i| 0.1 * i as f64 - 0.4).collect();
    let (v, d) = net_grad(&w, &xs, &ys);
    check("net", |w| net(w, &xs, &ys), (v, d), &w);
}

/// Nested run-time loops, a `break` out of the outer loop from the inner one, a counter.
#[grad]
#[allow(clippy::needless_range_loop)]
fn nested(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    let mut steps = 0;
    'outer: for i in 0..a.len() {
        for j in 0..b.len() {
            s += (a[i] * b[j]).sin() * (steps as f64 + 1.0);
            steps += 1;
            if steps > 7 {
                break 'outer;
            }
        }
    }
    s
}

#[test]
fn labelled_break_from_an_inner_loop() {
    let a = vec![0.3, 0.6, -0.2];
    let b = vec![1.0, -0.5, 0.25];
    let (v, da, db) = nested_grad(&a, &b);
    check("nested/a", |a| nested(a, &b), (v, da), &a);
    check("nested/b", |b| nested(&a, b), (v, db), &b);
}

/// `loop` as a value with `break value`, and a `while` inside a branch.
#[grad]
fn loop_value(x: f64, limit: f64) -> f64 {
    let mut y = x;
    let found = loop {
        y = y * 1.5 + 1.0;
        if y > limit {
            break y * x;
        }
    };
    let mut z = found;
    if x > 0.0 {
        let mut k = 0;
        while k < 3 {
            z = z.sin() + x;
            k += 1;
        }
    }
    z
}

#[test]
fn break_with_a_value_and_loops_in_branches() {
    for x in [0.4, -0.3] {
        let (v, dx, dlimit) = loop_value_grad(x, 5.0);
        check(
            "loop_value/x",
            |p| loop_value(p[0], 5.0),
            (v, vec![dx]),
            &[x],
        );
        assert_eq!(dlimit, 0.0);
    }
}

#[grad]
fn inner(xs: &[f64], s: f64) -> f64 {
    xs.iter().map(|x| (x * s).tanh()).sum()
}

#[grad]
fn outer(xs: &[f64], s: f64) -> f64 {
    let mut total = 0.0;
    for k in 0..3 {
        total += inner_scaled(s + k as f64, xs.len() as f64);
    }
    total
}

#[grad]
fn inner_scaled(s: f64, n: f64) -> f64 {
    (s * n).sin()
}

#[test]
fn gradient_functions_calling_each_other() {
    let xs = vec![0.1, 0.5, -0.4];
    let (v, dxs, ds) = inner_grad(&xs, 1.3);
    check("inner/xs", |x| inner(x, 1.3), (v, dxs), &xs);
    check("inner/s", |s| inner(&xs, s[0]), (v, vec![ds]), &[1.3]);
    let (v, _, ds) = outer_grad(&xs, 0.2);
    check("outer/s", |s| outer(&xs, s[0]), (v, vec![ds]), &[0.2]);
}

/// A run-time loop inside a constant loop, writing a local array that a later run-time
/// loop reads back in reverse order.
#[grad]
#[allow(clippy::needless_range_loop)]
fn mixed_nesting(xs: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    for j in 0..4 {
        for (i, x) in xs.iter().enumerate() {
            acc[j] += x * (i + j) as f64 * 0.1 + (x * acc[j]).cos() * 0.01;
        }
    }
    let mut s = 0.0;
    for k in (0..4).rev() {
        for x in xs.iter().rev() {
            s = s * 0.9 + acc[k] * x;
        }
    }
    s
}

#[test]
fn run_time_loops_inside_constant_loops() {
    let xs = vec![0.2, -0.1, 0.4, 0.8];
    let (v, d) = mixed_nesting_grad(&xs);
    check("mixed_nesting", mixed_nesting, (v, d), &xs);
}

/// A `match` and an early `return` inside a run-time loop.
#[grad]
fn match_in_loop(xs: &[f64], mode: u8) -> f64 {
    let mut s = 0.0;
    for (i, x) in xs.iter().enumerate() {
        let term = match (i + mode as usize) % 3 {
            0 => x * x,
            1 => x.exp(),
            _ => -x,
        };
        if term > 100.0 {
            return s;
        }
        s += term;
    }
    s * 2.0
}

#[test]
fn match_and_return_inside_a_loop() {
    let xs = vec![0.5, 1.5, -0.7, 2.0, 0.1];
    for mode in 0..3 {
        let (v, d) = match_in_loop_grad(&xs, mode);
        check("match_in_loop", |x| match_in_loop(x, mode), (v, d), &xs);
    }
    let big = vec![0.5, 10.0, 1.0];
    let (v, d) = match_in_loop_grad(&big, 0);
    check(
        "match_in_loop/return",
        |x| match_in_loop(x, 0),
        (v, d),
        &big,
    );
}

/// Loops over the rows that an outer loop bound, over sub-slices, and over windows.
#[grad]
fn rows_and_subslices(images: &[[[f64; 3]; 2]], xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for image in images {
        for row in image {
            for v in row {
                s += v * v;
            }
            s += row.iter().map(|v| v.sin()).sum::<f64>();
        }
    }
    let tail: f64 = xs[1..].iter().sum();
    let head: f64 = xs[..=1].iter().map(|x| x * 3.0).sum();
    for w in xs.windows(3) {
        for v in w {
            s += v * w[0];
        }
    }
    s + tail * head
}

#[test]
fn rows_subslices_and_windows_as_iterables() {
    let images = vec![
        [[0.1, 0.2, 0.3], [0.4, -0.5, 0.6]],
        [[1.0, 0.0, -1.0], [0.5, 0.5, 0.25]],
    ];
    let xs = vec![0.3, -0.2, 0.9, 0.4];
    let (v, dimages, dxs) = rows_and_subslices_grad(&images, &xs);
    check("rows/xs", |x| rows_and_subslices(&images, x), (v, dxs), &xs);
    let flat: Vec<f64> = images.iter().flatten().flatten().copied().collect();
    let unflatten = |f: &[f64]| -> Vec<[[f64; 3]; 2]> {
        f.chunks(6)
            .map(|c| [[c[0], c[1], c[2]], [c[3], c[4], c[5]]])
            .collect()
    };
    let got: Vec<f64> = dimages.iter().flatten().flatten().copied().collect();
    check(
        "rows/images",
        |f| rows_and_subslices(&unflatten(f), &xs),
        (v, got),
        &flat,
    );
}

/// Vector locals written with their type, `let v: Vec<f64> = …;`, in the three ways the
/// guide lists (issue: the type was rejected while the same code without it worked).
#[grad]
#[allow(clippy::needless_range_loop)] // the loops are written the way users write them
fn typed_vectors(x: f64, y: f64, n: usize) -> f64 {
    let mut filled: Vec<f64> = vec![0.0; n];
    for i in 0..n {
        filled[i] = x * (i as f64 + 1.0) + y;
    }
    let mut pushed: Vec<f64> = Vec::new();
    let mut reserved: Vec<f64> = Vec::with_capacity(n);
    for i in 0..n {
        pushed.push(filled[i].sin());
        reserved.push(filled[i] * y);
    }
    let mut total = 0.0;
    for i in 0..n {
        total += pushed[i] * reserved[i];
    }
    total
}

#[test]
fn vector_locals_written_with_their_type() {
    let (x, y, n) = (0.4, -0.7, 4);
    let (value, dx, dy) = typed_vectors_grad(x, y, n);
    assert_eq!(value.to_bits(), typed_vectors(x, y, n).to_bits());
    // Closed form: Σᵢ sin(aᵢ)·aᵢ·y with aᵢ = x·(i+1) + y.
    let (mut ex, mut ey) = (0.0, 0.0);
    for i in 0..n {
        let k = i as f64 + 1.0;
        let a = x * k + y;
        let d = (a.cos() * a + a.sin()) * y; // ∂/∂a of sin(a)·a·y
        ex += d * k;
        ey += d + a.sin() * a;
    }
    assert!(
        (dx - ex).abs() < 1e-12 && (dy - ey).abs() < 1e-12,
        "{dx} {dy} vs {ex} {ey}"
    );
}

/// `windows` and `chunks` over array parameters, by reference and by value, in `for`
/// loops and iterator chains (issue: "`w` has 2 dimension(s)", while the same code over
/// a slice worked).
#[grad]
#[allow(clippy::needless_range_loop)] // the loop is written the way users write it
fn windows_over_arrays(a: &[f64; 5], b: [f64; 4], m: [[f64; 3]; 2]) -> f64 {
    let mut total = 0.0;
    for w in a.windows(2) {
        total += w[0] * w[1];
    }
    total += b.windows(3).map(|w| w[0] * w[2] - w[1]).sum::<f64>();
    for c in b.chunks(2) {
        total += c[0] * c[1];
    }
    for k in 0..3 {
        total += (m[1][k] - m[0][k]).powi(2);
    }
    total
}

#[test]
fn windows_and_chunks_over_array_parameters() {
    let a = [0.5, -1.0, 2.0, 0.25, 1.5];
    let b = [1.0, -0.5, 0.75, 2.0];
    let m = [[0.1, 0.2, 0.3], [1.0, -2.0, 0.5]];
    let (value, da, db, dm) = windows_over_arrays_grad(&a, b, m);
    assert_eq!(value.to_bits(), windows_over_arrays(&a, b, m).to_bits());
    let mut point = a.to_vec();
    point.extend(b);
    point.extend(m.iter().flatten());
    let fd = fd_gradient(
        |p| {
            let a = [p[0], p[1], p[2], p[3], p[4]];
            let b = [p[5], p[6], p[7], p[8]];
            let m = [[p[9], p[10], p[11]], [p[12], p[13], p[14]]];
            windows_over_arrays(&a, b, m)
        },
        &point,
    );
    let mut gradient = da.to_vec();
    gradient.extend(db);
    gradient.extend(dm.iter().flatten());
    for (g, f) in gradient.iter().zip(&fd) {
        assert!(
            (g - f).abs() < 1e-7 * f.abs().max(1.0),
            "{gradient:?} vs {fd:?}"
        );
    }
}

/// Two loops over the same slice, one after the other, with one and three saved values per
/// iteration: short slices keep both loops' frames in stack buffers, longer ones in the
/// workspace, and between 11 and 32 elements the first fits and the second does not
/// (so the second's slab is the only one the workspace releases).
#[grad]
#[allow(clippy::needless_range_loop)]
fn two_passes(xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..xs.len() {
        s = 0.5 * s + (xs[i] * xs[i]).tanh();
    }
    let mut t = 0.0;
    for x in xs {
        let u = (x * s).sin();
        t += u * u.exp() + (x + t).tanh() * x.tanh();
    }
    s * t
}

#[test]
fn short_and_long_slices_around_the_stack_buffer() {
    for n in [0, 1, 2, 3, 10, 11, 12, 31, 32, 33, 40, 100] {
        let xs: Vec<f64> = (0..n).map(|i| 0.3 + 0.1 * (i as f64 * 1.7).sin()).collect();
        check(
            &format!("two_passes over {n}"),
            |x: &[f64]| two_passes(x),
            two_passes_grad(&xs),
            &xs,
        );
    }
}

#[test]
fn a_short_slice_takes_nothing_from_the_pool() {
    autodiff::workspaces::release();
    let xs = [0.3, -0.7, 1.1];
    let _ = two_passes_grad(&xs);
    assert_eq!(autodiff::workspaces::pooled_bytes(), 0, "3 elements");
    let long = vec![0.25; 50];
    let (value, grad) = two_passes_grad(&long);
    assert!(autodiff::workspaces::pooled_bytes() > 0, "50 elements");
    // The workspace, back in the pool, serves the next long call the same.
    assert_eq!(two_passes_grad(&long), (value, grad));
}
