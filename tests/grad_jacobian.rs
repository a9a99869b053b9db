//! Vector outputs and `#[grad(jacobian)]`: functions returning `[f64; M]` (also nested),
//! tuples, or `Vec<f64>`. Each is checked against an independent reference: central
//! differences (`assert_jacobian!`), closed forms, and the `Tape` engine; and the modes
//! against each other: the Jacobian's forward sweeps (columns from `_jvp`) against its
//! reverse sweeps (rows from `_vjp`), `_jvp` against `J·v`, and `_vjp` against `uᵀ·J`.
#![allow(clippy::needless_range_loop)] // the loops are written the way users write them
#![allow(clippy::eq_op)] // `x - x` on purpose, a sparse tangent minus itself

use autodiff::prelude::*;

mod common;
use common::assert_close;

// ----- least squares: residuals of a model, a `Vec` of run-time length -------------------

/// Misra1a's model, `y = b₁·(1 − exp(−b₂·x))`, as residuals: `Vec` output from an
/// iterator chain.
#[grad(jacobian, wrt(b))]
fn misra(b: [f64; 2], x: &[f64], y: &[f64]) -> Vec<f64> {
    x.iter()
        .zip(y)
        .map(|(&x, &y)| b[0] * (1.0 - (-b[1] * x).exp()) - y)
        .collect()
}

/// The same residuals filled by `push` in a counted loop, with a shared sub-expression.
#[grad(jacobian, wrt(b))]
fn misra_pushed(b: [f64; 2], x: &[f64], y: &[f64]) -> Vec<f64> {
    let mut out = Vec::with_capacity(x.len());
    for i in 0..x.len() {
        let e = (-b[1] * x[i]).exp();
        out.push(b[0] - b[0] * e - y[i]);
    }
    out
}

const XS: [f64; 5] = [77.6, 114.9, 141.1, 190.8, 239.9];
const YS: [f64; 5] = [10.07, 14.73, 17.94, 23.93, 29.61];

#[test]
fn residuals_match_their_closed_form_jacobian() {
    let b = [240.0, 5.5e-4];
    let (value, j) = misra_jacobian(b, &XS, &YS);
    assert_eq!(value, misra(b, &XS, &YS));
    assert_eq!(j.len(), XS.len());
    for i in 0..XS.len() {
        let e = (-b[1] * XS[i]).exp();
        assert_close(j[i][0], 1.0 - e, 1e-14, "∂r/∂b₁");
        assert_close(j[i][1], b[0] * XS[i] * e, 1e-14, "∂r/∂b₂");
    }
    let (value_pushed, j_pushed) = misra_pushed_jacobian(b, &XS, &YS);
    assert_eq!(value_pushed, misra_pushed(b, &XS, &YS));
    for i in 0..XS.len() {
        for k in 0..2 {
            assert_close(j_pushed[i][k], j[i][k], 1e-14, "push loop against iterator");
        }
    }
    assert_jacobian!(|p: &[f64]| misra([p[0], p[1]], &XS, &YS), &j, &b);
}

#[test]
fn residuals_pullback_and_forward_mode_agree_with_the_jacobian() {
    let b = [200.0, 4e-4];
    let (value, j) = misra_jacobian(b, &XS, &YS);
    // `_vjp` is uᵀ·J, with buffers for every parameter that holds numbers.
    let u = [0.5, -1.0, 2.0, 0.25, -0.75];
    let (mut d_b, mut d_x, mut d_y) = ([0.0; 2], [0.0; 5], [0.0; 5]);
    let v = misra_vjp(b, &XS, &YS, &u, &mut d_b, &mut d_x, &mut d_y);
    assert_eq!(v, value);
    for k in 0..2 {
        let expected: f64 = (0..5).map(|i| u[i] * j[i][k]).sum();
        assert_close(d_b[k], expected, 1e-13, "vjp against uᵀJ");
    }
    for i in 0..5 {
        assert_close(d_y[i], -u[i], 1e-15, "∂/∂y");
        let e = (-b[1] * XS[i]).exp();
        assert_close(d_x[i], u[i] * b[0] * b[1] * e, 1e-13, "∂/∂x");
    }
    // `_jvp` is J·v.
    let t = [0.3, -200.0];
    let (v, tangent) = misra_jvp(b, &XS, &YS, t);
    assert_eq!(v, value);
    for i in 0..5 {
        assert_close(
            tangent[i],
            j[i][0] * t[0] + j[i][1] * t[1],
            1e-13,
            "jvp against Jv",
        );
    }
}

