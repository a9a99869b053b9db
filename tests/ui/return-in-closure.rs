use autodiff::prelude::*;

#[grad]
fn f(xs: &[f64], x: f64) -> f64 {
    if x < 0.0 {
        return 0.0;
    }
    xs.iter()
        .map(|v| {
            if *v > 1.0 {
                return 1.0;
            }
            v * x
        })
        .sum()
}

fn main() {}
