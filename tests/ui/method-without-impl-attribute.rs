use autodiff::prelude::*;

struct Model {
    w: f64,
}

impl Model {
    #[grad]
    fn f(&self, x: f64) -> f64 {
        x * 2.0
    }
}

fn main() {}
