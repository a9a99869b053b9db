//! `#[grad(reassociate)]` preaccumulates the gradient of a loop that only sums: each
//! iteration runs its own sweep as soon as its forward pass is done, with the sum's
//! adjoint seeded to 1, into gradients kept across iterations; the reverse sweep scales
//! them once by the sum's adjoint (`codegen/preaccumulate.rs`).
//!
//! Every function is written twice by `both!`, with and without `reassociate`, and the
//! preaccumulated partials are checked against the plain sweep (equal up to rounding),
//! against central differences, and where they are simple against closed forms. The
//! bodies read parameters (scalars, arrays, slices), locals computed before the loop,
//! values used twice, `#[grad]` functions, and branches; the sums' adjoints are not 1.

mod common;

use autodiff::prelude::*;
use common::{assert_all_close, assert_close, fd_gradient, fd_rows_gradient};

/// Defines `$plain` with `#[grad($($args)*)]` and `$pre` with the same arguments and
/// `reassociate`, both with the same signature and body.
macro_rules! both {
    ([$($args:tt)*] fn $plain:ident / $pre:ident ($($params:tt)*) -> $ret:ty $body:block) => {
        // (`&Vec` parameters are among the forms tested.)
        #[grad($($args)*)]
        #[allow(clippy::needless_range_loop, clippy::ptr_arg)]
        fn $plain($($params)*) -> $ret $body

        #[grad($($args)* reassociate)]
        #[allow(clippy::needless_range_loop, clippy::ptr_arg)]
        fn $pre($($params)*) -> $ret $body
    };
}

/// Samples of three inputs and their targets.
fn samples(n: usize) -> (Vec<[f64; 3]>, Vec<f64>) {
    let xs = (0..n)
        .map(|i| {
            let t = i as f64;
            [(0.7 * t).sin(), (1.3 * t).cos(), 0.1 * t - 0.4]
        })
        .collect();
    let ys = (0..n).map(|i| (0.37 * i as f64).sin()).collect();
    (xs, ys)
}

both! {
    [wrt(w, b, scale),]
    fn fit / fit_pre(
        w: &[[f64; 3]; 4],
        b: &[f64],
        scale: f64,
        xs: &[[f64; 3]],
        ys: &[f64],
    ) -> f64 {
        // A local computed before the loop and read in it.
        let shift = scale * scale + 0.5;
        let mut loss = 0.0;
        for (x, &y) in xs.iter().zip(ys) {
            let mut h = [0.0; 4];
            for j in 0..4 {
                let mut a = b[j];
                for i in 0..3 {
                    a += w[j][i] * x[i];
                }
                h[j] = (a * shift).tanh();
            }
            let mut out = 0.0;
            for j in 0..4 {
                // Each h[j] used twice, and the scalar parameter inside the sample.
                out += h[j] * h[j] + h[j] * scale;
            }
            loss += (out - y).powi(2) * shift;
        }
        // The sum's adjoint is neither 1 nor constant.
        (loss / xs.len() as f64).sqrt() + scale.sin()
    }
}

/// The parameters of `fit`, flat: `w` (12), `b` (4), `scale`.
fn fit_flat(p: &[f64], xs: &[[f64; 3]], ys: &[f64]) -> f64 {
    let w: [[f64; 3]; 4] = std::array::from_fn(|j| std::array::from_fn(|i| p[3 * j + i]));
    fit(&w, &p[12..16], p[16], xs, ys)
}

