//! Second order: `#[grad(hvp)]` gives `f_hvp(p…, v_p…) -> (value, ∂f/∂p…, (H·v)_p…)` and
//! `#[grad(hessian)]` gives `f_hessian(p…) -> (value, ∂f/∂p…, H)`. Checked against closed
//! forms (sympy, `tests/reference/hessians.py`), against central differences of `_grad`,
//! against each other (`H·v` from the Hessian), for symmetry, and at the points where
//! other AD tools have returned wrong second derivatives: `x.powi(2)` and `x.powf(2.0)` at
//! exactly 0, and the mixed partials of `hypot`.
#![allow(clippy::needless_range_loop)] // the loops are written the way users write them

use autodiff::prelude::*;

mod common;
use common::assert_close;

/// The Hessian of a function of `n` numbers by central differences of its gradient.
fn fd_hessian(gradient: impl Fn(&[f64]) -> Vec<f64>, x: &[f64]) -> Vec<Vec<f64>> {
    (0..x.len())
        .map(|i| {
            let h = 1e-5 * x[i].abs().max(1.0);
            let (mut up, mut down) = (x.to_vec(), x.to_vec());
            up[i] += h;
            down[i] -= h;
            let (gu, gd) = (gradient(&up), gradient(&down));
            gu.iter()
                .zip(&gd)
                .map(|(u, d)| (u - d) / (2.0 * h))
                .collect()
        })
        .collect()
}

#[track_caller]
fn assert_matrix(actual: &[Vec<f64>], expected: &[Vec<f64>], tolerance: f64, what: &str) {
    for (i, (a, e)) in actual.iter().zip(expected).enumerate() {
        for (j, (a, e)) in a.iter().zip(e).enumerate() {
            assert_close(*a, *e, tolerance, &format!("{what}[{i}][{j}]"));
        }
    }
}

fn rows<const N: usize>(h: [[f64; N]; N]) -> Vec<Vec<f64>> {
    h.iter().map(|r| r.to_vec()).collect()
}

// ----- closed forms ---------------------------------------------------------------------

#[grad(hvp, hessian)]
fn mixed(x: f64, y: f64, z: f64) -> f64 {
    let s = x * y;
    s.tanh() + x.powi(3) * y + z.exp() * (x * z).sin() / (1.0 + y * y)
}

#[grad(hessian)]
fn hypot_scaled(x: f64, y: f64, z: f64) -> f64 {
    x.hypot(y) * z
}

#[grad(hessian)]
fn logs(x: f64, y: f64) -> f64 {
    x.ln() * y.atan2(x) + (x * y).sqrt() + (1.0 + x).log(2.0 + y)
}

#[test]
fn hessians_match_closed_forms() {
    // From tests/reference/hessians.py.
    let (value, dx, dy, dz, h) = mixed_hessian(0.3, 0.7, -0.4);
    assert_eq!(value.to_bits(), mixed(0.3, 0.7, -0.4).to_bits());
    let (_, gx, gy, gz) = mixed_grad(0.3, 0.7, -0.4);
    assert_eq!([dx, dy, dz], [gx, gy, gz]);
    let expected = [
        [
            1.074_477_924_472_204_7,
            1.311_828_615_683_855_2,
            0.261_523_663_904_680_57,
        ],
        [
            1.311_828_615_683_855_2,
            -0.05846107082839684,
            -0.07529665942279602,
        ],
        [
            0.261_523_663_904_680_57,
            -0.07529665942279602,
            0.218_977_396_174_653_84,
        ],
    ];
    assert_matrix(&rows(h), &rows(expected), 1e-13, "mixed");

    // hypot's mixed partials: ∂²/∂x∂y (z·√(x²+y²)) = -z·x·y / r³.
    let (_, _, _, _, h) = hypot_scaled_hessian(0.6, -0.8, 1.5);
    let expected = [[0.96, 0.72, 0.6], [0.72, 0.54, -0.8], [0.6, -0.8, 0.0]];
    assert_matrix(&rows(h), &rows(expected), 1e-13, "hypot");

    let (_, _, _, h) = logs_hessian(0.8, 1.7);
    let expected = [
        [-3.711_237_531_173_899_6, 0.369_649_361_436_289_07],
        [0.369_649_361_436_289_07, 0.011_253_378_850_568_11],
    ];
    assert_matrix(&rows(h), &rows(expected), 1e-12, "logs");
}

// ----- where other tools have been wrong ------------------------------------------------

#[grad(hessian)]
fn squares_at_zero(x: f64, y: f64) -> f64 {
    x.powi(2) + y.powf(2.0) + x * y
}

/// `powi(0)` of a value that is 0 (found by the random programs: its partial `0·x⁻¹` was
/// NaN in the tangent function), with the exponent written and known at run time.
#[grad(hessian)]
fn zeroth_powers(x: f64, y: f64, n: i32) -> f64 {
    (x * 0.0).powi(0) * y + (y * 0.0).powi(n) * x + x.powi(n + 2)
}

#[test]
fn zeroth_powers_of_zero_have_a_finite_hessian() {
    for n in [0, 1, 2] {
        let (value, dx, dy, h) = zeroth_powers_hessian(1.5, 0.5, n);
        assert_eq!(value.to_bits(), zeroth_powers(1.5, 0.5, n).to_bits());
        assert_eq!((dx, dy), {
            let (_, dx, dy) = zeroth_powers_grad(1.5, 0.5, n);
            (dx, dy)
        });
        // ∂²/∂x² of x^(n+2) is (n+2)(n+1)x^n; (0·y)^n·x and 0⁰·y add nothing to it.
        let xx = f64::from((n + 2) * (n + 1)) * 1.5f64.powi(n);
        assert_close(h[0][0], xx, 1e-14, "xx");
        assert!(
            h.iter().flatten().all(|v| v.is_finite()),
            "{h:?} for n = {n}"
        );
    }
}

#[test]
fn squares_at_exactly_zero_have_a_finite_hessian() {
    // ∂²(x²)/∂x² = 2 at x = 0 (not NaN from 0·x⁻¹), the same for y.powf(2.0).
    let (_, dx, dy, h) = squares_at_zero_hessian(0.0, 0.0);
    assert_eq!((dx, dy), (0.0, 0.0));
    assert_eq!(h, [[2.0, 1.0], [1.0, 2.0]]);
}

// ----- through calls to other annotated functions ---------------------------------------

/// Called below; `hvp` gives it the pullback of its tangent function that the callers'
/// second order calls.
#[grad(hvp)]
fn inner(a: f64, b: f64) -> f64 {
    (a * b).sin() + a.exp() * b
}

#[grad(hvp, hessian)]
fn outer(x: f64, y: f64) -> f64 {
    let u = inner(x * y, x) + y;
    let mut acc = 0.0;
    for k in 0..3 {
        acc += inner(u, k as f64).tanh();
    }
    acc * inner(2.0, y)
}

#[test]
fn a_hessian_through_calls_to_another_annotated_function() {
    let point = [0.4, -0.7];
    let (value, dx, dy, h) = outer_hessian(point[0], point[1]);
    assert_eq!(value.to_bits(), outer(point[0], point[1]).to_bits());
    let (_, gx, gy) = outer_grad(point[0], point[1]);
    assert_close(dx, gx, 1e-14, "dx");
    assert_close(dy, gy, 1e-14, "dy");
    let fd = fd_hessian(
        |p| {
            let (_, gx, gy) = outer_grad(p[0], p[1]);
            vec![gx, gy]
        },
        &point,
    );
    assert_matrix(&rows(h), &fd, 1e-7, "through calls");
    // The callee's own second order, by the same route.
    let (_, _, _, ha, hb) = inner_hvp(0.3, 1.1, 1.0, 0.0);
    let (a, b) = (0.3f64, 1.1f64);
    assert_close(ha, -b * b * (a * b).sin() + a.exp() * b, 1e-14, "∂²/∂a²");
    assert_close(
        hb,
        (a * b).cos() - a * b * (a * b).sin() + a.exp(),
        1e-14,
        "∂²/∂a∂b",
    );
}

