use autodiff::prelude::*;

#[grad]
fn f(x: f64, v: Vec<f64>) -> f64 {
    let c = move || x;
    let y = x.frobnicate();
    y + v[0] + if x > 0.0 { 1.0 } else { 2.0 }
}

fn main() {}
