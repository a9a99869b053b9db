use autodiff::prelude::*;

#[derive(Default)]
struct P {
    x: f64,
    y: f64,
}

// A struct literal bound by `let` is supported; with `..rest` it is not.
#[grad]
fn f(x: f64) -> f64 {
    let p = P {
        x,
        ..Default::default()
    };
    p.x * 2.0 + p.y
}

fn main() {}
