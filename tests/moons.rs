//! micrograd's moons model: the `#[grad]` gradient of the whole training loss (337
//! parameters, 100 samples, loops, arrays, ReLU kinks) against the `Value` engine and a
//! hand-written backpropagation.

#[path = "../examples/moons_model/mod.rs"]
mod model;

use model::{
    init, loss, loss_backprop, loss_backprop_dense, loss_grad, loss_slices, loss_slices_grad,
    loss_slices_grad_into, loss_value, moons, Mlp, PARAMS,
};

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
fn slice_loss_matches_the_constant_size_loss() {
    let (xs, ys) = moons(1337);
    // The data as slices of a run-time length, in `Vec`s as a data set read from a file.
    let (xs_vec, ys_vec) = (xs.to_vec(), ys.to_vec());
    for seed in [7, 11, 2024] {
        let mut p = init(seed);
        // The same points as above: the initial parameters, then one gradient step on.
        for round in 0..2 {
            let (value, grad) = loss_grad(&p, &xs, &ys);
            let (slice_value, slice_grad) = loss_slices_grad(&p, &xs_vec, &ys_vec);
            let what = format!("seed {seed} round {round}");
            assert_eq!(
                slice_value.to_bits(),
                value.to_bits(),
                "{what}: value against the constant-size gradient"
            );
            assert_eq!(
                slice_value.to_bits(),
                loss_slices(&p, &xs_vec, &ys_vec).to_bits(),
                "{what}: value against the primal"
            );
            assert_eq!(
                loss_slices(&p, &xs_vec, &ys_vec).to_bits(),
                loss(&p, &xs, &ys).to_bits(),
                "{what}: the two primals"
            );
            assert_gradients_close(&slice_grad, &grad, 1e-9, "slices against constant");
            let (_, by_hand) = loss_backprop(&p, &xs, &ys);
            assert_gradients_close(&slice_grad, &by_hand, 1e-9, "slices against backprop");
            let (_, dense) = loss_backprop_dense(&p, &xs, &ys);
            assert_gradients_close(&slice_grad, &dense, 1e-9, "slices against dense");

            // The allocation-free form adds the same gradient into a zeroed buffer, and
            // gives the same value on a second call (the workspace is reused).
            let mut buffer = [0.0; PARAMS];
            let into_value = loss_slices_grad_into(&p, &xs_vec, &ys_vec, &mut buffer);
            assert_eq!(
                into_value.to_bits(),
                value.to_bits(),
                "{what}: _grad_into value"
            );
            assert_gradients_close(&buffer, &slice_grad, 0.0, "_grad_into against _grad");
            let mut again = [0.0; PARAMS];
            let again_value = loss_slices_grad_into(&p, &xs_vec, &ys_vec, &mut again);
            assert_eq!(
                again_value.to_bits(),
                value.to_bits(),
                "{what}: second call"
            );
            assert_eq!(again, buffer, "{what}: second call's gradient");

            for (q, g) in p.iter_mut().zip(grad) {
                *q -= 0.5 * g;
            }
        }
    }
}

#[test]
fn slice_loss_takes_any_number_of_samples() {
    // Fewer samples than the constant-size loss is built for: the first 37, and none.
    let (xs, ys) = moons(5);
    let p = init(3);
    let n = 37;
    let (value, grad) = loss_slices_grad(&p, &xs[..n], &ys[..n]);
    assert_eq!(
        value.to_bits(),
        loss_slices(&p, &xs[..n], &ys[..n]).to_bits()
    );
    // Central differences (the loss is piecewise quadratic in `p`, so they are accurate
    // away from the kinks).
    let h = 1e-6;
    for k in [0, 5, 50, 200, PARAMS - 1] {
        let mut plus = p;
        let mut minus = p;
        plus[k] += h;
        minus[k] -= h;
        let numeric = (loss_slices(&plus, &xs[..n], &ys[..n])
            - loss_slices(&minus, &xs[..n], &ys[..n]))
            / (2.0 * h);
        assert!(
            (grad[k] - numeric).abs() <= 1e-6 * numeric.abs().max(1.0),
            "parameter {k}: {} vs {numeric}",
            grad[k]
        );
    }
    // No samples: the mean of nothing is 0/0, NaN in the gradient as in the primal (whose
    // sign bit Rust leaves unspecified).
    let (empty_value, empty_grad) = loss_slices_grad(&p, &[], &[]);
    assert!(empty_value.is_nan() && loss_slices(&p, &[], &[]).is_nan());
    assert_eq!(empty_grad.len(), PARAMS);
}

#[test]
fn moons_gradient_runs_on_a_test_thread_stack() {
    // The tape slots live on the stack: about 50 KiB for this model (see the guide's "Stack use").
    let handle = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(|| {
            let (xs, ys) = moons(1);
            loss_grad(&init(1), &xs, &ys).0
        })
        .expect("spawn");
    assert!(handle.join().expect("no overflow").is_finite());
}

#[test]
fn struct_model_matches_the_flat_loss() {
    let (xs, ys) = moons(5);
    for seed in [1, 2, 3] {
        let p = init(seed);
        let m = Mlp::from_flat(&p);
        assert_eq!(Mlp::from_flat(&m.to_flat()), m);
        let (value, d_m) = m.loss_grad(&xs, &ys);
        let (flat_value, flat_grad) = loss_slices_grad(&p, &xs, &ys);
        assert_eq!(value.to_bits(), m.loss(&xs, &ys).to_bits());
        assert_eq!(
            value.to_bits(),
            flat_value.to_bits(),
            "same value bit for bit"
        );
        assert_gradients_close(&d_m.to_flat(), &flat_grad, 1e-12, "struct vs flat");
        // And against the Value engine, an independent reference.
        let (_, value_grad) = loss_value(&p, &xs, &ys);
        assert_gradients_close(&d_m.to_flat(), &value_grad, 1e-9, "struct vs Value");
    }
}