// ----- loops, branches, arrays, slices --------------------------------------------------

/// A 2 × 2 array parameter beside a number: the Hessian's size is `1 + 2·2` (it was
/// written without its product, which did not compile).
#[grad(hessian)]
fn determinant_squared(m: [[f64; 2]; 2], s: f64) -> f64 {
    let det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    s * det * det
}

#[test]
fn a_hessian_of_a_two_dimensional_array() {
    let (m, s) = ([[1.5, -0.5], [0.25, 2.0]], 0.7);
    let (value, d_m, d_s, h) = determinant_squared_hessian(m, s);
    assert_eq!(value, determinant_squared(m, s));
    let (_, g_m, g_s) = determinant_squared_grad(m, s);
    assert_eq!((d_m, d_s), (g_m, g_s));
    let gradient = |p: &[f64]| {
        let (_, d_m, d_s) = determinant_squared_grad([[p[0], p[1]], [p[2], p[3]]], p[4]);
        vec![d_m[0][0], d_m[0][1], d_m[1][0], d_m[1][1], d_s]
    };
    let at = [m[0][0], m[0][1], m[1][0], m[1][1], s];
    assert_matrix(&rows(h), &fd_hessian(gradient, &at), 1e-6, "determinant²");
}

#[grad(hvp, hessian)]
fn rosenbrock(x: [f64; 4]) -> f64 {
    let mut total = 0.0;
    for i in 0..3 {
        total += 100.0 * (x[i + 1] - x[i] * x[i]).powi(2) + (1.0 - x[i]).powi(2);
    }
    total
}

#[test]
fn rosenbrock_in_four_dimensions() {
    let x = [-1.2, 1.0, 0.5, 0.8];
    let (value, g, h) = rosenbrock_hessian(x);
    assert_eq!(value, rosenbrock(x));
    assert_eq!(g, rosenbrock_grad(x).1);
    // The closed form: tridiagonal.
    let mut expected = [[0.0; 4]; 4];
    for i in 0..3 {
        expected[i][i] += 1200.0 * x[i] * x[i] - 400.0 * x[i + 1] + 2.0;
        expected[i + 1][i + 1] += 200.0;
        expected[i][i + 1] -= 400.0 * x[i];
        expected[i + 1][i] -= 400.0 * x[i];
    }
    assert_matrix(&rows(h), &rows(expected), 1e-12, "rosenbrock");
    assert_hessian!(|x: &[f64; 4]| rosenbrock_grad(*x).1, &h, &x);
    // H·v by the product and by the Hessian.
    let v = [0.3, -1.0, 0.25, 2.0];
    let (hv_value, hv_g, hv) = rosenbrock_hvp(x, v);
    assert_eq!((hv_value, hv_g), (value, g));
    for i in 0..4 {
        let expected: f64 = (0..4).map(|j| h[i][j] * v[j]).sum();
        assert_close(hv[i], expected, 1e-12, "H·v");
    }
}

#[grad(hvp)]
fn loss(w: &[f64], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, &y) in xs.iter().zip(ys) {
        let z = (w[0] * x[0] + w[1] * x[1] + w[2]).tanh();
        if z > y {
            total += (z - y).powi(2);
        } else {
            total += 0.5 * (y - z).abs().sqrt();
        }
    }
    let mut k = 0;
    while k < w.len() {
        total += 0.01 * w[k] * w[k];
        k += 1;
    }
    total
}

#[test]
fn slices_loops_and_branches_against_differences_of_the_gradient() {
    let xs = [[1.0, 2.0], [0.5, -1.0], [-0.3, 0.8], [1.5, 0.2]];
    let ys = [0.3, -0.2, 0.5, 0.9];
    let w = [0.2, -0.4, 0.1];
    let gradient = |p: &[f64]| -> Vec<f64> {
        let (_, dw, dxs, dys) = loss_grad(p, &xs, &ys);
        let mut g = dw;
        g.extend(dxs.iter().flatten());
        g.extend(dys);
        g
    };
    let mut point = w.to_vec();
    point.extend(xs.iter().flatten());
    point.extend(ys);
    let everything = |p: &[f64]| {
        let rows: Vec<[f64; 2]> = p[3..11].chunks(2).map(|c| [c[0], c[1]]).collect();
        gradient_of_all(&p[..3], &rows, &p[11..])
    };
    let h = fd_hessian(everything, &point);
    for k in 0..point.len() {
        let mut v = vec![0.0; point.len()];
        v[k] = 1.0;
        let rows_v: Vec<[f64; 2]> = v[3..11].chunks(2).map(|c| [c[0], c[1]]).collect();
        let (value, dw, dxs, dys, hw, hxs, hys) =
            loss_hvp(&w, &xs, &ys, &v[..3], &rows_v, &v[11..]);
        assert_eq!(value.to_bits(), loss(&w, &xs, &ys).to_bits());
        let mut g = dw;
        g.extend(dxs.iter().flatten());
        g.extend(dys);
        assert_eq!(g, gradient(&point[..3]));
        let mut column = hw;
        column.extend(hxs.iter().flatten());
        column.extend(hys);
        for i in 0..point.len() {
            assert_close(column[i], h[i][k], 1e-6, &format!("(H·e{k})[{i}]"));
        }
    }
}

/// The gradient of `loss` in all its parameters, flattened.
fn gradient_of_all(w: &[f64], xs: &[[f64; 2]], ys: &[f64]) -> Vec<f64> {
    let (_, dw, dxs, dys) = loss_grad(w, xs, ys);
    let mut g = dw;
    g.extend(dxs.iter().flatten());
    g.extend(dys);
    g
}

#[grad(hvp, hessian, wrt(a))]
fn weighted(a: [f64; 2], scale: f64, n: usize, on: bool) -> f64 {
    let mut acc = 0.0;
    for i in 0..n {
        let term = if on {
            (a[i % 2] * scale).sin()
        } else {
            a[i % 2].exp()
        };
        acc += term * a[(i + 1) % 2];
    }
    acc
}

#[test]
fn wrt_integers_and_flags() {
    for on in [true, false] {
        let a = [0.4, -0.9];
        let (value, da, h) = weighted_hessian(a, 1.3, 5, on);
        assert_eq!(value.to_bits(), weighted(a, 1.3, 5, on).to_bits());
        assert_eq!(da, weighted_grad(a, 1.3, 5, on).1);
        let fd = fd_hessian(|p| weighted_grad([p[0], p[1]], 1.3, 5, on).1.to_vec(), &a);
        assert_matrix(&rows(h), &fd, 1e-6, "weighted");
        assert_eq!(h[0][1], h[1][0], "symmetric by construction");
    }
}

/// A model kept in a struct, as users keep one.
#[derive(Differentiable, Clone, Debug)]
pub struct Spring {
    pub k: f64,
    pub rest: [f64; 2],
    pub steps: usize,
}

#[grad]
impl Spring {
    #[grad(hvp)]
    fn energy(&self, x: f64) -> f64 {
        let mut e = 0.0;
        for i in 0..self.steps {
            let stretch = x * (i as f64 + 1.0) - self.rest[i % 2];
            e += 0.5 * self.k * stretch * stretch * stretch.tanh();
        }
        e
    }
}

