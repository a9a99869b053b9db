//! Structs of `f32` fields in functions of `f32`: parameters, `self`, collections,
//! nested structs, tuple fields and struct outputs, in every mode. Each is checked
//! against the same code written for `f64` (the `f64` twin), to `f32` precision; the
//! `f64` twin of the loss is checked against central differences.
#![allow(clippy::needless_range_loop)] // the loops are written the way users write them

use autodiff::prelude::*;

mod common;
use common::assert_close;

/// Declares the same model, loss and functions for one float type, in a module.
macro_rules! twins {
    ($name:ident, $real:ty) => {
        // Not every generated function is called for both types.
        #[allow(dead_code)]
        mod $name {
            use autodiff::prelude::*;

            #[derive(Differentiable, Debug, Clone)]
            pub struct Layer {
                pub w: Vec<[$real; 2]>,
                pub b: Vec<$real>,
            }

            #[derive(Differentiable, Debug, Clone)]
            pub struct Mlp {
                pub hidden: Layer,
                pub out: [$real; 3],
                pub scale: ($real, $real),
                pub steps: usize,
            }

            #[grad]
            impl Mlp {
                #[grad(jvp, hvp, hessian)]
                pub fn predict(&self, x: [$real; 2]) -> $real {
                    let mut y = self.out[2];
                    for k in 0..self.hidden.b.len() {
                        let z = self.hidden.w[k][0] * x[0]
                            + self.hidden.w[k][1] * x[1]
                            + self.hidden.b[k];
                        y += self.out[k] * z.tanh();
                    }
                    y * self.scale.0 + self.scale.1
                }
            }

            #[grad(jvp, hvp, hessian)]
            pub fn loss(m: &Mlp, xs: &[[$real; 2]], ys: &[$real]) -> $real {
                let mut l = 0.0;
                for (x, y) in xs.iter().zip(ys) {
                    let r = m.predict(*x) - y;
                    l += r * r;
                }
                l / xs.len() as $real
            }

            #[derive(Differentiable, Debug, Clone, Copy)]
            pub struct Particle {
                pub pos: [$real; 2],
                pub mass: $real,
            }

            #[grad(jvp, jacobian)]
            pub fn radii(ps: &[Particle], k: $real) -> Vec<$real> {
                let mut r = Vec::new();
                for p in ps {
                    r.push(k * p.mass * (p.pos[0] * p.pos[0] + p.pos[1] * p.pos[1]).sqrt());
                }
                r
            }

            #[derive(Differentiable, Debug, Clone, Copy, PartialEq)]
            pub struct Out {
                pub a: $real,
                pub b: [$real; 2],
            }

            #[grad(jvp, jacobian)]
            pub fn split(x: [$real; 2]) -> Out {
                Out {
                    a: x[0] * x[1],
                    b: [x[0].sin(), x[1] * 2.0],
                }
            }

            pub fn model() -> Mlp {
                Mlp {
                    hidden: Layer {
                        w: vec![[0.5, -0.3], [0.2, 0.8]],
                        b: vec![0.1, -0.2],
                    },
                    out: [1.0, -0.5, 0.3],
                    scale: (1.5, 0.1),
                    steps: 3,
                }
            }
        }
    };
}

twins!(single, f32);
twins!(double, f64);

const XS: [[f64; 2]; 3] = [[0.4, -0.7], [1.0, 0.2], [-0.3, 0.6]];
const YS: [f64; 3] = [0.3, -0.1, 0.5];

fn narrow(xs: &[f64]) -> Vec<f32> {
    xs.iter().map(|&x| x as f32).collect()
}

fn widen(xs: &[f32]) -> Vec<f64> {
    xs.iter().map(|&x| f64::from(x)).collect()
}

#[track_caller]
fn assert_all_close(actual: &[f64], expected: &[f64], tolerance: f64, what: &str) {
    assert_eq!(actual.len(), expected.len(), "{what}: lengths");
    for (k, (a, e)) in actual.iter().zip(expected).enumerate() {
        assert_close(*a, *e, tolerance, &format!("{what}[{k}]"));
    }
}

