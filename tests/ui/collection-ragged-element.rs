use autodiff::prelude::*;

#[derive(Differentiable, Clone)]
pub struct Row {
    pub values: Vec<f64>,
    pub weight: f64,
}

// The elements of a collection of structs hold numbers, arrays or structs of them; a
// `Vec` inside each element is one error, under its type.
#[grad]
fn weighted(rows: &[Row]) -> f64 {
    let mut s = 0.0;
    for row in rows {
        s += row.weight;
    }
    s
}

fn main() {}