/// A free function taking the struct by reference.
#[grad(hvp)]
fn stored(m: &Spring, x: f64) -> f64 {
    (m.k * x).sin() * m.rest[0] + m.rest[1] * x * x
}

#[test]
fn struct_parameters_and_methods() {
    let s = Spring {
        k: 3.0,
        rest: [0.2, -0.4],
        steps: 3,
    };
    let x = 0.7;
    let at = |p: &[f64]| Spring {
        k: p[0],
        rest: [p[1], p[2]],
        steps: 3,
    };
    let gradient = |p: &[f64]| {
        let (_, ds, dx) = at(p).energy_grad(p[3]);
        vec![ds.k, ds.rest[0], ds.rest[1], dx]
    };
    let point = [s.k, s.rest[0], s.rest[1], x];
    let h = fd_hessian(gradient, &point);
    for k in 0..4 {
        let mut v = [0.0; 4];
        v[k] = 1.0;
        let (value, ds, dx, hs, hx) = s.energy_hvp(x, &at(&v[..3]), v[3]);
        assert_eq!(value.to_bits(), s.energy(x).to_bits());
        assert_eq!([ds.k, ds.rest[0], ds.rest[1], dx], gradient(&point)[..]);
        let column = [hs.k, hs.rest[0], hs.rest[1], hx];
        for i in 0..4 {
            assert_close(column[i], h[i][k], 1e-6, &format!("(H·e{k})[{i}]"));
        }
    }
    // ∂²/∂k∂x of sin(k·x)·r₀ + r₁·x² is r₀·(cos(kx) − kx·sin(kx)).
    let (_, _, _, hs, hx) = stored_hvp(&s, x, &at(&[0.0; 3]), 1.0);
    let kx = s.k * x;
    assert_close(
        hs.k,
        s.rest[0] * (kx.cos() - kx * kx.sin()),
        1e-14,
        "∂²/∂k∂x",
    );
    assert_close(hs.rest[0], s.k * kx.cos(), 1e-14, "∂²/∂r₀∂x");
    assert_close(hs.rest[1], 2.0 * x, 1e-14, "∂²/∂r₁∂x");
    let xx = -s.k * s.k * kx.sin() * s.rest[0] + 2.0 * s.rest[1];
    assert_close(hx, xx, 1e-14, "∂²/∂x²");
}

#[grad(hvp)]
fn single(x: f32, y: f32) -> f32 {
    (x * y).tanh() + x * x * y
}

#[test]
fn f32_products() {
    let (_, _, _, hx, hy) = single_hvp(0.5, -0.25, 1.0, 0.0);
    // ∂²/∂x² = y²·tanh''(xy) + 2y, ∂²/∂x∂y = tanh'(xy) + xy·tanh''(xy) + 2x.
    let (x, y) = (0.5f64, -0.25f64);
    let t = (x * y).tanh();
    let second = -2.0 * t * (1.0 - t * t);
    assert_close(f64::from(hx), y * y * second + 2.0 * y, 1e-5, "f32 hxx");
    assert_close(
        f64::from(hy),
        (1.0 - t * t) + x * y * second + 2.0 * x,
        1e-5,
        "f32 hxy",
    );
}

// ----- against the Tape engine's second order -------------------------------------------

/// `mixed`, `logs` and `loss` recorded on a `Tape`: the macro's Hessians and products
/// against the tape's forward-over-reverse sweep, an engine that shares only the
/// first-order rules with the generated code.
#[test]
fn hessians_and_products_agree_with_the_tape() {
    let tape = Tape::new();
    let p = [0.7, -1.1, 0.4];
    let v: Vec<Var> = p.iter().map(|&x| tape.var(x)).collect();
    let (x, y, z) = (v[0], v[1], v[2]);
    let s = x * y;
    let f = s.tanh() + x.powi(3) * y + z.exp() * (x * z).sin() / (1.0 + y * y);
    let (value, _, _, _, h) = mixed_hessian(p[0], p[1], p[2]);
    assert_eq!(value, f.value());
    assert_matrix(&rows(h), &tape.hessian(f, &v), 1e-13, "mixed");

    let tape = Tape::new();
    let p = [1.3, 0.6];
    let v: Vec<Var> = p.iter().map(|&x| tape.var(x)).collect();
    let (x, y) = (v[0], v[1]);
    let f = x.ln() * y.atan2(x) + (x * y).sqrt() + (1.0 + x).log(2.0 + y);
    assert_matrix(
        &rows(logs_hessian(p[0], p[1]).3),
        &tape.hessian(f, &v),
        1e-13,
        "logs",
    );

    // Slices, a loop, a branch and a `while`, along a direction in every parameter.
    let xs = [[1.0, 2.0], [0.5, -1.0], [-0.3, 0.8], [1.5, 0.2]];
    let ys = [0.3, -0.2, 0.5, 0.9];
    let w = [0.2, -0.4, 0.1];
    let tape = Tape::new();
    let wv: Vec<Var> = w.iter().map(|&x| tape.var(x)).collect();
    let xv: Vec<[Var; 2]> = xs.iter().map(|r| r.map(|x| tape.var(x))).collect();
    let yv: Vec<Var> = ys.iter().map(|&x| tape.var(x)).collect();
    let mut total = tape.var(0.0);
    for (x, &y) in xv.iter().zip(&yv) {
        let z = (wv[0] * x[0] + wv[1] * x[1] + wv[2]).tanh();
        if z.value() > y.value() {
            total += (z - y).powi(2);
        } else {
            total += 0.5 * (y - z).abs().sqrt();
        }
    }
    for &wk in &wv {
        total += 0.01 * wk * wk;
    }
    let inputs: Vec<Var> = wv
        .iter()
        .chain(xv.iter().flatten())
        .chain(&yv)
        .copied()
        .collect();
    let direction: Vec<f64> = (0..inputs.len()).map(|i| (i as f64 * 0.7).sin()).collect();
    let rows_v: Vec<[f64; 2]> = direction[3..11].chunks(2).map(|c| [c[0], c[1]]).collect();
    let (value, dw, dxs, dys, hw, hxs, hys) =
        loss_hvp(&w, &xs, &ys, &direction[..3], &rows_v, &direction[11..]);
    let (tape_gradient, tape_product) = tape.hvp(total, &inputs, &direction);
    assert_close(value, total.value(), 1e-15, "value");
    let gradient: Vec<f64> = dw
        .into_iter()
        .chain(dxs.into_iter().flatten())
        .chain(dys)
        .collect();
    let product: Vec<f64> = hw
        .into_iter()
        .chain(hxs.into_iter().flatten())
        .chain(hys)
        .collect();
    for i in 0..inputs.len() {
        assert_close(gradient[i], tape_gradient[i], 1e-13, &format!("∂[{i}]"));
        assert_close(product[i], tape_product[i], 1e-13, &format!("(H·v)[{i}]"));
    }
}

// ----- Hessians of run-time size: slices, structs and `self` ----------------------------

/// A logistic regression's loss in its weights (a slice) and its bias.
#[grad(hessian, wrt(w, b))]
fn logistic(w: &[f64], b: f64, xs: &[[f64; 3]], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, &y) in xs.iter().zip(ys) {
        let mut z = b;
        for k in 0..3 {
            z += w[k] * x[k];
        }
        total += (1.0 + (-y * z).exp()).ln();
    }
    total
}

