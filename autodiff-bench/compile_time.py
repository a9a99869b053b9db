#!/usr/bin/env python3
"""Compile-time cost of `#[grad]` and of `symdiff`, on generated functions of N operations.

    python3 autodiff-bench/compile_time.py          # N = 10 ... 5000, about 12 minutes
    python3 autodiff-bench/compile_time.py --sizes 10 100 --repeat 1 --timeout 60
    python3 autodiff-bench/compile_time.py --shapes chain --sizes 5000 --tools none grad
    python3 autodiff-bench/compile_time.py --stack --sizes 100 1000 10000

With `--stack`, it measures stack use instead of build time: the smallest thread stack on
which the function (`none`) or its gradient (`#[grad]`) runs, in debug and release
builds, found by bisection on a program that runs it on a thread of a given stack size
(a stack overflow aborts that program, so each try is a process of its own).

For each shape of function and each N, it writes one small crate per tool into a
temporary directory — the function alone (`none`, the baseline), with `#[grad]`, and with
symdiff's `#[gradient]`, each with a public function that calls the gradient (so that it
is compiled to machine code) — and times `cargo check --release` (parsing, macro
expansion and type checking) and `cargo build --release` (everything, with LLVM) of that
crate alone: the dependencies are compiled once beforehand into a shared target
directory. A build that takes longer than the timeout is stopped and reported as such, and
that tool is not run on larger N.

The shapes, over 8 inputs:
- `sum`: N/3 terms `s = s + sin(x[i]·x[j])` (3 operations each); no value is used twice
  except the inputs.
- `chain`: N `let`s, each one operation on the previous value or two, in turn
  `v[k] = v[k-1] * v[k-2]`, `v[k-1] + v[k-2]`, `v[k-1] - x[i]`, `sin(v[k-1])`: values
  are used twice, as in the `deep` workload.

Prints a Markdown table per shape; seconds, best of --repeat runs.
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INPUTS = 8


def sum_body(n, var):
    lines = []
    prev = None
    for k in range(max(1, n // 3)):
        i, j = k % INPUTS, (3 * k + 1) % INPUTS
        term = f"({var(i)} * {var(j)}).sin()"
        lines.append(f"    let s{k} = {term};" if prev is None else f"    let s{k} = {prev} + {term};")
        prev = f"s{k}"
    return lines, prev


def chain_body(n, var):
    lines = []
    names = [var(0), var(1)]
    for k in range(n):
        a, b = names[-1], names[-2]
        op = k % 4
        if op == 0:
            e = f"{a} * {b}"
        elif op == 1:
            e = f"{a} + {b}"
        elif op == 2:
            e = f"{a} - {var((k // 4) % INPUTS)}"
        else:
            e = f"{a}.sin()"
        lines.append(f"    let v{k} = {e};")
        names.append(f"v{k}")
    return lines, names[-1]


SHAPES = {"sum": sum_body, "chain": chain_body}
DESCRIPTIONS = {
    "sum": "N/3 terms `s = s + sin(x[i]*x[j])`, no sharing",
    "chain": "N `let`s, each on the previous one or two (`*`, `+`, `- x[i]`, `sin`)",
}


def source(shape, n, tool):
    if tool == "symdiff":
        lines, tail = SHAPES[shape](n, lambda i: f"x[{i}]")
        head = f"#[symdiff::gradient(var = x, dim = {INPUTS})]\npub fn f(x: &[f64]) -> f64 {{"
    else:
        lines, tail = SHAPES[shape](n, lambda i: f"x{i}")
        params = ", ".join(f"x{i}: f64" for i in range(INPUTS))
        attr = "#[autodiff::grad]\n" if tool == "grad" else ""
        head = f"{attr}pub fn f({params}) -> f64 {{"
    # A caller, so that the build compiles the gradient to machine code: `<name>_grad` is
    # `#[inline]`, and a library that never calls it would not.
    if tool == "symdiff":
        caller = "pub fn caller(x: &[f64]) -> f64 {\n    f_gradient(x).iter().sum()\n}"
    else:
        args = ", ".join(f"x[{i}]" for i in range(INPUTS))
        if tool == "grad":
            outs = ", ".join(f"d{i}" for i in range(INPUTS))
            body = f"let (v, {outs}) = f_grad({args});\n    v + " + " + ".join(
                f"d{i}" for i in range(INPUTS)
            )
        else:
            body = f"f({args})"
        caller = f"pub fn caller(x: &[f64; {INPUTS}]) -> f64 {{\n    {body}\n}}"
    return "\n".join([head, *lines, f"    {tail}", "}", "", caller, ""])


def stack_program(shape, n, tool):
    """A program that runs `caller` once on a thread whose stack size is its argument."""
    main = f"""
