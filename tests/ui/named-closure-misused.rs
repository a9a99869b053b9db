use autodiff::prelude::*;

// A closure bound to a name is inlined where it is called: it cannot be passed on, to an
// iterator adapter or to another name.
#[grad]
fn passed_to_map(xs: [f64; 3]) -> f64 {
    let sq = |t: f64| t * t;
    xs.iter().copied().map(sq).sum::<f64>()
}

#[grad]
fn renamed(a: f64) -> f64 {
    let sq = |t: f64| t * t;
    let g = sq;
    g(a)
}

fn main() {}
