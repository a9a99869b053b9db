//! Second order on a [`Tape`]: Hessian–vector products by forward over reverse.
//!
//! Each node records the operation that made it ([`Op`], one byte). [`Tape::hvp`] runs
//! two sweeps over the recorded nodes:
//!
//! 1. forward, in creation order: the tangent `ṫᵢ` of every node along the direction
//!    (as [`Tape::jvp`]);
//! 2. reverse, from the output down: the adjoint `āᵢ` of every node, as in
//!    [`Var::gradient`], and its tangent `ȧᵢ`. A node `i` with parents `p_k`, partials
//!    `∂_k` and local second partials `H_kj` passes on
//!    `ā_{p_k} += ∂_k·āᵢ` and `ȧ_{p_k} += ∂_k·ȧᵢ + āᵢ·Σ_j H_kj·ṫ_{p_j}`.
//!
//! At the inputs, `ā` is the gradient and `ȧ` the product of the Hessian with the
//! direction. The local second partials come from [`rules::second`] at the parents'
//! values, only for the nodes the output depends on, only when asked.

use super::{Nodes, Tape, Var, NONE};
use crate::rules::second;

/// The operation that made a node, as far as its second partials go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
    /// No second partials: inputs, sums, constant multiples, kinks and steps.
    Linear,
    /// A function of its one variable operand.
    Unary(Unary),
    /// A function of its one variable operand and a constant, kept in the node's second
    /// partial slot.
    WithConstant(WithConstant),
    /// A function of its two variable operands, in the order of its rule.
    Binary(Binary),
}

macro_rules! unary_ops {
    ($($variant:ident => $rule:ident,)*) => {
        /// An operation of one variable operand with second partials.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub(super) enum Unary {
            $($variant,)*
        }

        impl Unary {
            /// `f''(x)`.
            fn second(self, x: f64) -> f64 {
                match self {
                    $(Unary::$variant => second::$rule(x),)*
                }
            }
        }
    };
}

unary_ops! {
    Recip => recip,
    Sqrt => sqrt,
    Cbrt => cbrt,
    Exp => exp,
    Exp2 => exp2,
    ExpM1 => exp_m1,
    Ln => ln,
    Ln1p => ln_1p,
    Log2 => log2,
    Log10 => log10,
    Sin => sin,
    Cos => cos,
    Tan => tan,
    Asin => asin,
    Acos => acos,
    Atan => atan,
    Sinh => sinh,
    Cosh => cosh,
    Tanh => tanh,
    Asinh => asinh,
    Acosh => acosh,
    Atanh => atanh,
    Sigmoid => sigmoid,
}

/// An operation of one variable operand `x` and a constant `c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum WithConstant {
    /// `x.powi(c)`.
    Powi,
    /// `x.powf(c)`.
    PowfBase,
    /// `x.log(c)`.
    Log,
    /// `x.atan2(c)` (`x` is `y`).
    Atan2,
    /// `x.hypot(c)`.
    Hypot,
    /// `c / x`.
    DivLeft,
}

impl WithConstant {
    /// `∂²f/∂x²`.
    fn second(self, x: f64, c: f64) -> f64 {
        match self {
            // The exponent was an `i32`: the conversion back is exact.
            #[allow(clippy::cast_possible_truncation)]
            WithConstant::Powi => second::powi(x, c as i32),
            WithConstant::PowfBase => second::powf_wrt_base(x, c),
            WithConstant::Log => second::log_wrt_x(x, c),
            WithConstant::Atan2 => second::atan2(x, c)[0],
            WithConstant::Hypot => second::hypot(x, c)[0],
            WithConstant::DivLeft => second::div(c, x)[2],
        }
    }
}

/// An operation of two variable operands with second partials.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Binary {
    /// `x * y` (and `x · a` of `x.mul_add(a, b)`).
    Mul,
    /// `x / y`.
    Div,
    /// `x.powf(y)`.
    Powf,
    /// `x.log(y)`.
    Log,
    /// `y.atan2(x)`.
    Atan2,
    /// `x.hypot(y)`.
    Hypot,
}

