//! The chunks and the reduction behind `#[grad(parallel)]`.
//!
//! A loop over samples whose gradient `#[grad(parallel)]` preaccumulates is cut into
//! chunks of [`CHUNK`] iterations, in order. Each chunk runs its iterations one after the
//! other and returns its part of the sum and its own gradient buffers; [`reduce`] adds the
//! chunks' results in a fixed binary tree: the chunks `lo..hi` are the sum of `lo..mid`
//! and `mid..hi`, with `mid` halfway. Both the chunks and the tree depend only on the
//! number of iterations, so the result is the same, bit for bit, on any number of threads
//! and from one run to the next. Which thread runs what is rayon's business (the halves
//! go to [`rayon::join`]); what is added to what is not.
//!
//! ```
//! # #[cfg(feature = "rayon")] {
//! use autodiff_runtime::parallel::{reduce, CHUNK};
//! let xs: Vec<f64> = (0..10_000).map(|i| 1.0 / (1.0 + i as f64)).collect();
//! let sum = |chunk: core::ops::Range<usize>| xs[chunk].iter().sum::<f64>();
//! let once = reduce(xs.len(), &sum, &|a, b| a + b);
//! let one_thread = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
//! assert_eq!(one_thread.install(|| reduce(xs.len(), &sum, &|a, b| a + b)), once);
//! assert!(xs.len() > 10 * CHUNK);
//! # }
//! ```

use core::ops::Range;

/// Iterations per chunk. A constant, so that the chunks, and with them the order of the
/// additions, do not depend on the number of threads.
pub const CHUNK: usize = 256;

/// How many chunks a loop of `n` iterations has: at least one, so that a loop that runs
/// no iteration still has a (zero) result.
pub fn chunks(n: usize) -> usize {
    n.div_ceil(CHUNK).max(1)
}

/// The iterations of chunk `k` of a loop of `n` iterations.
pub fn chunk(k: usize, n: usize) -> Range<usize> {
    (k * CHUNK).min(n)..(k * CHUNK + CHUNK).min(n)
}

/// The results of `leaf` on every chunk of `n` iterations, added by `combine` in a fixed
/// tree, its halves run by `rayon::join`.
#[cfg(feature = "rayon")]
pub fn reduce<R, L, C>(n: usize, leaf: &L, combine: &C) -> R
where
    R: Send,
    L: Fn(Range<usize>) -> R + Sync,
    C: Fn(R, R) -> R + Sync,
{
    tree(0, chunks(n), n, leaf, combine)
}

/// Without the `rayon` feature, a call is one error that says to enable it. (The body
/// would compute the same result on this thread.)
#[cfg(not(feature = "rayon"))]
pub fn reduce<R, L, C>(n: usize, leaf: &L, combine: &C) -> R
where
    L: Fn(Range<usize>) -> R,
    C: Fn(R, R) -> R,
    for<'a> crate::missing::Missing: crate::missing::Rayon,
{
    tree(0, chunks(n), n, leaf, combine)
}

/// The result of the chunks `lo..hi` (at least one).
#[cfg(feature = "rayon")]
fn tree<R, L, C>(lo: usize, hi: usize, n: usize, leaf: &L, combine: &C) -> R
where
    R: Send,
    L: Fn(Range<usize>) -> R + Sync,
    C: Fn(R, R) -> R + Sync,
{
    if hi - lo <= 1 {
        return leaf(chunk(lo, n));
    }
    let mid = lo + (hi - lo) / 2;
    let (left, right) = rayon::join(
        || tree(lo, mid, n, leaf, combine),
        || tree(mid, hi, n, leaf, combine),
    );
    combine(left, right)
}

/// The same tree, on this thread.
#[cfg(not(feature = "rayon"))]
fn tree<R, L, C>(lo: usize, hi: usize, n: usize, leaf: &L, combine: &C) -> R
where
    L: Fn(Range<usize>) -> R,
    C: Fn(R, R) -> R,
{
    if hi - lo <= 1 {
        return leaf(chunk(lo, n));
    }
    let mid = lo + (hi - lo) / 2;
    let left = tree(lo, mid, n, leaf, combine);
    let right = tree(mid, hi, n, leaf, combine);
    combine(left, right)
}

/// Adds the `f64`s of workspace `other` (a chunk's gradient of a slice) to those of
/// `sum`, element by element, and gives `other` back to this thread's pool.
#[cfg(feature = "alloc")]
pub fn add_workspace(sum: &mut crate::Workspace, other: crate::Workspace) {
    crate::Flat::add_to(other.reals(), sum.reals_mut());
    other.recycle();
}

#[cfg(all(test, feature = "rayon"))]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_loop_once_in_order() {
        for n in [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 10 * CHUNK + 3] {
            let covered: Vec<usize> = (0..chunks(n)).flat_map(|k| chunk(k, n)).collect();
            assert_eq!(covered, (0..n).collect::<Vec<_>>(), "n = {n}");
        }
    }

    #[test]
    fn the_sum_does_not_depend_on_the_threads() {
        // Terms of very different sizes, so that any other order of the additions shows.
        let xs: Vec<f64> = (0..50_000)
            .map(|i| (i as f64 * 0.618).sin() * 10f64.powi(i % 17 - 8))
            .collect();
        let leaf = |chunk: Range<usize>| xs[chunk].iter().fold(-0.0, |a, x| a + x);
        let sums: Vec<f64> = [1, 2, 3, 8]
            .into_iter()
            .map(|threads| {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                pool.install(|| reduce(xs.len(), &leaf, &|a, b| a + b))
            })
            .collect();
        assert!(
            sums.iter().all(|s| s.to_bits() == sums[0].to_bits()),
            "{sums:?}"
        );
        let exact: f64 = xs.iter().sum();
        assert!((sums[0] - exact).abs() <= 1e-9 * xs.iter().map(|x| x.abs()).sum::<f64>());
    }

    #[test]
    fn an_empty_loop_has_one_empty_chunk() {
        let calls = core::sync::atomic::AtomicUsize::new(0);
        let leaf = |chunk: Range<usize>| {
            calls.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
            chunk.len()
        };
        assert_eq!(reduce(0, &leaf, &|a, b| a + b), 0);
        assert_eq!(calls.into_inner(), 1);
    }
}
