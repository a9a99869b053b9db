//! nalgebra's fixed-size types in `#[grad]` functions: vectors, matrices and points as
//! parameters, locals and outputs, with their constructors, operators and methods
//! (`dot`, `norm`, `cross`, `transpose`, …), in four programs written as nalgebra users
//! write them: a rigid-body alignment, a pinhole camera's reprojection error (also as a
//! vector output through `_jvp`), a planar arm's forward kinematics, and the energy of
//! masses on springs. Each is checked against the plain function's value, central finite
//! differences, and (three of them) the same computation written out on the `Tape` engine.
#![allow(clippy::needless_range_loop)] // the loops are written the way users write them

mod common;

use autodiff::prelude::*;
use common::{assert_close, central_difference};
use nalgebra::{DVector, Matrix2x3, Matrix3, Matrix4, Point3, SMatrix, SVector, Vector2, Vector3};

/// The directional derivative of a vector function of a flat point along `t`, by a
/// central difference.
fn fd_along(f: impl Fn(&[f64]) -> Vector2<f64>, x: &[f64], t: &[f64]) -> Vector2<f64> {
    let h = 1e-6;
    let at = |s: f64| -> Vec<f64> { x.iter().zip(t).map(|(x, t)| x + s * t).collect() };
    (f(&at(h)) - f(&at(-h))) / (2.0 * h)
}

/// Checks `gradient` (flat, in the order of `point`) against central differences of `f`
/// and, when given, against the same partials from `Tape` to 1e-12.
#[track_caller]
fn check_gradient(
    name: &str,
    gradient: &[f64],
    f: impl Fn(&[f64]) -> f64,
    point: &[f64],
    tape: Option<&[f64]>,
) {
    assert_eq!(gradient.len(), point.len(), "{name}: gradient length");
    for (i, &g) in gradient.iter().enumerate() {
        assert_close(
            g,
            central_difference(&f, point, i),
            1e-7,
            &format!("{name} at {point:?}: ∂/∂p{i} against finite differences"),
        );
        if let Some(tape) = tape {
            assert_close(
                g,
                tape[i],
                1e-12,
                &format!("{name} at {point:?}: ∂/∂p{i} against Tape"),
            );
        }
    }
}

// ----- a rigid-body transform ------------------------------------------------------------

/// The squared distance from a point moved by a rigid motion (a rotation by `angle` about
/// a vertical hinge, then a translation `t`) to its target, plus the sideways part of the
/// error in the body's frame weighed once more: the cost of aligning a part.
#[grad(wrt(angle, t))]
fn alignment_error(angle: f64, t: &Vector3<f64>, p: &Point3<f64>, target: &Point3<f64>) -> f64 {
    let c = angle.cos();
    let s = angle.sin();
    let r = Matrix3::new(c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0);
    let hinge = Point3::new(0.5, -0.25, 0.0);
    // point − point = vector, matrix × vector, point + vector = point.
    let moved = hinge + r * (p - hinge) + t;
    let d = moved - target;
    let local = r.transpose() * d;
    d.norm_squared() + 0.5 * local.y * local.y
}

/// `alignment_error` written out on `Tape`: the value and the partials of angle, t.
fn alignment_error_on_tape(
    angle: f64,
    t: &Vector3<f64>,
    p: &Point3<f64>,
    target: &Point3<f64>,
) -> (f64, Vec<f64>) {
    let tape = Tape::new();
    let a = tape.var(angle);
    let tv = [tape.var(t.x), tape.var(t.y), tape.var(t.z)];
    let hinge = [0.5, -0.25, 0.0];
    let (c, s) = (a.cos(), a.sin());
    let (u, v, w) = (p.x - hinge[0], p.y - hinge[1], p.z - hinge[2]);
    let d = [
        c * u - s * v + hinge[0] + tv[0] - target.x,
        s * u + c * v + hinge[1] + tv[1] - target.y,
        (w + hinge[2]) + tv[2] - target.z,
    ];
    // The second row of Rᵀ d.
    let local_y = -s * d[0] + c * d[1];
    let out = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 0.5 * local_y * local_y;
    let g = out.gradient();
    (
        out.value(),
        vec![g.wrt(a), g.wrt(tv[0]), g.wrt(tv[1]), g.wrt(tv[2])],
    )
}

#[test]
fn rigid_body_alignment() {
    let cases = [
        (
            0.3,
            Vector3::new(0.1, -0.4, 0.25),
            Point3::new(1.0, 2.0, -0.5),
            Point3::new(0.2, 2.5, 0.3),
        ),
        (
            -1.2,
            Vector3::new(-0.7, 0.3, 1.1),
            Point3::new(-0.4, 0.8, 1.5),
            Point3::new(1.3, -0.6, 2.0),
        ),
        (
            2.5,
            Vector3::new(0.0, 0.9, -0.3),
            Point3::new(0.3, -1.1, 0.7),
            Point3::new(-0.8, 0.1, 0.2),
        ),
    ];
    for (angle, t, p, target) in cases {
        let (value, d_angle, d_t) = alignment_error_grad(angle, &t, &p, &target);
        assert_eq!(
            value.to_bits(),
            alignment_error(angle, &t, &p, &target).to_bits()
        );
        let (tape_value, tape) = alignment_error_on_tape(angle, &t, &p, &target);
        assert_close(value, tape_value, 1e-13, "value against Tape");
        let gradient = [d_angle, d_t.x, d_t.y, d_t.z];
        let point = [angle, t.x, t.y, t.z];
        let f = |q: &[f64]| alignment_error(q[0], &Vector3::new(q[1], q[2], q[3]), &p, &target);
        check_gradient("alignment_error", &gradient, f, &point, Some(&tape));
    }
}

// ----- a pinhole camera ------------------------------------------------------------------