#[test]
#[should_panic(expected = "the seed has length 7, but the output has length 5")]
fn a_seed_of_another_length_is_refused() {
    let (mut d_b, mut d_x, mut d_y) = ([0.0; 2], [0.0; 5], [0.0; 5]);
    let seed = [1.0; 7];
    let _ = misra_vjp([1.0, 1.0], &XS, &YS, &seed, &mut d_b, &mut d_x, &mut d_y);
}

// ----- fixed sizes: arrays, nested arrays, tuples; more inputs than outputs --------------

/// Polar to Cartesian coordinates, with a reused variable.
#[grad(jacobian)]
fn polar(r: f64, angle: [f64; 2]) -> [f64; 3] {
    let mut s = angle[0].sin();
    let c = angle[0].cos();
    s *= r;
    [
        r * c * angle[1].cos(),
        s * angle[1].cos(),
        r * angle[1].sin(),
    ]
}

#[test]
fn an_array_output_has_one_block_per_parameter() {
    let (r, a) = (1.7, [0.4, -0.9]);
    let (value, j_r, j_a) = polar_jacobian(r, a);
    assert_eq!(value, polar(r, a));
    // Closed forms.
    let (s0, c0, s1, c1) = (a[0].sin(), a[0].cos(), a[1].sin(), a[1].cos());
    let expected_r = [c0 * c1, s0 * c1, s1];
    let expected_a = [
        [-r * s0 * c1, -r * c0 * s1],
        [r * c0 * c1, -r * s0 * s1],
        [0.0, r * c1],
    ];
    for i in 0..3 {
        assert_close(j_r[i], expected_r[i], 1e-15, "∂/∂r");
        for k in 0..2 {
            assert_close(j_a[i][k], expected_a[i][k], 1e-15, "∂/∂angle");
        }
    }
    // Inputs (3) are no more than outputs (3): forward sweeps. The pullback gives rows.
    for i in 0..3 {
        let mut seed = [0.0; 3];
        seed[i] = 1.0;
        let (mut d_r, mut d_a) = (0.0, [0.0; 2]);
        let _ = polar_vjp(r, a, seed, &mut d_r, &mut d_a);
        assert_close(d_r, j_r[i], 1e-15, "row by reverse, r");
        for k in 0..2 {
            assert_close(d_a[k], j_a[i][k], 1e-15, "row by reverse, angle");
        }
    }
}

/// A 2 × 2 output of four inputs: more inputs than outputs, so reverse sweeps.
#[grad(jacobian)]
fn outer(u: [f64; 2], v: [f64; 2]) -> [[f64; 2]; 2] {
    let mut m = [[0.0; 2]; 2];
    for i in 0..2 {
        for k in 0..2 {
            m[i][k] = u[i] * v[k] + (u[i] - v[k]).powi(2);
        }
    }
    m
}

#[test]
fn a_nested_array_output_is_flattened_row_major() {
    let (u, v) = ([0.3, -1.2], [2.0, 0.7]);
    let (value, j_u, j_v) = outer_jacobian(u, v);
    assert_eq!(value, outer(u, v));
    for i in 0..2 {
        for k in 0..2 {
            let row = 2 * i + k;
            for p in 0..2 {
                let du = if p == i {
                    v[k] + 2.0 * (u[i] - v[k])
                } else {
                    0.0
                };
                let dv = if p == k {
                    u[i] - 2.0 * (u[i] - v[k])
                } else {
                    0.0
                };
                assert_close(j_u[row][p], du, 1e-15, "∂m/∂u");
                assert_close(j_v[row][p], dv, 1e-15, "∂m/∂v");
            }
        }
    }
    // By forward mode, column by column.
    for p in 0..2 {
        let mut t = [0.0; 2];
        t[p] = 1.0;
        let (_, tangent) = outer_jvp(u, v, t, [0.0; 2]);
        for i in 0..2 {
            for k in 0..2 {
                assert_close(tangent[i][k], j_u[2 * i + k][p], 1e-15, "column by forward");
            }
        }
    }
}

