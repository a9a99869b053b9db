//! micrograd's moons model: the `#[grad]` gradient of the whole training loss (337
//! parameters, 100 samples, loops, arrays, ReLU kinks) against the `Value` engine and a
//! hand-written backpropagation.

#[path = "../examples/moons_model/mod.rs"]
mod model;

use model::{init, loss, loss_backprop, loss_backprop_dense, loss_grad, loss_value, moons};

fn assert_gradients_close(actual: &[f64], expected: &[f64], tolerance: f64, what: &str) {
    assert_eq!(actual.len(), expected.len());
    for (k, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert!(
            (a - e).abs() <= tolerance * e.abs().max(1.0),
            "{what}: parameter {k}: {a} vs {e}"
        );
    }
}

#[test]
fn moons_gradient_matches_value_and_backprop() {
    let (xs, ys) = moons(1337);
    for seed in [7, 11, 2024] {
        let mut p = init(seed);
        // A second point, after one gradient step, where different units are active.
        for round in 0..2 {
            let (value, grad) = loss_grad(&p, &xs, &ys);
            assert_eq!(value.to_bits(), loss(&p, &xs, &ys).to_bits(), "value");
            let (value_engine, grad_engine) = loss_value(&p, &xs, &ys);
            assert!((value - value_engine).abs() <= 1e-12 * value.abs());
            assert_gradients_close(&grad, &grad_engine, 1e-9, "against Value");
            let (_, by_hand) = loss_backprop(&p, &xs, &ys);
            assert_gradients_close(&grad, &by_hand, 1e-9, "against backprop");
            let (_, dense) = loss_backprop_dense(&p, &xs, &ys);
            assert_gradients_close(&grad, &dense, 1e-9, "against dense backprop");
            assert!(grad.iter().any(|g| *g != 0.0), "seed {seed} round {round}");
            for (q, g) in p.iter_mut().zip(grad) {
                *q -= 0.5 * g;
            }
        }
    }
}

#[test]
fn moons_gradient_runs_on_a_test_thread_stack() {
    // The tape slots live on the stack: about 50 KiB for this model (see the README).
    let handle = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(|| {
            let (xs, ys) = moons(1);
            loss_grad(&init(1), &xs, &ys).0
        })
        .expect("spawn");
    assert!(handle.join().expect("no overflow").is_finite());
}
