//! Collections of structs: `&[Particle]`, `&Vec<Particle>`, `[Layer; K]` parameters and
//! `Vec<Layer>` fields, read by index (`ps[i].pos[k]`), through loops over them
//! (`for layer in &m.layers`, `.iter().enumerate()`) and through `let p = &ps[i];`.
//! Their partials have the collection's shape. Checked against central differences, the
//! `Tape` engine and the other derivative modes.
#![allow(clippy::needless_range_loop)] // the loops are written the way users write them
#![allow(clippy::ptr_arg)] // `&Vec<Particle>` is a form under test

use autodiff::prelude::*;
use autodiff::{Tape, Var};

mod common;
use common::{assert_all_close, assert_close, fd_flat_gradient};

/// A particle with a constant label.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Particle {
    pub pos: [f64; 2],
    pub mass: f64,
    pub id: usize,
}

fn particles() -> Vec<Particle> {
    vec![
        Particle {
            pos: [0.0, 0.1],
            mass: 1.0,
            id: 1,
        },
        Particle {
            pos: [1.0, 0.5],
            mass: 2.0,
            id: 2,
        },
        Particle {
            pos: [-0.5, 1.5],
            mass: 0.5,
            id: 3,
        },
        Particle {
            pos: [0.7, -0.9],
            mass: 1.5,
            id: 4,
        },
    ]
}

/// Pairwise potential energy: every element read many times, shared sub-expressions.
#[grad(jvp, hvp, hessian)]
fn energy(ps: &[Particle], k: f64) -> f64 {
    let mut e = 0.0;
    for i in 0..ps.len() {
        for j in (i + 1)..ps.len() {
            let dx = ps[i].pos[0] - ps[j].pos[0];
            let dy = ps[i].pos[1] - ps[j].pos[1];
            let r = (dx * dx + dy * dy).sqrt();
            e += k * ps[i].mass * ps[j].mass / r + 0.01 * r * r;
        }
    }
    e
}

/// The same energy on the tape.
fn energy_tape(ps: &[Particle], k: f64) -> (f64, Vec<f64>) {
    let tape = Tape::new();
    let vars: Vec<[Var; 3]> = ps
        .iter()
        .map(|p| [tape.var(p.pos[0]), tape.var(p.pos[1]), tape.var(p.mass)])
        .collect();
    let kv = tape.var(k);
    let mut e = tape.var(0.0);
    for i in 0..ps.len() {
        for j in (i + 1)..ps.len() {
            let dx = vars[i][0] - vars[j][0];
            let dy = vars[i][1] - vars[j][1];
            let r = (dx * dx + dy * dy).sqrt();
            e += kv * vars[i][2] * vars[j][2] / r + 0.01 * r * r;
        }
    }
    let gradient = e.gradient();
    let mut flat: Vec<f64> = vars.iter().flatten().map(|&v| gradient.wrt(v)).collect();
    flat.push(gradient.wrt(kv));
    (e.value(), flat)
}

#[test]
fn slice_of_structs_matches_differences_and_the_tape() {
    let ps = particles();
    let k = 1.5;
    let (value, d_ps, d_k) = energy_grad(&ps, k);
    assert_eq!(value.to_bits(), energy(&ps, k).to_bits());
    assert_eq!(d_ps.len(), ps.len());
    // The label is a constant: its partial stays as it is.
    assert!(d_ps.iter().zip(&ps).all(|(d, p)| d.id == p.id));
    assert_all_close(
        &d_ps.to_flat_vec(),
        &fd_flat_gradient(&ps, |ps| energy(ps, k)),
        1e-7,
        "∂e/∂ps",
    );
    let h = 1e-6;
    let numeric = (energy(&ps, k + h) - energy(&ps, k - h)) / (2.0 * h);
    assert_close(d_k, numeric, 1e-7, "∂e/∂k");

    let (tape_value, tape_gradient) = energy_tape(&ps, k);
    assert_close(value, tape_value, 1e-14, "value");
    let mut flat = d_ps.to_flat_vec();
    flat.push(d_k);
    assert_all_close(&flat, &tape_gradient, 1e-12, "against the tape");
}

