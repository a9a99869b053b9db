//! `#[grad(parallel)]` runs a loop over samples in chunks on rayon's thread pool: each
//! chunk preaccumulates its own gradient, and the chunks' results are added in a fixed
//! tree (`codegen/preaccumulate.rs`, `autodiff_runtime::parallel`).
//!
//! Every function is written three times by `three!`: plain, with `reassociate` (one
//! thread, the same preaccumulation) and with `parallel`. The parallel partials are
//! checked against the other two (equal up to rounding), against central differences,
//! and for being the same bit for bit on 1, 2, 3 and 8 threads.

mod common;

use autodiff::prelude::*;
use common::{assert_all_close, assert_close, fd_gradient};

/// Defines `$plain` with `#[grad($($args)*)]`, `$pre` with `reassociate` and `$par` with
/// `parallel`, all with the same signature and body.
macro_rules! three {
    ([$($args:tt)*] fn $plain:ident / $pre:ident / $par:ident ($($params:tt)*) -> $ret:ty $body:block) => {
        #[grad($($args)*)]
        #[allow(clippy::needless_range_loop, clippy::assign_op_pattern)]
        fn $plain($($params)*) -> $ret $body

        #[grad($($args)* reassociate)]
        #[allow(clippy::needless_range_loop, clippy::assign_op_pattern)]
        fn $pre($($params)*) -> $ret $body

        #[grad($($args)* parallel)]
        #[allow(clippy::needless_range_loop, clippy::assign_op_pattern)]
        fn $par($($params)*) -> $ret $body
    };
}

/// Runs `f` on a pool of `threads` threads.
fn on<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
        .install(f)
}

/// The bits of every number, to compare results exactly.
fn bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// Samples of two inputs and a label ±1, in two interleaved half circles.
fn moons(n: usize) -> (Vec<[f64; 2]>, Vec<f64>) {
    let xs = (0..n)
        .map(|i| {
            let t = std::f64::consts::PI * (i as f64 * 0.618).fract();
            if i % 2 == 0 {
                [t.cos(), t.sin()]
            } else {
                [1.0 - t.cos(), 0.5 - t.sin()]
            }
        })
        .collect();
    let ys = (0..n)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    (xs, ys)
}

three! {
    [wrt(w1, b1, w2, b2),]
    fn net / net_pre / net_par(
        w1: &[[f64; 2]; 8],
        b1: &[f64],
        w2: &[f64; 8],
        b2: f64,
        xs: &[[f64; 2]],
        ys: &[f64],
    ) -> f64 {
        // A 2-8-1 network with a hinge loss and an L2 term: the moons loss, smaller.
        let mut loss = 0.0;
        for (x, &y) in xs.iter().zip(ys) {
            let mut out = b2;
            for j in 0..8 {
                let a = w1[j][0] * x[0] + w1[j][1] * x[1] + b1[j];
                out += w2[j] * a.max(0.0);
            }
            loss += (1.0 - y * out).max(0.0);
        }
        let mut l2 = 0.0;
        for j in 0..8 {
            l2 += w2[j] * w2[j] + w1[j][0] * w1[j][0] + w1[j][1] * w1[j][1];
        }
        loss / xs.len() as f64 + 1e-3 * l2
    }
}

/// The network's parameters, flat: `w1` (16), `b1` (8), `w2` (8), `b2`.
fn net_parts(p: &[f64]) -> ([[f64; 2]; 8], Vec<f64>, [f64; 8], f64) {
    let w1 = std::array::from_fn(|j| [p[2 * j], p[2 * j + 1]]);
    let w2 = std::array::from_fn(|j| p[24 + j]);
    (w1, p[16..24].to_vec(), w2, p[32])
}

fn net_params() -> Vec<f64> {
    (0..33)
        .map(|k| 0.8 * (1.3 * k as f64 + 0.4).sin())
        .collect()
}

/// The network's partials, flat.
fn net_par_flat(p: &[f64], xs: &[[f64; 2]], ys: &[f64]) -> Vec<f64> {
    let (w1, b1, w2, b2) = net_parts(p);
    let (value, d_w1, d_b1, d_w2, d_b2) = net_par_grad(&w1, &b1, &w2, b2, xs, ys);
    let mut flat = vec![value];
    flat.extend(d_w1.as_flattened());
    flat.extend(&d_b1);
    flat.extend(&d_w2);
    flat.push(d_b2);
    flat
}

