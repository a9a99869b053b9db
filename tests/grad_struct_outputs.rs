//! Struct outputs: a `#[grad]` function that returns a struct deriving `Differentiable`
//! has `_vjp` (a seed of the struct's type), `_jvp` (a tangent of the struct's type) and
//! `_jacobian` (one row per number of the struct, in the order of its flat view). Checked
//! against closed forms, central differences (`assert_jacobian!`), the `Tape`, and the
//! modes against each other: `_jvp` against `J·t`, `_vjp` against `uᵀ·J`.
#![allow(clippy::needless_range_loop)] // the loops are written the way users write them

use autodiff::prelude::*;

mod common;
use common::assert_close;

/// A state of fixed size with a constant field.
#[derive(Differentiable, Debug, PartialEq)]
pub struct State {
    pub energy: f64,
    pub position: [f64; 2],
    #[differentiable(skip)]
    pub step: usize,
}

/// Polar to Cartesian, with a shared sub-expression (`r * r`) and a reused variable.
#[grad(jvp, jacobian)]
fn state(r: f64, angle: [f64; 2], step: usize) -> State {
    let r2 = r * r;
    let c = angle[0].cos();
    State {
        energy: 0.5 * r2 + angle[1] * r2,
        position: [r * c, r * angle[0].sin() * angle[1]],
        step: step + 1,
    }
}

/// The closed form of `state`'s Jacobian: rows energy, x, y; columns r, angle₀, angle₁.
fn state_jacobian_closed_form(r: f64, a: [f64; 2]) -> [[f64; 3]; 3] {
    [
        [r + 2.0 * a[1] * r, 0.0, r * r],
        [a[0].cos(), -r * a[0].sin(), 0.0],
        [a[0].sin() * a[1], r * a[0].cos() * a[1], r * a[0].sin()],
    ]
}

#[test]
fn a_fixed_struct_output_has_one_row_per_number() {
    let (r, angle) = (1.5, [0.4, -0.7]);
    let (value, j_r, j_angle) = state_jacobian(r, angle, 6);
    // The value is the function's own, constant field included.
    assert_eq!(value, state(r, angle, 6));
    assert_eq!(value.step, 7);
    let expected = state_jacobian_closed_form(r, angle);
    for i in 0..3 {
        assert_close(j_r[i], expected[i][0], 1e-15, &format!("∂[{i}]/∂r"));
        for k in 0..2 {
            assert_close(j_angle[i][k], expected[i][1 + k], 1e-15, "∂/∂angle");
        }
    }
    let rows: Vec<Vec<f64>> = (0..3)
        .map(|i| vec![j_r[i], j_angle[i][0], j_angle[i][1]])
        .collect();
    assert_jacobian!(
        |p: &[f64]| state(p[0], [p[1], p[2]], 6).to_flat_vec(),
        &rows,
        &[r, angle[0], angle[1]]
    );
}

#[test]
fn forward_mode_and_the_pullback_agree_with_the_jacobian() {
    let (r, angle) = (0.8, [1.1, 0.3]);
    let j = state_jacobian_closed_form(r, angle);
    // J·t, a tangent of the struct's type; its constant field is the value's.
    let (t_r, t_angle) = (0.5, [-1.0, 2.0]);
    let (value, tangent) = state_jvp(r, angle, 2, t_r, t_angle);
    assert_eq!(value, state(r, angle, 2));
    assert_eq!(tangent.step, 3);
    let t = [t_r, t_angle[0], t_angle[1]];
    let flat = tangent.to_flat_vec();
    for i in 0..3 {
        let expected: f64 = (0..3).map(|k| j[i][k] * t[k]).sum();
        assert_close(flat[i], expected, 1e-14, &format!("(J·t)[{i}]"));
    }
    // uᵀ·J, the seed a value of the struct's type (its constant field not read).
    let seed = State {
        energy: 2.0,
        position: [-0.5, 1.5],
        step: 99,
    };
    let (mut d_r, mut d_angle) = (0.0, [0.0; 2]);
    let value = state_vjp(r, angle, 2, &seed, &mut d_r, &mut d_angle);
    assert_eq!(value, state(r, angle, 2));
    let u = seed.to_flat_vec();
    let d = [d_r, d_angle[0], d_angle[1]];
    for k in 0..3 {
        let expected: f64 = (0..3).map(|i| u[i] * j[i][k]).sum();
        assert_close(d[k], expected, 1e-14, &format!("(uᵀJ)[{k}]"));
    }
}

/// A curve of run-time length: a `Vec` field, filled in a loop.
#[derive(Differentiable, Debug, PartialEq)]
pub struct Curve {
    pub level: f64,
    pub points: Vec<f64>,
}

#[grad(jacobian, wrt(w))]
fn curve(w: [f64; 2], t: &[f64]) -> Curve {
    let mut points = Vec::new();
    for &t in t {
        points.push(w[0] * (w[1] * t).exp());
    }
    Curve {
        level: w[0] * w[1],
        points,
    }
}

