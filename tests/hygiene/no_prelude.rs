//! `#[grad]` functions of every kind in a module with `#![no_implicit_prelude]`: nothing
//! of the prelude is in scope there (not `Iterator`, `Option`, `Vec`, `vec!`, `assert!`),
//! so generated code that relied on it would not compile. The module `m` is user code
//! written for such a module (paths to the crate's macros, no iterator adapters in the
//! originals); the tests outside it check the gradients.

use super::{assert_gradient, assert_near};

mod m {
    #![no_implicit_prelude]

    /// Scalars: operators, rules, a `powi`, a `max`, a branch.
    #[::autodiff::grad(jvp)]
    pub(super) fn scalars(a: f64, b: f64) -> f64 {
        let t = (a * b).tanh() + a.powi(3) / b;
        if a > b {
            t * a.max(b)
        } else {
            t - b.exp()
        }
    }

    /// Arrays, a constant loop with a branch (a `bool` saved per iteration), a pullback.
    #[::autodiff::grad(jvp)]
    pub(super) fn arrays(w: &[f64; 3], v: [f64; 3]) -> f64 {
        let mut h = [0.0; 3];
        for i in 0..3 {
            if v[i] > 0.0 {
                h[i] = (w[i] * v[i]).sin();
            } else {
                h[i] = w[i] * w[i];
            }
        }
        h[0] * h[1] + h[2]
    }

    /// Passes its array whole (through `arrays_vjp`).
    #[::autodiff::grad(jvp)]
    pub(super) fn calls_arrays(w: [f64; 3]) -> f64 {
        arrays(&w, w) * w[0]
    }

    /// Loops over slices of run-time length (an index loop and a loop over the items),
    /// a branch in one, a `while` loop and an early `return`.
    #[::autodiff::grad(jvp, wrt(w, xs))]
    pub(super) fn runtime(w: &[f64], xs: &[f64], limit: f64) -> f64 {
        let mut total = 0.0;
        for i in 0..xs.len() {
            let z = w[i % w.len()] * xs[i];
            if z > 0.0 {
                total += z.tanh();
            } else {
                total += 0.5 * z * z;
            }
        }
        for x in xs {
            total += w[0] * x * x;
        }
        let mut y = total;
        while y.abs() > limit {
            y *= 0.5;
        }
        if y > 10.0 {
            return y;
        }
        y + w[0] * total
    }

    /// A struct deriving `Differentiable`, with a constant field.
    #[derive(::autodiff::Differentiable, ::core::fmt::Debug)]
    pub(super) struct Layer {
        pub(super) w: [f64; 2],
        pub(super) b: f64,
        pub(super) k: u16,
    }

    #[::autodiff::grad(jvp)]
    pub(super) fn forward(m: &Layer, input: [f64; 2]) -> f64 {
        let z = m.w[0] * input[0] + m.w[1] * input[1] + m.b;
        let factor = if m.k > 1 { 2.0 } else { 1.0 };
        z.tanh().powi(2) * factor
    }

    /// Passes the struct whole (through `forward_vjp`).
    #[::autodiff::grad(jvp)]
    pub(super) fn through(m: &Layer, input: [f64; 2]) -> f64 {
        forward(m, input) + m.b * m.b
    }

    #[::autodiff::grad]
    impl Layer {
        /// A method: `self` differentiated.
        #[allow(clippy::needless_range_loop)] // the loop indexes two arrays
        #[::autodiff::grad(jvp)]
        pub(super) fn eval(&self, input: [f64; 2]) -> f64 {
            let mut s = self.b;
            for i in 0..2 {
                s += (self.w[i] * input[i]).sin();
            }
            s
        }
    }

    /// Vectors and `F64Ext` as such a module writes them: `::std::vec![..]`,
    /// `::std::vec::Vec::with_capacity(..)` and `::autodiff::F64Ext::relu(..)`.
    #[::autodiff::grad(jvp)]
    #[allow(clippy::needless_range_loop)] // no iterator adapters without the prelude
    pub(super) fn vectors(xs: &[f64]) -> f64 {
        let mut squares = ::std::vec![0.0; xs.len()];
        for i in 0..xs.len() {
            squares[i] = xs[i] * xs[i];
        }
        let mut kept = ::std::vec::Vec::with_capacity(xs.len());
        for i in 0..xs.len() {
            kept.push(::autodiff::F64Ext::relu(xs[i]) + squares[i]);
        }
        let mut total = 0.0;
        for i in 0..kept.len() {
            total += kept[i] * xs[0];
        }
        total
    }

