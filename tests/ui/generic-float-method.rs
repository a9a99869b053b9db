use autodiff::prelude::*;
use num_traits::Float;

struct Scale {
    k: usize,
}

impl Scale {
    // Methods are written for one float type.
    #[grad]
    fn apply<T: Float>(&self, x: T) -> T {
        x * T::from(self.k).unwrap()
    }
}

fn main() {
    let s = Scale { k: 2 };
    let _ = s.apply_grad(1.0f64);
}
