//! `#[grad]` on functions of `f32`.
//!
//! Every function below is written once, in a macro, and expanded twice: in a module
//! `single` for `f32` and in a module `double` for `f64` (the macro substitutes the type's
//! name, so `#[grad]` sees `f32` and `f64` written out). Each `f32` gradient is checked
//! three ways at the same point: its value equals the original `f32` function's bit for
//! bit (the same operations in `f32`), its partials agree with the `f64` gradient's to
//! `f32` precision, and with central finite differences of the `f64` function.

macro_rules! functions {
    ($module:ident, $real:ident) => {
        // `&Vec<f32>` is a parameter type this file tests.
        #[allow(clippy::needless_range_loop, clippy::ptr_arg)]
        pub mod $module {
            use autodiff::prelude::*;

            pub const HIDDEN: usize = 4;
            const ALPHA: $real = 1e-3;

            /// Scalars, a shared sub-expression (`t`) and a variable reused after
            /// being reassigned (`acc`).
            #[grad]
            pub fn scalars(x: $real, y: $real) -> $real {
                let z = x * y + 1.5;
                let t = z.tanh();
                let mut acc = t * t + x.exp() / (1.0 + y * y);
                acc = acc * acc + t;
                acc = acc.sin() * acc + (x - y).powi(3);
                let typed: $real = (acc * acc + 1.0).sqrt();
                typed + x.max(y) * 0.25 + $real::hypot(x, y)
            }

            /// Nested arrays and arrays by value; loops of constant trip counts; ReLU,
            /// sigmoid.
            #[grad]
            pub fn layer(w: &[[$real; 3]; 2], b: [$real; 2], x: [$real; 3]) -> $real {
                let mut out = 0.0;
                for j in 0..2 {
                    let mut act = b[j];
                    for i in 0..3 {
                        act += w[j][i] * x[i];
                    }
                    out += act.relu() + act.sigmoid();
                }
                out
            }

            /// Slices of run-time length (`&[f32]`, `&[[f32; 2]]`), a loop over them and
            /// `as f32`.
            #[grad(wrt(w))]
            pub fn mse(w: &[$real], xs: &[[$real; 2]], ys: &[$real]) -> $real {
                let mut loss = 0.0;
                for (x, &y) in xs.iter().zip(ys) {
                    let r = w[0] * x[0] + w[1] * x[1] + w[2] - y;
                    loss += r * r.tanh();
                }
                loss / xs.len() as $real
            }

            /// Iterator reductions over a `&Vec<f32>`: `map(..).sum::<f32>()` and `fold`.
            #[grad]
            pub fn norms(v: &Vec<$real>, p: $real) -> $real {
                let squares = v.iter().map(|x| x * x * p).sum::<$real>();
                let largest = v.iter().fold($real::NEG_INFINITY, |m, &x| m.max(x.abs()));
                squares.sqrt() + largest
            }

            /// `while` (a loop of unknown trip count: its values go to frames on the
            /// workspace) with a `break`.
            #[grad]
            pub fn newton(a: $real, steps: usize) -> $real {
                let mut x = a;
                let mut k = 0;
                while k < steps {
                    let next = 0.5 * (x + a / x);
                    if (next - x).abs() < 1e-30 {
                        break;
                    }
                    x = next;
                    k += 1;
                }
                x * x.ln_1p()
            }

            /// A run-time loop inside a run-time loop (saved values pushed one by one),
            /// and an early `return`.
            #[grad(wrt(w))]
            pub fn rows(w: &[$real], xs: &[[$real; 3]], limit: $real) -> $real {
                let mut total = 0.0;
                for x in xs {
                    for j in 0..w.len() {
                        total += (w[j] * x[j % 3]).sin();
                    }
                    if total > limit {
                        return total * 2.0;
                    }
                }
                total
            }

            /// Called by `calls` through its `_grad`.
            #[grad]
            pub fn softplus(x: $real) -> $real {
                x.max(0.0) + (-x.abs()).exp().ln_1p()
            }

            /// Called by `calls` through its pullback `dot_vjp` (arrays passed whole).
            #[grad]
            pub fn dot(w: &[$real; 3], x: &[$real; 3]) -> $real {
                w[0] * x[0] + w[1] * x[1] + w[2] * x[2]
            }

            /// Calls between `#[grad]` functions of the same float type.
            #[grad]
            pub fn calls(w: [$real; 3], x: [$real; 3], s: $real) -> $real {
                let d = dot(&w, &x);
                softplus(d * s) + softplus(s) * d
            }

            /// The moons network's training loss over slices (`examples/moons_model`),
            /// with 4 hidden units: frames on the workspace, hidden layers copied once
            /// per sample for the layer that reads them.
            #[grad(wrt(p))]
            pub fn mlp(p: &[$real], xs: &[[$real; 2]], ys: &[$real]) -> $real {
                let l2 = HIDDEN * 3;
                let l3 = l2 + HIDDEN * (HIDDEN + 1);
                let mut data_loss = 0.0;
                for (x, &y) in xs.iter().zip(ys) {
                    let mut h1 = [0.0; HIDDEN];
                    for j in 0..HIDDEN {
                        let unit = j * 3;
                        let mut act = p[unit + 2];
                        for i in 0..2 {
                            act += p[unit + i] * x[i];
                        }
                        h1[j] = act.relu();
                    }
                    let mut h2 = [0.0; HIDDEN];
                    for j in 0..HIDDEN {
                        let unit = l2 + j * (HIDDEN + 1);
                        let mut act = p[unit + HIDDEN];
                        for k in 0..HIDDEN {
                            act += p[unit + k] * h1[k];
                        }
                        h2[j] = act.tanh();
                    }
                    let mut score = p[l3 + HIDDEN];
                    for k in 0..HIDDEN {
                        score += p[l3 + k] * h2[k];
                    }
                    data_loss += (1.0 - y * score).relu();
                }
                let penalty = p.iter().map(|q| q * q).sum::<$real>();
                data_loss / (xs.len() as $real) + ALPHA * penalty
            }

            /// The number of parameters of `mlp`.
            pub const MLP_PARAMS: usize = HIDDEN * 3 + HIDDEN * (HIDDEN + 1) + HIDDEN + 1;
        }
    };
}

