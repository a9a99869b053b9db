//! The counting global allocator of the comparison examples: each example declares
//! `#[global_allocator] static GLOBAL: Counting = Counting;` and reads the counters.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

/// The system allocator, counting the allocations (`alloc`, `alloc_zeroed` and `realloc`)
/// made through it, and the largest block asked for.
pub struct Counting;

/// Allocations so far.
pub static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);
/// The largest block asked for since it was last reset.
pub static LARGEST: AtomicU64 = AtomicU64::new(0);

/// Allocations so far.
pub fn allocations() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

/// The largest block asked for since the last call, in bytes (and resets it).
pub fn take_largest() -> u64 {
    LARGEST.swap(0, Ordering::Relaxed)
}

fn count(bytes: usize) {
    ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    LARGEST.fetch_max(bytes as u64, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so
// `System`'s guarantees are the caller's; the counters are relaxed atomics. (This is the
// only `unsafe` of the benchmarks: a global allocator cannot be written without it.)
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: forwarded as received.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: forwarded as received.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: forwarded as received.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as received.
        unsafe { System.dealloc(ptr, layout) }
    }
}
