//! nalgebra's types in `#[grad]` functions, side by side in one process: the gradient of
//! a bundle-adjustment style reprojection error (a rotation about an axis, a pinhole
//! projection, 3 pose parameters and a 3-D point differentiated) written with nalgebra's
//! `Vector3`, `Matrix3` and `Point3`, against the same function written with arrays
//! (what the macro rewrites it into), against a gradient written out by hand with
//! nalgebra, and against the function itself. Interleaved rounds, medians.
//!
//! ```sh
//! cargo run --release -p autodiff-bench --example nalgebra
//! ```

use std::hint::black_box;
use std::time::Duration;

use autodiff::prelude::*;
use nalgebra::{Matrix3, Point3, Vector2, Vector3};

const ROUNDS: usize = 25;
const BATCH: Duration = Duration::from_millis(4);

/// The squared reprojection error of point `x` seen by a camera turned by `angle` about
/// its vertical axis and moved by `t`, with focal length `f`.
#[grad(wrt(angle, t, x))]
fn reprojection(
    angle: f64,
    t: &Vector3<f64>,
    x: &Point3<f64>,
    f: f64,
    observed: &Vector2<f64>,
) -> f64 {
    let (s, c) = (angle.sin(), angle.cos());
    let r = Matrix3::new(c, 0.0, s, 0.0, 1.0, 0.0, -s, 0.0, c);
    let xc = r * x.coords + t;
    let projected = Vector2::new(f * xc.x / xc.z, f * xc.y / xc.z);
    (projected - observed).norm_squared()
}

/// The same function written with arrays.
#[grad(wrt(angle, t, x))]
fn reprojection_arrays(angle: f64, t: &[f64; 3], x: &[f64; 3], f: f64, observed: &[f64; 2]) -> f64 {
    let (s, c) = (angle.sin(), angle.cos());
    let xc = [
        c * x[0] + s * x[2] + t[0],
        x[1] + t[1],
        -s * x[0] + c * x[2] + t[2],
    ];
    let u = f * xc[0] / xc[2] - observed[0];
    let v = f * xc[1] / xc[2] - observed[1];
    u * u + v * v
}

/// The gradient written out by hand with nalgebra.
fn reprojection_by_hand(
    angle: f64,
    t: &Vector3<f64>,
    x: &Point3<f64>,
    f: f64,
    observed: &Vector2<f64>,
) -> (f64, f64, Vector3<f64>, Point3<f64>) {
    let (s, c) = (angle.sin(), angle.cos());
    let r = Matrix3::new(c, 0.0, s, 0.0, 1.0, 0.0, -s, 0.0, c);
    let xc = r * x.coords + t;
    let inv_z = 1.0 / xc.z;
    let residual = Vector2::new(f * xc.x * inv_z, f * xc.y * inv_z) - observed;
    let value = residual.norm_squared();
    // ∂value/∂xc through the projection.
    let d_xc = Vector3::new(
        2.0 * residual.x * f * inv_z,
        2.0 * residual.y * f * inv_z,
        -2.0 * (residual.x * f * xc.x + residual.y * f * xc.y) * inv_z * inv_z,
    );
    let d_r = Matrix3::new(-s, 0.0, c, 0.0, 0.0, 0.0, -c, 0.0, -s);
    let d_angle = d_xc.dot(&(d_r * x.coords));
    let d_x = r.transpose() * d_xc;
    (value, d_angle, d_xc, Point3::from(d_x))
}

fn main() {
    let (angle, f) = (0.3, 1.8);
    let t = Vector3::new(0.1, -0.2, 4.0);
    let x = Point3::new(0.5, -0.25, 1.5);
    let observed = Vector2::new(0.3, -0.1);
    let (ta, xa, oa): ([f64; 3], [f64; 3], [f64; 2]) = (t.into(), x.into(), observed.into());

    // The three gradients agree.
    let (v1, a1, t1, x1) = reprojection_grad(angle, &t, &x, f, &observed);
    let (v2, a2, t2, x2) = reprojection_arrays_grad(angle, &ta, &xa, f, &oa);
    let (v3, a3, t3, x3) = reprojection_by_hand(angle, &t, &x, f, &observed);
    assert_eq!(v1, reprojection(angle, &t, &x, f, &observed));
    let generated: Vec<f64> = [v1, a1]
        .into_iter()
        .chain(t1.iter().copied())
        .chain(x1.iter().copied())
        .collect();
    let arrays: Vec<f64> = [v2, a2].into_iter().chain(t2).chain(x2).collect();
    let by_hand: Vec<f64> = [v3, a3]
        .into_iter()
        .chain(t3.iter().copied())
        .chain(x3.iter().copied())
        .collect();
    for k in 0..generated.len() {
        let scale = by_hand[k].abs().max(1.0);
        assert!(
            (generated[k] - by_hand[k]).abs() <= 1e-12 * scale,
            "entry {k}"
        );
        assert!((arrays[k] - by_hand[k]).abs() <= 1e-12 * scale, "entry {k}");
    }

    let times = autodiff_bench::race(
        &[
            &|| {
                black_box(reprojection(
                    black_box(angle),
                    black_box(&t),
                    black_box(&x),
                    f,
                    &observed,
                ));
            },
            &|| {
                black_box(reprojection_grad(
                    black_box(angle),
                    black_box(&t),
                    black_box(&x),
                    f,
                    &observed,
                ));
            },
            &|| {
                black_box(reprojection_arrays_grad(
                    black_box(angle),
                    black_box(&ta),
                    black_box(&xa),
                    f,
                    &oa,
                ));
            },
            &|| {
                black_box(reprojection_by_hand(
                    black_box(angle),
                    black_box(&t),
                    black_box(&x),
                    f,
                    &observed,
                ));
            },
        ],
        ROUNDS,
        BATCH,
    );
    let grad = times[1];
    println!(
        "reprojection error, 7 differentiated numbers (ns per call; ratio to `_grad` of nalgebra)"
    );
    for (name, time) in [
        ("the function itself (nalgebra)", times[0]),
        ("#[grad], nalgebra", times[1]),
        ("#[grad], the same with arrays", times[2]),
        ("by hand, nalgebra", times[3]),
    ] {
        println!("  {name:<32} {time:>8.1} ns  {:>5.2}x", time / grad);
    }
}
