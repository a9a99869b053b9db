use autodiff::prelude::*;
use num_traits::Float;

pub struct Params<T> {
    pub k: T,
}

// A struct's fields have one float type; one error, under the type.
#[grad]
fn energy<T: Float>(p: &Params<T>, x: T) -> T {
    p.k * x * x
}

fn main() {
    let p = Params { k: 2.0 };
    let _ = energy(&p, 1.0);
    let _ = energy_grad(&p, 1.0);
}
