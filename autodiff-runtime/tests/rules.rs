//! Every derivative rule checked three ways: its value against the `std` method bit for
//! bit, its partials against a closed form, and its partials against central finite
//! differences, at several points of its domain away from kinks. Kinks are checked against
//! the documented subgradients.

use autodiff_runtime::{rules, F64Ext};

/// Relative step of the central differences.
const STEP: f64 = 1e-6;
/// Relative tolerance of a finite-difference check (the error of a central difference with
/// this step is about `h²·f'''` plus `ε·f/h`, far below it at the points used).
const FD_TOL: f64 = 1e-6;
/// Relative tolerance of a closed-form check: a few rounding errors.
const EXACT_TOL: f64 = 1e-12;

/// Central difference of `f` at `x`, with a step relative to `|x|`. Divides by the step
/// that was actually taken (`xp - xm`), not the nominal one.
fn central(f: impl Fn(f64) -> f64, x: f64) -> f64 {
    let h = STEP * x.abs().max(1.0);
    let (xp, xm) = (x + h, x - h);
    (f(xp) - f(xm)) / (xp - xm)
}

#[track_caller]
fn assert_close(actual: f64, expected: f64, rel: f64, what: &str) {
    let scale = actual.abs().max(expected.abs()).max(1e-3);
    assert!(
        (actual - expected).abs() <= rel * scale,
        "{what}: got {actual:e}, expected {expected:e} (relative tolerance {rel:e})"
    );
}

#[track_caller]
fn assert_bits(actual: f64, expected: f64, what: &str) {
    assert_eq!(
        actual.to_bits(),
        expected.to_bits(),
        "{what}: got {actual:e}, expected {expected:e} bit for bit"
    );
}

/// One-argument rules: value bits, closed form and central difference at every point.
macro_rules! unary {
    ($name:ident, $std:expr, $closed:expr, [$($x:expr),+ $(,)?]) => {
        #[test]
        fn $name() {
            let std_fn: fn(f64) -> f64 = $std;
            let closed: fn(f64) -> f64 = $closed;
            for x in [$($x),+] {
                let (value, partial) = rules::$name(x);
                let what = format!("{}({x})", stringify!($name));
                assert_bits(value, std_fn(x), &what);
                assert_close(partial, closed(x), EXACT_TOL, &format!("{what} closed form"));
                assert_close(partial, central(std_fn, x), FD_TOL, &format!("{what} vs FD"));
            }
        }
    };
}

