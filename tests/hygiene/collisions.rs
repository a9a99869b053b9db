//! Parameters, locals and called functions named like the identifiers that `#[grad]`
//! generates: slots (`__primal_N`, `__adjoint_var_N`, `__partial_N_P`, `__tape_N`, …),
//! the workspace and its frames (`__ws`, `__slab_N`, `__frame_N`, `__count_N`), the
//! buffers of `_grad_into` and `_vjp` (`d_<param>`, `seed`), the names of lowering's own
//! temporaries, and everyday names (`value`, `grad`, `adjoint`, `rules`, `autodiff`,
//! `core`, `std`).
// Names with `__` and names alike are what this module is about.
#![allow(clippy::used_underscore_binding, clippy::similar_names)]

use super::{assert_gradient, assert_near};
use ::autodiff::prelude::*;

/// Generated slots as parameters and locals.
#[grad(jvp)]
fn slots(__primal_0: f64, __adjoint_var_0: f64, __partial_2_0: f64) -> f64 {
    let __adjoint_2 = __primal_0 * __adjoint_var_0;
    let __tape_0 = __adjoint_2.tanh() + __partial_2_0;
    let __iter_1 = __tape_0 * __primal_0;
    let __saved_0 = __iter_1.sin();
    let __seed_3 = __saved_0 * __adjoint_2;
    let __var_0 = __seed_3 + __tape_0;
    let __value = __var_0 * __var_0;
    let __grad_0 = __value + __primal_0;
    let __ws = __grad_0 * 0.5;
    let __whole_0_0 = __ws * __partial_2_0;
    let __vjp_0_0 = __whole_0_0.exp();
    __vjp_0_0 + __adjoint_var_0
}

#[test]
fn slots_as_parameters_and_locals() {
    let at = [0.4, -0.7, 1.3];
    let (value, d0, d1, d2) = slots_grad(at[0], at[1], at[2]);
    assert_eq!(value.to_bits(), slots(at[0], at[1], at[2]).to_bits());
    assert_gradient("slots", |p| slots(p[0], p[1], p[2]), &at, &[d0, d1, d2]);
}

/// The names of a run-time loop's workspace, counters and tapes, in a loop over slices.
#[grad(jvp)]
fn looped(__slab_0: &[f64], __ws: &[f64], __count_0: f64) -> f64 {
    let mut __trips_0 = 0.0;
    let mut __tape_0 = [0.0; 2];
    for (__frame_0, __iter_0) in __slab_0.iter().zip(__ws) {
        let __primal_1 = (__frame_0 * __iter_0 * __count_0).tanh();
        __tape_0[0] += __primal_1;
        __tape_0[1] += __primal_1 * __primal_1;
        __trips_0 += __primal_1 * __tape_0[0];
    }
    __trips_0 + __tape_0[1] * __count_0
}

#[test]
fn workspace_names_as_parameters_and_locals() {
    let a = [0.3, -0.2, 0.9, 0.5];
    let b = [1.1, 0.4, -0.6, 0.8];
    let c = 0.7;
    let (value, da, db, dc) = looped_grad(&a, &b, c);
    assert_eq!(value.to_bits(), looped(&a, &b, c).to_bits());
    let all: Vec<f64> = a.iter().chain(&b).copied().chain([c]).collect();
    let gradient: Vec<f64> = da.iter().chain(&db).copied().chain([dc]).collect();
    assert_gradient(
        "looped",
        |p| looped(&p[..4], &p[4..8], p[8]),
        &all,
        &gradient,
    );
}

/// `seed` and `d_seed` as the parameters of a function with a pullback, whose own buffers
/// are named `seed` and `d_seed`.
#[grad(jvp)]
fn pulled(seed: &[f64; 3], d_seed: [f64; 3], d_d_seed: f64) -> f64 {
    let mut s = d_d_seed;
    for i in 0..3 {
        s += seed[i] * d_seed[i] * d_d_seed;
    }
    s.sin()
}

/// Passes its arrays whole: `pulled`'s pullback `pulled_vjp` does the work.
#[grad(jvp)]
fn pushes(seed: [f64; 3], value: f64) -> f64 {
    pulled(&seed, seed, value) * value
}

