use autodiff::prelude::*;

#[grad(wrt(p))]
fn f(p: &mut [[f64; 2]], x: f64) -> f64 {
    p[1][0] = x;
    p[0][0] * x
}

fn main() {
    // The placeholder `f_grad` has the signature `wrt(p)` asks for: no second error here.
    let _: (f64, Vec<[f64; 2]>) = f_grad(&mut [[1.0, 2.0]], 2.0);
}
