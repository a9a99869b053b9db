#!/usr/bin/env python3
"""Floating-point instructions per gradient, scalar against packed (SIMD), counted by
valgrind: how much of a gradient's arithmetic the compiler vectorised.

    cargo build --release -p autodiff-bench --example runtime_lengths
    python3 autodiff-bench/vector_mix.py moons 0 'moons_model::loss_slices_grad_into'

The arguments are a comparison and a contender of `examples/runtime_lengths.rs` (its
`<comparison> <contender> <calls>` mode runs one contender alone) and the function to
count, as `objdump -C` names it. The script runs the contender 10 and 60 times under
`valgrind --tool=callgrind --dump-instr=yes`, takes the difference (so that the setup
cancels out), maps each executed address of the function to its instruction in
`objdump -d`, and prints, per call, the instructions executed in it and how many of them
are floating-point arithmetic on one `f64` (`mulsd`, `vfmadd231sd`, …) and on packed
`f64`s (`mulpd`, `vfmadd231pd` on xmm or ymm registers, …). Counts, not times: they
repeat from run to run.
"""

import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(REPO, "target", "release", "examples", "runtime_lengths")
ARITHMETIC = r"(add|sub|mul|div|max|min|sqrt|v?f[n]?m(add|sub)\d*)"
SCALAR = re.compile(rf"^v?{ARITHMETIC}sd$")
PACKED = re.compile(rf"^v?{ARITHMETIC}pd$")


def disassembly(function):
    """{address: mnemonic} of the instructions of `function`."""
    out = subprocess.run(
        ["objdump", "-d", "-C", "--no-show-raw-insn", BINARY],
        capture_output=True, text=True, check=True,
    ).stdout
    instructions, inside = {}, False
    for line in out.splitlines():
        header = re.match(r"^([0-9a-f]+) <(.*)>:$", line)
        if header:
            inside = header.group(2).endswith(function)
            continue
        if inside:
            m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)", line)
            if m:
                instructions[int(m.group(1), 16)] = m.group(2)
    if not instructions:
        raise SystemExit(f"no function named like {function} in {BINARY}")
    return instructions


def costs(comparison, contender, calls, function):
    """{address: instructions executed} inside `function`, from one callgrind run."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        subprocess.run(
            ["valgrind", "--tool=callgrind", "--dump-instr=yes", f"--callgrind-out-file={out}",
             BINARY, comparison, str(contender), str(calls)],
            capture_output=True, check=True,
        )
        lines = open(out).read().splitlines()
    names, per_address, inside, skip, address = {}, {}, False, False, 0
    # Each cost line holds one column per position (the address, and the source line
    # when there is debug information), then the instructions executed.
    columns = 1
    for line in lines:
        if line.startswith("positions:"):
            columns = len(line.split()) - 1
            continue
        named = re.match(r"c?fn=\((\d+)\)(?: (.*))?", line)
        if named and named.group(2):
            names[named.group(1)] = named.group(2)
        if line.startswith("fn="):
            inside = names.get(named.group(1), "").endswith(function)
            continue
        if line.startswith("calls="):
            skip = True  # the next line is the call's inclusive cost
            continue
        if not line or not (line[0] in "+-*" or line.startswith("0x")):
            continue
        position, *values = line.split()
        if position.startswith("0x"):
            address = int(position, 16)
        elif position[0] in "+-":
            address += int(position, 0) if position[0] == "+" else -int(position[1:], 0)
        if skip:
            skip = False
            continue
        if inside and len(values) >= columns:
            per_address[address] = per_address.get(address, 0) + int(values[columns - 1])
    return per_address


def main():
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    comparison, contender, function = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    instructions = disassembly(function)
    few, many = 10, 60
    low = costs(comparison, contender, few, function)
    high = costs(comparison, contender, many, function)
    if not high:
        raise SystemExit(f"{function} did not run")
    # Callgrind gives the addresses of a position-independent executable as objdump does.
    unknown = [a for a in high if a not in instructions]
    if unknown:
        raise SystemExit(f"{len(unknown)} addresses outside the disassembly of {function}")
    total = scalar = packed = 0
    for address, count in high.items():
        count = (count - low.get(address, 0)) / (many - few)
        mnemonic = instructions[address]
        total += count
        if SCALAR.match(mnemonic):
            scalar += count
        elif PACKED.match(mnemonic):
            packed += count
    print(f"{function}: per call {total:,.0f} instructions, {scalar:,.0f} scalar f64 "
          f"arithmetic, {packed:,.0f} packed f64 arithmetic")


if __name__ == "__main__":
    main()
