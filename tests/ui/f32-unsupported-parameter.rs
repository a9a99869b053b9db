use autodiff::prelude::*;

// A parameter of a type `#[grad]` does not take, in a function of `f32`: one error under
// the type, that lists what an `f32` function takes.
#[grad]
fn scaled(_scale: Option<f32>, x: f32) -> f32 {
    x * x
}

fn main() {}