/// A tuple of two outputs.
#[grad(jacobian)]
fn moments(x: &[f64]) -> (f64, f64) {
    let mut sum = 0.0;
    let mut squares = 0.0;
    for v in x {
        sum += v;
        squares += v * v;
    }
    let n = x.len() as f64;
    (sum / n, squares / n - (sum / n) * (sum / n))
}

#[test]
fn a_slice_parameter_gives_a_row_major_matrix() {
    let x = [1.0, 2.5, -0.5, 4.0];
    let ((mean, variance), j) = moments_jacobian(&x);
    assert_eq!((mean, variance), moments(&x));
    assert_eq!(j.shape(), (2, 4));
    for k in 0..4 {
        assert_close(j[(0, k)], 0.25, 1e-15, "∂mean/∂x");
        assert_close(j[1][k], 2.0 * (x[k] - mean) / 4.0, 1e-14, "∂variance/∂x");
    }
    assert_jacobian!(
        |x: &[f64]| {
            let (m, v) = moments(x);
            [m, v]
        },
        j.row_iter(),
        &x
    );
}

#[grad(jacobian)]
fn scaled(x: &[f64], a: f64) -> Vec<f64> {
    x.iter().map(|v| a * v * v.sin()).collect()
}

#[test]
fn a_vector_output_of_a_slice() {
    let x = [0.5, -1.5, 2.0];
    let (value, j_x, j_a) = scaled_jacobian(&x, 1.5);
    assert_eq!(value, scaled(&x, 1.5));
    assert_eq!(j_x.shape(), (3, 3));
    for i in 0..3 {
        for k in 0..3 {
            let expected = if i == k {
                1.5 * (x[i].sin() + x[i] * x[i].cos())
            } else {
                0.0
            };
            assert_close(j_x[i][k], expected, 1e-15, "∂/∂x");
        }
        assert_close(j_a[i], x[i] * x[i].sin(), 1e-15, "∂/∂a");
    }
}

// ----- a scalar output: the Jacobian is the gradient ----------------------------------

#[grad(jacobian)]
fn energy(x: f64, w: [f64; 3]) -> f64 {
    let s = w[0] * x + w[1] * x * x;
    s.tanh() * w[2] + s
}

#[test]
fn a_scalar_output_jacobian_is_the_gradient() {
    let (x, w) = (0.7, [0.2, -0.4, 1.5]);
    assert_eq!(energy_jacobian(x, w), energy_grad(x, w));
}

// ----- f32, methods, calls -------------------------------------------------------------

#[grad(jacobian)]
fn rotate32(p: [f32; 2], angle: f32) -> [f32; 2] {
    let (s, c) = (angle.sin(), angle.cos());
    [c * p[0] - s * p[1], s * p[0] + c * p[1]]
}

#[test]
fn f32_vector_outputs() {
    let (p, angle) = ([1.0f32, 2.0], 0.3f32);
    let (value, j_p, j_angle) = rotate32_jacobian(p, angle);
    assert_eq!(value, rotate32(p, angle));
    let (s, c) = (angle.sin(), angle.cos());
    assert_eq!(j_p, [[c, -s], [s, c]]);
    assert!((j_angle[0] - (-s * p[0] - c * p[1])).abs() < 1e-6);
    assert!((j_angle[1] - (c * p[0] - s * p[1])).abs() < 1e-6);
}

#[grad(jvp)]
fn bump(x: f64) -> f64 {
    (-x * x).exp()
}

/// A vector output that calls another annotated function.
#[grad(jacobian)]
fn bumps(c: [f64; 3], x: f64) -> [f64; 3] {
    [bump(x - c[0]), bump(x - c[1]) * c[2], bump(x) * c[0]]
}