#[test]
fn a_sample_loop_is_preaccumulated_and_agrees_with_the_plain_sweep() {
    let p: Vec<f64> = (0..17).map(|k| 0.3 * (1.7 * k as f64).sin()).collect();
    let w: [[f64; 3]; 4] = std::array::from_fn(|j| std::array::from_fn(|i| p[3 * j + i]));
    let mut reordered = 0;
    for n in [1, 2, 5, 64, 203] {
        let (xs, ys) = samples(n);
        let (value, d_w, d_b, d_scale) = fit_pre_grad(&w, &p[12..16], p[16], &xs, &ys);
        let (plain_value, plain_w, plain_b, plain_scale) =
            fit_grad(&w, &p[12..16], p[16], &xs, &ys);
        assert_close(value, plain_value, 1e-12, "value");
        assert_close(value, fit(&w, &p[12..16], p[16], &xs, &ys), 1e-12, "value");
        assert_all_close(d_w.as_flattened(), plain_w.as_flattened(), 1e-12, "d_w");
        assert_all_close(&d_b, &plain_b, 1e-12, "d_b");
        assert_close(d_scale, plain_scale, 1e-12, "d_scale");
        reordered += d_b
            .iter()
            .zip(&plain_b)
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        let fd = fd_gradient(|q| fit_flat(q, &xs, &ys), &p);
        let mut ours = d_w.as_flattened().to_vec();
        ours.extend(&d_b);
        ours.push(d_scale);
        assert_all_close(&ours, &fd, 1e-6, "against central differences");
    }
    // `λ · Σ g` is not `Σ λ · g` bit for bit: the preaccumulated sweep did run.
    assert!(reordered > 0);
}

#[test]
fn the_slice_partial_adds_into_the_buffer_of_grad_into() {
    let (xs, ys) = samples(37);
    let w = [
        [0.2, -0.4, 0.6],
        [0.1, 0.3, -0.2],
        [-0.5, 0.2, 0.1],
        [0.4, 0.4, -0.3],
    ];
    let b = [0.1, -0.2, 0.05, 0.3];
    let (_, plain_w, plain_b, plain_scale) = fit_grad(&w, &b, 0.8, &xs, &ys);
    // Buffers that hold something already: the partials are added to it.
    let (mut d_w, mut d_b, mut d_scale) = ([[1.0; 3]; 4], [2.0; 4], 3.0);
    let value = fit_pre_grad_into(&w, &b, 0.8, &xs, &ys, &mut d_w, &mut d_b, &mut d_scale);
    assert_close(value, fit(&w, &b, 0.8, &xs, &ys), 1e-12, "value");
    let shifted = |plain: &[f64], by: f64| plain.iter().map(|d| d + by).collect::<Vec<_>>();
    assert_all_close(
        d_w.as_flattened(),
        &shifted(plain_w.as_flattened(), 1.0),
        1e-12,
        "d_w",
    );
    assert_all_close(&d_b, &shifted(&plain_b, 2.0), 1e-12, "d_b");
    assert_close(d_scale, plain_scale + 3.0, 1e-12, "d_scale");
}

/// `⟨w, x⟩`, a `#[grad]` function that the loop below passes the weights to whole.
#[grad]
fn dot3(w: &[f64; 3], x: &[f64; 3]) -> f64 {
    w[0] * x[0] + w[1] * x[1] + w[2] * x[2]
}

both! {
    [wrt(w),]
    fn squares / squares_pre(w: &[f64; 3], xs: &[[f64; 3]], ys: &[f64]) -> f64 {
        let mut total = 0.0;
        for s in 0..xs.len() {
            // A loop inside (what makes the sample loop worth preaccumulating): d is
            // 0.9 ⟨w, x⟩, with w read in the call and in the loop.
            let mut d = dot3(w, &xs[s]);
            for i in 0..3 {
                d -= 0.1 * w[i] * xs[s][i];
            }
            // The sum is written in a branch: still the loop's only write of it.
            if ys[s] > 0.0 {
                total += d * d;
            }
        }
        3.0 * total
    }
}

#[test]
fn calls_and_branches_in_the_body_match_the_closed_form() {
    let (xs, ys) = samples(50);
    let w = [0.3, -0.7, 1.1];
    let (value, d_w) = squares_pre_grad(&w, &xs, &ys);
    assert_close(value, squares(&w, &xs, &ys), 1e-12, "value");
    // The value is 3 Σ_{y_s > 0} (0.9 ⟨w, x_s⟩)², so ∂/∂w = 3 Σ_{y_s > 0} 2 · 0.81 ⟨w, x_s⟩ x_s.
    let mut closed = [0.0; 3];
    for (x, &y) in xs.iter().zip(&ys) {
        if y > 0.0 {
            let d = w[0] * x[0] + w[1] * x[1] + w[2] * x[2];
            for i in 0..3 {
                closed[i] += 6.0 * 0.81 * d * x[i];
            }
        }
    }
    assert_all_close(&d_w, &closed, 1e-12, "closed form");
    assert_all_close(&d_w, &squares_grad(&w, &xs, &ys).1, 1e-12, "plain sweep");
}