unary!(neg, |x| -x, |_| -1.0, [-2.5, 0.0, 1.0, 3.75]);
unary!(
    recip,
    f64::recip,
    |x| -1.0 / (x * x),
    [-3.0, -0.4, 0.5, 2.0, 7.0]
);
unary!(
    sqrt,
    f64::sqrt,
    |x| 1.0 / (2.0 * x.sqrt()),
    [0.01, 0.5, 2.0, 9.0, 1e4]
);
unary!(
    cbrt,
    f64::cbrt,
    |x| x.powf(-2.0 / 3.0) / 3.0,
    [0.05, 0.5, 2.0, 27.0]
);
unary!(exp, f64::exp, f64::exp, [-3.0, -0.5, 0.0, 1.0, 4.0]);
unary!(
    exp2,
    f64::exp2,
    |x| x.exp2() * 2f64.ln(),
    [-3.0, -0.5, 0.0, 1.0, 4.0]
);
unary!(
    exp_m1,
    f64::exp_m1,
    f64::exp,
    [-3.0, -1e-3, 0.0, 1e-3, 1.0, 4.0]
);
unary!(ln, f64::ln, |x| 1.0 / x, [0.01, 0.5, 1.0, 2.0, 100.0]);
unary!(
    ln_1p,
    f64::ln_1p,
    |x| 1.0 / (1.0 + x),
    [-0.5, -1e-3, 0.0, 1e-3, 3.0]
);
unary!(
    log2,
    f64::log2,
    |x| 1.0 / (x * 2f64.ln()),
    [0.1, 0.5, 1.0, 8.0]
);
unary!(
    log10,
    f64::log10,
    |x| 1.0 / (x * 10f64.ln()),
    [0.1, 0.5, 1.0, 1000.0]
);
unary!(sin, f64::sin, f64::cos, [-2.0, -0.3, 0.0, 1.0, 2.5]);
unary!(cos, f64::cos, |x| -x.sin(), [-2.0, -0.3, 0.5, 1.0, 2.5]);
unary!(
    tan,
    f64::tan,
    |x| 1.0 / (x.cos() * x.cos()),
    [-1.2, -0.3, 0.0, 0.7, 1.3]
);
unary!(
    asin,
    f64::asin,
    |x| 1.0 / (1.0 - x * x).sqrt(),
    [-0.9, -0.3, 0.0, 0.5, 0.95]
);
unary!(
    acos,
    f64::acos,
    |x| -1.0 / (1.0 - x * x).sqrt(),
    [-0.9, -0.3, 0.0, 0.5, 0.95]
);
unary!(
    atan,
    f64::atan,
    |x| 1.0 / (1.0 + x * x),
    [-5.0, -0.3, 0.0, 1.0, 20.0]
);
unary!(sinh, f64::sinh, f64::cosh, [-3.0, -0.2, 0.0, 1.0, 2.0]);
unary!(cosh, f64::cosh, f64::sinh, [-3.0, -0.2, 0.5, 1.0, 2.0]);
unary!(
    tanh,
    f64::tanh,
    |x| 1.0 / (x.cosh() * x.cosh()),
    [-3.0, -0.5, 0.0, 0.8812, 2.0]
);
unary!(
    asinh,
    f64::asinh,
    |x| 1.0 / (x * x + 1.0).sqrt(),
    [-4.0, -0.5, 0.0, 1.0, 10.0]
);
unary!(
    acosh,
    f64::acosh,
    |x| 1.0 / (x * x - 1.0).sqrt(),
    [1.1, 1.5, 2.0, 10.0]
);
unary!(
    atanh,
    f64::atanh,
    |x| 1.0 / (1.0 - x * x),
    [-0.9, -0.3, 0.0, 0.5, 0.95]
);
unary!(abs, f64::abs, f64::signum, [-3.0, -0.25, 0.5, 4.0]);
unary!(
    relu,
    F64Ext::relu,
    |x| if x > 0.0 { 1.0 } else { 0.0 },
    [-3.0, -0.25, 0.5, 4.0]
);
unary!(
    sigmoid,
    F64Ext::sigmoid,
    |x| (-x).exp() / ((1.0 + (-x).exp()) * (1.0 + (-x).exp())),
    [-6.0, -1.0, 0.0, 0.5, 3.0]
);
unary!(floor, f64::floor, |_| 0.0, [-2.5, -0.3, 0.4, 7.7]);
unary!(ceil, f64::ceil, |_| 0.0, [-2.5, -0.3, 0.4, 7.7]);
unary!(round, f64::round, |_| 0.0, [-2.3, -0.3, 0.4, 7.7]);
unary!(trunc, f64::trunc, |_| 0.0, [-2.5, -0.3, 0.4, 7.7]);
unary!(signum, f64::signum, |_| 0.0, [-2.5, -0.3, 0.4, 7.7]);
unary!(
    to_degrees,
    f64::to_degrees,
    |_| 180.0 / std::f64::consts::PI,
    [-3.0, 0.0, 1.0, 6.0]
);
unary!(
    to_radians,
    f64::to_radians,
    |_| std::f64::consts::PI / 180.0,
    [-180.0, 0.0, 45.0, 720.0]
);

/// Two-argument rules: value bits, closed forms and central differences in each argument.
#[track_caller]
fn check_binary(
    name: &str,
    rule: fn(f64, f64) -> (f64, f64, f64),
    std_fn: fn(f64, f64) -> f64,
    closed: fn(f64, f64) -> (f64, f64),
    points: &[(f64, f64)],
) {
    for &(x, y) in points {
        let what = format!("{name}({x}, {y})");
        let (value, dx, dy) = rule(x, y);
        let (cx, cy) = closed(x, y);
        assert_bits(value, std_fn(x, y), &what);
        assert_close(dx, cx, EXACT_TOL, &format!("{what} d/d1 closed form"));
        assert_close(dy, cy, EXACT_TOL, &format!("{what} d/d2 closed form"));
        let fd_x = central(|x| std_fn(x, y), x);
        let fd_y = central(|y| std_fn(x, y), y);
        assert_close(dx, fd_x, FD_TOL, &format!("{what} d/d1 vs FD"));
        assert_close(dy, fd_y, FD_TOL, &format!("{what} d/d2 vs FD"));
    }
}

