//! `#[grad(reassociate)]`: sums accumulated in loops run in four lanes (partial sums),
//! which changes the value's last bits and never the gradient's formula.
//!
//! Every function is written twice by `both!`, with and without `reassociate`. The
//! reassociated value is checked against the sequential one (close, not equal) and against
//! the lane order the guide documents, computed by hand here (equal, bit for bit); the
//! partials against closed forms and central differences. Sums that the loop reads
//! elsewhere are not reassociated: their values stay equal bit for bit.

mod common;

use autodiff::prelude::*;
use common::{assert_all_close, assert_close, fd_gradient};

/// Defines `$plain` with `#[grad($($args)*)]` and `$lanes` with the same arguments and
/// `reassociate`, both with the same signature and body.
macro_rules! both {
    ([$($args:tt)*] fn $plain:ident / $lanes:ident ($($params:tt)*) -> $ret:ty $body:block) => {
        #[grad($($args)*)]
        fn $plain($($params)*) -> $ret $body

        #[grad($($args)* reassociate)]
        fn $lanes($($params)*) -> $ret $body
    };
}

/// The documented order: iteration `k`'s term goes to lane `k % 4`; after the loop the
/// lanes are added in pairs, `(l0 + l1) + (l2 + l3)`, and then to the initial value.
fn in_lanes(initial: f64, terms: &[f64]) -> f64 {
    let mut lanes = [-0.0; 4];
    for (k, term) in terms.iter().enumerate() {
        lanes[k % 4] += term;
    }
    initial + ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3]))
}

/// Numbers of mixed signs and magnitudes, so that the order of the additions shows in the
/// last bits.
fn numbers(n: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
            (unit - 0.45) * 10f64.powi((state % 3) as i32 - 1)
        })
        .collect()
}

both! {
    [wrt(w),]
    fn dot / dot_lanes(w: &[f64], x: &[f64]) -> f64 {
        let mut s = 0.0;
        for k in 0..w.len() {
            s += w[k] * x[k];
        }
        s
    }
}

#[test]
fn a_dot_product_adds_in_four_lanes_and_its_partial_is_unchanged() {
    let mut reordered = 0;
    for n in [0, 1, 2, 3, 4, 5, 7, 8, 9, 100, 1001] {
        let (w, x) = (numbers(n, 1), numbers(n, 2));
        let terms: Vec<f64> = w.iter().zip(&x).map(|(a, b)| a * b).collect();
        let (value, d_w) = dot_lanes_grad(&w, &x);
        assert_eq!(value.to_bits(), in_lanes(0.0, &terms).to_bits(), "n = {n}");
        let sequential = dot(&w, &x);
        assert_close(value, sequential, 1e-12, "value");
        reordered += usize::from(value.to_bits() != sequential.to_bits());
        // ∂(w·x)/∂w = x, exactly, in either order.
        assert_eq!(d_w, x, "n = {n}");
        assert_eq!(dot_grad(&w, &x).1, x);
    }
    // The lanes do change some results' last bits: the test above is not vacuous.
    assert!(reordered > 0);
}

both! {
    [wrt(p),]
    fn squared_error / squared_error_lanes(p: &[f64], q: &[f64]) -> f64 {
        p.iter().zip(q).map(|(a, b)| (a - b).powi(2)).sum()
    }
}

#[test]
fn a_sum_of_an_iterator_chain_runs_in_lanes() {
    for n in [0, 3, 4, 17, 256] {
        let (p, q) = (numbers(n, 3), numbers(n, 4));
        let terms: Vec<f64> = p.iter().zip(&q).map(|(a, b)| (a - b).powi(2)).collect();
        let (value, d_p) = squared_error_lanes_grad(&p, &q);
        // `.sum()` starts from `-0.0`, as in std.
        assert_eq!(value.to_bits(), in_lanes(-0.0, &terms).to_bits(), "n = {n}");
        assert_close(value, squared_error(&p, &q), 1e-12, "value");
        let closed: Vec<f64> = p.iter().zip(&q).map(|(a, b)| 2.0 * (a - b)).collect();
        assert_eq!(d_p, closed);
        if n > 0 {
            let fd = fd_gradient(|p| squared_error(p, &q), &p);
            assert_all_close(&d_p, &fd, 1e-6, "d_p against differences");
        }
    }
    // A sum of nothing is `-0.0`, with lanes as without.
    assert_eq!(
        squared_error_lanes_grad(&[], &[]).0.to_bits(),
        (-0.0f64).to_bits()
    );
}

