//! IEEE edges: NaN and infinities propagate through the gradient as through the original
//! function; domain edges (`ln 0`, `√0`, `powf` of a negative base, division by zero)
//! give the IEEE answers of the closed-form partials; and a parameter whose path to the
//! output avoids the edge keeps its exact partial.
//!
//! The reference for each partial is its closed form, written out here and evaluated in
//! `f64` at the same point; the value is compared with the original function's, bit for
//! bit. `Tape`, which shares the rules, must agree bit for bit as well.

use autodiff::prelude::*;

/// The same `f64`, or both NaN (`0.0` and `-0.0` are the same).
fn same(actual: f64, expected: f64) -> bool {
    actual == expected || (actual.is_nan() && expected.is_nan())
}

fn check(what: &str, actual: f64, expected: f64) {
    assert!(
        same(actual, expected),
        "{what}: got {actual:?}, expected {expected:?}"
    );
}

/// The gradient of a two-parameter function at a point: value bit for bit against the
/// original, partials against their closed forms.
fn check2(what: &str, original: f64, grad: (f64, f64, f64), dx: f64, dy: f64) {
    assert!(
        grad.0.to_bits() == original.to_bits() || (grad.0.is_nan() && original.is_nan()),
        "{what}: the value {:?} is not the original's {original:?}",
        grad.0
    );
    check(&format!("{what}: ∂x"), grad.1, dx);
    check(&format!("{what}: ∂y"), grad.2, dy);
}

#[grad]
fn log_plus(x: f64, y: f64) -> f64 {
    x.ln() + y * y
}

#[test]
fn ln_at_zero_and_below() {
    for x in [
        0.0,
        -0.0,
        -1.0,
        f64::MIN_POSITIVE / 4.0,
        f64::INFINITY,
        f64::NAN,
    ] {
        let y = 1.5;
        check2(
            &format!("ln at {x:?}"),
            log_plus(x, y),
            log_plus_grad(x, y),
            1.0 / x,
            2.0 * y,
        );
    }
    // -∞ at 0, +∞ slope; NaN below 0, with the slope 1/x all the same (the rule does
    // not look at the domain); the unrelated `y` keeps 2y throughout.
    assert_eq!(
        log_plus_grad(0.0, 1.5),
        (f64::NEG_INFINITY, f64::INFINITY, 3.0)
    );
    let (value, dx, dy) = log_plus_grad(-1.0, 1.5);
    assert!(value.is_nan());
    assert_eq!((dx, dy), (-1.0, 3.0));
}

#[grad]
fn sqrt_plus(x: f64, y: f64) -> f64 {
    x.sqrt() + 3.0 * y
}

#[test]
fn sqrt_at_zero_and_below() {
    for x in [0.0, -0.0, -4.0, 4.0, f64::INFINITY] {
        check2(
            &format!("sqrt at {x:?}"),
            sqrt_plus(x, 2.0),
            sqrt_plus_grad(x, 2.0),
            1.0 / (2.0 * x.sqrt()),
            3.0,
        );
    }
    assert_eq!(sqrt_plus_grad(0.0, 2.0), (6.0, f64::INFINITY, 3.0));
}

#[grad]
fn powers_of_a_negative_base(x: f64, y: f64) -> f64 {
    x.powf(2.0) + x.powf(3.0) + x.powf(0.0) + y
}

#[grad]
fn fractional_power(x: f64, y: f64) -> f64 {
    x.powf(0.5) + y
}

#[grad]
fn power_with_an_active_exponent(x: f64, c: f64) -> f64 {
    x.powf(c)
}

