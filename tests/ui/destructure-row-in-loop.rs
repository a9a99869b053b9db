use autodiff::prelude::*;

#[grad]
fn rows(w: &[[f64; 2]; 3]) -> f64 {
    let mut total = 0.0;
    for row in w {
        let [a, b] = row;
        total += a * b;
    }
    total
}

fn main() {}
