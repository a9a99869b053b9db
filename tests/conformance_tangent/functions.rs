//! The ported functions, in the order of Tangent's `functions.py`, each a `#[grad]`
//! function named after the Python one.

use autodiff::prelude::*;

#[grad]
pub(crate) fn id_(a: f64) -> f64 {
    a
}

#[grad]
pub(crate) fn sum_(x: &[f64]) -> f64 {
    x.iter().sum()
}

#[grad]
pub(crate) fn unary_sub(a: f64) -> f64 {
    -a
}

#[grad]
pub(crate) fn overwrite_call(x: &[f64]) -> f64 {
    let x: f64 = x.iter().sum();
    let x = x * x;
    x
}

#[grad]
pub(crate) fn tanh(a: f64) -> f64 {
    a.tanh()
}

#[grad]
pub(crate) fn identity_assign(a: f64) -> f64 {
    let b = a;
    b
}

#[grad]
pub(crate) fn increment(a: f64) -> f64 {
    a + 1.0
}

#[grad]
pub(crate) fn saxpy(a: f64, b: f64, c: f64) -> f64 {
    a * b + c
}

#[grad]
pub(crate) fn mul(a: f64, b: f64) -> f64 {
    a * b
}

#[grad]
pub(crate) fn add(a: f64, b: f64) -> f64 {
    a + b
}

#[grad]
pub(crate) fn saxpy_call(a: f64, b: f64, c: f64) -> f64 {
    add(mul(a, b), c)
}

#[grad]
pub(crate) fn saxpy_anf(a: f64, b: f64, c: f64) -> f64 {
    let t1 = a * b;
    let t2 = t1 + c;
    t2
}

#[grad]
pub(crate) fn saxpy_overwrite(a: f64, b: f64, c: f64) -> f64 {
    let mut t = a * b;
    t = t + c;
    t
}

#[grad]
pub(crate) fn gradname_aliasing(a: f64) -> f64 {
    let da = a * a;
    da
}

#[grad]
pub(crate) fn overwrite_if(mut a: f64) -> f64 {
    if a > 0.0 {
        a = a * 3.0;
    } else {
        a = a * 2.0;
    }
    a
}

#[grad]
pub(crate) fn test_binop_mul1(a: f64) -> f64 {
    a * 3.0
}

#[grad]
pub(crate) fn test_binop_mul2(a: f64) -> f64 {
    3.0 * a
}

#[grad]
pub(crate) fn test_binop_mul3(a: f64) -> f64 {
    a * a
}

#[grad]
pub(crate) fn test_binop_div1(a: f64) -> f64 {
    a / 3.0
}

#[grad]
pub(crate) fn test_binop_div2(a: f64) -> f64 {
    3.0 / a
}

#[grad]
pub(crate) fn test_binop_div3(a: f64) -> f64 {
    a / a
}

#[grad]
pub(crate) fn test_binop_sub1(a: f64) -> f64 {
    a - 3.0
}

#[grad]
pub(crate) fn test_binop_sub2(a: f64) -> f64 {
    3.0 - a
}

#[grad]
pub(crate) fn test_binop_sub3(a: f64) -> f64 {
    a - a
}

#[grad]
pub(crate) fn test_binop_add1(a: f64) -> f64 {
    a + 3.0
}

#[grad]
pub(crate) fn test_binop_add2(a: f64) -> f64 {
    3.0 + a
}

#[grad]
pub(crate) fn test_binop_add3(a: f64) -> f64 {
    a + a
}

#[grad]
pub(crate) fn nested_if(mut a: f64) -> f64 {
    if a > 0.0 {
        if a < 10.0 {
            a = a * a;
        }
    } else {
        a = 3.0 * a;
    }
    a
}

