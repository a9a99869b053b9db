//! Methods: `#[grad]` on an `impl` block and its methods, with `self` differentiated (a
//! struct deriving `Differentiable`) or constant (`wrt(..)` leaves it out), and associated
//! functions.
#![allow(clippy::needless_range_loop)] // the loops are written the way users write them

use autodiff::prelude::*;

mod common;

#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Quadratic {
    pub a: [f64; 2],
    pub c: f64,
    pub scale: u32,
}

#[grad]
impl Quadratic {
    /// `scale * (a0 x0² + a1 x1²) + c`.
    #[grad]
    pub fn eval(&self, x: [f64; 2]) -> f64 {
        let mut s = self.c;
        for i in 0..2 {
            s += self.scale as f64 * self.a[i] * x[i] * x[i];
        }
        s
    }

    /// `self` is a constant here.
    #[grad(wrt(x))]
    pub fn eval_in_x(&self, x: [f64; 2]) -> f64 {
        let mut s = self.c;
        for i in 0..2 {
            s += self.a[i] * x[i] * x[i];
        }
        s * self.scale as f64
    }

    /// An associated function: no `self`.
    #[grad]
    pub fn square(x: f64) -> f64 {
        x * x
    }

    /// A method without `#[grad]` is left alone.
    pub fn describe(&self) -> String {
        format!("{:?}", self.a)
    }
}

#[test]
fn method_gradient_in_self_and_arguments() {
    let q = Quadratic {
        a: [1.5, -0.5],
        c: 2.0,
        scale: 3,
    };
    let x = [0.7, 1.3];
    let (value, dq, dx) = q.eval_grad(x);
    assert_eq!(value.to_bits(), q.eval(x).to_bits());
    // Closed form.
    assert_eq!(dq.a, [3.0 * x[0] * x[0], 3.0 * x[1] * x[1]]);
    assert_eq!(dq.c, 1.0);
    assert_eq!(dq.scale, 3, "constants are copied into the partial");
    let expected_dx = [3.0 * 2.0 * 1.5 * x[0], 3.0 * 2.0 * -0.5 * x[1]];
    for k in 0..2 {
        assert!((dx[k] - expected_dx[k]).abs() < 1e-12);
    }
    // `_grad_into` is a method too.
    let mut buffer_q = q.zero_like();
    let mut buffer_x = [0.0; 2];
    let v = q.eval_grad_into(x, &mut buffer_q, &mut buffer_x);
    assert_eq!(v.to_bits(), value.to_bits());
    assert_eq!(buffer_q, dq);
    assert_eq!(q.describe(), "[1.5, -0.5]");
}

#[test]
fn constant_self_and_associated_functions() {
    let q = Quadratic {
        a: [2.0, 0.25],
        c: -1.0,
        scale: 2,
    };
    let x = [0.5, -2.0];
    let (value, dx) = q.eval_in_x_grad(x);
    assert_eq!(value.to_bits(), q.eval_in_x(x).to_bits());
    assert_eq!(dx, [2.0 * 2.0 * 2.0 * 0.5, 2.0 * 2.0 * 0.25 * -2.0]);
    assert_eq!(Quadratic::square_grad(3.0), (9.0, 6.0));
}

/// A type that does not derive `Differentiable`, with a method marked alone: `self` is a
/// constant.
pub struct Config {
    pub scale: f64,
    pub offsets: [f64; 2],
    pub rounds: usize,
}

impl Config {
    #[grad]
    pub fn response(&self, x: f64, y: f64) -> f64 {
        let mut r = 0.0;
        for k in 0..self.rounds {
            r += (self.scale * x + self.offsets[k % 2] * y).sin();
        }
        r
    }

    /// An associated function marked alone, recognised by its use of `Self`.
    #[grad]
    pub fn damped(x: f64) -> f64 {
        Self::DAMPING * x.tanh()
    }

    /// Damping of `damped`.
    pub const DAMPING: f64 = 0.5;
}

#[test]
fn a_method_marked_alone_has_a_constant_self() {
    let c = Config {
        scale: 1.5,
        offsets: [0.5, -0.25],
        rounds: 3,
    };
    let (x, y) = (0.4, 1.2);
    let (value, dx, dy) = c.response_grad(x, y);
    assert_eq!(value.to_bits(), c.response(x, y).to_bits());
    let (mut ex, mut ey) = (0.0, 0.0);
    for k in 0..3 {
        let o = c.offsets[k % 2];
        let cos = (1.5 * x + o * y).cos();
        ex += 1.5 * cos;
        ey += o * cos;
    }
    assert!((dx - ex).abs() < 1e-12 && (dy - ey).abs() < 1e-12);
    let (value, d) = Config::damped_grad(0.3);
    assert_eq!(value, Config::damped(0.3));
    assert!((d - 0.5 * (1.0 - 0.3f64.tanh().powi(2))).abs() < 1e-15);
}

