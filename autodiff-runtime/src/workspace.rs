//! The growable tape of `#[grad]` functions whose loops run a run-time number of times.
//!
//! Loops with constant bounds keep what the reverse sweep needs in stack arrays. A loop
//! whose trip count is known only at run time (a slice's length, a `while`) pushes those
//! values, in forward order, onto a [`Workspace`]: a stack of `f64`s and a stack of
//! integers (trip counts, branch flags, saved indices). The reverse sweep pops them in the
//! opposite order, so the last iteration's values come back first, which is the order it
//! needs them in.
//!
//! A gradient function takes a workspace from a thread-local pool when it starts and gives
//! it back, emptied but with its capacity, when it returns. After the first call on a
//! thread, calls allocate nothing, and a gradient function that calls another one gets a
//! workspace of its own from the same pool.
//!
//! ```
//! use autodiff_runtime::Workspace;
//! let mut ws = Workspace::take();
//! ws.push(1.5);
//! ws.push_int(3);
//! assert_eq!(ws.pop_int(), 3);
//! assert_eq!(ws.pop(), 1.5);
//! ws.recycle();
//! ```

#[cfg(feature = "alloc")]
use alloc::vec::Vec;

/// The stacks of saved values of one gradient call: a stack of `f64`s and a stack of
/// integers, pushed in forward order and popped in reverse, blocks and frames of fixed
/// layout on the `f64` stack, and a stack of slabs ([`slab`](Self::slab)). Generated code
/// takes one from a thread-local pool ([`take`](Self::take)) and gives it back
/// ([`recycle`](Self::recycle)).
///
/// A workspace is one pointer, and it reaches the pool only when first used: a call that
/// takes a workspace and ends up saving nothing in it (its loops' frames fitted on the
/// stack) costs nothing more. Taking one from the pool and giving it back moves that
/// pointer in and out of a thread-local list, with no borrow flag and no copy of the
/// stacks (a few nanoseconds).
///
/// # Memory
/// The pool keeps, on each thread, as many workspaces as gradient calls were ever nested
/// there (one, unless a gradient calls another), each with the capacity its calls needed.
/// A call far larger than the ones after it does not hold its memory for long: once
/// [`QUIET_CALLS`](Self::QUIET_CALLS) calls in a row have used less than a quarter of a
/// workspace's capacity (beyond [`KEPT`](Self::KEPT) bytes), the workspace shrinks to
/// twice the most they used. So a thread's pool holds, after a while, about twice what its
/// recent calls need, and at least [`KEPT`](Self::KEPT) bytes per stack.
/// [`Workspace::release_pool`] frees this thread's pool at once; a thread's pool is freed
/// when the thread ends.
#[cfg(feature = "alloc")]
#[derive(Debug, Default)]
pub struct Workspace {
    /// `None` until first used.
    stacks: Option<alloc::boxed::Box<Stacks>>,
}

/// What a [`Workspace`] points to.
#[cfg(feature = "alloc")]
#[derive(Debug, Default)]
struct Stacks {
    reals: Vec<f64>,
    ints: Vec<usize>,
    /// The slab stack's storage: its first `slab_top` numbers are in use; the rest keep
    /// what earlier slabs left, so that taking a slab writes nothing.
    slabs: Vec<f64>,
    slab_top: usize,
    /// The most `f64`s this call has held at once on the `f64` stack (as seen where blocks
    /// and frames are laid down) and on the slab stack.
    reals_peak: usize,
    slab_peak: usize,
    /// The same over the quiet calls counted in `quiet`.
    window: (usize, usize),
    /// Calls in a row that used less than a quarter of the capacity.
    quiet: u32,
    /// The next workspace in this thread's pool (there is a pool with `std` only).
    #[cfg(feature = "std")]
    next: Option<alloc::boxed::Box<Stacks>>,
}

#[cfg(feature = "alloc")]
impl Stacks {
    /// Counts the call that ends and, after [`QUIET_CALLS`](Workspace::QUIET_CALLS) quiet
    /// ones, shrinks the stacks to twice the most those calls used (at least
    /// [`KEPT`](Workspace::KEPT) bytes each).
    #[inline]
    fn settle(&mut self) {
        const F64S: usize = Workspace::KEPT / core::mem::size_of::<f64>();
        let small = |capacity: usize| capacity <= F64S;
        if small(self.reals.capacity()) && small(self.slabs.len()) && small(self.ints.capacity()) {
            // Nothing to shrink: the common case, a branch.
            self.quiet = 0;
        } else {
            self.count_quiet(F64S);
        }
        self.reals_peak = 0;
        self.slab_peak = 0;
    }

