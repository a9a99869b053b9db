use autodiff::prelude::*;

// Rows of run-time length: one error, under the type, whatever the body does with them.
#[grad]
fn ragged(w: f64, rows: &[Vec<f64>]) -> f64 {
    let mut total = 0.0;
    for row in rows {
        for &x in row {
            total += w * x;
        }
    }
    for i in 0..rows.len() {
        for j in 0..rows[i].len() {
            total += rows[i][j] * w;
        }
    }
    for i in 0..rows.len() {
        let r = &rows[i];
        for j in 0..r.len() {
            total += r[j] * w;
        }
    }
    let s: f64 = rows.iter().map(|r| r[0] * w).sum();
    total + s + rows[0][1]
}

fn main() {
    // Callers see no second error: the placeholder `_grad` has the signature.
    let _ = ragged_grad(1.0, &[vec![1.0, 2.0]]);
}
