#!/usr/bin/env bash
# The machine-code size on a Cortex-M4F (thumbv7em-none-eabihf, release) of each #[grad]
# function of this crate and of the `*_step` function that calls its generated gradient.
# Needs the target (`rustup target add thumbv7em-none-eabihf`) and binutils' `nm`.
set -euo pipefail
cd "$(dirname "$0")"
cargo build --quiet --release --target thumbv7em-none-eabihf
nm -S -C target/thumbv7em-none-eabihf/release/libautodiff_no_std.rlib 2>/dev/null |
    while read -r _ size kind name; do
        if [ "$kind" = T ] && [[ "$name" == autodiff_no_std::* ]]; then
            printf '%-18s %6d bytes\n' "${name#autodiff_no_std::}" "$((16#$size))"
        fi
    done | sort
