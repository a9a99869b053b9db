use autodiff::prelude::*;

#[grad]
fn f(w: [f64; 4]) -> f64 {
    let v = w;
    v[0]
}

fn main() {}
