//! The generated gradient functions never touch the heap.
//!
//! A counting global allocator records every allocation made by the current thread. The
//! `#[grad]` gradients below — a chain, a function calling other `#[grad]` functions, and
//! long bodies with dozens of operations — are called between two readings of the counter,
//! and the difference must be zero. The same counter is shown to register the allocations
//! of a `Vec`, of `Value` and of `Tape`, so a zero is a real measurement and not a counter
//! that never moves.
//!
//! Gradients with loops of run-time length (over slices, `while`, iterator reductions) keep
//! their saved values on a thread-local workspace that grows on the first call of a thread;
//! their `_grad_into` forms are measured after that first call, and allocate nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;

use autodiff::prelude::*;

// ---------------------------------------------------------------------------------------
// The counting allocator.

thread_local! {
    /// Allocations made by this thread so far. Per thread, so the tests that the harness
    /// runs in parallel do not see each other's allocations; `const`-initialised and
    /// without a destructor, so reading or bumping it never allocates itself.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// The system allocator, counting the allocations of each thread.
struct CountingAllocator;

/// Adds one to the current thread's count. `try_with`: during thread teardown the
/// thread-local may already be gone, and an allocation then simply goes uncounted.
fn count_one() {
    let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
}

// SAFETY: the only `unsafe` in the project. Every method forwards its arguments unchanged
// to `System`, which upholds the `GlobalAlloc` contract; counting touches only a
// thread-local `Cell` and neither allocates nor unwinds.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        System.realloc(ptr, layout, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

/// The number of allocations the current thread makes while running `f`, and its result.
fn allocations_in<T>(f: impl FnOnce() -> T) -> (usize, T) {
    let before = ALLOCATIONS.with(Cell::get);
    let result = f();
    let after = ALLOCATIONS.with(Cell::get);
    (after - before, result)
}

// ---------------------------------------------------------------------------------------
// Gradients to measure.

/// A chain of unary operations, each feeding the next.
#[grad]
fn chain(x: f64) -> f64 {
    x.sin().exp().tanh().powi(3).sqrt().ln_1p().atan().cosh()
}

/// A small `#[grad]` function, called by `calls_others`.
#[grad]
fn softsign_like(a: f64, b: f64) -> f64 {
    a / (1.0 + b.abs()) + (a * b).sigmoid()
}

/// Calls `#[grad]` functions (its gradient calls `softsign_like_grad` and `chain_grad`).
#[grad]
fn calls_others(x: f64, y: f64) -> f64 {
    let u = softsign_like(x, y);
    let v = softsign_like(u, x * y);
    chain(v) + u * v
}

/// A two-input, three-hidden-unit network with a squared-error loss: over 30 operations and
/// heavy reuse of the inputs.
#[grad]
#[allow(clippy::too_many_arguments)]
fn mlp_loss(x1: f64, x2: f64, w11: f64, w12: f64, w21: f64, w22: f64, w31: f64, w32: f64) -> f64 {
    let h1 = (x1 * w11 + x2 * w12 + 0.1).tanh();
    let h2 = (x1 * w21 + x2 * w22 - 0.2).relu();
    let h3 = (x1 * w31 + x2 * w32).sigmoid();
    let out = 0.5 * h1 - 1.5 * h2 + 2.0 * h3 + h1 * h3;
    let target = 0.75;
    let error = out - target;
    let penalty = 1e-3 * (w11 * w11 + w12 * w12 + w21 * w21 + w22 * w22 + w31 * w31 + w32 * w32);
    error * error + penalty
}

/// A long body (41 operations) mixing binary and ternary operations, mutation and
/// constants.
#[grad]
fn many_ops(x: f64, y: f64, z: f64) -> f64 {
    let mut acc = x.mul_add(y, z);
    acc += x.hypot(y) * z.exp2();
    acc *= 1.0 + (x - y).abs();
    acc -= x.max(y).min(z).clamp(-2.0, 2.0);
    acc /= 2.0 + y.atan2(x).cos();
    let r = (x * x + y * y + z * z).sqrt().cbrt();
    let s = x.powf(2.5).log(3.0) + y.to_radians().sin() + z.to_degrees().recip();
    acc * r + s.exp_m1() - x.powf(y).log10() + (r * s).asinh()
}

// ---------------------------------------------------------------------------------------
// Tests.

#[test]
fn the_counter_counts() {
    let (count, v) = allocations_in(|| black_box(vec![1.0f64; 16]));
    assert!(count >= 1, "a Vec allocation was not counted");
    drop(v);

    // The dynamic engines allocate: one node per operation for `Value`, a growing arena
    // for `Tape`.
    let (count, grad) = allocations_in(|| {
        let x = Value::new(black_box(0.5));
        let y = (&x * &x).tanh();
        y.backward();
        x.grad()
    });
    assert!(count >= 3, "Value allocated only {count} times");
    assert_eq!(grad, chain_like_reference(0.5));

    let (count, grad) = allocations_in(|| {
        let tape = Tape::new();
        let x = tape.var(black_box(0.5));
        let y = (x * x).tanh();
        y.gradient().wrt(x)
    });
    assert!(count >= 1, "Tape allocated only {count} times");
    assert_eq!(grad, chain_like_reference(0.5));
}

/// `d/dx tanh(x²) = 2x·(1 - tanh²(x²))`, computed with the rules in the order `Value` and
/// `Tape` use them (the partial of `x·x` applied twice).
fn chain_like_reference(x: f64) -> f64 {
    let (_, dt) = autodiff::rules::tanh(x * x);
    0.0 + x * dt + x * dt
}

#[test]
fn generated_gradients_do_not_allocate() {
    // Warm up first: the first use of anything lazily initialised (stdout, thread-locals
    // of the standard library) must not be blamed on the gradients.
    let _ = black_box(chain_grad(black_box(0.3)));

    let (count, total) = allocations_in(|| {
        let mut total = 0.0;
        for i in 0..100 {
            let t = f64::from(i) / 100.0;
            let (v, d) = chain_grad(black_box(0.3 + t));
            total += v + d;
            let (v, a, b) = softsign_like_grad(black_box(t - 0.5), black_box(1.5 - t));
            total += v + a + b;
            let (v, a, b) = calls_others_grad(black_box(0.2 + t), black_box(-0.7 + t));
            total += v + a + b;
            let (v, g1, g2, g3, g4, g5, g6, g7, g8) = mlp_loss_grad(
                black_box(0.5 + t),
                black_box(-1.0),
                black_box(0.3),
                black_box(-0.2),
                black_box(0.8 - t),
                black_box(0.1),
                black_box(-0.5),
                black_box(0.4 + t),
            );
            total += v + g1 + g2 + g3 + g4 + g5 + g6 + g7 + g8;
            let (v, a, b, c) =
                many_ops_grad(black_box(1.2 + t), black_box(0.7), black_box(-0.4 - t));
            total += v + a + b + c;
        }
        black_box(total)
    });
    assert_eq!(count, 0, "the generated gradients allocated {count} times");
    // The loop really ran and produced numbers.
    assert!(total.is_finite() && total != 0.0, "total = {total}");
}

#[test]
fn generated_gradients_compute_the_right_thing() {
    // The calls measured above are real gradients: check them against central finite
    // differences, so that the zero-allocation test cannot pass on a broken function.
    let h = 1e-6;
    let fd = |f: &dyn Fn(f64) -> f64, x: f64| (f(x + h) - f(x - h)) / (2.0 * h);
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);

    let (_, d) = chain_grad(0.4);
    assert!(close(d, fd(&chain, 0.4)));
    let (_, dx, dy) = calls_others_grad(0.3, -0.6);
    assert!(close(dx, fd(&|x| calls_others(x, -0.6), 0.3)));
    assert!(close(dy, fd(&|y| calls_others(0.3, y), -0.6)));
    let (_, dx, dy, dz) = many_ops_grad(1.3, 0.7, -0.2);
    assert!(close(dx, fd(&|x| many_ops(x, 0.7, -0.2), 1.3)));
    assert!(close(dy, fd(&|y| many_ops(1.3, y, -0.2), 0.7)));
    assert!(close(dz, fd(&|z| many_ops(1.3, 0.7, z), -0.2)));
    let (_, g1, _, _, _, g5, _, _, g8) = mlp_loss_grad(0.5, -1.0, 0.3, -0.2, 0.8, 0.1, -0.5, 0.4);
    let at = |x1: f64, w21: f64, w32: f64| mlp_loss(x1, -1.0, 0.3, -0.2, w21, 0.1, -0.5, w32);
    assert!(close(g1, fd(&|x| at(x, 0.8, 0.4), 0.5)));
    assert!(close(g5, fd(&|w| at(0.5, w, 0.4), 0.8)));
    assert!(close(g8, fd(&|w| at(0.5, 0.8, w), 0.4)));
}