// ----- a constant `self` -----------------------------------------------------------------

/// A type that does not derive `Differentiable`: its methods marked alone see a constant
/// `self`.
pub struct Gain {
    pub k: f64,
    pub w: [f64; 2],
}

impl Gain {
    fn doubled(&self) -> f64 {
        self.k * 2.0
    }

    #[grad(jvp, hvp)]
    fn square(&self, x: f64) -> f64 {
        self.k * x * x
    }

    /// Float methods of `self`'s fields, a plain method of `self`, and a `#[grad]` method
    /// of `self`, each with a constant `self`.
    #[grad(jvp, hvp)]
    fn response(&self, x: f64) -> f64 {
        self.k.sqrt() * x + self.w[1].exp() * x + self.doubled() * x + self.square(x)
    }
}

/// A struct that derives `Differentiable`, whose methods leave `self` out with `wrt(..)`.
#[derive(Differentiable, Clone, Debug)]
pub struct Coil {
    pub w: f64,
    pub b: [f64; 2],
}

#[grad]
impl Coil {
    #[grad(jvp, hvp)]
    pub fn field(&self, x: f64) -> f64 {
        self.w * x + self.b[0].tanh()
    }

    #[grad(jvp, hvp, wrt(x))]
    pub fn flux(&self, x: f64) -> f64 {
        self.field(x) * x + self.b[1].cos() * x + 1.0
    }
}

#[test]
fn a_constant_self_reads_its_fields_and_calls_its_methods() {
    let gain = Gain {
        k: 4.0,
        w: [1.0, 0.3],
    };
    let x = 1.5;
    let (value, dx) = gain.response_grad(x);
    assert_eq!(value, gain.response(x));
    // √k + e^{w₁} + 2k + 2kx.
    let expected = 4.0f64.sqrt() + 0.3f64.exp() + 8.0 + 2.0 * 4.0 * x;
    common::assert_close(dx, expected, 1e-14, "∂response/∂x");
    let (_, tangent) = gain.response_jvp(x, 2.0);
    common::assert_close(tangent, 2.0 * expected, 1e-14, "jvp");
    let (_, g, hv) = gain.response_hvp(x, 1.0);
    common::assert_close(g, dx, 1e-14, "hvp's gradient");
    common::assert_close(hv, 8.0, 1e-14, "hvp");

    let coil = Coil {
        w: 2.0,
        b: [0.5, -0.4],
    };
    let (value, dx) = coil.flux_grad(x);
    assert_eq!(value, coil.flux(x));
    // (w x + tanh b₀) x + cos(b₁) x + 1: ∂/∂x = 2 w x + tanh b₀ + cos b₁.
    let expected = 2.0 * 2.0 * x + 0.5f64.tanh() + (-0.4f64).cos();
    common::assert_close(dx, expected, 1e-14, "∂flux/∂x");
    let (_, tangent) = coil.flux_jvp(x, -1.0);
    common::assert_close(tangent, -expected, 1e-14, "jvp");
    let (_, g, hv) = coil.flux_hvp(x, 1.0);
    common::assert_close(g, dx, 1e-14, "hvp's gradient");
    common::assert_close(hv, 4.0, 1e-14, "hvp");
}

// ----- a method called on a field, in forward mode and second order ----------------------

#[derive(Differentiable, Clone, Debug)]
pub struct Unit {
    pub w: [f64; 2],
}

#[derive(Differentiable, Clone, Debug)]
pub struct Named {
    pub unit: Unit,
    pub gain: f64,
}

#[grad]
impl Unit {
    #[grad(jvp, hvp)]
    pub fn forward(&self, x: f64) -> f64 {
        (self.w[0] * x + self.w[1]).tanh()
    }
}

#[grad(jvp, hvp)]
fn named_score(n: &Named, x: f64) -> f64 {
    n.unit.forward(x) * n.gain
}

#[grad]
impl Named {
    #[grad(jvp, hvp)]
    pub fn score(&self, x: f64) -> f64 {
        self.unit.forward(x) * self.gain * x
    }
}