#[test]
fn a_slice_hessian_is_a_matrix_matching_its_closed_form() {
    let xs = [
        [1.0, 0.5, -0.2],
        [0.3, -1.0, 0.8],
        [-0.6, 0.2, 1.5],
        [0.9, 0.9, -0.4],
    ];
    let ys = [1.0, -1.0, 1.0, -1.0];
    let (w, b) = ([0.2, -0.3, 0.5], 0.1);
    let (value, dw, db, h) = logistic_hessian(&w, b, &xs, &ys);
    assert_eq!(value, logistic(&w, b, &xs, &ys));
    assert_eq!((dw.clone(), db), {
        let (_, dw, db) = logistic_grad(&w, b, &xs, &ys);
        (dw, db)
    });
    assert_eq!(h.shape(), (4, 4));
    // H = Σ σ(z)(1-σ(z)) · x̃ x̃ᵀ with x̃ = (x, 1) (y² = 1).
    let mut expected = [[0.0; 4]; 4];
    for x in &xs {
        let xt = [x[0], x[1], x[2], 1.0];
        let z = b + (0..3).map(|k| w[k] * x[k]).sum::<f64>();
        let s = 1.0 / (1.0 + (-z).exp());
        for i in 0..4 {
            for j in 0..4 {
                expected[i][j] += s * (1.0 - s) * xt[i] * xt[j];
            }
        }
    }
    assert_matrix(
        &h.row_iter().map(<[f64]>::to_vec).collect::<Vec<_>>(),
        &rows(expected),
        1e-14,
        "logistic",
    );
    let gradient = |p: &[f64]| {
        let (_, dw, db) = logistic_grad(&p[..3], p[3], &xs, &ys);
        let mut g = dw;
        g.push(db);
        g
    };
    assert_hessian!(gradient, h.row_iter(), &[w[0], w[1], w[2], b][..]);
}

#[derive(Differentiable, Debug)]
pub struct Pendulum {
    pub length: f64,
    pub masses: Vec<f64>,
    #[differentiable(skip)]
    pub gravity: f64,
}

#[grad]
impl Pendulum {
    /// The energy of masses on a string at angle `theta`: the struct's numbers and the
    /// angle in one Hessian.
    #[grad(hessian)]
    fn energy(&self, theta: f64) -> f64 {
        let mut total = 0.0;
        for (k, m) in self.masses.iter().enumerate() {
            let r = self.length * (k as f64 + 1.0);
            total += m * self.gravity * r * (1.0 - theta.cos()) + 0.5 * m * r * r * theta * theta;
        }
        total
    }
}

#[grad(hessian)]
fn spring_energy(p: Pendulum, stretch: [f64; 2]) -> f64 {
    let k = p.masses[0] * p.length;
    0.5 * k * (stretch[0] * stretch[0] + stretch[1] * stretch[1]).powf(1.5)
}

#[test]
fn struct_and_self_hessians_agree_with_the_tape() {
    let p = Pendulum {
        length: 0.7,
        masses: vec![1.5, 0.4, 2.0],
        gravity: 9.81,
    };
    let theta = 0.3;
    let (value, d_self, d_theta, h) = p.energy_hessian(theta);
    assert_eq!(value, p.energy(theta));
    let (_, g_self, g_theta) = p.energy_grad(theta);
    assert_eq!(
        (d_self.to_flat_vec(), d_theta),
        (g_self.to_flat_vec(), g_theta)
    );
    let tape = Tape::new();
    let length = tape.var(p.length);
    let masses: Vec<Var> = p.masses.iter().map(|&m| tape.var(m)).collect();
    let th = tape.var(theta);
    let mut total = tape.var(0.0);
    for (k, &m) in masses.iter().enumerate() {
        let r = length * (k as f64 + 1.0);
        total += m * p.gravity * r * (1.0 - th.cos()) + 0.5 * m * r * r * th * th;
    }
    let mut inputs = vec![length];
    inputs.extend(&masses);
    inputs.push(th);
    let reference = tape.hessian(total, &inputs);
    assert_eq!(h.shape(), (5, 5));
    assert_matrix(
        &h.row_iter().map(<[f64]>::to_vec).collect::<Vec<_>>(),
        &reference,
        1e-13,
        "energy against Tape",
    );

    // A struct by value beside an array.
    let make = || Pendulum {
        length: 0.7,
        masses: vec![1.5],
        gravity: 9.81,
    };
    let stretch = [0.3, -0.4];
    let (value, _, _, h) = spring_energy_hessian(make(), stretch);
    assert_eq!(value, spring_energy(make(), stretch));
    let gradient = |x: &[f64; 4]| {
        let p = Pendulum {
            length: x[0],
            masses: vec![x[1]],
            gravity: 9.81,
        };
        let (_, dp, ds) = spring_energy_grad(p, [x[2], x[3]]);
        [dp.length, dp.masses[0], ds[0], ds[1]]
    };
    assert_hessian!(gradient, h.row_iter(), &[0.7, 1.5, 0.3, -0.4]);
}

// ----- second order through calls that pass arrays and slices whole -----------------------

#[grad(hvp)]
fn weighted_dot(u: &[f64; 2], v: &[f64; 2]) -> f64 {
    u[0] * v[0] + u[1] * v[1] * u[1]
}

#[grad(hvp)]
fn norm_squared(xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for x in xs {
        total += x * x * x;
    }
    total
}

/// A local array and a parameter passed whole, and a differentiated slice.
#[grad(hvp, hessian)]
fn through_whole_calls(w: [f64; 2], x: f64) -> f64 {
    let v = [x, x * x];
    weighted_dot(&w, &v) + x.sin()
}

/// Data passed whole (left out of `wrt(..)`): its tangent is zero.
#[grad(hvp, hessian, wrt(w))]
fn with_data(w: [f64; 2], x: [f64; 2]) -> f64 {
    weighted_dot(&w, &x).powi(2)
}

#[grad(hvp)]
fn slice_through(xs: &[f64], a: f64) -> f64 {
    a * norm_squared(xs)
}

#[test]
fn hessians_through_calls_that_pass_arrays_whole() {
    let (w, x) = ([1.0, 2.0], 0.5);
    let (value, _, _, h) = through_whole_calls_hessian(w, x);
    assert_eq!(value, through_whole_calls(w, x));
    // f = w0·x + w1²·x² + sin x.
    let expected = [
        [0.0, 0.0, 1.0],
        [0.0, 2.0 * x * x, 4.0 * w[1] * x],
        [1.0, 4.0 * w[1] * x, 2.0 * w[1] * w[1] - x.sin()],
    ];
    assert_matrix(&rows(h), &rows(expected), 1e-14, "through_whole_calls");
    assert_hessian!(
        |p: &[f64; 3]| {
            let (_, dw, dx) = through_whole_calls_grad([p[0], p[1]], p[2]);
            [dw[0], dw[1], dx]
        },
        &h,
        &[w[0], w[1], x]
    );

    let data = [0.5, -1.0];
    let (value, gradient, h) = with_data_hessian(w, data);
    assert_eq!((value, gradient), {
        let (v, g) = with_data_grad(w, data);
        (v, g)
    });
    // f = (0.5·w0 − w1²)².
    let inner = 0.5 * w[0] - w[1] * w[1];
    let expected = [
        [0.5, -2.0 * w[1]],
        [-2.0 * w[1], 8.0 * w[1] * w[1] - 4.0 * inner],
    ];
    assert_matrix(&rows(h), &rows(expected), 1e-14, "with_data");

    // A differentiated slice passed whole: H·v against the Tape.
    let xs = [0.5, -1.5, 2.0];
    let direction = [1.0, 0.5, -0.25];
    let (value, d_xs, d_a, h_xs, h_a) = slice_through_hvp(&xs, 0.7, &direction, 0.3);
    assert_eq!(value, slice_through(&xs, 0.7));
    let tape = Tape::new();
    let vars: Vec<Var> = xs.iter().map(|&x| tape.var(x)).collect();
    let a = tape.var(0.7);
    let mut total = tape.var(0.0);
    for &x in &vars {
        total += x * x * x;
    }
    let f = a * total;
    let mut inputs = vars.clone();
    inputs.push(a);
    let mut along = direction.to_vec();
    along.push(0.3);
    let (gradient, product) = tape.hvp(f, &inputs, &along);
    for i in 0..3 {
        assert_close(d_xs[i], gradient[i], 1e-14, "∂/∂xs");
        assert_close(h_xs[i], product[i], 1e-14, "(H·v) in xs");
    }
    assert_close(d_a, gradient[3], 1e-14, "∂/∂a");
    assert_close(h_a, product[3], 1e-14, "(H·v) in a");
}