#[test]
fn a_vector_field_gives_rows_of_run_time_number() {
    let w = [1.2, -0.4];
    for t in [&[0.0, 1.0, 2.5][..], &[0.3][..]] {
        let (value, j) = curve_jacobian(w, t);
        assert_eq!(value, curve(w, t));
        assert_eq!(j.len(), 1 + t.len());
        assert_close(j[0][0], w[1], 1e-15, "∂level/∂w₀");
        assert_close(j[0][1], w[0], 1e-15, "∂level/∂w₁");
        for (i, &t) in t.iter().enumerate() {
            let e = (w[1] * t).exp();
            assert_close(j[1 + i][0], e, 1e-15, "∂point/∂w₀");
            assert_close(j[1 + i][1], w[0] * t * e, 1e-15, "∂point/∂w₁");
        }
        assert_jacobian!(|p: &[f64]| curve([p[0], p[1]], t).to_flat_vec(), &j, &w);
    }
    // The pullback's seed is a curve of the output's length.
    let t = [0.5, 1.5];
    let seed = Curve {
        level: 1.0,
        points: vec![2.0, -1.0],
    };
    let mut d_w = [0.0; 2];
    let mut d_t = vec![0.0; 2];
    let _ = curve_vjp(w, &t, &seed, &mut d_w, &mut d_t);
    let (_, j) = curve_jacobian(w, &t);
    let u = seed.to_flat_vec();
    for k in 0..2 {
        let expected: f64 = (0..3).map(|i| u[i] * j[i][k]).sum();
        assert_close(d_w[k], expected, 1e-14, "(uᵀJ) in w");
    }
}

/// A method returning `Self`: a local built by a literal (a field by shorthand), then
/// written by field.
#[derive(Differentiable, Debug, PartialEq)]
pub struct Affine {
    pub scale: f64,
    pub shift: [f64; 2],
}

#[grad]
impl Affine {
    /// This map composed with itself.
    #[grad(jacobian)]
    fn squared(&self) -> Self {
        let scale = self.scale * self.scale;
        let mut out = Self {
            scale,
            shift: [0.0; 2],
        };
        for i in 0..2 {
            out.shift[i] = self.scale * self.shift[i] + self.shift[i];
        }
        out
    }
}

#[test]
fn a_method_returning_self_agrees_with_the_tape() {
    let map = Affine {
        scale: 0.7,
        shift: [2.0, -1.0],
    };
    let (value, j) = map.squared_jacobian();
    assert_eq!(value, map.squared());
    assert_eq!(j.shape(), (3, 3));
    let tape = Tape::new();
    let s = tape.var(map.scale);
    let b = [tape.var(map.shift[0]), tape.var(map.shift[1])];
    let outputs = [s * s, s * b[0] + b[0], s * b[1] + b[1]];
    let reference = tape.jacobian(&outputs, &[s, b[0], b[1]]);
    for i in 0..3 {
        for k in 0..3 {
            assert_close(j[i][k], reference[i][k], 1e-15, &format!("J[{i}][{k}]"));
        }
    }
}

// ----- struct outputs with struct fields ----------------------------------------------------

#[derive(Differentiable, Debug, PartialEq, Clone)]
pub struct Frame {
    pub origin: [f64; 2],
    pub scale: f64,
}

/// A struct holding a struct: its numbers are the inner struct's, in place, then its own.
#[derive(Differentiable, Debug, PartialEq, Clone)]
pub struct Placed {
    pub frame: Frame,
    pub angle: f64,
    #[differentiable(skip)]
    pub id: usize,
}

/// Nested literals, a shared sub-expression (`s`) used in both structs.
#[grad(jvp, jacobian)]
fn placed(x: f64, y: f64) -> Placed {
    let s = x * y;
    Placed {
        frame: Frame {
            origin: [x + s, y.sin()],
            scale: s * s,
        },
        angle: s.atan(),
        id: 7,
    }
}

/// A struct local as the field of another (`Placed { frame, .. }`), the outer one a local
/// returned by name.
#[grad(jvp, jacobian)]
#[allow(clippy::let_and_return)] // the local returned by name is the form under test
fn placed_by_parts(x: f64, y: f64) -> Placed {
    let frame = Frame {
        origin: [x, y * x],
        scale: y.exp(),
    };
    let out = Placed {
        frame,
        angle: x / y,
        id: 1,
    };
    out
}