#[test]
fn methods_called_on_fields_in_forward_mode_and_second_order() {
    let n = Named {
        unit: Unit { w: [0.4, -0.2] },
        gain: 1.5,
    };
    let x = 0.7;
    let zero = Named {
        unit: Unit { w: [0.0; 2] },
        gain: 0.0,
    };
    // ∂/∂x and ∂²/∂x² along x alone: g = gain·tanh(u), u = w₀x + w₁.
    let t = (0.4f64 * x - 0.2).tanh();
    let (d1, d2) = (
        1.5 * 0.4 * (1.0 - t * t),
        1.5 * 0.16 * -2.0 * t * (1.0 - t * t),
    );
    let (_, tangent) = named_score_jvp(&n, x, &zero, 1.0);
    common::assert_close(tangent, d1, 1e-14, "jvp");
    let (_, _, gx, _, hx) = named_score_hvp(&n, x, &zero, 1.0);
    common::assert_close(gx, d1, 1e-14, "hvp's gradient");
    common::assert_close(hx, d2, 1e-14, "hvp");
    // The method: x·g, whose second derivative is 2g' + x·g''.
    let (_, tangent) = n.score_jvp(x, &zero, 1.0);
    common::assert_close(tangent, 1.5 * t + x * d1, 1e-14, "method jvp");
    let (_, d_self, gx, _, hx) = n.score_hvp(x, &zero, 1.0);
    let (_, d_self_grad, gx_grad) = n.score_grad(x);
    common::assert_close(gx, gx_grad, 1e-14, "method hvp's gradient");
    common::assert_close(d_self.gain, d_self_grad.gain, 1e-14, "method hvp's ∂/∂gain");
    common::assert_close(hx, 2.0 * d1 + x * d2, 1e-14, "method hvp");
}

// ----- a method that leaves `self` out, called from other functions ----------------------

#[derive(Differentiable, Clone, Debug, PartialEq)]
pub struct Lens {
    pub w: f64,
}

#[grad(jvp, hvp)]
fn through(l: &Lens, x: f64) -> f64 {
    l.w * x
}

#[grad]
impl Lens {
    /// Differentiates `self`: the type derives `Differentiable`.
    #[grad(jvp, hvp)]
    pub fn power(&self, x: f64) -> f64 {
        self.w * x * x
    }

    #[grad(jvp, hvp, wrt(x))]
    pub fn bend(&self, x: f64) -> f64 {
        self.w * x * x
    }

    /// Passes `self` whole to a free function.
    #[grad(jvp, hvp, wrt(x))]
    pub fn relay(&self, x: f64) -> f64 {
        through(self, x) * x
    }
}

#[grad(jvp, hvp)]
fn optics(l: &Lens, x: f64) -> f64 {
    l.bend(x) + l.relay(x) + l.power(x)
}

#[test]
fn methods_that_leave_self_out_called_from_other_functions() {
    let (l, x) = (Lens { w: 2.0 }, 1.5);
    // optics = 3·w·x²: ∂/∂w = 3x², ∂/∂x = 6wx, ∂²/∂x² = 6w, ∂²/∂x∂w = 6x.
    let (value, dl, dx) = optics_grad(&l, x);
    assert_eq!(value, optics(&l, x));
    common::assert_close(dl.w, 3.0 * x * x, 1e-14, "∂/∂w");
    common::assert_close(dx, 6.0 * 2.0 * x, 1e-14, "∂/∂x");
    let (_, tangent) = optics_jvp(&l, x, &Lens { w: 1.0 }, 0.0);
    common::assert_close(tangent, 3.0 * x * x, 1e-14, "jvp along w");
    let (_, _, _, hl, hx) = optics_hvp(&l, x, &Lens { w: 0.0 }, 1.0);
    common::assert_close(hl.w, 6.0 * x, 1e-14, "∂²/∂x∂w");
    common::assert_close(hx, 6.0 * 2.0, 1e-14, "∂²/∂x²");
    // The method's own `_grad` keeps to `wrt(x)`; its pullback fills `self`'s buffer too.
    let (value, dx) = l.bend_grad(x);
    assert_eq!((value, dx), (4.5, 6.0));
    let (mut d_self, mut d_x) = (Lens { w: 0.0 }, 0.0);
    let value = l.bend_vjp(x, 2.0, &mut d_self, &mut d_x);
    assert_eq!((value, d_self.w, d_x), (4.5, 2.0 * x * x, 12.0));
}
