use autodiff::prelude::*;

#[grad]
fn f(w: &[f64; 4]) -> f64 {
    let mut acc = 0.0;
    for i in 0..4 {
        if w[i] < 0.0 {
            continue;
        }
        if w[i] > 10.0 {
            break;
        }
        acc += w[i];
    }
    acc
}

fn main() {}
