use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    println!("{x}");
    x * 2.0
}

fn main() {}