    /// [`settle`](Self::settle) for a workspace with a stack beyond
    /// [`KEPT`](Workspace::KEPT) bytes.
    #[cold]
    fn count_quiet(&mut self, kept: usize) {
        let reals = self.reals_peak.max(self.reals.len());
        let slabs = self.slab_peak;
        let quiet = |used: usize, capacity: usize| capacity <= kept || used * 4 < capacity;
        if !(quiet(reals, self.reals.capacity())
            && quiet(slabs, self.slabs.len())
            && quiet(self.ints.len(), self.ints.capacity()))
        {
            self.quiet = 0;
            self.window = (0, 0);
            return;
        }
        self.quiet += 1;
        self.window = (self.window.0.max(reals), self.window.1.max(slabs));
        if self.quiet >= Workspace::QUIET_CALLS {
            let (reals, slabs) = self.window;
            self.reals.clear();
            self.reals.shrink_to((2 * reals).max(kept));
            self.ints.clear();
            self.ints.shrink_to(kept);
            self.slabs.truncate((2 * slabs).max(kept));
            self.slabs.shrink_to_fit();
            self.quiet = 0;
            self.window = (0, 0);
        }
    }
}

#[cfg(feature = "std")]
thread_local! {
    /// This thread's pool: the first of its workspaces, each pointing to the next.
    static POOL: core::cell::Cell<Option<alloc::boxed::Box<Stacks>>> =
        const { core::cell::Cell::new(None) };
}

#[cfg(feature = "alloc")]
impl Workspace {
    /// Calls in a row that use less than a quarter of a workspace's capacity before it
    /// shrinks (see "Memory" above).
    pub const QUIET_CALLS: u32 = 64;

    /// The capacity in bytes each stack of a pooled workspace keeps however little its
    /// calls use (see "Memory" above): 1 MiB.
    pub const KEPT: usize = 1 << 20;

    /// A workspace for one gradient call. It takes its stacks from this thread's pool when
    /// first used, or new ones when the pool is empty. (Without the `std` feature there is
    /// no pool: always new ones, which allocate when they first grow.)
    #[must_use]
    #[inline]
    pub const fn take() -> Self {
        Self { stacks: None }
    }

    /// The stacks, taken from the pool on first use.
    #[inline]
    fn stacks(&mut self) -> &mut Stacks {
        self.stacks.get_or_insert_with(Self::from_pool)
    }

    /// Stacks from this thread's pool, or new ones.
    #[inline]
    fn from_pool() -> alloc::boxed::Box<Stacks> {
        #[cfg(feature = "std")]
        {
            let pooled = POOL.try_with(|pool| {
                let mut stacks = pool.take()?;
                pool.set(stacks.next.take());
                Some(stacks)
            });
            if let Ok(Some(stacks)) = pooled {
                return stacks;
            }
        }
        alloc::boxed::Box::default()
    }

    /// Empties the workspace and returns its stacks to this thread's pool, keeping their
    /// capacity (see "Memory" above for when they shrink). (Without the `std` feature
    /// they are dropped.)
    #[inline]
    pub fn recycle(self) {
        if let Some(stacks) = self.stacks {
            Self::to_pool(stacks);
        }
    }

    /// Empties `stacks` and puts them back in the pool.
    fn to_pool(mut stacks: alloc::boxed::Box<Stacks>) {
        stacks.settle();
        stacks.reals.clear();
        stacks.ints.clear();
        stacks.slab_top = 0;
        // During thread teardown the pool may be gone; the stacks are then dropped.
        #[cfg(feature = "std")]
        let _ = POOL.try_with(move |pool| {
            stacks.next = pool.take();
            pool.set(Some(stacks));
        });
    }