#[grad]
pub(crate) fn multiarg_if(mut a: f64) -> f64 {
    let b = if a * a / 3.0 > 0.0 { 3.0 } else { 4.0 };
    a = a * b;
    if a < b - a * b {
        a = a * a;
    } else if a > b + 3.0 * a {
        if a / 2.0 < 0.0 {
            a = a / b;
        } else {
            a = a * b;
        }
    } else {
        a = -a;
    }
    a
}

#[grad]
pub(crate) fn fn_multiply(a: f64) -> f64 {
    a * 3.0
}

#[grad]
pub(crate) fn test_anf_list(a: f64) -> f64 {
    let b = [1.0, a * a, 2.0];
    b.iter().sum()
}

#[grad]
pub(crate) fn test_deep_anf_list(x: &[f64]) -> f64 {
    let b = [1.0, x[0] * x[1] * x[2], 3.0];
    b.iter().sum()
}

#[grad]
pub(crate) fn test_subscript1(x: &[f64]) -> f64 {
    let a = x[0];
    let b = x[1];
    a * b
}

#[grad]
pub(crate) fn test_subscript2(mut x: [f64; 3]) -> f64 {
    let a = x[0];
    let b = x[1];
    x[0] = a * b;
    x.iter().sum()
}

/// Tangent unpacks a tuple argument; a Rust tuple parameter is not supported, so the three
/// values come as an array, taken apart the same way.
#[grad]
pub(crate) fn unpacking_args_saxpy(abc_packed_in_tuple: [f64; 3]) -> f64 {
    let [a, b, c] = abc_packed_in_tuple;
    a * b + c
}

#[grad]
pub(crate) fn passthru_unpack(abc_packed_in_tuple: [f64; 3]) -> f64 {
    let [a, _b, _c] = abc_packed_in_tuple;
    a
}

#[grad]
pub(crate) fn test_subscript3(mut x: [f64; 3]) -> f64 {
    let mut y = [0.0; 3];
    for i in 0..3 {
        y[i] = x[i].powf(2.0);
    }
    x[0] = y[1] * y[2];
    x.iter().zip(&y).map(|(a, b)| a * b).sum()
}

#[grad]
pub(crate) fn test_list_and_subscript(a: f64) -> f64 {
    let x = [1.0, a, 3.0];
    x[0] * x[1]
}

#[grad]
pub(crate) fn test_implicit_indexing(x: &[f64]) -> f64 {
    let mut res = 0.0;
    for a in x {
        res += a;
    }
    res
}

#[grad]
pub(crate) fn serial_if(mut a: f64) -> f64 {
    if a > 0.0 {
        a = a * a;
    }
    a = a + a;
    if a < 0.0 {
        a = 3.0 * a;
    }
    a
}

#[grad]
pub(crate) fn multivar_if(mut a: f64, b: f64) -> f64 {
    if a > b {
        a = a * a;
    } else {
        a = a * b;
    }
    a
}

#[grad]
pub(crate) fn serial_for(mut a: f64, n: usize) -> f64 {
    for _ in 0..n {
        a = a * a;
    }
    a = 2.0 * a;
    for _ in 0..n + 1 {
        a = a * 3.0;
    }
    a
}

#[grad]
pub(crate) fn serial_ifthenfor(mut a: f64, n: usize) -> f64 {
    if a > 0.0 {
        a = a * a;
    }
    a = 2.0 * a;
    for _ in 0..n {
        a = a * a;
    }
    a
}

#[grad]
pub(crate) fn serial_forthenif(mut a: f64, n: usize) -> f64 {
    for _ in 0..n {
        a = a * a;
    }
    a = 2.0 * a;
    if a > 0.0 {
        a = a * a;
    }
    a
}

#[grad]
pub(crate) fn devilish_nested_if(mut a: f64) -> f64 {
    if a > 0.0 {
        a = a * 3.0;
        if a < 10.0 {
            a = a * a;
        } else {
            a = a * 2.0;
        }
    }
    a
}