#[test]
#[allow(clippy::float_cmp)] // the buffers get exactly the numbers `_grad` returns
fn buffers_named_like_parameters() {
    let (a, b, c) = ([0.2, -0.4, 0.6], [0.5, 1.5, -1.0], 0.3);
    let dot: f64 = (0..3).map(|i| a[i] * b[i]).sum();
    let inner = c + dot * c;
    let (value, da, db, dc) = pulled_grad(&a, b, c);
    assert_eq!(value.to_bits(), pulled(&a, b, c).to_bits());
    let outer = inner.cos();
    for i in 0..3 {
        assert_near("∂pulled/∂seed", da[i], outer * b[i] * c);
        assert_near("∂pulled/∂d_seed", db[i], outer * a[i] * c);
    }
    assert_near("∂pulled/∂d_d_seed", dc, outer * (1.0 + dot));

    // `_grad_into` adds to buffers, `_vjp` scales by its seed.
    let (mut d_seed, mut d_d_seed, mut d_d_d_seed) = ([1.0; 3], [0.0; 3], 0.0);
    let into = pulled_grad_into(&a, b, c, &mut d_seed, &mut d_d_seed, &mut d_d_d_seed);
    assert_eq!(into.to_bits(), value.to_bits());
    assert_eq!(d_seed, [1.0 + da[0], 1.0 + da[1], 1.0 + da[2]]);
    assert_eq!((d_d_seed, d_d_d_seed), (db, dc));
    let (mut v_a, mut v_b, mut v_c) = ([0.0; 3], [0.0; 3], 0.0);
    let pulled_value = pulled_vjp(&a, b, c, 2.0, &mut v_a, &mut v_b, &mut v_c);
    assert_eq!(pulled_value.to_bits(), value.to_bits());
    assert_eq!(v_a, da.map(|d| 2.0 * d));
    assert_eq!((v_b, v_c), (db.map(|d| 2.0 * d), 2.0 * dc));

    let at = [0.2, -0.4, 0.6, 0.8];
    let (value, d_seed, d_value) = pushes_grad([at[0], at[1], at[2]], at[3]);
    let f = |p: &[f64]| pushes([p[0], p[1], p[2]], p[3]);
    assert_eq!(value.to_bits(), f(&at).to_bits());
    assert_gradient(
        "pushes",
        f,
        &at,
        &[d_seed[0], d_seed[1], d_seed[2], d_value],
    );
}

/// A scalar parameter `x` next to one named `d_x`, the name of `x`'s buffer in
/// `_grad_into`, and parameters named like the locals of `_grad_into`.
#[grad(jvp)]
fn buffers(x: f64, d_x: f64, __value: f64, __grad_0: f64) -> f64 {
    x * d_x.exp() + __value * __grad_0
}

#[test]
#[allow(clippy::float_cmp)] // the buffers get exactly the numbers `_grad` returns
fn scalar_buffers_named_like_parameters() {
    let (x, d_x, v, g) = (0.5, -0.25, 1.5, 2.0);
    let (value, dx, dd_x, dv, dg) = buffers_grad(x, d_x, v, g);
    assert_eq!(value.to_bits(), buffers(x, d_x, v, g).to_bits());
    assert_eq!((dx, dd_x, dv, dg), (d_x.exp(), x * d_x.exp(), g, v));
    let mut out = [0.0; 4];
    let [o0, o1, o2, o3] = &mut out;
    let into = buffers_grad_into(x, d_x, v, g, o0, o1, o2, o3);
    assert_eq!(into.to_bits(), value.to_bits());
    assert_eq!(out, [dx, dd_x, dv, dg]);
}

/// Callees named like the crate, its modules, the prelude's modules and AD terms.
#[grad(jvp)]
fn value(x: f64) -> f64 {
    x * x
}

#[grad(jvp)]
fn grad(x: f64) -> f64 {
    x.sin()
}

#[grad(jvp)]
fn adjoint(x: f64, y: f64) -> f64 {
    x * y.exp()
}

#[grad(jvp)]
fn rules(x: f64) -> f64 {
    x.tanh()
}

