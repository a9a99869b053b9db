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
