use autodiff::prelude::*;

#[derive(Differentiable, Clone)]
pub struct Particle {
    pub pos: [f64; 2],
    pub mass: f64,
}

// A collection of structs is read through its elements' fields, by index or in a `for`
// loop; an iterator chain over it is one error, under the collection.
#[grad]
fn total_mass(ps: &[Particle]) -> f64 {
    ps.iter().map(|p| p.mass).sum::<f64>() + ps[0].pos[0]
}

fn main() {}
