#!/usr/bin/env python3
"""Writes src/written_out.rs: the large workloads written out as straight-line Rust.

`#[grad]` and `symdiff` read source code, not loops, so these workloads must exist as
real, written-out Rust. This script writes them once; its output is committed and the
script is kept next to it, to regenerate it:

    python3 autodiff-bench/gen_workloads.py && cargo fmt --all

The other contenders (the hand-written gradients, the engines, the peer crates) are
written by hand, with loops, in src/workloads/, as their users would write them.
"""

import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "src", "written_out.rs")

NEURON_INPUTS = 8
ROSENBROCK_DIM = 10
CHAIN_LEN = 50
DEEP_LETS = 200
DEEP_INPUTS = 4


def adapters(name, n):
    """`<name>_primal` and `<name>_generated`: the array signatures all contenders share."""
    args = ", ".join(f"x[{i}]" for i in range(n))
    grads = ", ".join(f"d{i}" for i in range(n))
    return f"""
/// [`{name}`] on an array.
pub fn {name}_primal(x: &[f64; {n}]) -> f64 {{
    {name}({args})
}}

/// [`{name}_grad`] on an array.
#[inline]
pub fn {name}_generated(x: &[f64; {n}]) -> (f64, [f64; {n}]) {{
    let (value, {grads}) = {name}_grad({args});
    (value, [{grads}])
}}
"""


def symdiff_tanh(z):
    """tanh with the operations symdiff has: 1 - 2 / (e^(2z) + 1)."""
    return f"(1.0 - 2.0 / ((2.0 * ({z})).exp() + 1.0))"


def neuron():
    n = NEURON_INPUTS
    params = [f"x{i}" for i in range(n)] + [f"w{i}" for i in range(n)] + ["b"]
    z = " + ".join(f"w{i} * x{i}" for i in range(n)) + " + b"
    sz = " + ".join(f"x[{n + i}] * x[{i}]" for i in range(n)) + f" + x[{2 * n}]"
    return (
        f"""
/// `tanh(w·x + b)` with {n} inputs, {n} weights and a bias: parameters
/// `x0..x{n - 1}, w0..w{n - 1}, b`.
#[grad]
pub fn neuron({", ".join(p + ": f64" for p in params)}) -> f64 {{
    ({z}).tanh()
}}

/// [`neuron`] for `symdiff`, over `x = [x0..x{n - 1}, w0..w{n - 1}, b]`, with `tanh(z)`
/// written `1 - 2 / (e^(2z) + 1)` (symdiff has no `tanh`).
#[gradient(var = x, dim = {len(params)})]
pub fn neuron_symdiff(x: &[f64]) -> f64 {{
    let z = {sz};
    {symdiff_tanh("z")[1:-1]}
}}
"""
        + adapters("neuron", len(params))
    )


def rosenbrock():
    d = ROSENBROCK_DIM
    params = ", ".join(f"x{i}: f64" for i in range(d))

    def term(i, v):
        return f"100.0 * ({v(i + 1)} - {v(i)}.powi(2)).powi(2) + (1.0 - {v(i)}).powi(2)"

    terms = " + ".join(term(i, lambda k: f"x{k}") for i in range(d - 1))
    sterms = " + ".join(term(i, lambda k: f"x[{k}]") for i in range(d - 1))
    return (
        f"""
/// The {d}-dimensional Rosenbrock function, `Σ 100·(x[i+1] - x[i]²)² + (1 - x[i])²`.
#[grad]
pub fn rosenbrock({params}) -> f64 {{
    {terms}
}}

/// [`rosenbrock`] for `symdiff`.
#[gradient(var = x, dim = {d})]
pub fn rosenbrock_symdiff(x: &[f64]) -> f64 {{
    {sterms}
}}
"""
        + adapters("rosenbrock", d)
    )


def tanh_chain():
    n = CHAIN_LEN
    params = ", ".join(f"x{i}: f64" for i in range(n))
    terms = " + ".join(f"(x{i} * x{i + 1}).tanh()" for i in range(n - 1))
    sterms = " + ".join(symdiff_tanh(f"x[{i}] * x[{i + 1}]") for i in range(n - 1))
    return (
        f"""
/// `Σ tanh(x[i]·x[i+1])` over {n} inputs.
#[grad]
pub fn tanh_chain({params}) -> f64 {{
    {terms}
}}

/// [`tanh_chain`] for `symdiff`, with `tanh(z)` written `1 - 2 / (e^(2z) + 1)`.
#[gradient(var = x, dim = {n})]
pub fn tanh_chain_symdiff(x: &[f64]) -> f64 {{
    {sterms}
}}
"""
        + adapters("tanh_chain", n)
    )


def tanh_chain_exp():
    """The tanh chain with `tanh` written as symdiff needs it, for `#[grad]`: symdiff's own
    version of this formula is `tanh_chain_symdiff`."""
    n = CHAIN_LEN
    params = ", ".join(f"x{i}: f64" for i in range(n))
    terms = " + ".join(symdiff_tanh(f"x{i} * x{i + 1}") for i in range(n - 1))
    return (
        f"""
/// `Σ tanh(x[i]·x[i+1])` over {n} inputs with `tanh(z)` written `1 - 2 / (e^(2z) + 1)`:
/// the formula of [`tanh_chain_symdiff`].
#[grad]
pub fn tanh_chain_exp({params}) -> f64 {{
    {terms}
}}
"""
        + adapters("tanh_chain_exp", n)
    )


def deep_lets(n, m, param):
    """`v0 = x0`, `v1 = x1`, `v[k+2] = sin(v[k+1]·v[k]) + x[k % m]`, for k < n."""

    def name(k):
        if k < 2:
            return f"x{k}" if param else f"x[{k}]"
        return f"v{k}"

    lines = []
    for k in range(n):
        x = f"x{k % m}" if param else f"x[{k % m}]"
        lines.append(f"    let v{k + 2} = ({name(k + 1)} * {name(k)}).sin() + {x};")
    return "\n".join(lines)


def deep():
    # No symdiff version: symdiff's compile time grows exponentially with the length of
    # such a chain (see the README's Performance section), 200 lets never finish.
    n, m = DEEP_LETS, DEEP_INPUTS
    params = ", ".join(f"x{i}: f64" for i in range(m))
    return (
        f"""
/// A chain of {n} `let`s, each using the previous two: `v0 = x0`, `v1 = x1`,
/// `v[k+2] = sin(v[k+1]·v[k]) + x[k % {m}]`; returns `v{n + 1}`.
#[grad]
pub fn deep({params}) -> f64 {{
{deep_lets(n, m, True)}
    v{n + 1}
}}
"""
        + adapters("deep", m)
    )


HEADER = """//! The large workloads, written out as straight-line code for `#[grad]` and `symdiff`.
//!
//! GENERATED by `autodiff-bench/gen_workloads.py` (then `cargo fmt`): edit the script,
//! not this file. Each `#[grad]` function here is the primal of its workload (the macro
//! keeps it as written and adds `<name>_grad`); each `*_symdiff` is the same function in
//! the form `symdiff` accepts (`x: &[f64]` indexed by literals) and gets
//! `*_symdiff_gradient`; `*_primal` and `*_generated` take and return arrays.
#![allow(clippy::too_many_arguments, clippy::let_and_return)]

use autodiff::prelude::*;
use symdiff::gradient;
"""


def main():
    text = HEADER + "".join(f() for f in (neuron, rosenbrock, tanh_chain, tanh_chain_exp, deep))
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {os.path.relpath(OUT, os.path.dirname(HERE))}")


if __name__ == "__main__":
    main()
