use autodiff::prelude::*;

#[grad]
fn f(x: f64) -> f64 {
    let y = x * 2.0;
    return y;
    #[allow(unreachable_code)]
    x
}

fn main() {}