#[derive(Differentiable, Debug, PartialEq)]
pub struct Anchor {
    pub k: f64,
    pub rest: [f64; 2],
}

#[grad(hvp)]
fn anchor_energy(s: &Anchor, x: [f64; 2]) -> f64 {
    0.5 * s.k * ((x[0] - s.rest[0]).powi(2) + (x[1] - s.rest[1]).powi(2))
}

/// A struct and an array passed whole.
#[grad(hessian)]
fn anchored_work(s: &Anchor, x: [f64; 2]) -> f64 {
    anchor_energy(s, x) * x[0]
}

#[test]
fn a_hessian_through_a_call_that_passes_a_struct_whole() {
    let s = Anchor {
        k: 2.0,
        rest: [0.5, 1.0],
    };
    let x = [1.0, 2.0];
    let (value, _, _, h) = anchored_work_hessian(&s, x);
    assert_eq!(value, anchored_work(&s, x));
    assert_eq!(h.shape(), (5, 5));
    let gradient = |p: &[f64; 5]| {
        let s = Anchor {
            k: p[0],
            rest: [p[1], p[2]],
        };
        let (_, ds, dx) = anchored_work_grad(&s, [p[3], p[4]]);
        [ds.k, ds.rest[0], ds.rest[1], dx[0], dx[1]]
    };
    assert_hessian!(gradient, h.row_iter(), &[2.0, 0.5, 1.0, 1.0, 2.0]);
}

#[grad(hvp)]
fn weighted_rows(w: &[f64], xs: &[f64]) -> f64 {
    w[0] * xs[0] + w[1] * xs[1] * w[1]
}

/// Data slices passed whole, left out of `wrt(..)`: their tangent is a zero vector.
#[grad(hvp, hessian, wrt(w))]
fn data_loss(w: &[f64], xs: &[f64]) -> f64 {
    weighted_rows(w, xs).powi(2)
}

#[test]
fn a_hessian_through_a_call_that_passes_data_slices_whole() {
    let (w, xs) = ([1.0, 2.0], [0.5, -1.0]);
    let (value, gradient, h) = data_loss_hessian(&w, &xs);
    assert_eq!(value, data_loss(&w, &xs));
    assert_eq!(gradient, data_loss_grad(&w, &xs).1);
    let inner = 0.5 * w[0] - w[1] * w[1];
    let expected = [
        [0.5, -2.0 * w[1]],
        [-2.0 * w[1], 8.0 * w[1] * w[1] - 4.0 * inner],
    ];
    for i in 0..2 {
        for j in 0..2 {
            assert_close(h[(i, j)], expected[i][j], 1e-14, "H");
        }
    }
}

// ----- second order through calls of several outputs and methods --------------------------
// A callee that returns a tuple or an array takes `hvp` or `hessian` too; it gets no
// `_hvp` of its own, but the hidden tangent function its callers' second order calls.

/// Residuals of a two-parameter exponential model at one point: an array output.
#[grad(hessian)]
fn residual_pair(p: [f64; 2], t: f64) -> [f64; 2] {
    let e = (p[1] * t).exp();
    [p[0] * e - 1.0, p[0] * p[1] - t]
}

/// The sum of squares of the residuals over a few points (a Gauss–Newton loss), each
/// residual used twice.
#[grad(hessian)]
fn squares(p: [f64; 2]) -> f64 {
    let mut total = 0.0;
    for k in 0..3 {
        let r: [f64; 2] = residual_pair(p, 0.5 * k as f64);
        total += r[0] * r[0] + r[1] * r[1];
    }
    total
}

/// A tuple output whose parts share a value.
#[grad(hvp)]
fn polar(r: f64, theta: f64) -> (f64, f64) {
    let c = theta.cos();
    (r * c, r * (1.0 - c * c).sqrt())
}

/// Both parts used, one of them twice; a constant integer argument beside.
#[grad(hvp, hessian)]
fn polar_energy(r: f64, theta: f64, n: i32) -> f64 {
    let (x, y) = polar(r, theta);
    x * y + x.powi(n)
}

#[derive(Clone, Differentiable, Debug)]
pub struct Oscillator {
    pub k: f64,
    pub w: [f64; 2],
}

#[grad]
impl Oscillator {
    /// One output, through a method.
    #[grad(hvp)]
    fn force(&self, x: f64) -> f64 {
        -self.k * x + self.w[0] * x.sin()
    }

    /// Two outputs, through a method.
    #[grad(hvp)]
    fn state(&self, x: f64) -> (f64, f64) {
        (self.w[1] * x * x, (self.k * x).tanh())
    }
}

/// Methods of one and of several outputs, called over a slice of data.
#[grad(hessian, wrt(m))]
fn oscillator_loss(m: &Oscillator, xs: &[f64]) -> f64 {
    let mut total = 0.0;
    for &x in xs {
        let f = m.force(x);
        let (a, b) = m.state(x);
        total += (f - 0.3).powi(2) + a * b;
    }
    total
}

/// A rotation of an array passed whole, with an array output, in a loop of run-time
/// length.
#[grad(hvp)]
fn rotate(p: &[f64; 3], t: f64) -> [f64; 2] {
    let (c, s) = (t.cos(), t.sin());
    [c * p[0] - s * p[1] * p[2], s * p[0] + c * p[1]]
}

#[grad(hvp, hessian)]
fn rotations(p: [f64; 3], n: usize) -> f64 {
    let mut total = 0.0;
    for i in 0..n {
        let [a, b] = rotate(&p, 0.1 * i as f64);
        total += a * b;
    }
    total
}

#[test]
fn hessians_through_calls_of_several_outputs() {
    let p = [0.8, -0.4];
    let (value, gradient, h) = squares_hessian(p);
    assert_eq!(value, squares(p));
    assert_eq!(gradient, squares_grad(p).1);
    assert_hessian!(|p: &[f64; 2]| squares_grad(*p).1, &h, &p);

    let (r, theta) = (1.3, 0.7);
    let (value, _, _, h) = polar_energy_hessian(r, theta, 3);
    assert_eq!(value, polar_energy(r, theta, 3));
    let gradient = |v: &[f64; 2]| {
        let (_, dr, dtheta) = polar_energy_grad(v[0], v[1], 3);
        [dr, dtheta]
    };
    assert_hessian!(gradient, &h, &[r, theta]);
    // The product along a direction is the Hessian's.
    let (_, _, _, hr, htheta) = polar_energy_hvp(r, theta, 3, 0.5, -2.0);
    assert_close(hr, 0.5 * h[0][0] - 2.0 * h[0][1], 1e-12, "polar (H·v)_r");
    assert_close(
        htheta,
        0.5 * h[1][0] - 2.0 * h[1][1],
        1e-12,
        "polar (H·v)_θ",
    );

    let p = [0.3, -0.5, 0.8];
    let (value, _, h) = rotations_hessian(p, 5);
    assert_eq!(value, rotations(p, 5));
    assert_hessian!(|p: &[f64; 3]| rotations_grad(*p, 5).1, &h, &p);
}

