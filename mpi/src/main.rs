//! Trains the moons network (2-16-16-1, hinge loss, L2; `examples/moons_model`) with
//! gradient descent, data-parallel across MPI ranks, and prints the trained parameters'
//! digest: the same on any number of ranks, bit for bit.
//!
//! ```sh
//! cargo build --release --manifest-path mpi/Cargo.toml
//! mpirun -np 2 mpi/target/release/autodiff-mpi
//! bash mpi/check.sh   # on 1, 2 and 3 ranks: the same digest
//! ```
//!
//! It needs an MPI library and its launcher (Debian and Ubuntu: `apt install
//! openmpi-bin libopenmpi-dev`) and libclang for the `mpi` crate's bindings
//! (`libclang-dev`).
//!
//! How the bits stay the same:
//! - The samples are cut into chunks of a fixed size (`autodiff::parallel::CHUNK`, as
//!   `#[grad(parallel)]` cuts a loop), whatever the number of ranks. Each rank takes a
//!   contiguous run of chunks and computes each chunk's loss and gradient with
//!   `loss_slices_grad`, scaled by the chunk's share of the samples (the shares add up to
//!   one, so the penalty of every chunk's loss counts once in all).
//! - The chunks' results, one flat buffer each (`1 + PARAMS` numbers), are all-gathered in
//!   chunk order (`MPI_Allgatherv`): every rank then holds every chunk's buffer.
//! - Every rank adds them in the same fixed tree (`autodiff::parallel::reduce`, the tree of
//!   `#[grad(parallel)]`), which depends only on the number of chunks, and takes the same
//!   step. A reduction by MPI itself (`MPI_Allreduce`) adds in an order of the library's
//!   choosing, which may change with the number of ranks.

#[path = "../../examples/moons_model/mod.rs"]
mod moons_model;

use autodiff::parallel::{chunk, chunks, reduce, CHUNK};
use moons_model::{init, loss_slices_grad, moons, score, PARAMS};
use mpi::datatype::PartitionMut;
use mpi::traits::*;
use mpi::Count;

/// Copies of the data set, each with its own noise.
const COPIES: u64 = 20;
/// Steps of gradient descent.
const STEPS: usize = 100;
/// The step size.
const RATE: f64 = 0.5;
/// Numbers per chunk's buffer: the loss, then its gradient.
const BUFFER: usize = 1 + PARAMS;

/// The chunks rank `rank` of `ranks` computes, of `total`: a contiguous run.
fn chunks_of(rank: usize, ranks: usize, total: usize) -> std::ops::Range<usize> {
    rank * total / ranks..(rank + 1) * total / ranks
}

/// A digest of the numbers' bits (FNV-1a over their bytes).
fn digest(numbers: &[f64]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for byte in numbers.iter().flat_map(|x| x.to_bits().to_le_bytes()) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

fn main() {
    let universe = mpi::initialize().expect("MPI initializes once");
    let world = universe.world();
    let (rank, ranks) = (world.rank() as usize, world.size() as usize);

    // The data set, the same on every rank.
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    for copy in 0..COPIES {
        let (x, y) = moons(copy);
        xs.extend_from_slice(&x);
        ys.extend_from_slice(&y);
    }
    let samples = xs.len();
    let total = chunks(samples);
    let mine = chunks_of(rank, ranks, total);
    let counts: Vec<Count> = (0..ranks)
        .map(|r| Count::try_from(chunks_of(r, ranks, total).len() * BUFFER).expect("a count"))
        .collect();
    let displacements: Vec<Count> = (0..ranks)
        .map(|r| Count::try_from(chunks_of(r, ranks, total).start * BUFFER).expect("an offset"))
        .collect();

    let mut p = init(7);
    let mut gathered = vec![0.0; total * BUFFER];
    let mut local = Vec::with_capacity(mine.len() * BUFFER);
    let mut first_loss = None;
    let mut loss = 0.0;
    for _ in 0..STEPS {
        // This rank's chunks: each chunk's loss and gradient, scaled by its share.
        local.clear();
        for k in mine.clone() {
            let range = chunk(k, samples);
            let share = range.len() as f64 / samples as f64;
            let (value, gradient) = loss_slices_grad(&p, &xs[range.clone()], &ys[range]);
            local.push(share * value);
            local.extend(gradient.iter().map(|d| share * d));
        }
        // Every chunk's buffer on every rank, in chunk order.
        let mut partition = PartitionMut::new(
            &mut gathered[..],
            counts.as_slice(),
            displacements.as_slice(),
        );
        world.all_gather_varcount_into(&local[..], &mut partition);
        // Added in the fixed tree of `#[grad(parallel)]`.
        let sum = reduce(
            samples,
            &|range: std::ops::Range<usize>| {
                let k = range.start / CHUNK;
                gathered[k * BUFFER..(k + 1) * BUFFER].to_vec()
            },
            &|mut left: Vec<f64>, right: Vec<f64>| {
                for (l, r) in left.iter_mut().zip(&right) {
                    *l += r;
                }
                left
            },
        );
        loss = sum[0];
        first_loss.get_or_insert(loss);
        for (q, d) in p.iter_mut().zip(&sum[1..]) {
            *q -= RATE * d;
        }
    }

    // Every rank took the same steps: their parameters' digests agree.
    let mine_digest = digest(&p);
    let mut digests = vec![0u64; ranks];
    world.all_gather_into(&mine_digest, &mut digests[..]);
    assert!(
        digests.iter().all(|&d| d == mine_digest),
        "ranks disagree: {digests:x?}"
    );
    if rank == 0 {
        let correct = xs
            .iter()
            .zip(&ys)
            .filter(|(x, &y)| (score(&p, **x) > 0.0) == (y > 0.0))
            .count();
        println!(
            "{samples} samples in {total} chunks of {CHUNK} on {ranks} rank(s), {STEPS} steps: \
             loss {:.6} -> {loss:.6}, accuracy {:.1}%",
            first_loss.unwrap_or(loss),
            100.0 * correct as f64 / samples as f64,
        );
        println!("parameters digest {mine_digest:016x}");
    }
}