const PAIRS: [(f64, f64); 6] = [
    (2.0, 3.0),
    (-1.5, 0.25),
    (0.7, -4.0),
    (-2.0, -5.0),
    (0.0, 1.0),
    (10.0, 0.1),
];

#[test]
fn add() {
    check_binary("add", rules::add, |x, y| x + y, |_, _| (1.0, 1.0), &PAIRS);
}

#[test]
fn sub() {
    check_binary("sub", rules::sub, |x, y| x - y, |_, _| (1.0, -1.0), &PAIRS);
}

#[test]
fn mul() {
    check_binary("mul", rules::mul, |x, y| x * y, |x, y| (y, x), &PAIRS);
    // The partials are exactly the other factor.
    assert_eq!(rules::mul(3.0, 4.0), (12.0, 4.0, 3.0));
}

#[test]
fn div() {
    check_binary(
        "div",
        rules::div,
        |x, y| x / y,
        |x, y| (1.0 / y, -x / (y * y)),
        &PAIRS,
    );
}

#[test]
fn atan2_wrt_y_and_x() {
    // All four quadrants and both axes (away from the origin).
    let points = [
        (1.0, 2.0),
        (1.0, -2.0),
        (-1.0, -2.0),
        (-1.0, 2.0),
        (0.0, 3.0),
        (3.0, 0.0),
        (-0.5, 0.1),
        (0.5, -0.1),
    ];
    check_binary(
        "atan2",
        rules::atan2,
        f64::atan2,
        |y, x| {
            let r = y.hypot(x);
            (x / r / r, -y / r / r)
        },
        &points,
    );
}

#[test]
fn hypot() {
    check_binary(
        "hypot",
        rules::hypot,
        f64::hypot,
        |x, y| {
            let r = (x * x + y * y).sqrt();
            (x / r, y / r)
        },
        &PAIRS,
    );
}

#[test]
fn powf_wrt_base_and_exponent() {
    let mut points = Vec::new();
    for x in [0.3, 0.9, 1.0, 1.7, 4.0] {
        for y in [-1.5, -1.0, 0.5, 2.0, 3.3] {
            points.push((x, y));
        }
    }
    check_binary(
        "powf",
        rules::powf,
        f64::powf,
        |x, y| (y * x.powf(y) / x, x.powf(y) * x.ln()),
        &points,
    );
}

#[test]
fn powf_special_points() {
    // Negative base, integral exponent: the base partial is finite, ln x is NaN.
    let (value, d_base, d_exp) = rules::powf(-2.0, 3.0);
    assert_bits(value, (-2.0f64).powf(3.0), "powf(-2, 3)");
    assert_eq!(d_base, 12.0);
    assert!(d_exp.is_nan());
    assert_close(
        d_base,
        central(|x| x.powf(3.0), -2.0),
        FD_TOL,
        "powf(-2, 3) vs FD",
    );

    // Zero exponent: the base partial is 0 even at x = 0 (not 0 · 0⁻¹ = NaN); the
    // exponent partial at 0⁰ is the IEEE value of 1 · ln 0.
    assert_eq!(rules::powf(0.0, 0.0), (1.0, 0.0, f64::NEG_INFINITY));
    let (value, d_base, d_exp) = rules::powf(2.0, 0.0);
    assert_eq!((value, d_base), (1.0, 0.0));
    assert_close(d_exp, 2f64.ln(), EXACT_TOL, "d/dy 2^y at 0");

    // Zero base, positive exponent: value 0, exponent partial 0 (not 0 · ln 0 = NaN).
    assert_eq!(rules::powf(0.0, 2.0), (0.0, 0.0, 0.0));
    assert_eq!(rules::powf(0.0, 0.5).2, 0.0);
    assert_eq!(rules::powf(0.0, 0.5).1, f64::INFINITY);
}