#[test]
fn powf_of_a_negative_base() {
    // A constant exponent never evaluates ln(x): the partial is c·x^(c-1), finite.
    let x = -3.0;
    check2(
        "integer exponents",
        powers_of_a_negative_base(x, 1.0),
        powers_of_a_negative_base_grad(x, 1.0),
        2.0 * x + 3.0 * x * x,
        1.0,
    );
    assert_eq!(powers_of_a_negative_base_grad(x, 1.0), (-16.0, 21.0, 1.0));
    // At 0, x^0 has slope 0, not 0·0⁻¹ = NaN; x² has slope 0 and x³ too.
    assert_eq!(powers_of_a_negative_base_grad(0.0, 1.0), (2.0, 0.0, 1.0));
    // A fractional power of a negative number is NaN, and so is its slope; `y` is not
    // affected.
    check2(
        "x^0.5 at -4",
        fractional_power(-4.0, 1.0),
        fractional_power_grad(-4.0, 1.0),
        0.5 * (-4.0_f64).powf(-0.5),
        1.0,
    );
    // With an active exponent, ∂/∂c = xᶜ·ln x is NaN for x < 0, as its closed form is;
    // ∂/∂x is still c·x^(c-1).
    check2(
        "x^c at -2, 2",
        power_with_an_active_exponent(-2.0, 2.0),
        power_with_an_active_exponent_grad(-2.0, 2.0),
        -4.0,
        4.0 * (-2.0_f64).ln(),
    );
    assert!(power_with_an_active_exponent_grad(-2.0, 2.0).2.is_nan());
}

#[grad]
fn powi_edges(x: f64, y: f64) -> f64 {
    x.powi(0) + x.powi(1) + x.powi(-1) + y
}

#[test]
fn powi_at_zero() {
    // x⁰ has slope 0 and x¹ slope 1 at 0; 1/x has slope -∞.
    let (value, dx, dy) = powi_edges_grad(0.0, 1.0);
    assert_eq!((value, dx, dy), (f64::INFINITY, f64::NEG_INFINITY, 1.0));
    check2(
        "powi at 2",
        powi_edges(2.0, 1.0),
        powi_edges_grad(2.0, 1.0),
        1.0 - 0.25,
        1.0,
    );
}

#[grad]
fn quotient(x: f64, y: f64, z: f64) -> f64 {
    x / y + z
}

#[test]
fn division_by_zero() {
    for (x, y) in [
        (1.0, 0.0),
        (1.0, -0.0),
        (-1.0, 0.0),
        (0.0, 0.0),
        (f64::INFINITY, 0.0),
        (1.0, f64::INFINITY),
        (f64::INFINITY, f64::INFINITY),
    ] {
        let (value, dx, dy, dz) = quotient_grad(x, y, 5.0);
        let what = format!("{x:?} / {y:?}");
        assert!(same(value, quotient(x, y, 5.0)), "{what}: value {value:?}");
        check(&format!("{what}: ∂x"), dx, 1.0 / y);
        check(&format!("{what}: ∂y"), dy, -(x / y) / y);
        check(&format!("{what}: ∂z"), dz, 1.0);
    }
    assert_eq!(
        quotient_grad(1.0, 0.0, 5.0),
        (f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, 1.0)
    );
}

#[grad]
fn product_and_sine(x: f64, y: f64) -> f64 {
    x * y + y.sin()
}

#[grad]
fn exp_and_tanh(x: f64, y: f64) -> f64 {
    x.exp() + y.tanh()
}

#[test]
fn nan_and_infinite_inputs_propagate() {
    // A NaN x makes the value and ∂y NaN; ∂x = y does not involve x.
    let (value, dx, dy) = product_and_sine_grad(f64::NAN, 2.0);
    assert!(value.is_nan() && dy.is_nan());
    assert_eq!(dx, 2.0);
    // An infinite x: ∂x = y, ∂y = x + cos y = ∞.
    assert_eq!(
        product_and_sine_grad(f64::INFINITY, 2.0),
        (f64::INFINITY, 2.0, f64::INFINITY)
    );
    // Overflow: e¹⁰⁰⁰ = ∞ and so is its slope; tanh(∞) = 1 with slope 1 - 1² = 0.
    check2(
        "exp overflow, tanh at ∞",
        exp_and_tanh(1000.0, f64::INFINITY),
        exp_and_tanh_grad(1000.0, f64::INFINITY),
        f64::INFINITY,
        0.0,
    );
    // e^-∞ = 0 with slope 0; tanh(NaN) is NaN with a NaN slope.
    let (value, dx, dy) = exp_and_tanh_grad(f64::NEG_INFINITY, f64::NAN);
    assert!(value.is_nan() && dy.is_nan());
    assert_eq!(dx, 0.0);
}

#[grad]
fn guarded_log(x: f64, y: f64) -> f64 {
    if x > 0.0 {
        x.ln()
    } else {
        y
    }
}

