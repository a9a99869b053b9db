//! Softmax (multinomial logistic) regression on Fisher's iris flowers, fitted with argmin's
//! L-BFGS, `#[grad]` supplying the gradient.
//!
//! `cargo run --release --features argmin --example iris`
//!
//! The data set is the classic iris data (150 flowers, 4 measurements in cm, 3 species) as
//! shipped by the `linfa-datasets` crate (feature `iris`): the CSV is compiled into that
//! crate, so nothing is downloaded at run time. Every fifth flower is held out as a test set
//! (10 per species); the features are standardized with the training set's mean and
//! standard deviation.
//!
//! What it shows: the loss is a plain Rust function over slices — mean cross-entropy with a
//! numerically stable log-sum-exp, plus an L2 penalty — written the way one writes it
//! without any differentiation in mind. `#[grad(wrt(w))]` keeps it and generates
//! `loss_grad`, which returns the loss and its gradient with respect to the weights only.
//! The two become an argmin problem through `autodiff::argmin::Problem` (feature `argmin`),
//! two closures with no trait impls to write, and argmin's L-BFGS with a Moré–Thuente line
//! search does the fitting. The program checks the
//! gradient once against central differences, prints the loss, gradient norm and
//! training accuracy at every iteration (through an argmin observer), and reports the final
//! training and test accuracy.

use argmin::core::observers::{Observe, ObserverMode};
use argmin::core::{Error, Executor, IterState, State, KV};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::quasinewton::LBFGS;
use autodiff::check;
use autodiff::prelude::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::time::Instant;

/// Measurements per flower.
const D: usize = 4;
/// Species.
const K: usize = 3;
/// One row per species: `D` weights, then the bias.
const PARAMS: usize = K * (D + 1);
/// Strength of the L2 penalty on the weights (the biases are not penalized).
const LAMBDA: f64 = 1e-3;
/// The species in label order (0, 1, 2), as in the data set's CSV.
const SPECIES: [&str; K] = ["setosa", "versicolor", "virginica"];

/// Mean cross-entropy of softmax regression over the flowers `xs` with species `ys`, plus
/// `lambda / 2 · ‖weights‖²`. `w` holds one row of `D + 1` numbers per species (weights,
/// then bias); `ys` holds the species' indices (0, 1 or 2).
#[grad(wrt(w))]
pub fn loss(w: &[f64], xs: &[[f64; D]], ys: &[usize], lambda: f64) -> f64 {
    let mut total = 0.0;
    for (x, &y) in xs.iter().zip(ys) {
        // The logits.
        let mut z = [0.0; K];
        for (k, row) in w.chunks(D + 1).enumerate() {
            z[k] = row[D] + row[..D].iter().zip(x).map(|(a, b)| a * b).sum::<f64>();
        }
        // log Σₖ exp zₖ with the largest logit taken out first, so no exp can overflow.
        // (Its value is the same for any m, so the gradient through `max` is exact.)
        let m = z.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let log_sum_exp = m + z.iter().map(|&v| (v - m).exp()).sum::<f64>().ln();
        // −log softmax(z)[y]
        total += log_sum_exp - z[y];
    }
    let penalty: f64 = w
        .chunks(D + 1)
        .map(|row| row[..D].iter().map(|v| v * v).sum::<f64>())
        .sum();
    total / xs.len() as f64 + 0.5 * lambda * penalty
}

/// The predicted species: the one with the largest logit.
fn predict(w: &[f64], x: &[f64; D]) -> usize {
    let logit = |k: usize| {
        let row = &w[k * (D + 1)..(k + 1) * (D + 1)];
        row[D] + row[..D].iter().zip(x).map(|(a, b)| a * b).sum::<f64>()
    };
    (0..K)
        .max_by(|&a, &b| logit(a).total_cmp(&logit(b)))
        .unwrap_or(0)
}

/// The fraction of flowers whose species is predicted correctly.
fn accuracy(w: &[f64], xs: &[[f64; D]], ys: &[usize]) -> f64 {
    let right = xs
        .iter()
        .zip(ys)
        .filter(|(x, &y)| predict(w, x) == y)
        .count();
    right as f64 / xs.len() as f64
}

/// An argmin observer that prints one line per iteration. It owns a copy of the training
/// set (argmin keeps observers as `'static` trait objects) to report the accuracy.
struct Progress {
    xs: Vec<[f64; D]>,
    ys: Vec<usize>,
}

type LbfgsState = IterState<Vec<f64>, Vec<f64>, (), (), (), f64>;

impl Observe<LbfgsState> for Progress {
    fn observe_init(&mut self, name: &str, state: &LbfgsState, _kv: &KV) -> Result<(), Error> {
        println!("{name}: at most {} iterations", state.get_max_iters());
        println!("  iter      loss        |grad|    train accuracy");
        Ok(())
    }

    fn observe_iter(&mut self, state: &LbfgsState, _kv: &KV) -> Result<(), Error> {
        let norm = state
            .get_gradient()
            .map_or(f64::NAN, |g| g.iter().map(|v| v * v).sum::<f64>().sqrt());
        let acc = state
            .get_param()
            .map_or(f64::NAN, |w| accuracy(w, &self.xs, &self.ys));
        println!(
            "  {:4}  {:.9}  {:9.2e}  {:6.1}%",
            state.get_iter(),
            state.get_cost(),
            norm,
            100.0 * acc
        );
        Ok(())
    }
}

