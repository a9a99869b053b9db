//! The generated gradient functions never touch the heap.
//!
//! A counting global allocator records every allocation made by the current thread. The
//! `#[grad]` gradients below — a chain, a function calling other `#[grad]` functions, and
//! long bodies with dozens of operations — are called between two readings of the counter,
//! and the difference must be zero. The same counter is shown to register the allocations
//! of a `Vec`, of `Value` and of `Tape`, so a zero is a real measurement and not a counter
//! that never moves.

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
