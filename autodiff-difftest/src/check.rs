//! The check of a batch of generated programs, at several random points each:
//!
//! - the value of `_grad` is the original function's, bit for bit, and so is the `Tape`
//!   twin's (in a release build, for a program that calls `powi`, which LLVM may evaluate
//!   at compile time with another rounding, to a relative 1e-12 of the largest magnitude
//!   of a variable);
//! - the partials equal the `Tape` twin's to a relative 1e-9 (the order in which
//!   contributions are added may differ: calls are differentiated through `_grad` and
//!   `_vjp`, which multiply out inside the callee);
//! - the partials agree with central finite differences where those can be trusted: the
//!   point is resampled when it lies within 1e-3 of a branch boundary or a kink (the
//!   `Tape` twin measures that distance), and a coordinate is skipped when differences of
//!   two step sizes disagree. Not for a program whose `stop_gradient` holds a value
//!   constant, which the difference quotient would move.
//!
//! A struct parameter's partial is flattened with `to_flat_vec` (the order of the
//! `Differentiable` flat view), its `Tape` twin's leaves field by field, and finite
//! differences move its numbers through `copy_from_flat`.
//!
//! A program in `f32` is checked against its `Tape` twin, which computes in `f64` at the
//! same (`f32`) arguments: its value bit for bit against the `f32` original only, against
//! the twin to a relative 1e-3 of the largest magnitude of a variable, its partials to a
//! relative 1e-4 of the largest partial or variable, and against finite differences of
//! the `f32` original with steps 400 times as large (and a relative tolerance of 1e-2); its points
//! keep 1e-2 from kinks and boundaries, and magnitudes below 1e3. A point where the
//! `f32` original itself (not its gradient) strays from the twin's value by more than
//! that tolerance, or where the twin's partials move by more than a twentieth of theirs
//! when each argument moves by one `f32` rounding of the largest variable, is resampled,
//! and counted: there the
//! program is too ill-conditioned for
//! `f32` to follow `f64` (a loop that feeds a chaotic map back into itself, `c +=
//! atanh(0.9 sin c) / (sigmoid(c) + 0.1)` eight times from a constant, ends at another
//! `c` and takes another branch), and a comparison with the twin would measure the
//! program rather than `#[grad]`.
//!
//! A program marked `#[grad(reassociate)]` (one in six, each with a sum its gradient adds
//! in lanes and, but for long programs, a sample loop of random statements holding a
//! loop, whose gradient it preaccumulates) may return a `_grad` value that differs from
//! the original's in the last bits: that value is compared with the original's (which the
//! `Tape` twin still equals bit for bit) to a relative 1e-12 of the largest magnitude of
//! a variable, or, where the program amplifies its roundings more, to four times the
//! rounding error the twin estimates from its gradient (`Var::rounding_error`; `f32`:
//! the tolerance of its twin, 1e-3); its partials are checked as
//! above. How many of those programs' values differ in their bits is counted, and a batch
//! with none fails.
//!
//! That every program compiles is the first check: a program the generator writes stays
//! inside the documented subset, so a rejection fails the build of the test.

use crate::{ArgValue, Args, Case, Spec, TapeRun};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Points checked per program.
const POINTS: usize = 3;
/// Tries to find each point away from kinks and overflow.
const TRIES: usize = 12;
/// The largest magnitude of a variable at a point that is used: beyond it, a program
/// can cancel terms so large (`b + hypot(x, b)` with `b` near -10⁷, both found by the
/// generator) that rounding, amplified by the chain rule, leaves no correct digit in the
/// partials of either engine or in finite differences.
const LARGEST: f64 = 1e5;
/// The smallest distance to a kink or branch boundary at a point that is used.
const MARGIN: f64 = 1e-3;

