//! The long programs written by the build script (`generator::random::long_program`):
//! functions under test of thousands of operations, whose gradients have well over the
//! 2,000 `let`s beyond which `#[grad]` cuts them into segments (functions of at most 250
//! statements in modules of their own, `autodiff-macros-core/src/codegen/outline.rs`).
//! Checked as the other parts of the batch are (see `autodiff_difftest::check`).

use autodiff_difftest::{Case, Spec};

include!(concat!(env!("OUT_DIR"), "/programs_long.rs"));

#[test]
fn long_programs_agree_with_tape_and_finite_differences() {
    autodiff_difftest::check::check_batch(CASES, SEED);
}
