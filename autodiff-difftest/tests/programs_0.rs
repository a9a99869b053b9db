//! Part 0 of the batch of random programs written by the build script: every program
//! compiles (a rejection fails this build) and agrees with its `Tape` twin and with
//! finite differences (see `autodiff_difftest::check`).

use autodiff_difftest::{Case, Spec};

include!(concat!(env!("OUT_DIR"), "/programs_0.rs"));

#[test]
fn generated_programs_agree_with_tape_and_finite_differences() {
    autodiff_difftest::check::check_batch(CASES, SEED);
}
