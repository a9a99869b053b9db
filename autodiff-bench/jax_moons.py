"""JAX's jitted gradient of the moons loss against `#[grad(parallel)]`, on the same data.

    cargo build --release -p autodiff-bench --features rayon --example jax_moons
    target/release/examples/jax_moons write target/jax
    python3 autodiff-bench/jax_moons.py target/jax target/release/examples/jax_moons

Needs `jax` and `numpy` from PyPI (`pip install jax`). The loss is the one of
`examples/moons_model` (2-16-16-1, ReLU, mean hinge loss, L2 penalty), written with
matrix products as a JAX user writes it, in 64-bit floats. For each file written by
`jax_moons write` (100 to 100,000 samples), the script first checks that
`jax.jit(jax.value_and_grad(loss))` gives this crate's value and gradient, then times
both in interleaved rounds: a batch of JAX calls in this process (each waited for, as a
training step waits for its gradient), and `jax_moons time` run as a child process for
`#[grad(parallel)]` on all threads and on one. A time is the median over the rounds.

`--jax-threads 1` limits XLA to one thread (set before JAX starts), for the comparison on
one thread; by default XLA uses every core, as does `#[grad(parallel)]`'s "all" column.
Everything printed is measured on this run; nothing is asserted beyond the agreement of
the gradients.
"""

import argparse
import os
import subprocess
import sys
import time

ROUNDS = 7
BATCH_SECONDS = 0.05

HIDDEN, INPUTS, ALPHA = 16, 2, 1e-4
L2 = HIDDEN * (INPUTS + 1)
L3 = L2 + HIDDEN * (HIDDEN + 1)
PARAMS = L3 + HIDDEN + 1


def parse():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", help="the directory `jax_moons write` wrote")
    parser.add_argument("rust", help="the `jax_moons` example's binary")
    parser.add_argument("--jax-threads", type=int, default=0, help="0: every core")
    return parser.parse_args()


ARGS = parse()
if ARGS.jax_threads == 1:
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "")
        + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    )

import jax  # noqa: E402 (after XLA_FLAGS)
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)


def loss(p, xs, ys):
    """The moons loss over a batch: each layer one matrix product."""
    layer1 = p[:L2].reshape(HIDDEN, INPUTS + 1)
    h1 = jax.nn.relu(xs @ layer1[:, :INPUTS].T + layer1[:, INPUTS])
    layer2 = p[L2:L3].reshape(HIDDEN, HIDDEN + 1)
    h2 = jax.nn.relu(h1 @ layer2[:, :HIDDEN].T + layer2[:, HIDDEN])
    score = h2 @ p[L3 : L3 + HIDDEN] + p[L3 + HIDDEN]
    return jnp.mean(jax.nn.relu(1.0 - ys * score)) + ALPHA * jnp.sum(p * p)


def load(path):
    """Samples, labels, parameters, and this crate's value and gradient."""
    numbers = np.fromfile(path, dtype="<f8")
    n = int(numbers[0])
    at = 1
    xs = numbers[at : at + 2 * n].reshape(n, 2)
    at += 2 * n
    ys = numbers[at : at + n]
    at += n
    p = numbers[at : at + PARAMS]
    at += PARAMS
    value, gradient = numbers[at], numbers[at + 1 : at + 1 + PARAMS]
    return n, jnp.asarray(xs), jnp.asarray(ys), jnp.asarray(p), value, gradient


def jax_batch(f, args, calls):
    start = time.perf_counter()
    for _ in range(calls):
        jax.block_until_ready(f(*args))
    return (time.perf_counter() - start) / calls


def rust_time(samples, threads, calls):
    out = subprocess.run(
        [ARGS.rust, "time", str(samples), str(threads), str(calls)],
        check=True,
        capture_output=True,
        text=True,
    )
    return float(out.stdout.strip()) * 1e-9


def show(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"


def main():
    threads = os.cpu_count() or 1
    f = jax.jit(jax.value_and_grad(loss))
    files = sorted(
        (name for name in os.listdir(ARGS.data) if name.startswith("moons_")),
        key=lambda name: int(name[len("moons_") : -len(".f64")]),
    )
    jax_threads = "1 thread" if ARGS.jax_threads == 1 else f"{threads} threads"
    print(f"JAX {jax.__version__}, {jax.devices()[0].platform}, XLA on {jax_threads}; "
          f"median of {ROUNDS} interleaved rounds\n")
    print(f"| samples | JAX jit ({jax_threads}) | parallel, {threads} threads "
          f"| parallel, 1 thread | JAX / parallel ({threads}) | JAX / parallel (1) "
          f"| gradient difference |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in files:
        n, xs, ys, p, value, gradient = load(os.path.join(ARGS.data, name))
        got_value, got_gradient = f(p, xs, ys)
        scale = np.max(np.abs(gradient))
        difference = np.max(np.abs(np.asarray(got_gradient) - gradient)) / scale
        if abs(float(got_value) - value) > 1e-12 * abs(value) or difference > 1e-9:
            sys.exit(f"{name}: JAX's loss {float(got_value)!r} or gradient (difference "
                     f"{difference:.1e}) is not this crate's ({value!r})")
        once = max(jax_batch(f, (p, xs, ys), 3), 1e-7)
        jax_calls = max(1, int(BATCH_SECONDS / once))
        rust_once = rust_time(n, 1, 1)
        rust_calls = max(1, int(BATCH_SECONDS / 7 / rust_once))
        times = {"jax": [], "all": [], "one": []}
        for _ in range(ROUNDS):
            times["jax"].append(jax_batch(f, (p, xs, ys), jax_calls))
            times["all"].append(rust_time(n, threads, rust_calls))
            times["one"].append(rust_time(n, 1, rust_calls))
        median = {key: sorted(v)[len(v) // 2] for key, v in times.items()}
        print(f"| {n:,} | {show(median['jax'])} | {show(median['all'])} "
              f"| {show(median['one'])} | {median['jax'] / median['all']:.2f}x "
              f"| {median['jax'] / median['one']:.2f}x | {difference:.0e} |")


if __name__ == "__main__":
    main()