#[test]
fn a_loop_that_never_runs_contributes_nothing_even_under_an_infinite_adjoint() {
    // No sample: the loss is 0 / 0 and the sum's adjoint 1 / 0. The plain sweep never
    // multiplies by it; neither does the preaccumulated one.
    let w = [[0.5; 3]; 4];
    let b = [0.1; 4];
    let (value, d_w, d_b, d_scale) = fit_pre_grad(&w, &b, 0.3, &[], &[]);
    let (plain_value, plain_w, plain_b, plain_scale) = fit_grad(&w, &b, 0.3, &[], &[]);
    assert!(value.is_nan() && plain_value.is_nan());
    assert_eq!(d_w, plain_w);
    assert_eq!(d_b, plain_b);
    assert_eq!(d_scale.to_bits(), plain_scale.to_bits());
    // Only `scale.sin()` reaches scale (`shift` is read in the loop alone): cos(0.3).
    assert_eq!(d_w, [[0.0; 3]; 4]);
    assert_eq!(d_b, [0.0; 4]);
    assert_close(d_scale, 0.3f64.cos(), 1e-15, "d_scale");
}

both! {
    [wrt(w),]
    fn zero_weight / zero_weight_pre(w: &[f64; 2], xs: &[f64]) -> f64 {
        let mut total = 0.0;
        for &x in xs {
            let mut t = 0.0;
            for k in 0..2 {
                t += (w[k] * x).sin();
            }
            total += t;
        }
        0.0 * total + w[0]
    }
}

#[test]
fn a_zero_adjoint_adds_nothing() {
    let xs = [0.5, -1.5, 2.0];
    let (value, d_w) = zero_weight_pre_grad(&[0.3, 0.4], &xs);
    assert_eq!(value.to_bits(), zero_weight(&[0.3, 0.4], &xs).to_bits());
    assert_eq!(d_w, [1.0, 0.0]);
    assert_eq!(zero_weight_grad(&[0.3, 0.4], &xs).1, [1.0, 0.0]);
}

both! {
    [wrt(v),]
    fn f32_fit / f32_fit_pre(v: &[f32; 2], xs: &[f32]) -> f32 {
        let mut total = 0.0f32;
        for &x in xs {
            let mut t = 0.0f32;
            for k in 0..2 {
                t += (v[k] * x).tanh();
            }
            total += t * t;
        }
        total
    }
}

#[test]
fn f32_functions_are_preaccumulated_too() {
    let xs: Vec<f32> = (0..40).map(|i| (i as f32 * 0.3).sin()).collect();
    let v = [0.7f32, -0.2];
    let (value, d_v) = f32_fit_pre_grad(&v, &xs);
    let (plain_value, plain_v) = f32_fit_grad(&v, &xs);
    assert!((value - plain_value).abs() <= 1e-5 * plain_value.abs());
    for k in 0..2 {
        assert!(
            (d_v[k] - plain_v[k]).abs() <= 1e-5 * plain_v[k].abs(),
            "{d_v:?} {plain_v:?}"
        );
    }
}

/// A model kept in a struct, with a `#[grad]` method.
#[derive(Differentiable, Clone, Debug, PartialEq)]
struct Scale {
    b: f64,
}

#[grad]
impl Scale {
    #[grad]
    fn apply(&self, x: f64) -> f64 {
        self.b * x
    }
}

both! {
    [wrt(x, w, m),]
    fn passed_whole / passed_whole_pre(x: f64, w: &[f64; 3], m: &Scale, xs: &[[f64; 3]]) -> f64 {
        let mut total = 0.0;
        for row in xs {
            let mut v = x;
            for _ in 0..2 {
                v += x;
            }
            // `w` and `m` are only passed whole, never read by index or field.
            total += v * m.apply(x) + dot3(w, row);
        }
        3.0 * total
    }
}