fn main() {{
    let size: usize = std::env::args().nth(1).expect("a stack size").parse().expect("bytes");
    let x = std::hint::black_box([0.5; {INPUTS}]);
    let out = std::thread::Builder::new()
        .stack_size(size)
        .spawn(move || caller(&x))
        .expect("a thread")
        .join()
        .expect("no panic");
    println!("{{out}}");
}}
"""
    return source(shape, n, tool) + main


def smallest_stack(binary):
    """The smallest stack size (in KiB, to 4 KiB) on which `binary` runs, by bisection."""
    def runs(kib):
        result = subprocess.run([binary, str(kib * 1024)], capture_output=True)
        return result.returncode == 0
    low, high = 4, 4
    while not runs(high):
        low, high = high, high * 2
        if high > 4 * 1024 * 1024:
            raise SystemExit(f"{binary} does not run on a 4 GiB stack")
    while high - low > 4:
        middle = (low + high) // 2
        if runs(middle):
            high = middle
        else:
            low = middle
    return high


def measure_stack(root, env, shape, n, tool):
    """(debug KiB, release KiB) of the smallest stack that runs `caller`."""
    name = f"st_{shape}_{n}_{tool}"
    crate = os.path.join(root, name)
    os.makedirs(os.path.join(crate, "src"))
    with open(os.path.join(crate, "Cargo.toml"), "w") as f:
        f.write(manifest(name))
    with open(os.path.join(crate, "src", "main.rs"), "w") as f:
        f.write("#![allow(clippy::all)]\n" + stack_program(shape, n, tool))
    sizes = []
    for profile in ("debug", "release"):
        command = ["cargo", "build"] + (["--release"] if profile == "release" else [])
        try:
            run(command, crate, env, None)
        except SystemExit:
            # rustc itself overflows its stack on a debug build of thousands of nested
            # `let`s, the plain function's too.
            sizes.append("does not compile")
            continue
        sizes.append(smallest_stack(os.path.join(env["CARGO_TARGET_DIR"], profile, name)))
    shutil.rmtree(crate)
    return sizes


def table_head(shape, unit, columns):
    """Prints the heading of a Markdown table of `shape` with these columns."""
    print(f"\n`{shape}`: {DESCRIPTIONS[shape]}; {unit}\n")
    print("| " + " | ".join(["operations"] + columns) + " |")
    print("|" + " ---: |" * (len(columns) + 1))


def stack_tables(root, env, args):
    for shape in args.shapes:
        table_head(shape, "smallest thread stack that runs it, KiB",
                   ["none: debug", "#[grad]: debug", "none: release", "#[grad]: release"])
        for n in args.sizes:
            sys.stderr.write(f"stack: {shape} {n}...\n")
            none = measure_stack(root, env, shape, n, "none")
            grad = measure_stack(root, env, shape, n, "grad")
            print(f"| {n} | {none[0]} | {grad[0]} | {none[1]} | {grad[1]} |", flush=True)


def manifest(name):
    autodiff = REPO.replace("\\", "/")
    return f"""[package]
name = "{name}"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
autodiff = {{ path = "{autodiff}" }}
symdiff = "2.1"

[workspace]
"""


def run(cmd, cwd, env, timeout):
    """Seconds that `cmd` took, or None if it was stopped at the timeout (with rustc, which
    cargo starts: the whole process group)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.stderr.write(stderr[-3000:])
        raise SystemExit(f"failed: {' '.join(cmd)} in {cwd}")
    return elapsed


def measure(root, env, shape, n, tool, timeout, repeat):
    """(check seconds, build seconds), None where the timeout was hit."""
    results = []
    for command in (["cargo", "check", "--release"], ["cargo", "build", "--release"]):
        best = None
        for r in range(repeat):
            # A new package each time, so that nothing of it is cached.
            name = f"ct_{shape}_{n}_{tool}_{command[1]}_{r}"
            crate = os.path.join(root, name)
            os.makedirs(os.path.join(crate, "src"))
            with open(os.path.join(crate, "Cargo.toml"), "w") as f:
                f.write(manifest(name))
            with open(os.path.join(crate, "src", "lib.rs"), "w") as f:
                f.write("#![allow(clippy::all)]\n" + source(shape, n, tool))
            t = run(command, crate, env, timeout)
            shutil.rmtree(crate)
            if t is None:
                best = None
                break
            best = t if best is None else min(best, t)
        results.append(best)
        if best is None:
            # The build would take longer still than the check that timed out.
            results.append(None)
            break
    return results


def fmt(t, timeout):
    if t == "skip":
        return "not run"
    return f"> {timeout:.0f}" if t is None else f"{t:.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 5000])
    parser.add_argument("--shapes", nargs="+", default=list(SHAPES), choices=list(SHAPES))
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tools", nargs="+", default=["none", "grad", "symdiff"],
                        choices=["none", "grad", "symdiff"])
    parser.add_argument("--stack", action="store_true",
                        help="measure stack use of the function and its gradient instead")
    args = parser.parse_args()

    root = tempfile.mkdtemp(prefix="autodiff-compile-time-")
    env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(root, "target"), CARGO_TERM_COLOR="never")
    try:
        if args.stack:
            stack_tables(root, env, args)
            return
        sys.stderr.write("compiling the dependencies once...\n")
        for tool in ("grad", "symdiff"):
            if tool in args.tools:
                measure(root, env, "sum", 10, tool, None, 1)
        for shape in args.shapes:
            table_head(shape, "seconds", [
                "none: check", "#[grad]: check", "symdiff: check",
                "none: build", "#[grad]: build", "symdiff: build",
            ])
            gave_up = set()
            for n in args.sizes:
                cells = {}
                for tool in ("none", "grad", "symdiff"):
                    if tool not in args.tools:
                        cells[tool] = ("skip", "skip")
                        continue
                    if tool in gave_up:
                        cells[tool] = ("skip", "skip")
                        continue
                    sys.stderr.write(f"{shape} {n} {tool}...\n")
                    cells[tool] = measure(root, env, shape, n, tool, args.timeout, args.repeat)
                    if None in cells[tool]:
                        gave_up.add(tool)  # a larger N would take longer still
                row = [str(n)]
                for phase in (0, 1):
                    row += [fmt(cells[tool][phase], args.timeout) for tool in ("none", "grad", "symdiff")]
                print("| " + " | ".join(row) + " |", flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