#[test]
fn hessians_through_methods_of_one_and_several_outputs() {
    let m = Oscillator {
        k: 0.9,
        w: [0.4, -0.3],
    };
    let xs = [0.5, -1.0, 2.0];
    let (value, gradient, h) = oscillator_loss_hessian(&m, &xs);
    assert_eq!(value, oscillator_loss(&m, &xs));
    assert_eq!(gradient.k, oscillator_loss_grad(&m, &xs).1.k);
    assert_eq!(h.shape(), (3, 3));
    let gradient = |p: &[f64; 3]| {
        let m = Oscillator {
            k: p[0],
            w: [p[1], p[2]],
        };
        let (_, dm) = oscillator_loss_grad(&m, &xs);
        [dm.k, dm.w[0], dm.w[1]]
    };
    assert_hessian!(gradient, h.row_iter(), &[0.9, 0.4, -0.3]);
}

// ----- callees with `wrt(..)` ----------------------------------------------------------------
// A caller's forward mode and second order differentiate a callee with respect to every
// number the call passes, whatever the callee's `wrt(..)` says (as `_vjp` does).

/// A model's prediction, differentiated by its user with respect to the weights only.
#[grad(jvp, hvp, wrt(w))]
fn predict(w: [f64; 2], x: f64) -> f64 {
    (w[0] * x + w[1]).tanh()
}

/// The input itself differentiated through the callee that leaves it out.
#[grad(jvp, hvp)]
fn through_input(w: [f64; 2], x: f64) -> f64 {
    let y = predict(w, x * x);
    y * x + predict(w, y)
}

/// A least-squares fit over data, its weights only differentiated.
#[grad(jvp, hessian, wrt(w))]
fn fit(w: [f64; 2], xs: &[f64], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for i in 0..xs.len() {
        total += (predict(w, xs[i]) - ys[i]).powi(2);
    }
    total
}

#[test]
fn callees_with_wrt_are_differentiated_in_every_number_the_call_passes() {
    let (w, x) = ([0.6, -0.2], 0.9);
    let (value, dw, dx) = through_input_grad(w, x);
    assert_eq!(value, through_input(w, x));
    let f = |v: &[f64]| through_input([v[0], v[1]], v[2]);
    let expected = common::fd_gradient(f, &[w[0], w[1], x]);
    common::assert_all_close(&[dw[0], dw[1], dx], &expected, 1e-8, "through_input");
    let (_, tangent) = through_input_jvp(w, x, [0.5, 1.0], -1.5);
    let along = 0.5 * dw[0] + dw[1] - 1.5 * dx;
    assert_close(tangent, along, 1e-12, "through_input_jvp");
    let (_, _, _, hw, hx) = through_input_hvp(w, x, [0.5, 1.0], -1.5);
    let g = |h: f64| {
        let (_, dw, dx) = through_input_grad([w[0] + 0.5 * h, w[1] + h], x - 1.5 * h);
        vec![dw[0], dw[1], dx]
    };
    let expected = common::slope(g, 1e-5);
    common::assert_all_close(&[hw[0], hw[1], hx], &expected, 1e-6, "through_input_hvp");

    let (xs, ys) = ([0.0, 0.5, 1.0, 1.5], [0.1, 0.4, 0.7, 0.8]);
    let (value, gradient, h) = fit_hessian(w, &xs, &ys);
    assert_eq!(value, fit(w, &xs, &ys));
    assert_eq!(gradient, fit_grad(w, &xs, &ys).1);
    assert_hessian!(|w: &[f64; 2]| fit_grad(*w, &xs, &ys).1, &h, &w);
    let (_, tangent) = fit_jvp(w, &xs, &ys, [1.0, -1.0]);
    assert_close(tangent, gradient[0] - gradient[1], 1e-12, "fit_jvp");
}

// ----- structs left out of `wrt(..)` passed whole; calls that carry no gradient ----------

#[derive(Clone, Differentiable, Debug)]
pub struct Spring2 {
    pub k: f64,
    pub rest: [f64; 2],
}

#[grad(hvp)]
fn spring_energy2(s: &Spring2, x: f64) -> f64 {
    s.k * (x - s.rest[0]).powi(2) * (x - s.rest[1]).sin()
}

/// A constant struct passed whole: its tangent is a zero of its type.
#[grad(hvp, hessian, wrt(x))]
fn spring_work(s: &Spring2, x: f64) -> f64 {
    spring_energy2(s, x) * x
}

/// A constant slice of structs, each passed whole in a loop.
#[grad(hvp, wrt(x))]
fn springs_work(ss: &[Spring2], x: f64) -> f64 {
    let mut total = 0.0;
    for s in ss {
        total += spring_energy2(s, x * total.cos());
    }
    total
}

/// A call of several outputs that carries no gradient, one of whose outputs gets one
/// later: its tangent starts at zero.
#[grad(hvp, wrt(w))]
fn late_gradient(x: f64, w: [f64; 2]) -> f64 {
    let (a, mut b) = polar(x, 0.4);
    b += w[0] * w[1];
    b * b + a * w[1]
}

#[test]
fn constant_structs_passed_whole_and_calls_without_a_gradient() {
    let s = Spring2 {
        k: 2.0,
        rest: [0.5, 1.0],
    };
    let x = 0.7;
    let (value, gradient, h) = spring_work_hessian(&s, x);
    assert_eq!(value, spring_work(&s, x));
    assert_eq!(gradient, spring_work_grad(&s, x).1);
    assert_hessian!(|x: &[f64; 1]| [spring_work_grad(&s, x[0]).1], &h, &[x]);

    let ss = vec![
        s.clone(),
        Spring2 {
            k: 1.0,
            rest: [0.1, -0.3],
        },
    ];
    let (value, gradient, hx) = springs_work_hvp(&ss, x, 1.0);
    assert_eq!(value, springs_work(&ss, x));
    assert_eq!(gradient, springs_work_grad(&ss, x).1);
    let expected = common::slope(|h| vec![springs_work_grad(&ss, x + h).1], 1e-5);
    assert_close(hx, expected[0], 1e-6, "springs_work_hvp");

    let w = [0.3, -1.2];
    let (_, gradient, hw) = late_gradient_hvp(0.9, w, [1.0, 0.5]);
    assert_eq!(gradient, late_gradient_grad(0.9, w).1);
    let g = |h: f64| {
        late_gradient_grad(0.9, [w[0] + h, w[1] + 0.5 * h])
            .1
            .to_vec()
    };
    let expected = common::slope(g, 1e-5);
    common::assert_all_close(&hw, &expected, 1e-6, "late_gradient_hvp");
}

// ----- `_hessian` of `f32` functions -----------------------------------------------------

#[grad(hessian)]
fn mixed_f32(x: [f32; 3], y: f32) -> f32 {
    x[0] * x[1] * y + (x[2] * y).sin() + x[0].hypot(x[2])
}

#[grad(hessian)]
fn mixed_f64(x: [f64; 3], y: f64) -> f64 {
    x[0] * x[1] * y + (x[2] * y).sin() + x[0].hypot(x[2])
}

#[grad(hessian)]
fn cubes_f32(x: &[f32], scale: f32) -> f32 {
    x.iter().map(|v| v * v * v * scale).sum::<f32>() + x[0] * x[1]
}

#[grad(hessian)]
fn cubes_f64(x: &[f64], scale: f64) -> f64 {
    x.iter().map(|v| v * v * v * scale).sum::<f64>() + x[0] * x[1]
}