#[grad(jvp)]
fn autodiff(x: f64) -> f64 {
    x.exp()
}

#[grad(jvp)]
fn core(x: f64) -> f64 {
    x.cos()
}

#[grad(jvp)]
fn std(x: f64) -> f64 {
    x.sqrt()
}

#[grad(jvp)]
fn seed(x: f64) -> f64 {
    3.0 * x
}

#[grad(jvp)]
fn __primal_0(x: f64) -> f64 {
    x.atan()
}

/// Named like the prelude's `Some`, which `#[grad]` takes a call `Some(..)` for: it is
/// called by its path, `self::Some(..)`.
#[grad(jvp)]
#[allow(non_snake_case)] // named so on purpose
fn Some(x: f64) -> f64 {
    x.exp() - 1.0
}

/// Calls every function above, with a parameter named like a callee's gradient (which
/// must not shadow the callee) and one named like the gradient's buffer.
#[grad(jvp)]
// `self::Some` calls the function rather than the prelude's; the generated functions get
// the expectation as an allowance (`calls_grad_into` has no path to trip it).
#[expect(unused_qualifications)]
fn calls(value_grad: f64, d_value_grad: f64) -> f64 {
    let (x, y) = (value_grad, d_value_grad);
    let rules_grad = x + y;
    value(x) + grad(y) * adjoint(x, y) + rules(rules_grad) + autodiff(y) * core(x)
        - std(x * x + 1.0)
        + seed(y) * __primal_0(x)
        + self::Some(x * y)
}

#[test]
fn callees_named_like_generated_code() {
    let (x, y) = (0.4, -0.3);
    let (value, dx, dy) = calls_grad(x, y);
    assert_eq!(value.to_bits(), calls(x, y).to_bits());
    let sech2 = 1.0 - (x + y).tanh().powi(2);
    let some = (x * y).exp(); // the partial of `Some` at x·y
    let want_dx =
        2.0 * x + y.sin() * y.exp() + sech2 - y.exp() * x.sin() - x / (x * x + 1.0).sqrt()
            + 3.0 * y / (1.0 + x * x)
            + some * y;
    let want_dy = y.cos() * x * y.exp()
        + y.sin() * x * y.exp()
        + sech2
        + y.exp() * x.cos()
        + 3.0 * x.atan()
        + some * x;
    assert_near("∂calls/∂x", dx, want_dx);
    assert_near("∂calls/∂y", dy, want_dy);
}

/// Names the lowering gives its own temporaries: a `for _` loop's counter, an `if` used as
/// a value, a `let _` and a `_` in a tuple pattern. The user's variables of those names
/// stay the user's.
#[grad(jvp)]
fn temporaries(x: f64, y: f64) -> f64 {
    let index = x * 2.0;
    let if_value = y * 3.0;
    let unnamed = x * y;
    let unused_1 = x - y;
    let mut s = 0.0;
    for _ in 0..3 {
        s += index + if_value;
    }
    let picked = if x > 0.0 { if_value * unnamed } else { index };
    let _ = x.exp();
    let (a, _) = pair(unnamed, unused_1);
    s + picked + if_value + unnamed + unused_1 * a + index
}

#[grad(jvp)]
fn pair(x: f64, y: f64) -> (f64, f64) {
    (x * y, x + y)
}

#[test]
fn temporaries_do_not_shadow_user_names() {
    let (x, y) = (0.7, -0.4);
    let (v, dx, dy) = temporaries_grad(x, y);
    assert_eq!(v.to_bits(), temporaries(x, y).to_bits());
    // 3(2x + 3y) + 3y·xy + 3y + xy + (x − y)·xy(x − y) + 2x
    let want_dx = 6.0 + 3.0 * y * y + y + y * (x - y).powi(2) + 2.0 * x * y * (x - y) + 2.0;
    let want_dy = 9.0 + 6.0 * x * y + 3.0 + x + x * (x - y).powi(2) - 2.0 * x * y * (x - y);
    assert_near("∂temporaries/∂x", dx, want_dx);
    assert_near("∂temporaries/∂y", dy, want_dy);
}