#[grad]
pub(crate) fn overwrite_ifelse(mut a: f64) -> f64 {
    if a > 0.0 {
        a = a * 3.0;
    } else if 0.0 > a {
        a = a * 2.0;
    } else {
        a = 1.0 * a;
    }
    a
}

#[grad]
pub(crate) fn overwrite_arg(mut a: f64) -> f64 {
    a = a * 3.0;
    a
}

#[grad]
pub(crate) fn overwrite_non_arg(a: f64) -> f64 {
    let mut b = a;
    b = b * 3.0;
    b
}

#[grad]
pub(crate) fn third_pow(a: f64) -> f64 {
    a * a * a
}

#[grad]
pub(crate) fn direct_third_pow(a: f64) -> f64 {
    a.powi(3)
}

#[grad]
pub(crate) fn iter_third_pow1(a: f64) -> f64 {
    let mut out = 1.0;
    for _ in 0..3 {
        out = out * a;
    }
    out
}

#[grad]
pub(crate) fn iter_third_pow2(a: f64) -> f64 {
    let mut out = a;
    for _ in 0..3 - 1 {
        out = out * a;
    }
    out
}

#[grad]
pub(crate) fn iterpower_static(mut a: f64) -> f64 {
    for _ in 0..3 {
        a = a * a;
    }
    a
}

#[grad]
pub(crate) fn iterpower(mut a: f64, n: usize) -> f64 {
    for _ in 0..n {
        a = a * a;
    }
    a
}

#[grad]
pub(crate) fn cond_iterpower1(mut a: f64) -> f64 {
    for _ in 0..3 {
        if a < 20.0 {
            a = a * a;
        }
    }
    a
}

#[grad]
pub(crate) fn cond_iterpower2(mut a: f64) -> f64 {
    if a < 20.0 {
        for _ in 0..3 {
            a = a * a;
        }
    }
    a
}

#[grad]
pub(crate) fn superfor_iterpower(mut a: f64) -> f64 {
    for _ in 0..2 {
        for _ in 0..3 {
            a = a * a;
        }
    }
    a
}

#[grad]
pub(crate) fn super_iterpower(mut a: f64) -> f64 {
    for _ in 0..3 {
        a = a * a * a;
    }
    a
}

// ----- numpy --------------------------------------------------------------------------

#[grad]
pub(crate) fn numpy_sum(x: &[f64]) -> f64 {
    x.iter().sum()
}

#[grad]
pub(crate) fn numpy_mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

#[grad]
pub(crate) fn numpy_exp(a: f64) -> f64 {
    a.exp()
}

#[grad]
pub(crate) fn numpy_exp2(a: f64) -> f64 {
    a.exp().exp()
}

#[grad]
pub(crate) fn numpy_sqrt(a: f64) -> f64 {
    if a >= 0.0 {
        a.sqrt()
    } else {
        (-a).sqrt()
    }
}

#[grad]
pub(crate) fn numpy_cos(a: f64) -> f64 {
    a.cos()
}

#[grad]
pub(crate) fn numpy_sin(a: f64) -> f64 {
    a.sin()
}

#[grad]
pub(crate) fn numpy_tan(a: f64) -> f64 {
    a.tan()
}

#[grad]
pub(crate) fn numpy_cosh(a: f64) -> f64 {
    a.cosh()
}

#[grad]
pub(crate) fn numpy_sinh(a: f64) -> f64 {
    a.sinh()
}

#[grad]
pub(crate) fn numpy_tanh(a: f64) -> f64 {
    a.tanh()
}

#[grad]
pub(crate) fn numpy_arccos(a: f64) -> f64 {
    a.acos()
}

#[grad]
pub(crate) fn numpy_arcsin(a: f64) -> f64 {
    a.asin()
}

#[grad]
pub(crate) fn numpy_arctan(a: f64) -> f64 {
    a.atan()
}

