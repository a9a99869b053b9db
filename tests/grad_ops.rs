//! Every operation of the table through `#[grad]`: the value is the original function's,
//! bit for bit, and the partials match the closed form and central finite differences.

mod common;

use autodiff::prelude::*;
use common::{assert_close, central_difference};

/// One module per unary operation, holding `f` (written with the operation) and the
/// generated `f_grad`, with the closed-form derivative and points inside the domain, away
/// from kinks.
macro_rules! unary_cases {
    ($($name:ident: |$x:ident| $body:expr, d = |$dx:ident| $derivative:expr, at [$($point:expr),+];)+) => {
        $(
            mod $name {
                use autodiff::prelude::*;
                #[grad]
                pub fn f($x: f64) -> f64 {
                    $body
                }
            }
        )+

        #[test]
        fn unary_operations_match_closed_form_and_finite_differences() {
            $(
                for point in [$($point),+] {
                    let name = stringify!($name);
                    let (value, partial) = $name::f_grad(point);
                    assert_eq!(value.to_bits(), $name::f(point).to_bits(), "{name} value at {point}");
                    let closed_form = { let $dx: f64 = point; $derivative };
                    assert_close(partial, closed_form, 1e-12, &format!("{name} closed form at {point}"));
                    let fd = central_difference(|p| $name::f(p[0]), &[point], 0);
                    assert_close(partial, fd, 1e-6, &format!("{name} finite difference at {point}"));
                }
            )+
        }
    };
}

unary_cases! {
    neg: |x| -x, d = |x| -1.0 + 0.0 * x, at [0.3, -2.0];
    recip: |x| x.recip(), d = |x| -1.0 / (x * x), at [0.7, -1.5, 3.0];
    powi3: |x| x.powi(3), d = |x| 3.0 * x * x, at [0.5, -1.2, 2.0];
    powi_neg2: |x| x.powi(-2), d = |x| -2.0 / (x * x * x), at [0.5, -1.2, 2.0];
    powf_const_exp: |x| x.powf(2.5), d = |x| 2.5 * x.powf(1.5), at [0.5, 1.2, 3.0];
    powf_const_base: |x| 2.5f64.powf(x), d = |x| 2.5f64.powf(x) * 2.5f64.ln(), at [0.5, -1.2, 3.0];
    sqrt: |x| x.sqrt(), d = |x| 0.5 / x.sqrt(), at [0.25, 2.0, 9.0];
    cbrt: |x| x.cbrt(), d = |x| 1.0 / (3.0 * x.cbrt().powi(2)), at [0.3, -2.0, 8.0];
    exp: |x| x.exp(), d = |x| x.exp(), at [0.0, -1.3, 2.2];
    exp2: |x| x.exp2(), d = |x| x.exp2() * std::f64::consts::LN_2, at [0.0, -1.3, 2.2];
    exp_m1: |x| x.exp_m1(), d = |x| x.exp(), at [1e-3, -1.3, 2.2];
    ln: |x| x.ln(), d = |x| 1.0 / x, at [0.2, 1.0, 7.5];
    ln_1p: |x| x.ln_1p(), d = |x| 1.0 / (1.0 + x), at [0.2, -0.5, 7.5];
    log2: |x| x.log2(), d = |x| 1.0 / (x * std::f64::consts::LN_2), at [0.2, 1.0, 7.5];
    log10: |x| x.log10(), d = |x| 1.0 / (x * std::f64::consts::LN_10), at [0.2, 1.0, 7.5];
    log_const_base: |x| x.log(3.0), d = |x| 1.0 / (x * 3.0f64.ln()), at [0.2, 1.0, 7.5];
    sin: |x| x.sin(), d = |x| x.cos(), at [0.0, 1.0, -2.5];
    cos: |x| x.cos(), d = |x| -x.sin(), at [0.0, 1.0, -2.5];
    tan: |x| x.tan(), d = |x| 1.0 / (x.cos() * x.cos()), at [0.0, 1.0, -0.5];
    asin: |x| x.asin(), d = |x| 1.0 / (1.0 - x * x).sqrt(), at [0.0, 0.5, -0.8];
    acos: |x| x.acos(), d = |x| -1.0 / (1.0 - x * x).sqrt(), at [0.0, 0.5, -0.8];
    atan: |x| x.atan(), d = |x| 1.0 / (1.0 + x * x), at [0.0, 2.0, -0.8];
    sinh: |x| x.sinh(), d = |x| x.cosh(), at [0.0, 1.5, -0.8];
    cosh: |x| x.cosh(), d = |x| x.sinh(), at [0.0, 1.5, -0.8];
    tanh: |x| x.tanh(), d = |x| 1.0 / (x.cosh() * x.cosh()), at [0.0, 1.5, -0.8];
    asinh: |x| x.asinh(), d = |x| 1.0 / (x * x + 1.0).sqrt(), at [0.0, 1.5, -0.8];
    acosh: |x| x.acosh(), d = |x| 1.0 / (x * x - 1.0).sqrt(), at [1.5, 3.0];
    atanh: |x| x.atanh(), d = |x| 1.0 / (1.0 - x * x), at [0.0, 0.5, -0.8];
    abs: |x| x.abs(), d = |x| x.signum(), at [1.5, -0.8];
    relu: |x| x.relu(), d = |x| if x > 0.0 { 1.0 } else { 0.0 }, at [1.5, -0.8];
    sigmoid: |x| x.sigmoid(), d = |x| x.sigmoid() * (1.0 - x.sigmoid()), at [0.0, 1.5, -0.8];
    to_degrees: |x| x.to_degrees(), d = |x| 180.0 / std::f64::consts::PI + 0.0 * x, at [0.3];
    to_radians: |x| x.to_radians(), d = |x| std::f64::consts::PI / 180.0 + 0.0 * x, at [30.0];
    floor: |x| x.floor() + x, d = |x| 1.0 + 0.0 * x, at [1.3, -0.7];
    ceil: |x| x.ceil() * x, d = |x| x.ceil(), at [1.3, -0.7];
    round: |x| x.round() * x, d = |x| x.round(), at [1.3, -0.7];
    trunc: |x| x.trunc() * x, d = |x| x.trunc(), at [1.3, -0.7];
    signum: |x| x.signum() * x, d = |x| x.signum(), at [1.3, -0.7];
    fract: |x| x.fract() * x, d = |x| 2.0 * x - x.trunc(), at [1.3, -0.7, 5.25];
    path_form: |x| f64::tanh(x) + F64Ext::relu(x), d = |x| 1.0 / (x.cosh() * x.cosh()) + 1.0, at [0.4];
}