#[test]
fn powf_variants_agree_with_powf_bit_for_bit() {
    let values = [
        -3.0,
        -1.0,
        -0.5,
        -0.0,
        0.0,
        0.25,
        1.0,
        2.0,
        3.5,
        1e10,
        f64::INFINITY,
        f64::NAN,
    ];
    for x in values {
        for y in values {
            let (value, d_base, d_exp) = rules::powf(x, y);
            let (value_b, d_base_b) = rules::powf_wrt_base(x, y);
            let (value_e, d_exp_e) = rules::powf_wrt_exp(x, y);
            let what = format!("powf({x}, {y})");
            assert_bits(value, x.powf(y), &what);
            assert_bits(value_b, value, &format!("{what} wrt_base value"));
            assert_bits(value_e, value, &format!("{what} wrt_exp value"));
            assert_bits(d_base_b, d_base, &format!("{what} wrt_base partial"));
            assert_bits(d_exp_e, d_exp, &format!("{what} wrt_exp partial"));
        }
    }
}

#[test]
fn powi_positive_exponents() {
    for n in 1..=7 {
        for x in [-2.5, -0.5, 0.3, 1.0, 1.9, 3.0] {
            let (value, partial) = rules::powi(x, n);
            let what = format!("powi({x}, {n})");
            assert_bits(value, x.powi(n), &what);
            let closed = f64::from(n) * x.powf(f64::from(n - 1));
            assert_close(partial, closed, EXACT_TOL, &format!("{what} closed form"));
            let fd = central(|x| x.powi(n), x);
            assert_close(partial, fd, FD_TOL, &format!("{what} vs FD"));
        }
    }
    // x¹ has derivative exactly 1 everywhere, x² derivative 2x at 0.
    assert_eq!(rules::powi(-7.0, 1), (-7.0, 1.0));
    assert_eq!(rules::powi(0.0, 2), (0.0, 0.0));
}

#[test]
fn powi_negative_exponents() {
    for n in [-1, -2, -3, -5] {
        for x in [-2.5, -0.5, 0.3, 1.0, 1.9, 3.0] {
            let (value, partial) = rules::powi(x, n);
            let what = format!("powi({x}, {n})");
            assert_bits(value, x.powi(n), &what);
            let closed = f64::from(n) / x.powi(1 - n);
            assert_close(partial, closed, EXACT_TOL, &format!("{what} closed form"));
            let fd = central(|x| x.powi(n), x);
            assert_close(partial, fd, FD_TOL, &format!("{what} vs FD"));
        }
    }
}

#[test]
fn powi_zero_exponent() {
    // x⁰ = 1 with derivative 0 everywhere, including 0⁰ (no 0 · 0⁻¹ = NaN).
    for x in [-3.0, -0.0, 0.0, 0.5, 2.0, f64::INFINITY] {
        let (value, partial) = rules::powi(x, 0);
        assert_bits(value, x.powi(0), &format!("powi({x}, 0)"));
        assert_eq!(value, 1.0);
        assert_eq!(partial.to_bits(), 0.0f64.to_bits(), "powi({x}, 0) partial");
    }
}

#[test]
fn powi_extreme_exponents_do_not_overflow() {
    // n - 1 overflows for i32::MIN; the rule must neither panic nor wrap.
    let (value, partial) = rules::powi(-1.0, i32::MIN);
    assert_eq!(value, 1.0);
    // d/dx xⁿ = n·xⁿ⁻¹, and (-1)^(odd) = -1.
    assert_eq!(partial, -f64::from(i32::MIN));
    let (value, partial) = rules::powi(1.0, i32::MIN);
    assert_eq!((value, partial), (1.0, f64::from(i32::MIN)));
    let (value, partial) = rules::powi(1.0, i32::MAX);
    assert_eq!((value, partial), (1.0, f64::from(i32::MAX)));
}

#[test]
fn log_wrt_x_and_base() {
    let mut points = Vec::new();
    for x in [0.3, 1.0, 2.0, 10.0, 50.0] {
        for base in [0.5, 2.0, std::f64::consts::E, 10.0] {
            points.push((x, base));
        }
    }
    check_binary(
        "log",
        rules::log,
        f64::log,
        |x, b| (1.0 / (x * b.ln()), -x.ln() / (b * b.ln() * b.ln())),
        &points,
    );
}