    /// Frees every workspace in this thread's pool: after a call far larger than the
    /// ones to come, to give its memory back at once rather than after
    /// [`QUIET_CALLS`](Self::QUIET_CALLS) calls. The next gradient call on this thread
    /// allocates its workspace again.
    ///
    /// ```
    /// use autodiff_runtime::Workspace;
    /// let mut ws = Workspace::take();
    /// ws.slab(1_000_000);
    /// ws.recycle();
    /// assert!(Workspace::pooled_bytes() >= 8_000_000);
    /// Workspace::release_pool();
    /// assert_eq!(Workspace::pooled_bytes(), 0);
    /// ```
    #[cfg(feature = "std")]
    pub fn release_pool() {
        let _ = POOL.try_with(|pool| {
            let mut next = pool.take();
            // One at a time, so that a long list is not dropped recursively.
            while let Some(mut stacks) = next {
                next = stacks.next.take();
            }
        });
    }

    /// The bytes of capacity held by the workspaces in this thread's pool.
    #[cfg(feature = "std")]
    #[must_use]
    pub fn pooled_bytes() -> usize {
        POOL.try_with(|pool| {
            let head = pool.take();
            let mut bytes = 0;
            let mut at = head.as_deref();
            while let Some(stacks) = at {
                bytes += (stacks.reals.capacity() + stacks.slabs.capacity())
                    * core::mem::size_of::<f64>()
                    + stacks.ints.capacity() * core::mem::size_of::<usize>();
                at = stacks.next.as_deref();
            }
            pool.set(head);
            bytes
        })
        .unwrap_or(0)
    }

    /// Records the `f64` stack's height for the workspace's footprint (see "Memory"):
    /// where blocks and frames are laid down, not at every single push.
    #[inline]
    fn note_reals(&mut self) {
        let stacks = self.stacks();
        stacks.reals_peak = stacks.reals_peak.max(stacks.reals.len());
    }

    /// Saves an `f64`.
    #[inline]
    pub fn push(&mut self, value: f64) {
        self.stacks().reals.push(value);
    }

    /// Takes back the last `f64` saved (`0.0` if there is none, which generated code never
    /// asks for).
    #[inline]
    pub fn pop(&mut self) -> f64 {
        self.stacks().reals.pop().unwrap_or_default()
    }

    /// Saves an integer: a trip count or an index.
    #[inline]
    pub fn push_int(&mut self, value: usize) {
        self.stacks().ints.push(value);
    }

    /// Takes back the last integer saved.
    #[inline]
    pub fn pop_int(&mut self) -> usize {
        self.stacks().ints.pop().unwrap_or_default()
    }

    /// Saves which branch an `if` took.
    #[inline]
    pub fn push_flag(&mut self, taken: bool) {
        self.stacks().ints.push(usize::from(taken));
    }

    /// Takes back the last branch saved.
    #[inline]
    pub fn pop_flag(&mut self) -> bool {
        self.pop_int() != 0
    }

    /// Saves every element of an `f64` array (nested arrays too).
    #[inline]
    pub fn push_array<A: Flat + ?Sized>(&mut self, array: &A) {
        array.push_to(&mut self.stacks().reals);
        self.note_reals();
    }

    /// Takes back an array saved by [`push_array`](Self::push_array) into `array`.
    #[inline]
    pub fn pop_array<A: Flat + ?Sized>(&mut self, array: &mut A) {
        array.pop_from(&mut self.stacks().reals);
    }

    /// A block of `n` new `f64`s (zeros) on top of the `f64` stack: the gradient of a
    /// slice that a loop preaccumulates ([`rows`](Self::rows) for a slice of arrays).
    #[inline]
    pub fn block(&mut self, n: usize) -> &mut [f64] {
        let stacks = self.stacks();
        let start = stacks.reals.len();
        stacks.reals.resize(start + n, 0.0);
        stacks.reals_peak = stacks.reals_peak.max(start + n);
        &mut stacks.reals[start..]
    }

