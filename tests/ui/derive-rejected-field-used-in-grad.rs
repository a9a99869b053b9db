use autodiff::prelude::*;

// A field the derive rejects: one error, under it. The struct can still be a parameter
// (the field a constant), and a method taking `&mut self` still gets its `_grad` for
// callers: no second error anywhere else.
#[derive(Differentiable)]
struct Model {
    w: [f64; 2],
    scale: Option<f64>,
}

#[grad]
fn predict(m: &Model, x: f64) -> f64 {
    m.w[0] * x + m.w[1]
}

struct Net {
    w: [f64; 2],
}

#[grad]
impl Net {
    #[grad(wrt(x))]
    fn g(&mut self, x: f64) -> f64 {
        self.w[1] = x;
        self.w[0] * x
    }
}

fn main() {
    let m = Model {
        w: [1.0, 2.0],
        scale: None,
    };
    let (_, _, _) = predict_grad(&m, 2.0);
    let n = Net { w: [1.0, 2.0] };
    let (_, _) = n.g_grad(2.0);
    let _ = (n.w, m.scale);
}
