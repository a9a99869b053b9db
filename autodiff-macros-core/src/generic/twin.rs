//! A float type's twin of a function generic over its float type: `T` becomes `f64` (or
//! `f32`) and the generic spellings of constants and conversions become what a function of
//! that type writes.
//!
//! ```text
//! T                                  f64
//! T::from(0.5).unwrap()              0.5         (also from_f64, .expect(..))
//! T::from(2.0 * PI).unwrap()         const { (2.0_f64 * PI) as f32 }   (in the f32 twin)
//! T::from(n).unwrap()                (n as f64)  (also from_usize, from_i32, …)
//! T::zero(), T::one(), T::ZERO, …    0.0, 1.0, …
//! T::epsilon(), T::max_value(), …    f64::EPSILON, f64::MAX, …
//! T::PI(), T::PI, T::LN_2, …         ::core::f64::consts::PI, …
//! T::sqrt(x), <T as Float>::sqrt(x)  f64::sqrt(x)  (also Float::sqrt(x))
//! T::from_bool(b)                    if b { 1.0 } else { 0.0 }
//! x.to_usize().unwrap()              ((x) as usize)
//! vec![T::zero(); n]                 vec![0.0; n]
//! ```
//!
//! Every token put in keeps the span of the one it replaces, so an error in the twin
//! points at the user's code.

use crate::types::Float;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;
use syn::{Expr, GenericParam, ItemFn, WherePredicate};

/// The twin of `function` for `float`: named `__<name>_<float>`, without the type
/// parameter `t` (and its `where` bounds), every use of `t` made one of `float`.
pub fn twin(function: &ItemFn, t: &syn::Ident, float: Float) -> ItemFn {
    let mut twin = function.clone();
    twin.sig.ident = twin_ident(&function.sig.ident, float);
    let generics = &mut twin.sig.generics;
    generics.params = generics
        .params
        .iter()
        .filter(|param| !matches!(param, GenericParam::Type(ty) if ty.ident == *t))
        .cloned()
        .collect();
    if let Some(clause) = &mut generics.where_clause {
        clause.predicates = clause
            .predicates
            .iter()
            .filter(|predicate| {
                !matches!(predicate, WherePredicate::Type(p) if super::names(&p.bounded_ty, t))
            })
            .cloned()
            .collect();
        if clause.predicates.is_empty() {
            generics.where_clause = None;
        }
    }
    if generics.params.is_empty() {
        generics.lt_token = None;
        generics.gt_token = None;
    }
    let const_params = function
        .sig
        .generics
        .const_params()
        .map(|param| param.ident.clone())
        .collect();
    let mut monomorphise = Monomorphise {
        t,
        float,
        const_params,
    };
    for input in &mut twin.sig.inputs {
        monomorphise.visit_fn_arg_mut(input);
    }
    monomorphise.visit_return_type_mut(&mut twin.sig.output);
    monomorphise.visit_block_mut(&mut twin.block);
    twin
}

/// `__<name>_<float>`.
pub fn twin_ident(name: &syn::Ident, float: Float) -> syn::Ident {
    syn::Ident::new(&format!("__{name}_{}", float.name()), name.span())
}

/// The rewriting of `t` into `float`.
struct Monomorphise<'a> {
    t: &'a syn::Ident,
    float: Float,
    /// The function's const generic parameters.
    const_params: Vec<syn::Ident>,
}

