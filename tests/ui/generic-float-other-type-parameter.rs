use autodiff::prelude::*;
use num_traits::Float;

// One type parameter, the float type; another is an error under it.
#[grad]
fn scale<T: Float, U: Copy>(x: T, factor: U) -> T {
    let _ = factor;
    x * x
}

fn main() {
    let _ = scale_grad(1.0f64, 2u8);
}