    /// A block of `n` rows of `N` new `f64`s (zeros) on top of the stack, indexed as
    /// `rows[i][j]`: the gradient of a slice of arrays (`xs: &[[f64; N]]`) that a loop
    /// preaccumulates.
    ///
    /// ```
    /// use autodiff_runtime::Workspace;
    /// let mut ws = Workspace::take();
    /// let mut rows = ws.rows::<2>(3);
    /// rows[1][0] += 1.5;
    /// let mut out = [[1.0; 2]; 3];
    /// rows.add_scaled_to(2.0, &mut out);
    /// assert_eq!(out, [[1.0, 1.0], [4.0, 1.0], [1.0, 1.0]]);
    /// ```
    #[inline]
    pub fn rows<const N: usize>(&mut self, n: usize) -> Rows<'_, N> {
        Rows(self.block(n * N))
    }

    /// Every `f64` on the stack, oldest first: the gradients of slices that a chunk of a
    /// `#[grad(parallel)]` loop preaccumulated in [`block`](Self::block)s, once the chunk
    /// is done (see `parallel`).
    #[doc(hidden)]
    #[inline]
    pub fn reals(&self) -> &[f64] {
        self.stacks.as_ref().map_or(&[], |stacks| &stacks.reals)
    }

    /// Every `f64` on the stack, to add to.
    #[doc(hidden)]
    #[inline]
    pub fn reals_mut(&mut self) -> &mut [f64] {
        &mut self.stacks().reals
    }

    /// Every `f64` on the stack as rows of `N`.
    #[doc(hidden)]
    #[inline]
    pub fn all_rows<const N: usize>(&mut self) -> Rows<'_, N> {
        Rows(&mut self.stacks().reals)
    }

    /// A slab of `n` `f64`s on top of the slab stack, for a loop that knows its trip count
    /// and writes each iteration's values at fixed offsets before the reverse sweep reads
    /// them ([`slab_top`](Self::slab_top)). Its contents are unspecified until written:
    /// what earlier slabs on this thread left there, so that taking one costs no writes
    /// once the stack has grown to its size (in debug builds, `NaN`s, so that a read
    /// before a write shows in a gradient).
    #[inline]
    pub fn slab(&mut self, n: usize) -> &mut [f64] {
        let stacks = self.stacks();
        let start = stacks.slab_top;
        let end = start + n;
        if stacks.slabs.len() < end {
            stacks.slabs.resize(end, 0.0);
        }
        stacks.slab_top = end;
        stacks.slab_peak = stacks.slab_peak.max(end);
        let slab = &mut stacks.slabs[start..end];
        if cfg!(debug_assertions) {
            slab.fill(f64::NAN);
        }
        slab
    }

    /// The top `n` `f64`s of the slab stack: a slab taken by [`slab`](Self::slab), for
    /// the reverse sweep.
    #[inline]
    pub fn slab_top(&self, n: usize) -> &[f64] {
        let Some(stacks) = &self.stacks else {
            return &[];
        };
        &stacks.slabs[stacks.slab_top.saturating_sub(n)..stacks.slab_top]
    }

    /// Drops the top `n` `f64`s of the slab stack (a slab the reverse sweep is done
    /// with).
    #[inline]
    pub fn release_slab(&mut self, n: usize) {
        if let Some(stacks) = &mut self.stacks {
            stacks.slab_top = stacks.slab_top.saturating_sub(n);
        }
    }

    /// Saves the values of one loop iteration, laid out in a frame.
    #[inline]
    pub fn push_frame(&mut self, frame: &[f64]) {
        self.stacks().reals.extend_from_slice(frame);
        self.note_reals();
    }

    /// Takes back the last frame of `N` values.
    #[inline]
    pub fn pop_frame<const N: usize>(&mut self) -> [f64; N] {
        let reals = &mut self.stacks().reals;
        let start = reals.len().saturating_sub(N);
        let mut frame = [0.0; N];
        let saved = &reals[start..];
        let n = saved.len().min(N);
        frame[..n].copy_from_slice(&saved[..n]);
        reals.truncate(start);
        frame
    }

    /// The number of `f64`s and integers held (for tests and for sizing).
    #[must_use]
    pub fn len(&self) -> (usize, usize) {
        self.stacks.as_ref().map_or((0, 0), |stacks| {
            (stacks.reals.len() + stacks.slab_top, stacks.ints.len())
        })
    }

    /// Whether nothing is saved.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == (0, 0)
    }
}

/// Rows of `N` `f64`s in a block of a [`Workspace`] ([`Workspace::rows`]), indexed as a
/// slice of arrays is: `rows[i]` is the `i`-th `[f64; N]`.
#[cfg(feature = "alloc")]
#[derive(Debug)]
pub struct Rows<'a, const N: usize>(&'a mut [f64]);

