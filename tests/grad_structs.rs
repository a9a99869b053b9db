//! Struct parameters: `#[derive(Differentiable)]` structs, their partials, nesting,
//! constant fields, `Vec` fields, and the flat view, checked against central finite
//! differences and the `Tape` engine.
#![allow(clippy::needless_range_loop)] // the loops are written the way users write them

use autodiff::prelude::*;

mod model {
    use autodiff::Differentiable;

    /// A two-layer perceptron, as a user keeps it.
    #[derive(Differentiable, Clone, Debug, PartialEq)]
    pub struct Mlp {
        pub w1: [[f64; 2]; 3],
        pub b1: [f64; 3],
        pub w2: [f64; 3],
        pub b2: f64,
    }
}

use model::Mlp;

#[grad]
fn mlp_out(m: &Mlp, x: [f64; 2]) -> f64 {
    let mut out = m.b2;
    for j in 0..3 {
        let h = (m.w1[j][0] * x[0] + m.w1[j][1] * x[1] + m.b1[j]).tanh();
        out += m.w2[j] * h;
    }
    out
}

fn sample() -> Mlp {
    Mlp {
        w1: [[0.3, -0.7], [1.1, 0.4], [-0.5, 0.9]],
        b1: [0.1, -0.2, 0.05],
        w2: [0.8, -1.2, 0.6],
        b2: 0.25,
    }
}

#[test]
fn struct_partial_matches_finite_differences() {
    let m = sample();
    let x = [0.4, -1.3];
    let (value, dm, dx) = mlp_out_grad(&m, x);
    assert_eq!(value.to_bits(), mlp_out(&m, x).to_bits());
    assert_eq!(m.param_count(), 6 + 3 + 3 + 1);
    assert_close(
        &dm.to_flat_vec(),
        &numeric_partial(&m, |m| mlp_out(m, x)),
        1e-7,
    );
    for k in 0..2 {
        let h = 1e-6;
        let (mut up, mut down) = (x, x);
        up[k] += h;
        down[k] -= h;
        let numeric = (mlp_out(&m, up) - mlp_out(&m, down)) / (2.0 * h);
        assert!((dx[k] - numeric).abs() < 1e-7);
    }
}

mod common;
use common::{assert_all_close, fd_flat_gradient as numeric_partial};

fn assert_close(actual: &[f64], expected: &[f64], tolerance: f64) {
    assert_all_close(actual, expected, tolerance, "gradient");
}

/// A layer, nested twice in `Net`.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Layer {
    pub w: [[f64; 2]; 2],
    pub b: [f64; 2],
}

/// Layers inside a model, with constants and skipped fields.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Net {
    pub first: Layer,
    pub second: Layer,
    pub scale: f64,
    /// Constants: copied into the partial, never differentiated.
    pub steps: usize,
    pub relu: bool,
    #[differentiable(skip)]
    pub temperature: f64,
    #[differentiable(skip)]
    pub name: String,
}

#[grad]
fn net_loss(net: &Net, x: [f64; 2]) -> f64 {
    let mut h = [0.0; 2];
    for i in 0..2 {
        let z = net.first.w[i][0] * x[0] + net.first.w[i][1] * x[1] + net.first.b[i];
        h[i] = if net.relu { z.relu() } else { z.tanh() };
    }
    let mut out = 0.0;
    for _ in 0..net.steps {
        for i in 0..2 {
            // `net.scale` and `h` are read several times: the adjoints accumulate.
            out += net.scale
                * (net.second.w[i][0] * h[0] + net.second.w[i][1] * h[1] + net.second.b[i]);
        }
    }
    out / net.temperature + net.scale * net.scale
}

fn net() -> Net {
    Net {
        first: Layer {
            w: [[0.5, -0.3], [0.8, 0.2]],
            b: [0.1, -0.4],
        },
        second: Layer {
            w: [[1.5, -0.6], [0.7, 0.9]],
            b: [0.05, 0.3],
        },
        scale: 0.7,
        steps: 3,
        relu: false,
        temperature: 2.0,
        name: "net".into(),
    }
}

#[test]
fn nested_structs_with_constant_fields() {
    let x = [0.9, -0.4];
    for relu in [false, true] {
        let net = Net { relu, ..net() };
        let (value, d_net, dx) = net_loss_grad(&net, x);
        assert_eq!(value.to_bits(), net_loss(&net, x).to_bits());
        // Constants are copied from the input; skipped fields are not differentiated.
        assert_eq!(d_net.steps, 3);
        assert_eq!(d_net.relu, relu);
        assert_eq!(d_net.temperature, 2.0);
        assert_eq!(d_net.name, "net");
        assert_eq!(d_net.param_count(), 4 + 2 + 4 + 2 + 1);
        let numeric = numeric_partial(&net, |n| net_loss(n, x));
        assert_close(&d_net.to_flat_vec(), &numeric, 1e-7);
        let numeric_x: Vec<f64> = (0..2)
            .map(|k| {
                let (mut up, mut down) = (x, x);
                up[k] += 1e-6;
                down[k] -= 1e-6;
                (net_loss(&net, up) - net_loss(&net, down)) / 2e-6
            })
            .collect();
        assert_close(&dx, &numeric_x, 1e-7);
    }
}

