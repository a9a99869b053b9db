use autodiff::prelude::*;

// Writing through a `&mut` slice (here by `iter_mut`) is one error, under its type.
#[grad]
fn scale(xs: &mut [f64], a: f64) -> f64 {
    for x in xs.iter_mut() {
        *x *= a;
    }
    xs[0]
}

fn main() {}