#[test]
fn mul_add_all_three_arguments() {
    let points = [
        (2.0, 3.0, 4.0),
        (-1.5, 0.25, -7.0),
        (0.1, -10.0, 0.5),
        (0.0, 2.0, -1.0),
    ];
    for (x, a, b) in points {
        let what = format!("mul_add({x}, {a}, {b})");
        let (value, dx, da, db) = rules::mul_add(x, a, b);
        assert_bits(value, x.mul_add(a, b), &what);
        assert_eq!((dx, da, db), (a, x, 1.0), "{what} closed form");
        let fd_x = central(|x| x.mul_add(a, b), x);
        let fd_a = central(|a| x.mul_add(a, b), a);
        let fd_b = central(|b| x.mul_add(a, b), b);
        assert_close(dx, fd_x, FD_TOL, &format!("{what} d/dx vs FD"));
        assert_close(da, fd_a, FD_TOL, &format!("{what} d/da vs FD"));
        assert_close(db, fd_b, FD_TOL, &format!("{what} d/db vs FD"));
    }
}

#[test]
fn clamp_inside_and_outside() {
    let (lo, hi) = (-1.0, 2.0);
    // (x, expected partials with respect to (x, lo, hi))
    let cases = [
        (-3.0, (0.0, 1.0, 0.0)),
        (-1.5, (0.0, 1.0, 0.0)),
        (-0.5, (1.0, 0.0, 0.0)),
        (0.0, (1.0, 0.0, 0.0)),
        (1.9, (1.0, 0.0, 0.0)),
        (2.5, (0.0, 0.0, 1.0)),
        (10.0, (0.0, 0.0, 1.0)),
    ];
    for (x, expected) in cases {
        let what = format!("clamp({x}, {lo}, {hi})");
        let (value, dx, dlo, dhi) = rules::clamp(x, lo, hi);
        assert_bits(value, x.clamp(lo, hi), &what);
        assert_eq!((dx, dlo, dhi), expected, "{what}");
        let fd_x = central(|x| x.clamp(lo, hi), x);
        let fd_lo = central(|lo| x.clamp(lo, hi), lo);
        let fd_hi = central(|hi| x.clamp(lo, hi), hi);
        assert_close(dx, fd_x, FD_TOL, &format!("{what} d/dx vs FD"));
        assert_close(dlo, fd_lo, FD_TOL, &format!("{what} d/dlo vs FD"));
        assert_close(dhi, fd_hi, FD_TOL, &format!("{what} d/dhi vs FD"));
    }
}

#[test]
fn clamp_at_its_ends_gives_x_the_adjoint() {
    assert_eq!(rules::clamp(-1.0, -1.0, 2.0), (-1.0, 1.0, 0.0, 0.0));
    assert_eq!(rules::clamp(2.0, -1.0, 2.0), (2.0, 1.0, 0.0, 0.0));
    // A degenerate interval: x equal to both ends.
    assert_eq!(rules::clamp(3.0, 3.0, 3.0), (3.0, 1.0, 0.0, 0.0));
}

#[test]
fn max_and_min_away_from_ties() {
    let points = [(3.0, 1.0), (-2.0, 0.5), (0.25, -0.75), (-4.0, -5.0)];
    check_binary(
        "max",
        rules::max,
        f64::max,
        |x, y| if x >= y { (1.0, 0.0) } else { (0.0, 1.0) },
        &points,
    );
    check_binary(
        "min",
        rules::min,
        f64::min,
        |x, y| if x <= y { (1.0, 0.0) } else { (0.0, 1.0) },
        &points,
    );
}

#[test]
fn max_and_min_ties_go_to_the_first_argument() {
    for x in [-2.0, 0.0, 1.5] {
        assert_eq!(rules::max(x, x), (x, 1.0, 0.0), "max({x}, {x})");
        assert_eq!(rules::min(x, x), (x, 1.0, 0.0), "min({x}, {x})");
    }
    // Signed zeros compare equal: still a tie.
    assert_eq!(rules::max(-0.0, 0.0).1, 1.0);
    assert_eq!(rules::min(0.0, -0.0).1, 1.0);
}

#[test]
fn max_and_min_ignore_nan_like_std() {
    let (value, dx, dy) = rules::max(f64::NAN, 2.0);
    assert_eq!((value, dx, dy), (2.0, 0.0, 1.0));
    let (value, dx, dy) = rules::max(2.0, f64::NAN);
    assert_eq!((value, dx, dy), (2.0, 1.0, 0.0));
    let (value, dx, dy) = rules::min(f64::NAN, 2.0);
    assert_eq!((value, dx, dy), (2.0, 0.0, 1.0));
    let (value, dx, dy) = rules::min(2.0, f64::NAN);
    assert_eq!((value, dx, dy), (2.0, 1.0, 0.0));
}