#[test]
fn struct_outputs_with_struct_fields() {
    let (x, y) = (0.6, -1.3);
    let (value, jx, jy) = placed_jacobian(x, y);
    assert_eq!(value, placed(x, y));
    // Numbers in the flat view's order: origin[0], origin[1], scale, angle.
    let s = x * y;
    let (ds_dx, ds_dy) = (y, x);
    let expected_x = [1.0 + ds_dx, 0.0, 2.0 * s * ds_dx, ds_dx / (1.0 + s * s)];
    let expected_y = [ds_dy, y.cos(), 2.0 * s * ds_dy, ds_dy / (1.0 + s * s)];
    common::assert_all_close(&jx, &expected_x, 1e-15, "∂placed/∂x");
    common::assert_all_close(&jy, &expected_y, 1e-15, "∂placed/∂y");
    let rows: Vec<Vec<f64>> = (0..4).map(|i| vec![jx[i], jy[i]]).collect();
    assert_jacobian!(|p: &[f64]| placed(p[0], p[1]).to_flat_vec(), &rows, &[x, y]);
    // Forward mode is J·t, into a value of the struct's type.
    let (_, tangent) = placed_jvp(x, y, 0.5, 2.0);
    let along: Vec<f64> = (0..4).map(|i| 0.5 * jx[i] + 2.0 * jy[i]).collect();
    common::assert_all_close(&tangent.to_flat_vec(), &along, 1e-14, "placed_jvp");
    // The pullback is uᵀ·J, from a seed of the struct's type.
    let seed = Placed {
        frame: Frame {
            origin: [1.0, -2.0],
            scale: 0.5,
        },
        angle: 3.0,
        id: 0,
    };
    let (mut dx, mut dy) = (0.0, 0.0);
    let value = placed_vjp(x, y, &seed, &mut dx, &mut dy);
    assert_eq!(value, placed(x, y));
    let u = seed.to_flat_vec();
    let ux: f64 = (0..4).map(|i| u[i] * jx[i]).sum();
    let uy: f64 = (0..4).map(|i| u[i] * jy[i]).sum();
    assert_close(dx, ux, 1e-14, "placed_vjp x");
    assert_close(dy, uy, 1e-14, "placed_vjp y");

    let (value, jx, jy) = placed_by_parts_jacobian(x, y);
    assert_eq!(value, placed_by_parts(x, y));
    let expected_x = [1.0, y, 0.0, 1.0 / y];
    let expected_y = [0.0, x, y.exp(), -x / (y * y)];
    common::assert_all_close(&jx, &expected_x, 1e-15, "∂placed_by_parts/∂x");
    common::assert_all_close(&jy, &expected_y, 1e-15, "∂placed_by_parts/∂y");
}

/// A body whose position is a tuple of a number and an array.
#[derive(Differentiable, Debug, Clone, Copy, PartialEq)]
pub struct Body {
    pub pos: (f64, [f64; 2]),
    pub id: usize,
    pub energy: f64,
}

/// Tuple fields, from a tuple literal and from a local that holds one.
#[grad(jvp, jacobian)]
fn body(x: [f64; 2]) -> Body {
    let shared = x[0] * x[1];
    let rest = (shared.sin(), [x[1] * 2.0, x[0] * x[0]]);
    Body {
        pos: (rest.0 + shared, rest.1),
        id: 7,
        energy: shared * shared,
    }
}

#[test]
fn struct_outputs_with_tuple_fields() {
    let x = [0.3, 0.9];
    let (value, j) = body_jacobian(x);
    assert_eq!(value, body(x));
    // Numbers in the flat view's order: pos.0, pos.1[0], pos.1[1], energy.
    let s = x[0] * x[1];
    let ds = [x[1], x[0]];
    let expected = [
        [(s.cos() + 1.0) * ds[0], (s.cos() + 1.0) * ds[1]],
        [0.0, 2.0],
        [2.0 * x[0], 0.0],
        [2.0 * s * ds[0], 2.0 * s * ds[1]],
    ];
    for i in 0..4 {
        common::assert_all_close(&j[i], &expected[i], 1e-15, "∂body/∂x");
    }
    let rows: Vec<Vec<f64>> = j.iter().map(|row| row.to_vec()).collect();
    assert_jacobian!(|p: &[f64]| body([p[0], p[1]]).to_flat_vec(), &rows, &x);
    // Forward mode is J·t, the pullback uᵀ·J.
    let t = [0.5, -2.0];
    let (_, tangent) = body_jvp(x, t);
    let along: Vec<f64> = (0..4).map(|i| j[i][0] * t[0] + j[i][1] * t[1]).collect();
    common::assert_all_close(&tangent.to_flat_vec(), &along, 1e-14, "body_jvp");
    assert_eq!(tangent.id, 7);
    let seed = Body {
        pos: (1.0, [-1.0, 0.5]),
        id: 0,
        energy: 2.0,
    };
    let mut d = [0.0; 2];
    let value = body_vjp(x, &seed, &mut d);
    assert_eq!(value, body(x));
    let u = seed.to_flat_vec();
    for k in 0..2 {
        let expected: f64 = (0..4).map(|i| u[i] * j[i][k]).sum();
        assert_close(d[k], expected, 1e-14, "body_vjp");
    }
}
