//! Const generics: `#[grad] fn f<const N: usize>(…)` generates `f_grad::<N>` (and
//! `_grad_into`, `_vjp`) for every `N`.
#![allow(clippy::needless_range_loop)] // the loops are written the way users write them

use autodiff::prelude::*;

#[grad]
pub fn soft_dot<const N: usize>(w: &[f64; N], x: &[f64; N]) -> f64 {
    let mut s = 0.0;
    for i in 0..N {
        s += (w[i] * x[i]).tanh();
    }
    s
}

/// Two constants, nested loops, an iterator chain, and a call to another generic function.
#[grad]
pub fn frobenius<const R: usize, const C: usize>(m: &[[f64; C]; R], scale: f64) -> f64 {
    let mut total = 0.0;
    for r in 0..R {
        for c in 0..C {
            total += m[r][c] * m[r][c];
        }
    }
    let mut waves = 0.0;
    for row in m {
        waves += row.iter().map(|v| (scale * v).sin()).sum::<f64>();
    }
    total * scale + waves + soft_dot(&m[0], &m[R - 1])
}

fn numeric(f: impl Fn(&[f64]) -> f64, at: &[f64]) -> Vec<f64> {
    (0..at.len())
        .map(|i| {
            let (mut up, mut down) = (at.to_vec(), at.to_vec());
            up[i] += 1e-6;
            down[i] -= 1e-6;
            (f(&up) - f(&down)) / 2e-6
        })
        .collect()
}

#[test]
fn one_constant_at_two_sizes() {
    let (value, dw, dx) = soft_dot_grad::<3>(&[0.5, -1.0, 2.0], &[1.0, 0.25, -0.5]);
    assert_eq!(value, soft_dot(&[0.5, -1.0, 2.0], &[1.0, 0.25, -0.5]));
    let w: [f64; 3] = [0.5, -1.0, 2.0];
    let x: [f64; 3] = [1.0, 0.25, -0.5];
    for i in 0..3 {
        let sech2 = 1.0 - (w[i] * x[i]).tanh().powi(2);
        assert!((dw[i] - x[i] * sech2).abs() < 1e-15);
        assert!((dx[i] - w[i] * sech2).abs() < 1e-15);
    }
    let (_, dw5, _) = soft_dot_grad(&[0.1; 5], &[0.2; 5]);
    assert_eq!(dw5.len(), 5);
    assert!((dw5[4] - 0.2 * (1.0 - (0.02f64).tanh().powi(2))).abs() < 1e-15);
}

#[test]
fn two_constants_against_finite_differences() {
    let m = [
        [0.3, -0.7, 1.1, 0.4],
        [0.9, 0.2, -0.5, 0.8],
        [0.05, -0.3, 0.6, -1.2],
    ];
    let scale = 0.7;
    let (value, dm, dscale) = frobenius_grad(&m, scale);
    assert_eq!(value.to_bits(), frobenius(&m, scale).to_bits());
    let at: Vec<f64> = m.iter().flatten().copied().chain([scale]).collect();
    let f = |v: &[f64]| {
        let mut m = [[0.0; 4]; 3];
        for r in 0..3 {
            m[r].copy_from_slice(&v[4 * r..4 * r + 4]);
        }
        frobenius(&m, v[12])
    };
    let got: Vec<f64> = dm.iter().flatten().copied().chain([dscale]).collect();
    for (i, (a, e)) in got.iter().zip(numeric(f, &at)).enumerate() {
        assert!((a - e).abs() < 1e-7, "component {i}: {a} vs {e}");
    }
}

// ----- const-generic structs ------------------------------------------------------------

mod common;
use common::{assert_all_close, fd_flat_gradient};

/// A layer of any width.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Linear<const N: usize> {
    pub w: [f64; N],
    pub b: f64,
}

/// Layers of one width, nested and in an array.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Net<const H: usize> {
    pub first: Linear<H>,
    pub out: [Linear<H>; 2],
}

/// A net of width 2.
fn sample_net() -> Net<2> {
    Net {
        first: Linear {
            w: [0.3, 0.4],
            b: 0.1,
        },
        out: [
            Linear {
                w: [0.5, 0.6],
                b: 0.2,
            },
            Linear {
                w: [0.7, 0.8],
                b: 0.3,
            },
        ],
    }
}