#[grad]
fn stopped_log(x: f64, y: f64) -> f64 {
    stop_gradient(x.ln()) + y
}

#[grad]
fn log_of_one_element(w: [f64; 3]) -> f64 {
    w[0].ln() + w[1] + w[2] * w[2]
}

#[grad]
fn sum_of_logs(w: &[f64]) -> f64 {
    w.iter().map(|w| w.ln()).sum::<f64>()
}

#[test]
fn an_edge_does_not_reach_other_parameters() {
    // The branch not taken is not differentiated: ∂x is exactly 0, not 0·(1/0).
    assert_eq!(guarded_log_grad(0.0, 2.0), (2.0, 0.0, 1.0));
    assert_eq!(guarded_log_grad(-1.0, 2.0), (2.0, 0.0, 1.0));
    // A stopped value has no partial at all.
    assert_eq!(stopped_log_grad(0.0, 2.0), (f64::NEG_INFINITY, 0.0, 1.0));
    // In an array, only the element at the edge gets ∞.
    let (value, dw) = log_of_one_element_grad([0.0, 1.0, 3.0]);
    assert_eq!((value, dw), (f64::NEG_INFINITY, [f64::INFINITY, 1.0, 6.0]));
    // In a loop of run-time length, the same.
    let w = [2.0, 0.0, 4.0, -1.0];
    let (value, dw) = sum_of_logs_grad(&w);
    assert!(value.is_nan(), "ln(-1) makes the sum NaN");
    assert_eq!(dw, vec![0.5, f64::INFINITY, 0.25, -1.0]);
}

#[grad]
fn max_of_log(x: f64, y: f64) -> f64 {
    x.ln().max(y)
}

#[grad]
fn sqrt_of_square(x: f64) -> f64 {
    (x * x).sqrt()
}

#[test]
fn zero_adjoint_times_infinite_partial_is_nan_outside_skipped_loops() {
    // The documented choice (the guide's "Semantics"): in straight-line code the sweep
    // multiplies, so an infinite partial behind a zero adjoint gives 0·∞ = NaN, as in the
    // chain rule written out by hand; the parameter that won the max is exact.
    let (value, dx, dy) = max_of_log_grad(0.0, 2.0);
    assert_eq!(value, 2.0);
    assert!(dx.is_nan(), "∂x = 0 · (1/0)");
    assert_eq!(dy, 1.0);
    // √(x²) at 0: (1/(2·0))·2x = ∞·0.
    let (value, dx) = sqrt_of_square_grad(0.0);
    assert_eq!(value, 0.0);
    assert!(dx.is_nan());
}

/// A value overwritten before anything reads it.
#[grad]
#[allow(unused_assignments)]
fn overwritten(x: f64) -> f64 {
    let mut y = x.ln();
    y = 2.0 * x;
    y + 1.0
}

/// A local nothing reads, and `hypot` at the origin feeding a value that is overwritten
/// (the reduced form of a random program's, where `Tape` and `#[grad]` disagreed).
#[grad]
#[allow(unused_variables, unused_assignments)]
fn unread_values(x: f64, zero: f64) -> f64 {
    let never_read = (x - 1.0).sqrt();
    let mut s = zero.hypot(zero.max(x - 3.0)).cos();
    s = x.sin();
    s * 3.0
}

#[test]
fn a_value_nothing_reads_passes_nothing_back() {
    // The overwritten `ln x` at x = 0 has slope ∞ but adjoint 0 by construction: the sweep
    // leaves its expression out, as `Tape` leaves out nodes the output does not depend
    // on, so ∂x is 2, not 2 + 0·∞ = NaN.
    let (value, dx) = overwritten_grad(0.0);
    assert_eq!((value, dx), (1.0, 2.0));
    let tape = Tape::new();
    let tx = tape.var(0.0);
    let _ = tx.ln();
    let out = 2.0 * tx + 1.0;
    assert_eq!(out.gradient().wrt(tx), dx);
    // √(x - 1) at 0 is NaN with a NaN slope, and hypot(0, max(0, x - 3)) at x = 1 has
    // NaN slopes (0/0): neither value is read, so neither reaches ∂x or ∂zero.
    let (value, dx, dzero) = unread_values_grad(1.0, 0.0);
    assert_eq!(value, 3.0 * 1f64.sin());
    assert_eq!(dx, 3.0 * 1f64.cos());
    assert_eq!(dzero, 0.0);
    // Where the value is read, its edge shows as before: ∂x of ln at 0 is ∞.
    assert_eq!(log_plus_grad(0.0, 1.0).1, f64::INFINITY);
}