const WIDTH: usize = 8;

/// Loops, a local array, a nested array parameter and a branch: the tape slots of the
/// reverse sweep are stack arrays, so this allocates nothing either.
#[grad(wrt(w))]
fn layer(w: &[[f64; WIDTH]; WIDTH], x: &[f64; WIDTH]) -> f64 {
    let mut h = [0.0; WIDTH];
    let mut total = 0.0;
    for j in 0..WIDTH {
        for i in 0..WIDTH {
            h[j] += w[j][i] * x[i];
        }
        if h[j] > 0.0 {
            total += h[j].tanh();
        } else {
            total -= 0.1 * h[j];
        }
    }
    total
}

#[test]
fn gradients_with_loops_and_arrays_do_not_allocate() {
    let mut w = [[0.0; WIDTH]; WIDTH];
    for (j, row) in w.iter_mut().enumerate() {
        for (i, v) in row.iter_mut().enumerate() {
            *v = ((j * WIDTH + i) as f64 * 0.37).sin();
        }
    }
    let x = [0.5, -0.25, 1.0, 0.75, -1.5, 0.1, 0.2, -0.3];
    let (count, (value, grad)) = allocations_in(|| {
        let mut last = (0.0, [[0.0; WIDTH]; WIDTH]);
        for _ in 0..100 {
            last = layer_grad(black_box(&w), black_box(&x));
        }
        last
    });
    assert_eq!(count, 0, "layer_grad allocated {count} times in 100 calls");
    assert_eq!(value, layer(&w, &x));
    // ∂/∂w[j][i] = x[i] · (tanh'(h[j]) or -0.1): nonzero wherever x[i] is.
    assert!(grad.iter().flatten().filter(|g| **g != 0.0).count() == WIDTH * WIDTH);
}

