//! Struct parameters: each field that holds numbers becomes a variable of its own, and the
//! body's field paths (`m.layer.w[i]`) are renamed to those variables before lowering, so
//! every other step treats a field like a parameter of its type.
//!
//! ```text
//! fn loss(m: &Mlp, x: f64) -> f64 {        var0 m (the struct: never read)
//!     m.w[0] * x + m.b                     var1 m·w: [f64; 2]   (param 0, `.w`)
//! }                                        var2 m·b: f64        (param 0, `.b`)
//!                                          var3 x
//!                                          body: m·w[0] * x + m·b
//! ```
//! `·` (U+00B7) is a character of identifiers that users do not type, so the new names
//! cannot clash with theirs, and reads well in error messages.

use super::*;
use crate::layout::{self, FieldKind};
use syn::visit_mut::{self, VisitMut};

/// How deep structs may nest inside one another.
const MAX_DEPTH: usize = 16;

impl Lowering {
    /// Declares the fields of the struct parameter `params[param]` named `ident`, of type
    /// `ty` (as written), each as a parameter variable.
    pub(super) fn struct_fields(
        &mut self,
        param: usize,
        ident: &Ident,
        ty: &Type,
        layouts: &Layouts,
    ) {
        let name = ident.to_string();
        let name = name.trim_start_matches("r#");
        self.nested_fields(
            param,
            ident,
            ty,
            layouts,
            name,
            quote!(),
            true,
            &mut Vec::new(),
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn nested_fields(
        &mut self,
        param: usize,
        ident: &Ident,
        ty: &Type,
        layouts: &Layouts,
        name: &str,
        access: TokenStream,
        differentiable: bool,
        enclosing: &mut Vec<String>,
    ) {
        if enclosing.len() > MAX_DEPTH {
            self.errors.at(ty, "structs nest too deeply for #[grad]");
            return;
        }
        // This struct's type, for the fields that are structs (`enclosing` holds the
        // types of those this one is a field of).
        let this = ty.to_token_stream().to_string();
        // (the field as written after `.`, what it holds, skipped)
        let fields: Vec<(TokenStream, FieldKind, bool)> = if let Type::Tuple(tuple) = ty {
            tuple
                .elems
                .iter()
                .enumerate()
                .map(|(position, ty)| {
                    let index = syn::Index::from(position);
                    (quote!(#index), FieldKind::of(ty), false)
                })
                .collect()
        } else {
            let Some(input) = layouts.get(ty) else {
                self.errors.at(
                    ty,
                    "#[grad] could not learn this struct's fields: derive them with \
                     `#[derive(autodiff::Differentiable)]` on the struct",
                );
                return;
            };
            match layout::parse(input) {
                Ok(layout) => layout
                    .fields
                    .into_iter()
                    .map(|field| (field.ident.to_token_stream(), field.kind, field.skip))
                    .collect(),
                Err(error) => {
                    self.errors.push(error);
                    return;
                }
            }
        };
        for (member, kind, skip) in fields {
            let access = quote!(#access . #member);
            let label = member.to_string();
            let name = format!("{name}·{}", label.trim_start_matches("r#"));
            let differentiable = differentiable && !skip;
            if skip && matches!(kind, FieldKind::Struct(_)) {
                continue; // a constant of a type #[grad] does not read
            }
            let (kind, dims, num, slice) = match kind {
                FieldKind::Real(dims) => (VarKind::Real, dims, Num::Real, false),
                FieldKind::Vector(dims) => (VarKind::Real, dims, Num::Real, true),
                FieldKind::Int => (VarKind::Int, Vec::new(), Num::Int, false),
                FieldKind::Bool => (VarKind::Bool, Vec::new(), Num::Bool, false),
                FieldKind::Struct(ty) => {
                    // A layout that says a struct holds itself, at any depth (which no
                    // struct of Rust can: it would have no size), would unfold without end.
                    let own = ty.to_token_stream().to_string();
                    if own == this || enclosing.contains(&own) {
                        self.errors
                            .at(&ty, "a struct that holds a field of its own type");
                        continue;
                    }
                    // The struct as a whole, for calls (`self.layer.forward(x)`).
                    let binding = Ident::new(&name, ident.span());
                    let var = self.declare_struct(&binding, VarKind::Real);
                    self.fields.push(FieldParam {
                        param,
                        access: access.clone(),
                        var,
                        differentiable,
                        strukt: true,
                    });
                    self.field_names.insert(name.replace('·', "."), binding);
                    enclosing.push(this.clone());
                    self.nested_fields(
                        param,
                        ident,
                        &ty,
                        layouts,
                        &name,
                        access,
                        differentiable,
                        enclosing,
                    );
                    enclosing.pop();
                    continue;
                }
                // A skipped field of another type: the body cannot read it.
                FieldKind::Other => continue,
            };
            let binding = Ident::new(&name, ident.span());
            let var = self.declare(&binding, kind, dims, num);
            self.vars[var].is_param = true;
            self.vars[var].slice = slice;
            self.fields.push(FieldParam {
                param,
                access,
                var,
                differentiable: differentiable && kind == VarKind::Real,
                strukt: false,
            });
            let path = name.replace('·', ".");
            self.field_names.insert(path, binding);
        }
    }
}

/// The body with every path to a field of a struct parameter (`m.layer.w`) replaced by the
/// name of the field's variable (`m·layer·w`). Paths to something else are left alone.
pub(super) fn rename(block: &syn::Block, names: &HashMap<String, Ident>) -> syn::Block {
    let mut block = block.clone();
    if !names.is_empty() {
        Rename { names }.visit_block_mut(&mut block);
    }
    block
}

pub(super) struct Rename<'a> {
    pub(super) names: &'a HashMap<String, Ident>,
}

impl VisitMut for Rename<'_> {
    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        // `vec![0.0; m.v.len()]`: a macro's tokens are not an expression to visit, so the
        // repeat form is parsed, renamed and put back.
        if let Expr::Macro(mac) = expr {
            let is_vec = mac
                .mac
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "vec");
            let tokens = &mac.mac.tokens;
            if is_vec {
                if let Ok(mut repeat) = syn::parse2::<syn::ExprRepeat>(quote::quote!([#tokens])) {
                    self.visit_expr_mut(&mut repeat.expr);
                    self.visit_expr_mut(&mut repeat.len);
                    let (element, len) = (&repeat.expr, &repeat.len);
                    mac.mac.tokens = quote::quote!(#element; #len);
                }
                return;
            }
        }
        if let Expr::Field(field) = expr {
            if let Some(ident) = path_of(field).and_then(|path| self.names.get(&path)) {
                let mut ident = ident.clone();
                ident.set_span(field.member.span());
                *expr = Expr::Path(syn::ExprPath {
                    attrs: Vec::new(),
                    qself: None,
                    path: ident.into(),
                });
                return;
            }
        }
        visit_mut::visit_expr_mut(self, expr);
    }
}

/// `m.layer.w` as a string, for a chain of named fields on a name.
fn path_of(field: &syn::ExprField) -> Option<String> {
    let member = match &field.member {
        syn::Member::Named(name) => name.to_string().trim_start_matches("r#").to_owned(),
        syn::Member::Unnamed(index) => index.index.to_string(),
    };
    let base = match &*field.base {
        Expr::Path(path) if path.qself.is_none() => {
            let name = path.path.get_ident()?.to_string();
            name.trim_start_matches("r#").to_owned()
        }
        Expr::Field(inner) => path_of(inner)?,
        Expr::Paren(paren) => match &*paren.expr {
            Expr::Field(inner) => path_of(inner)?,
            _ => return None,
        },
        _ => return None,
    };
    Some(format!("{base}.{member}"))
}

/// Whether a field path starts at `self` (`self.w`, `self.layer.b`).
pub(super) fn on_self(field: &syn::ExprField) -> bool {
    match &*field.base {
        Expr::Path(path) => path.path.is_ident("self"),
        Expr::Field(inner) => on_self(inner),
        Expr::Paren(paren) => matches!(&*paren.expr, Expr::Field(inner) if on_self(inner)),
        _ => false,
    }
}
