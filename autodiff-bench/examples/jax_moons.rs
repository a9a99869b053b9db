//! The Rust side of `autodiff-bench/jax/moons.py`, which times JAX's jitted gradient of
//! the moons loss against `#[grad(parallel)]` on the same data.
//!
//! ```sh
//! cargo build --release -p autodiff-bench --features rayon --example jax_moons
//! # the data, the parameters and this crate's value and gradient, one file per size:
//! target/release/examples/jax_moons write target/jax
//! # nanoseconds per gradient of `#[grad(parallel)]` on 100,000 samples and 2 threads,
//! # the median of 7 batches of 20 calls:
//! target/release/examples/jax_moons time 100000 2 20
//! ```
//!
//! A file `moons_<samples>.f64` holds little-endian `f64`s: the number of samples `n`,
//! the inputs (`2n`, sample by sample), the labels (`n`), the 337 parameters
//! (`init(7)`), then the loss and its 337 partials as `#[grad(parallel)]` computes them.
//! The data are copies of the moons data set with fresh noise, as in the `parallel`
//! example; `time` makes them again rather than reading them.

use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use autodiff_bench::parallel::pool;
use autodiff_bench::runtime_lengths::moons::blocks;
use autodiff_bench::runtime_lengths::moons_model::init;
use autodiff_bench::runtime_lengths::moons_parallel::loss_slices_parallel_grad;

/// The sample counts written.
const SIZES: [usize; 4] = [100, 1_000, 10_000, 100_000];
/// Batches timed per `time` call; the median is printed.
const BATCHES: usize = 7;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["write", dir] => write(Path::new(dir)),
        ["time", samples, threads, calls] => {
            let nanos = time(samples.parse()?, threads.parse()?, calls.parse()?);
            println!("{nanos:.0}");
            Ok(())
        }
        _ => Err("usage: jax_moons write DIR | jax_moons time SAMPLES THREADS CALLS".into()),
    }
}

/// Writes one file per size into `dir`.
fn write(dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(dir)?;
    let p = init(7);
    for samples in SIZES {
        let (_, xs, ys) = blocks(samples / 100);
        let (value, gradient) = loss_slices_parallel_grad(&p, &xs, &ys);
        let mut numbers = vec![samples as f64];
        numbers.extend(xs.iter().flatten());
        numbers.extend(&ys);
        numbers.extend(p);
        numbers.push(value);
        numbers.extend(gradient);
        let bytes: Vec<u8> = numbers.iter().flat_map(|x| x.to_le_bytes()).collect();
        let path = dir.join(format!("moons_{samples}.f64"));
        std::fs::File::create(&path)?.write_all(&bytes)?;
        println!("{}: loss {value:.17e}", path.display());
    }
    Ok(())
}

/// The median over [`BATCHES`] batches of `calls` gradients of the time per gradient, in
/// nanoseconds, each batch made from a thread of a pool of `threads` threads (after one
/// call that sizes the workspaces).
fn time(samples: usize, threads: usize, calls: usize) -> f64 {
    let (_, xs, ys) = blocks(samples.div_ceil(100));
    let p = init(7);
    let pool = pool(threads);
    pool.install(|| {
        black_box(loss_slices_parallel_grad(&p, &xs, &ys));
        let mut nanos: Vec<f64> = (0..BATCHES)
            .map(|_| {
                let start = Instant::now();
                for _ in 0..calls {
                    black_box(loss_slices_parallel_grad(
                        black_box(&p),
                        black_box(&xs),
                        black_box(&ys),
                    ));
                }
                start.elapsed().as_secs_f64() * 1e9 / calls as f64
            })
            .collect();
        nanos.sort_by(f64::total_cmp);
        nanos[BATCHES / 2]
    })
}
