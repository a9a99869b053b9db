use autodiff::prelude::*;

#[derive(Differentiable)]
pub struct M {
    pub w: f64,
}

pub trait Loss {
    fn loss(&self, x: f64) -> f64;
}

#[grad]
impl Loss for M {
    #[grad]
    fn loss(&self, x: f64) -> f64 {
        self.w * x
    }
}

#[grad]
impl M {
    #[grad]
    pub fn scale(&mut self, x: f64) -> f64 {
        self.w *= 2.0;
        self.w * x
    }
}

#[grad(wrt(x))]
impl M {
    pub fn plain(&self) -> f64 {
        self.w
    }
}

fn main() {}