impl Monomorphise<'_> {
    /// `float` as an identifier, at `span`.
    fn float_ident(&self, span: Span) -> syn::Ident {
        syn::Ident::new(self.float.name(), span)
    }

    /// The name of the item that `path` reaches through `t`: `sqrt` of `T::sqrt` or of
    /// `<T as Float>::sqrt`.
    fn through_t<'p>(
        &self,
        qself: Option<&syn::QSelf>,
        path: &'p syn::Path,
    ) -> Option<&'p syn::Ident> {
        match qself {
            Some(qself) if super::names(&qself.ty, self.t) => {
                path.segments.last().map(|segment| &segment.ident)
            }
            Some(_) => None,
            None if trait_path(path) => path.segments.last().map(|segment| &segment.ident),
            None => {
                let mut segments = path.segments.iter();
                let first = segments.next()?;
                let second = segments.next()?;
                (path.leading_colon.is_none()
                    && first.ident == *self.t
                    && segments.next().is_none())
                .then_some(&second.ident)
            }
        }
    }

    /// The value of the constant `name` of `t` (`T::zero()`, `T::EPSILON`, `T::PI()`), if
    /// it is one.
    fn constant(&self, name: &syn::Ident, called: bool) -> Option<Expr> {
        let span = name.span();
        let float = self.float_ident(span);
        let literal = |text: &str| {
            let literal = syn::LitFloat::new(text, span);
            Some(syn::parse_quote_spanned!(span=> #literal))
        };
        let named = |constant: &str| {
            let constant = syn::Ident::new(constant, span);
            Some(syn::parse_quote_spanned!(span=> #float::#constant))
        };
        let text = name.to_string();
        match (text.as_str(), called) {
            ("zero", true) | ("ZERO", false) => literal("0.0"),
            ("one", true) | ("ONE", false) => literal("1.0"),
            ("HALF", false) => literal("0.5"),
            ("neg_zero", true) => Some(syn::parse_quote_spanned!(span=> -0.0)),
            ("epsilon", true) => named("EPSILON"),
            ("infinity", true) => named("INFINITY"),
            ("neg_infinity", true) => named("NEG_INFINITY"),
            ("nan", true) => named("NAN"),
            ("max_value", true) => named("MAX"),
            ("min_value", true) => named("MIN"),
            ("min_positive_value", true) => named("MIN_POSITIVE"),
            (
                "EPSILON" | "INFINITY" | "NEG_INFINITY" | "NAN" | "MAX" | "MIN" | "MIN_POSITIVE",
                false,
            ) => named(&text),
            // `FloatConst`'s functions and `Real`'s constants: `core`'s constants.
            (_, _)
                if text
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') =>
            {
                Some(syn::parse_quote_spanned!(span=> ::core::#float::consts::#name))
            }
            _ => None,
        }
    }

    /// The conversion of a constant (`T::from(2.0 * PI).unwrap()`, `T::from(0.1)`)
    /// computed as the original computes it, in the argument's own type, then cast:
    /// `const { (2.0 * PI) as f32 }`. A literal that is the same number either
    /// way stays a literal. `None` for an argument that may read a variable.
    fn constant_conversion(&self, value: &Expr) -> Option<Expr> {
        if !constant(value, &self.const_params) {
            return None;
        }
        let exact = match value {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Float(lit),
                ..
            }) => {
                let digits = lit.base10_digits();
                match (digits.parse::<f64>(), digits.parse::<f32>(), lit.suffix()) {
                    (Ok(wide), Ok(narrow), "" | "f64") => {
                        self.float == Float::F64 || (wide as f32).to_bits() == narrow.to_bits()
                    }
                    _ => false,
                }
            }
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(lit),
                ..
            }) => lit
                .base10_parse::<u32>()
                .is_ok_and(|n| n < (1 << 24) && lit.suffix().is_empty()),
            _ => false,
        };
        if exact {
            return Some(self.converted(value.clone()));
        }
        // Its float literals are `f64`s, as in the original, where nothing else gives them
        // a type (`T::from(0.1)`); in `(0.1) as f32` they would be `f32`s.
        let mut value = value.clone();
        WideLiterals.visit_expr_mut(&mut value);
        let span = value.span();
        let float = self.float_ident(span);
        Some(syn::parse_quote_spanned! {span=> const { (#value) as #float } })
    }

    /// `value` in `float`: a literal as a literal of it, anything else cast.
    fn converted(&self, value: Expr) -> Expr {
        let span = value.span();
        match value {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Float(lit),
                ..
            }) => {
                let literal = syn::LitFloat::new(lit.base10_digits(), lit.span());
                syn::parse_quote_spanned!(span=> #literal)
            }
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(lit),
                ..
            }) => {
                let literal = syn::LitFloat::new(&format!("{}.0", lit.base10_digits()), lit.span());
                syn::parse_quote_spanned!(span=> #literal)
            }
            Expr::Unary(syn::ExprUnary {
                op: syn::UnOp::Neg(minus),
                expr,
                ..
            }) if matches!(&*expr, Expr::Lit(_)) => {
                let inner = self.converted(*expr);
                syn::parse_quote_spanned!(span=> #minus #inner)
            }
            value => {
                let float = self.float_ident(span);
                // `n * m` is cast whole: `((n * m) as f64)`.
                let value = match value {
                    value @ (Expr::Path(_)
                    | Expr::Lit(_)
                    | Expr::Call(_)
                    | Expr::MethodCall(_)
                    | Expr::Field(_)
                    | Expr::Index(_)
                    | Expr::Paren(_)) => value,
                    value => syn::parse_quote_spanned!(span=> (#value)),
                };
                syn::parse_quote_spanned!(span=> (#value as #float))
            }
        }
    }

    /// The conversion `T::from(value)` (or `from_f64`, `from_usize`, …), with its
    /// argument, if `expr` is one.
    fn conversion<'e>(&self, expr: &'e Expr) -> Option<&'e Expr> {
        let Expr::Call(call) = expr else { return None };
        let Expr::Path(path) = &*call.func else {
            return None;
        };
        let name = self.through_t(path.qself.as_ref(), &path.path)?;
        let text = name.to_string();
        let converts = text == "from" || text.starts_with("from_");
        (converts && call.args.len() == 1).then(|| &call.args[0])
    }

    /// What `expr` becomes, if it is one of the generic spellings.
    fn rewritten(&mut self, expr: &Expr) -> Option<Expr> {
        match expr {
            // `T::from(v).unwrap()`, `T::from_f64(v).expect("…")`: num-traits's `NumCast`
            // and `FromPrimitive` return an `Option`.
            Expr::MethodCall(call)
                if (call.method == "unwrap" && call.args.is_empty())
                    || (call.method == "expect" && call.args.len() == 1) =>
            {
                // `x.to_usize().unwrap()` (num-traits's `ToPrimitive`): `(x as usize)`.
                if let Some((number, integer)) = to_integer(&call.receiver) {
                    let mut number = number.clone();
                    self.visit_expr_mut(&mut number);
                    let span = number.span();
                    return Some(syn::parse_quote_spanned!(span=> ((#number) as #integer)));
                }
                let mut value = self.conversion(&call.receiver)?.clone();
                if let Some(constant) = self.constant_conversion(&value) {
                    return Some(constant);
                }
                self.visit_expr_mut(&mut value);
                // An argument that reads variables, in the function's float type:
                // `T::from(n as f64 * 0.5)` computes `n as f32 * 0.5` in the `f32` twin.
                Retype { float: self.float }.visit_expr_mut(&mut value);
                Some(self.converted(value))
            }
            // `Real::from_i32(n)`, `Real::from_bool(b)`: not an `Option`.
            Expr::Call(_) if self.conversion(expr).is_some() => {
                let Expr::Call(call) = expr else { return None };
                let Expr::Path(path) = &*call.func else {
                    return None;
                };
                let name = self.through_t(path.qself.as_ref(), &path.path)?;
                if name != "from_i32" && name != "from_bool" {
                    return None;
                }
                let mut value = call.args[0].clone();
                self.visit_expr_mut(&mut value);
                if name == "from_bool" {
                    let span = value.span();
                    return Some(syn::parse_quote_spanned!(span=> if #value { 1.0 } else { 0.0 }));
                }
                Some(self.converted(value))
            }
            Expr::Call(call) if call.args.is_empty() => {
                let Expr::Path(path) = &*call.func else {
                    return None;
                };
                let name = self.through_t(path.qself.as_ref(), &path.path)?;
                self.constant(name, true)
            }
            Expr::Path(path) => {
                let name = self.through_t(path.qself.as_ref(), &path.path)?;
                self.constant(name, false)
            }
            _ => None,
        }
    }
}

impl VisitMut for Monomorphise<'_> {
    /// `vec![T::zero(); n]`, `vec![a, b]`: their expressions too.
    fn visit_macro_mut(&mut self, mac: &mut syn::Macro) {
        use syn::parse::Parser;
        if mac.path.segments.last().is_none_or(|s| s.ident != "vec") {
            return;
        }
        let tokens = &mac.tokens;
        if let Ok(mut repeat) = syn::parse2::<syn::ExprRepeat>(quote::quote!([#tokens])) {
            self.visit_expr_mut(&mut repeat.expr);
            let (value, count) = (&repeat.expr, &repeat.len);
            mac.tokens = quote::quote!(#value; #count);
        } else if let Ok(mut items) =
            syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated
                .parse2(tokens.clone())
        {
            items.iter_mut().for_each(|item| self.visit_expr_mut(item));
            mac.tokens = quote::ToTokens::into_token_stream(items);
        }
    }

    fn visit_expr_mut(&mut self, expr: &mut Expr) {
        if let Some(rewritten) = self.rewritten(expr) {
            *expr = rewritten;
            return;
        }
        if let Expr::Path(path) = expr {
            // `<T as Float>::sqrt`, `Float::sqrt` → `f64::sqrt`.
            if let Some(name) = self.through_t(path.qself.as_ref(), &path.path).cloned() {
                if path.qself.is_some() || trait_path(&path.path) {
                    let float = self.float_ident(name.span());
                    *expr = syn::parse_quote_spanned!(name.span()=> #float::#name);
                    return;
                }
            }
        }
        syn::visit_mut::visit_expr_mut(self, expr);
    }

    fn visit_path_mut(&mut self, path: &mut syn::Path) {
        // `T::sqrt` → `f64::sqrt`, `Vec<T>` → `Vec<f64>` (through its arguments).
        if path.leading_colon.is_none() && path.segments.len() > 1 {
            if let Some(first) = path.segments.first_mut() {
                if first.ident == *self.t && first.arguments.is_none() {
                    first.ident = self.float_ident(first.ident.span());
                }
            }
        }
        syn::visit_mut::visit_path_mut(self, path);
    }

    fn visit_type_mut(&mut self, ty: &mut syn::Type) {
        if super::names(ty, self.t) {
            let float = self.float_ident(ty.span());
            *ty = syn::parse_quote_spanned!(float.span()=> #float);
            return;
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}

/// Whether `path` calls through one of the float traits: `Float::sqrt`,
/// `num_traits::Float::sqrt`, `FloatConst::PI`.
fn trait_path(path: &syn::Path) -> bool {
    let count = path.segments.len();
    count >= 2
        && super::FLOAT_TRAITS
            .iter()
            .chain(&["FloatConst"])
            .any(|name| path.segments[count - 2].ident == name)
}

/// The other float type made the twin's, in types and paths (`as f64`, `f64::consts::PI`).
struct Retype {
    float: Float,
}

impl VisitMut for Retype {
    fn visit_ident_mut(&mut self, ident: &mut syn::Ident) {
        if ident == "f64" || ident == "f32" {
            *ident = syn::Ident::new(self.float.name(), ident.span());
        }
    }
}

/// Whether `expr` reads no variable (literals, arithmetic, casts and constants named in
/// capitals, `PI`, `f64::EPSILON`, but not the const parameters `generics`), so that it
/// is a `const` expression.
fn constant(expr: &Expr, generics: &[syn::Ident]) -> bool {
    let constant = |expr: &Expr| constant(expr, generics);
    match expr {
        Expr::Lit(literal) => matches!(literal.lit, syn::Lit::Float(_) | syn::Lit::Int(_)),
        Expr::Paren(paren) => constant(&paren.expr),
        Expr::Group(group) => constant(&group.expr),
        Expr::Unary(unary) => matches!(unary.op, syn::UnOp::Neg(_)) && constant(&unary.expr),
        Expr::Binary(binary) => {
            matches!(
                binary.op,
                syn::BinOp::Add(_) | syn::BinOp::Sub(_) | syn::BinOp::Mul(_) | syn::BinOp::Div(_)
            ) && constant(&binary.left)
                && constant(&binary.right)
        }
        Expr::Cast(cast) => constant(&cast.expr),
        // A const generic parameter (`N`) is no `const` an item may read.
        Expr::Path(path) if path.path.get_ident().is_some_and(|i| generics.contains(i)) => false,
        Expr::Path(path) => {
            path.qself.is_none()
                && path.path.segments.last().is_some_and(|segment| {
                    let name = segment.ident.to_string();
                    name.chars().any(|c| c.is_ascii_uppercase())
                        && name
                            .chars()
                            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                })
        }
        _ => false,
    }
}

/// Unsuffixed float literals made `f64` literals.
struct WideLiterals;

impl VisitMut for WideLiterals {
    fn visit_lit_float_mut(&mut self, literal: &mut syn::LitFloat) {
        if literal.suffix().is_empty() {
            let digits = format!("{}f64", literal.base10_digits());
            *literal = syn::LitFloat::new(&digits, literal.span());
        }
    }
}

/// The number and integer type of `x.to_usize()` (`to_i32`, … of num-traits's
/// `ToPrimitive`).
fn to_integer(expr: &Expr) -> Option<(&Expr, syn::Ident)> {
    let Expr::MethodCall(call) = expr else {
        return None;
    };
    let name = call.method.to_string();
    let integer = name.strip_prefix("to_")?;
    const INTEGERS: [&str; 10] = [
        "usize", "isize", "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64",
    ];
    (call.args.is_empty() && INTEGERS.contains(&integer)).then(|| {
        (
            &*call.receiver,
            syn::Ident::new(integer, call.method.span()),
        )
    })
}
