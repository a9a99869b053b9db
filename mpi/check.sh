#!/usr/bin/env bash
# Trains the moons network on 1, 2 and 3 MPI ranks (oversubscribed where the machine has
# fewer cores) and checks that the trained parameters have the same bits on each.
set -euo pipefail
cd "$(dirname "$0")"
cargo fmt -- --check
cargo clippy --all-targets -- -D warnings
cargo build --release
flags=(--oversubscribe)
if [ "$(id -u)" = 0 ]; then
    flags+=(--allow-run-as-root)
fi
digests=()
for ranks in 1 2 3; do
    out=$(mpirun "${flags[@]}" -np "$ranks" target/release/autodiff-mpi)
    echo "$out"
    digests+=("$(echo "$out" | sed -n 's/^parameters digest //p')")
done
if [ -z "${digests[0]}" ] || [ "${digests[0]}" != "${digests[1]}" ] || [ "${digests[0]}" != "${digests[2]}" ]; then
    echo "the parameters differ between rank counts: ${digests[*]}" >&2
    exit 1
fi
echo "the same parameters, bit for bit, on 1, 2 and 3 ranks"