/// The same limits for programs in `f32`, whose own rounding (a relative 6e-8 of the
/// largest value, per operation) must neither move a branch the `f64` twin takes nor
/// swamp the comparison.
const LARGEST_F32: f64 = 1e3;
/// See [`LARGEST_F32`].
const MARGIN_F32: f64 = 1e-2;
/// The largest partial at a point of an `f32` program that is used: a larger one means
/// the program amplifies rounding that much, and `f32`'s (a relative 6e-8 per operation,
/// of intermediate values up to [`LARGEST_F32`]) then leaves no comparable digits (seed
/// 31's program 25, ten times `x -= sin(c - x).to_degrees()`: partials of 5e5 that its
/// `f32` and `f64` evaluations put 5% apart).
const PARTIAL_F32: f64 = 1e4;
/// Tolerance of an `f32` program's value against its `f64` twin's, relative to the
/// largest magnitude of a variable (seen up to 4e-5).
const VALUE_F32: f64 = 1e-3;
/// Tolerance of an `f32` program's partials against its `f64` twin's, relative to the
/// largest partial or, if larger, the largest magnitude of a variable (seen up to 3e-6
/// of the largest partial; seed 102's program 309, whose partial goes through the sine
/// of an `f32` near 70, 1.9e-4 of it and 1.6e-6 of that magnitude).
const PARTIALS_F32: f64 = 1e-4;
/// One rounding of `f32`, relative (2⁻²⁴).
const F32_ROUNDING: f64 = 6e-8;
/// The rounding an `f32` program's value may carry, relative to its magnitude or that of
/// its largest variable: 16 roundings.
const F32_NOISE: f64 = 16.0 * F32_ROUNDING;
/// How far an `f32` program's `f64` twin may move its partials, relative to the scale of
/// [`PARTIALS_F32`], when each number of the arguments moves by one `f32` rounding of the
/// largest variable: farther, the program amplifies roundings so much that its own,
/// through many operations, reach the tolerance, and the point is resampled. Seed 505's
/// program 1861, three times `x1 += (x1 * x1 + 0.5).powf((x0 * PI).atan())`, and seed
/// 506's program 590, `sin` and `cos` of numbers near 100 (an `f32` rounding of 4e-6
/// each): `f32` partials 4e-4 and 9e-3 from the twin's.
const SENSITIVITY_F32: f64 = PARTIALS_F32 / 20.0;
/// Tolerance of a value against the original's where roundings may differ, relative to
/// the largest magnitude of a variable: the value of a `#[grad(reassociate)]` gradient
/// (sums added in another order differ by a few roundings of their partial sums, which
/// the twin notes among the variables), and in a release build the values of a program
/// that calls `powi` (see [`Case::powi`]).
const VALUE_REROUNDED: f64 = 1e-12;
/// How many times the twin's estimate of the value's rounding error
/// ([`TapeRun::rounding`]) a reassociated value may differ by, where that is more than
/// [`VALUE_REROUNDED`] of the largest variable: a program that amplifies the roundings of
/// its sums (seed 518's program 2440, sums of six terms whose `to_degrees()` and squares
/// amplify a hundred thousand times) differs by more than a few roundings of the largest
/// variable. Each of the two orders is within the estimate of the exact value, to first
/// order, so they are within twice it of each other.
const REROUNDINGS: f64 = 4.0;

/// How far a value computed with its sums in another order may be from the original's
/// (in `f32`, the tolerance of its twin).
fn rerounded(case: &Case, tape: &TapeRun) -> f64 {
    if case.single {
        VALUE_F32 * tape.largest.max(1.0)
    } else {
        (VALUE_REROUNDED * tape.largest.max(1.0)).max(REROUNDINGS * tape.rounding)
    }
}

/// How one program went.
#[derive(Default)]
struct Tally {
    points: usize,
    near_kink: usize,
    /// Points of `f32` programs resampled where the original strays from its twin.
    ill_conditioned: usize,
    overflow: usize,
    /// Programs without a single usable point.
    unchecked: Vec<&'static str>,
    fd_checked: usize,
    fd_skipped: usize,
    /// Hessian–vector products checked against differences of the gradient, and skipped
    /// where two step sizes disagree.
    hvp_checked: usize,
    hvp_skipped: usize,
    /// Hessian–vector products checked against the `Tape`'s.
    hvp_tape: usize,
    /// Points where the Jacobian of a vector function of the program was checked.
    jacobians: usize,
    /// Points where `_hessian` was checked against `_hvp`.
    hessians: usize,
    /// Points where `_vjp` was checked (each point checks `_grad_into`).
    pullbacks: usize,
    /// Programs with a `#[grad(reassociate)]` function checked at a point at least.
    reassociated: usize,
    /// Those whose gradient's value differed from the original's in its bits somewhere.
    reassociated_differing: usize,
    /// The largest difference between their value and the original's, relative to the
    /// largest magnitude of a variable.
    reassociated_worst: f64,
    failures: Vec<String>,
}

