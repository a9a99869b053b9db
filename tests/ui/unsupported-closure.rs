use autodiff::prelude::*;

fn apply(f: impl Fn(f64) -> f64, t: f64) -> f64 {
    f(t)
}

// A closure passed to a function: #[grad] cannot see what the function does with it.
#[grad]
fn f(x: f64) -> f64 {
    apply(|t: f64| t * x, 2.0)
}

fn main() {}
