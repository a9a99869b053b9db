//! Large graphs through both engines: a 1,000,000-node chain (built, differentiated and
//! dropped on a 2 MiB stack, so nothing may recurse per node) and one leaf feeding
//! 100,000 nodes (each node visited once, no quadratic work).

use autodiff::{Tape, Value};

const DEPTH: usize = 1_000_000;
const FAN_OUT: usize = 100_000;

/// Runs `f` on a thread with the 2 MiB stack of a default test thread, whatever
/// `RUST_MIN_STACK` says.
fn on_2mib_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("the test thread panicked");
}

fn assert_close(actual: f64, expected: f64, rel: f64) {
    assert!(
        (actual - expected).abs() <= rel * expected.abs(),
        "{actual} is not within {rel:e} (relative) of {expected}"
    );
}

/// The gradient of `steps` steps of y ← y·(1 - 10⁻⁶) + 10⁻⁶.
fn chain_gradient(steps: usize) -> f64 {
    (1.0f64 - 1e-6).powi(steps as i32)
}

#[test]
fn value_chain_of_a_million_nodes() {
    on_2mib_stack(|| {
        let x = Value::new(0.5);
        let mut y = x.clone();
        for _ in 0..DEPTH / 2 {
            y = &y * (1.0 - 1e-6); // two nodes per step
            y = &y + 1e-6;
        }
        y.backward();
        assert_close(x.grad(), chain_gradient(DEPTH / 2), 1e-9);
        assert_eq!(y.grad(), 1.0);
        // Every node of the chain is visited once per call.
        y.backward();
        assert_close(x.grad(), 2.0 * chain_gradient(DEPTH / 2), 1e-9);
        y.zero_grad();
        assert_eq!((x.grad(), y.grad()), (0.0, 0.0));
        // One more node on top: its sweep runs through the whole chain again.
        let top = y.tanh();
        top.backward();
        let t = y.data().tanh();
        assert_close(x.grad(), (1.0 - t * t) * chain_gradient(DEPTH / 2), 1e-9);
        drop(top);
        // Dropping the handle drops the million nodes, iteratively.
        drop(y);
        assert_eq!(x.data(), 0.5);
    });
}

#[test]
fn value_chain_dropped_while_a_middle_node_is_alive() {
    on_2mib_stack(|| {
        let x = Value::new(1.0);
        let mut y = x.clone();
        let mut middle = None;
        for i in 0..DEPTH {
            y = &y + 1.0;
            if i == DEPTH / 2 {
                middle = Some(y.clone());
            }
        }
        drop(y); // frees the upper half only
        let middle = middle.expect("set");
        assert_eq!(middle.data(), (DEPTH / 2 + 2) as f64);
        middle.backward();
        assert_eq!(x.grad(), 1.0);
        drop(middle); // and now the lower half
    });
}

#[test]
fn value_fan_out_of_one_leaf() {
    on_2mib_stack(|| {
        let x = Value::new(2.0);
        // Σ k·x for k = 1..=FAN_OUT: every term uses x.
        let terms: Vec<Value> = (1..=FAN_OUT).map(|k| &x * k as f64).collect();
        let y: Value = terms.iter().sum();
        y.backward();
        let n = FAN_OUT as f64;
        assert_eq!(x.grad(), n * (n + 1.0) / 2.0);
        assert_eq!(y.data(), n * (n + 1.0));
        assert!(terms.iter().all(|t| t.grad() == 1.0));
        // And a leaf feeding 100,000 direct uses: x·x·…·x is x^(n+1) at x = 1.
        let one = Value::new(1.0);
        let mut p = one.clone();
        for _ in 0..FAN_OUT {
            p = &p * &one;
        }
        p.backward();
        assert_eq!(one.grad(), n + 1.0);
    });
}

#[test]
fn tape_chain_of_a_million_nodes() {
    on_2mib_stack(|| {
        let tape = Tape::with_capacity(DEPTH + 1);
        let x = tape.var(0.5);
        let mut y = x;
        for _ in 0..DEPTH / 2 {
            y *= 1.0 - 1e-6;
            y += 1e-6;
        }
        assert_eq!(tape.len(), DEPTH + 1);
        let gradient = y.gradient();
        assert_close(gradient[x], chain_gradient(DEPTH / 2), 1e-9);
        assert_eq!(gradient.as_slice().len(), DEPTH + 1);
    });
}

#[test]
fn tape_fan_out_of_one_leaf() {
    let tape = Tape::new();
    let x = tape.var(2.0);
    let mut y = x * 1.0;
    for k in 2..=FAN_OUT {
        y += x * k as f64;
    }
    let n = FAN_OUT as f64;
    assert_eq!(y.value(), n * (n + 1.0));
    assert_eq!(y.gradient()[x], n * (n + 1.0) / 2.0);
}

#[test]
fn both_engines_agree_on_a_long_chain_bit_for_bit() {
    on_2mib_stack(|| {
        let steps = 100_000;
        let (a, b) = (Value::new(0.3), Value::new(-0.2));
        let mut y = a.clone();
        for i in 0..steps {
            y = match i % 3 {
                0 => (&y * &b).sin() + &a,
                1 => (&y + &b).tanh() * 1.5,
                _ => &y - &y * &y * 0.1,
            };
        }
        y.backward();

        let tape = Tape::new();
        let (ta, tb) = (tape.var(0.3), tape.var(-0.2));
        let mut t = ta;
        for i in 0..steps {
            t = match i % 3 {
                0 => (t * tb).sin() + ta,
                1 => (t + tb).tanh() * 1.5,
                _ => t - t * t * 0.1,
            };
        }
        let g = t.gradient();
        assert_eq!(y.data().to_bits(), t.value().to_bits());
        assert_eq!(a.grad().to_bits(), g[ta].to_bits());
        assert_eq!(b.grad().to_bits(), g[tb].to_bits());
        assert!(a.grad().is_finite() && a.grad() != 0.0);
    });
}