fn draw(case: &Case, rng: &mut StdRng) -> Args {
    let n = case.slice_min + rng.random_range(0..4);
    let mut real = |count: usize| -> ArgValue {
        ArgValue::Real((0..count).map(|_| rng.random_range(-1.5..1.5)).collect())
    };
    let mut values = Vec::new();
    for spec in case.params {
        values.push(match *spec {
            Spec::Real(count) => real(count),
            Spec::Run(k) => real(n * k),
            Spec::Struct { fixed, run, .. } => real(fixed + n * run),
            Spec::Int(..) | Spec::Bool | Spec::Ragged => ArgValue::Int(0),
        });
    }
    for (value, spec) in values.iter_mut().zip(case.params) {
        match *spec {
            Spec::Int(lo, hi) => *value = ArgValue::Int(rng.random_range(lo..=hi)),
            Spec::Bool => *value = ArgValue::Flag(rng.random_bool(0.5)),
            Spec::Ragged => {
                let rows = (0..n)
                    .map(|_| {
                        let len = rng.random_range(1..4);
                        (0..len).map(|_| rng.random_range(-1.5..1.5)).collect()
                    })
                    .collect();
                *value = ArgValue::Rows(rows);
            }
            Spec::Struct { ints, flags, .. } => {
                let ArgValue::Real(numbers) = std::mem::replace(value, ArgValue::Int(0)) else {
                    unreachable!()
                };
                let ints = ints.iter().map(|&hi| rng.random_range(0..=hi)).collect();
                let flags = (0..flags).map(|_| rng.random_bool(0.5)).collect();
                *value = ArgValue::Struct(numbers, ints, flags);
            }
            _ => {}
        }
    }
    if case.single {
        // The arguments of an `f32` program are `f32`s; its twin takes the same numbers.
        for value in &mut values {
            if let ArgValue::Real(v) | ArgValue::Struct(v, ..) = value {
                v.iter_mut().for_each(|x| *x = f64::from(*x as f32));
            }
            if let ArgValue::Rows(rows) = value {
                rows.iter_mut()
                    .flatten()
                    .for_each(|x| *x = f64::from(*x as f32));
            }
        }
    }
    Args(values)
}