use autodiff::prelude::*;

functions!(single, f32);

/// A model kept as a struct of `f32`s, its loss a method with a constant `self`.
struct Scaler {
    gain: f32,
    offset: f32,
}

#[grad]
impl Scaler {
    #[grad(wrt(x))]
    fn loss(&self, x: &[f32]) -> f32 {
        x.iter()
            .map(|v| (self.gain * v + self.offset).tanh())
            .sum::<f32>()
    }
}

/// Two outputs: differentiated through the pullback only.
#[grad]
fn polar(x: f32, y: f32) -> (f32, f32) {
    (x.hypot(y), y.atan2(x))
}
functions!(double, f64);

/// Checks an `f32` gradient against the `f64` one (`tol` relative to the largest
/// partial) and against central differences `fd` of the `f64` function.
#[track_caller]
fn check(what: &str, g32: &[f32], g64: &[f64], fd: &[f64], tol: f64) {
    assert_eq!(g32.len(), g64.len());
    assert_eq!(g32.len(), fd.len());
    let scale = g64.iter().fold(1e-3f64, |m, g| m.max(g.abs()));
    for (i, ((&a, &b), &c)) in g32.iter().zip(g64).zip(fd).enumerate() {
        let a = f64::from(a);
        assert!(
            (a - b).abs() <= tol * scale.max(b.abs()),
            "{what}: partial {i} is {a:e} in f32 and {b:e} in f64"
        );
        assert!(
            (a - c).abs() <= 1e-4 * scale.max(c.abs()),
            "{what}: partial {i} is {a:e} in f32, central difference {c:e}"
        );
    }
}

/// Central differences of `f` at `x`, every coordinate.
fn central(f: impl Fn(&[f64]) -> f64, x: &[f64]) -> Vec<f64> {
    let mut point = x.to_vec();
    (0..x.len())
        .map(|i| {
            let h = 1e-6 * x[i].abs().max(1.0);
            point[i] = x[i] + h;
            let up = f(&point);
            point[i] = x[i] - h;
            let down = f(&point);
            point[i] = x[i];
            (up - down) / (2.0 * h)
        })
        .collect()
}

fn widen(x: &[f32]) -> Vec<f64> {
    x.iter().map(|&v| f64::from(v)).collect()
}

fn widen2<const N: usize>(x: &[[f32; N]]) -> Vec<[f64; N]> {
    x.iter().map(|row| row.map(f64::from)).collect()
}

#[test]
fn scalars() {
    for (x, y) in [(0.3f32, -0.7f32), (1.1, 0.4), (-0.2, 0.9)] {
        let (value, dx, dy): (f32, f32, f32) = single::scalars_grad(x, y);
        assert_eq!(value.to_bits(), single::scalars(x, y).to_bits());
        let (_, ex, ey) = double::scalars_grad(f64::from(x), f64::from(y));
        let fd = central(|p| double::scalars(p[0], p[1]), &[x.into(), y.into()]);
        check("scalars", &[dx, dy], &[ex, ey], &fd, 1e-5);
    }
}