#[test]
fn relu_and_abs_subgradients_at_zero() {
    assert_eq!(rules::relu(0.0), (0.0, 0.0));
    assert_eq!(rules::relu(-0.0).1, 0.0);
    assert_eq!(rules::abs(0.0), (0.0, 0.0));
    assert_eq!(rules::abs(-0.0), (0.0, 0.0));
    assert_bits(rules::abs(-0.0).0, 0.0, "abs(-0) is +0");
    // Just either side of the kink.
    assert_eq!(rules::relu(1e-300).1, 1.0);
    assert_eq!(rules::relu(-1e-300).1, 0.0);
    assert_eq!(rules::abs(1e-300).1, 1.0);
    assert_eq!(rules::abs(-1e-300).1, -1.0);
}

#[test]
fn piecewise_constant_rules_have_zero_partials_at_jumps() {
    assert_eq!(rules::floor(2.0), (2.0, 0.0));
    assert_eq!(rules::ceil(-3.0), (-3.0, 0.0));
    assert_eq!(rules::round(0.5), (1.0, 0.0));
    assert_eq!(rules::trunc(-1.0), (-1.0, 0.0));
    assert_eq!(rules::signum(0.0), (1.0, 0.0));
}

#[test]
fn exp_m1_partial_keeps_relative_precision_for_negative_x() {
    // e^x computed as exp_m1(x) + 1 would lose every digit here.
    for x in [-20.0, -40.0, -100.0] {
        let (value, partial) = rules::exp_m1(x);
        assert_bits(value, f64::exp_m1(x), "exp_m1 value");
        assert_close(partial, f64::exp(x), EXACT_TOL, &format!("exp_m1'({x})"));
        assert!(partial > 0.0);
    }
}

#[test]
fn inverse_trig_partials_near_the_ends_of_the_domain() {
    // Near |x| = 1 the factor 1 - x² cancels; its relative error stays below about 4e-9
    // (the worst case is 1 - |x| ≈ 2⁻²⁷). The reference uses d = 1 - |x| (exact) and
    // 1 - x² = d·(2 - d).
    for d in [1e-12, 2f64.powi(-27), 3e-8, 1e-4] {
        let x = 1.0 - d;
        let d = 1.0 - x;
        let root = (d * (2.0 - d)).sqrt();
        assert_close(rules::asin(x).1, 1.0 / root, 1e-8, "asin' near 1");
        assert_close(rules::asin(-x).1, 1.0 / root, 1e-8, "asin' near -1");
        assert_close(rules::acos(x).1, -1.0 / root, 1e-8, "acos' near 1");
        assert_close(
            rules::atanh(x).1,
            1.0 / (root * root),
            1e-8,
            "atanh' near 1",
        );
        let y = 1.0 + d;
        let e = y - 1.0;
        let root = (e * (2.0 + e)).sqrt();
        assert_close(rules::acosh(y).1, 1.0 / root, 1e-8, "acosh' near 1");
    }
}

#[test]
fn sigmoid_value_matches_its_definition() {
    for x in [-30.0, -2.0, 0.0, 0.5, 30.0] {
        assert_bits(rules::sigmoid(x).0, 1.0 / (1.0 + (-x).exp()), "sigmoid");
    }
    assert_eq!(rules::sigmoid(0.0), (0.5, 0.25));
}

#[test]
fn nan_propagates_through_values() {
    let nan = f64::NAN;
    let unary: [fn(f64) -> (f64, f64); 8] = [
        rules::exp,
        rules::ln,
        rules::sqrt,
        rules::tanh,
        rules::sin,
        rules::relu,
        rules::sigmoid,
        rules::abs,
    ];
    for rule in unary {
        assert!(rule(nan).0.is_nan());
    }
    assert!(rules::mul(nan, 1.0).0.is_nan());
    assert!(rules::powf(nan, 2.0).0.is_nan());
    // Outside the domain the partial is IEEE as well.
    let (value, partial) = rules::ln(-1.0);
    assert!(value.is_nan());
    assert_eq!(partial, -1.0);
    let (value, partial) = rules::sqrt(-1.0);
    assert!(value.is_nan() && partial.is_nan());
    // The `f64` rules take unsuffixed literals, and their results have methods.
    assert!(rules::ln(-1.0).0.is_nan());
    assert!((rules::tanh(0.5).1 - (1.0 - 0.5f64.tanh().powi(2))).abs() < 1e-15);
}