/// The squared reprojection error of a point `x` seen by a pinhole camera at `cam` (looking
/// along +z, unrotated) with focal length `f`, against the observed image point.
#[grad]
fn reprojection(f: f64, cam: &Vector3<f64>, x: &Vector3<f64>, observed: &Vector2<f64>) -> f64 {
    let xc = x - cam;
    let projected = Vector2::new(f * xc.x / xc.z, f * xc.y / xc.z);
    (projected - observed).norm_squared()
}

/// The residual itself, a vector output: forward mode gives its derivative along a
/// direction of the camera, the point and the focal length (the observation is data).
#[grad(jvp, wrt(f, cam, x))]
fn reprojection_residual(
    f: f64,
    cam: Vector3<f64>,
    x: Vector3<f64>,
    observed: &Vector2<f64>,
) -> Vector2<f64> {
    let xc = x - cam;
    let projected = Vector2::new(f * xc.x / xc.z, f * xc.y / xc.z);
    projected - observed
}

/// A focal length, a camera, a point, and where the point was observed.
type View = (f64, Vector3<f64>, Vector3<f64>, Vector2<f64>);

/// Views with observations in pixels, each point well in front of its camera.
fn views() -> [View; 3] {
    [
        (
            520.0,
            Vector3::new(0.1, -0.2, 0.0),
            Vector3::new(0.8, 0.5, 4.0),
            Vector2::new(95.0, 88.0),
        ),
        (
            480.0,
            Vector3::new(-0.5, 0.3, -1.0),
            Vector3::new(-1.2, 1.1, 2.5),
            Vector2::new(-100.0, 115.0),
        ),
        (
            610.0,
            Vector3::new(0.0, 0.0, 0.5),
            Vector3::new(0.3, -0.9, 6.0),
            Vector2::new(30.0, -98.5),
        ),
    ]
}

/// A view as a flat point: f, cam, x, observed.
fn flat_view(f: f64, cam: &Vector3<f64>, x: &Vector3<f64>, observed: &Vector2<f64>) -> Vec<f64> {
    let mut point = vec![f];
    point.extend(cam.iter().chain(x.iter()).chain(observed.iter()));
    point
}

#[test]
fn reprojection_error() {
    for (f, cam, x, observed) in views() {
        let (value, d_f, d_cam, d_x, d_observed) = reprojection_grad(f, &cam, &x, &observed);
        assert_eq!(
            value.to_bits(),
            reprojection(f, &cam, &x, &observed).to_bits()
        );
        // Closed form: the observation enters only through the residual.
        let residual = reprojection_residual(f, cam, x, &observed);
        assert_close(d_observed.x, -2.0 * residual.x, 1e-13, "∂/∂observed.x");
        assert_close(d_observed.y, -2.0 * residual.y, 1e-13, "∂/∂observed.y");
        // The camera and the point enter only through their difference.
        for i in 0..3 {
            assert_close(d_cam[i], -d_x[i], 1e-13, "∂/∂cam = -∂/∂x");
        }
        let gradient = flat_view(d_f, &d_cam, &d_x, &d_observed);
        let point = flat_view(f, &cam, &x, &observed);
        let flat = |q: &[f64]| {
            reprojection(
                q[0],
                &Vector3::new(q[1], q[2], q[3]),
                &Vector3::new(q[4], q[5], q[6]),
                &Vector2::new(q[7], q[8]),
            )
        };
        check_gradient("reprojection", &gradient, flat, &point, None);
    }
}

#[test]
fn reprojection_residual_forward_mode() {
    let directions = [
        (1.0, Vector3::zeros(), Vector3::zeros()),
        (0.0, Vector3::new(1.0, 0.0, 0.0), Vector3::zeros()),
        (0.0, Vector3::zeros(), Vector3::new(0.0, 0.0, 1.0)),
        (
            -3.0,
            Vector3::new(0.2, -0.1, 0.05),
            Vector3::new(-0.3, 0.4, 0.25),
        ),
    ];
    for (f, cam, x, observed) in views() {
        let residual = reprojection_residual(f, cam, x, &observed);
        // The sum of squares of the residual is `reprojection`, bit for bit.
        assert_eq!(
            residual.norm_squared().to_bits(),
            reprojection(f, &cam, &x, &observed).to_bits()
        );
        let (_, d_f, d_cam, d_x, _) = reprojection_grad(f, &cam, &x, &observed);
        for (t_f, t_cam, t_x) in directions {
            let (value, tangent) = reprojection_residual_jvp(f, cam, x, &observed, t_f, t_cam, t_x);
            assert_eq!(value, residual);
            // Against central differences along the direction, component by component.
            let point: Vec<f64> = [f]
                .into_iter()
                .chain(cam.iter().copied())
                .chain(x.iter().copied())
                .collect();
            let direction: Vec<f64> = [t_f]
                .into_iter()
                .chain(t_cam.iter().copied())
                .chain(t_x.iter().copied())
                .collect();
            let flat = |q: &[f64]| {
                reprojection_residual(
                    q[0],
                    Vector3::new(q[1], q[2], q[3]),
                    Vector3::new(q[4], q[5], q[6]),
                    &observed,
                )
            };
            let numeric = fd_along(flat, &point, &direction);
            assert_close(
                tangent.x,
                numeric.x,
                1e-7,
                "tangent.x against finite differences",
            );
            assert_close(
                tangent.y,
                numeric.y,
                1e-7,
                "tangent.y against finite differences",
            );
            // Against the reverse sweep of the squared error: d|r|² = 2 r·dr.
            let along = d_f * t_f + d_cam.dot(&t_cam) + d_x.dot(&t_x);
            assert_close(
                2.0 * residual.dot(&tangent),
                along,
                1e-12,
                "tangent against reprojection_grad",
            );
        }
    }
}

// ----- a planar arm ----------------------------------------------------------------------

/// The lengths of the arm's three links.
const LINKS: [f64; 3] = [1.0, 0.8, 0.5];