#[test]
fn nested_arrays() {
    let w = [[0.5f32, -0.3, 0.8], [0.1, 0.7, -0.4]];
    let (b, x) = ([0.05f32, -0.2], [1.0f32, -0.5, 0.25]);
    let (value, dw, db, dx): (f32, [[f32; 3]; 2], [f32; 2], [f32; 3]) =
        single::layer_grad(&w, b, x);
    assert_eq!(value.to_bits(), single::layer(&w, b, x).to_bits());
    let (w64, b64, x64) = (
        w.map(|r| r.map(f64::from)),
        b.map(f64::from),
        x.map(f64::from),
    );
    let (_, ew, eb, ex) = double::layer_grad(&w64, b64, x64);
    let flat = |w: &[[f64; 3]; 2], b: &[f64; 2], x: &[f64; 3]| -> Vec<f64> {
        w.iter().flatten().chain(b).chain(x).copied().collect()
    };
    let point = flat(&w64, &b64, &x64);
    let fd = central(
        |p| {
            let w = [[p[0], p[1], p[2]], [p[3], p[4], p[5]]];
            double::layer(&w, [p[6], p[7]], [p[8], p[9], p[10]])
        },
        &point,
    );
    let g32: Vec<f32> = dw.iter().flatten().chain(&db).chain(&dx).copied().collect();
    check("layer", &g32, &flat(&ew, &eb, &ex), &fd, 1e-5);
}

/// A small data set of `n` points.
fn data(n: usize) -> (Vec<[f32; 2]>, Vec<f32>) {
    let xs: Vec<[f32; 2]> = (0..n)
        .map(|i| {
            let t = i as f32 * 0.37;
            [t.sin(), (t * 1.3).cos() * 0.8]
        })
        .collect();
    let ys = (0..n)
        .map(|i| if i % 3 == 0 { -1.0 } else { 1.0 })
        .collect();
    (xs, ys)
}

#[test]
fn slices_with_run_time_loops() {
    let (xs, ys) = data(37);
    let w = vec![0.4f32, -0.6, 0.1];
    let (value, dw): (f32, Vec<f32>) = single::mse_grad(&w, &xs, &ys);
    assert_eq!(value.to_bits(), single::mse(&w, &xs, &ys).to_bits());
    let (xs64, ys64) = (widen2(&xs), widen(&ys));
    let (_, ew) = double::mse_grad(&widen(&w), &xs64, &ys64);
    let fd = central(|p| double::mse(p, &xs64, &ys64), &widen(&w));
    check("mse", &dw, &ew, &fd, 1e-5);

    // `_grad_into` adds into `&mut [f32]` buffers.
    let mut buffer = vec![1.0f32; 3];
    let again = single::mse_grad_into(&w, &xs, &ys, &mut buffer);
    assert_eq!(again.to_bits(), value.to_bits());
    for (b, d) in buffer.iter().zip(&dw) {
        assert!((b - (1.0 + d)).abs() <= 1e-6 * (1.0 + d.abs()));
    }
}

#[test]
fn iterator_reductions() {
    let v = vec![0.3f32, -1.2, 0.8, 0.05];
    let p = 1.5f32;
    let (value, dv, dp): (f32, Vec<f32>, f32) = single::norms_grad(&v, p);
    assert_eq!(value.to_bits(), single::norms(&v, p).to_bits());
    let (_, ev, ep) = double::norms_grad(&widen(&v), f64::from(p));
    let mut point = widen(&v);
    point.push(p.into());
    let fd = central(|q| double::norms(&q[..4].to_vec(), q[4]), &point);
    let mut g32 = dv.clone();
    g32.push(dp);
    let mut g64 = ev.clone();
    g64.push(ep);
    check("norms", &g32, &g64, &fd, 1e-5);
}

#[test]
fn while_loop() {
    for a in [0.5f32, 2.0, 7.5] {
        let (value, da): (f32, f32) = single::newton_grad(a, 6);
        assert_eq!(value.to_bits(), single::newton(a, 6).to_bits());
        let (_, ea) = double::newton_grad(f64::from(a), 6);
        let fd = central(|p| double::newton(p[0], 6), &[a.into()]);
        check("newton", &[da], &[ea], &fd, 1e-5);
    }
}