const UNITS: usize = 4;
const INPUTS: usize = 6;

both! {
    [wrt(w, b),]
    fn layer / layer_lanes(w: &[[f64; INPUTS]; UNITS], b: &[f64; UNITS], x: &[f64; INPUTS]) -> f64 {
        let mut out = 0.0;
        for j in 0..UNITS {
            let mut act = b[j];
            for k in 0..INPUTS {
                act += w[j][k] * x[k];
            }
            out += act.tanh();
        }
        out
    }
}

#[test]
fn sums_in_nested_constant_loops_run_in_lanes_with_exact_partials() {
    let flat = numbers(UNITS * INPUTS + UNITS + INPUTS, 5);
    let w: [[f64; INPUTS]; UNITS] =
        std::array::from_fn(|j| std::array::from_fn(|k| flat[j * INPUTS + k]));
    let b: [f64; UNITS] = std::array::from_fn(|j| flat[UNITS * INPUTS + j]);
    let x: [f64; INPUTS] = std::array::from_fn(|k| flat[UNITS * INPUTS + UNITS + k]);
    let (value, d_w, d_b) = layer_lanes_grad(&w, &b, &x);
    // The reference in the documented order: each unit's activation in lanes, then the
    // units' outputs in lanes.
    let outputs: Vec<f64> = (0..UNITS)
        .map(|j| {
            let terms: Vec<f64> = (0..INPUTS).map(|k| w[j][k] * x[k]).collect();
            in_lanes(b[j], &terms).tanh()
        })
        .collect();
    assert_eq!(value.to_bits(), in_lanes(0.0, &outputs).to_bits());
    assert_close(value, layer(&w, &b, &x), 1e-12, "value");
    // Closed form: ∂/∂b_j = 1 - tanh², ∂/∂w_jk = (1 - tanh²) x_k.
    for j in 0..UNITS {
        let slope = 1.0 - outputs[j] * outputs[j];
        assert_close(d_b[j], slope, 1e-12, "d_b");
        for k in 0..INPUTS {
            assert_close(d_w[j][k], slope * x[k], 1e-12, "d_w");
        }
    }
    let (_, d_w_plain, d_b_plain) = layer_grad(&w, &b, &x);
    assert_all_close(&d_b, &d_b_plain, 1e-12, "d_b against the sequential sum");
    assert_all_close(
        d_w.as_flattened(),
        d_w_plain.as_flattened(),
        1e-12,
        "d_w against the sequential sum",
    );
}

both! {
    [wrt(xs),]
    fn two_sums_of_one_term / two_sums_of_one_term_lanes(xs: &[f64]) -> f64 {
        let mut s = 0.0;
        let mut q = 0.0;
        for &x in xs {
            let t = x * x;
            s += t;
            q -= t * t;
        }
        s * q
    }
}

#[test]
fn two_sums_of_a_shared_term_both_run_in_lanes() {
    let xs = numbers(23, 6);
    let squares: Vec<f64> = xs.iter().map(|x| x * x).collect();
    let fourths: Vec<f64> = squares.iter().map(|t| -(t * t)).collect();
    let (s, q) = (in_lanes(0.0, &squares), in_lanes(0.0, &fourths));
    let (value, d_xs) = two_sums_of_one_term_lanes_grad(&xs);
    assert_eq!(value.to_bits(), (s * q).to_bits());
    assert_close(value, two_sums_of_one_term(&xs), 1e-12, "value");
    // ∂(s q)/∂x = q · 2x + s · (-4x³).
    for (x, d) in xs.iter().zip(&d_xs) {
        assert_close(*d, q * 2.0 * x - s * 4.0 * x.powi(3), 1e-12, "d_xs");
    }
    let fd = fd_gradient(two_sums_of_one_term, &xs);
    assert_all_close(&d_xs, &fd, 1e-5, "d_xs against differences");
}