#[test]
fn calls_to_annotated_functions_inside_vector_outputs() {
    let (c, x) = ([0.1, -0.3, 2.0], 0.4);
    let (value, j_c, j_x) = bumps_jacobian(c, x);
    assert_eq!(value, bumps(c, x));
    let flat = |p: &[f64]| bumps([p[0], p[1], p[2]], p[3]);
    let rows: Vec<[f64; 4]> = (0..3)
        .map(|i| [j_c[i][0], j_c[i][1], j_c[i][2], j_x[i]])
        .collect();
    assert_jacobian!(flat, &rows, &[c[0], c[1], c[2], x]);
}

/// The same function written inline: its Jacobian takes one pass of vector forward mode
/// (every column at once), where `bumps`, whose tangents pass through a call, takes one
/// forward sweep per input.
#[grad(jacobian)]
fn bumps_inline(c: [f64; 3], x: f64) -> [f64; 3] {
    let (d0, d1) = (x - c[0], x - c[1]);
    [
        (-d0 * d0).exp(),
        (-d1 * d1).exp() * c[2],
        (-x * x).exp() * c[0],
    ]
}

#[test]
fn vector_forward_mode_agrees_with_one_sweep_per_input() {
    for (c, x) in [([0.1, -0.3, 2.0], 0.4), ([1.5, 0.2, -0.7], -1.1)] {
        let (value, j_c, j_x) = bumps_jacobian(c, x);
        let (value_inline, j_c_inline, j_x_inline) = bumps_inline_jacobian(c, x);
        assert_eq!(value, value_inline);
        for i in 0..3 {
            assert_close(j_x_inline[i], j_x[i], 1e-15, "∂/∂x");
            for k in 0..3 {
                assert_close(j_c_inline[i][k], j_c[i][k], 1e-15, "∂/∂c");
            }
        }
    }
}

const D: usize = 3;
const WIDE: usize = 70;

/// Sizes named by constants: one pass of vector forward mode for `D`, one sweep per input
/// past the limit of 64 directions for `WIDE`.
#[grad(jacobian)]
fn softplus_layer(x: [f64; D]) -> [f64; D] {
    let mut y = [0.0; D];
    for i in 0..D {
        y[i] = (1.0 + (x[i] * x[(i + 1) % D]).exp()).ln();
    }
    y
}

#[grad(jacobian)]
fn shifted_squares(x: [f64; WIDE]) -> [f64; WIDE] {
    let mut y = [0.0; WIDE];
    for i in 0..WIDE {
        y[i] = x[i] * x[(i + 1) % WIDE];
    }
    y
}

#[test]
fn sizes_named_by_constants() {
    let x = [0.3, -0.8, 1.1];
    let (value, j) = softplus_layer_jacobian(x);
    assert_eq!(value, softplus_layer(x));
    assert_jacobian!(|p: &[f64]| softplus_layer([p[0], p[1], p[2]]), &j, &x);

    let x: [f64; WIDE] = std::array::from_fn(|i| (i as f64 * 0.37).sin());
    let (value, j) = shifted_squares_jacobian(x);
    assert_eq!(value, shifted_squares(x));
    for i in 0..WIDE {
        let next = (i + 1) % WIDE;
        for k in 0..WIDE {
            let expected = if k == i {
                x[next]
            } else if k == next {
                x[i]
            } else {
                0.0
            };
            assert_eq!(j[i][k], expected, "J[{i}][{k}]");
        }
    }
}

struct Spring {
    k: f64,
}

#[grad]
impl Spring {
    /// Force and energy of a spring stretched by `d`, with respect to the stretch.
    #[grad(jacobian, wrt(d))]
    fn state(&self, d: [f64; 2]) -> [f64; 2] {
        let length = (d[0] * d[0] + d[1] * d[1]).sqrt();
        [-self.k * length, 0.5 * self.k * length * length]
    }
}

#[test]
fn methods_with_vector_outputs() {
    let spring = Spring { k: 3.0 };
    let d = [0.6, -0.8];
    let (value, j) = spring.state_jacobian(d);
    assert_eq!(value, spring.state(d));
    // length 1: ∂length/∂d = d.
    assert_close(j[0][0], -3.0 * 0.6, 1e-15, "force");
    assert_close(j[1][1], 3.0 * -0.8, 1e-15, "energy");
}

