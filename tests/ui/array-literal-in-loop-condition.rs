use autodiff::prelude::*;

#[grad]
fn pair(a: [f64; 2]) -> f64 {
    a[0] * a[1]
}

// An array literal passed to a call is bound before the call's statement (or in a
// closure's body), but not out of a loop's condition, which is evaluated again each time.
#[grad]
fn total(x: f64) -> f64 {
    let mut y = x;
    while pair([y, y]) < 10.0 {
        y = y * 2.0;
    }
    y
}

fn main() {
    let _ = total_grad(1.5);
}
