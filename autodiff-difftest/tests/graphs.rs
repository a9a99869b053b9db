//! The generator of `#[grad]` programs also writes straight-line programs of 100,000
//! operations and more (with only the operations both dynamic engines have), which run
//! on `Value` and on `Tape` through one interpreter: the two engines must compute the
//! same value and the same gradient.

use autodiff::{Tape, Value};
use autodiff_difftest::generator::random::graph;
use autodiff_difftest::{interpret, TapeEngine, ValueEngine};

const NODES: usize = 100_000;
const INPUTS: usize = 8;

#[test]
fn value_and_tape_agree_on_random_graphs_of_100_000_nodes() {
    for seed in [1, 2] {
        // `size` counts a constant exponent or bound as a node, which the engines fold
        // into the operation: a tenth more keeps the graphs above `NODES`.
        let (stmts, result) = graph(seed, INPUTS, NODES + NODES / 10);
        let point: Vec<f64> = (0..INPUTS)
            .map(|i| (i as f64 * 0.37 + seed as f64).sin())
            .collect();

        let tape = Tape::with_capacity(2 * NODES);
        let leaves: Vec<_> = point.iter().map(|&x| tape.var(x)).collect();
        let y = interpret(&TapeEngine(&tape), &leaves, &stmts, &result);
        assert!(
            tape.len() >= NODES,
            "seed {seed}: only {} nodes",
            tape.len()
        );
        let gradient = y.gradient();
        let on_tape: Vec<f64> = leaves.iter().map(|&v| gradient[v]).collect();

        let inputs: Vec<Value> = point.iter().map(|&x| Value::new(x)).collect();
        let z = interpret(&ValueEngine, &inputs, &stmts, &result);
        z.backward();
        let on_value: Vec<f64> = inputs.iter().map(Value::grad).collect();

        assert!(
            y.value().is_finite(),
            "seed {seed}: the value is {}",
            y.value()
        );
        assert_eq!(
            y.value().to_bits(),
            z.data().to_bits(),
            "seed {seed}: the values differ"
        );
        let scale = on_tape.iter().fold(0.0f64, |m, d| m.max(d.abs()));
        assert!(
            scale > 0.0 && scale.is_finite(),
            "seed {seed}: the gradient is {on_tape:?}"
        );
        for (i, (t, v)) in on_tape.iter().zip(&on_value).enumerate() {
            assert!(
                (t - v).abs() <= 1e-12 * scale,
                "seed {seed}: ∂/∂x{i} is {t:e} on Tape and {v:e} on Value"
            );
        }
    }
}
