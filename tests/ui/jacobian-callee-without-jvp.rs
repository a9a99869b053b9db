use autodiff::prelude::*;

#[grad]
fn softplus(x: f64) -> f64 {
    x.exp().ln_1p()
}

#[grad(jacobian)]
fn layer(x: [f64; 2]) -> [f64; 2] {
    [softplus(x[0] - x[1]), softplus(x[0] + x[1])]
}

fn main() {
    let _ = layer_jacobian([1.0, 2.0]);
}