#[test]
fn tape_agrees_bit_for_bit_at_the_edges() {
    for (x, y) in [
        (0.0, 1.5),
        (-1.0, 1.5),
        (f64::NAN, 2.0),
        (f64::INFINITY, -0.5),
    ] {
        let tape = Tape::new();
        let (tx, ty) = (tape.var(x), tape.var(y));
        let out = tx.ln() + ty * ty;
        let gradient = out.gradient();
        let (value, dx, dy) = log_plus_grad(x, y);
        let what = format!("ln at ({x:?}, {y:?})");
        assert!(same(out.value(), value), "{what}: value");
        assert!(same(gradient.wrt(tx), dx), "{what}: ∂x");
        assert!(same(gradient.wrt(ty), dy), "{what}: ∂y");

        let tape = Tape::new();
        let (tx, ty) = (tape.var(x), tape.var(y));
        let out = tx / ty + 5.0;
        let gradient = out.gradient();
        let (value, dx, dy, _) = quotient_grad(x, y, 5.0);
        let what = format!("{x:?} / {y:?}");
        assert!(same(out.value(), value), "{what}: value");
        assert!(same(gradient.wrt(tx), dx), "{what}: ∂x");
        assert!(same(gradient.wrt(ty), dy), "{what}: ∂y");
    }
}

#[grad]
fn powers(x: f64) -> f64 {
    x.powi(3) + x.powi(7) + x.powi(13) - x.powi(-5)
}

/// The value is the original's bit for bit when both run with arguments known at run time
/// (here through `black_box`). `powi` is the operation where this is most at risk: LLVM
/// evaluates a `powi` of constants at compile time, correctly rounded, but a run-time
/// `powi` by repeated multiplication, so the two differ in the last bit for most
/// arguments (see the guide's "Semantics" for the precise limit).
#[test]
fn powi_value_is_the_originals_for_arguments_known_at_run_time() {
    use std::hint::black_box;
    for k in 0..4_000 {
        let x = 0.25 + f64::from(k) * 1e-3;
        let original = powers(black_box(x));
        let (value, _) = powers_grad(black_box(x));
        assert_eq!(value.to_bits(), original.to_bits(), "at {x}");
    }
}

#[grad]
fn filtered_sum(w: &[f64; 3], c: f64) -> f64 {
    let s = w.iter().filter(|x| **x > c).map(|x| x * x).sum::<f64>();
    -0.5 * s
}

#[grad]
fn sum_of_a_slice(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>()
}

/// A sum starts from `-0.0`, as the standard library's does: the sum of nothing, or of
/// `-0.0`s only, is `-0.0`, and the sign reaches the value as in the original (found by
/// the random programs: `-0.43 * s` with an empty sum gave `-0.0` where the original
/// gives `0.0`).
#[test]
fn a_sum_of_nothing_is_negative_zero_as_in_std() {
    for c in [10.0, 0.5, -10.0] {
        let w = [0.25, 0.75, -0.0];
        let (value, dw, dc) = filtered_sum_grad(&w, c);
        let original = filtered_sum(&w, c);
        assert_eq!(value.to_bits(), original.to_bits(), "c = {c}");
        for i in 0..3 {
            let expected = if w[i] > c { -w[i] } else { 0.0 };
            check(&format!("c = {c}: ∂w[{i}]"), dw[i], expected);
        }
        check(&format!("c = {c}: ∂c"), dc, 0.0);
    }
    for xs in [&[][..], &[-0.0], &[-0.0, -0.0], &[0.0, -0.0]] {
        let (value, _) = sum_of_a_slice_grad(xs);
        assert_eq!(value.to_bits(), sum_of_a_slice(xs).to_bits(), "{xs:?}");
    }
    assert_eq!(sum_of_a_slice_grad(&[]).0.to_bits(), (-0.0f64).to_bits());
}