/// A model with vectors of run-time length, and a loss over samples.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Linear {
    pub w: Vec<f64>,
    pub b: f64,
}

#[grad(wrt(model))]
fn linear_fit(model: &Linear, xs: &[[f64; 3]], ys: &[f64]) -> f64 {
    let mut loss = 0.0;
    for (x, y) in xs.iter().zip(ys) {
        let z: f64 = model.w.iter().zip(x).map(|(w, v)| w * v).sum::<f64>() + model.b;
        loss += (z - y).powi(2);
    }
    loss / ys.len() as f64
}

#[test]
fn vec_fields_and_run_time_loops() {
    let model = Linear {
        w: vec![0.5, -1.5, 2.0],
        b: 0.3,
    };
    let xs = [
        [1.0, 2.0, 3.0],
        [-1.0, 0.5, 0.25],
        [0.3, 0.3, -2.0],
        [2.0, -1.0, 1.0],
    ];
    let ys = [1.0, -0.5, 0.7, 2.0];
    let (value, d_model) = linear_fit_grad(&model, &xs, &ys);
    assert_eq!(value.to_bits(), linear_fit(&model, &xs, &ys).to_bits());
    assert_eq!(d_model.w.len(), 3);
    let numeric = numeric_partial(&model, |m| linear_fit(m, &xs, &ys));
    assert_close(&d_model.to_flat_vec(), &numeric, 1e-7);

    // `_grad_into` adds into a caller's buffer.
    let mut buffer = model.zero_like();
    let v1 = linear_fit_grad_into(&model, &xs, &ys, &mut buffer);
    let v2 = linear_fit_grad_into(&model, &xs, &ys, &mut buffer);
    assert_eq!(v1.to_bits(), v2.to_bits());
    let doubled: Vec<f64> = d_model.to_flat_vec().iter().map(|g| 2.0 * g).collect();
    assert_close(&buffer.to_flat_vec(), &doubled, 1e-12);

    // One gradient step lowers the loss.
    let mut stepped = model.clone();
    stepped.add_scaled(-0.01, &d_model);
    assert!(linear_fit(&stepped, &xs, &ys) < value);
}

/// The same loss on the `Tape` engine, an independent reference.
fn linear_fit_tape(model: &Linear, xs: &[[f64; 3]], ys: &[f64]) -> (f64, Vec<f64>) {
    let tape = Tape::new();
    let w: Vec<Var> = model.w.iter().map(|&w| tape.var(w)).collect();
    let b = tape.var(model.b);
    let mut loss = tape.var(0.0);
    for (x, &y) in xs.iter().zip(ys) {
        let mut z = b;
        for (wi, &xi) in w.iter().zip(x) {
            z += *wi * xi;
        }
        loss += (z - y).powi(2);
    }
    let loss = loss / ys.len() as f64;
    let grads = loss.gradient();
    let mut flat: Vec<f64> = w.iter().map(|v| grads.wrt(*v)).collect();
    flat.push(grads.wrt(b));
    (loss.value(), flat)
}

#[test]
fn struct_gradient_agrees_with_the_tape() {
    let model = Linear {
        w: vec![0.1, 0.2, -0.3],
        b: -0.1,
    };
    let xs = [[0.5, -1.0, 2.0], [1.5, 0.5, -0.5], [0.0, 1.0, 1.0]];
    let ys = [0.3, -0.2, 1.1];
    let (value, d_model) = linear_fit_grad(&model, &xs, &ys);
    let (tape_value, tape_grad) = linear_fit_tape(&model, &xs, &ys);
    assert!((value - tape_value).abs() < 1e-12);
    assert_close(&d_model.to_flat_vec(), &tape_grad, 1e-12);
}

#[grad]
fn by_value(m: Layer, k: f64) -> f64 {
    (m.w[0][0] * m.w[1][1] - m.w[0][1] * m.w[1][0]) * k + m.b[0] * m.b[1]
}

