use autodiff::prelude::*;

macro_rules! double {
    ($e:expr) => {
        $e * 2.0
    };
}

#[grad]
fn f(x: f64) -> f64 {
    double!(x)
}

fn main() {}