/// `|a - b| <= tolerance`, false when either is NaN.
fn within(a: f64, b: f64, tolerance: f64) -> bool {
    (a - b).abs() <= tolerance
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// Whether two values of a program agree: bit for bit, or, where a release build may have
/// folded a `powi` (see [`Case::powi`]), to [`VALUE_REROUNDED`] of `largest`, the largest
/// magnitude of a variable (a rounding in a `powi` grows through what follows it).
fn agree(case: &Case, a: f64, b: f64, largest: f64) -> bool {
    let folded = !cfg!(debug_assertions) && case.powi;
    same(a, b) || (folded && within(a, b, VALUE_REROUNDED * largest.max(1.0)))
}

fn central(case: &Case, args: &Args, flat: &[f64], i: usize, h: f64) -> f64 {
    let mut plus = flat.to_vec();
    let mut minus = flat.to_vec();
    plus[i] += h;
    minus[i] -= h;
    if case.single {
        // The step the `f32` program sees.
        plus[i] = f64::from(plus[i] as f32);
        minus[i] = f64::from(minus[i] as f32);
    }
    let f = |x: &[f64]| (case.original)(&args.with_flat(case.partials, x));
    (f(&plus) - f(&minus)) / (plus[i] - minus[i])
}

fn check(case: &Case, seed: u64, tally: &mut Tally) {
    let mut rng = StdRng::seed_from_u64(seed);
    let points_before = tally.points;
    let mut differing = false;
    for _ in 0..POINTS {
        let mut found = false;
        for _ in 0..TRIES {
            let args = draw(case, &mut rng);
            // Along the direction of the Hessian–vector product, where the program has one.
            let along = case.hvp.map(|_| direction(args.flat(case.partials).len()));
            let tape = (case.tape)(&args, along.as_deref());
            let (tape_value, tape_partials, margin, largest) =
                (tape.value, &tape.partials, tape.margin, tape.largest);
            let (least_margin, most) = if case.single {
                (MARGIN_F32, LARGEST_F32)
            } else {
                (MARGIN, LARGEST)
            };
            if margin < least_margin {
                tally.near_kink += 1;
                continue;
            }
            let tame = largest < most
                && tape_value.is_finite()
                && tape_value.abs() < 1e8
                && tape_partials.iter().all(|d| d.is_finite() && d.abs() < 1e8);
            if !tame {
                tally.overflow += 1;
                continue;
            }
            let strays = || {
                let value = (case.original)(&args);
                !within(tape_value, value, VALUE_F32 * largest.max(1.0))
            };
            let amplifies = || tape_partials.iter().any(|d| d.abs() > PARTIAL_F32);
            let sensitive = || {
                // A step of one `f32` rounding of the largest variable, which the
                // program's own roundings of its large intermediates are.
                let stepped: Vec<f64> = args
                    .flat(case.partials)
                    .iter()
                    .enumerate()
                    .map(|(i, &x)| {
                        let step = F32_ROUNDING * largest.max(x.abs());
                        let stepped = if i % 2 == 0 { x + step } else { x - step };
                        f64::from(stepped as f32)
                    })
                    .collect();
                let moved = (case.tape)(&args.with_flat(case.partials, &stepped), None).partials;
                let scale = tape_partials
                    .iter()
                    .fold(largest.max(1.0), |m, d| m.max(d.abs()));
                moved
                    .iter()
                    .zip(tape_partials)
                    .any(|(a, b)| !within(*a, *b, SENSITIVITY_F32 * scale))
            };
            if case.single && (amplifies() || strays() || sensitive()) {
                tally.ill_conditioned += 1;
                continue;
            }
            found = true;
            tally.points += 1;
            let (differs, off) = compare(case, &args, &tape, tally);
            differing |= differs;
            if case.reassociate && !case.single {
                tally.reassociated_worst = tally.reassociated_worst.max(off);
            }
            break;
        }
        if !found {
            break;
        }
    }
    if tally.points == points_before {
        tally.unchecked.push(case.name);
    } else if case.reassociate {
        tally.reassociated += 1;
        tally.reassociated_differing += usize::from(differing);
    }
}

/// Compares the program with its twin and finite differences at one point; returns
/// whether the value of `_grad` differs from the original's in its bits (which only a
/// `#[grad(reassociate)]` program may do), and by how much, relative to the largest
/// magnitude of a variable.
fn compare(case: &Case, args: &Args, tape: &TapeRun, tally: &mut Tally) -> (bool, f64) {
    let (tape_value, tape_partials, largest) = (tape.value, &tape.partials, tape.largest);
    let value = (case.original)(args);
    let (grad_value, partials) = (case.gradient)(args);
    let differing = !same(grad_value, value);
    let off = if differing {
        (grad_value - value).abs() / largest.max(1.0)
    } else {
        0.0
    };
    let mut fail = |what: String| {
        tally
            .failures
            .push(format!("{}: {what}\n  at {args:?}", case.name));
    };
    if case.reassociate {
        if !within(grad_value, value, rerounded(case, tape)) {
            fail(format!(
                "the value of _grad (reassociated) is {grad_value:e}, the original's {value:e}"
            ));
        }
    } else if !agree(case, grad_value, value, largest) {
        fail(format!(
            "the value of _grad is {grad_value:e}, the original's {value:e}"
        ));
    }
    // (An `f32` original's value is within `VALUE_F32` of its twin's: `check` resampled
    // the points where it is not.)
    if !case.single && !agree(case, tape_value, value, largest) {
        fail(format!(
            "the value on Tape is {tape_value:e}, the original's {value:e}"
        ));
    }
    if partials.len() != tape_partials.len() {
        fail(format!(
            "{} partials, Tape has {}",
            partials.len(),
            tape_partials.len()
        ));
        return (differing, off);
    }
    let scale = tape_partials
        .iter()
        .chain(&partials)
        .fold(1.0f64, |m, d| m.max(d.abs()));
    // In `f32`, a partial read through a large intermediate value (`sin(t)` of a `t` near
    // 70, made by `.to_degrees()`) carries that value's rounding, a relative 6e-8 of its
    // magnitude per operation: its tolerance is relative to the largest variable too.
    let scale = if case.single {
        scale.max(largest)
    } else {
        scale
    };
    let relative = if case.single { PARTIALS_F32 } else { 1e-9 };
    for (i, (d, t)) in partials.iter().zip(tape_partials).enumerate() {
        if !within(*d, *t, relative * scale) {
            fail(format!("partial {i} is {d:e}, Tape's {t:e}"));
        }
    }
    check_pullbacks(case, args, grad_value, &partials, scale, &mut fail);
    check_jvp(case, args, value, &partials, largest, &mut fail);
    if let Some(jacobian) = case.jacobian {
        check_jacobian(case, jacobian, args, value, &partials, tape, &mut fail);
        tally.jacobians += 1;
    }
    if case.vjp.is_some() {
        tally.pullbacks += 1;
    }
    if let Some(hvp) = case.hvp {
        // Along the same direction as forward mode: the value, the gradient, and H·t
        // against central differences of the gradient along t (in f64, at two steps).
        let direction = direction(partials.len());
        let tangents = args.with_flat(case.partials, &direction);
        let (hvp_value, gradient, product) = hvp(args, &tangents);
        if !agree(case, hvp_value, value, largest) {
            fail(format!(
                "the value of _hvp is {hvp_value:e}, the original's {value:e}"
            ));
        }
        // Its gradient against `_grad`'s: the same partials, rounded along other paths (in
        // `f32`, where a program's gradient can lose 4 digits to cancellation, to the
        // tolerance of an `f32` value).
        let relative = if case.single { VALUE_F32 } else { 1e-9 };
        same_partials("_hvp", &gradient, &partials, relative, &mut fail);
        // Against the tape's own second order (forward over reverse on the recorded
        // nodes, with the second partials of `rules::second`), in `f64`.
        if let (false, Some(tape_product)) = (case.single, &tape.product) {
            tally.hvp_tape += 1;
            let scale = product
                .iter()
                .chain(tape_product)
                .fold(1.0f64, |m, d| m.max(d.abs()));
            for (i, (p, t)) in product.iter().zip(tape_product).enumerate() {
                if !within(*p, *t, 1e-9 * scale) {
                    fail(format!("(H·t)[{i}] of _hvp is {p:e}, Tape's {t:e}"));
                }
            }
        }
        if let Some(hessian) = case.hessian {
            tally.hessians += 1;
            check_hessian(
                case, hessian, args, value, largest, &partials, &direction, &product, &mut fail,
            );
        }
        // Not where a `stop_gradient` holds a value constant: the gradient's value still
        // moves with it, its derivative in the sweep does not.
        if !case.single && case.differences && product.len() == partials.len() {
            let flat = args.flat(case.partials);
            let along = |h: f64| -> Vec<f64> {
                let at = |s: f64| -> Vec<f64> {
                    flat.iter()
                        .zip(&direction)
                        .map(|(x, d)| x + s * d)
                        .collect()
                };
                let up = (case.gradient)(&args.with_flat(case.partials, &at(h))).1;
                let down = (case.gradient)(&args.with_flat(case.partials, &at(-h))).1;
                up.iter()
                    .zip(&down)
                    .map(|(u, d)| (u - d) / (2.0 * h))
                    .collect()
            };
            let (coarse, fine) = (along(1e-5), along(1e-6));
            let size = fine
                .iter()
                .chain(&product)
                .fold(1.0f64, |m, d| m.max(d.abs()));
            let tolerance = 1e-4 * size;
            if coarse
                .iter()
                .zip(&fine)
                .all(|(c, f)| within(*c, *f, tolerance))
            {
                tally.hvp_checked += 1;
                for (i, (p, f)) in product.iter().zip(&fine).enumerate() {
                    if !within(*p, *f, tolerance) {
                        fail(format!(
                            "(H·t)[{i}] of _hvp is {p:e}, differences of the gradient give {f:e}"
                        ));
                    }
                }
            } else {
                tally.hvp_skipped += 1;
            }
        }
    }
    if !case.differences {
        return (differing, off);
    }
    let flat = args.flat(case.partials);
    // In `f32`, steps large enough that the program's rounding stays small against them
    // (a relative 6e-8 of the value, divided by the step).
    let (step, finer, tolerance) = if case.single {
        (4e-3, 2.0, 1e-2)
    } else {
        (1e-5, 10.0, 1e-4)
    };
    for i in 0..flat.len() {
        let h = step * flat[i].abs().max(1.0);
        let coarse = central(case, args, &flat, i, h);
        let fine = central(case, args, &flat, i, h / finer);
        let tolerance = tolerance * fine.abs().max(1.0);
        // In `f32`, a quotient whose roundings (of the value, or of the largest variable
        // it sums, a few steps of `f32` each) may reach a quarter of the tolerance cannot
        // check the partial: seed 511's program 188, a value near 2,000 whose partial
        // is 1.8, rounded to 1.2e-4, over steps of 2e-3.
        let noise = F32_NOISE * value.abs().max(largest) / (h / finer);
        if !within(coarse, fine, tolerance) || (case.single && noise > tolerance / 4.0) {
            tally.fd_skipped += 1;
            continue;
        }
        tally.fd_checked += 1;
        if !within(partials[i], fine, tolerance) {
            fail(format!(
                "partial {i} is {:e}, finite differences give {fine:e}",
                partials[i]
            ));
        }
    }
    (differing, off)
}

/// Checks every case of a batch (in as many threads as there are cores, up to 4), prints
/// a summary, and panics listing the disagreements, if any (or if too few points could
/// be checked for the test to mean much). `seed` draws the points.
///
/// # Panics
/// On any disagreement, as a test does.
pub fn check_batch(cases: &[Case], seed: u64) {
    assert!(!cases.is_empty(), "no programs generated");
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    let chunk = cases.len().div_ceil(threads);
    let tallies: Vec<Tally> = std::thread::scope(|scope| {
        let handles: Vec<_> = cases
            .chunks(chunk)
            .map(|cases| {
                scope.spawn(move || {
                    let mut tally = Tally::default();
                    for case in cases {
                        // The points of a program depend on its name and the seed only.
                        let name = case.name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
                        });
                        check(case, seed.wrapping_mul(1_000_003) ^ name, &mut tally);
                    }
                    tally
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a checking thread panicked"))
            .collect()
    });
    let mut total = Tally::default();
    for t in tallies {
        total.points += t.points;
        total.near_kink += t.near_kink;
        total.ill_conditioned += t.ill_conditioned;
        total.overflow += t.overflow;
        total.unchecked.extend(t.unchecked);
        total.fd_checked += t.fd_checked;
        total.fd_skipped += t.fd_skipped;
        total.hvp_checked += t.hvp_checked;
        total.jacobians += t.jacobians;
        total.hessians += t.hessians;
        total.pullbacks += t.pullbacks;
        total.hvp_skipped += t.hvp_skipped;
        total.hvp_tape += t.hvp_tape;
        total.reassociated += t.reassociated;
        total.reassociated_differing += t.reassociated_differing;
        total.reassociated_worst = total.reassociated_worst.max(t.reassociated_worst);
        total.failures.extend(t.failures);
    }
    println!(
        "{} programs (seed {seed}; {} of them generic over their float type, {} in f32): {} points checked, each also in forward mode and by _grad_into, {} by _vjp ({} resampled near kinks, {} where \
         a value grew too large, {} where an f32 original strayed from its f64 twin or amplified rounding), \
         {} programs with no usable point, {} partials against finite differences ({} \
         skipped where step sizes disagree); \
         {} programs with #[grad(reassociate)] checked, {} of them with a value differing \
         from the original's in its bits (by up to {:.1e} of the largest variable); \
         {} Hessian-vector products against the Tape's, {} against differences of the gradient ({} skipped \
         where step sizes disagree); {} Jacobians of (y, y², sin(y/2)) against the gradient; \
         {} Hessians against the Hessian-vector products",
        cases.len(),
        cases.iter().filter(|case| case.generic).count(),
        cases.iter().filter(|case| case.single).count(),
        total.points,
        total.pullbacks,
        total.near_kink,
        total.overflow,
        total.ill_conditioned,
        total.unchecked.len(),
        total.fd_checked,
        total.fd_skipped,
        total.reassociated,
        total.reassociated_differing,
        total.reassociated_worst,
        total.hvp_tape,
        total.hvp_checked,
        total.hvp_skipped,
        total.jacobians,
        total.hessians
    );
    if !total.unchecked.is_empty() {
        println!(
            "without a usable point: {:?}",
            &total.unchecked[..total.unchecked.len().min(20)]
        );
    }
    // Nearly every program must have been checked somewhere, or the test says little.
    assert!(
        total.points >= cases.len() * POINTS * 9 / 10,
        "only {} of {} points could be checked",
        total.points,
        cases.len() * POINTS
    );
    assert!(
        total.fd_checked >= (total.fd_checked + total.fd_skipped) * 9 / 10,
        "too many finite differences skipped"
    );
    // Each has a sum in lanes, which changes the last bits of about half of them: if none
    // differs, the lanes (or the check of their values) are not there.
    assert!(
        total.reassociated < 10 || total.reassociated_differing > 0,
        "none of {} programs with #[grad(reassociate)] has a value differing from the \
         original's",
        total.reassociated
    );
    if !total.failures.is_empty() {
        for f in total.failures.iter().take(30) {
            eprintln!("{f}");
        }
        panic!(
            "{} disagreements (the programs are in {}/programs.rs)",
            total.failures.len(),
            "OUT_DIR of autodiff-difftest's build script"
        );
    }
}

/// Forward mode at `args` along a direction through every differentiated number: the value
/// is the original's, and the tangent the gradient's dot product with the direction (the
/// same products summed in another order, so to the partials' tolerance of the largest
/// term).
/// `_grad_into` and `_vjp` with the seed 2 against `_grad` (`grad_value`, `partials`,
/// whose largest magnitude is about `scale`): the same value bit for bit, and buffers
/// that hold the arguments plus the partials (twice the partials for `_vjp`).
fn check_pullbacks(
    case: &Case,
    args: &Args,
    grad_value: f64,
    partials: &[f64],
    scale: f64,
    fail: &mut impl FnMut(String),
) {
    let relative = if case.single { PARTIALS_F32 } else { 1e-12 };
    let start = args.flat(case.partials);
    let mut check = |name: &str, (value, buffers): (f64, Vec<f64>), seed: f64| {
        if !same(value, grad_value) {
            fail(format!(
                "the value of {name} is {value:e}, _grad's {grad_value:e}"
            ));
        }
        if buffers.len() != partials.len() {
            fail(format!(
                "{name} fills {} numbers, _grad has {} partials",
                buffers.len(),
                partials.len()
            ));
            return;
        }
        for (i, ((b, s), d)) in buffers.iter().zip(&start).zip(partials).enumerate() {
            if !within(b - s, seed * d, relative * (seed * scale + s.abs())) {
                fail(format!(
                    "{name} added {:e} to partial {i}'s buffer, where {seed} × _grad's \
                     partial is {:e}",
                    b - s,
                    seed * d
                ));
            }
        }
    };
    check("_grad_into", (case.grad_into)(args), 1.0);
    if let Some(vjp) = case.vjp {
        check("_vjp (the seed 2)", vjp(args), 2.0);
    }
}

fn check_jvp(
    case: &Case,
    args: &Args,
    value: f64,
    partials: &[f64],
    largest: f64,
    fail: &mut impl FnMut(String),
) {
    let direction = direction(partials.len());
    let tangents = args.with_flat(case.partials, &direction);
    let (jvp_value, tangent) = (case.jvp)(args, &tangents);
    if !agree(case, jvp_value, value, largest) {
        fail(format!(
            "the value of _jvp is {jvp_value:e}, the original's {value:e}"
        ));
    }
    let expected: f64 = partials.iter().zip(&direction).map(|(g, d)| g * d).sum();
    let scale = partials
        .iter()
        .zip(&direction)
        .fold(1.0f64, |m, (g, d)| m.max((g * d).abs()).max(g.abs()));
    let relative = if case.single { PARTIALS_F32 } else { 1e-9 };
    if !within(
        tangent,
        expected,
        relative * scale * partials.len().max(1) as f64,
    ) {
        fail(format!(
            "the tangent of _jvp is {tangent:e}, the gradient's dot product {expected:e}"
        ));
    }
}

/// A mode's gradient against `_grad`'s partials, to `relative` of the largest of them.
fn same_partials(
    mode: &str,
    gradient: &[f64],
    partials: &[f64],
    relative: f64,
    fail: &mut impl FnMut(String),
) {
    let scale = partials
        .iter()
        .chain(gradient)
        .fold(1.0f64, |m, d| m.max(d.abs()));
    for (i, (g, d)) in gradient.iter().zip(partials).enumerate() {
        if !within(*g, *d, relative * scale) {
            fail(format!("partial {i} of {mode} is {g:e}, _grad's {d:e}"));
        }
    }
}

/// `_hessian` (an `f64` program's): its value the original's (as `_hvp`'s, `agree` with
/// the largest variable `largest`), its gradient `_grad`'s (the same partials, rounded
/// along other paths), `H` symmetric bit for bit, and `H·t` against `_hvp`'s product along
/// `t` (the same second partials, added in another order).
#[allow(clippy::too_many_arguments)]
fn check_hessian(
    case: &Case,
    hessian: crate::HessianFn,
    args: &Args,
    value: f64,
    largest: f64,
    partials: &[f64],
    direction: &[f64],
    product: &[f64],
    fail: &mut impl FnMut(String),
) {
    let (hessian_value, gradient, rows) = hessian(args);
    if !agree(case, hessian_value, value, largest) {
        fail(format!(
            "the value of _hessian is {hessian_value:e}, the original's {value:e}"
        ));
    }
    same_partials("_hessian", &gradient, partials, 1e-9, fail);
    let n = partials.len();
    if rows.len() != n || rows.iter().any(|row| row.len() != n) {
        fail(format!("_hessian is not {n} × {n}"));
        return;
    }
    for (i, row) in rows.iter().enumerate() {
        for (j, column) in rows.iter().enumerate().take(i) {
            if !same(row[j], column[i]) {
                fail(format!(
                    "H[{i}][{j}] of _hessian is {:e}, H[{j}][{i}] {:e}",
                    row[j], column[i]
                ));
            }
        }
    }
    let along: Vec<f64> = rows
        .iter()
        .map(|row| row.iter().zip(direction).map(|(h, t)| h * t).sum())
        .collect();
    let scale = rows
        .iter()
        .flatten()
        .chain(product)
        .fold(1.0f64, |m, d| m.max(d.abs()));
    for (i, (a, p)) in along.iter().zip(product).enumerate() {
        if !within(*a, *p, 1e-9 * scale) {
            fail(format!("(H·t)[{i}] of _hessian is {a:e}, _hvp's {p:e}"));
        }
    }
}

/// The Jacobian of `(y, y², sin(y/2))` of the original's value `y`: its value, and its
/// rows against the gradient scaled by each output's derivative in `y` (the same
/// products, so to the partials' tolerance).
fn check_jacobian(
    case: &Case,
    jacobian: crate::JacobianFn,
    args: &Args,
    value: f64,
    partials: &[f64],
    tape: &TapeRun,
    fail: &mut impl FnMut(String),
) {
    let largest = tape.largest;
    let (values, rows) = jacobian(args);
    // Reverse sweeps take the value from the pullback, whose sums may run in lanes.
    // (In `f32` its sums in another order differ by more than rounding in the last bit.)
    let reassociated = case.reassociate && within(values[0], value, rerounded(case, tape));
    if values.len() != 3 || !(agree(case, values[0], value, largest) || reassociated) {
        fail(format!(
            "the value of _jacobian is {values:?}, the original's {value:e}"
        ));
        return;
    }
    let y = values[0];
    let factors = [1.0, 2.0 * y, 0.5 * (0.5 * y).cos()];
    let relative = match (case.single, case.reassociate) {
        (true, true) => VALUE_F32,
        (true, false) => PARTIALS_F32,
        (false, _) => 1e-9,
    };
    for (r, (row, factor)) in rows.iter().zip(factors).enumerate() {
        if row.len() != partials.len() {
            fail(format!(
                "row {r} of _jacobian has {} entries, the gradient {}",
                row.len(),
                partials.len()
            ));
            return;
        }
        let scale = partials
            .iter()
            .fold(1.0f64, |m, g| m.max((g * factor).abs()).max(g.abs()));
        for (k, (j, g)) in row.iter().zip(partials).enumerate() {
            if !within(*j, g * factor, relative * scale) {
                fail(format!(
                    "J[{r}][{k}] of _jacobian is {j:e}, the gradient gives {:e}",
                    g * factor
                ));
            }
        }
    }
}

/// A direction through every differentiated number: multiples of 1/4 in [-1, 1], exact in
/// `f32` too.
fn direction(len: usize) -> Vec<f64> {
    (0..len)
        .map(|k| ((k * 7 + 3) % 9) as f64 * 0.25 - 1.0)
        .collect()
}