/// The squared distance from the hand of a three-link planar arm with joint angles `q` to
/// a goal, plus a small penalty on the angles: inverse kinematics as least squares.
#[grad]
fn reach(q: &Vector3<f64>, goal: &Vector2<f64>) -> f64 {
    let mut hand: Vector2<f64> = Vector2::zeros();
    let mut angle = 0.0;
    for i in 0..3 {
        angle += q[i];
        let l = LINKS[i];
        hand += Vector2::new(l * angle.cos(), l * angle.sin());
    }
    (hand - goal).norm_squared() + 0.01 * q.norm_squared()
}

/// `reach` written out on `Tape`: the value and the partials of q, goal.
fn reach_on_tape(q: &Vector3<f64>, goal: &Vector2<f64>) -> (f64, Vec<f64>) {
    let tape = Tape::new();
    let qv = [tape.var(q.x), tape.var(q.y), tape.var(q.z)];
    let gv = [tape.var(goal.x), tape.var(goal.y)];
    let mut angle = qv[0];
    let mut hand = [LINKS[0] * angle.cos(), LINKS[0] * angle.sin()];
    for i in 1..3 {
        angle += qv[i];
        hand[0] += LINKS[i] * angle.cos();
        hand[1] += LINKS[i] * angle.sin();
    }
    let (dx, dy) = (hand[0] - gv[0], hand[1] - gv[1]);
    let out = dx * dx + dy * dy + 0.01 * (qv[0] * qv[0] + qv[1] * qv[1] + qv[2] * qv[2]);
    let g = out.gradient();
    let partials = qv.iter().chain(&gv).map(|&v| g.wrt(v)).collect();
    (out.value(), partials)
}

#[test]
fn planar_arm_reaching() {
    let cases = [
        (Vector3::new(0.3, 0.6, -0.4), Vector2::new(1.2, 1.0)),
        (Vector3::new(-1.1, 1.4, 0.9), Vector2::new(0.5, -1.5)),
        (Vector3::new(2.0, -0.7, 1.3), Vector2::new(-1.0, 0.4)),
    ];
    for (q, goal) in cases {
        let (value, d_q, d_goal) = reach_grad(&q, &goal);
        assert_eq!(value.to_bits(), reach(&q, &goal).to_bits());
        let (tape_value, tape) = reach_on_tape(&q, &goal);
        assert_close(value, tape_value, 1e-13, "value against Tape");
        let gradient = [d_q.x, d_q.y, d_q.z, d_goal.x, d_goal.y];
        let point = [q.x, q.y, q.z, goal.x, goal.y];
        let f = |p: &[f64]| reach(&Vector3::new(p[0], p[1], p[2]), &Vector2::new(p[3], p[4]));
        check_gradient("reach", &gradient, f, &point, Some(&tape));
        // The last joint turns only the last link: ∂hand/∂q₂ = l₂ (−sin θ, cos θ) with
        // θ = q₀ + q₁ + q₂, and ∂/∂goal = −2 (hand − goal).
        let total = q.sum();
        let link = Vector2::new(-total.sin(), total.cos()) * LINKS[2];
        assert_close(
            d_q.z,
            -d_goal.dot(&link) + 0.02 * q.z,
            1e-12,
            "∂/∂q₂, closed form",
        );
    }
}

// ----- masses on springs -----------------------------------------------------------------

/// The number of masses.
const MASSES: usize = 4;
/// Gravity's acceleration, along −z.
const GRAVITY: f64 = 9.81;

/// The potential energy of four masses (the columns of `x`) joined by a spring of stiffness
/// `k` between every pair (rest lengths in `rest`), under gravity, with an anchor spring on
/// their centroid, and with the triangle of masses 0, 1, 2 a sail: surface tension on its
/// area, and the work of a steady wind through it.
#[grad(wrt(x, k))]
fn spring_energy(
    x: &SMatrix<f64, 3, MASSES>,
    rest: &Matrix4<f64>,
    masses: &SVector<f64, MASSES>,
    k: f64,
) -> f64 {
    let mut energy = 0.0;
    let mut centroid: Vector3<f64> = Vector3::zeros();
    for i in 0..MASSES {
        let xi = Vector3::new(x[(0, i)], x[(1, i)], x[(2, i)]);
        centroid += xi;
        for j in 0..MASSES {
            if i < j {
                let xj = Vector3::new(x[(0, j)], x[(1, j)], x[(2, j)]);
                let stretch = (xj - xi).norm() - rest[(i, j)];
                energy += 0.5 * k * stretch.powi(2);
            }
        }
    }
    centroid *= 0.25;
    energy += 0.5 * k * centroid.norm_squared();
    // Each mass's height is its position along `up`.
    let up = Vector3::new(0.0, 0.0, 1.0);
    let heights = x.transpose() * up;
    energy += GRAVITY * masses.dot(&heights);
    let x0 = Vector3::new(x[(0, 0)], x[(1, 0)], x[(2, 0)]);
    let e1 = Vector3::new(x[(0, 1)], x[(1, 1)], x[(2, 1)]) - x0;
    let e2 = Vector3::new(x[(0, 2)], x[(1, 2)], x[(2, 2)]) - x0;
    let normal = e1.cross(&e2);
    let wind = Vector3::new(0.4, -0.3, 0.2);
    energy + 0.5 * (0.8 * normal.norm() - normal.dot(&wind))
}