#[test]
fn the_moons_loss_agrees_with_one_thread_and_with_central_differences() {
    let p = net_params();
    let (w1, b1, w2, b2) = net_parts(&p);
    for n in [1, 7, 256, 257, 1000] {
        let (xs, ys) = moons(n);
        let par = net_par_flat(&p, &xs, &ys);
        let (value, d_w1, d_b1, d_w2, d_b2) = net_grad(&w1, &b1, &w2, b2, &xs, &ys);
        let (pre_value, ..) = net_pre_grad(&w1, &b1, &w2, b2, &xs, &ys);
        let mut plain = vec![value];
        plain.extend(d_w1.as_flattened());
        plain.extend(&d_b1);
        plain.extend(&d_w2);
        plain.push(d_b2);
        assert_all_close(&par, &plain, 1e-12, "against the plain sweep");
        assert_close(par[0], pre_value, 1e-12, "value against reassociate");
        assert_close(par[0], net(&w1, &b1, &w2, b2, &xs, &ys), 1e-12, "value");
        let fd = fd_gradient(
            |q| {
                let (w1, b1, w2, b2) = net_parts(q);
                net(&w1, &b1, &w2, b2, &xs, &ys)
            },
            &p,
        );
        assert_all_close(&par[1..], &fd, 1e-6, "against central differences");
    }
}

#[test]
fn the_gradient_is_the_same_bit_for_bit_on_any_number_of_threads() {
    let p = net_params();
    // 20 chunks of 256 samples, the last one short.
    let (xs, ys) = moons(5_000);
    let one = bits(&on(1, || net_par_flat(&p, &xs, &ys)));
    for threads in [2, 3, 8] {
        for _ in 0..3 {
            let many = bits(&on(threads, || net_par_flat(&p, &xs, &ys)));
            assert_eq!(many, one, "{threads} threads");
        }
    }
}

three! {
    [wrt(a, b),]
    fn line / line_pre / line_par(a: f64, b: f64, xs: &[f64], ys: &[f64]) -> f64 {
        // No loop inside the sample loop: under `parallel` it is split all the same.
        let mut sse = 0.0;
        for i in 0..xs.len() {
            let r = a * xs[i] + b - ys[i];
            sse += r * r;
        }
        0.5 * sse
    }
}

#[test]
fn a_loop_with_no_loop_inside_is_split_too_and_matches_the_closed_form() {
    let n = 3_001;
    let xs: Vec<f64> = (0..n).map(|i| i as f64 / n as f64).collect();
    let ys: Vec<f64> = xs
        .iter()
        .map(|x| 2.0 * x - 1.0 + 0.1 * (9.0 * x).sin())
        .collect();
    let (a, b) = (1.7, -0.6);
    let (value, d_a, d_b) = line_par_grad(a, b, &xs, &ys);
    // ∂/∂a = Σ r x, ∂/∂b = Σ r.
    let r: Vec<f64> = xs.iter().zip(&ys).map(|(x, y)| a * x + b - y).collect();
    let closed_a: f64 = r.iter().zip(&xs).map(|(r, x)| r * x).sum();
    let closed_b: f64 = r.iter().sum();
    assert_close(value, line(a, b, &xs, &ys), 1e-12, "value");
    assert_close(d_a, closed_a, 1e-11, "d_a");
    assert_close(d_b, closed_b, 1e-11, "d_b");
    let (_, pre_a, pre_b) = line_pre_grad(a, b, &xs, &ys);
    assert_close(d_a, pre_a, 1e-12, "against reassociate");
    assert_close(d_b, pre_b, 1e-12, "against reassociate");
    let (_, plain_a, plain_b) = line_grad(a, b, &xs, &ys);
    assert_close(d_a, plain_a, 1e-12, "against the plain sweep");
    assert_close(d_b, plain_b, 1e-12, "against the plain sweep");
    let one = on(1, || line_par_grad(a, b, &xs, &ys));
    let two = on(2, || line_par_grad(a, b, &xs, &ys));
    assert_eq!(bits(&[one.0, one.1, one.2]), bits(&[two.0, two.1, two.2]));
}

/// A model whose parameters are a struct: its partial is a `Model` too.
#[derive(Differentiable, Clone, Debug)]
struct Model {
    w: [f64; 3],
    bias: f64,
}