#[cfg(feature = "alloc")]
impl<const N: usize> Rows<'_, N> {
    /// Adds `alpha` times each row to the same row of `out`.
    ///
    /// # Panics
    /// When `out` has another number of rows.
    #[inline]
    pub fn add_scaled_to(&self, alpha: f64, out: &mut [[f64; N]]) {
        assert_eq!(out.len() * N, self.0.len(), "rows of the same number");
        for (row, from) in out.iter_mut().zip(self.0.chunks_exact(N)) {
            for (x, &g) in row.iter_mut().zip(from) {
                *x += alpha * g;
            }
        }
    }
}

#[cfg(feature = "alloc")]
impl<const N: usize> core::ops::Index<usize> for Rows<'_, N> {
    type Output = [f64; N];

    #[inline]
    fn index(&self, i: usize) -> &[f64; N] {
        let row = &self.0[i * N..(i + 1) * N];
        row.try_into().expect("a row holds N numbers")
    }
}

#[cfg(feature = "alloc")]
impl<const N: usize> core::ops::IndexMut<usize> for Rows<'_, N> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut [f64; N] {
        let row = &mut self.0[i * N..(i + 1) * N];
        row.try_into().expect("a row holds N numbers")
    }
}

/// `f64`, `f32` and arrays, slices and vectors of them, nested to any depth, seen as a
/// flat sequence in memory order: what a [`Workspace`] saves as a block (an `f32` as the
/// `f64` of the same value), and what [`check`](crate::check) perturbs one element at a
/// time.
pub trait Flat {
    /// The type of the elements, `f64` or `f32`.
    type Real: crate::Real;
    /// Appends every element, in memory order.
    #[cfg(feature = "alloc")]
    fn push_to(&self, out: &mut Vec<f64>);
    /// Takes the elements back, the last first.
    #[cfg(feature = "alloc")]
    fn pop_from(&mut self, from: &mut Vec<f64>);
    /// Adds every element to the same element of `out` (`out += self`).
    fn add_to(&self, out: &mut Self);
    /// Adds every element times `alpha` to the same element of `out`
    /// (`out += alpha · self`).
    fn add_scaled_to(&self, alpha: Self::Real, out: &mut Self);
    /// The number of `f64`s.
    fn flat_len(&self) -> usize;
    /// Writes every element, in memory order, to the front of `out`.
    fn write_to(&self, out: &mut [f64]);
    /// Reads every element, in memory order, from the front of `from`.
    fn read_from(&mut self, from: &[f64]);
    /// Whether every element is zero (`0.0` or `-0.0`; `NaN` is not).
    fn is_zero(&self) -> bool;
    /// Sets the element at flat position `flat` to `value` (an `f32` to the nearest
    /// `f32`); nothing where there is none.
    fn set_at(&mut self, flat: usize, value: f64);
    /// Appends to `path` where the element at flat position `flat` sits, as one index per
    /// level, outermost first: nothing for an `f64`, `[1, 0]` for element 2 of a
    /// `[[f64; 2]; 3]`.
    #[cfg(feature = "alloc")]
    fn index_path(&self, flat: usize, path: &mut Vec<usize>) {
        let _ = (flat, path);
    }
}

impl Flat for f64 {
    type Real = f64;

    #[cfg(feature = "alloc")]
    #[inline]
    fn push_to(&self, out: &mut Vec<f64>) {
        out.push(*self);
    }

    #[cfg(feature = "alloc")]
    #[inline]
    fn pop_from(&mut self, from: &mut Vec<f64>) {
        *self = from.pop().unwrap_or_default();
    }

    #[inline]
    fn add_to(&self, out: &mut Self) {
        *out += *self;
    }

    #[inline]
    fn add_scaled_to(&self, alpha: Self::Real, out: &mut Self) {
        *out += alpha * *self;
    }

    #[inline]
    fn flat_len(&self) -> usize {
        1
    }

    #[inline]
    fn write_to(&self, out: &mut [f64]) {
        if let Some(first) = out.first_mut() {
            *first = *self;
        }
    }

    #[inline]
    fn read_from(&mut self, from: &[f64]) {
        if let Some(first) = from.first() {
            *self = *first;
        }
    }

    #[inline]
    fn set_at(&mut self, flat: usize, value: f64) {
        if flat == 0 {
            *self = value;
        }
    }

    #[inline]
    fn is_zero(&self) -> bool {
        *self == 0.0
    }
}

/// An `f32` is saved as the `f64` of the same value (exact) and read back exactly: the
/// workspace holds `f64`s for functions of either type.
impl Flat for f32 {
    type Real = f32;