#[test]
fn second_order_through_a_slice_of_structs() {
    let ps = particles();
    let k = 0.8;
    let flat = ps.to_flat_vec();
    let direction: Vec<f64> = (0..flat.len()).map(|i| 0.3 - 0.1 * i as f64).collect();
    let mut t_ps = ps.zero_like();
    t_ps.copy_from_flat(&direction);
    let (_, d_ps, _) = energy_grad(&ps, k);

    // Forward mode: the directional derivative is the gradient along the direction.
    let (value, tangent) = energy_jvp(&ps, k, &t_ps, 0.5);
    assert_eq!(value.to_bits(), energy(&ps, k).to_bits());
    let expected: f64 = d_ps
        .to_flat_vec()
        .iter()
        .zip(&direction)
        .map(|(g, v)| g * v)
        .sum::<f64>()
        + 0.5 * energy_grad(&ps, k).2;
    assert_close(tangent, expected, 1e-12, "jvp");

    // Hessian-vector product: differences of the gradient along the direction.
    let (_, _, _, hv_ps, _) = energy_hvp(&ps, k, &t_ps, 0.0);
    let gradient_at = |step: f64| {
        let mut at = ps.clone();
        let moved: Vec<f64> = flat
            .iter()
            .zip(&direction)
            .map(|(x, v)| x + step * v)
            .collect();
        at.copy_from_flat(&moved);
        energy_grad(&at, k).1.to_flat_vec()
    };
    let h = 1e-5;
    let numeric = common::slope(gradient_at, h);
    assert_all_close(&hv_ps.to_flat_vec(), &numeric, 1e-6, "hvp");

    // The Hessian: against differences of the gradient, symmetric.
    let (_, _, _, hessian) = energy_hessian(&ps, k);
    let n = flat.len() + 1;
    assert_eq!((hessian.rows(), hessian.cols()), (n, n));
    let gradient = |x: &[f64]| {
        let mut at = ps.clone();
        at.copy_from_flat(&x[..x.len() - 1]);
        let (_, d_ps, d_k) = energy_grad(&at, x[x.len() - 1]);
        let mut g = d_ps.to_flat_vec();
        g.push(d_k);
        g
    };
    let mut point = flat.clone();
    point.push(k);
    let rows: Vec<Vec<f64>> = (0..n).map(|i| hessian.row(i).to_vec()).collect();
    assert_hessian!(gradient, &rows, &point[..]);
}

/// A layer of a perceptron of run-time depth.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Layer {
    pub w: [[f64; 2]; 2],
    pub b: [f64; 2],
}

/// A perceptron whose number of layers is known at run time.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Mlp {
    pub layers: Vec<Layer>,
    pub scale: f64,
}

#[grad(jvp, hvp)]
fn mlp(m: &Mlp, x: [f64; 2]) -> f64 {
    let mut h = x;
    for layer in &m.layers {
        let mut next = [0.0; 2];
        for i in 0..2 {
            let mut s = layer.b[i];
            for j in 0..2 {
                s += layer.w[i][j] * h[j];
            }
            next[i] = s.tanh();
        }
        h = next;
    }
    m.scale * (h[0] + h[1]) / m.layers.len() as f64
}

fn mlp_of_depth(depth: usize) -> Mlp {
    let layers = (0..depth)
        .map(|l| {
            let t = l as f64;
            Layer {
                w: [[0.3 + 0.1 * t, -0.7], [1.1 - 0.2 * t, 0.4]],
                b: [0.1 * t, -0.2],
            }
        })
        .collect();
    Mlp { layers, scale: 1.5 }
}

#[test]
fn vec_of_layers_of_any_depth() {
    let x = [0.4, -1.3];
    for depth in [1, 2, 3, 5] {
        let m = mlp_of_depth(depth);
        let (value, d_m, d_x) = mlp_grad(&m, x);
        assert_eq!(value.to_bits(), mlp(&m, x).to_bits());
        assert_eq!(d_m.layers.len(), depth);
        assert_all_close(
            &d_m.to_flat_vec(),
            &fd_flat_gradient(&m, |m| mlp(m, x)),
            1e-7,
            "∂/∂m",
        );
        assert_gradient!(
            |x: &[f64; 2]| mlp(&m, *x),
            |x: &[f64; 2]| {
                let (value, _, d_x) = mlp_grad(&m, *x);
                (value, d_x)
            },
            &x
        );
        let _ = d_x;
    }
}

