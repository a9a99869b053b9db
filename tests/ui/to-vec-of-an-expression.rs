use autodiff::prelude::*;

// `.to_vec()` copies a slice, array or vector named by a variable; a sub-slice is not one.
#[grad]
fn tail(w: &[f64]) -> f64 {
    let v = w[1..].to_vec();
    v[0]
}

fn main() {}