    #[cfg(feature = "alloc")]
    #[inline]
    fn push_to(&self, out: &mut Vec<f64>) {
        out.push(f64::from(*self));
    }

    #[cfg(feature = "alloc")]
    #[inline]
    #[allow(clippy::cast_possible_truncation)]
    fn pop_from(&mut self, from: &mut Vec<f64>) {
        *self = from.pop().unwrap_or_default() as f32;
    }

    #[inline]
    fn add_to(&self, out: &mut Self) {
        *out += *self;
    }

    #[inline]
    fn add_scaled_to(&self, alpha: Self::Real, out: &mut Self) {
        *out += alpha * *self;
    }

    #[inline]
    fn flat_len(&self) -> usize {
        1
    }

    #[inline]
    fn write_to(&self, out: &mut [f64]) {
        if let Some(first) = out.first_mut() {
            *first = f64::from(*self);
        }
    }

    #[inline]
    #[allow(clippy::cast_possible_truncation)]
    fn read_from(&mut self, from: &[f64]) {
        if let Some(first) = from.first() {
            *self = *first as f32;
        }
    }

    #[inline]
    #[allow(clippy::cast_possible_truncation)]
    fn set_at(&mut self, flat: usize, value: f64) {
        if flat == 0 {
            *self = value as f32;
        }
    }

    #[inline]
    fn is_zero(&self) -> bool {
        *self == 0.0
    }
}

impl<T: Flat> Flat for [T] {
    type Real = T::Real;

    #[cfg(feature = "alloc")]
    #[inline]
    fn push_to(&self, out: &mut Vec<f64>) {
        for element in self {
            element.push_to(out);
        }
    }

    #[cfg(feature = "alloc")]
    #[inline]
    fn pop_from(&mut self, from: &mut Vec<f64>) {
        for element in self.iter_mut().rev() {
            element.pop_from(from);
        }
    }

    #[inline]
    fn add_to(&self, out: &mut Self) {
        for (element, out) in self.iter().zip(out) {
            element.add_to(out);
        }
    }

    #[inline]
    fn add_scaled_to(&self, alpha: Self::Real, out: &mut Self) {
        for (element, out) in self.iter().zip(out) {
            element.add_scaled_to(alpha, out);
        }
    }

    #[inline]
    fn flat_len(&self) -> usize {
        self.iter().map(Flat::flat_len).sum()
    }

    #[inline]
    fn write_to(&self, out: &mut [f64]) {
        let mut rest = out;
        for element in self {
            let n = element.flat_len().min(rest.len());
            let (head, tail) = rest.split_at_mut(n);
            element.write_to(head);
            rest = tail;
        }
    }

    #[inline]
    fn read_from(&mut self, from: &[f64]) {
        let mut rest = from;
        for element in self.iter_mut() {
            let n = element.flat_len().min(rest.len());
            let (head, tail) = rest.split_at(n);
            element.read_from(head);
            rest = tail;
        }
    }

    #[inline]
    fn is_zero(&self) -> bool {
        self.iter().all(Flat::is_zero)
    }

    fn set_at(&mut self, flat: usize, value: f64) {
        let mut start = 0;
        for element in self.iter_mut() {
            let n = element.flat_len();
            if flat < start + n {
                element.set_at(flat - start, value);
                return;
            }
            start += n;
        }
    }

    #[cfg(feature = "alloc")]
    fn index_path(&self, flat: usize, path: &mut Vec<usize>) {
        let mut start = 0;
        for (i, element) in self.iter().enumerate() {
            let n = element.flat_len();
            if flat < start + n {
                path.push(i);
                element.index_path(flat - start, path);
                return;
            }
            start += n;
        }
    }
}