#[test]
fn vec_of_layers_in_forward_mode_and_second_order() {
    let x = [0.4, -1.3];
    let m = mlp_of_depth(3);
    let mut t_m = m.zero_like();
    let direction: Vec<f64> = (0..m.param_count()).map(|i| (i as f64).sin()).collect();
    t_m.copy_from_flat(&direction);
    let (_, d_m, _) = mlp_grad(&m, x);
    let (_, tangent) = mlp_jvp(&m, x, &t_m, [0.0, 0.0]);
    let expected: f64 = d_m
        .to_flat_vec()
        .iter()
        .zip(&direction)
        .map(|(g, v)| g * v)
        .sum();
    assert_close(tangent, expected, 1e-12, "jvp");

    let (_, _, _, hv_m, _) = mlp_hvp(&m, x, &t_m, [0.0, 0.0]);
    let h = 1e-5;
    let at = |step: f64| {
        let mut moved = m.clone();
        moved.add_scaled(step, &t_m);
        mlp_grad(&moved, x).1.to_flat_vec()
    };
    let numeric = common::slope(at, h);
    assert_all_close(&hv_m.to_flat_vec(), &numeric, 1e-6, "hvp");
}

/// An element with a nested struct.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Spring {
    pub k: f64,
    pub rest: Rest,
}

/// A nested struct inside each element.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Rest {
    pub length: f64,
}

/// Arrays of structs by reference and by value, `.iter().enumerate()`, `let p = &ps[i];`,
/// a `&Vec` of them and an integer field.
#[grad]
fn springs(ps: &Vec<Particle>, ss: &[Spring; 3], extra: [Spring; 2]) -> f64 {
    let mut e = 0.0;
    for (i, s) in ss.iter().enumerate() {
        let a = &ps[i];
        let b = &ps[i + 1];
        let d = ((a.pos[0] - b.pos[0]).powi(2) + (a.pos[1] - b.pos[1]).powi(2)).sqrt();
        e += 0.5 * s.k * (d - s.rest.length).powi(2) * a.mass;
    }
    for p in ps.iter() {
        e += p.mass * p.pos[1] * p.id as f64;
    }
    for s in &extra {
        e += s.k * s.rest.length;
    }
    e + extra[0].k * extra[1].rest.length * ss.len() as f64
}

#[test]
fn arrays_and_vecs_of_structs() {
    let ps = particles();
    let spring = |k: f64, length: f64| Spring {
        k,
        rest: Rest { length },
    };
    let ss = [spring(2.0, 0.5), spring(3.0, 0.2), spring(1.0, 1.1)];
    let extra = [spring(0.3, 0.4), spring(-0.2, 0.9)];
    let (value, d_ps, d_ss, d_extra) = springs_grad(&ps, &ss, extra.clone());
    assert_eq!(value.to_bits(), springs(&ps, &ss, extra.clone()).to_bits());
    assert_all_close(
        &d_ps.to_flat_vec(),
        &fd_flat_gradient(&ps, |ps| springs(ps, &ss, extra.clone())),
        1e-7,
        "∂/∂ps",
    );
    assert_all_close(
        &d_ss.to_flat_vec(),
        &fd_flat_gradient(&ss, |ss| springs(&ps, ss, extra.clone())),
        1e-7,
        "∂/∂ss",
    );
    assert_all_close(
        &d_extra.to_flat_vec(),
        &fd_flat_gradient(&extra, |extra| springs(&ps, &ss, extra.clone())),
        1e-7,
        "∂/∂extra",
    );
    // Closed form for one entry: ∂/∂extra[0].k = extra[0].length + extra[1].length · 3.
    assert_close(d_extra[0].k, 0.4 + 0.9 * 3.0, 1e-14, "∂/∂extra[0].k");
}

