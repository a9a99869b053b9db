//! Closures bound to a name and called: `let sq = |t: f64| t * t; sq(a) + sq(b)`.
//!
//! Such a closure is inlined where it is called, as Rust's optimizer would: the arguments
//! become variables bound to the closure's parameters, and its body is lowered in a scope
//! of its own. The names its body takes from around it mean what they meant where the
//! closure was made (they are looked up then), so a later `let` of the same name does not
//! change them. A `move` closure is refused: it copies its captures when it is made, and
//! inlined it would read them later.

use super::iter::Item;
use super::*;
use syn::visit::Visit;

/// A closure bound to a name: its expression, and the variables of the names its body
/// uses that were in scope where it was made.
#[derive(Clone)]
pub(super) struct NamedClosure {
    closure: syn::ExprClosure,
    captured: Vec<(Ident, VarId)>,
}

impl Lowering {
    /// `let name = |params| body;`: the closure, kept for its calls under `name`.
    pub(super) fn named_closure(&mut self, ident: &Ident, closure: &syn::ExprClosure) {
        // Refused, but still bound, so that its calls give no second error.
        if let Some(token) = &closure.capture {
            self.error(
                token,
                "#[grad] inlines a closure where it is called, and a `move` closure copies \
                 what it captures when it is made: write it without `move`",
            );
        }
        if let Some(token) = &closure.asyncness {
            self.error(token, "#[grad] does not support `async` closures");
        }
        let mut names = Names::default();
        names.visit_expr(&closure.body);
        let captured = names
            .0
            .into_iter()
            .filter_map(|name| Some((name.clone(), self.scopes.lookup(&name)?)))
            .collect();
        // A name for the closure that scopes like a variable's (shadowing, blocks); it is
        // never declared in the generated code.
        let placeholder = self.declare_hidden(VarKind::Int, Num::Int);
        self.named_closures.insert(
            placeholder,
            NamedClosure {
                closure: closure.clone(),
                captured,
            },
        );
        self.scopes.bind(ident, placeholder);
    }

    /// The named closure `name` refers to, if it refers to one.
    pub(super) fn closure_named(&self, ident: &Ident) -> Option<NamedClosure> {
        let var = self.scopes.lookup(ident)?;
        self.named_closures.get(&var).cloned()
    }

    /// `name(args)` of a named closure: the arguments into variables, then the body with
    /// the parameters bound to them.
    pub(super) fn call_named_closure(
        &mut self,
        named: NamedClosure,
        call: &syn::ExprCall,
    ) -> NodeId {
        let NamedClosure { closure, captured } = named;
        if closure.inputs.len() != call.args.len() {
            return self.error(
                call,
                format!(
                    "this closure takes {} argument(s), and {} are given",
                    closure.inputs.len(),
                    call.args.len()
                ),
            );
        }
        let args: Vec<VarId> = call
            .args
            .iter()
            .map(|arg| {
                let value = self.collect(|this| this.expr(arg));
                self.let_value(value)
            })
            .collect();
        self.scopes.push();
        self.closures += 1;
        for (ident, var) in &captured {
            self.scopes.bind(ident, *var);
        }
        for (pat, var) in closure.inputs.iter().zip(args) {
            self.bind(pat, Item::Var(var));
        }
        let value = self.expr(&closure.body);
        self.closures -= 1;
        self.scopes.pop();
        value
    }
}

/// The single names (`x`, not `m::x`) an expression reads.
#[derive(Default)]
struct Names(Vec<Ident>);

impl<'ast> Visit<'ast> for Names {
    fn visit_expr_path(&mut self, path: &'ast syn::ExprPath) {
        if let Some(ident) = path.path.get_ident() {
            if !self.0.contains(ident) {
                self.0.push(ident.clone());
            }
        }
    }
}