// ----- against the Tape engine ---------------------------------------------------------

#[test]
fn jacobians_match_the_tape() {
    let (u, v) = ([0.3, -1.2], [2.0, 0.7]);
    let (_, j_u, j_v) = outer_jacobian(u, v);
    let tape = Tape::new();
    let us: Vec<Var> = u.iter().map(|&x| tape.var(x)).collect();
    let vs: Vec<Var> = v.iter().map(|&x| tape.var(x)).collect();
    let mut outputs = Vec::new();
    for i in 0..2 {
        for k in 0..2 {
            let d = us[i] - vs[k];
            outputs.push(us[i] * vs[k] + d * d);
        }
    }
    let inputs: Vec<Var> = us.iter().chain(&vs).copied().collect();
    let reference = tape.jacobian(&outputs, &inputs);
    for row in 0..4 {
        for p in 0..2 {
            assert_close(j_u[row][p], reference[row][p], 1e-15, "∂/∂u against Tape");
            assert_close(
                j_v[row][p],
                reference[row][2 + p],
                1e-15,
                "∂/∂v against Tape",
            );
        }
    }
}

// ----- struct parameters: a row-major matrix over the struct's flat view ----------------

/// A decay model with a constant field and a vector field of run-time length.
#[derive(Differentiable, Debug, PartialEq)]
pub struct Decay {
    pub amplitude: f64,
    pub rates: Vec<f64>,
    #[differentiable(skip)]
    pub label: usize,
}

/// Residuals of a sum of exponentials: the model by reference, many outputs (forward
/// sweeps when the samples outnumber the model's numbers).
#[grad(jacobian, wrt(m))]
fn decay_residuals(m: &Decay, t: &[f64], y: &[f64]) -> Vec<f64> {
    let mut out = Vec::new();
    for (&t, &y) in t.iter().zip(y) {
        let mut s = 0.0;
        for &rate in &m.rates {
            s += (-rate * t).exp();
        }
        out.push(m.amplitude * s - y);
    }
    out
}

/// The closed form: ∂r/∂amplitude = Σ e^(-k t), ∂r/∂k = -amplitude·t·e^(-k t).
fn decay_closed_form(m: &Decay, t: &[f64]) -> Vec<Vec<f64>> {
    t.iter()
        .map(|&t| {
            let mut row = vec![m.rates.iter().map(|k| (-k * t).exp()).sum::<f64>()];
            row.extend(m.rates.iter().map(|k| -m.amplitude * t * (-k * t).exp()));
            row
        })
        .collect()
}

#[test]
fn a_struct_parameter_gives_a_matrix_in_both_sweep_directions() {
    let m = Decay {
        amplitude: 2.0,
        rates: vec![0.5, 1.5],
        label: 7,
    };
    // 6 residuals, 3 numbers: forward sweeps.
    let t = [0.0, 0.3, 0.7, 1.0, 1.6, 2.2];
    let y = [4.0, 3.0, 2.2, 1.7, 1.0, 0.6];
    let (r, j) = decay_residuals_jacobian(&m, &t, &y);
    assert_eq!(r, decay_residuals(&m, &t, &y));
    assert_eq!(j.shape(), (6, 3));
    for (i, row) in decay_closed_form(&m, &t).iter().enumerate() {
        for (k, expected) in row.iter().enumerate() {
            assert_close(j[(i, k)], *expected, 1e-14, &format!("J[{i}][{k}]"));
        }
    }
    let model = |p: &[f64]| Decay {
        amplitude: p[0],
        rates: p[1..].to_vec(),
        label: 7,
    };
    assert_jacobian!(
        |p: &[f64]| decay_residuals(&model(p), &t, &y),
        j.row_iter(),
        &[2.0, 0.5, 1.5]
    );
    // 2 residuals, 4 numbers: reverse sweeps.
    let wide = Decay {
        amplitude: 1.5,
        rates: vec![0.2, 0.9, 2.0],
        label: 0,
    };
    let (r, j) = decay_residuals_jacobian(&wide, &t[1..3], &y[1..3]);
    assert_eq!(r, decay_residuals(&wide, &t[1..3], &y[1..3]));
    assert_eq!(j.shape(), (2, 4));
    for (i, row) in decay_closed_form(&wide, &t[1..3]).iter().enumerate() {
        for (k, expected) in row.iter().enumerate() {
            assert_close(j[i][k], *expected, 1e-14, &format!("J[{i}][{k}]"));
        }
    }
}

