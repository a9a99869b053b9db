use autodiff::prelude::*;

pub struct Plain {
    pub a: f64,
}

#[grad]
fn f(p: &Plain, x: f64) -> f64 {
    p.a * x
}

fn main() {}