#[test]
fn what_the_body_passes_whole_is_differentiated_too() {
    // Found by the random programs: an argument passed whole (a struct to its method, an
    // array to a function) must keep the plain sweep or be preaccumulated, never take
    // the iterations' partials unscaled.
    let (xs, _) = samples(4);
    let (w, m) = ([0.5, -0.25, 2.0], Scale { b: 0.5 });
    let (value, dx, d_w, d_m) = passed_whole_pre_grad(0.3, &w, &m, &xs);
    let (plain_value, plain_x, plain_w, plain_m) = passed_whole_grad(0.3, &w, &m, &xs);
    assert_close(value, plain_value, 1e-12, "value");
    // 3 Σ_s (3x · b x + ⟨w, x_s⟩): ∂x = 3 · 4 · 6 b x, ∂b = 3 · 4 · 3 x², ∂w = 3 Σ x_s.
    assert_close(dx, 72.0 * 0.5 * 0.3, 1e-12, "∂x");
    assert_close(d_m.b, 36.0 * 0.09, 1e-12, "∂b");
    for i in 0..3 {
        let closed = 3.0 * xs.iter().map(|row| row[i]).sum::<f64>();
        assert_close(d_w[i], closed, 1e-12, "∂w");
    }
    assert_close(dx, plain_x, 1e-12, "∂x, plain");
    assert_all_close(&d_w, &plain_w, 1e-12, "∂w, plain");
    assert_close(d_m.b, plain_m.b, 1e-12, "∂b, plain");
}

/// A layer, and a network holding one with an output row and a constant field.
#[derive(Differentiable, Clone, Debug, PartialEq)]
struct Layer {
    w: [[f64; 2]; 3],
    b: [f64; 3],
}

#[derive(Differentiable, Clone, Debug, PartialEq)]
struct Net {
    hidden: Layer,
    out: [f64; 3],
    steps: usize,
}

both! {
    [wrt(net),]
    fn net_loss / net_loss_pre(net: &Net, xs: &[[f64; 3]], ys: &[f64]) -> f64 {
        let mut loss = 0.0;
        for (x, &y) in xs.iter().zip(ys) {
            let mut score = 0.0;
            for j in 0..3 {
                let mut a = net.hidden.b[j];
                for i in 0..2 {
                    a += net.hidden.w[j][i] * x[i];
                }
                score += net.out[j] * a.tanh();
            }
            loss += (score - y).powi(2);
        }
        loss / xs.len() as f64
    }
}

#[grad]
impl Net {
    /// The same loss as a method, `self` differentiated.
    #[grad(wrt(self), reassociate)]
    #[allow(clippy::needless_range_loop)]
    fn loss(&self, xs: &[[f64; 3]], ys: &[f64]) -> f64 {
        let mut loss = 0.0;
        for (x, &y) in xs.iter().zip(ys) {
            let mut score = 0.0;
            for j in 0..3 {
                let mut a = self.hidden.b[j];
                for i in 0..2 {
                    a += self.hidden.w[j][i] * x[i];
                }
                score += self.out[j] * a.tanh();
            }
            loss += (score - y).powi(2);
        }
        loss / xs.len() as f64
    }
}

#[test]
fn struct_parameters_are_preaccumulated_field_by_field() {
    let net = Net {
        hidden: Layer {
            w: [[0.3, -0.5], [0.8, 0.1], [-0.4, 0.6]],
            b: [0.1, -0.2, 0.05],
        },
        out: [0.7, -0.3, 0.5],
        steps: 7,
    };
    let (xs, ys) = samples(29);
    let (value, d_net) = net_loss_pre_grad(&net, &xs, &ys);
    let (plain_value, plain) = net_loss_grad(&net, &xs, &ys);
    assert_close(value, plain_value, 1e-12, "value");
    assert_all_close(
        &d_net.to_flat_vec(),
        &plain.to_flat_vec(),
        1e-12,
        "plain sweep",
    );
    // Not bit for bit: the preaccumulated sweep ran (`λ · Σ g` for `Σ λ · g`).
    assert_ne!(d_net.to_flat_vec(), plain.to_flat_vec());
    let fd = common::fd_flat_gradient(&net, |m| net_loss(m, &xs, &ys));
    assert_all_close(&d_net.to_flat_vec(), &fd, 1e-6, "central differences");
    // The constant field is copied, not differentiated.
    assert_eq!(d_net.steps, 7);
    // As a method, into a buffer that holds something already.
    let (method_value, d_self) = net.loss_grad(&xs, &ys);
    assert_close(method_value, value, 1e-12, "method value");
    assert_all_close(&d_self.to_flat_vec(), &plain.to_flat_vec(), 1e-12, "method");
    assert_eq!(d_self.to_flat_vec(), d_net.to_flat_vec());
    let mut buffer = net.clone();
    let before = buffer.to_flat_vec();
    net.loss_grad_into(&xs, &ys, &mut buffer);
    let added: Vec<f64> = buffer
        .to_flat_vec()
        .iter()
        .zip(&before)
        .map(|(after, before)| after - before)
        .collect();
    assert_all_close(&added, &plain.to_flat_vec(), 1e-12, "added into the buffer");
}