// ---------------------------------------------------------------------------------------
// Loops of run-time length: the reverse sweep's values go to a workspace taken from a
// thread-local pool and given back, with its capacity, when the gradient returns. The
// first call on a thread grows it; from then on `_grad_into`, which writes the partials
// into buffers the caller owns, allocates nothing.

/// A `for` over a slice (`iter().zip()`), with a branch and a local array inside.
#[grad(wrt(w), jvp)]
fn slice_loop(w: &[f64; 3], xs: &[[f64; 2]], ys: &[f64]) -> f64 {
    let mut total = 0.0;
    for (x, &y) in xs.iter().zip(ys) {
        let h = [(w[0] * x[0]).tanh(), (w[1] * x[1]).sin()];
        let out = h[0] * h[1] + w[2];
        if out > y {
            total += (out - y).powi(2);
        } else {
            total += 0.5 * (y - out);
        }
    }
    total / xs.len() as f64
}

/// A `while` whose trip count is known only when it ends, over a slice parameter too.
#[grad(jvp)]
fn while_loop(a: f64, xs: &[f64]) -> f64 {
    let mut y = a;
    let mut k = 0;
    while k < xs.len() && y.abs() < 1e3 {
        y = y * xs[k].cos() + (a * y).sin();
        k += 1;
    }
    y
}

/// Iterator reductions: `map(..).sum()`, `fold` and `product`.
#[grad(jvp)]
fn reductions(w: f64, xs: &[f64]) -> f64 {
    let s = xs.iter().map(|x| (w * x).tanh()).sum::<f64>();
    let m = xs.iter().fold(0.0, |acc, &x| 0.9 * acc + (x - w).powi(2));
    let p = xs.iter().map(|x| 1.0 + 0.01 * w * x).product::<f64>();
    s + m * p
}