/// A model keeping its layers in a `Vec`, differentiated through `self`.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Chain {
    pub links: Vec<Link>,
}

/// One link of `Chain`.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Link {
    pub a: f64,
    pub c: f64,
}

#[grad]
impl Chain {
    #[grad]
    fn run(&self, x: f64) -> f64 {
        let mut h = x;
        for link in self.links.iter() {
            h = (link.a * h + link.c).sin() + h;
        }
        h * h
    }
}

#[test]
fn vec_field_of_self() {
    let chain = Chain {
        links: vec![
            Link { a: 0.5, c: 0.1 },
            Link { a: -0.3, c: 0.2 },
            Link { a: 1.2, c: -0.4 },
        ],
    };
    let (value, d_chain, d_x) = chain.run_grad(0.4);
    assert_eq!(value.to_bits(), chain.run(0.4).to_bits());
    assert_all_close(
        &d_chain.to_flat_vec(),
        &fd_flat_gradient(&chain, |c| c.run(0.4)),
        1e-7,
        "∂/∂self",
    );
    let h = 1e-6;
    assert_close(
        d_x,
        (chain.run(0.4 + h) - chain.run(0.4 - h)) / (2.0 * h),
        1e-7,
        "∂/∂x",
    );
}

/// A vector output over a collection: its Jacobian has one block of the collection's
/// numbers per output.
#[grad(jacobian)]
fn centre(ps: &[Particle]) -> [f64; 2] {
    let mut total = 0.0;
    let mut c = [0.0; 2];
    for p in ps {
        total += p.mass;
        c[0] += p.mass * p.pos[0];
        c[1] += p.mass * p.pos[1];
    }
    [c[0] / total, c[1] / total]
}

#[test]
fn jacobian_of_a_vector_output_over_a_collection() {
    let ps = particles();
    let (value, jacobian) = centre_jacobian(&ps);
    assert_eq!(value, centre(&ps));
    let n = ps.to_flat_vec().len();
    assert_eq!((jacobian.rows(), jacobian.cols()), (2, n));
    let rows: Vec<Vec<f64>> = (0..2).map(|i| jacobian.row(i).to_vec()).collect();
    let f = |x: &[f64]| {
        let mut at = ps.clone();
        at.copy_from_flat(x);
        centre(&at).to_vec()
    };
    assert_jacobian!(f, &rows, &ps.to_flat_vec()[..]);
}

/// A layer whose methods and helpers take it whole.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Unit {
    pub w: [[f64; 2]; 2],
    pub b: [f64; 2],
}

#[grad]
impl Unit {
    #[grad(jvp)]
    fn unit(&self, h0: f64, h1: f64, i: usize) -> f64 {
        (self.w[i][0] * h0 + self.w[i][1] * h1 + self.b[i]).tanh()
    }
}

#[grad(jvp, hvp)]
fn offset(unit: &Unit, k: f64) -> f64 {
    k * (unit.b[0] - unit.b[1]) * unit.w[0][1]
}

/// Units in a `Vec`, each passed whole to its method and to a helper.
#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Stack {
    pub units: Vec<Unit>,
}

#[grad(jvp)]
fn stacked(s: &Stack, x: [f64; 2]) -> f64 {
    let mut h = x;
    for unit in &s.units {
        let same = unit;
        let a = unit.unit(h[0], h[1], 0);
        let b = same.unit(h[0], h[1], 1);
        h = [a + offset(unit, 0.1), b * h[0]];
    }
    h[0] * h[1]
}

/// The same helper called on elements of a slice, for second order through the call.
#[grad(hvp)]
fn offsets(units: &[Unit], k: f64) -> f64 {
    let mut total = 0.0;
    for l in 0..units.len() {
        let unit = &units[l];
        total += offset(unit, k) * offset(&units[l], k) + offset(unit, k * k);
    }
    total
}

fn units(n: usize) -> Vec<Unit> {
    (0..n)
        .map(|l| {
            let t = l as f64 * 0.3;
            Unit {
                w: [[0.4 - t, 0.2 + t], [0.7, -0.3 * t]],
                b: [0.1 + t, -0.2],
            }
        })
        .collect()
}