// Binary and ternary operations, both (all) arguments differentiated.

#[grad]
fn add(x: f64, y: f64) -> f64 {
    x + y
}
#[grad]
fn sub(x: f64, y: f64) -> f64 {
    x - y
}
#[grad]
fn mul(x: f64, y: f64) -> f64 {
    x * y
}
#[grad]
fn div(x: f64, y: f64) -> f64 {
    x / y
}
#[grad]
fn powf(x: f64, y: f64) -> f64 {
    x.powf(y)
}
#[grad]
fn log(x: f64, y: f64) -> f64 {
    x.log(y)
}
#[grad]
fn atan2(y: f64, x: f64) -> f64 {
    y.atan2(x)
}
#[grad]
fn max(x: f64, y: f64) -> f64 {
    x.max(y)
}
#[grad]
fn min(x: f64, y: f64) -> f64 {
    x.min(y)
}
#[grad]
fn hypot(x: f64, y: f64) -> f64 {
    x.hypot(y)
}
#[grad]
fn mul_add(x: f64, a: f64, b: f64) -> f64 {
    x.mul_add(a, b)
}
#[grad]
fn clamp(x: f64, lo: f64, hi: f64) -> f64 {
    x.clamp(lo, hi)
}
#[grad]
fn rem(x: f64, m: f64) -> f64 {
    x % m
}

#[grad]
fn rem_euclid(x: f64, m: f64) -> f64 {
    x.rem_euclid(m)
}

#[grad]
fn div_euclid(x: f64, m: f64) -> f64 {
    x.div_euclid(m) * x
}

#[grad]
fn copysign(x: f64, s: f64) -> f64 {
    x.copysign(s) * s
}

#[grad]
fn path_form_binary(x: f64, y: f64) -> f64 {
    f64::powf(x, y) + f64::max(x, y) + f64::atan2(x, y)
}

fn check2(
    name: &str,
    f: fn(f64, f64) -> f64,
    g: fn(f64, f64) -> (f64, f64, f64),
    closed: impl Fn(f64, f64) -> (f64, f64),
    points: &[(f64, f64)],
) {
    for &(x, y) in points {
        let (value, dx, dy) = g(x, y);
        assert_eq!(
            value.to_bits(),
            f(x, y).to_bits(),
            "{name} value at ({x}, {y})"
        );
        let (cx, cy) = closed(x, y);
        assert_close(
            dx,
            cx,
            1e-12,
            &format!("{name} ∂x closed form at ({x}, {y})"),
        );
        assert_close(
            dy,
            cy,
            1e-12,
            &format!("{name} ∂y closed form at ({x}, {y})"),
        );
        let wrap = |p: &[f64]| f(p[0], p[1]);
        assert_close(
            dx,
            central_difference(wrap, &[x, y], 0),
            1e-6,
            &format!("{name} ∂x fd"),
        );
        assert_close(
            dy,
            central_difference(wrap, &[x, y], 1),
            1e-6,
            &format!("{name} ∂y fd"),
        );
    }
}

