//! The contenders of each comparison in `autodiff_bench::runtime_lengths` compute the same
//! gradient, so that their times compare equal work.

use autodiff_bench::relative_error;
use autodiff_bench::runtime_lengths::{chain, layouts, moons_model, trip_count};

#[test]
fn moons_contenders_agree() {
    use moons_model::{init, loss_backprop_dense, loss_grad, loss_slices_grad, moons};
    let (xs, ys) = moons(1337);
    let p = init(7);
    let (value, grad) = loss_slices_grad(&p, &xs, &ys);
    let (constant_value, constant) = loss_grad(&p, &xs, &ys);
    assert_eq!(value.to_bits(), constant_value.to_bits());
    assert!(relative_error(&grad, &constant) <= 1e-12);
    let (_, dense) = loss_backprop_dense(&p, &xs, &ys);
    assert!(relative_error(&grad, &dense) <= 1e-12);
    // The layouts are the generated code written out: equal bit for bit, twice in a row
    // (their block is reused).
    for layout in [layouts::slab, layouts::frames] {
        for _ in 0..2 {
            let (v, g) = layout(&p, &xs, &ys);
            assert_eq!(v.to_bits(), value.to_bits());
            assert_eq!(g.map(f64::to_bits), grad.map(f64::to_bits));
        }
    }
}

#[test]
fn moons_by_blocks_agrees_with_the_slices() {
    use autodiff_bench::runtime_lengths::moons::{blocks, by_blocks};
    use moons_model::{init, loss_slices_grad};
    let (blocks, xs, ys) = blocks(10);
    let p = init(7);
    let (value, grad) = loss_slices_grad(&p, &xs, &ys);
    for sparse in [false, true] {
        let (v, g) = by_blocks(&p, &blocks, sparse);
        assert!((v - value).abs() <= 1e-12 * value.abs());
        assert!(relative_error(&grad, &g) <= 1e-12);
    }
}

#[test]
fn chain_and_index_loop_agree() {
    let (xs, ys) = chain::data(chain::SAMPLES);
    let (value, grad) = chain::chain_loss_grad(&chain::W, &xs, &ys);
    assert_eq!(
        value.to_bits(),
        chain::chain_loss(&chain::W, &xs, &ys).to_bits()
    );
    let (index_value, index) = chain::index_loss_grad(&chain::W, &xs, &ys);
    assert_eq!(
        index_value.to_bits(),
        chain::index_loss(&chain::W, &xs, &ys).to_bits()
    );
    assert!((value - index_value).abs() <= 1e-12 * value.abs());
    assert!(relative_error(&grad, &index) <= 1e-12);
    let (hand_value, hand) = chain::hand_written(&chain::W, &xs, &ys);
    assert!((value - hand_value).abs() <= 1e-12 * value.abs());
    assert!(relative_error(&grad, &hand) <= 1e-12, "{grad:?} {hand:?}");
}

#[test]
fn run_time_and_constant_trip_counts_agree() {
    use trip_count::*;
    let (value, da, dx) = recurrence_grad(0.9, 0.5, STEPS);
    let (constant_value, constant_da, constant_dx) = recurrence_constant_grad(0.9, 0.5);
    assert_eq!(value.to_bits(), constant_value.to_bits());
    assert_eq!(
        (da.to_bits(), dx.to_bits()),
        (constant_da.to_bits(), constant_dx.to_bits())
    );
    let h = 1e-6;
    let fd = (recurrence(0.9 + h, 0.5, STEPS) - recurrence(0.9 - h, 0.5, STEPS)) / (2.0 * h);
    assert!((da - fd).abs() <= 1e-6 * fd.abs().max(1.0), "{da} {fd}");

    let xs = samples();
    let (value, grad) = discounted_grad(&xs);
    let (constant_value, constant) = discounted_constant_grad(&xs);
    assert_eq!(value.to_bits(), constant_value.to_bits());
    assert_eq!(grad.len(), STEPS);
    assert!(relative_error(&grad, &constant) <= 1e-15);

    // The slab layouts are the generated code written out: equal bit for bit.
    let (mut slab_da, mut slab_dx) = (0.0, 0.0);
    let slab_value = layouts::recurrence_slab(0.9, 0.5, STEPS, &mut slab_da, &mut slab_dx);
    let (value, da, dx) = recurrence_grad(0.9, 0.5, STEPS);
    assert_eq!(slab_value.to_bits(), value.to_bits());
    assert_eq!(
        (slab_da.to_bits(), slab_dx.to_bits()),
        (da.to_bits(), dx.to_bits())
    );
    let mut slab_grad = vec![0.0; STEPS];
    let slab_value = layouts::discounted_slab(&xs, &mut slab_grad);
    let (value, grad) = discounted_grad(&xs);
    assert_eq!(slab_value.to_bits(), value.to_bits());
    assert_eq!(slab_grad, grad);
}

