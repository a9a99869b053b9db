use autodiff::prelude::*;
use nalgebra::Vector3;

#[derive(Differentiable)]
struct Spring {
    k: f64,
}

// nalgebra's types in a method: one error under its signature; callers of the method's
// generated functions see no second error.
#[grad]
impl Spring {
    #[grad(wrt(x))]
    fn energy(&self, x: &Vector3<f64>) -> f64 {
        0.5 * self.k * x.norm_squared()
    }
}

fn main() {
    let spring = Spring { k: 2.0 };
    let (value, d_x) = spring.energy_grad(&Vector3::new(1.0, 0.0, 0.0));
    println!("{value} {d_x}");
}
