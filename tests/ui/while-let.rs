use autodiff::prelude::*;

#[grad]
fn f(xs: &[f64]) -> f64 {
    let mut s = 0.0;
    let mut i = 0;
    while let Some(x) = xs.get(i) {
        s += x;
        i += 1;
    }
    s
}

fn main() {}