/// `Flat` for arrays and vectors: their elements as a slice. (A vector adds element by
/// element over the shorter of the two lengths.)
macro_rules! flat_as_slice {
    ($(impl[$($generics:tt)*] $ty:ty;)*) => {$(
        impl<$($generics)*> Flat for $ty {
            type Real = T::Real;


            #[cfg(feature = "alloc")]
            #[inline]
            fn push_to(&self, out: &mut Vec<f64>) {
                self.as_slice().push_to(out);
            }


            #[cfg(feature = "alloc")]
            #[inline]
            fn pop_from(&mut self, from: &mut Vec<f64>) {
                self.as_mut_slice().pop_from(from);
            }

            #[inline]
            fn add_to(&self, out: &mut Self) {
                self.as_slice().add_to(out.as_mut_slice());
            }

            #[inline]
            fn add_scaled_to(&self, alpha: Self::Real, out: &mut Self) {
                self.as_slice().add_scaled_to(alpha, out.as_mut_slice());
            }

            #[inline]
            fn flat_len(&self) -> usize {
                self.as_slice().flat_len()
            }

            #[inline]
            fn write_to(&self, out: &mut [f64]) {
                self.as_slice().write_to(out);
            }

            #[inline]
            fn read_from(&mut self, from: &[f64]) {
                self.as_mut_slice().read_from(from);
            }

            #[inline]
            fn is_zero(&self) -> bool {
                self.as_slice().is_zero()
            }

            #[inline]
            fn set_at(&mut self, flat: usize, value: f64) {
                self.as_mut_slice().set_at(flat, value);
            }


            #[cfg(feature = "alloc")]
            fn index_path(&self, flat: usize, path: &mut Vec<usize>) {
                self.as_slice().index_path(flat, path);
            }
        }
    )*};
}

flat_as_slice! {
    impl[T: Flat, const N: usize] [T; N];
}

