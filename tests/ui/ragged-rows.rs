use autodiff::prelude::*;

// Rows of run-time length (`&[Vec<f64>]`) are data: read, never differentiated. What is
// not supported with them is one error each, under the offending tokens.

// Named in `wrt(..)`: they have no gradient.
#[grad(wrt(w, rows))]
fn named(w: f64, rows: &[Vec<f64>]) -> f64 {
    let mut total = 0.0;
    for row in rows {
        for &x in row {
            total += w * x;
        }
    }
    total
}

// Taken by value: only a slice by reference.
#[grad]
fn owned(w: f64, rows: Vec<Vec<f64>>) -> f64 {
    w * rows[0][0]
}

// Rows of the other float type.
#[grad]
fn other_float(w: f64, rows: &[Vec<f32>]) -> f64 {
    w * rows.len() as f64
}

fn main() {
    // Callers see no second error: the placeholders have the signatures.
    let rows = vec![vec![1.0, 2.0]];
    let _ = named_grad(1.0, &rows);
    let _ = owned_grad(1.0, rows.clone());
}