#[test]
fn struct_by_value_and_a_scalar() {
    let m = Layer {
        w: [[1.0, 2.0], [3.0, 4.0]],
        b: [0.5, -2.0],
    };
    let (value, dm, dk) = by_value_grad(m.clone(), 3.0);
    assert_eq!(value, (1.0 * 4.0 - 2.0 * 3.0) * 3.0 + 0.5 * -2.0);
    // Closed form: ∂/∂w = k * cofactors, ∂/∂b = (b1, b0), ∂/∂k = det.
    assert_eq!(dm.w, [[12.0, -9.0], [-6.0, 3.0]]);
    assert_eq!(dm.b, [-2.0, 0.5]);
    assert_eq!(dk, -2.0);
}

/// Raw identifiers as field and parameter names.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Raw {
    pub r#type: [f64; 2],
    pub r#loop: f64,
}

#[grad]
fn raw_names(r#in: &Raw, x: f64) -> f64 {
    r#in.r#type[0] * x + r#in.r#type[1] * r#in.r#loop
}

#[test]
fn raw_identifiers() {
    let raw = Raw {
        r#type: [2.0, 3.0],
        r#loop: 5.0,
    };
    let (value, d, dx) = raw_names_grad(&raw, 7.0);
    assert_eq!(value, 2.0 * 7.0 + 3.0 * 5.0);
    assert_eq!(d.r#type, [7.0, 5.0]);
    assert_eq!(d.r#loop, 3.0);
    assert_eq!(dx, 2.0);
}

/// Points kept in a vector field.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Cloud {
    pub v: Vec<f64>,
}

#[grad]
impl Cloud {
    /// A local vector as long as a field (issue: `vec![0.0; self.v.len()]` was rejected
    /// under `len`, while the same `.len()` worked as a loop bound).
    #[grad]
    #[allow(clippy::needless_range_loop)] // the loop is written the way users write it
    fn spread(&self, x: f64) -> f64 {
        let mut scaled = vec![0.0; self.v.len()];
        for i in 0..self.v.len() {
            scaled[i] = (self.v[i] * x).sin();
        }
        scaled.iter().map(|s| s * s).sum::<f64>()
    }
}

#[grad]
#[allow(clippy::needless_range_loop)] // the loop is written the way users write it
fn spread_of(m: &Cloud, x: f64) -> f64 {
    let mut scaled = vec![0.0; m.v.len()];
    for i in 0..m.v.len() {
        scaled[i] = m.v[i] * x + m.v[i];
    }
    scaled.iter().map(|s| s * s).sum::<f64>()
}

#[test]
fn a_local_vector_as_long_as_a_field() {
    let c = Cloud {
        v: vec![0.3, -1.2, 0.8],
    };
    let x = 0.6;
    let (value, dc, dx) = c.spread_grad(x);
    assert_eq!(value.to_bits(), c.spread(x).to_bits());
    assert_close(
        &dc.to_flat_vec(),
        &numeric_partial(&c, |c| c.spread(x)),
        1e-7,
    );
    let h = 1e-6;
    assert!((dx - (c.spread(x + h) - c.spread(x - h)) / (2.0 * h)).abs() < 1e-7);

    let (value, dc, dx) = spread_of_grad(&c, x);
    assert_eq!(value.to_bits(), spread_of(&c, x).to_bits());
    assert_close(
        &dc.to_flat_vec(),
        &numeric_partial(&c, |c| spread_of(c, x)),
        1e-7,
    );
    // Closed form: Σ 2·(vᵢx + vᵢ)·vᵢ.
    let expected: f64 = c.v.iter().map(|v| 2.0 * (v * x + v) * v).sum();
    assert!((dx - expected).abs() < 1e-12);
}

// ----- `&mut` parameters that are only read ----------------------------------------------

#[derive(Differentiable, Debug, PartialEq)]
pub struct Scaler {
    pub w: [f64; 2],
    pub bias: f64,
}

/// A model and a scratch slice taken `&mut` (as a training loop holds them), only read:
/// differentiated as `&`, called with `&mut` as the original is.
#[grad(wrt(m, x))]
fn scaled_loss(m: &mut Scaler, x: f64, scratch: &mut [f64]) -> f64 {
    let mut total = 0.0;
    for k in 0..scratch.len() {
        total += (m.w[k % 2] * x + m.bias * scratch[k]).powi(2);
    }
    total
}

#[grad]
impl Scaler {
    /// `&mut self`, only read.
    #[grad(jvp)]
    fn response(&mut self, x: &mut [f64; 2]) -> f64 {
        (self.w[0] * x[0]).tanh() + self.w[1] * x[1] * x[1] + self.bias
    }
}

#[test]
// The generated functions take `&`, and clippy suggests passing `&m`; `&mut m` is what
// the original takes, and coerces.
#[allow(clippy::unnecessary_mut_passed)]
fn mut_parameters_that_are_only_read_are_differentiated_as_shared() {
    let mut m = Scaler {
        w: [0.5, -1.5],
        bias: 0.25,
    };
    let mut scratch = vec![1.0, -2.0, 0.5];
    let (value, dm, dx) = scaled_loss_grad(&mut m, 0.7, &mut scratch);
    assert_eq!(value, scaled_loss(&mut m, 0.7, &mut scratch));
    // The same function written with `&`, by hand: central differences.
    let loss = |w0: f64, w1: f64, bias: f64, x: f64| {
        let mut m = Scaler { w: [w0, w1], bias };
        scaled_loss(&mut m, x, &mut [1.0, -2.0, 0.5])
    };
    assert_gradient!(
        |&(w0, w1, b, x): &(f64, f64, f64, f64)| loss(w0, w1, b, x),
        |&(w0, w1, b, x): &(f64, f64, f64, f64)| {
            let mut m = Scaler {
                w: [w0, w1],
                bias: b,
            };
            let (v, dm, dx) = scaled_loss_grad(&mut m, x, &mut [1.0, -2.0, 0.5]);
            (v, dm.w[0], dm.w[1], dm.bias, dx)
        },
        &(0.5, -1.5, 0.25, 0.7)
    );
    assert_eq!(dm, scaled_loss_grad(&mut m, 0.7, &mut scratch).1);
    assert!(dx.is_finite());

    let mut x = [0.3, -0.8];
    let (value, d_self, d_x) = m.response_grad(&mut x);
    assert_eq!(value, m.response(&mut x));
    let t = (0.5f64 * 0.3).tanh();
    common::assert_close(d_self.w[0], (1.0 - t * t) * 0.3, 1e-15, "∂/∂w0");
    common::assert_close(d_self.w[1], 0.64, 1e-15, "∂/∂w1");
    common::assert_close(d_x[1], 2.0 * -1.5 * -0.8, 1e-15, "∂/∂x1");
    // Forward mode along w0: its tangent is the same partial.
    let (_, tangent) = m.response_jvp(
        &mut x,
        &Scaler {
            w: [1.0, 0.0],
            bias: 0.0,
        },
        &[0.0, 0.0],
    );
    common::assert_close(tangent, d_self.w[0], 1e-15, "tangent along w0");
}

/// A struct with tuple fields, alone and in a slice.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Body {
    pub pos: (f64, f64),
    pub spin: (f64, [f64; 2]),
    pub mass: f64,
}