#[test]
fn elements_passed_whole_to_methods_and_calls() {
    let s = Stack { units: units(3) };
    let x = [0.3, -0.7];
    let (value, d_s, _) = stacked_grad(&s, x);
    assert_eq!(value.to_bits(), stacked(&s, x).to_bits());
    assert_all_close(
        &d_s.to_flat_vec(),
        &fd_flat_gradient(&s, |s| stacked(s, x)),
        1e-7,
        "∂/∂s",
    );
    let (_, tangent) = stacked_jvp(&s, x, &d_s, [0.0, 0.0]);
    let squared: f64 = d_s.to_flat_vec().iter().map(|g| g * g).sum();
    assert_close(tangent, squared, 1e-12, "jvp along the gradient");
}

#[test]
fn second_order_through_calls_on_elements() {
    let us = units(3);
    let k = 0.7;
    let (value, d_us, d_k) = offsets_grad(&us, k);
    assert_eq!(value.to_bits(), offsets(&us, k).to_bits());
    assert_all_close(
        &d_us.to_flat_vec(),
        &fd_flat_gradient(&us, |us| offsets(us, k)),
        1e-7,
        "∂/∂units",
    );
    let h = 1e-6;
    assert_close(
        d_k,
        (offsets(&us, k + h) - offsets(&us, k - h)) / (2.0 * h),
        1e-7,
        "∂/∂k",
    );
    // Along the gradient: differences of the gradient.
    let (_, _, _, hv_us, hv_k) = offsets_hvp(&us, k, &d_us, d_k);
    let at = |step: f64| {
        let mut moved = us.clone();
        moved.add_scaled(step, &d_us);
        let (_, g, gk) = offsets_grad(&moved, k + step * d_k);
        let mut flat = g.to_flat_vec();
        flat.push(gk);
        flat
    };
    let h = 1e-5;
    let numeric = common::slope(at, h);
    let mut product = hv_us.to_flat_vec();
    product.push(hv_k);
    assert_all_close(&product, &numeric, 1e-6, "hvp");
}

/// Rows iterated and measured: `for x in w[1].iter()`, `xs[k].iter().enumerate()`,
/// `&w[0]`, a sub-slice of a row `ps[i].pos[0..1]`, and `w[i].len()`.
#[grad(jvp)]
fn rows(w: &[[f64; 3]; 2], xs: &[[f64; 2]], ps: &[Particle], k: usize) -> f64 {
    let mut s = 0.0;
    for x in w[1].iter() {
        s += x * x;
    }
    for (j, x) in xs[k].iter().enumerate() {
        s += x.sin() * j as f64;
    }
    for &x in &w[0] {
        s *= x;
    }
    for i in 0..ps.len() {
        for q in ps[i].pos[0..1].iter() {
            s += q * ps[i].mass;
        }
        s += ps[i].pos.len() as f64 * ps[i].pos[1];
    }
    s + w[0].iter().map(|v| v * 2.0).sum::<f64>() + w[1].len() as f64
}

#[test]
fn rows_iterated_whole() {
    let w = [[1.0, 2.0, 3.0], [0.5, -0.5, 0.25]];
    let xs = vec![[0.1, 0.2], [0.3, 0.4]];
    let ps = particles();
    let (value, dw, dxs, dps) = rows_grad(&w, &xs, &ps, 1);
    assert_eq!(value.to_bits(), rows(&w, &xs, &ps, 1).to_bits());
    let flat_w: Vec<f64> = w.iter().flatten().copied().collect();
    let numeric = common::fd_gradient(
        |x| {
            let at = [[x[0], x[1], x[2]], [x[3], x[4], x[5]]];
            rows(&at, &xs, &ps, 1)
        },
        &flat_w,
    );
    let got: Vec<f64> = dw.iter().flatten().copied().collect();
    assert_all_close(&got, &numeric, 1e-7, "∂/∂w");
    let numeric = common::fd_rows_gradient(|xs| rows(&w, xs, &ps, 1), &xs);
    let got: Vec<f64> = dxs.iter().flatten().copied().collect();
    assert_all_close(&got, &numeric, 1e-7, "∂/∂xs");
    assert_all_close(
        &dps.to_flat_vec(),
        &fd_flat_gradient(&ps, |ps| rows(&w, &xs, ps, 1)),
        1e-7,
        "∂/∂ps",
    );
}