/// An `f32` function's Hessian is computed in `f32`: it agrees with the `f64` twin's to
/// `f32` precision, is symmetric, and its gradient is `_grad`'s.
#[test]
fn f32_hessians_match_the_f64_twin() {
    let (x, y) = ([0.75f32, -1.25, 0.5], 1.5f32);
    let (value, gx, gy, h) = mixed_f32_hessian(x, y);
    let (value64, gx64, gy64, h64) = mixed_f64_hessian(x.map(f64::from), f64::from(y));
    assert_close(f64::from(value), value64, 1e-6, "value");
    for i in 0..3 {
        assert_close(f64::from(gx[i]), gx64[i], 1e-6, "∂/∂x");
    }
    assert_close(f64::from(gy), gy64, 1e-6, "∂/∂y");
    for i in 0..4 {
        for j in 0..4 {
            assert_close(f64::from(h[i][j]), h64[i][j], 1e-5, &format!("H[{i}][{j}]"));
            assert_eq!(h[i][j], h[j][i], "symmetric");
        }
    }
    // The gradient that `_hessian` returns is `_grad`'s in `f32`, bit for bit.
    let (grad_value, grad_x, grad_y) = mixed_f32_grad(x, y);
    assert_eq!((value, gx, gy), (grad_value, grad_x, grad_y));

    // A slice: a run-time sized `Matrix<f32>`, with the scale's row and column.
    let xs = [0.5f32, -2.0, 1.25];
    let (value, gx, gs, h) = cubes_f32_hessian(&xs, 0.5);
    let xs64 = xs.map(f64::from);
    let (value64, gx64, gs64, h64) = cubes_f64_hessian(&xs64, 0.5);
    assert_close(f64::from(value), value64, 1e-6, "value");
    for i in 0..3 {
        assert_close(f64::from(gx[i]), gx64[i], 1e-6, "∂/∂x");
    }
    assert_close(f64::from(gs), gs64, 1e-6, "∂/∂scale");
    assert_eq!((h.rows(), h.cols()), (4, 4));
    for i in 0..4 {
        for j in 0..4 {
            assert_close(
                f64::from(h[(i, j)]),
                h64[(i, j)],
                1e-5,
                &format!("H[{i}][{j}]"),
            );
            assert_eq!(h[(i, j)], h[(j, i)], "symmetric");
        }
    }
    // And the f64 twin against closed forms: 6·scale·xᵢ on the diagonal, 3xᵢ² against
    // the scale, 1 between x₀ and x₁.
    for i in 0..3 {
        assert_close(h64[(i, i)], 3.0 * xs64[i], 1e-14, "∂²/∂xᵢ²");
        assert_close(h64[(i, 3)], 3.0 * xs64[i] * xs64[i], 1e-14, "∂²/∂xᵢ∂s");
    }
    assert_close(h64[(0, 1)], 1.0, 1e-14, "∂²/∂x₀∂x₁");
    assert_close(h64[(3, 3)], 0.0, 1e-14, "∂²/∂s²");
}

// ----- `_hessian` in one sweep over lanes -------------------------------------------------
//
// Straight-line code (branches, no loops or calls) of at most 16 numbers gets its Hessian
// from one sweep over lanes rather than one `_hvp` per number. Each is checked against
// its own `_hvp` along the basis vectors (the other path), the tape, and differences.

#[grad(hvp, hessian)]
fn lanes_branchy(x: f64, y: f64, z: f64) -> f64 {
    let mut a = x * y;
    if a > 0.5 {
        a = a.sin() * z;
    } else {
        a = a * a + z.abs();
    }
    a = a * x + (y - z).max(0.1 * x);
    let shared = (x * z).exp();
    a * shared + shared.powi(2) + y.powi(2) * x.powf(2.0)
}

#[grad(hvp, hessian, wrt(w, x))]
fn lanes_layer(w: [[f64; 3]; 2], x: [f64; 3], scale: f64, n: i32) -> f64 {
    let h0 = (w[0][0] * x[0] + w[0][1] * x[1] + w[0][2] * x[2]).tanh();
    let h1 = (w[1][0] * x[0] + w[1][1] * x[1] + w[1][2] * x[2]).tanh();
    scale * (h0 * h1 + h0.powi(n)) - (x[0] * x[2]).cos()
}

/// Sixteen numbers, the most that run in lanes; seventeen, one `_hvp` each.
#[grad(hvp, hessian)]
fn lanes_sixteen(x: [f64; 16]) -> f64 {
    let a = x[0] * x[1] + x[2] * x[3] + x[4] * x[5] + x[6] * x[7];
    let b = x[8] * x[9] + x[10] * x[11] + x[12] * x[13] + x[14] * x[15];
    (a * b).sin() + a.exp() * x[15] / (1.0 + b * b)
}

#[grad(hvp, hessian)]
fn lanes_seventeen(x: [f64; 16], y: f64) -> f64 {
    let a = x[0] * x[1] + x[2] * x[3] + x[4] * x[5] + x[6] * x[7];
    let b = x[8] * x[9] + x[10] * x[11] + x[12] * x[13] + x[14] * x[15];
    ((a * b).sin() + a.exp() * x[15] / (1.0 + b * b)) * y + y.powi(3)
}

/// The Hessian by `_hvp` along each basis vector, for a function of `n` numbers given as
/// a flat point: row `i` is `H·e_i`.
fn rows_by_products(
    n: usize,
    hvp: impl Fn(&[f64], &[f64]) -> Vec<f64>,
    at: &[f64],
) -> Vec<Vec<f64>> {
    (0..n)
        .map(|i| {
            let mut e = vec![0.0; n];
            e[i] = 1.0;
            hvp(at, &e)
        })
        .collect()
}

