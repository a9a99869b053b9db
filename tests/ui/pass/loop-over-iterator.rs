use autodiff::prelude::*;

#[grad]
fn f(w: &[f64; 3]) -> f64 {
    let mut acc = 0.0;
    for x in w.iter() {
        acc += x;
    }
    acc
}

fn main() {}
