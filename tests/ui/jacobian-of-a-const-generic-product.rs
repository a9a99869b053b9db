use autodiff::prelude::*;

// A 2 × N output: its Jacobian's rows would number `2 * N`, which stable Rust cannot
// write as an array's length.
#[grad(jacobian)]
fn pairs<const N: usize>(x: [f64; N], s: f64) -> [[f64; N]; 2] {
    let mut out = [[0.0; N]; 2];
    for i in 0..N {
        out[0][i] = x[i] * s;
        out[1][i] = x[i] + s;
    }
    out
}

fn main() {
    let (value, j_x, j_s) = pairs_jacobian([1.0, 2.0], 3.0);
    println!("{value:?} {j_x:?} {j_s:?}");
}