#[cfg(feature = "alloc")]
flat_as_slice! {
    impl[T: Flat] Vec<T>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_come_back_last_first() {
        let mut ws = Workspace::default();
        for i in 0..10 {
            ws.push(f64::from(i));
            ws.push_int(i as usize * 2);
            ws.push_flag(i % 2 == 0);
        }
        for i in (0..10).rev() {
            assert_eq!(ws.pop_flag(), i % 2 == 0);
            assert_eq!(ws.pop_int(), i as usize * 2);
            assert_eq!(ws.pop(), f64::from(i));
        }
        assert!(ws.is_empty());
    }

    #[test]
    fn arrays_round_trip() {
        let mut ws = Workspace::default();
        let a = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]];
        ws.push(-1.0);
        ws.push_array(&a);
        let mut b = [[0.0; 2]; 3];
        ws.pop_array(&mut b);
        assert_eq!(a, b);
        assert_eq!(ws.pop(), -1.0);
        // `f32`s go through `f64`s and come back exactly.
        let c = [[0.1f32, f32::MAX], [f32::MIN_POSITIVE / 4.0, -0.0]];
        ws.push_array(&c);
        let mut d = [[1.0f32; 2]; 2];
        ws.pop_array(&mut d);
        assert_eq!(
            c.map(|r| r.map(f32::to_bits)),
            d.map(|r| r.map(f32::to_bits))
        );
        assert!(ws.is_empty());
    }

    #[test]
    fn blocks_and_flat_copies() {
        let mut ws = Workspace::default();
        ws.push(9.0);
        let block = ws.block(3);
        block[2] = 2.0;
        assert_eq!(ws.pop(), 2.0);
        assert_eq!(ws.pop(), 0.0);
        assert_eq!(ws.len(), (2, 0));
        ws.pop();
        let slab = ws.slab(6);
        [[1.0, 2.0], [3.0, 4.0]].write_to(&mut slab[1..5]);
        assert_eq!(ws.slab_top(6)[1..5], [1.0, 2.0, 3.0, 4.0]);
        let inner = ws.slab(2);
        inner.copy_from_slice(&[5.0, 6.0]);
        assert_eq!(ws.slab_top(2), &[5.0, 6.0]);
        ws.release_slab(2);
        let mut back = [[0.0; 2]; 2];
        back.read_from(&ws.slab_top(6)[1..5]);
        assert_eq!(back, [[1.0, 2.0], [3.0, 4.0]]);
        ws.release_slab(6);
        assert_eq!(ws.pop(), 9.0);
        ws.push_frame(&[1.0, 2.0, 3.0]);
        ws.push_frame(&[4.0, 5.0, 6.0]);
        assert_eq!(ws.pop_frame::<3>(), [4.0, 5.0, 6.0]);
        assert_eq!(ws.pop_frame::<3>(), [1.0, 2.0, 3.0]);
        assert!(ws.is_empty());
    }

    #[test]
    fn slabs_are_taken_without_writes_and_poisoned_in_debug_builds() {
        let mut ws = Workspace::default();
        ws.slab(4).copy_from_slice(&[1.0, 2.0, 3.0, 4.0]);
        ws.release_slab(4);
        let slab = ws.slab(3);
        if cfg!(debug_assertions) {
            assert!(slab.iter().all(|x| x.is_nan()), "{slab:?}");
        } else {
            // What the last slab left: nothing was written.
            assert_eq!(slab, &[1.0, 2.0, 3.0]);
        }
        assert_eq!(ws.len(), (3, 0));
        ws.recycle();
    }

    #[test]
    fn index_paths_name_nested_elements() {
        let path = |value: &dyn Fn(&mut Vec<usize>)| {
            let mut path = Vec::new();
            value(&mut path);
            path
        };
        assert_eq!(path(&|p| 1.5.index_path(0, p)), Vec::<usize>::new());
        let nested = [[0.0; 2]; 3];
        assert_eq!(path(&|p| nested.index_path(3, p)), vec![1, 1]);
        let rows = vec![[0.0; 3]; 2];
        assert_eq!(rows.flat_len(), 6);
        assert_eq!(path(&|p| rows.index_path(5, p)), vec![1, 2]);
        let ragged = vec![vec![1.0], vec![2.0, 3.0]];
        assert_eq!(path(&|p| ragged.index_path(2, p)), vec![1, 1]);
        let mut flat = Vec::new();
        ragged.push_to(&mut flat);
        assert_eq!(flat, [1.0, 2.0, 3.0]);
    }

    #[test]
    fn the_pool_reuses_capacity_and_nests() {
        let mut outer = Workspace::take();
        outer.stacks().reals.reserve(1000);
        let inner = Workspace::take(); // taken while `outer` is out: a different one
        assert!(inner.stacks.as_ref().is_none());
        inner.recycle();
        outer.push(1.0);
        outer.recycle();
        let mut again = Workspace::take();
        assert!(again.stacks().reals.capacity() >= 1000);
        assert!(again.is_empty());
        again.recycle();
    }

    /// One call that lays down `slab` numbers on the slab stack and a block of `block`
    /// on the `f64` stack, as a gradient over that many samples does.
    fn call(slab: usize, block: usize) {
        let mut ws = Workspace::take();
        ws.slab(slab).fill(1.0);
        ws.block(block)[0] = 2.0;
        ws.recycle();
    }

    #[test]
    fn a_large_call_keeps_its_memory_while_calls_need_it() {
        Workspace::release_pool();
        let large = 4 * Workspace::KEPT / 8;
        for _ in 0..3 * Workspace::QUIET_CALLS {
            call(large, large);
        }
        // Each call used all of it: nothing was given back, so nothing was allocated again.
        assert!(Workspace::pooled_bytes() >= 2 * large * 8);
        // Calls that use a third of it are not quiet enough (under a quarter) to shrink it.
        for _ in 0..3 * Workspace::QUIET_CALLS {
            call(large / 3, large / 3);
        }
        assert!(Workspace::pooled_bytes() >= 2 * large * 8);
    }

    #[test]
    fn the_pool_shrinks_after_quiet_calls() {
        Workspace::release_pool();
        let large = 64 * Workspace::KEPT / 8; // 64 MiB on each stack
        call(large, large);
        let after_large = Workspace::pooled_bytes();
        assert!(after_large >= 2 * large * 8, "{after_large}");
        for _ in 1..Workspace::QUIET_CALLS {
            call(1000, 10);
        }
        // Not yet: one large call among small ones keeps its memory for a while.
        assert_eq!(Workspace::pooled_bytes(), after_large);
        call(1000, 10);
        // Now twice the most the quiet calls used, at least `KEPT` a stack.
        let kept = Workspace::pooled_bytes();
        assert!(kept <= 3 * Workspace::KEPT, "{kept}");
        // A large call after that grows it again, as the first one did.
        call(large, 1);
        assert!(Workspace::pooled_bytes() >= large * 8);
        Workspace::release_pool();
        assert_eq!(Workspace::pooled_bytes(), 0);
    }

    #[test]
    fn a_released_pool_starts_again() {
        call(10, 10);
        Workspace::release_pool();
        assert_eq!(Workspace::pooled_bytes(), 0);
        let mut ws = Workspace::take();
        ws.push(3.0);
        assert_eq!(ws.pop(), 3.0);
        ws.recycle();
        assert!(Workspace::pooled_bytes() > 0);
    }
}
