use autodiff::prelude::*;

#[grad(jacobian)]
fn clipped(x: &[f64], limit: f64) -> Vec<f64> {
    let mut out = Vec::new();
    for v in x {
        if *v > limit {
            return out;
        }
        out.push(v * v);
    }
    out
}

fn main() {}
