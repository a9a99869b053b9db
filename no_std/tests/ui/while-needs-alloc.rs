use autodiff::prelude::*;

#[grad]
fn halve_until_small(x: f64, limit: f64) -> f64 {
    let mut y = x;
    while y > limit {
        y = 0.5 * y;
    }
    y
}

fn main() {}