#[test]
fn gradients_of_struct_parameters_and_self() {
    let (m32, m64) = (single::model(), double::model());
    let xs32: Vec<[f32; 2]> = XS.iter().map(|x| x.map(|v| v as f32)).collect();
    let ys32 = narrow(&YS);
    let (value, dm, dxs, dys) = single::loss_grad(&m32, &xs32, &ys32);
    let (value64, dm64, dxs64, dys64) = double::loss_grad(&m64, &XS, &YS);
    // The value is the original's, bit for bit, and near the `f64` twin's.
    assert_eq!(value, single::loss(&m32, &xs32, &ys32));
    assert_close(f64::from(value), value64, 1e-6, "value");
    assert_all_close(
        &widen(&dm.to_flat_vec_f32()),
        &dm64.to_flat_vec(),
        1e-5,
        "∂/∂m",
    );
    let flat = |d: &[[f32; 2]]| widen(&d.concat());
    assert_all_close(&flat(&dxs), &dxs64.concat(), 1e-5, "∂/∂xs");
    assert_all_close(&widen(&dys), &dys64, 1e-5, "∂/∂ys");
    // The constant field is copied into the partial.
    assert_eq!(dm.steps, 3);
    // The `f64` twin against central differences of the model's numbers.
    let loss_at = |flat: &[f64]| {
        let mut m = double::model();
        m.copy_from_flat(flat);
        double::loss(&m, &XS, &YS)
    };
    let at = m64.to_flat_vec();
    for (k, d) in dm64.to_flat_vec().iter().enumerate() {
        let (mut up, mut down) = (at.clone(), at.clone());
        up[k] += 1e-6;
        down[k] -= 1e-6;
        assert_close(
            *d,
            (loss_at(&up) - loss_at(&down)) / 2e-6,
            1e-7,
            "difference",
        );
    }
    // A method's `self` partial.
    let (_, dself, dx) = m32.predict_grad([0.4, -0.7]);
    let (_, dself64, dx64) = m64.predict_grad([0.4, -0.7]);
    assert_all_close(
        &widen(&dself.to_flat_vec_f32()),
        &dself64.to_flat_vec(),
        1e-5,
        "∂/∂self",
    );
    assert_all_close(&widen(&dx), &dx64, 1e-5, "∂/∂x");
}

#[test]
fn second_order_of_struct_parameters() {
    let (m32, m64) = (single::model(), double::model());
    let xs32: Vec<[f32; 2]> = XS.iter().map(|x| x.map(|v| v as f32)).collect();
    let ys32 = narrow(&YS);
    let (value, dm, _, _, h) = single::loss_hessian(&m32, &xs32, &ys32);
    let (_, dm64, _, _, h64) = double::loss_hessian(&m64, &XS, &YS);
    assert_eq!(value, single::loss(&m32, &xs32, &ys32));
    assert_all_close(
        &widen(&dm.to_flat_vec_f32()),
        &dm64.to_flat_vec(),
        1e-5,
        "∂/∂m",
    );
    assert_eq!((h.rows(), h.cols()), (h64.rows(), h64.cols()));
    for i in 0..h.rows() {
        for j in 0..h.cols() {
            assert_close(
                f64::from(h[(i, j)]),
                h64[(i, j)],
                1e-4,
                &format!("H[{i}][{j}]"),
            );
            assert_eq!(h[(i, j)], h[(j, i)], "symmetric");
        }
    }
    // `_jvp` along the model's direction of its first number agrees with the gradient.
    let mut direction = m32.clone();
    direction.copy_from_flat(&vec![0.0; m32.param_count()]);
    direction.hidden.w[0][0] = 1.0;
    let zeros = vec![[0.0f32; 2]; 3];
    let (_, tangent) = single::loss_jvp(&m32, &xs32, &ys32, &direction, &zeros, &[0.0; 3]);
    assert_close(
        f64::from(tangent),
        f64::from(dm.hidden.w[0][0]),
        1e-5,
        "jvp",
    );
}

