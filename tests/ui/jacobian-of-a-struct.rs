use autodiff::prelude::*;

#[derive(Differentiable)]
struct Line {
    slope: f64,
    offset: f64,
}

#[grad(jacobian)]
fn predict(line: &Line, x: [f64; 2]) -> [f64; 2] {
    [line.slope * x[0] + line.offset, line.slope * x[1] + line.offset]
}

fn main() {}