impl Binary {
    /// `[∂²f/∂x², ∂²f/∂x∂y, ∂²f/∂y²]`.
    fn second(self, x: f64, y: f64) -> [f64; 3] {
        match self {
            Binary::Mul => [0.0, 1.0, 0.0],
            Binary::Div => second::div(x, y),
            Binary::Powf => second::powf(x, y),
            Binary::Log => second::log(x, y),
            Binary::Atan2 => second::atan2(x, y),
            Binary::Hypot => second::hypot(x, y),
        }
    }
}

/// What a binary operation records: with two variable operands, with a constant on the
/// right, with a constant on the left (`None`: no second partials).
#[derive(Clone, Copy)]
pub(super) struct BinaryOps {
    pub both: Op,
    pub right: Option<WithConstant>,
    pub left: Option<WithConstant>,
}

impl BinaryOps {
    /// `+`, `-`, `max`, `min`.
    pub const LINEAR: BinaryOps = BinaryOps {
        both: Op::Linear,
        right: None,
        left: None,
    };
    /// `*`: linear in each operand.
    pub const MUL: BinaryOps = BinaryOps {
        both: Op::Binary(Binary::Mul),
        right: None,
        left: None,
    };
    /// `/`: `x / c` is linear, `c / x` is not.
    pub const DIV: BinaryOps = BinaryOps {
        both: Op::Binary(Binary::Div),
        right: None,
        left: Some(WithConstant::DivLeft),
    };

    /// A method `x.f(y)` with second partials in both arguments.
    pub const fn curved(both: Binary, right: WithConstant) -> BinaryOps {
        BinaryOps {
            both: Op::Binary(both),
            right: Some(right),
            left: None,
        }
    }
}

impl Nodes {
    /// Adds the second-order part of node `i`'s pullback, `adjoint · H · ṫ` over its
    /// parents, into `adjoint_tangent`. A parent that no input reaches has no tangent and
    /// contributes nothing.
    fn second_order(
        &self,
        i: usize,
        adjoint: f64,
        tangent: &[f64],
        has_tangent: &[bool],
        adjoint_tangent: &mut [f64],
    ) {
        let op = self.ops[i];
        if op == Op::Linear {
            return;
        }
        let [p0, p1] = self.parents[i];
        let p0 = p0 as usize;
        let x = self.values[p0];
        match op {
            Op::Linear => {}
            Op::Unary(op) => {
                if has_tangent[p0] {
                    adjoint_tangent[p0] += adjoint * op.second(x) * tangent[p0];
                }
            }
            Op::WithConstant(op) => {
                if has_tangent[p0] {
                    let c = self.partials[i][1];
                    adjoint_tangent[p0] += adjoint * op.second(x, c) * tangent[p0];
                }
            }
            Op::Binary(op) => {
                debug_assert_ne!(p1, NONE);
                let p1 = p1 as usize;
                let [xx, xy, yy] = op.second(x, self.values[p1]);
                if has_tangent[p0] {
                    let t = tangent[p0];
                    adjoint_tangent[p0] += adjoint * xx * t;
                    adjoint_tangent[p1] += adjoint * xy * t;
                }
                if has_tangent[p1] {
                    let t = tangent[p1];
                    adjoint_tangent[p0] += adjoint * xy * t;
                    adjoint_tangent[p1] += adjoint * yy * t;
                }
            }
        }
    }
}

