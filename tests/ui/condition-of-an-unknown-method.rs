use autodiff::prelude::*;

// A method outside the table in a condition: one error, under the method, not a second
// one saying the condition is not a `bool`.
#[grad]
fn same(x: f64, y: f64) -> f64 {
    if x.eq(&y) {
        x
    } else {
        x * y
    }
}

fn main() {
    println!("{:?}", same_grad(1.0, 2.0));
}
