use autodiff::prelude::*;
use num_traits::Float;

pub struct Params<T> {
    pub k: T,
}

// Structs are differentiated in functions of `f64`; one error, under the type.
#[grad]
fn energy<T: Float>(p: &Params<T>, x: T) -> T {
    p.k * x * x
}

fn main() {
    let p = Params { k: 2.0 };
    let _ = energy(&p, 1.0);
    let _ = energy_grad(&p, 1.0);
}
