//! The contenders of `autodiff_bench::parallel` compute the same loss and gradient, and
//! `#[grad(parallel)]` the same bits on any number of threads.

use autodiff_bench::parallel::pool;
use autodiff_bench::runtime_lengths::moons::blocks;
use autodiff_bench::runtime_lengths::moons_model::{init, loss_slices_grad, ALPHA, HIDDEN};
use autodiff_bench::runtime_lengths::moons_parallel::loss_slices_parallel_grad;
use autodiff_bench::wide;

fn assert_close(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len());
    for (k, (a, b)) in a.iter().zip(b).enumerate() {
        assert!(
            (a - b).abs() <= 1e-10 * (1.0 + a.abs().max(b.abs())),
            "{what}[{k}]: {a} vs {b}"
        );
    }
}

#[test]
fn the_moons_gradient_on_threads_is_the_plain_one_and_the_batched_one() {
    let p = init(7);
    let (_, xs, ys) = blocks(30);
    let (value, gradient) = loss_slices_parallel_grad(&p, &xs, &ys);
    let (plain_value, plain) = loss_slices_grad(&p, &xs, &ys);
    let (batched_value, batched) =
        autodiff_bench::batched::loss_and_gradient(HIDDEN, ALPHA, &p, &xs, &ys);
    assert_close(&[value], &[plain_value], "value");
    assert_close(&[value], &[batched_value], "value");
    assert_close(&gradient, &plain, "against the plain sweep");
    assert_close(&gradient, &batched, "against the batched backpropagation");
    let bits = |g: &[f64]| g.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for threads in [1, 2, 5] {
        let (v, g) = pool(threads).install(|| loss_slices_parallel_grad(&p, &xs, &ys));
        assert_eq!(v.to_bits(), value.to_bits(), "{threads} threads");
        assert_eq!(bits(&g), bits(&gradient), "{threads} threads");
    }
}

#[test]
fn the_wide_gradient_on_threads_is_the_plain_one() {
    let p = wide::init(7);
    let (_, xs, ys) = blocks(6);
    let (value, gradient) = wide::loss_parallel_grad(&p, &xs, &ys);
    let (plain_value, plain) = wide::loss_grad(&p, &xs, &ys);
    assert_close(&[value], &[plain_value], "value");
    assert_close(&gradient, &plain, "gradient");
    let (v, g) = pool(3).install(|| wide::loss_parallel_grad(&p, &xs, &ys));
    assert_eq!(v.to_bits(), value.to_bits());
    assert!(g
        .iter()
        .zip(&gradient)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
}