#[test]
fn jacobians_of_collections_and_struct_outputs() {
    let ps32 = [
        single::Particle {
            pos: [1.0, 2.0],
            mass: 3.0,
        },
        single::Particle {
            pos: [0.5, -1.0],
            mass: 1.0,
        },
    ];
    let ps64 = [
        double::Particle {
            pos: [1.0, 2.0],
            mass: 3.0,
        },
        double::Particle {
            pos: [0.5, -1.0],
            mass: 1.0,
        },
    ];
    let (value, jp, jk) = single::radii_jacobian(&ps32, 2.0);
    let (value64, jp64, jk64) = double::radii_jacobian(&ps64, 2.0);
    assert_all_close(&widen(&value), &value64, 1e-6, "value");
    assert_eq!((jp.rows(), jp.cols()), (2, 6));
    assert_all_close(&widen(jp.as_slice()), jp64.as_slice(), 1e-6, "J_ps");
    assert_all_close(&widen(&jk), &jk64, 1e-6, "J_k");

    let (out, j) = single::split_jacobian([0.3, 0.9]);
    let (out64, j64) = double::split_jacobian([0.3, 0.9]);
    assert_eq!(out, single::split([0.3, 0.9]));
    assert_close(f64::from(out.a), out64.a, 1e-7, "a");
    for r in 0..3 {
        assert_all_close(&widen(&j[r]), &j64[r], 1e-6, "J");
    }
    let (_, tangent) = single::split_jvp([0.3, 0.9], [1.0, 0.0]);
    assert_eq!(tangent.a, j[0][0]);
    assert_eq!(tangent.b, [j[1][0], j[2][0]]);
}

/// The flat view of an `f32` struct, in `f32`s (the trait's is of `f64`s).
trait FlatF32 {
    fn to_flat_vec_f32(&self) -> Vec<f32>;
}

impl<T: Differentiable> FlatF32 for T {
    fn to_flat_vec_f32(&self) -> Vec<f32> {
        self.to_flat_vec().iter().map(|&x| x as f32).collect()
    }
}

/// A struct of `f32`s with a `Vec` field.
#[derive(Differentiable, Clone, Debug)]
pub struct Holder32 {
    pub b: f32,
    pub v: Vec<f32>,
}

/// Takes a field and its struct: both partials go to the caller's one buffer.
#[grad(jvp, hvp)]
fn field_and_whole(x: f32, xs: &[f32], m: &Holder32) -> (f32, f32) {
    (m.b * x + m.v[0] * xs[1], x * xs[0] + m.v[1])
}

/// Passes `&m.v` and `m` to the same call (found by the random programs: in `f32` the
/// second buffer was added back through a trait that structs do not implement).
#[grad(jvp, hvp)]
fn passes_a_field_and_its_struct(x: f32, m: &Holder32) -> f32 {
    let (a, b) = field_and_whole(x, &m.v, m);
    a * b
}

#[test]
fn a_field_and_its_struct_passed_to_one_call_in_f32() {
    let m = Holder32 {
        b: 0.5,
        v: vec![1.5, -0.75],
    };
    let x = 0.8f32;
    let (value, dx, d_m) = passes_a_field_and_its_struct_grad(x, &m);
    assert_eq!(value, passes_a_field_and_its_struct(x, &m));
    // By hand: a = b x + v0 v1, c = x v0 + v1, value a c.
    let (b, v0, v1) = (f64::from(m.b), f64::from(m.v[0]), f64::from(m.v[1]));
    let x = f64::from(x);
    let (a, c) = (b * x + v0 * v1, x * v0 + v1);
    assert_close(f64::from(dx), b * c + a * v0, 1e-6, "∂/∂x");
    assert_close(f64::from(d_m.b), x * c, 1e-6, "∂/∂b");
    assert_close(f64::from(d_m.v[0]), v1 * c + a * x, 1e-6, "∂/∂v0");
    assert_close(f64::from(d_m.v[1]), v0 * c + a, 1e-6, "∂/∂v1");
}