#[grad(jvp, hvp)]
fn predict<const N: usize>(m: &Linear<N>, x: &[f64; N]) -> f64 {
    let mut s = m.b;
    for i in 0..N {
        s += m.w[i] * x[i];
    }
    s.tanh()
}

#[grad]
fn net_loss(m: &Linear<3>, net: &Net<2>, x: [f64; 3], head: [f64; 2]) -> f64 {
    let mut total = predict(m, &x) + net.first.w[1] * net.out[1].w[0];
    for layer in &net.out {
        total += predict(layer, &head) * layer.b;
    }
    total
}

#[test]
fn const_generic_structs() {
    let m = Linear {
        w: [0.1, 0.2, -0.3],
        b: 0.5,
    };
    let x = [1.0, 2.0, 3.0];
    let (value, d_m, d_x) = predict_grad(&m, &x);
    assert_eq!(value.to_bits(), predict(&m, &x).to_bits());
    assert_all_close(
        &d_m.to_flat_vec(),
        &fd_flat_gradient(&m, |m| predict(m, &x)),
        1e-8,
        "∂/∂m",
    );
    // Closed form: ∂/∂x = (1 - tanh²) w.
    let slope = 1.0 - value * value;
    assert_all_close(&d_x, &m.w.map(|w| slope * w), 1e-14, "∂/∂x");
    let (_, tangent) = predict_jvp(&m, &x, &d_m, &[0.0; 3]);
    let squared: f64 = d_m.to_flat_vec().iter().map(|g| g * g).sum();
    assert!((tangent - squared).abs() < 1e-13);
    let (_, _, _, hv_m, _) = predict_hvp(&m, &x, &d_m, &[0.0; 3]);
    let h = 1e-5;
    let at = |step: f64| {
        let mut moved = m.clone();
        moved.add_scaled(step, &d_m);
        predict_grad(&moved, &x).1.to_flat_vec()
    };
    let numeric = common::slope(at, h);
    assert_all_close(&hv_m.to_flat_vec(), &numeric, 1e-6, "hvp");

    let net = sample_net();
    let head = [0.4, -0.9];
    let (value, d_m, d_net, _, _) = net_loss_grad(&m, &net, x, head);
    assert_eq!(value.to_bits(), net_loss(&m, &net, x, head).to_bits());
    assert_all_close(
        &d_m.to_flat_vec(),
        &fd_flat_gradient(&m, |m| net_loss(m, &net, x, head)),
        1e-8,
        "∂/∂m",
    );
    assert_all_close(
        &d_net.to_flat_vec(),
        &fd_flat_gradient(&net, |net| net_loss(&m, net, x, head)),
        1e-8,
        "∂/∂net",
    );
}

/// A nested const-generic struct taken at a const generic width (`Net<H>` holding
/// `Linear<H>`s).
#[grad(jvp)]
fn net_energy<const H: usize>(net: &Net<H>, x: [f64; H]) -> f64 {
    let mut e = net.first.b * net.first.b;
    for i in 0..H {
        e += net.first.w[i] * x[i] + net.out[1].w[i] * net.out[0].b;
    }
    e
}

#[test]
fn nested_const_generic_structs_at_a_generic_width() {
    let net = sample_net();
    let x = [1.5, -2.0];
    let (value, d_net, d_x) = net_energy_grad(&net, x);
    assert_eq!(value, net_energy(&net, x));
    assert_all_close(
        &d_net.to_flat_vec(),
        &fd_flat_gradient(&net, |net| net_energy(net, x)),
        1e-8,
        "∂/∂net",
    );
    assert_all_close(&d_x, &net.first.w, 1e-15, "∂/∂x");
    let zero = Net {
        first: Linear {
            w: [0.0; 2],
            b: 0.0,
        },
        out: [
            Linear {
                w: [0.0; 2],
                b: 0.0,
            },
            Linear {
                w: [0.0; 2],
                b: 0.0,
            },
        ],
    };
    let (_, tangent) = net_energy_jvp(&net, x, &zero, [1.0, 0.0]);
    assert_eq!(tangent, d_x[0]);
}
