use autodiff::prelude::*;

#[grad]
// A type with `f64` in it that #[grad] cannot differentiate (a type without one, such
// as `char` or an enum, is a constant).
fn f(x: f64, n: Option<f64>) -> f64 {
    x * 2.0
}

fn main() {}