impl Tape {
    /// The gradient of `output` with respect to `inputs`, and the product of its Hessian
    /// with `direction` (one entry per input), from one forward and one reverse sweep over
    /// the nodes (forward over reverse). The second partials of each operation come from
    /// [`rules::second`](crate::rules::second), evaluated only for the nodes `output`
    /// depends on.
    ///
    /// ```
    /// use autodiff_runtime::Tape;
    ///
    /// let tape = Tape::new();
    /// let (x, y) = (tape.var(1.0), tape.var(1.0));
    /// let f = 100.0 * (y - x.powi(2)).powi(2) + (1.0 - x).powi(2); // Rosenbrock
    /// let (gradient, hv) = tape.hvp(f, &[x, y], &[1.0, 0.0]);
    /// assert_eq!(gradient, [0.0, 0.0]);
    /// assert_eq!(hv, [802.0, -400.0]); // the first column of the Hessian
    /// ```
    ///
    /// # Panics
    /// If `inputs` and `direction` differ in length, or a `Var` is of another tape.
    #[must_use]
    pub fn hvp(
        &self,
        output: Var<'_>,
        inputs: &[Var<'_>],
        direction: &[f64],
    ) -> (Vec<f64>, Vec<f64>) {
        assert_eq!(inputs.len(), direction.len(), "one direction per input");
        for v in inputs.iter().chain(std::iter::once(&output)) {
            assert_eq!(v.tape.id, self.id, "a Var of another Tape");
        }
        let nodes = self.nodes.borrow();
        let out = output.index();
        let (tangent, has_tangent) = nodes.tangents(out, inputs, direction);
        let mut adjoint = vec![0.0; out + 1];
        let mut adjoint_tangent = vec![0.0; out + 1];
        adjoint[out] = 1.0;
        nodes.sweep(out, |i, edges| {
            let (a, at) = (adjoint[i], adjoint_tangent[i]);
            for &(parent, partial) in edges {
                adjoint[parent] += partial * a;
                adjoint_tangent[parent] += partial * at;
            }
            nodes.second_order(i, a, &tangent, &has_tangent, &mut adjoint_tangent);
        });
        let at_inputs = |values: &[f64]| -> Vec<f64> {
            inputs
                .iter()
                .map(|input| values.get(input.index()).copied().unwrap_or(0.0))
                .collect()
        };
        (at_inputs(&adjoint), at_inputs(&adjoint_tangent))
    }

    /// The Hessian of `output` with respect to `inputs`: row `i`, column `j` is
    /// `∂²output/∂inputs[i]∂inputs[j]`. One [`Tape::hvp`] per input gives a column each;
    /// the result is made symmetric by averaging `H[i][j]` and `H[j][i]`, which differ at
    /// most in rounding.
    ///
    /// ```
    /// use autodiff_runtime::Tape;
    ///
    /// let tape = Tape::new();
    /// let (x, y) = (tape.var(2.0), tape.var(3.0));
    /// let f = x * x * y + y.sin();
    /// let h = tape.hessian(f, &[x, y]);
    /// assert_eq!(h, [[6.0, 4.0], [4.0, -3.0f64.sin()]]);
    /// ```
    ///
    /// # Panics
    /// If a `Var` is of another tape.
    #[must_use]
    pub fn hessian(&self, output: Var<'_>, inputs: &[Var<'_>]) -> Vec<Vec<f64>> {
        let n = inputs.len();
        let mut basis = vec![0.0; n];
        let columns: Vec<Vec<f64>> = (0..n)
            .map(|j| {
                basis[j] = 1.0;
                let column = self.hvp(output, inputs, &basis).1;
                basis[j] = 0.0;
                column
            })
            .collect();
        (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| {
                        if i == j {
                            columns[j][i]
                        } else {
                            0.5 * (columns[j][i] + columns[i][j])
                        }
                    })
                    .collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::Tape;

    /// Central differences of the tape's gradient along `direction`.
    fn differences(f: impl Fn(&Tape, &[crate::Var<'_>]) -> f64, x: &[f64], d: &[f64]) -> Vec<f64> {
        let gradient = |s: f64| -> Vec<f64> {
            let tape = Tape::new();
            let vars: Vec<_> = x.iter().zip(d).map(|(x, d)| tape.var(x + s * d)).collect();
            let _ = f(&tape, &vars);
            let out = crate::Var {
                tape: &tape,
                index: u32::try_from(tape.len() - 1).unwrap(),
            };
            let g = out.gradient();
            vars.iter().map(|&v| g[v]).collect()
        };
        let h = 1e-6;
        let (up, down) = (gradient(h), gradient(-h));
        up.iter()
            .zip(&down)
            .map(|(u, d)| (u - d) / (2.0 * h))
            .collect()
    }

    #[test]
    fn every_curved_operation_against_differences_of_the_gradient() {
        // One expression per kind of node: unary, with a constant (right and left),
        // binary, the third edge of mul_add, and a variable used twice.
        type Case = (&'static str, fn(&Tape, &[crate::Var<'_>]) -> f64);
        let cases: [Case; 9] = [
            ("unary", |_, v| {
                let (x, y) = (v[0], v[1]);
                ((x * y).tanh() + x.sin() * y.exp() + (x + y).sqrt().ln() - x.atan() * y.cbrt()
                    + (0.3 * x).asin()
                    + (x * 0.2).acos() * y.sigmoid()
                    + (x + 1.0).acosh() * (0.4 * y).atanh()
                    + x.asinh()
                    + x.recip() * y.tan()
                    + x.exp2() * y.exp_m1()
                    + x.ln_1p() * y.log2()
                    + x.log10()
                    + x.sinh() * y.cosh()
                    + x.cos()
                    + (2.0 * x).relu() * y.abs())
                .value()
            }),
            ("constants", |_, v| {
                let (x, y) = (v[0], v[1]);
                (x.powi(3) * y.powf(2.5) + x.log(3.0) + y.atan2(0.7) + x.hypot(2.0) - 2.0 / y
                    + y / 4.0)
                    .value()
            }),
            ("binary", |_, v| {
                let (x, y) = (v[0], v[1]);
                (x.powf(y) + x.log(y + 2.0) + y.atan2(x) + x.hypot(y) + x / y).value()
            }),
            ("mul_add", |_, v| {
                let (x, y) = (v[0], v[1]);
                (x.mul_add(y, x * y) * y.mul_add(2.0, x) + x.mul_add(3.0, y).powi(2)).value()
            }),
            ("reuse", |_, v| {
                let x = v[0];
                let s = x * x;
                (s * s + s.sin() * x).value()
            }),
            ("shared", |_, v| {
                let (x, y) = (v[0], v[1]);
                let u = x * y;
                let w = u.exp();
                (w * u + w / (1.0 + u) + u.powi(2)).value()
            }),
            ("clamp", |_, v| {
                let (x, y) = (v[0], v[1]);
                (x.clamp(0.0, 2.0) * y + x.max(y) * x.min(y)).value()
            }),
            ("square", |_, v| {
                let (x, y) = (v[0], v[1]);
                ((x * x) * (y * y)).value()
            }),
            ("unrelated", |tape, v| {
                let (x, y) = (v[0], v[1]);
                // A node the output does not depend on, with an infinite partial.
                let _ = (tape.var(0.0)).sqrt();
                (x * y).powi(2).value()
            }),
        ];
        for (name, f) in cases {
            for (x, d) in [([0.8, 1.3], [1.0, 0.0]), ([0.8, 1.3], [0.3, -0.7])] {
                let tape = Tape::new();
                let vars = [tape.var(x[0]), tape.var(x[1])];
                let _ = f(&tape, &vars);
                let out = crate::Var {
                    tape: &tape,
                    index: u32::try_from(tape.len() - 1).unwrap(),
                };
                let (_, hv) = tape.hvp(out, &vars, &d);
                let fd = differences(f, &x, &d);
                for (a, b) in hv.iter().zip(&fd) {
                    assert!(
                        (a - b).abs() < 1e-6 * b.abs().max(1.0),
                        "{name}: {hv:?} against {fd:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn hessian_is_symmetric_and_exact_on_polynomials() {
        let tape = Tape::new();
        let v: Vec<_> = [1.5, -2.0, 0.5].iter().map(|&x| tape.var(x)).collect();
        let f = v[0] * v[0] * v[1] + v[1] * v[2].powi(3) - 2.0 * v[0] * v[2];
        let h = tape.hessian(f, &v);
        let (x, y, z) = (1.5, -2.0, 0.5);
        let exact = [
            [2.0 * y, 2.0 * x, -2.0],
            [2.0 * x, 0.0, 3.0 * z * z],
            [-2.0, 3.0 * z * z, 6.0 * y * z],
        ];
        assert_eq!(h, exact);
    }

    #[test]
    fn square_at_zero_has_curvature_two() {
        let tape = Tape::new();
        let x = tape.var(0.0);
        let y = tape.var(0.0);
        let f = x.powi(2) + y.powf(2.0) + x * y;
        assert_eq!(tape.hessian(f, &[x, y]), [[2.0, 1.0], [1.0, 2.0]]);
    }

    #[test]
    fn inputs_after_the_output_get_zeros() {
        let tape = Tape::new();
        let x = tape.var(2.0);
        let f = x.powi(3);
        let late = tape.var(1.0);
        let (g, hv) = tape.hvp(f, &[x, late], &[1.0, 1.0]);
        assert_eq!((g, hv), (vec![12.0, 0.0], vec![12.0, 0.0]));
    }
}