#[test]
fn hessians_in_lanes_match_products_the_tape_and_differences() {
    for p in [[0.7, -1.1, 0.4], [0.9, 1.2, -0.3], [0.0, 0.0, 0.6]] {
        let (value, dx, dy, dz, h) = lanes_branchy_hessian(p[0], p[1], p[2]);
        assert_eq!(value, lanes_branchy(p[0], p[1], p[2]));
        let (_, gx, gy, gz) = lanes_branchy_grad(p[0], p[1], p[2]);
        for (a, b) in [(dx, gx), (dy, gy), (dz, gz)] {
            assert_close(a, b, 1e-14, "gradient");
        }
        let by_products = rows_by_products(
            3,
            |q, v| {
                let (_, _, _, _, hx, hy, hz) =
                    lanes_branchy_hvp(q[0], q[1], q[2], v[0], v[1], v[2]);
                vec![hx, hy, hz]
            },
            &p,
        );
        assert_matrix(&rows(h), &by_products, 1e-13, "branchy against _hvp");
        for i in 0..3 {
            for j in 0..3 {
                assert_eq!(h[i][j], h[j][i]);
            }
        }
        // The tape, on the branch the point takes.
        let tape = Tape::new();
        let v: Vec<Var> = p.iter().map(|&x| tape.var(x)).collect();
        let (x, y, z) = (v[0], v[1], v[2]);
        let mut a = x * y;
        if a.value() > 0.5 {
            a = a.sin() * z;
        } else {
            a = a * a + z.abs();
        }
        a = a * x + (y - z).max(0.1 * x);
        let shared = (x * z).exp();
        let f = a * shared + shared.powi(2) + y.powi(2) * x.powf(2.0);
        assert_close(f.value(), value, 1e-15, "value");
        assert_matrix(
            &rows(h),
            &tape.hessian(f, &v),
            1e-12,
            "branchy against the tape",
        );
        if p[0] != 0.0 {
            assert_hessian!(
                |q: &[f64; 3]| {
                    let (_, a, b, c) = lanes_branchy_grad(q[0], q[1], q[2]);
                    [a, b, c]
                },
                &h,
                &p
            );
        }
    }

    let w = [[0.3, -0.5, 0.8], [0.1, 0.4, -0.2]];
    let x = [0.9, -0.6, 1.4];
    let flat = |w: &[[f64; 3]; 2], x: &[f64; 3]| -> Vec<f64> {
        w.iter().flatten().chain(x).copied().collect()
    };
    let unflat = |q: &[f64]| -> ([[f64; 3]; 2], [f64; 3]) {
        ([[q[0], q[1], q[2]], [q[3], q[4], q[5]]], [q[6], q[7], q[8]])
    };
    let (value, dw, dx, h) = lanes_layer_hessian(w, x, 1.5, 3);
    assert_eq!(value, lanes_layer(w, x, 1.5, 3));
    let (_, gw, gx) = lanes_layer_grad(w, x, 1.5, 3);
    for (a, b) in flat(&dw, &dx).iter().zip(flat(&gw, &gx)) {
        assert_close(*a, b, 1e-14, "layer gradient");
    }
    let by_products = rows_by_products(
        9,
        |q, v| {
            let ((w, x), (vw, vx)) = (unflat(q), unflat(v));
            let (_, _, _, hw, hx) = lanes_layer_hvp(w, x, 1.5, 3, vw, vx);
            flat(&hw, &hx)
        },
        &flat(&w, &x),
    );
    assert_matrix(&rows(h), &by_products, 1e-13, "layer against _hvp");
    let gradient = |q: &[f64]| {
        let (w, x) = unflat(q);
        let (_, gw, gx) = lanes_layer_grad(w, x, 1.5, 3);
        flat(&gw, &gx)
    };
    assert_matrix(
        &rows(h),
        &fd_hessian(gradient, &flat(&w, &x)),
        1e-6,
        "layer",
    );

    let mut x16 = [0.0; 16];
    for (i, x) in x16.iter_mut().enumerate() {
        *x = 0.1 * (i as f64) - 0.7;
    }
    let (value, g, h) = lanes_sixteen_hessian(x16);
    assert_eq!(value, lanes_sixteen(x16));
    let by_products = rows_by_products(
        16,
        |q, v| {
            let (_, _, hv) = lanes_sixteen_hvp(q.try_into().unwrap(), v.try_into().unwrap());
            hv.to_vec()
        },
        &x16,
    );
    assert_matrix(&rows(h), &by_products, 1e-12, "sixteen against _hvp");
    assert_hessian!(|q: &[f64; 16]| lanes_sixteen_grad(*q).1, &h, &x16);
    for (a, b) in g.iter().zip(lanes_sixteen_grad(x16).1) {
        assert_close(*a, b, 1e-14, "sixteen gradient");
    }
    // Seventeen: one `_hvp` per number, the same numbers where they overlap.
    let (_, g17, gy, h17) = lanes_seventeen_hessian(x16, 1.0);
    for i in 0..16 {
        assert_close(g17[i], g[i], 1e-14, "seventeen gradient");
        for j in 0..16 {
            assert_close(h17[i][j], h[i][j], 1e-12, "seventeen");
        }
    }
    assert_close(gy, value + 3.0, 1e-14, "∂/∂y");
    assert_eq!(h17[16][16], 6.0);
}

/// A function of two numbers in lanes: `_hessian`'s value the original's, its gradient
/// `_grad`'s, and `H` against `_hvp` along the basis vectors (the other path) and against
/// differences of the gradient.
fn check_two_in_lanes(
    at: [f64; 2],
    (value, dx, dy, h): (f64, f64, f64, [[f64; 2]; 2]),
    original: f64,
    grad: impl Fn([f64; 2]) -> [f64; 2],
    hvp: impl Fn([f64; 2], [f64; 2]) -> [f64; 2],
) {
    assert_eq!(value, original);
    let g = grad(at);
    assert_close(dx, g[0], 1e-14, "first partial");
    assert_close(dy, g[1], 1e-14, "second partial");
    let by_products = rows_by_products(2, |q, v| hvp([q[0], q[1]], [v[0], v[1]]).to_vec(), &at);
    assert_matrix(&rows(h), &by_products, 1e-13, "against _hvp");
    assert_hessian!(|p: &[f64; 2]| grad(*p), &h, &at);
}

/// A parameter left out of `wrt(..)` that is assigned a differentiated value: its tangent
/// is a local of lanes, and so is its adjoint in the sweep (found by the random programs:
/// the adjoint was declared `f64`, and `_hessian` did not compile).
#[grad(wrt(x, z), hvp, hessian)]
fn lanes_reassigned(x: f64, z: f64, mut k: f64) -> f64 {
    k /= z.tanh() + 2.0;
    x * k * x + z * k
}

#[test]
fn hessians_in_lanes_of_a_parameter_outside_wrt_assigned_a_number() {
    for (x, z, k) in [(0.7, -0.4, 1.5), (-1.2, 0.9, -0.5)] {
        let hessian = lanes_reassigned_hessian(x, z, k);
        check_two_in_lanes(
            [x, z],
            hessian,
            lanes_reassigned(x, z, k),
            |p| {
                let (_, a, b) = lanes_reassigned_grad(p[0], p[1], k);
                [a, b]
            },
            |p, v| {
                let (_, _, _, a, b) = lanes_reassigned_hvp(p[0], p[1], k, v[0], v[1]);
                [a, b]
            },
        );
        // Closed forms, with q = k / (tanh z + 2): f = x²q + zq.
        let q = k / (z.tanh() + 2.0);
        assert_close(hessian.3[0][0], 2.0 * q, 1e-14, "∂²/∂x²");
    }
}

/// The value of an `if` expression, and a `let` assigned later in a branch: their tangents
/// start as lanes of zeros (found by the random programs: they were declared `f64`).
#[grad(hvp, hessian)]
#[allow(clippy::needless_late_init)] // the deferred `let` is what is tested
fn lanes_if_values(x: f64, y: f64) -> f64 {
    let picked = if x * y > 0.2 { x.sin() * y } else { y * y + x };
    let later;
    if picked > 0.0 {
        later = picked * x;
    } else {
        later = picked.exp();
    }
    later * y + (if x > y { x } else { y }).powi(2)
}

#[test]
fn hessians_in_lanes_of_if_values_and_deferred_lets() {
    for (x, y) in [(0.8, 0.9), (0.3, -0.5), (-0.6, 0.4), (-1.1, -2.0)] {
        check_two_in_lanes(
            [x, y],
            lanes_if_values_hessian(x, y),
            lanes_if_values(x, y),
            |p| {
                let (_, a, b) = lanes_if_values_grad(p[0], p[1]);
                [a, b]
            },
            |p, v| {
                let (_, _, _, a, b) = lanes_if_values_hvp(p[0], p[1], v[0], v[1]);
                [a, b]
            },
        );
    }
}

/// A `mut` parameter that the body reassigns: its basis tangent is reassigned with it
/// (found by the random programs: it was bound immutably).
#[grad(hvp, hessian)]
fn lanes_mut_param(mut x: f64, y: f64) -> f64 {
    x += (x * y).sin();
    x *= y;
    x * x + y
}

#[test]
fn hessians_in_lanes_of_a_reassigned_mut_parameter() {
    for (x, y) in [(0.4, 1.3), (-0.9, 0.2)] {
        check_two_in_lanes(
            [x, y],
            lanes_mut_param_hessian(x, y),
            lanes_mut_param(x, y),
            |p| {
                let (_, a, b) = lanes_mut_param_grad(p[0], p[1]);
                [a, b]
            },
            |p, v| {
                let (_, _, _, a, b) = lanes_mut_param_hvp(p[0], p[1], v[0], v[1]);
                [a, b]
            },
        );
    }
}