/// Tangent's shapes: `input` 3, `label` 5 (one-hot), `W` 3×5, `b` 5.
#[grad]
pub(crate) fn logistic_regression(
    input: &[f64; 3],
    label: &[f64; 5],
    w: &[[f64; 5]; 3],
    b: &[f64; 5],
) -> f64 {
    let mut loss = 0.0;
    for j in 0..5 {
        let mut h1 = b[j];
        for i in 0..3 {
            h1 += input[i] * w[i][j];
        }
        let prediction = 0.5 * (h1.tanh() + 1.0);
        let label_probability = prediction * label[j] + (1.0 - prediction) * (1.0 - label[j]);
        loss -= label_probability.ln();
    }
    loss
}

// ----- TensorFlow reductions to one value (images of Tangent's shape (n, 3, 3, 3)) ------

/// Height, width and channels of an image.
pub(crate) const H: usize = 3;
pub(crate) const W: usize = 3;
pub(crate) const C: usize = 3;

/// `keep_dims` only changes the shape of the one-element result.
#[grad]
pub(crate) fn tfe_reduce_sum(timage: &[[[[f64; C]; W]; H]], _keep_dims: bool) -> f64 {
    let mut s = 0.0;
    for n in 0..timage.len() {
        for i in 0..H {
            for j in 0..W {
                for k in 0..C {
                    s += timage[n][i][j][k];
                }
            }
        }
    }
    s
}

#[grad]
pub(crate) fn tfe_reduce_mean(timage: &[[[[f64; C]; W]; H]], _keep_dims: bool) -> f64 {
    let mut s = 0.0;
    for n in 0..timage.len() {
        for i in 0..H {
            for j in 0..W {
                for k in 0..C {
                    s += timage[n][i][j][k];
                }
            }
        }
    }
    s / (timage.len() * H * W * C) as f64
}

#[grad]
pub(crate) fn tfe_reduce_max(timage: &[[[[f64; C]; W]; H]], _keep_dims: bool) -> f64 {
    let mut m = f64::NEG_INFINITY;
    for n in 0..timage.len() {
        for i in 0..H {
            for j in 0..W {
                for k in 0..C {
                    m = m.max(timage[n][i][j][k]);
                }
            }
        }
    }
    m
}

// ----- traced calls: `tf.multiply` element by element -----------------------------------

#[grad]
pub(crate) fn _trace_mul(a: f64, b: f64) -> f64 {
    let out = a * b;
    let c = 3;
    let _ = c;
    out
}

#[grad]
pub(crate) fn tfe_trace_fn(t: &[f64]) -> f64 {
    t.iter().map(|&x| _trace_mul(x, x)).sum()
}

#[grad]
pub(crate) fn _nontrace_mul(a: f64, b: f64) -> f64 {
    let out = a * b;
    out
}

#[grad]
pub(crate) fn tfe_notrace_fn(t: &[f64]) -> f64 {
    let result = t.iter().map(|&x| _nontrace_mul(x, x)).sum();
    result
}

// ----- function calls --------------------------------------------------------------------

#[grad]
pub(crate) fn _inner_fn(a: f64, b: f64) -> f64 {
    a * b
}

#[grad]
pub(crate) fn mul_with_call(a: f64, b: f64) -> f64 {
    _inner_fn(a, b)
}

#[grad]
pub(crate) fn if_mul_with_call(a: f64, b: f64) -> f64 {
    if a > b {
        _inner_fn(a, b)
    } else {
        _inner_fn(b, a)
    }
}

#[grad]
pub(crate) fn iterpower_with_call(mut a: f64, n: usize) -> f64 {
    for _ in 0..n {
        a = _inner_fn(a, a);
    }
    a
}

#[grad]
pub(crate) fn nested_call(a: f64, b: f64) -> f64 {
    mul_with_call(a, b)
}

// ----- subscripts ----------------------------------------------------------------------

