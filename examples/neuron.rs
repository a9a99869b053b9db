//! One tanh neuron, differentiated three ways.
//!
//! ```text
//! cargo run --release --example neuron
//! ```
//!
//! The neuron of micrograd's introduction: `o = tanh(x1·w1 + x2·w2 + b)` with
//! `x1 = 2, x2 = 0, w1 = -3, w2 = 1, b = 6.8813735870195432`, chosen so that
//! `x1·w1 + x2·w2 + b ≈ 0.8814 = atanh(1/√2)` and `o ≈ 1/√2`. Then `do/dn = 1 - o² ≈ 1/2`,
//! and by the chain rule
//!
//! ```text
//! do/dx1 = w1·1/2 = -1.5    do/dw1 = x1·1/2 = 1
//! do/dx2 = w2·1/2 =  0.5    do/dw2 = x2·1/2 = 0
//! do/db  =    1/2 =  0.5
//! ```
//!
//! The gradient is computed by the three engines of `autodiff`:
//! - `#[grad]`: generated at compile time, straight-line code, no heap;
//! - `Value`: a micrograd-style graph of reference-counted nodes built at run time;
//! - `Tape`: an arena of nodes built at run time, swept once backwards.
//!
//! All three use the same derivative rules and add the contributions in the same order, so
//! they agree to the last bit. `autodiff::check` then compares the gradient with central
//! finite differences, which share nothing with the three.

use autodiff::check;
use autodiff::prelude::*;

/// The neuron as plain Rust; `#[grad]` generates `neuron_grad` next to it, returning
/// `(o, do/dx1, do/dx2, do/dw1, do/dw2, do/db)`.
#[grad]
fn neuron(x1: f64, x2: f64, w1: f64, w2: f64, b: f64) -> f64 {
    let n = x1 * w1 + x2 * w2 + b;
    n.tanh()
}

/// The names of the inputs, in parameter order.
const NAMES: [&str; 5] = ["x1", "x2", "w1", "w2", "b"];

/// The point: micrograd's inputs and weights. `b` is written with micrograd's digits, more
/// than an `f64` holds.
#[allow(clippy::excessive_precision)]
const INPUTS: [f64; 5] = [2.0, 0.0, -3.0, 1.0, 6.881_373_587_019_543_2];

/// The output and its gradient from the generated function.
fn with_grad_macro([x1, x2, w1, w2, b]: [f64; 5]) -> (f64, [f64; 5]) {
    let (o, dx1, dx2, dw1, dw2, db) = neuron_grad(x1, x2, w1, w2, b);
    (o, [dx1, dx2, dw1, dw2, db])
}

/// The same computation on `Value`: build the graph, then `backward()` fills in `grad()`.
fn with_value([x1, x2, w1, w2, b]: [f64; 5]) -> (f64, [f64; 5]) {
    let leaves = [x1, x2, w1, w2, b].map(Value::new);
    let [x1, x2, w1, w2, b] = &leaves;
    let n = x1 * w1 + x2 * w2 + b;
    let o = n.tanh();
    o.backward();
    (
        o.data(),
        [x1.grad(), x2.grad(), w1.grad(), w2.grad(), b.grad()],
    )
}

/// The same computation on a `Tape`: `Var`s are `Copy` handles into the tape, and
/// `gradient()` sweeps it once from the output.
fn with_tape([x1, x2, w1, w2, b]: [f64; 5]) -> (f64, [f64; 5]) {
    let tape = Tape::new();
    let vars = [x1, x2, w1, w2, b].map(|v| tape.var(v));
    let [x1, x2, w1, w2, b] = vars;
    let o = (x1 * w1 + x2 * w2 + b).tanh();
    let gradient = o.gradient();
    (o.value(), vars.map(|v| gradient.wrt(v)))
}

fn main() {
    let engines = [
        ("#[grad]", with_grad_macro(INPUTS)),
        ("Value", with_value(INPUTS)),
        ("Tape", with_tape(INPUTS)),
    ];

    println!("o = tanh(x1·w1 + x2·w2 + b)\n");
    print!("{:>8}  {:>20}", "", "input");
    for (name, _) in &engines {
        print!("  {name:>20}");
    }
    println!();

    // The output row, then one row per partial derivative.
    print!("{:>8}  {:>20}", "o", "");
    for (_, (o, _)) in &engines {
        print!("  {o:>20.16}");
    }
    println!();
    for (i, name) in NAMES.iter().enumerate() {
        print!("{:>8}  {:>20}", format!("do/d{name}"), INPUTS[i]);
        for (_, (_, gradient)) in &engines {
            print!("  {:>20.16}", gradient[i]);
        }
        println!();
    }

    // The three engines share the rules and the order of accumulation: the results are
    // equal, not merely close.
    let (_, reference) = &engines[0];
    let bits = |(o, gradient): &(f64, [f64; 5])| (o.to_bits(), gradient.map(f64::to_bits));
    let agree = engines
        .iter()
        .all(|(_, result)| bits(result) == bits(reference));
    assert!(agree, "the engines disagree");
    println!("\nall three engines agree bit for bit");

    // And the gradient is the one worked out by hand above, up to rounding.
    let expected = [-1.5, 0.5, 1.0, 0.0, 0.5];
    let (o, gradient) = reference;
    assert!((o - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-12);
    for (got, want) in gradient.iter().zip(expected) {
        assert!((got - want).abs() < 1e-12, "{got} != {want}");
    }
    println!("and match the closed form (o = 1/√2, gradient -1.5, 0.5, 1, 0, 0.5) to 1e-12");

    // An independent check: central finite differences of the plain function, at the
    // same point, with the parameters named for the report.
    let [x1, x2, w1, w2, b] = INPUTS;
    let report = check::gradient(
        |&(x1, x2, w1, w2, b)| neuron(x1, x2, w1, w2, b),
        |&(x1, x2, w1, w2, b)| neuron_grad(x1, x2, w1, w2, b),
        &(x1, x2, w1, w2, b),
    )
    .named(NAMES);
    println!("\n{report}");
    assert!(report.passed(check::DEFAULT_TOLERANCE), "{report}");
}