/// Forward kinematics of a two-link arm: the links by value, the angles as an array.
#[derive(Differentiable, Debug, PartialEq)]
pub struct Links {
    pub lengths: [f64; 2],
}

#[grad(jacobian)]
fn tip(links: Links, angles: [f64; 2]) -> [f64; 2] {
    let (a, b) = (angles[0], angles[0] + angles[1]);
    [
        links.lengths[0] * a.cos() + links.lengths[1] * b.cos(),
        links.lengths[0] * a.sin() + links.lengths[1] * b.sin(),
    ]
}

#[test]
fn a_struct_by_value_beside_an_array() {
    let angles = [0.4, 0.9];
    let links = || Links {
        lengths: [1.0, 0.5],
    };
    let (value, j_links, j_angles) = tip_jacobian(links(), angles);
    assert_eq!(value, tip(links(), angles));
    assert_eq!(j_links.shape(), (2, 2));
    let (a, b) = (0.4f64, 1.3f64);
    let expected = [[a.cos(), b.cos()], [a.sin(), b.sin()]];
    for i in 0..2 {
        for k in 0..2 {
            assert_close(j_links[i][k], expected[i][k], 1e-15, "∂tip/∂lengths");
        }
    }
    assert_close(j_angles[0][0], -a.sin() - 0.5 * b.sin(), 1e-15, "∂x/∂a");
    assert_close(j_angles[0][1], -0.5 * b.sin(), 1e-15, "∂x/∂b");
    assert_close(j_angles[1][0], a.cos() + 0.5 * b.cos(), 1e-15, "∂y/∂a");
    // The whole Jacobian against differences, the struct's numbers first.
    let mut rows = Vec::new();
    for i in 0..2 {
        let mut row = j_links.row(i).to_vec();
        row.extend(j_angles[i]);
        rows.push(row);
    }
    assert_jacobian!(
        |p: &[f64]| tip(
            Links {
                lengths: [p[0], p[1]]
            },
            [p[2], p[3]]
        ),
        &rows,
        &[1.0, 0.5, 0.4, 0.9]
    );
}

#[grad]
impl Decay {
    /// The model's curve at two times, and the value at `t` reused in both.
    #[grad(jacobian)]
    fn curve(&self, t: f64) -> (f64, f64) {
        let mut s = 0.0;
        for &rate in &self.rates {
            s += (-rate * t).exp();
        }
        let at = self.amplitude * s;
        (at, at * at + t)
    }
}

#[test]
fn self_in_a_jacobian_agrees_with_the_tape() {
    let m = Decay {
        amplitude: 0.8,
        rates: vec![0.3, 1.1],
        label: 1,
    };
    let t = 0.6;
    let ((c0, c1), j_self, j_t) = m.curve_jacobian(t);
    assert_eq!((c0, c1), m.curve(t));
    let tape = Tape::new();
    let amplitude = tape.var(m.amplitude);
    let rates: Vec<Var> = m.rates.iter().map(|&k| tape.var(k)).collect();
    let tv = tape.var(t);
    let mut s = tape.var(0.0);
    for &k in &rates {
        s += (-k * tv).exp();
    }
    let at = amplitude * s;
    let outputs = [at, at * at + tv];
    let mut inputs = vec![amplitude];
    inputs.extend(&rates);
    inputs.push(tv);
    let reference = tape.jacobian(&outputs, &inputs);
    assert_eq!(j_self.shape(), (2, 3));
    for i in 0..2 {
        for k in 0..3 {
            assert_close(j_self[i][k], reference[i][k], 1e-15, "∂/∂self against Tape");
        }
        assert_close(j_t[i], reference[i][3], 1e-15, "∂/∂t against Tape");
    }
}