    /// A function of `f32`.
    #[::autodiff::grad(jvp)]
    pub(super) fn single(a: f32, b: f32) -> f32 {
        (a * b).exp() + b.sqrt()
    }
}

use m::{arrays, calls_arrays, runtime, scalars, single, through, vectors, Layer};

#[test]
fn scalars_are_right() {
    for (a, b) in [(0.8, 0.5), (0.3, 1.2)] {
        let (value, da, db) = m::scalars_grad(a, b);
        assert_eq!(value.to_bits(), scalars(a, b).to_bits());
        assert_gradient("scalars", |p| scalars(p[0], p[1]), &[a, b], &[da, db]);
    }
    let (a, b) = (0.5_f32, 1.5_f32);
    let (value, da, db) = m::single_grad(a, b);
    assert_eq!(value.to_bits(), single(a, b).to_bits());
    assert!((da - b * (a * b).exp()).abs() < 1e-5);
    assert!((db - (a * (a * b).exp() + 0.5 / b.sqrt())).abs() < 1e-5);
}

#[test]
fn arrays_are_right() {
    let (w, v) = ([0.4, -0.9, 1.3], [0.7, -0.2, 0.5]);
    let (value, dw, dv) = m::arrays_grad(&w, v);
    assert_eq!(value.to_bits(), arrays(&w, v).to_bits());
    let at = [w[0], w[1], w[2], v[0], v[1], v[2]];
    let gradient = [dw[0], dw[1], dw[2], dv[0], dv[1], dv[2]];
    assert_gradient(
        "arrays",
        |p| arrays(&[p[0], p[1], p[2]], [p[3], p[4], p[5]]),
        &at,
        &gradient,
    );
    let (value, dw) = m::calls_arrays_grad(w);
    assert_eq!(value.to_bits(), calls_arrays(w).to_bits());
    assert_gradient(
        "calls_arrays",
        |p| calls_arrays([p[0], p[1], p[2]]),
        &w,
        &dw,
    );
}

#[test]
fn runtime_loops_are_right() {
    let w = [0.6, -0.4];
    let xs = [0.3, 1.1, -0.7, 0.9, 0.2];
    for limit in [0.3, 100.0] {
        let (value, dw, dxs) = m::runtime_grad(&w, &xs, limit);
        assert_eq!(value.to_bits(), runtime(&w, &xs, limit).to_bits());
        let at: Vec<f64> = w.iter().chain(&xs).copied().collect();
        let gradient: Vec<f64> = dw.iter().chain(&dxs).copied().collect();
        assert_gradient(
            "runtime",
            |p| runtime(&p[..2], &p[2..], limit),
            &at,
            &gradient,
        );
    }
}

#[test]
fn vectors_are_right() {
    let xs = [0.4, -1.1, 0.7, 2.0];
    let (value, dxs) = m::vectors_grad(&xs);
    assert_eq!(value.to_bits(), vectors(&xs).to_bits());
    assert_gradient("vectors", vectors, &xs, &dxs);
}

#[test]
fn structs_and_methods_are_right() {
    let layer = Layer {
        w: [0.3, -0.8],
        b: 0.2,
        k: 2,
    };
    let input = [1.5, -0.5];
    let rebuild = |p: &[f64]| Layer {
        w: [p[0], p[1]],
        b: p[2],
        k: 2,
    };
    let at = [layer.w[0], layer.w[1], layer.b, input[0], input[1]];

    let (value, dlayer, dinput) = m::through_grad(&layer, input);
    assert_eq!(value.to_bits(), through(&layer, input).to_bits());
    assert_eq!(dlayer.k, 2, "a constant field is copied");
    assert_gradient(
        "through",
        |p| through(&rebuild(p), [p[3], p[4]]),
        &at,
        &[dlayer.w[0], dlayer.w[1], dlayer.b, dinput[0], dinput[1]],
    );

    let (value, dlayer, dinput) = layer.eval_grad(input);
    assert_eq!(value.to_bits(), layer.eval(input).to_bits());
    for i in 0..2 {
        let c = (layer.w[i] * input[i]).cos();
        assert_near("∂eval/∂w", dlayer.w[i], c * input[i]);
        assert_near("∂eval/∂input", dinput[i], c * layer.w[i]);
    }
    assert_near("∂eval/∂b", dlayer.b, 1.0);
}