/// Training and test sets as `([f64; D] rows, species indices)`, standardized with the
/// training set's statistics. Every fifth flower goes to the test set.
type Split = (Vec<[f64; D]>, Vec<usize>);

fn load() -> (Split, Split, Vec<String>) {
    let iris = linfa_datasets::iris();
    let names = iris.feature_names().to_vec();
    let (mut train, mut test): (Split, Split) = Default::default();
    for (i, (row, &species)) in iris
        .records
        .rows()
        .into_iter()
        .zip(&iris.targets)
        .enumerate()
    {
        let mut x = [0.0; D];
        for (xj, v) in x.iter_mut().zip(row) {
            *xj = *v;
        }
        let set = if i % 5 == 4 { &mut test } else { &mut train };
        set.0.push(x);
        set.1.push(species);
    }

    let n = train.0.len() as f64;
    let mut mean = [0.0; D];
    let mut std = [0.0; D];
    for j in 0..D {
        mean[j] = train.0.iter().map(|x| x[j]).sum::<f64>() / n;
        std[j] = (train
            .0
            .iter()
            .map(|x| (x[j] - mean[j]).powi(2))
            .sum::<f64>()
            / n)
            .sqrt();
    }
    for x in train.0.iter_mut().chain(test.0.iter_mut()) {
        for j in 0..D {
            x[j] = (x[j] - mean[j]) / std[j];
        }
    }
    (train, test, names)
}

fn main() -> Result<(), Error> {
    let ((xs, ys), (test_xs, test_ys), names) = load();
    println!(
        "iris (linfa-datasets): {} flowers for training, {} held out; features: {}",
        xs.len(),
        test_xs.len(),
        names.join(", ")
    );
    println!(
        "softmax regression: {K} species x ({D} weights + bias) = {PARAMS} parameters, \
         L2 penalty {LAMBDA}\n"
    );

    let mut rng = StdRng::seed_from_u64(7);
    let w0: Vec<f64> = (0..PARAMS).map(|_| rng.random_range(-0.5..0.5)).collect();

    // The gradient against central differences of the loss, at the start; the data is
    // captured, the weights are the point.
    let report = check::gradient(
        |w| loss(w, &xs, &ys, LAMBDA),
        |w| loss_grad(w, &xs, &ys, LAMBDA),
        &w0,
    )
    .named(["w"]);
    assert!(report.passed(check::DEFAULT_TOLERANCE), "{report}");
    println!(
        "gradient check at the start (central differences): largest relative error {:.1e}",
        report.max_error()
    );
    let reps = 10_000;
    let start = Instant::now();
    for _ in 0..reps {
        std::hint::black_box(loss_grad(std::hint::black_box(&w0), &xs, &ys, LAMBDA));
    }
    println!(
        "one loss + gradient over the {} training flowers: {:.1} µs\n",
        xs.len(),
        start.elapsed().as_secs_f64() * 1e6 / reps as f64
    );

    // The problem as argmin sees it: the loss and its gradient, the data captured.
    let problem = autodiff::argmin::Problem::new(|w: &Vec<f64>| loss(w, &xs, &ys, LAMBDA))
        .with_gradient(|w: &Vec<f64>| loss_grad(w, &xs, &ys, LAMBDA).1);
    let solver = LBFGS::new(MoreThuenteLineSearch::new(), 10).with_tolerance_grad(1e-6)?;
    let progress = Progress {
        xs: xs.clone(),
        ys: ys.clone(),
    };
    let start = Instant::now();
    let result = Executor::new(problem, solver)
        .configure(|state| state.param(w0).max_iters(200).counting(true))
        .add_observer(progress, ObserverMode::Always)
        .run()?;
    let elapsed = start.elapsed();

    let state = result.state();
    let w = state
        .get_best_param()
        .expect("L-BFGS returns its best parameters");
    let counts = state.get_func_counts();
    let count = |key: &str| counts.get(key).copied().unwrap_or(0);
    println!(
        "\nstopped after {} iterations ({}), {} loss and {} gradient evaluations, {:.1} ms",
        state.get_iter(),
        state
            .get_termination_reason()
            .map_or("-".to_string(), |r| r.to_string()),
        count("cost_count"),
        count("gradient_count"),
        elapsed.as_secs_f64() * 1e3
    );
    println!("final loss {:.9}", state.get_best_cost());
    println!(
        "training accuracy {:.1}% ({} flowers)",
        100.0 * accuracy(w, &xs, &ys),
        xs.len()
    );
    println!(
        "test accuracy     {:.1}% ({} flowers)",
        100.0 * accuracy(w, &test_xs, &test_ys),
        test_xs.len()
    );

    println!("\nweights per species (standardized features), bias last:");
    for (species, row) in SPECIES.iter().zip(w.chunks(D + 1)) {
        let cells: Vec<String> = row.iter().map(|v| format!("{v:7.2}")).collect();
        println!("  {species:<10} {}", cells.join(" "));
    }
    Ok(())
}
