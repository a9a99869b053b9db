use autodiff::prelude::*;

// `%` of numbers is differentiated (`x % m`, `rem_euclid`); bit operators are not, even on
// the integers that index arrays.
#[grad]
fn f(x: [f64; 8], k: usize) -> f64 {
    x[k ^ 1] * 2.0
}

fn main() {}
