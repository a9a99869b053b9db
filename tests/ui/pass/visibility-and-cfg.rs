// The gradient has the function's visibility and cfg, and can be used from another module.
mod model {
    use autodiff::prelude::*;

    #[grad]
    pub fn public(x: f64) -> f64 {
        x * x
    }

    #[grad]
    pub(crate) fn crate_visible(x: f64) -> f64 {
        x.exp()
    }

    #[cfg(any())]
    #[grad]
    pub fn compiled_out(x: f64) -> f64 {
        x
    }
}

fn main() {
    assert_eq!(model::public_grad(3.0), (9.0, 6.0));
    assert_eq!(model::crate_visible_grad(0.0), (1.0, 1.0));
}