both! {
    [wrt(xs),]
    fn sum_until_large / sum_until_large_lanes(xs: &[f64]) -> f64 {
        let mut s = 0.0;
        for &x in xs {
            if x > 4.0 {
                break;
            }
            if x > 0.0 {
                s += x.sin();
            }
        }
        s
    }
}

#[test]
fn a_sum_in_a_loop_that_breaks_and_branches_runs_in_lanes() {
    let mut xs: Vec<f64> = numbers(40, 7).iter().map(|x| x.min(3.0)).collect();
    xs[30] = 5.0;
    // Iteration `k` adds to lane `k % 4`, or adds nothing (`-0.0`, the exact identity);
    // the iteration that breaks is the last to run.
    let terms: Vec<f64> = xs[..=30]
        .iter()
        .map(|&x| if x > 0.0 && x <= 4.0 { x.sin() } else { -0.0 })
        .collect();
    let (value, d_xs) = sum_until_large_lanes_grad(&xs);
    assert_eq!(value.to_bits(), in_lanes(0.0, &terms).to_bits());
    assert_close(value, sum_until_large(&xs), 1e-12, "value");
    for (k, (x, d)) in xs.iter().zip(&d_xs).enumerate() {
        let expected = if k < 30 && *x > 0.0 { x.cos() } else { 0.0 };
        assert_eq!(*d, expected, "d_xs[{k}]");
    }
}

both! {
    [wrt(xs),]
    fn decaying / decaying_lanes(xs: &[f64]) -> f64 {
        let mut s = 0.0;
        let mut big = 0.0;
        for &x in xs {
            s = 0.5 * s + x;
            if big < 1.0 {
                big += x * x;
            }
        }
        s + big
    }
}

#[test]
fn sums_the_loop_reads_stay_in_order() {
    // `s` is scaled every iteration and `big` is tested: neither is a plain sum, so both
    // keep the order of the original, bit for bit, and so does the gradient.
    let xs = numbers(50, 8);
    let (value, d_xs) = decaying_lanes_grad(&xs);
    assert_eq!(value.to_bits(), decaying(&xs).to_bits());
    let (plain_value, plain_d_xs) = decaying_grad(&xs);
    assert_eq!(value.to_bits(), plain_value.to_bits());
    assert_eq!(d_xs, plain_d_xs);
}

both! {
    [wrt(xs),]
    fn mean_f32 / mean_f32_lanes(xs: &[f32]) -> f32 {
        let mut s = 0.0f32;
        for &x in xs {
            s += x * x;
        }
        s / xs.len() as f32
    }
}

#[test]
fn f32_sums_run_in_lanes_too() {
    let xs: Vec<f32> = numbers(1000, 9).iter().map(|&x| x as f32).collect();
    let (value, d_xs) = mean_f32_lanes_grad(&xs);
    let exact: f64 = xs.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>() / 1000.0;
    assert!((f64::from(value) - exact).abs() <= 1e-5 * exact.abs().max(1.0));
    assert!((f64::from(mean_f32(&xs)) - exact).abs() <= 1e-5 * exact.abs().max(1.0));
    for (x, d) in xs.iter().zip(&d_xs) {
        let expected = 2.0 * f64::from(*x) / 1000.0;
        assert!((f64::from(*d) - expected).abs() <= 1e-6 * expected.abs().max(1e-3));
    }
    assert_eq!(d_xs, mean_f32_grad(&xs).1);
}
