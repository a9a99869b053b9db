//! A module that shadows the prelude (types, traits, functions and macros), the integer
//! and `bool` primitive types, and the crates and modules generated code goes through
//! (`core`, `std`, `alloc`, `autodiff`, `rules`, …): the generated code names all of them
//! by absolute paths, so the `#[grad]` functions below still compile and are right.
//! (`f64` itself is shadowed in the module `shadowed_f64` below.)
//!
//! The shadowing items are unused, so each carries its own `allow(dead_code)`; the module
//! as a whole allows nothing, so that the generated code is linted as usual.

use super::{assert_gradient, assert_near};
use ::autodiff::prelude::*;

macro_rules! shadow_types {
    ($($name:ident)*) => {
        $(
            #[allow(dead_code)]
            #[derive(Debug)]
            struct $name;
        )*
    };
}

// The prelude's types and traits, and the runtime's names.
shadow_types! {
    Option Some None Result Ok Err Vec Box String ToString ToOwned Default Clone Copy
    Send Sync Sized Drop Fn FnMut FnOnce Iterator IntoIterator DoubleEndedIterator
    ExactSizeIterator Extend Into From TryInto TryFrom AsRef AsMut PartialEq PartialOrd Eq
    Ord Flat Workspace Real F64Ext
}

// The prelude's functions and macros.
#[allow(dead_code)]
fn drop() {}
#[allow(unused_macros)]
macro_rules! assert {
    ($($t:tt)*) => {
        compile_error!("the module's own `assert!`")
    };
}
#[allow(unused_macros)]
macro_rules! panic {
    ($($t:tt)*) => {
        compile_error!("the module's own `panic!`")
    };
}
#[allow(unused_macros)]
macro_rules! unreachable {
    ($($t:tt)*) => {
        compile_error!("the module's own `unreachable!`")
    };
}
#[allow(unused_macros)]
macro_rules! vec {
    ($($t:tt)*) => {
        compile_error!("the module's own `vec!`")
    };
}

// Primitive types other than `f64`, as aliases of other types.
#[allow(non_camel_case_types, dead_code)]
type usize = u32;
#[allow(non_camel_case_types, dead_code)]
type isize = i8;
#[allow(non_camel_case_types, dead_code)]
type i32 = i64;
#[allow(non_camel_case_types, dead_code)]
type u32 = u8;
#[allow(non_camel_case_types, dead_code)]
type bool = u8;
#[allow(non_camel_case_types, dead_code)]
type f32 = u16;

// Crates and modules generated code reaches.
#[allow(dead_code)]
mod core {}
#[allow(dead_code)]
mod std {}
#[allow(dead_code)]
mod alloc {}
#[allow(dead_code)]
mod autodiff {}
#[allow(dead_code)]
mod rules {}
#[allow(dead_code)]
mod loops {}
#[allow(dead_code)]
mod probe {}
#[allow(dead_code)]
mod __private {}

// A constant with a short name: a generated `let n = …` would be a pattern matching it.
#[allow(dead_code, non_upper_case_globals)]
const n: u8 = 7;

/// Scalars: operators, rules, a `powi`, a `max`, a branch.
#[grad(jvp)]
fn scalars(a: f64, b: f64) -> f64 {
    let t = (a * b).tanh() + a.powi(3) / b;
    if a > b {
        t * a.max(b)
    } else {
        t - b.exp()
    }
}

#[test]
fn scalars_are_right() {
    for (a, b) in [(0.8, 0.5), (0.3, 1.2)] {
        let (value, da, db) = scalars_grad(a, b);
        assert_eq!(value.to_bits(), scalars(a, b).to_bits());
        assert_gradient("scalars", |p| scalars(p[0], p[1]), &[a, b], &[da, db]);
    }
}