/// The links by value with more outputs than numbers: forward sweeps, each taking its own
/// copy of the struct and of its direction.
#[grad(jacobian)]
fn link_powers(links: Links) -> [f64; 4] {
    let (a, b) = (links.lengths[0], links.lengths[1]);
    [a * b, a * a, b.sin(), (a + b).exp()]
}

#[test]
fn a_struct_by_value_in_forward_sweeps() {
    let links = || Links {
        lengths: [0.7, -0.4],
    };
    let (value, j) = link_powers_jacobian(links());
    assert_eq!(value, link_powers(links()));
    let (a, b) = (0.7f64, -0.4f64);
    let expected = [[b, a], [2.0 * a, 0.0], [0.0, b.cos()], [(a + b).exp(); 2]];
    assert_eq!(j.shape(), (4, 2));
    for i in 0..4 {
        for k in 0..2 {
            assert_close(j[i][k], expected[i][k], 1e-15, &format!("J[{i}][{k}]"));
        }
    }
}

/// A const generic length on both sides, with a reused input: `N` outputs of `N + 1`
/// inputs, blocks `[[f64; N]; N]` and `[f64; N]`.
#[grad(jacobian)]
fn scaled_squares<const N: usize>(x: [f64; N], s: f64) -> [f64; N] {
    let mut out = [0.0; N];
    for i in 0..N {
        out[i] = x[i] * x[i] * s;
    }
    out
}

#[test]
fn const_generic_lengths_give_blocks_of_those_lengths() {
    let (x, s) = ([0.5, -1.5, 2.0], 1.25);
    let (value, j_x, j_s): ([f64; 3], [[f64; 3]; 3], [f64; 3]) = scaled_squares_jacobian(x, s);
    assert_eq!(value, scaled_squares(x, s));
    for i in 0..3 {
        for k in 0..3 {
            let expected = if i == k { 2.0 * x[i] * s } else { 0.0 };
            assert_close(j_x[i][k], expected, 1e-15, "∂/∂x");
        }
        assert_close(j_s[i], x[i] * x[i], 1e-15, "∂/∂s");
    }
    let rows: Vec<Vec<f64>> = (0..3)
        .map(|i| j_x[i].iter().copied().chain([j_s[i]]).collect())
        .collect();
    assert_jacobian!(
        |p: &[f64]| scaled_squares([p[0], p[1], p[2]], p[3]).to_vec(),
        &rows,
        &[x[0], x[1], x[2], s]
    );
}

// ----- vector forward mode's sparse tangents: each pattern against the reverse sweeps ---

/// Every way a tangent of the basis (`OneHot`) or of two of its numbers (`TwoHot`) meets
/// another: scaled, negated, added to and subtracted from its own kind and from dense
/// tangents, through an operation whose partial is infinite (`sqrt` at 0), stored in a
/// variable, a tuple and an array; a matrix read number by number, a number, and an
/// array that is assigned to (which keeps its seed).
#[grad(jacobian)]
fn sparse_patterns(m: [[f64; 3]; 2], a: f64, mut w: [f64; 2]) -> [f64; 9] {
    w[1] += w[0] * a;
    let whole = w;
    let d = m[0][1] - m[1][2];
    let two = m[0][0] * m[1][1] + a;
    let three = m[0][0] + m[0][1] * 2.0 - m[1][0];
    let (p, q) = (-m[1][1] * a, m[0][2] - two);
    let mut acc = 0.0;
    for k in 0..3 {
        acc += m[1][k] * whole[k % 2];
    }
    [
        d * d,
        two - (m[0][2] + m[1][0]),
        three,
        p + q,
        (m[0][0] * m[0][0] + 1.0).sqrt() + m[1][1].sqrt(),
        acc - m[0][1],
        -(two - d),
        (m[1][0] - m[1][0]) * whole[1], // a `OneHot` minus itself: zero
        m[0][2] * a * w[0],
    ]
}

