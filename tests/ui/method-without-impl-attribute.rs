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

#[derive(Differentiable)]
struct Derived {
    w: f64,
}

impl Derived {
    // `self` derives `Differentiable`, but a method marked alone cannot differentiate it.
    #[grad]
    fn g(&self, x: f64) -> f64 {
        self.w * x
    }

    // Keeping it constant on purpose is fine.
    #[grad(wrt(x))]
    fn h(&self, x: f64) -> f64 {
        self.w * x
    }
}
