use autodiff::prelude::*;

#[grad]
fn f(xs: &[f64]) -> f64 {
    let mut s = 0.0;
    for x in xs {
        let mut v = vec![0.0; 2];
        v.push(x * 2.0);
        s += v[2];
    }
    s
}

fn main() {}