three! {
    [wrt(model, scale),]
    fn fit / fit_pre / fit_par(model: &Model, scale: f64, xs: &[[f64; 3]], ys: &[f64]) -> f64 {
        // The sum written as `loss = loss + …`, a scalar parameter read in every sample,
        // a value used twice.
        let mut loss = 0.0;
        for s in 0..xs.len() {
            let mut z = model.bias;
            for i in 0..3 {
                z += model.w[i] * xs[s][i];
            }
            let p = (scale * z).tanh();
            loss = loss + (p - ys[s]) * (p - ys[s]);
        }
        loss.sqrt()
    }
}

#[test]
fn struct_parameters_and_scalars_read_in_every_sample() {
    let n = 1_100;
    let xs: Vec<[f64; 3]> = (0..n)
        .map(|i| {
            let t = i as f64;
            [(0.7 * t).sin(), (1.3 * t).cos(), 0.01 * t - 0.4]
        })
        .collect();
    let ys: Vec<f64> = (0..n).map(|i| (0.37 * i as f64).sin()).collect();
    let model = Model {
        w: [0.4, -0.3, 0.8],
        bias: 0.1,
    };
    let (value, d_model, d_scale) = fit_par_grad(&model, 0.9, &xs, &ys);
    let (plain_value, plain_model, plain_scale) = fit_grad(&model, 0.9, &xs, &ys);
    let (_, pre_model, _) = fit_pre_grad(&model, 0.9, &xs, &ys);
    assert_close(value, plain_value, 1e-12, "value");
    assert_all_close(&d_model.w, &plain_model.w, 1e-12, "d_w");
    assert_all_close(&d_model.w, &pre_model.w, 1e-12, "d_w against reassociate");
    assert_close(d_model.bias, plain_model.bias, 1e-12, "d_bias");
    assert_close(d_scale, plain_scale, 1e-12, "d_scale");
    let fd = fd_gradient(
        |q| {
            let model = Model {
                w: [q[0], q[1], q[2]],
                bias: q[3],
            };
            fit(&model, q[4], &xs, &ys)
        },
        &[0.4, -0.3, 0.8, 0.1, 0.9],
    );
    let ours = [
        d_model.w[0],
        d_model.w[1],
        d_model.w[2],
        d_model.bias,
        d_scale,
    ];
    assert_all_close(&ours, &fd, 1e-6, "against central differences");
    let again = on(3, || fit_par_grad(&model, 0.9, &xs, &ys));
    assert_eq!(bits(&again.1.w), bits(&d_model.w));
    assert_eq!(again.2.to_bits(), d_scale.to_bits());
}

#[test]
fn grad_into_adds_to_its_buffers_and_an_empty_loop_contributes_nothing() {
    let p = net_params();
    let (w1, b1, w2, b2) = net_parts(&p);
    let (xs, ys) = moons(600);
    let (_, d_w1, d_b1, d_w2, d_b2) = net_par_grad(&w1, &b1, &w2, b2, &xs, &ys);
    let (mut g_w1, mut g_b1, mut g_w2, mut g_b2) = ([[1.0; 2]; 8], vec![2.0; 8], [3.0; 8], 4.0);
    net_par_grad_into(
        &w1, &b1, &w2, b2, &xs, &ys, &mut g_w1, &mut g_b1, &mut g_w2, &mut g_b2,
    );
    let shifted = |d: &[f64], by: f64| d.iter().map(|d| d + by).collect::<Vec<_>>();
    assert_all_close(
        g_w1.as_flattened(),
        &shifted(d_w1.as_flattened(), 1.0),
        1e-12,
        "w1",
    );
    assert_all_close(&g_b1, &shifted(&d_b1, 2.0), 1e-12, "b1");
    assert_all_close(&g_w2, &shifted(&d_w2, 3.0), 1e-12, "w2");
    assert_close(g_b2, d_b2 + 4.0, 1e-12, "b2");

    // No sample: the loss is 0 / 0, the sum's adjoint infinite; the plain sweep never
    // multiplies by it, and neither do the chunks.
    let (value, d_w1, d_b1, d_w2, d_b2) = net_par_grad(&w1, &b1, &w2, b2, &[], &[]);
    let (plain_value, plain_w1, plain_b1, plain_w2, plain_b2) =
        net_grad(&w1, &b1, &w2, b2, &[], &[]);
    assert!(value.is_nan() && plain_value.is_nan());
    assert_eq!(bits(d_w1.as_flattened()), bits(plain_w1.as_flattened()));
    assert_eq!(bits(&d_b1), bits(&plain_b1));
    assert_eq!(bits(&d_w2), bits(&plain_w2));
    assert_eq!(d_b2.to_bits(), plain_b2.to_bits());
}