/// `a - b` for 3-vectors of tape variables.
fn sub<'t>(a: [Var<'t>; 3], b: [Var<'t>; 3]) -> [Var<'t>; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `spring_energy` written out on `Tape`: the value and the partials of x (column by
/// column) and k.
fn spring_energy_on_tape(
    x: &SMatrix<f64, 3, MASSES>,
    rest: &Matrix4<f64>,
    masses: &SVector<f64, MASSES>,
    k: f64,
) -> (f64, Vec<f64>) {
    let tape = Tape::new();
    let xv: Vec<[Var<'_>; 3]> = (0..MASSES)
        .map(|j| {
            [
                tape.var(x[(0, j)]),
                tape.var(x[(1, j)]),
                tape.var(x[(2, j)]),
            ]
        })
        .collect();
    let kv = tape.var(k);
    let mut energy = kv * 0.0;
    let mut centroid = [kv * 0.0; 3];
    for i in 0..MASSES {
        for c in 0..3 {
            centroid[c] += xv[i][c];
        }
        for j in i + 1..MASSES {
            let d = sub(xv[j], xv[i]);
            let stretch = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt() - rest[(i, j)];
            energy += 0.5 * kv * stretch.powi(2);
        }
    }
    let centroid = centroid.map(|c| c * 0.25);
    energy += 0.5
        * kv
        * (centroid[0] * centroid[0] + centroid[1] * centroid[1] + centroid[2] * centroid[2]);
    for j in 0..MASSES {
        energy += GRAVITY * masses[j] * xv[j][2];
    }
    let (e1, e2) = (sub(xv[1], xv[0]), sub(xv[2], xv[0]));
    let normal = [
        e1[1] * e2[2] - e1[2] * e2[1],
        e1[2] * e2[0] - e1[0] * e2[2],
        e1[0] * e2[1] - e1[1] * e2[0],
    ];
    let area2 = (normal[0] * normal[0] + normal[1] * normal[1] + normal[2] * normal[2]).sqrt();
    let flux = normal[0] * 0.4 - normal[1] * 0.3 + normal[2] * 0.2;
    let out = energy + 0.5 * (0.8 * area2 - flux);
    let g = out.gradient();
    let mut partials: Vec<f64> = xv.iter().flatten().map(|&v| g.wrt(v)).collect();
    partials.push(g.wrt(kv));
    (out.value(), partials)
}

#[test]
fn masses_on_springs() {
    // Rest lengths: symmetric, only the upper triangle is read.
    let rest = Matrix4::new(
        0.0, 1.0, 1.2, 0.9, //
        1.0, 0.0, 1.1, 1.3, //
        1.2, 1.1, 0.0, 0.8, //
        0.9, 1.3, 0.8, 0.0,
    );
    let masses = SVector::<f64, MASSES>::new(1.0, 0.5, 2.0, 0.75);
    let cases = [
        (
            // Columns are positions.
            SMatrix::<f64, 3, MASSES>::new(
                0.0, 1.1, 0.3, 0.5, //
                0.1, -0.2, 0.9, 0.4, //
                0.0, 0.2, -0.1, 0.8,
            ),
            3.0,
        ),
        (
            SMatrix::<f64, 3, MASSES>::new(
                -0.5, 0.7, 0.2, -0.1, //
                0.3, 0.4, -0.9, 0.6, //
                1.0, 0.5, 0.2, -0.7,
            ),
            12.5,
        ),
        (
            SMatrix::<f64, 3, MASSES>::new(
                1.5, 0.2, -0.3, 0.9, //
                -0.4, 0.8, 0.1, 1.2, //
                0.6, -0.5, 1.4, 0.3,
            ),
            0.7,
        ),
    ];
    for (x, k) in cases {
        let (value, d_x, d_k) = spring_energy_grad(&x, &rest, &masses, k);
        // A size named by a constant (`MASSES`) is summed element by element, where
        // nalgebra adds a 4-element `dot` in pairs: the same value to the last bit or so.
        assert_close(
            value,
            spring_energy(&x, &rest, &masses, k),
            1e-15,
            "value against the function",
        );
        let (tape_value, tape) = spring_energy_on_tape(&x, &rest, &masses, k);
        assert_close(value, tape_value, 1e-13, "value against Tape");
        // The energy is linear in k: ∂/∂k is the energy of the springs at k = 1.
        let at_zero = spring_energy(&x, &rest, &masses, 0.0);
        assert_close(d_k, (value - at_zero) / k, 1e-12, "∂/∂k, closed form");
        // Flat: x column by column (nalgebra's storage order), then k.
        let mut gradient = d_x.as_slice().to_vec();
        gradient.push(d_k);
        let mut point = x.as_slice().to_vec();
        point.push(k);
        let f = |p: &[f64]| {
            spring_energy(
                &SMatrix::<f64, 3, MASSES>::from_column_slice(&p[..3 * MASSES]),
                &rest,
                &masses,
                p[3 * MASSES],
            )
        };
        check_gradient("spring_energy", &gradient, f, &point, Some(&tape));
    }
}

// ----- every mode, matrices as parameters, sizes named by const generics, `f32` -------

/// A quadratic form and a cubic term of a vector, through a matrix built in the body:
/// second order by `_hvp` and `_hessian`, in the vector's own type.
#[grad(jvp, hvp, hessian)]
fn bowl(x: &Vector3<f64>, a: &Matrix3<f64>) -> f64 {
    let s = a * a.transpose() + Matrix3::identity();
    let sx = s * x;
    0.5 * x.dot(&sx) + x.x * x.y * x.z + x.norm()
}

#[test]
fn second_order_in_a_vectors_own_type() {
    let a = Matrix3::new(0.3, -0.2, 0.5, 0.1, 0.4, -0.6, 0.7, 0.2, 0.1);
    let x = Vector3::new(0.4, -1.1, 0.8);
    let (value, d_x, d_a, h) = bowl_hessian(&x, &a);
    assert_eq!(value.to_bits(), bowl(&x, &a).to_bits());
    let (g_value, g_x, g_a) = bowl_grad(&x, &a);
    assert_eq!((value, d_x, d_a), (g_value, g_x, g_a));
    // The Hessian's rows and columns: x (3 numbers), then a (9, column by column).
    assert_eq!(h.len(), 12);
    let h = 1e-5;
    for i in 0..3 {
        let mut e = Vector3::zeros();
        e[i] = h;
        let slope = (bowl_grad(&(x + e), &a).1 - bowl_grad(&(x - e), &a).1) / (2.0 * h);
        for k in 0..3 {
            assert_close(
                bowl_hessian(&x, &a).3[k][i],
                slope[k],
                1e-6,
                "H against ∇ slopes",
            );
        }
    }
    let (_, _, _, full) = bowl_hessian(&x, &a);
    for i in 0..12 {
        for k in 0..12 {
            assert_eq!(full[i][k], full[k][i], "H is symmetric");
        }
    }
    // H·v in the parameters' types, against the Hessian's rows.
    let v_x = Vector3::new(0.3, 0.5, -0.2);
    let v_a = Matrix3::from_fn(|i, j| 0.1 * (i as f64) - 0.05 * (j as f64));
    let (_, _, _, hv_x, hv_a) = bowl_hvp(&x, &a, &v_x, &v_a);
    let v: Vec<f64> = v_x.iter().chain(v_a.iter()).copied().collect();
    let hv: Vec<f64> = hv_x.iter().chain(hv_a.iter()).copied().collect();
    for i in 0..12 {
        let row: f64 = (0..12).map(|k| full[i][k] * v[k]).sum();
        assert_close(hv[i], row, 1e-12, "H·v against H");
    }
    // Forward mode: the gradient along the direction.
    let (_, tangent) = bowl_jvp(&x, &a, &v_x, &v_a);
    let along = d_x.dot(&v_x) + d_a.component_mul(&v_a).sum();
    assert_close(tangent, along, 1e-12, "jvp against ∇·v");
}

/// A 2 × 3 matrix times a vector, less a product: the Jacobian blocks of a matrix and a
/// vector parameter, and the pullback of a seed of the output's type.
#[grad(jacobian)]
fn affine(m: Matrix2x3<f64>, x: Vector3<f64>) -> Vector2<f64> {
    let y = m * x;
    y - Vector2::new(x.x * x.y, 0.0)
}

#[test]
fn jacobian_blocks_of_a_matrix_and_a_vector() {
    let m = Matrix2x3::new(1.0, 2.0, 3.0, 4.0, 5.0, 6.0);
    let x = Vector3::new(0.5, -1.0, 2.0);
    let (value, j_m, j_x) = affine_jacobian(m, x);
    assert_eq!(value, affine(m, x));
    // Row r of J_m: ∂y_r/∂m, m's numbers in nalgebra's order (column by column).
    let expected_m = [
        [0.5, 0.0, -1.0, 0.0, 2.0, 0.0],
        [0.0, 0.5, 0.0, -1.0, 0.0, 2.0],
    ];
    assert_eq!(j_m, expected_m);
    let expected_x = [[1.0 - x.y, 2.0 - x.x, 3.0], [4.0, 5.0, 6.0]];
    assert_eq!(j_x, expected_x);
    // The pullback of a seed of the output's type gives seedᵀ·J.
    let seed = Vector2::new(0.7, -0.3);
    let (mut d_m, mut d_x) = (Matrix2x3::zeros(), Vector3::zeros());
    let pulled = affine_vjp(m, x, seed, &mut d_m, &mut d_x);
    assert_eq!(pulled, value);
    for k in 0..3 {
        let expected = seed[0] * j_x[0][k] + seed[1] * j_x[1][k];
        assert_close(d_x[k], expected, 1e-15, "vjp, x");
    }
    for (k, d) in d_m.iter().enumerate() {
        let expected = seed[0] * j_m[0][k] + seed[1] * j_m[1][k];
        assert_close(*d, expected, 1e-15, "vjp, m");
    }
}

/// A size named by a const generic parameter: loops over `N`, the same code for every `N`.
#[grad]
fn spread<const N: usize>(x: &SVector<f64, N>, w: &SMatrix<f64, N, N>) -> f64 {
    let mut y = w * x;
    y += x * 2.0;
    y /= 4.0;
    let centred = y - x;
    (-centred).dot(x) + w.transpose().component_mul(w).sum() + y.normalize().norm_squared()
}

#[test]
fn sizes_named_by_const_generics() {
    fn check<const N: usize>() {
        let x = SVector::<f64, N>::from_fn(|i, _| 0.3 + 0.7 * (i as f64).sin());
        let w = SMatrix::<f64, N, N>::from_fn(|i, j| 0.2 * (i as f64) - 0.1 * (j as f64) + 0.05);
        let (value, d_x, d_w) = spread_grad(&x, &w);
        assert_close(value, spread(&x, &w), 1e-15, "value");
        let flat: Vec<f64> = x.iter().chain(w.iter()).copied().collect();
        let f = |p: &[f64]| {
            let x = SVector::<f64, N>::from_column_slice(&p[..N]);
            let w = SMatrix::<f64, N, N>::from_column_slice(&p[N..]);
            spread(&x, &w)
        };
        let gradient: Vec<f64> = d_x.iter().chain(d_w.iter()).copied().collect();
        for (i, g) in gradient.iter().enumerate() {
            assert_close(
                *g,
                central_difference(f, &flat, i),
                1e-7,
                &format!("∂/∂p{i}"),
            );
        }
    }
    check::<2>();
    check::<5>();
}

/// `f32` vectors, a column of a matrix, a matrix times a point, `/=`.
#[grad]
fn lever(r: &Matrix3<f32>, p: &Point3<f32>, f: Vector3<f32>) -> f32 {
    let moved = r * p;
    let mut arm = moved.coords + r.column(2);
    arm /= 2.0;
    arm.cross(&f).norm()
}

#[test]
fn f32_columns_and_points() {
    let r = Matrix3::new(0.8f32, -0.6, 0.0, 0.6, 0.8, 0.0, 0.0, 0.0, 1.0);
    let p = Point3::new(1.0f32, 2.0, -0.5);
    let f = Vector3::new(0.3f32, -0.2, 0.9);
    let (value, d_r, d_p, d_f) = lever_grad(&r, &p, f);
    assert_eq!(value, lever(&r, &p, f));
    let wide = |r: &Matrix3<f64>, p: &Point3<f64>, f: &Vector3<f64>| -> f64 {
        let arm = (r * p).coords + r.column(2).into_owned();
        (arm / 2.0).cross(f).norm()
    };
    let (r64, p64, f64v) = (r.cast::<f64>(), p.cast::<f64>(), f.cast::<f64>());
    let flat: Vec<f64> = r64
        .iter()
        .chain(p64.coords.iter())
        .chain(f64v.iter())
        .copied()
        .collect();
    let g = |q: &[f64]| {
        let r = Matrix3::from_column_slice(&q[..9]);
        let p = Point3::new(q[9], q[10], q[11]);
        wide(&r, &p, &Vector3::new(q[12], q[13], q[14]))
    };
    let gradient: Vec<f32> = d_r
        .iter()
        .chain(d_p.coords.iter())
        .chain(d_f.iter())
        .copied()
        .collect();
    for (i, d) in gradient.iter().enumerate() {
        let reference = central_difference(g, &flat, i);
        assert!(
            (f64::from(*d) - reference).abs() <= 1e-5 * (1.0 + reference.abs()),
            "∂/∂p{i}: {d} against {reference}"
        );
    }
}

/// nalgebra values only inside the body: the signature is plain numbers, so the generated
/// functions are the usual ones, and a caller calls them as any other.
#[grad]
fn planar_distance(x: f64, y: f64) -> f64 {
    let v = Vector2::new(x, y) - Vector2::new(1.0, -2.0);
    v.norm()
}

#[grad]
fn two_distances(x: f64, y: f64) -> f64 {
    planar_distance(x, y) + planar_distance(y, x) * x
}

#[test]
fn nalgebra_locals_and_calls() {
    let (x, y) = (0.3, 1.7);
    let (value, d_x, d_y) = two_distances_grad(x, y);
    assert_eq!(value, two_distances(x, y));
    let f = |p: &[f64]| two_distances(p[0], p[1]);
    assert_close(d_x, central_difference(f, &[x, y], 0), 1e-7, "∂/∂x");
    assert_close(d_y, central_difference(f, &[x, y], 1), 1e-7, "∂/∂y");
}

// ----- slices of nalgebra values: point clouds ------------------------------------------

/// Point-to-point alignment of two clouds (one step of ICP): a rotation about the
/// vertical axis and a translation applied to `source`, then the squared distances to the
/// matched `target` points, by a closure over the zipped slices; the centroid of the
/// moved cloud by a loop, kept near the origin.
#[grad(wrt(angle, t), jvp, hvp)]
fn cloud_alignment(
    angle: f64,
    t: &Vector3<f64>,
    source: &[Point3<f64>],
    target: &[Point3<f64>],
) -> f64 {
    let (s, c) = (angle.sin(), angle.cos());
    let r = Matrix3::new(c, 0.0, s, 0.0, 1.0, 0.0, -s, 0.0, c);
    let distances = source
        .iter()
        .zip(target)
        .map(|(p, q)| (r * p + t - q).norm_squared())
        .sum::<f64>();
    let mut centroid = Vector3::zeros();
    for p in source {
        centroid += r * p.coords;
    }
    centroid /= source.len() as f64;
    distances + 0.1 * (centroid + t).norm_squared()
}

/// The partial of every point of a cloud: a slice's partial is a `Vec` of its elements'
/// type.
#[grad]
fn cloud_spread(points: &[Point3<f64>], centre: &Vector3<f64>) -> f64 {
    let mut total = 0.0;
    for (i, p) in points.iter().enumerate() {
        total += (p.coords - centre).norm_squared();
        if i > 0 {
            total += 0.5 * (p - points[i - 1]).norm();
        }
    }
    total
}

fn clouds() -> (Vec<Point3<f64>>, Vec<Point3<f64>>) {
    let source: Vec<Point3<f64>> = (0..7)
        .map(|i| {
            let i = i as f64;
            Point3::new((0.7 * i).sin(), 0.3 * i - 1.0, (1.3 * i).cos())
        })
        .collect();
    let target = source
        .iter()
        .map(|p| Point3::new(p.x * 0.9 + 0.1, p.y + 0.05, p.z * 1.1 - 0.2))
        .collect();
    (source, target)
}

#[test]
fn point_clouds_through_slices() {
    let (source, target) = clouds();
    let t = Vector3::new(0.1, -0.2, 0.3);
    for angle in [0.0, 0.4, -1.1] {
        let (value, d_angle, d_t) = cloud_alignment_grad(angle, &t, &source, &target);
        assert_eq!(value, cloud_alignment(angle, &t, &source, &target));
        let f =
            |p: &[f64]| cloud_alignment(p[0], &Vector3::new(p[1], p[2], p[3]), &source, &target);
        let at = [angle, t.x, t.y, t.z];
        let gradient = [d_angle, d_t.x, d_t.y, d_t.z];
        for (i, g) in gradient.iter().enumerate() {
            assert_close(*g, central_difference(f, &at, i), 1e-7, &format!("∂/∂p{i}"));
        }
        // Forward mode and H·v agree with the gradient and its slope.
        let direction = Vector3::new(0.5, -0.25, 1.0);
        let (_, tangent) = cloud_alignment_jvp(angle, &t, &source, &target, 0.3, &direction);
        assert_close(tangent, 0.3 * d_angle + d_t.dot(&direction), 1e-12, "jvp");
        let (_, _, _, hv_angle, _) =
            cloud_alignment_hvp(angle, &t, &source, &target, 1.0, &Vector3::zeros());
        let h = 1e-5;
        let slope = (cloud_alignment_grad(angle + h, &t, &source, &target).1
            - cloud_alignment_grad(angle - h, &t, &source, &target).1)
            / (2.0 * h);
        assert_close(hv_angle, slope, 1e-6, "hvp");
    }

    let centre = Vector3::new(0.2, 0.1, -0.3);
    let (value, d_points, d_centre) = cloud_spread_grad(&source, &centre);
    assert_eq!(value, cloud_spread(&source, &centre));
    let d_points: Vec<Point3<f64>> = d_points;
    let flat: Vec<f64> = source
        .iter()
        .flat_map(|p| p.coords.iter().copied())
        .collect();
    let f = |q: &[f64]| {
        let points: Vec<Point3<f64>> = q.chunks(3).map(|c| Point3::new(c[0], c[1], c[2])).collect();
        cloud_spread(&points, &centre)
    };
    for (i, d) in d_points.iter().enumerate() {
        for k in 0..3 {
            let reference = central_difference(f, &flat, 3 * i + k);
            assert_close(d[k], reference, 1e-7, &format!("∂/∂points[{i}][{k}]"));
        }
    }
    let g = |q: &[f64]| cloud_spread(&source, &Vector3::new(q[0], q[1], q[2]));
    for k in 0..3 {
        let reference = central_difference(g, &[centre.x, centre.y, centre.z], k);
        assert_close(d_centre[k], reference, 1e-7, "∂/∂centre");
    }
    // `_grad_into` writes into buffers of the parameters' types.
    let mut buffer = vec![Point3::origin(); source.len()];
    let mut d_c = Vector3::zeros();
    let into = cloud_spread_grad_into(&source, &centre, &mut buffer, &mut d_c);
    assert_eq!((into, buffer, d_c), (value, d_points, d_centre));
}

// ----- calls between functions of nalgebra's types ---------------------------------------

/// A point turned about the vertical axis: a vector output, called by the functions below.
#[grad(jvp, hvp)]
fn turned(angle: f64, p: &Point3<f64>) -> Vector3<f64> {
    let (s, c) = (angle.sin(), angle.cos());
    Matrix3::new(c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0) * p.coords
}

#[grad(jvp, hvp)]
fn pinhole(f: f64, x: &Vector3<f64>) -> Vector2<f64> {
    Vector2::new(f * x.x / x.z, f * x.y / x.z)
}

/// The reprojection error through the two helpers: nalgebra values passed to `#[grad]`
/// functions and returned by them (the `let`s say their types), in every mode.
#[grad(jvp, hvp)]
fn reprojection_by_calls(angle: f64, f: f64, p: &Point3<f64>, observed: &Vector2<f64>) -> f64 {
    let r: Vector3<f64> = turned(angle, p);
    let x = r + Vector3::new(0.0, 0.0, 4.0);
    let uv: Vector2<f64> = pinhole(f, &x);
    (uv - observed).norm_squared()
}

#[test]
fn calls_between_functions_of_nalgebra_types() {
    let (p, observed) = (Point3::new(0.5, -0.2, 1.0), Vector2::new(0.3, 0.1));
    let (angle, f) = (0.3, 1.5);
    let (value, d_angle, d_f, d_p, d_observed) =
        reprojection_by_calls_grad(angle, f, &p, &observed);
    assert_eq!(value, reprojection_by_calls(angle, f, &p, &observed));
    let g = |q: &[f64]| {
        reprojection_by_calls(
            q[0],
            q[1],
            &Point3::new(q[2], q[3], q[4]),
            &Vector2::new(q[5], q[6]),
        )
    };
    let at = [angle, f, p.x, p.y, p.z, observed.x, observed.y];
    let gradient = [
        d_angle,
        d_f,
        d_p.x,
        d_p.y,
        d_p.z,
        d_observed.x,
        d_observed.y,
    ];
    for (i, d) in gradient.iter().enumerate() {
        assert_close(*d, central_difference(g, &at, i), 1e-7, &format!("∂/∂p{i}"));
    }
    let (_, tangent) = reprojection_by_calls_jvp(
        angle,
        f,
        &p,
        &observed,
        1.0,
        0.5,
        &Point3::origin(),
        &Vector2::zeros(),
    );
    assert_close(tangent, d_angle + 0.5 * d_f, 1e-12, "jvp");
    let (_, _, _, _, _, hv_angle, _, _, _) = reprojection_by_calls_hvp(
        angle,
        f,
        &p,
        &observed,
        1.0,
        0.0,
        &Point3::origin(),
        &Vector2::zeros(),
    );
    let h = 1e-5;
    let slope = (reprojection_by_calls_grad(angle + h, f, &p, &observed).1
        - reprojection_by_calls_grad(angle - h, f, &p, &observed).1)
        / (2.0 * h);
    assert_close(hv_angle, slope, 1e-6, "hvp");
}

// ----- forms a review found: each checked against differences -----------------------------

/// An `else if` whose condition computes a vector; a closure's and a loop's parameter
/// named like a vector parameter (numbers there); a tuple `let` of vectors that swaps; a
/// vector declared first and assigned in branches; `clone`.
#[allow(clippy::needless_late_init)] // written as the guide's advice for branches reads
#[grad]
fn forms(v: &Vector3<f64>, w: &Vector3<f64>, x: &[f64], flip: bool) -> f64 {
    let mut e = 0.0;
    if v.x > 10.0 {
        e = 1.0;
    } else if (v - w).norm() > 0.5 {
        e = (v - w).norm();
    }
    let doubled: f64 = x.iter().map(|v| v * 2.0).sum();
    let mut s = 0.0;
    for w in x.iter() {
        s += w * 3.0;
    }
    let (a, b) = (v + w, v - w);
    let (a, b) = (b, a);
    let d: Vector3<f64>;
    if flip {
        d = a.component_mul(&b);
    } else {
        d = a * 2.0;
    }
    e + doubled * s + a.dot(&b) + d.clone().norm() + v.x
}

/// A dot product of 20 numbers: added in nalgebra's order, eight running sums.
#[grad]
fn long_dot(w: &SVector<f64, 20>, u: &SVector<f64, 20>) -> f64 {
    w.dot(u) + w.norm()
}

/// A typed `let` gives `zeros()` its size.
#[grad]
fn accumulated<const N: usize>(a: &SVector<f64, N>) -> f64 {
    let mut acc: SVector<f64, N> = SVector::zeros();
    acc += a;
    acc += a * 0.5;
    acc.norm()
}

#[test]
fn forms_found_in_review() {
    let (v, w) = (Vector3::new(0.3, -1.2, 0.8), Vector3::new(1.1, 0.4, -0.5));
    let x = [0.5, -0.25, 2.0];
    for flip in [false, true] {
        let (value, d_v, d_w, d_x) = forms_grad(&v, &w, &x, flip);
        assert_eq!(value, forms(&v, &w, &x, flip));
        let f = |p: &[f64]| {
            forms(
                &Vector3::new(p[0], p[1], p[2]),
                &Vector3::new(p[3], p[4], p[5]),
                &p[6..],
                flip,
            )
        };
        let at: Vec<f64> = v.iter().chain(w.iter()).chain(&x).copied().collect();
        let gradient: Vec<f64> = d_v.iter().chain(d_w.iter()).chain(&d_x).copied().collect();
        for (i, d) in gradient.iter().enumerate() {
            assert_close(*d, central_difference(f, &at, i), 1e-7, &format!("∂/∂p{i}"));
        }
    }

    let w20 = SVector::<f64, 20>::from_fn(|i, _| (0.37 * i as f64).sin());
    let u20 = SVector::<f64, 20>::from_fn(|i, _| (0.91 * i as f64).cos());
    let (value, d_w, d_u) = long_dot_grad(&w20, &u20);
    assert_eq!(value.to_bits(), long_dot(&w20, &u20).to_bits());
    assert_eq!(d_u, w20);
    for i in 0..20 {
        assert_close(d_w[i], u20[i] + w20[i] / w20.norm(), 1e-15, "∂/∂w");
    }

    let a = SVector::<f64, 4>::new(0.5, -1.0, 2.0, 0.25);
    let (value, d_a) = accumulated_grad(&a);
    assert_close(value, 1.5 * a.norm(), 1e-15, "value");
    for i in 0..4 {
        assert_close(d_a[i], 1.5 * a[i] / a.norm(), 1e-15, "∂/∂a");
    }
}

// ----- `DVector`: vectors of run-time length ------------------------------------------------

/// A ridge-regression term over vectors of run-time length: `dot`, products by numbers,
/// `+=`, `norm_squared`, `component_mul`, `sum`, an element and the length.
#[grad(jvp)]
fn ridge(w: &DVector<f64>, x: &DVector<f64>, y: f64, lambda: f64) -> f64 {
    let r = w.dot(x) - y;
    let mut scaled = w * lambda;
    scaled += x * 0.5;
    r * r + scaled.norm_squared() + w.component_mul(x).sum() + w[0] * w.len() as f64
}

/// A `DVector` output, built from `zeros(n)` and normalized: its pullback takes a seed
/// of its type and writes into buffers of the parameters' types.
#[grad]
fn direction(w: &DVector<f64>, s: f64) -> DVector<f64> {
    let z: DVector<f64> = DVector::zeros(w.len());
    let out = w * s - z;
    out.normalize()
}

#[test]
fn vectors_of_run_time_length() {
    let w = DVector::from_vec(vec![0.5, -1.0, 2.0, 0.3, 1.1]);
    let x = DVector::from_vec(vec![1.0, 0.2, -0.4, 0.8, -0.6]);
    let (value, d_w, d_x, d_y, d_lambda) = ridge_grad(&w, &x, 0.7, 0.1);
    assert_close(value, ridge(&w, &x, 0.7, 0.1), 1e-15, "value");
    let n = w.len();
    let f = |p: &[f64]| {
        ridge(
            &DVector::from_column_slice(&p[..n]),
            &DVector::from_column_slice(&p[n..2 * n]),
            p[2 * n],
            p[2 * n + 1],
        )
    };
    let at: Vec<f64> = w
        .iter()
        .chain(x.iter())
        .copied()
        .chain([0.7, 0.1])
        .collect();
    let gradient: Vec<f64> = d_w
        .iter()
        .chain(d_x.iter())
        .copied()
        .chain([d_y, d_lambda])
        .collect();
    for (i, d) in gradient.iter().enumerate() {
        assert_close(*d, central_difference(f, &at, i), 1e-7, &format!("∂/∂p{i}"));
    }
    let (_, tangent) = ridge_jvp(&w, &x, 0.7, 0.1, &x, &w, 1.0, 0.0);
    assert_close(tangent, d_w.dot(&x) + d_x.dot(&w) + d_y, 1e-12, "jvp");

    let seed = DVector::from_vec(vec![1.0, 0.0, -0.5, 0.0, 2.0]);
    let (mut d_w, mut d_s) = (DVector::zeros(n), 0.0);
    let out = direction_vjp(&w, 2.0, &seed, &mut d_w, &mut d_s);
    assert_eq!(out, direction(&w, 2.0));
    let g = |p: &[f64]| direction(&DVector::from_column_slice(&p[..n]), p[n]).dot(&seed);
    let at: Vec<f64> = w.iter().copied().chain([2.0]).collect();
    for i in 0..n {
        assert_close(d_w[i], central_difference(g, &at, i), 1e-7, "∂/∂w");
    }
    assert_close(d_s, central_difference(g, &at, n), 1e-7, "∂/∂s");
}