both! {
    []
    fn rows / rows_pre(w: &[f64; 6], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
        // Every parameter differentiated: the samples too, a slice of arrays whose
        // preaccumulated gradient is rows of a workspace.
        let mut loss = 0.0;
        for (x, &y) in xs.iter().zip(ys) {
            let mut h = [0.0; 2];
            for j in 0..2 {
                let mut a = w[4 + j];
                for i in 0..2 {
                    a += w[2 * j + i] * x[i];
                }
                // x[0] read again, outside the inner loop.
                h[j] = (a + x[0] * x[1]).tanh();
            }
            loss += (h[0] * h[1] - y).powi(2);
        }
        loss.sqrt()
    }
}

/// Sums `rows` over a batch twice, through its pullback: the slice of arrays passed whole
/// to a `#[grad]` function.
#[grad(reassociate)]
fn rows_twice(w: &[f64; 6], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
    rows_pre(w, xs, ys) * 2.0 + rows_pre(w, xs, ys).sin()
}

#[grad]
fn first_row(xs: &[[f64; 2]]) -> f64 {
    xs[0][0] * xs[0][1]
}

both! {
    []
    fn whole / whole_pre(w: &[f64; 2], xs: &[[f64; 2]]) -> f64 {
        // The slice passed whole in the loop: the rows cannot be, so the loop keeps the
        // plain sweep, and the result is the same.
        let mut s = 0.0;
        for x in xs {
            let mut a = 0.0;
            for i in 0..2 {
                a += w[i] * x[i];
            }
            s += a.sin() * first_row(xs);
        }
        s
    }
}

#[test]
fn a_slice_of_arrays_gets_a_preaccumulated_gradient() {
    let w = [0.3, -0.2, 0.5, 0.1, -0.4, 0.2];
    let mut reordered = 0;
    for n in [1, 3, 40] {
        let (xs3, ys) = samples(n);
        let xs: Vec<[f64; 2]> = xs3.iter().map(|x| [x[0], x[1]]).collect();
        let (value, d_w, d_xs, d_ys) = rows_pre_grad(&w, &xs, &ys);
        let (plain_value, plain_w, plain_xs, plain_ys) = rows_grad(&w, &xs, &ys);
        assert_close(value, plain_value, 1e-12, "value");
        assert_all_close(&d_w, &plain_w, 1e-12, "d_w");
        assert_all_close(d_xs.as_flattened(), plain_xs.as_flattened(), 1e-12, "d_xs");
        assert_all_close(&d_ys, &plain_ys, 1e-12, "d_ys");
        reordered += d_xs
            .as_flattened()
            .iter()
            .zip(plain_xs.as_flattened())
            .filter(|(a, b)| a.to_bits() != b.to_bits())
            .count();
        // Central differences in the samples.
        let fd = fd_rows_gradient(|xs| rows(&w, xs, &ys), &xs);
        assert_all_close(
            d_xs.as_flattened(),
            &fd,
            1e-6,
            "d_xs against central differences",
        );
        // Into buffers holding values, which it adds to.
        let mut into_w = [1.0; 6];
        let mut into_xs = vec![[1.0, -1.0]; n];
        let mut into_ys = vec![0.5; n];
        let v = rows_pre_grad_into(&w, &xs, &ys, &mut into_w, &mut into_xs, &mut into_ys);
        assert_close(v, value, 1e-15, "value of _grad_into");
        let shifted: Vec<f64> = d_xs.iter().flat_map(|r| [r[0] + 1.0, r[1] - 1.0]).collect();
        assert_all_close(into_xs.as_flattened(), &shifted, 1e-12, "d_xs added in");
        // Through the pullback, called twice from another function.
        let (twice, t_w, t_xs, _) = rows_twice_grad(&w, &xs, &ys);
        let scale = 2.0 + value.cos();
        assert_close(
            twice,
            value * 2.0 + value.sin(),
            1e-12,
            "value of the caller",
        );
        let expected_w: Vec<f64> = d_w.iter().map(|g| g * scale).collect();
        assert_all_close(&t_w, &expected_w, 1e-12, "d_w through the pullback");
        let expected_xs: Vec<f64> = d_xs.as_flattened().iter().map(|g| g * scale).collect();
        assert_all_close(
            t_xs.as_flattened(),
            &expected_xs,
            1e-12,
            "d_xs through the pullback",
        );
    }
    assert!(reordered > 0, "the preaccumulated sweep ran");
}

