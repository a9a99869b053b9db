use autodiff::prelude::*;

#[grad]
fn f(xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for x in xs {
        let mut v = Vec::new();
        v.push(x * 2.0);
        s += v[0];
    }
    s
}

fn main() {}