#[test]
fn the_batched_backpropagation_agrees_with_the_moons_gradient() {
    use autodiff_bench::runtime_lengths::moons::blocks;
    use moons_model::{init, loss_slices_grad, ALPHA, HIDDEN};
    let (_, xs, ys) = blocks(3);
    let p = init(7);
    let (value, grad) = loss_slices_grad(&p, &xs, &ys);
    let (v, g) = autodiff_bench::batched::loss_and_gradient(HIDDEN, ALPHA, &p, &xs, &ys);
    assert!((v - value).abs() <= 1e-12 * value.abs(), "{v} {value}");
    assert!(relative_error(&g, &grad) <= 1e-12);
}

#[test]
fn wide_contenders_agree() {
    use autodiff_bench::wide::{
        backprop, init, loss, loss_grad, loss_lanes_grad, ALPHA, PARAMS, WIDTH,
    };
    let (xs, ys) = moons_model::moons(1337);
    let p = init(7);
    assert_eq!(p.len(), PARAMS);
    let (value, grad) = loss_grad(&p, &xs, &ys);
    assert_eq!(value.to_bits(), loss(&p, &xs, &ys).to_bits());
    // Some hinge is active: the data reaches the gradient, not only the penalty.
    let data_part = grad
        .iter()
        .zip(&p)
        .filter(|(g, q)| (*g - 2.0 * ALPHA * *q).abs() > 1e-9);
    assert!(data_part.count() > 1_000);
    for sparse in [false, true] {
        let (v, g) = backprop(&p, &xs, &ys, sparse);
        assert!((v - value).abs() <= 1e-12 * value.abs());
        assert!(relative_error(&g, &grad) <= 1e-12, "sparse: {sparse}");
    }
    let (v, g) = autodiff_bench::batched::loss_and_gradient(WIDTH, ALPHA, &p, &xs, &ys);
    assert!((v - value).abs() <= 1e-12 * value.abs());
    assert!(relative_error(&g, &grad) <= 1e-12);
    // With its sums in lanes: the same loss and gradient up to rounding.
    let (v, g) = loss_lanes_grad(&p, &xs, &ys);
    assert!((v - value).abs() <= 1e-12 * value.abs());
    assert!(relative_error(&g, &grad) <= 1e-12);
}

/// `p` after 100 steps of gradient descent on the moons data set (as in
/// `examples/moons.rs`), where most hinges are inactive.
fn trained(mut p: [f64; moons_model::PARAMS]) -> [f64; moons_model::PARAMS] {
    use moons_model::{loss_backprop_dense, moons};
    let (xs, ys) = moons(1337);
    for k in 0..100 {
        let (_, grad) = loss_backprop_dense(&p, &xs, &ys);
        let rate = 1.0 - 0.9 * f64::from(k) / 100.0;
        for (q, g) in p.iter_mut().zip(grad) {
            *q -= rate * g;
        }
    }
    p
}