#[test]
fn a_slice_of_arrays_passed_whole_keeps_the_plain_sweep() {
    let w = [0.7, -0.3];
    let xs = [[0.2, 0.5], [-0.4, 0.9], [1.1, -0.6]];
    let (value, d_w, d_xs) = whole_pre_grad(&w, &xs);
    let (plain_value, plain_w, plain_xs) = whole_grad(&w, &xs);
    assert_eq!(value.to_bits(), plain_value.to_bits());
    assert_all_close(&d_w, &plain_w, 1e-12, "d_w");
    assert_all_close(d_xs.as_flattened(), plain_xs.as_flattened(), 1e-12, "d_xs");
    let fd = fd_gradient(|q| whole(&[q[0], q[1]], &xs), &w);
    assert_all_close(&d_w, &fd, 1e-6, "d_w against central differences");
}

both! {
    []
    fn rows_vec / rows_vec_pre(w: &[f64; 3], xs: &Vec<[f64; 3]>) -> f64 {
        // A vector of arrays, whose gradient is a vector of rows.
        let mut s = 0.0;
        for x in xs.iter() {
            let mut a = 0.0;
            for i in 0..3 {
                a += w[i] * x[i] * x[i];
            }
            s += a.tanh();
        }
        s
    }
}

/// Rows of a const-generic length.
#[grad(reassociate)]
fn rows_generic<const N: usize>(w: &[f64; N], xs: &[[f64; N]]) -> f64 {
    let mut s = 0.0;
    for x in xs {
        let mut a = 0.0;
        for i in 0..N {
            a += w[i] * x[i] * x[i];
        }
        s += a.tanh();
    }
    s
}

#[test]
fn vectors_of_arrays_and_generic_rows_are_preaccumulated() {
    let w = [0.4, -0.3, 0.8];
    let (xs, _) = samples(25);
    let (value, d_w, d_xs) = rows_vec_pre_grad(&w, &xs);
    let (plain_value, plain_w, plain_xs) = rows_vec_grad(&w, &xs);
    assert_close(value, plain_value, 1e-12, "value");
    assert_all_close(&d_w, &plain_w, 1e-12, "d_w");
    assert_all_close(d_xs.as_flattened(), plain_xs.as_flattened(), 1e-12, "d_xs");
    // The same function, generic in the row length, at N = 3.
    let (g_value, g_w, g_xs) = rows_generic_grad(&w, &xs);
    assert_close(g_value, value, 1e-12, "generic value");
    assert_all_close(&g_w, &d_w, 1e-12, "generic d_w");
    assert_all_close(
        g_xs.as_flattened(),
        d_xs.as_flattened(),
        1e-12,
        "generic d_xs",
    );
    let fd = fd_rows_gradient(|xs| rows_vec(&w, &xs.to_vec()), &xs);
    assert_all_close(
        d_xs.as_flattened(),
        &fd,
        1e-6,
        "d_xs against central differences",
    );
}