/// The same rules in `f32`: each value is the `f32` method's, bit for bit (so computed in
/// `f32`, not through `f64`), and each partial agrees with the `f64` rule's to `f32`
/// precision.
#[test]
fn f32_rules_compute_in_f32() {
    use autodiff_runtime::rules::generic;
    type Unary = (
        &'static str,
        fn(f32) -> (f32, f32),
        fn(f32) -> f32,
        fn(f64) -> (f64, f64),
    );
    let unary: [Unary; 22] = [
        ("recip", generic::recip, f32::recip, rules::recip),
        ("sqrt", generic::sqrt, f32::sqrt, rules::sqrt),
        ("cbrt", generic::cbrt, f32::cbrt, rules::cbrt),
        ("exp", generic::exp, f32::exp, rules::exp),
        ("exp2", generic::exp2, f32::exp2, rules::exp2),
        ("exp_m1", generic::exp_m1, f32::exp_m1, rules::exp_m1),
        ("ln", generic::ln, f32::ln, rules::ln),
        ("ln_1p", generic::ln_1p, f32::ln_1p, rules::ln_1p),
        ("log2", generic::log2, f32::log2, rules::log2),
        ("log10", generic::log10, f32::log10, rules::log10),
        ("sin", generic::sin, f32::sin, rules::sin),
        ("cos", generic::cos, f32::cos, rules::cos),
        ("tan", generic::tan, f32::tan, rules::tan),
        ("asin", generic::asin, f32::asin, rules::asin),
        ("atan", generic::atan, f32::atan, rules::atan),
        ("sinh", generic::sinh, f32::sinh, rules::sinh),
        ("tanh", generic::tanh, f32::tanh, rules::tanh),
        ("asinh", generic::asinh, f32::asinh, rules::asinh),
        ("atanh", generic::atanh, f32::atanh, rules::atanh),
        ("relu", generic::relu, F64Ext::relu, rules::relu),
        ("sigmoid", generic::sigmoid, F64Ext::sigmoid, rules::sigmoid),
        (
            "to_degrees",
            generic::to_degrees,
            f32::to_degrees,
            rules::to_degrees,
        ),
    ];
    for (name, rule, std_fn, rule64) in unary {
        for x in [0.1f32, 0.45, 0.7, 0.9] {
            let (value, partial) = rule(x);
            assert_eq!(value.to_bits(), std_fn(x).to_bits(), "{name}({x}) in f32");
            let (_, partial64) = rule64(f64::from(x));
            let what = format!("{name}'({x}) in f32 vs f64");
            assert_close(f64::from(partial), partial64, 1e-6, &what);
        }
    }
    let (value, d_x) = generic::powi(1.5f32, 3);
    assert_eq!((value, d_x), (1.5f32.powi(3), 3.0 * 1.5f32.powi(2)));
    let (value, d_x, d_y) = generic::powf(1.5f32, 2.5f32);
    assert_eq!(value.to_bits(), 1.5f32.powf(2.5).to_bits());
    assert_close(f64::from(d_x), 2.5 * 1.5f64.powf(1.5), 1e-6, "powf' base");
    assert_close(
        f64::from(d_y),
        1.5f64.powf(2.5) * 1.5f64.ln(),
        1e-6,
        "powf' exp",
    );
    let (value, d_x, d_y) = generic::div(1.0f32, 3.0f32);
    assert_eq!((value, d_x), (1.0f32 / 3.0, 1.0f32 / 3.0));
    assert_close(f64::from(d_y), -1.0 / 9.0, 1e-6, "div' denominator");
    assert_eq!(generic::max(2.0f32, 2.0f32), (2.0, 1.0, 0.0));
    assert_eq!(generic::clamp(5.0f32, 0.0, 1.0), (1.0, 0.0, 0.0, 1.0));
}