/// Arrays, a constant loop with a branch in it (a `bool` saved per iteration), a local
/// array, and a pullback.
#[grad(jvp)]
fn arrays(w: &[f64; 3], v: [f64; 3]) -> f64 {
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

/// Passes its arrays whole (through `arrays_vjp`).
#[grad(jvp)]
fn calls_arrays(w: [f64; 3]) -> f64 {
    arrays(&w, w) * w[0]
}

#[test]
fn arrays_are_right() {
    let (w, v) = ([0.4, -0.9, 1.3], [0.7, -0.2, 0.5]);
    let (value, dw, dv) = arrays_grad(&w, v);
    assert_eq!(value.to_bits(), arrays(&w, v).to_bits());
    let at = [w[0], w[1], w[2], v[0], v[1], v[2]];
    let gradient = [dw[0], dw[1], dw[2], dv[0], dv[1], dv[2]];
    assert_gradient(
        "arrays",
        |p| arrays(&[p[0], p[1], p[2]], [p[3], p[4], p[5]]),
        &at,
        &gradient,
    );
    let (value, dw) = calls_arrays_grad(w);
    assert_eq!(value.to_bits(), calls_arrays(w).to_bits());
    assert_gradient(
        "calls_arrays",
        |p| calls_arrays([p[0], p[1], p[2]]),
        &w,
        &dw,
    );
}

/// A loop over slices of run-time length with a branch, a `while` loop with a run-time
/// trip count, an index computed from data, and an early `return`.
#[grad(jvp, wrt(w, xs))]
fn runtime(w: &[f64], xs: &[f64], limit: f64) -> f64 {
    let mut total = 0.0;
    for (i, x) in xs.iter().enumerate() {
        let k = i % w.len();
        let z = w[k] * x;
        if z > 0.0 {
            total += z.tanh();
        } else {
            total += 0.5 * z * z;
        }
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

#[test]
fn runtime_loops_are_right() {
    let w = [0.6, -0.4];
    let xs = [0.3, 1.1, -0.7, 0.9, 0.2];
    let limit = 0.3;
    let (value, dw, dxs) = runtime_grad(&w, &xs, limit);
    assert_eq!(value.to_bits(), runtime(&w, &xs, limit).to_bits());
    let at: ::std::vec::Vec<f64> = w.iter().chain(&xs).copied().collect();
    let gradient: ::std::vec::Vec<f64> = dw.iter().chain(&dxs).copied().collect();
    assert_gradient(
        "runtime",
        |p| runtime(&p[..2], &p[2..], limit),
        &at,
        &gradient,
    );
}

/// A struct deriving `Differentiable`, with a constant field.
#[derive(Differentiable, Debug)]
struct Layer {
    w: [f64; 2],
    b: f64,
    k: u16,
}

/// A struct parameter, a field of it passed on, and a call that passes the struct whole.
#[grad(jvp)]
fn forward(m: &Layer, input: [f64; 2]) -> f64 {
    let z = m.w[0] * input[0] + m.w[1] * input[1] + m.b;
    let factor = if m.k > 1 { 2.0 } else { 1.0 };
    z.tanh().powi(2) * factor
}

#[grad(jvp)]
fn through(m: &Layer, input: [f64; 2]) -> f64 {
    forward(m, input) + m.b * m.b
}

#[grad]
impl Layer {
    /// A method: `self` differentiated.
    #[allow(clippy::needless_range_loop)] // the loop indexes two arrays
    #[grad(jvp)]
    fn eval(&self, input: [f64; 2]) -> f64 {
        let mut s = self.b;
        for i in 0..2 {
            s += (self.w[i] * input[i]).sin();
        }
        s
    }
}

#[test]
fn structs_and_methods_are_right() {
    let m = Layer {
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
    let at = [m.w[0], m.w[1], m.b, input[0], input[1]];

    let (value, dm, dinput) = through_grad(&m, input);
    assert_eq!(value.to_bits(), through(&m, input).to_bits());
    assert_eq!(dm.k, 2, "a constant field is copied");
    assert_gradient(
        "through",
        |p| through(&rebuild(p), [p[3], p[4]]),
        &at,
        &[dm.w[0], dm.w[1], dm.b, dinput[0], dinput[1]],
    );

    let (value, dm, dinput) = m.eval_grad(input);
    assert_eq!(value.to_bits(), m.eval(input).to_bits());
    for i in 0..2 {
        let c = (m.w[i] * input[i]).cos();
        assert_near("∂eval/∂w", dm.w[i], c * input[i]);
        assert_near("∂eval/∂input", dinput[i], c * m.w[i]);
    }
    assert_near("∂eval/∂b", dm.b, 1.0);
}

/// `f64` and `f32` shadowed too: a function written with `::core::primitive::f64` is a
/// function of the primitive type, and `#[grad]` takes it as such.
mod shadowed_f64 {
    use super::super::assert_gradient;
    use ::autodiff::prelude::*;

    #[allow(non_camel_case_types, dead_code)]
    #[derive(Debug)]
    struct f64;
    #[allow(non_camel_case_types, dead_code)]
    type f32 = u8;

    type Real64 = ::core::primitive::f64;

    /// Every spelling of the primitive type: in parameters, arrays, slices, locals, casts,
    /// turbofish and paths to methods and constants.
    #[grad(jvp)]
    #[allow(clippy::cast_precision_loss)]
    fn spelled(
        a: ::core::primitive::f64,
        w: &[::core::primitive::f64; 2],
        xs: &[::std::primitive::f64],
    ) -> core::primitive::f64 {
        let scale: ::core::primitive::f64 = xs.len() as ::core::primitive::f64;
        let s = xs.iter().map(|x| x * a).sum::<::core::primitive::f64>();
        let t = ::core::primitive::f64::tanh(s) + std::primitive::f64::sin(w[0]);
        scale * t * w[1] + ::core::primitive::f64::EPSILON
    }

    /// `f32`, spelled as a path too.
    #[grad(jvp)]
    fn single(a: ::core::primitive::f32, b: ::core::primitive::f32) -> ::core::primitive::f32 {
        (a * b).exp() + ::core::primitive::f32::sqrt(b)
    }

    #[test]
    fn primitive_paths_are_scalars() {
        let (a, w, xs) = (0.3, [0.5, -1.5], [0.2, 0.9, -0.4]);
        let (value, da, dw, dxs) = spelled_grad(a, &w, &xs);
        assert_eq!(value.to_bits(), spelled(a, &w, &xs).to_bits());
        let at: ::std::vec::Vec<Real64> = [a, w[0], w[1]].iter().chain(&xs).copied().collect();
        let gradient: ::std::vec::Vec<Real64> =
            [da, dw[0], dw[1]].iter().chain(&dxs).copied().collect();
        assert_gradient(
            "spelled",
            |p| spelled(p[0], &[p[1], p[2]], &p[3..]),
            &at,
            &gradient,
        );

        let (a, b): (::core::primitive::f32, ::core::primitive::f32) = (0.5, 1.5);
        let (value, da, db) = single_grad(a, b);
        assert_eq!(value.to_bits(), single(a, b).to_bits());
        ::core::assert!((da - b * (a * b).exp()).abs() < 1e-5);
        ::core::assert!((db - (a * (a * b).exp() + 0.5 / b.sqrt())).abs() < 1e-5);
    }
}