/// One sample loop, differentiated twice under `reassociate`, which preaccumulates it.
macro_rules! sample_loop {
    ($(#[$doc:meta])* $name:ident, [$($args:tt)*]) => {
        $(#[$doc])*
        #[grad($($args)*)]
        fn $name(w: &[f64], xs: &[[f64; 2]]) -> f64 {
            let mut total = 0.0;
            for x in xs {
                let mut a = 0.0;
                for i in 0..2 {
                    a += (w[i] * x[i]).tanh();
                }
                total += a * a;
            }
            total
        }
    };
}

sample_loop!(
    /// The partial of the slice `w` sums over the samples in a workspace of its own, taken
    /// from the pool too.
    preaccumulated,
    [wrt(w), reassociate]
);
sample_loop!(
    /// Differentiated in the samples too: their gradient, rows of two, is preaccumulated
    /// in a workspace block of its own.
    preaccumulated_rows,
    [reassociate]
);

#[test]
fn preaccumulated_rows_do_not_allocate_after_the_first_call() {
    std::thread::spawn(|| {
        let (xs, _, _) = sample_slices(500);
        let w = [0.3, -0.8];
        let (mut dw, mut dxs) = ([0.0; 2], vec![[0.0; 2]; xs.len()]);
        let (first, _) =
            allocations_in(|| preaccumulated_rows_grad_into(&w, &xs, &mut dw, &mut dxs));
        assert!(first >= 1, "the first call did not grow the workspace");
        let (count, total) = allocations_in(|| {
            let mut total = 0.0;
            for _ in 0..100 {
                total += preaccumulated_rows_grad_into(black_box(&w), &xs, &mut dw, &mut dxs);
            }
            black_box(total)
        });
        assert_eq!(count, 0, "rows allocated {count} times in 100 calls");
        assert!(total.is_finite() && total != 0.0, "total = {total}");

        // Against central differences, on one call into zeroed buffers.
        let (mut dw, mut dxs) = ([0.0; 2], vec![[0.0; 2]; xs.len()]);
        preaccumulated_rows_grad_into(&w, &xs, &mut dw, &mut dxs);
        let h = 1e-6;
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
        for (i, j) in [(0, 0), (7, 1), (499, 0)] {
            let (mut plus, mut minus) = (xs.clone(), xs.clone());
            plus[i][j] += h;
            minus[i][j] -= h;
            let fd = (preaccumulated_rows(&w, &plus) - preaccumulated_rows(&w, &minus)) / (2.0 * h);
            assert!(close(dxs[i][j], fd), "xs[{i}][{j}]: {} vs {fd}", dxs[i][j]);
        }
        let fd = (preaccumulated_rows(&[0.3 + h, -0.8], &xs)
            - preaccumulated_rows(&[0.3 - h, -0.8], &xs))
            / (2.0 * h);
        assert!(close(dw[0], fd), "w[0]: {} vs {fd}", dw[0]);
    })
    .join()
    .expect("the measuring thread");
}

fn sample_slices(n: usize) -> (Vec<[f64; 2]>, Vec<f64>, Vec<f64>) {
    let xs = (0..n)
        .map(|i| [(i as f64 * 0.3).sin(), (i as f64 * 0.7).cos()])
        .collect();
    let ys = (0..n).map(|i| (i as f64 * 0.11).cos()).collect();
    let flat = (0..n).map(|i| 0.5 + (i as f64 * 0.9).sin()).collect();
    (xs, ys, flat)
}

/// Calls the three `_grad_into` functions once, adding into the buffers.
fn run_time_loop_calls(
    xs: &[[f64; 2]],
    ys: &[f64],
    flat: &[f64],
    dw: &mut [f64; 3],
    dxs: &mut [f64],
) -> f64 {
    let (mut da, mut dw_scalar) = (0.0, 0.0);
    let mut total = slice_loop_grad_into(black_box(&[0.3, -0.8, 0.1]), xs, ys, dw);
    total += while_loop_grad_into(black_box(0.7), flat, &mut da, dxs);
    total += reductions_grad_into(black_box(0.4), flat, &mut dw_scalar, dxs);
    total += preaccumulated_grad_into(black_box(&[0.3, -0.8]), xs, &mut dxs[..2]);
    total + da + dw_scalar
}

#[test]
fn run_time_loops_do_not_allocate_after_the_first_call() {
    // On a thread of its own, so that its workspace pool starts empty and the first call
    // is seen to grow it.
    std::thread::spawn(|| {
        let (xs, ys, flat) = sample_slices(1000);
        let mut dw = [0.0; 3];
        let mut dxs = vec![0.0; flat.len()];
        let (first, _) = allocations_in(|| run_time_loop_calls(&xs, &ys, &flat, &mut dw, &mut dxs));
        assert!(first >= 1, "the first call did not grow the workspace");

        let (count, total) = allocations_in(|| {
            let mut total = 0.0;
            for _ in 0..100 {
                total += run_time_loop_calls(&xs, &ys, &flat, &mut dw, &mut dxs);
            }
            black_box(total)
        });
        assert_eq!(
            count, 0,
            "run-time loops allocated {count} times in 100 calls"
        );
        assert!(total.is_finite() && total != 0.0, "total = {total}");

        // Shorter slices reuse the capacity too.
        let (count, _) = allocations_in(|| {
            run_time_loop_calls(&xs[..10], &ys[..10], &flat[..10], &mut dw, &mut dxs[..10])
        });
        assert_eq!(count, 0, "a shorter slice allocated {count} times");
    })
    .join()
    .expect("the measuring thread");
}

/// Forward mode keeps no tape: over slices of any length it allocates nothing, from the
/// first call on, and takes nothing from the workspace pool.
#[test]
fn forward_mode_never_allocates() {
    std::thread::spawn(|| {
        let (xs, ys, flat) = sample_slices(1000);
        let tangents = vec![0.25; flat.len()];
        let (count, total) = allocations_in(|| {
            let mut total = 0.0;
            for k in 0..10 {
                let w = [0.3, -0.8, 0.1 * f64::from(k)];
                total += slice_loop_jvp(black_box(&w), &xs, &ys, &[1.0, 0.5, -0.25]).1;
                total += while_loop_jvp(black_box(0.7), &flat, 1.0, &tangents).1;
                total += reductions_jvp(black_box(0.4), &flat, 1.0, &tangents).1;
            }
            black_box(total)
        });
        assert_eq!(count, 0, "forward mode allocated {count} times in 30 calls");
        assert!(total.is_finite() && total != 0.0, "total = {total}");
        // The tangents are the gradients' dot products with the directions.
        let (_, dw) = slice_loop_grad(&[0.3, -0.8, 0.1], &xs, &ys);
        let along = slice_loop_jvp(&[0.3, -0.8, 0.1], &xs, &ys, &[1.0, 0.5, -0.25]).1;
        let expected = dw[0] + 0.5 * dw[1] - 0.25 * dw[2];
        assert!((along - expected).abs() <= 1e-12 * expected.abs().max(1.0));
        let (_, da, dxs) = while_loop_grad(0.7, &flat);
        let along = while_loop_jvp(0.7, &flat, 1.0, &tangents).1;
        let expected = da + 0.25 * dxs.iter().sum::<f64>();
        assert!((along - expected).abs() <= 1e-12 * expected.abs().max(1.0));
    })
    .join()
    .expect("the measuring thread");
}

#[test]
fn run_time_loops_compute_the_right_thing() {
    let (xs, ys, flat) = sample_slices(40);
    let h = 1e-6;
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);

    let w = [0.3, -0.8, 0.1];
    let mut dw = [0.0; 3];
    let value = slice_loop_grad_into(&w, &xs, &ys, &mut dw);
    assert_eq!(value, slice_loop(&w, &xs, &ys));
    for i in 0..3 {
        let (mut plus, mut minus) = (w, w);
        plus[i] += h;
        minus[i] -= h;
        let fd = (slice_loop(&plus, &xs, &ys) - slice_loop(&minus, &xs, &ys)) / (2.0 * h);
        assert!(close(dw[i], fd), "slice_loop w[{i}]: {} vs {fd}", dw[i]);
    }

    let (mut da, mut dxs) = (0.0, vec![0.0; flat.len()]);
    let value = while_loop_grad_into(0.7, &flat, &mut da, &mut dxs);
    assert_eq!(value, while_loop(0.7, &flat));
    let fd = (while_loop(0.7 + h, &flat) - while_loop(0.7 - h, &flat)) / (2.0 * h);
    assert!(close(da, fd), "while_loop a: {da} vs {fd}");
    let mut plus = flat.clone();
    let mut minus = flat.clone();
    plus[3] += h;
    minus[3] -= h;
    let fd = (while_loop(0.7, &plus) - while_loop(0.7, &minus)) / (2.0 * h);
    assert!(close(dxs[3], fd), "while_loop xs[3]: {} vs {fd}", dxs[3]);

    let (mut dw, mut dxs) = (0.0, vec![0.0; flat.len()]);
    let value = reductions_grad_into(0.4, &flat, &mut dw, &mut dxs);
    assert_eq!(value, reductions(0.4, &flat));
    let fd = (reductions(0.4 + h, &flat) - reductions(0.4 - h, &flat)) / (2.0 * h);
    assert!(close(dw, fd), "reductions w: {dw} vs {fd}");
    let mut plus = flat.clone();
    let mut minus = flat.clone();
    plus[7] += h;
    minus[7] -= h;
    let fd = (reductions(0.4, &plus) - reductions(0.4, &minus)) / (2.0 * h);
    assert!(close(dxs[7], fd), "reductions xs[7]: {} vs {fd}", dxs[7]);

    let w = [0.3, -0.8];
    let mut dw = [0.0; 2];
    let value = preaccumulated_grad_into(&w, &xs, &mut dw);
    assert!(close(value, preaccumulated(&w, &xs)));
    for i in 0..2 {
        let (mut plus, mut minus) = (w, w);
        plus[i] += h;
        minus[i] -= h;
        let fd = (preaccumulated(&plus, &xs) - preaccumulated(&minus, &xs)) / (2.0 * h);
        assert!(close(dw[i], fd), "preaccumulated w[{i}]: {} vs {fd}", dw[i]);
    }
}

/// A model as a struct without `Vec` fields, its loss a method over slices of samples.
#[derive(autodiff::Differentiable, Clone)]
struct Affine {
    w: [[f64; 2]; 2],
    b: [f64; 2],
    gain: f64,
}

#[grad]
impl Affine {
    #[grad(wrt(self))]
    fn loss(&self, xs: &[[f64; 2]], ys: &[f64]) -> f64 {
        let mut total = 0.0;
        for (x, &y) in xs.iter().zip(ys) {
            let mut out = 0.0;
            for j in 0..2 {
                out += (self.w[j][0] * x[0] + self.w[j][1] * x[1] + self.b[j]).tanh();
            }
            total += (self.gain * out - y).powi(2);
        }
        total / xs.len() as f64
    }
}

#[test]
fn struct_gradients_do_not_allocate_after_the_first_call() {
    std::thread::spawn(|| {
        let (xs, ys, _) = sample_slices(200);
        let model = Affine {
            w: [[0.3, -0.2], [0.5, 0.9]],
            b: [0.1, -0.1],
            gain: 0.8,
        };
        let _ = black_box(model.loss_grad(&xs, &ys));
        let (count, total) = allocations_in(|| {
            let mut total = 0.0;
            for _ in 0..100 {
                let (value, grad) = black_box(&model).loss_grad(&xs, &ys);
                total += value + grad.gain + grad.w[1][0];
            }
            black_box(total)
        });
        assert_eq!(
            count, 0,
            "struct gradients allocated {count} times in 100 calls"
        );
        assert!(total.is_finite() && total != 0.0, "total = {total}");
    })
    .join()
    .expect("the test thread");
}

/// A loss of `f32`s over slices: a loop of run-time length (one block of the workspace),
/// a `while` (frames pushed one by one) and an iterator reduction.
#[grad(wrt(w))]
fn loss_f32(w: &[f32], xs: &[[f32; 2]], ys: &[f32]) -> f32 {
    let mut total = 0.0;
    for (x, &y) in xs.iter().zip(ys) {
        let h = [(w[0] * x[0]).tanh(), (w[1] * x[1]).relu()];
        total += (h[0] * h[1] + w[2] - y).powi(2);
    }
    let mut k = 0;
    while k < 3 && total < 1e6 {
        total = total * 1.5 + w[k];
        k += 1;
    }
    total / xs.len() as f32 + w.iter().map(|v| v * v).sum::<f32>()
}

#[test]
fn f32_gradients_do_not_allocate_after_the_first_call() {
    std::thread::spawn(|| {
        let (xs, ys, _) = sample_slices(500);
        let xs: Vec<[f32; 2]> = xs.iter().map(|x| x.map(|v| v as f32)).collect();
        let ys: Vec<f32> = ys.iter().map(|&v| v as f32).collect();
        let w = [0.3f32, -0.8, 0.1];
        let mut dw = [0.0f32; 3];
        let (first, _) = allocations_in(|| loss_f32_grad_into(&w, &xs, &ys, &mut dw));
        assert!(first >= 1, "the first call did not grow the workspace");
        let (count, total) = allocations_in(|| {
            let mut total = 0.0f32;
            for _ in 0..100 {
                dw = [0.0; 3];
                total += loss_f32_grad_into(black_box(&w), &xs, &ys, &mut dw);
            }
            black_box(total)
        });
        assert_eq!(
            count, 0,
            "f32 gradients allocated {count} times in 100 calls"
        );
        assert!(total.is_finite() && total != 0.0, "total = {total}");
        assert!(
            dw.iter().all(|d| d.is_finite()) && dw != [0.0; 3],
            "dw = {dw:?}"
        );
    })
    .join()
    .expect("the measuring thread");
}

/// Residuals collected from a chain over two slices (`xs.iter().zip(ys).map(…).collect()`).
#[grad(jacobian, wrt(b))]
fn collected_residuals(b: [f64; 2], xs: &[f64], ys: &[f64]) -> Vec<f64> {
    xs.iter()
        .zip(ys)
        .map(|(&x, &y)| b[0] * (1.0 - (-b[1] * x).exp()) - y)
        .collect()
}

/// A vector collected from a chain whose length is known before the loop (slices, `zip`,
/// `map`) is allocated once at that length, as `collect` allocates it, never grown: the
/// original makes one allocation, `_jvp` two (the value and its tangent) and `_jacobian`
/// three (and the rows), whatever the number of residuals.
#[test]
fn collected_vectors_are_allocated_once() {
    std::thread::spawn(|| {
        for n in [3, 250, 10_000] {
            let xs: Vec<f64> = (0..n).map(|i| 0.01 * f64::from(i)).collect();
            let ys: Vec<f64> = xs.iter().map(|x| 2.0 * x).collect();
            let b = [1.5, 0.3];
            let (original, r) = allocations_in(|| collected_residuals(black_box(b), &xs, &ys));
            let (jvp, (value, tangent)) =
                allocations_in(|| collected_residuals_jvp(black_box(b), &xs, &ys, [1.0, 0.0]));
            let (jacobian, (_, j)) =
                allocations_in(|| collected_residuals_jacobian(black_box(b), &xs, &ys));
            assert_eq!((original, jvp, jacobian), (1, 2, 3), "{n} residuals");
            assert_eq!(
                (r.len(), value.len(), j.len()),
                (n as usize, n as usize, n as usize)
            );
            // Along b₀ the tangent is the first column: 1 − e^(−b₁x).
            for ((t, row), x) in tangent.iter().zip(&j).zip(&xs) {
                assert_eq!(*t, row[0]);
                assert!((t - (1.0 - (-0.3 * x).exp())).abs() < 1e-15);
            }
        }
    })
    .join()
    .expect("the measuring thread");
}