#[test]
fn binary_operations_match_closed_form_and_finite_differences() {
    let pts = [(1.5, 0.5), (-2.0, 3.0), (0.7, -1.1)];
    let positive = [(1.5, 0.5), (2.0, 3.0), (0.7, 1.1)];
    check2("add", add, add_grad, |_, _| (1.0, 1.0), &pts);
    check2("sub", sub, sub_grad, |_, _| (1.0, -1.0), &pts);
    check2("mul", mul, mul_grad, |x, y| (y, x), &pts);
    check2("div", div, div_grad, |x, y| (1.0 / y, -x / (y * y)), &pts);
    check2(
        "powf",
        powf,
        powf_grad,
        |x, y| (y * x.powf(y - 1.0), x.powf(y) * x.ln()),
        &positive,
    );
    check2(
        "log",
        log,
        log_grad,
        |x, b| (1.0 / (x * b.ln()), -x.ln() / (b * b.ln() * b.ln())),
        &[(1.5, 2.5), (2.0, 3.0), (0.7, 10.0)],
    );
    check2(
        "atan2",
        atan2,
        atan2_grad,
        |y, x| (x / (x * x + y * y), -y / (x * x + y * y)),
        &pts,
    );
    check2(
        "max",
        max,
        max_grad,
        |x, y| if x >= y { (1.0, 0.0) } else { (0.0, 1.0) },
        &pts,
    );
    check2(
        "min",
        min,
        min_grad,
        |x, y| if x <= y { (1.0, 0.0) } else { (0.0, 1.0) },
        &pts,
    );
    check2(
        "hypot",
        hypot,
        hypot_grad,
        |x, y| (x / x.hypot(y), y / x.hypot(y)),
        &pts,
    );
    // The remainders are `x - q·m` with the quotient `q` constant between the jumps:
    // truncated for `%` (of x's sign), floored for `rem_euclid` (of the sign that keeps the
    // remainder non-negative). Points away from the jumps, of every sign.
    let remainders = [
        (7.3, 2.0),
        (-7.3, 2.0),
        (7.3, -2.0),
        (-7.3, -2.0),
        (0.4, 3.0),
    ];
    check2(
        "rem",
        rem,
        rem_grad,
        |x, m| (1.0, -(x / m).trunc()),
        &remainders,
    );
    check2(
        "rem_euclid",
        rem_euclid,
        rem_euclid_grad,
        |x, m| (1.0, -x.div_euclid(m)),
        &remainders,
    );
    check2(
        "div_euclid",
        div_euclid,
        div_euclid_grad,
        |x, m| (x.div_euclid(m), 0.0),
        &remainders,
    );
    check2(
        "copysign",
        copysign,
        copysign_grad,
        |x, s| (x.signum() * s.signum() * s, x.abs().copysign(s)),
        &[(1.5, 0.5), (-2.0, 3.0), (0.7, -1.1), (-0.7, -1.1)],
    );
    check2(
        "path form",
        path_form_binary,
        path_form_binary_grad,
        |x, y| {
            let r2 = x * x + y * y;
            (
                y * x.powf(y - 1.0) + f64::from(u8::from(x >= y)) + y / r2,
                x.powf(y) * x.ln() + f64::from(u8::from(x < y)) - x / r2,
            )
        },
        &positive,
    );
}

#[test]
fn ternary_operations() {
    for (x, a, b) in [(1.5, -2.0, 0.25), (-0.3, 0.7, 4.0)] {
        let (value, dx, da, db) = mul_add_grad(x, a, b);
        assert_eq!(value.to_bits(), mul_add(x, a, b).to_bits());
        assert_eq!((dx, da, db), (a, x, 1.0));
    }
    // Inside the interval (ends included) the adjoint goes to x; outside, to the bound hit.
    assert_eq!(clamp_grad(0.5, 0.0, 1.0).0, clamp(0.5, 0.0, 1.0));
    assert_eq!(clamp_grad(0.5, 0.0, 1.0), (0.5, 1.0, 0.0, 0.0));
    assert_eq!(clamp_grad(1.0, 0.0, 1.0), (1.0, 1.0, 0.0, 0.0));
    assert_eq!(clamp_grad(-3.0, 0.0, 1.0), (0.0, 0.0, 1.0, 0.0));
    assert_eq!(clamp_grad(3.0, 0.0, 1.0), (1.0, 0.0, 0.0, 1.0));
}