/// `sparse_patterns`'s Jacobian by its reverse sweeps, one per output.
fn sparse_patterns_rows(m: [[f64; 3]; 2], a: f64, w: [f64; 2]) -> Vec<Vec<f64>> {
    (0..9)
        .map(|row| {
            let mut seed = [0.0; 9];
            seed[row] = 1.0;
            let (mut d_m, mut d_a, mut d_w) = ([[0.0; 3]; 2], 0.0, [0.0; 2]);
            let _ = sparse_patterns_vjp(m, a, w, seed, &mut d_m, &mut d_a, &mut d_w);
            let mut out = d_m.concat();
            out.push(d_a);
            out.extend(d_w);
            out
        })
        .collect()
}

#[test]
fn sparse_tangents_agree_with_the_reverse_sweeps() {
    let (a, w) = (1.9, [0.8, -2.4]);
    // 9 inputs, 9 outputs: one pass of vector forward mode.
    let m = [[0.7, -1.3, 0.4], [2.1, 0.5, -0.6]];
    let (value, j_m, j_a, j_w) = sparse_patterns_jacobian(m, a, w);
    assert_eq!(value, sparse_patterns(m, a, w));
    let rows: Vec<Vec<f64>> = (0..9)
        .map(|i| {
            let mut row = j_m[i].to_vec();
            row.push(j_a[i]);
            row.extend(j_w[i]);
            row
        })
        .collect();
    let reverse = sparse_patterns_rows(m, a, w);
    for (forward, reverse) in rows.iter().zip(&reverse) {
        for (&f, &r) in forward.iter().zip(reverse) {
            assert_close(f, r, 1e-15, "forward against reverse");
        }
    }
    let point = [
        m[0][0], m[0][1], m[0][2], m[1][0], m[1][1], m[1][2], a, w[0], w[1],
    ];
    assert_jacobian!(
        |p: &[f64]| sparse_patterns([[p[0], p[1], p[2]], [p[3], p[4], p[5]]], p[6], [p[7], p[8]]),
        &rows,
        &point
    );

    // At `m₁₁ = 0`, `√m₁₁` has an infinite partial. Its lane is infinite; the other
    // lanes hold structural zeros, which never meet it, so every other entry is finite
    // (the reverse sweeps give `0·∞ = NaN` where another row meets it).
    let m = [[0.7, -1.3, 0.4], [2.1, 0.0, -0.6]];
    let (_, j_m, _, _) = sparse_patterns_jacobian(m, a, w);
    let reverse = sparse_patterns_rows(m, a, w);
    for row in 0..9 {
        for column in 0..6 {
            let forward = j_m[row][column];
            if (row, column) == (4, 4) {
                assert_eq!(forward, f64::INFINITY);
            } else {
                assert!(forward.is_finite(), "J[{row}][{column}] = {forward}");
                if reverse[row][column].is_finite() {
                    assert_close(forward, reverse[row][column], 1e-15, "at the kink");
                }
            }
        }
    }
}

/// A tuple output and a `Vec` output, their tangents stored from sparse ones.
#[grad(jacobian)]
fn sparse_outputs(x: [f64; 3]) -> (f64, f64) {
    (x[0] * 3.0, x[1] - x[2])
}

#[grad(jacobian)]
fn sparse_pushes(x: [f64; 3]) -> Vec<f64> {
    let mut out = Vec::new();
    for k in 0..3 {
        out.push(x[k] * x[(k + 1) % 3]);
    }
    out.push(-x[2]);
    out
}

#[test]
fn sparse_tangents_reach_tuple_and_vector_outputs() {
    let x = [0.5, -1.5, 2.5];
    let (value, j) = sparse_outputs_jacobian(x);
    assert_eq!(value, sparse_outputs(x));
    assert_eq!(j, [[3.0, 0.0, 0.0], [0.0, 1.0, -1.0]]);
    let (value, j) = sparse_pushes_jacobian(x);
    assert_eq!(value, sparse_pushes(x));
    let expected = [
        [x[1], x[0], 0.0],
        [0.0, x[2], x[1]],
        [x[2], 0.0, x[0]],
        [0.0, 0.0, -1.0],
    ];
    assert_eq!(j, expected);
}