/// A `Copy` struct taken by value.
#[derive(Differentiable, Clone, Copy, Debug, PartialEq)]
pub struct Charge {
    pub q: f64,
    pub at: [f64; 2],
}

#[grad(jvp)]
fn potential(c: Charge, x: f64) -> f64 {
    c.q / ((x - c.at[0]) * (x - c.at[0]) + c.at[1] * c.at[1]).sqrt()
}

/// Elements of a slice of structs passed by value, as plain Rust passes a `Copy` element.
#[grad(jvp)]
fn field_at(cs: &[Charge], x: f64) -> f64 {
    let mut v = 0.0;
    for i in 0..cs.len() {
        v += potential(cs[i], x);
    }
    v
}

#[test]
fn elements_passed_by_value() {
    let cs = [
        Charge {
            q: 1.5,
            at: [0.2, 0.5],
        },
        Charge {
            q: -0.5,
            at: [-1.0, 0.3],
        },
    ];
    let x = 0.7;
    let (value, dcs, dx) = field_at_grad(&cs, x);
    assert_eq!(value, field_at(&cs, x));
    let f = |cs: &[Charge], x: f64| field_at(cs, x);
    let h = 1e-6;
    common::assert_close(
        dx,
        (f(&cs, x + h) - f(&cs, x - h)) / (2.0 * h),
        1e-7,
        "∂/∂x",
    );
    for i in 0..2 {
        let mut up = cs;
        let mut down = cs;
        up[i].q += h;
        down[i].q -= h;
        let expected = (f(&up, x) - f(&down, x)) / (2.0 * h);
        common::assert_close(dcs[i].q, expected, 1e-7, "∂/∂q");
        let mut up = cs;
        let mut down = cs;
        up[i].at[1] += h;
        down[i].at[1] -= h;
        let expected = (f(&up, x) - f(&down, x)) / (2.0 * h);
        common::assert_close(dcs[i].at[1], expected, 1e-7, "∂/∂at₁");
    }
    let zero = [Charge {
        q: 0.0,
        at: [0.0; 2],
    }; 2];
    let (_, tangent) = field_at_jvp(&cs, x, &zero, 1.0);
    common::assert_close(tangent, dx, 1e-14, "jvp");
}

/// Windows of a field of the elements: `ps[i].pos.windows(2)` at a run-time index, and
/// `p.pos.windows(2)` in a loop over the elements.
#[grad]
fn field_windows(ps: &[Particle], i: usize) -> f64 {
    let mut s = 0.0;
    for w in ps[i].pos.windows(2) {
        s += w[0] * w[1] * ps[i].mass;
    }
    for p in ps {
        for w in p.pos.windows(2) {
            s += (w[1] - w[0]).powi(2);
        }
    }
    s
}

#[test]
fn windows_of_a_field_of_the_elements() {
    let ps = particles();
    let (value, d_ps) = field_windows_grad(&ps, 1);
    assert_eq!(value, field_windows(&ps, 1));
    assert_all_close(
        &d_ps.to_flat_vec(),
        &fd_flat_gradient(&ps, |ps| field_windows(ps, 1)),
        1e-6,
        "field_windows",
    );
    // By hand for the element read at index 1: pos = [1.0, 0.5], mass 2.
    assert_close(d_ps[1].mass, 1.0 * 0.5, 1e-12, "∂mass");
    assert_close(
        d_ps[1].pos[0],
        0.5 * 2.0 - 2.0 * (0.5 - 1.0),
        1e-12,
        "∂pos[0]",
    );
}

