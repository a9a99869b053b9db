// A local whose value is rejected gets one error, at the value: its uses (`h[0]`, `h[1]`
// read as an array) are not reported again.
use autodiff::prelude::*;

#[grad]
fn f(w: &[f64; 2]) -> f64 {
    let h = w.map(f64::sin);
    h[0] * h[1] + h[1]
}

fn main() {}