#[test]
fn nested_run_time_loops_and_early_return() {
    let xs = vec![[0.3f32, -0.5, 0.9], [1.1, 0.2, -0.4], [0.7, 0.7, 0.1]];
    let w = vec![0.5f32, -0.25, 0.8, 0.6];
    let xs64 = widen2(&xs);
    for limit in [0.5f32, 100.0] {
        let (value, dw): (f32, Vec<f32>) = single::rows_grad(&w, &xs, limit);
        assert_eq!(value.to_bits(), single::rows(&w, &xs, limit).to_bits());
        let (_, ew) = double::rows_grad(&widen(&w), &xs64, limit.into());
        let fd = central(|p| double::rows(p, &xs64, limit.into()), &widen(&w));
        check("rows", &dw, &ew, &fd, 1e-5);
    }
}

#[test]
fn calls_between_f32_functions() {
    let (w, x, s) = ([0.2f32, -0.4, 0.9], [1.0f32, 0.5, -0.3], 0.8f32);
    let (value, dw, dx, ds): (f32, [f32; 3], [f32; 3], f32) = single::calls_grad(w, x, s);
    assert_eq!(value.to_bits(), single::calls(w, x, s).to_bits());
    let (_, ew, ex, es) = double::calls_grad(w.map(f64::from), x.map(f64::from), s.into());
    let point: Vec<f64> = w
        .iter()
        .chain(&x)
        .map(|&v| f64::from(v))
        .chain([s.into()])
        .collect();
    let fd = central(
        |p| double::calls([p[0], p[1], p[2]], [p[3], p[4], p[5]], p[6]),
        &point,
    );
    let g32: Vec<f32> = dw.iter().chain(&dx).copied().chain([ds]).collect();
    let g64: Vec<f64> = ew.iter().chain(&ex).copied().chain([es]).collect();
    check("calls", &g32, &g64, &fd, 1e-5);

    // The pullback of an `f32` function takes an `f32` seed and `&mut f32` buffers.
    let (mut bw, mut bx) = ([0.0f32; 3], [0.0f32; 3]);
    let d = single::dot_vjp(&w, &x, 2.0, &mut bw, &mut bx);
    assert_eq!(d, single::dot(&w, &x));
    assert_eq!((bw, bx), (x.map(|v| 2.0 * v), w.map(|v| 2.0 * v)));
}

#[test]
fn mlp_loss_over_slices() {
    let (xs, ys) = data(50);
    let p: Vec<f32> = (0..single::MLP_PARAMS)
        .map(|i| ((i as f32 * 0.618).fract() - 0.5) * 1.2)
        .collect();
    let (value, dp): (f32, Vec<f32>) = single::mlp_grad(&p, &xs, &ys);
    assert_eq!(value.to_bits(), single::mlp(&p, &xs, &ys).to_bits());
    let (xs64, ys64) = (widen2(&xs), widen(&ys));
    let (_, ep) = double::mlp_grad(&widen(&p), &xs64, &ys64);
    let fd = central(|q| double::mlp(q, &xs64, &ys64), &widen(&p));
    check("mlp", &dp, &ep, &fd, 1e-5);
}

#[test]
fn method_with_a_constant_self_and_two_outputs() {
    let model = Scaler {
        gain: 0.7,
        offset: -0.2,
    };
    let x = [0.5f32, -1.0, 2.0];
    let (value, dx): (f32, Vec<f32>) = model.loss_grad(&x);
    assert_eq!(value.to_bits(), model.loss(&x).to_bits());
    for (v, d) in x.iter().zip(&dx) {
        // d/dv tanh(g·v + o) = g·(1 - tanh²), in f64 at the same numbers.
        let (gain, offset) = (f64::from(model.gain), f64::from(model.offset));
        let t = (gain * f64::from(*v) + offset).tanh();
        let exact = gain * (1.0 - t * t);
        assert!((f64::from(*d) - exact).abs() < 1e-6, "{d} vs {exact}");
    }

    let (mut dx, mut dy) = (0.0f32, 0.0f32);
    let (r, theta) = polar_vjp(3.0, 4.0, (1.0, 0.5), &mut dx, &mut dy);
    assert_eq!((r, theta), polar(3.0, 4.0));
    // ∂r/∂(x, y) = (x, y)/r; ∂θ/∂(x, y) = (-y, x)/r².
    assert!((dx - (0.6 + 0.5 * -4.0 / 25.0)).abs() < 1e-6, "{dx}");
    assert!((dy - (0.8 + 0.5 * 3.0 / 25.0)).abs() < 1e-6, "{dy}");
}