/// Loops over parts of a slice of structs: `&ps[1..]`, `ps[..n - 1].iter()`, and an
/// enumerated part, whose index counts from the part's start.
#[grad(jvp, hvp)]
fn parts(ps: &[Particle], x: f64) -> f64 {
    let mut e = 0.0;
    for p in &ps[1..] {
        e += p.mass * (p.pos[0] * x).sin();
    }
    for (i, p) in ps[..ps.len() - 1].iter().enumerate() {
        e += (i as f64 + 1.0) * p.pos[1] * p.mass;
    }
    for (i, p) in ps[1..=2].iter().enumerate() {
        e += (i as f64 + 2.0) * p.pos[0] * p.pos[0];
    }
    e
}

#[test]
fn loops_over_parts_of_a_collection() {
    let ps = particles();
    let x = 0.8;
    let (value, d_ps, d_x) = parts_grad(&ps, x);
    assert_eq!(value.to_bits(), parts(&ps, x).to_bits());
    // Closed forms, element by element.
    let n = ps.len();
    let mut expected_x = 0.0;
    for (k, (d, p)) in d_ps.iter().zip(&ps).enumerate() {
        let (mut d_mass, mut d_pos) = (0.0, [0.0; 2]);
        if k >= 1 {
            d_mass += (p.pos[0] * x).sin();
            d_pos[0] += p.mass * x * (p.pos[0] * x).cos();
            expected_x += p.mass * p.pos[0] * (p.pos[0] * x).cos();
        }
        if k < n - 1 {
            d_mass += (k as f64 + 1.0) * p.pos[1];
            d_pos[1] += (k as f64 + 1.0) * p.mass;
        }
        if (1..=2).contains(&k) {
            d_pos[0] += 2.0 * (k as f64 + 1.0) * p.pos[0];
        }
        assert_close(d.mass, d_mass, 1e-14, "∂e/∂mass");
        assert_all_close(&d.pos, &d_pos, 1e-14, "∂e/∂pos");
    }
    assert_close(d_x, expected_x, 1e-14, "∂e/∂x");
    assert_all_close(
        &d_ps.to_flat_vec(),
        &fd_flat_gradient(&ps, |ps| parts(ps, x)),
        1e-7,
        "∂e/∂ps against differences",
    );
    // Forward mode along the particles' own values: the directional derivative.
    let (_, tangent) = parts_jvp(&ps, x, &ps, 0.5);
    let flat: f64 = d_ps
        .to_flat_vec()
        .iter()
        .zip(ps.to_flat_vec())
        .map(|(d, v)| d * v)
        .sum::<f64>()
        + 0.5 * d_x;
    assert_close(tangent, flat, 1e-12, "_jvp");
}

/// A name bound to an element whose method is called, the slice read nowhere else (found
/// by the random programs: the slice was taken for a constant of another type, as an enum
/// slice is, and the method call for one on a number).
#[grad(jvp)]
fn first_unit(units: &[Unit], h: f64) -> f64 {
    let first = &units[0];
    first.unit(h, 2.0 * h, 1) + h
}

#[test]
fn a_method_of_an_element_bound_by_a_let() {
    let us = units(3);
    let h = 0.4;
    let (value, d_units, dh) = first_unit_grad(&us, h);
    assert_eq!(value.to_bits(), first_unit(&us, h).to_bits());
    assert_eq!(d_units.len(), 3);
    // Only the first unit's second row and bias are read.
    let u = &us[0];
    let z = u.w[1][0] * h + u.w[1][1] * 2.0 * h + u.b[1];
    let dz = 1.0 - z.tanh().powi(2);
    assert_close(d_units[0].w[1][0], dz * h, 1e-14, "∂/∂w10");
    assert_close(d_units[0].w[1][1], dz * 2.0 * h, 1e-14, "∂/∂w11");
    assert_close(d_units[0].b[1], dz, 1e-14, "∂/∂b1");
    assert!(d_units[1..]
        .iter()
        .all(|d| d.to_flat_vec().iter().all(|&v| v == 0.0)));
    assert_close(dh, dz * (u.w[1][0] + 2.0 * u.w[1][1]) + 1.0, 1e-14, "∂/∂h");
    assert_all_close(
        &d_units.to_flat_vec(),
        &fd_flat_gradient(&us, |us| first_unit(us, h)),
        1e-8,
        "differences",
    );
}
