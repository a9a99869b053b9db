use autodiff::prelude::*;

#[grad]
fn f(x: f64, n: usize) -> f64 {
    let counts: Vec<u32> = vec![0; n];
    x * counts.len() as f64
}

fn main() {}
