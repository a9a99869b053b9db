use autodiff::prelude::*;

struct Pair {
    a: f64,
    b: f64,
}

fn norm(p: &Pair) -> f64 {
    (p.a * p.a + p.b * p.b).sqrt()
}

// A struct built in the body is read by field; passing it whole is one error, under it.
#[grad]
fn f(x: f64, y: f64) -> f64 {
    let p = Pair { a: x * y, b: x + y };
    p.a + norm(&p)
}

fn main() {}
