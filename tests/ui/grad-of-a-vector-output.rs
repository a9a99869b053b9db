use autodiff::prelude::*;

#[grad]
fn pair(x: f64) -> [f64; 2] {
    [x, x * x]
}

fn main() {
    let _ = pair_grad(1.0);
}
