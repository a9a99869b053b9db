// `#[grad]` on functions that a `macro_rules!` macro writes (tokens arrive in
// invisible groups) and a body that names a `const` from a `macro_rules!` expansion.
use autodiff::prelude::*;

macro_rules! scaled {
    ($name:ident, $op:ident, $k:expr) => {
        #[grad]
        fn $name(x: f64) -> f64 {
            x.$op() * $k
        }
    };
}

scaled!(scaled_sin, sin, 2.0);
scaled!(scaled_exp, exp, 0.5 + 0.25);

fn main() {
    assert_eq!(
        scaled_sin_grad(0.5),
        (0.5f64.sin() * 2.0, 0.5f64.cos() * 2.0)
    );
    assert_eq!(scaled_exp_grad(0.5).1, 0.5f64.exp() * 0.75);
}
