use autodiff::prelude::*;

#[grad]
struct S {
    x: f64,
}

fn main() {}
