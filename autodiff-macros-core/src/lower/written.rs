//! Calls that write through `&mut` inside a body: `step(&mut y, dt);`.
//!
//! A `#[grad]` function that returns nothing and writes one `&mut` parameter has a hidden
//! twin returning what it leaves there (`inplace`): `__step_inplace(y, dt) -> [f64; 2]`,
//! with every mode the function was asked for. A caller's statement is followed as the
//! assignment of that value, which the rest of lowering knows (an array-returning call
//! for an array, a call of numbers for a number):
//!
//! ```text
//! step(&mut y, dt);   →   y = __step_inplace(y, dt);
//! ```
//! The twin computes the same bits as the original, so the caller's value is unchanged.
//! A callee that also returns a value has stand-ins under the twin's name, whose bound
//! says why the call is not followed (`inplace::written_stand_ins`).

use super::Lowering;
use crate::ir::VarKind;
use syn::{Expr, ExprCall};

impl Lowering {
    /// Lowers the statement `call;` if it passes an argument as `&mut`; `false` when it
    /// passes none (a call of numbers, lowered as an expression).
    pub(super) fn written_call(&mut self, call: &ExprCall) -> bool {
        let written: Vec<usize> = call
            .args
            .iter()
            .enumerate()
            .filter(|(_, arg)| {
                matches!(super::control::strip(arg), Expr::Reference(r) if r.mutability.is_some())
            })
            .map(|(k, _)| k)
            .collect();
        let Some(&first) = written.first() else {
            return false;
        };
        if let Some(&second) = written.get(1) {
            self.error(
                &call.args[second],
                "#[grad] follows a call that writes through one `&mut` argument, the one \
                 its callee returns nothing but; this call writes through several: return \
                 them from the callee instead",
            );
            return true;
        }
        let Expr::Path(func) = &*call.func else {
            self.error(&call.func, UNSUPPORTED);
            return true;
        };
        let Expr::Reference(reference) = super::control::strip(&call.args[first]) else {
            return true;
        };
        let target = super::control::strip(&reference.expr);
        let var = self.named_var(target);
        let followed = var.is_some_and(|var| {
            let v = &self.vars[var];
            v.kind == VarKind::Real && !v.slice && v.dims.len() <= 1 && !self.structs.contains(&var)
        });
        if !followed || func.qself.is_some() {
            self.error(reference, UNSUPPORTED);
            return true;
        }
        // `y = __step_inplace(…, y, …);`, the name at the user's callee.
        let mut twin = func.clone();
        if let Some(last) = twin.path.segments.last_mut() {
            last.ident = crate::inplace::twin_ident(&last.ident);
        }
        let mut rewritten = call.clone();
        *rewritten.func = Expr::Path(twin);
        rewritten.args[first] = target.clone();
        let assign: Expr = syn::parse_quote!(#target = #rewritten);
        self.expr_statement(&assign);
        true
    }
}

const UNSUPPORTED: &str = "#[grad] follows a call that writes through `&mut` (`step(&mut y, \
                           dt);`) when it is a statement calling a function by name, and `y` \
                           is a local number or array, or a `mut` parameter; write the update \
                           in this function, or return the new value from the callee \
                           (`y = step(y, dt);`)";