#[test]
fn subgradients_at_kinks_are_the_documented_ones() {
    assert_eq!(relu::f_grad(0.0), (0.0, 0.0));
    assert_eq!(abs::f_grad(0.0), (0.0, 0.0));
    // A tie gives the whole adjoint to the first argument.
    assert_eq!(max_grad(2.0, 2.0), (2.0, 1.0, 0.0));
    assert_eq!(min_grad(2.0, 2.0), (2.0, 1.0, 0.0));
}

#[test]
fn ieee_semantics_are_kept() {
    // The value is the original's even outside the domain; NaN and infinities propagate.
    let (value, partial) = ln::f_grad(-1.0);
    assert!(value.is_nan() && partial.is_nan() == (-1.0f64).recip().is_nan());
    let (value, _) = ln::f_grad(0.0);
    assert_eq!(value, f64::NEG_INFINITY);
    let (value, dx, _) = div_grad(1.0, 0.0);
    assert_eq!(value, f64::INFINITY);
    assert_eq!(dx, f64::INFINITY);
    let (value, dx, dy) = mul_grad(f64::NAN, 2.0);
    assert!(value.is_nan() && dy.is_nan());
    assert_eq!(dx, 2.0);
}

/// The difference of two angles wrapped into `[-π, π)`, squared: what a controller or a
/// pose estimator minimises. Forward mode and second order through `rem_euclid`.
#[grad(jvp, hvp, hessian)]
fn angle_error(a: f64, b: f64) -> f64 {
    let d = (a - b + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI;
    d * d
}

/// The phase of `t` in a cycle of length `period`, through `%=`.
#[grad(jvp, hvp)]
fn phase(t: f64, period: f64) -> f64 {
    let mut p = t;
    p %= period;
    (p / period * std::f64::consts::TAU).sin()
}

#[test]
fn remainders_in_every_mode() {
    use std::f64::consts::{PI, TAU};
    // Wrapped once up, once down, and not at all.
    for (a, b) in [(3.0, -3.0), (-3.0, 3.0), (0.5, 0.2), (7.0, 0.1)] {
        let d = (a - b + PI).rem_euclid(TAU) - PI;
        assert!((-PI..PI).contains(&d));
        let (value, da, db) = angle_error_grad(a, b);
        assert_eq!(value.to_bits(), angle_error(a, b).to_bits());
        assert_close(da, 2.0 * d, 1e-12, "∂/∂a");
        assert_close(db, -2.0 * d, 1e-12, "∂/∂b");
        let wrap = |p: &[f64]| angle_error(p[0], p[1]);
        assert_close(da, central_difference(wrap, &[a, b], 0), 1e-6, "∂/∂a fd");
        let (value, tangent) = angle_error_jvp(a, b, 0.3, -0.7);
        assert_eq!(value.to_bits(), angle_error(a, b).to_bits());
        assert_close(tangent, 2.0 * d * (0.3 + 0.7), 1e-12, "jvp");
        let (_, _, _, ha, hb) = angle_error_hvp(a, b, 1.0, 0.0);
        assert_eq!((ha, hb), (2.0, -2.0));
        let (_, ga, gb, h) = angle_error_hessian(a, b);
        assert_eq!((ga, gb), (da, db));
        assert_eq!(h, [[2.0, -2.0], [-2.0, 2.0]]);
    }
    for (t, period) in [(7.3, 2.0), (-7.3, 2.0), (0.4, 3.0)] {
        let q = (t / period).trunc();
        let angle = (t - q * period) / period * TAU;
        let (value, dt, dp) = phase_grad(t, period);
        assert_eq!(value.to_bits(), phase(t, period).to_bits());
        assert_close(dt, angle.cos() * TAU / period, 1e-12, "∂/∂t");
        assert_close(
            dp,
            -angle.cos() * TAU * t / (period * period),
            1e-12,
            "∂/∂period",
        );
        let wrap = |p: &[f64]| phase(p[0], p[1]);
        assert_close(
            dp,
            central_difference(wrap, &[t, period], 1),
            1e-6,
            "∂/∂period fd",
        );
        let (_, tangent) = phase_jvp(t, period, 1.0, 1.0);
        assert_close(tangent, dt + dp, 1e-12, "jvp");
        // H·e_t: the derivative of the gradient along t, against differences of _grad.
        let (_, _, _, ht, hp) = phase_hvp(t, period, 1.0, 0.0);
        let h = 1e-6;
        let (_, dt_hi, dp_hi) = phase_grad(t + h, period);
        let (_, dt_lo, dp_lo) = phase_grad(t - h, period);
        assert_close(ht, (dt_hi - dt_lo) / (2.0 * h), 1e-6, "H·e_t, t");
        assert_close(hp, (dp_hi - dp_lo) / (2.0 * h), 1e-6, "H·e_t, period");
    }
}