/// Python's tuple `x = a, b, c` indexed at run time: an array in Rust.
#[grad]
pub(crate) fn passthru_pack(a: f64, b: f64, c: f64, i: usize) -> f64 {
    let x = [a, b, c];
    x[i]
}

// ----- misc ------------------------------------------------------------------------------

#[grad]
pub(crate) fn listcomp(a: &[f64]) -> f64 {
    a.iter().map(|i| i * 3.0).sum()
}

#[grad]
pub(crate) fn while_big(mut a: f64) -> f64 {
    while a.abs() > 0.1 {
        a = a * 0.5;
    }
    a
}

#[grad]
pub(crate) fn active_subscript(x: &[f64]) -> f64 {
    let mut y = vec![0.0; x.len()];
    for i in 0..x.len() {
        y[i] = x[i];
    }
    y.iter().sum()
}

#[grad]
pub(crate) fn init_array_grad_maybe_active(x: &[f64]) -> f64 {
    let mut h = vec![[0.0; 3]; x.len()];
    for t in 0..h.len() {
        for j in 0..3 {
            h[t][j] = x[t];
        }
    }
    let mut s = 0.0;
    for t in 0..h.len() {
        for j in 0..3 {
            s += h[t][j];
        }
    }
    s
}

#[grad]
pub(crate) fn slicing(x: &[f64]) -> f64 {
    x[1..].iter().sum()
}

/// Tangent's shapes: `inputs` 3×2, `W` 2×3, hidden state 4×3.
#[grad]
pub(crate) fn rnn(inputs: &[[f64; 2]; 3], w: &[[f64; 3]; 2]) -> f64 {
    let mut h = [[0.0; 3]; 4];
    for t in 0..3 {
        for j in 0..3 {
            let mut dot = 0.0;
            for k in 0..2 {
                dot += inputs[t][k] * w[k][j];
            }
            h[t + 1][j] = dot + h[t][j];
        }
    }
    let mut s = 0.0;
    for t in 1..4 {
        for j in 0..3 {
            s += h[t][j];
        }
    }
    s
}

#[grad]
pub(crate) fn augassign(a: f64) -> f64 {
    let mut x = a * a;
    x *= x;
    x
}

/// Tangent's shapes with `D = 3`: `x`, `h` and `b` are 1×D rows, `U` and `W` D×D.
pub(crate) const D: usize = 3;

#[grad]
pub(crate) fn bilinear(
    x: &[f64; D],
    h: &[f64; D],
    u: &[[f64; D]; D],
    w: &[[f64; D]; D],
    b: &[f64; D],
) -> f64 {
    let mut s = 0.0;
    for j in 0..D {
        let mut y = 0.0;
        for i in 0..D {
            y += x[i] * w[i][j];
        }
        let mut hu = 0.0;
        for i in 0..D {
            hu += h[i] * u[i][j];
        }
        y = y + hu;
        y = y + b[j];
        y = y.tanh();
        s += y;
    }
    s
}

#[grad]
pub(crate) fn gradgrad_pow(mut a: f64, b: f64) -> f64 {
    if a >= 0.0 {
        a = a.powf(b);
    } else {
        a = (-a).powf(b);
    }
    a
}

#[grad]
pub(crate) fn gradgrad_pow_twice(mut a: f64) -> f64 {
    a = a * a;
    let y = a * a;
    y
}

#[grad]
#[allow(unused_assignments)]
pub(crate) fn gradgrad_chain_of_mults(a: f64) -> f64 {
    let mut b = a; // as in Tangent: forces overwrite protection
    b = a * a;
    let c = b * b;
    let d = c * c;
    d
}

#[grad]
pub(crate) fn gradgrad_chain_of_multcalls(a: f64) -> f64 {
    let b = mul(a, a);
    let c = mul(b, b);
    let d = mul(c, c);
    d
}

#[grad]
pub(crate) fn extended_slice(x: &[f64]) -> f64 {
    x.iter().step_by(2).sum()
}