#[test]
fn the_lanes_backpropagation_agrees_with_the_moons_gradient() {
    use autodiff_bench::lanes::{loss_and_gradient, LANES};
    use autodiff_bench::runtime_lengths::moons::{blocks, by_blocks};
    use moons_model::{init, loss_backprop_dense, loss_slices_grad, moons};
    let p = init(7);
    // 100 samples: against the dense hand-written backpropagation and `#[grad]`.
    let (xs, ys) = moons(1337);
    let (value, grad) = loss_backprop_dense(&p, &xs, &ys);
    let (v, g) = loss_and_gradient(&p, &xs, &ys);
    assert!((v - value).abs() <= 1e-12 * value.abs(), "{v} {value}");
    assert!(relative_error(&g, &grad) <= 1e-12);
    let (generated_value, generated) = loss_slices_grad(&p, &xs, &ys);
    assert!((v - generated_value).abs() <= 1e-12 * value.abs());
    assert!(relative_error(&g, &generated) <= 1e-12);
    // 1,000 samples, and 103 and 7 (a partial last block, and only a partial block): the
    // padding adds nothing.
    let (blocks, xs, ys) = blocks(10);
    let (value, grad) = by_blocks(&p, &blocks, false);
    let (v, g) = loss_and_gradient(&p, &xs, &ys);
    assert!((v - value).abs() <= 1e-12 * value.abs(), "{v} {value}");
    assert!(relative_error(&g, &grad) <= 1e-12);
    for n in [103, 7] {
        assert_ne!(n % LANES, 0);
        let (value, grad) = loss_slices_grad(&p, &xs[..n], &ys[..n]);
        let (v, g) = loss_and_gradient(&p, &xs[..n], &ys[..n]);
        assert!((v - value).abs() <= 1e-12 * value.abs(), "{n}: {v} {value}");
        assert!(relative_error(&g, &grad) <= 1e-12, "{n} samples");
        // The data reaches the gradient, not only the penalty.
        let penalty_only: Vec<f64> = p.iter().map(|q| 2.0 * moons_model::ALPHA * q).collect();
        assert!(relative_error(&g, &penalty_only) > 1e-3);
    }
    // Where most hinges are inactive and every unit is on, too.
    let (xs, ys) = moons(1337);
    let trained = trained(p);
    let (value, grad) = loss_backprop_dense(&trained, &xs, &ys);
    let (v, g) = loss_and_gradient(&trained, &xs[..], &ys[..]);
    assert!((v - value).abs() <= 1e-12 * value.abs(), "{v} {value}");
    assert!(relative_error(&g, &grad) <= 1e-12);
}

#[test]
fn the_preaccumulated_moons_gradient_agrees_with_the_backpropagation() {
    use autodiff_bench::runtime_lengths::moons::{blocks, by_blocks};
    use moons_model::{
        init, loss_backprop_dense, loss_slices_grad, loss_slices_reassociate,
        loss_slices_reassociate_grad, moons, PARAMS,
    };
    let p = init(7);
    // 100 samples: against the dense hand-written backpropagation and the plain sweep.
    let (xs, ys) = moons(1337);
    let (value, grad) = loss_backprop_dense(&p, &xs, &ys);
    let (v, g) = loss_slices_reassociate_grad(&p, &xs, &ys);
    assert!((v - value).abs() <= 1e-12 * value.abs(), "{v} {value}");
    assert!(relative_error(&g, &grad) <= 1e-12);
    let original = loss_slices_reassociate(&p, &xs, &ys);
    assert!(
        (v - original).abs() <= 1e-12 * original.abs(),
        "{v} {original}"
    );
    let (_, plain) = loss_slices_grad(&p, &xs, &ys);
    assert!(relative_error(&g, &plain) <= 1e-12);
    // 1,000 samples, a few, one, and none (then only the penalty's gradient).
    let (blocks, xs, ys) = blocks(10);
    let (value, grad) = by_blocks(&p, &blocks, false);
    let (v, g) = loss_slices_reassociate_grad(&p, &xs, &ys);
    assert!((v - value).abs() <= 1e-12 * value.abs(), "{v} {value}");
    assert!(relative_error(&g, &grad) <= 1e-12);
    let penalty_only: Vec<f64> = p.iter().map(|q| 2.0 * moons_model::ALPHA * q).collect();
    for n in [103, 7, 1] {
        let (value, grad) = loss_slices_grad(&p, &xs[..n], &ys[..n]);
        let (v, g) = loss_slices_reassociate_grad(&p, &xs[..n], &ys[..n]);
        assert!((v - value).abs() <= 1e-12 * value.abs(), "{n}: {v} {value}");
        assert!(relative_error(&g, &grad) <= 1e-12, "{n} samples");
        assert!(relative_error(&g, &penalty_only) > 1e-3, "{n} samples");
    }
    // No sample: the loss is 0 / 0 and the adjoint of the data loss infinite, but a
    // loop that never ran contributes nothing, in both sweeps.
    let (v, g) = loss_slices_reassociate_grad(&p, &[], &[]);
    assert!(v.is_nan());
    let (_, plain) = loss_slices_grad(&p, &[], &[]);
    assert_eq!(g.map(f64::to_bits), plain.map(f64::to_bits));
    assert!(relative_error(&g, &penalty_only) <= 1e-15);
    // Trained, where most hinges are inactive and the sweep skips their samples.
    let (xs, ys) = moons(1337);
    let trained = trained(p);
    let (_, grad) = loss_backprop_dense(&trained, &xs, &ys);
    let (_, g) = loss_slices_reassociate_grad(&trained, &xs, &ys);
    assert!(relative_error(&g, &grad) <= 1e-12);
    assert_eq!(g.len(), PARAMS);
}
