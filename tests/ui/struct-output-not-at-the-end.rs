use autodiff::prelude::*;

#[derive(Differentiable)]
pub struct Pair {
    pub a: f64,
    pub b: f64,
}

#[grad(jacobian)]
fn pair(x: f64, y: f64) -> Pair {
    if x > y {
        Pair { a: x, b: y }
    } else {
        Pair { a: y, b: x }
    }
}



fn caller() -> Pair {
    let (value, _, _) = pair_jacobian(1.0, 2.0);
    let _ = pair_jvp(1.0, 2.0, 1.0, 0.0).1.a;
    let _ = pair_vjp(1.0, 2.0, &Pair { a: 1.0, b: 0.0 }, &mut 0.0, &mut 0.0);
    value
}
fn main() { let _ = caller(); }
