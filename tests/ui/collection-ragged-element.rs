use autodiff::prelude::*;

#[derive(Differentiable, Clone)]
pub struct Row {
    pub values: Vec<f64>,
    pub weight: f64,
}

// The elements of a collection of structs hold numbers, arrays or structs of them; a
// `Vec` inside each element is one error, under its type, and its uses give no other.
#[grad]
fn weighted(rows: &[Row]) -> f64 {
    let mut s = 0.0;
    for row in rows {
        s += row.weight;
        for v in &row.values {
            s += v * row.weight;
        }
        s += row.values.iter().sum::<f64>() + row.values.len() as f64;
    }
    s + rows[0].values[1]
}

fn main() {}