#[grad(jvp, hvp)]
fn body_energy(b: &Body, bs: &[Body]) -> f64 {
    let mut e = b.mass * (b.pos.0 * b.pos.0 + b.pos.1.sin()) + b.spin.1[1] * b.spin.0;
    for o in bs {
        e += o.pos.0 * o.spin.1[0] * b.mass + o.pos.1 * o.pos.1;
    }
    e
}

#[test]
fn tuple_fields() {
    let b = Body {
        pos: (0.5, -0.3),
        spin: (0.2, [1.0, 2.0]),
        mass: 1.5,
    };
    let bs = vec![
        b.clone(),
        Body {
            pos: (1.0, 2.0),
            spin: (0.1, [0.3, 0.4]),
            mass: 2.0,
        },
    ];
    let (value, d_b, d_bs) = body_energy_grad(&b, &bs);
    assert_eq!(value.to_bits(), body_energy(&b, &bs).to_bits());
    assert_eq!(b.param_count(), 6);
    assert_close(
        &d_b.to_flat_vec(),
        &numeric_partial(&b, |b| body_energy(b, &bs)),
        1e-7,
    );
    assert_close(
        &d_bs.to_flat_vec(),
        &numeric_partial(&bs, |bs| body_energy(&b, bs)),
        1e-7,
    );
    // Closed forms: ∂/∂b.pos.0 = 2·mass·pos.0, ∂/∂bs[1].spin.1[0] = bs[1].pos.0 · mass.
    assert!((d_b.pos.0 - 2.0 * 1.5 * 0.5).abs() < 1e-14);
    assert!((d_bs[1].spin.1[0] - 1.0 * 1.5).abs() < 1e-14);
    let (_, tangent) = body_energy_jvp(&b, &bs, &d_b, &d_bs);
    let squared: f64 = d_b
        .to_flat_vec()
        .iter()
        .chain(&d_bs.to_flat_vec())
        .map(|g| g * g)
        .sum();
    assert!((tangent - squared).abs() < 1e-12 * squared.max(1.0));
    let (_, _, _, hv_b, _) = body_energy_hvp(&b, &bs, &d_b, &bs.zero_like());
    let h = 1e-5;
    let at = |step: f64| {
        let mut moved = b.clone();
        moved.add_scaled(step, &d_b);
        body_energy_grad(&moved, &bs).1.to_flat_vec()
    };
    let numeric = common::slope(at, h);
    assert_close(&hv_b.to_flat_vec(), &numeric, 1e-6);
}
