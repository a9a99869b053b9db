use autodiff::prelude::*;

#[derive(Clone, Copy)]
enum Op {
    Identity,
    Scale(f64),
}

// `op` is a constant #[grad] does not look into: its patterns may bind nothing.
#[grad(wrt(x))]
fn apply(x: f64, op: Op) -> f64 {
    match op {
        Op::Identity => x,
        Op::Scale(k) => k * x,
    }
}

fn main() {
    let _ = apply_grad(1.0, Op::Scale(2.0));
}
