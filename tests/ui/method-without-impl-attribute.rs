use autodiff::prelude::*;

#[derive(Differentiable)]
struct Model {
    w: f64,
}

impl Model {
    // Marked alone, a method cannot see the type of `self`: `self` is a constant, and
    // asking for its partial is an error that says to mark the `impl` block.
    #[grad(wrt(self, x))]
    fn f(&self, x: f64) -> f64 {
        self.w * x
    }
}

fn main() {}
