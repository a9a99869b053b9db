//! The signature: parameters and their kinds, `wrt(..)`.

use super::*;
use crate::layout::FieldKind;

impl Lowering {
    // ----- signature -------------------------------------------------------------------

    /// Checks the signature and declares one variable per parameter.
    pub(super) fn signature(
        &mut self,
        item: &ItemFn,
        args: &GradArgs,
        context: &Context,
    ) -> Vec<Param> {
        let layouts = context.layouts;
        let sig = &item.sig;
        let errors = &mut self.errors;
        if let Some(token) = &sig.constness {
            errors.at(token, "#[grad] does not support `const fn`");
        }
        if let Some(token) = &sig.asyncness {
            errors.at(token, "#[grad] does not support `async fn`");
        }
        if let Some(token) = &sig.unsafety {
            errors.at(token, "#[grad] does not support `unsafe fn`");
        }
        if let Some(abi) = &sig.abi {
            errors.at(abi, "#[grad] does not support `extern` functions");
        }
        for param in &sig.generics.params {
            match param {
                syn::GenericParam::Const(constant) => {
                    self.generic_consts.push(constant.ident.to_string());
                }
                syn::GenericParam::Lifetime(_) => {}
                syn::GenericParam::Type(_) => errors.at(
                    param,
                    "#[grad] supports const generics (`<const N: usize>`), not type \
                     parameters; write the function for `f64`",
                ),
            }
        }
        if let Some(clause) = &sig.generics.where_clause {
            errors.at(clause, "#[grad] does not support `where` clauses");
        }
        if let Some(variadic) = &sig.variadic {
            errors.at(variadic, "#[grad] does not support variadic functions");
        }
        let float = signature_float(sig, errors);
        self.float = float;
        let real = float.name();
        self.outputs = 1;
        match &sig.output {
            ReturnType::Type(_, ty) if float.is(ty) => {}
            ReturnType::Type(_, ty) if real_tuple(ty, float).is_some() => {
                // Several outputs: differentiated through the pullback only.
                self.outputs = real_tuple(ty, float).unwrap_or(1);
            }
            ReturnType::Type(_, ty) if mixes_floats(ty, float) => {} // reported above
            ReturnType::Type(_, ty) if array_dims(ty, float).is_some() => {
                // A vector output: differentiated through its pullback, forward mode and
                // Jacobian.
                let dims = array_dims(ty, float).unwrap_or_default();
                self.vector_output = Some((dims, false, (**ty).clone()));
            }
            ReturnType::Type(_, ty) if super::stmt::is_vec_of(ty, float) => {
                self.vector_output = Some((Vec::new(), true, (**ty).clone()));
            }
            ReturnType::Type(_, ty) => {
                self.return_rejected = true;
                errors.at(
                    ty,
                    format!(
                        "a #[grad] function must return `{real}`, a tuple of them \
                         `({real}, {real})`, an array `[{real}; M]` or a `Vec<{real}>`"
                    ),
                );
            }
            ReturnType::Default => errors.at(
                &sig.ident,
                "a #[grad] function must return `f64` (or `f32`): add `-> f64`",
            ),
        }

        self.scopes.push();
        self.blocks.push(Vec::new());
        let mut params = Vec::new();
        // Parameters whose type was rejected: `wrt` naming them is not a second error.
        let mut rejected: Vec<Ident> = Vec::new();
        for input in &sig.inputs {
            let typed = match input {
                FnArg::Receiver(receiver) => {
                    match self.receiver(receiver, args, context, &item.block) {
                        Some(param) => {
                            let param = Param {
                                wrt: param.wrt && args.wrt.is_none(),
                                ..param
                            };
                            params.push(param);
                            let index = params.len() - 1;
                            if let Some(strukt) = params[index].strukt.clone() {
                                let ident = params[index].ident.clone();
                                self.struct_fields(index, &ident, &strukt, layouts);
                            }
                            continue;
                        }
                        None => continue,
                    }
                }
                FnArg::Typed(typed) => typed,
            };
            let (ident, mutable) = match &*typed.pat {
                Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                    (pat.ident.clone(), pat.mutability.is_some())
                }
                pat => {
                    if let Pat::Ident(pat) = pat {
                        rejected.push(pat.ident.clone());
                    }
                    self.errors.at(
                        pat,
                        "#[grad] parameters must be plain names (`x: f64`), not patterns",
                    );
                    continue;
                }
            };
            let ty = &*typed.ty;
            if super::opaque::is_opaque(&ident, ty, &item.block, args.wrt.as_deref()) {
                let var = self.declare(&ident, VarKind::Opaque, Vec::new(), Num::Unknown);
                self.vars[var].is_param = true;
                self.opaque.push(var);
                params.push(Param {
                    ident,
                    ty: ty.clone(),
                    var,
                    wrt: false,
                    strukt: None,
                });
                continue;
            }
            let referenced = match ty {
                Type::Reference(reference) if reference.mutability.is_none() => &*reference.elem,
                ty => ty,
            };
            if mixes_floats(ty, float) {
                // Reported with the signature: no second error for this parameter.
                let var = self.declare(&ident, VarKind::Real, Vec::new(), Num::Unknown);
                self.silent.push(var);
                rejected.push(ident);
                continue;
            }
            let mut slice = false;
            let tuple = matches!(referenced, Type::Tuple(t) if !t.elems.is_empty()
                && t.elems.iter().all(|e| matches!(FieldKind::of(e), FieldKind::Real(_))));
            let collection = crate::layout::collection(referenced);
            let strukt = crate::layout::struct_path(referenced)
                .or_else(|| tuple.then(|| referenced.clone()))
                .or_else(|| {
                    collection
                        .as_ref()
                        .map(|_| partial_of_collection(referenced))
                });
            // A struct (or tuple) of the other float type: one error, under its type.
            let holder = collection
                .as_ref()
                .map_or(referenced, |(element, _)| element);
            if strukt.is_some() && !self.numbers_of_own_float(holder, holder, layouts) {
                let var = self.declare(&ident, VarKind::Real, Vec::new(), Num::Unknown);
                self.silent.push(var);
                rejected.push(ident);
                continue;
            }
            if let (Some(strukt), Some((element, len))) = (&strukt, collection) {
                // `ps: &[Particle]`, `layers: &[Layer; K]`: the fields of the elements.
                let var = self.declare_struct(&ident, VarKind::Real);
                let name = ident.to_string();
                let name = name.trim_start_matches("r#").to_owned();
                let names = self.collection_fields(
                    params.len(),
                    &ident,
                    &element,
                    len,
                    layouts,
                    &name,
                    &quote!(),
                    true,
                );
                self.collections.insert(name, names);
                params.push(Param {
                    ident,
                    ty: ty.clone(),
                    var,
                    wrt: args.wrt.is_none(),
                    strukt: Some(strukt.clone()),
                });
                continue;
            }
            if let Some(strukt) = strukt {
                let var = self.declare_struct(&ident, VarKind::Real);
                self.struct_fields(params.len(), &ident, &strukt, layouts);
                params.push(Param {
                    ident,
                    ty: ty.clone(),
                    var,
                    wrt: args.wrt.is_none(),
                    strukt: Some(strukt),
                });
                continue;
            }
            let mut rows = false;
            let (kind, dims, num) = if float.is(ty) {
                (VarKind::Real, Vec::new(), Num::Real)
            } else if let Some(dims) = array_dims(referenced, float) {
                (VarKind::Real, dims, Num::Real)
            } else if let (Type::Reference(_), Some(dims)) = (ty, slice_element(referenced, float))
            {
                slice = true;
                self.needs_alloc(ty, "a slice parameter");
                (VarKind::Real, dims, Num::Real)
            } else if let (Type::Reference(_), true) = (ty, integer_slice(referenced)) {
                // `&[usize]` (labels, indices): data, never differentiated.
                slice = true;
                (VarKind::Int, Vec::new(), Num::Int)
            } else if let (Type::Reference(_), true) = (ty, ragged_rows(referenced, float)) {
                // `&[Vec<f64>]` (samples of different lengths): data, never differentiated.
                slice = true;
                rows = true;
                self.needs_alloc(ty, "a slice parameter");
                let placeholder = Ident::new(crate::ir::ROW_LENGTH, Span::call_site());
                (
                    VarKind::Data,
                    vec![placeholder.to_token_stream()],
                    Num::Real,
                )
            } else if is_integer(ty) {
                (VarKind::Int, Vec::new(), Num::Int)
            } else if is_bool(ty) {
                (VarKind::Bool, Vec::new(), Num::Bool)
            } else {
                let message = if let Type::Reference(syn::TypeReference {
                    mutability: Some(_),
                    elem,
                    ..
                }) = ty
                {
                    format!(
                        "#[grad] does not differentiate yet a function that writes through a \
                         `&mut` parameter of this type (numbers, arrays and slices of numbers \
                         may be written in place; one only read is taken as `&{}`): return \
                         what it writes instead",
                        elem.to_token_stream()
                    )
                } else if ragged(ty) {
                    format!(
                        "#[grad] takes rows of run-time length as a slice, by reference \
                         (`&[Vec<{real}>]`, `&Vec<Vec<{real}>>`, `&[&[{real}]]`), not `{}`",
                        ty.to_token_stream().to_string().replace(' ', "")
                    )
                } else if float == Float::F64 {
                    "#[grad] parameters must be `f64`, `[f64; N]` or `&[f64; N]` (also \
                     nested), slices `&[f64]`, `&[[f64; N]]` or `&Vec<f64>`, rows of \
                     run-time length `&[Vec<f64>]` or `&[&[f64]]` (data), structs that \
                     derive `Differentiable` (`m: &Mlp`), or integers and `bool` (constants); \
                     a parameter of a type without `f64` in it (an enum, a `&str`) is a \
                     constant too"
                        .to_string()
                } else {
                    format!(
                        "#[grad] parameters of a function of `{real}` must be `{real}`, \
                         `[{real}; N]` or `&[{real}; N]` (also nested), slices `&[{real}]`, \
                         `&[[{real}; N]]` or `&Vec<{real}>`, rows of run-time length \
                         `&[Vec<{real}>]` or `&[&[{real}]]` (data), structs of `{real}` fields that \
                         derive `Differentiable` (`m: &Mlp`), or integers and `bool` \
                         (constants); a parameter of a type without `{real}` in it (an enum, \
                         a `&str`) is a constant too"
                    )
                };
                self.errors.at(ty, message);
                let var = self.declare(&ident, VarKind::Real, Vec::new(), Num::Unknown);
                self.silent.push(var);
                rejected.push(ident);
                continue;
            };
            let var = self.declare(&ident, kind, dims, num);
            self.vars[var].is_param = true;
            self.vars[var].slice = slice;
            self.vars[var].rows = rows;
            self.vars[var].mutable = mutable;
            if matches!(ty, Type::Reference(_)) {
                self.references.push(var);
            }
            let differentiable = kind == VarKind::Real;
            params.push(Param {
                ident,
                ty: ty.clone(),
                var,
                wrt: differentiable && args.wrt.is_none(),
                strukt: None,
            });
        }

        if let Some(wrt) = &args.wrt {
            for (position, name) in wrt.iter().enumerate() {
                if wrt[..position].contains(name) {
                    self.errors
                        .at(name, format!("`{name}` is named twice in `wrt`"));
                } else if name == "self" && self.constant_self {
                    // Reported with the receiver.
                } else if let Some(param) = params.iter_mut().find(|p| p.ident == *name) {
                    if self.vars[param.var].rows {
                        self.errors.at(
                            name,
                            format!(
                                "`{name}` holds rows of run-time length, which #[grad] reads \
                                 as data: it has no gradient (pass rows of one length, \
                                 `&[[{real}; N]]`, or the numbers flat, to differentiate them)"
                            ),
                        );
                    } else if self.vars[param.var].kind == VarKind::Real || param.strukt.is_some() {
                        param.wrt = true;
                    } else {
                        self.errors.at(
                            name,
                            format!("`{name}` is not an `{real}` parameter: it has no gradient"),
                        );
                    }
                } else if !rejected.contains(name) {
                    self.errors.at(
                        name,
                        format!("`wrt` names `{name}`, which is not a parameter"),
                    );
                }
            }
        }
        params
    }

    /// `&self` or `self` of a method: a struct parameter named `self` when `self` is
    /// differentiated, and otherwise a constant whose fields are read as they are.
    fn receiver(
        &mut self,
        receiver: &syn::Receiver,
        args: &GradArgs,
        context: &Context,
        body: &syn::Block,
    ) -> Option<Param> {
        let Some(self_ty) = context.self_ty else {
            self.errors.at(
                receiver,
                "#[grad] on a method needs `#[grad]` on its `impl` block too, to know the \
                 type of `self`",
            );
            return None;
        };
        if receiver.mutability.is_some() && receiver.reference.is_some() {
            self.errors.at(
                receiver,
                "#[grad] does not differentiate yet a method that writes through `&mut self` \
                 (one that only reads it is taken as `&self`): return what it writes instead",
            );
            self.constant_self = true; // its fields are not reported again
            self.self_rejected = true;
            return None;
        }
        let ident = Ident::new("self", receiver.self_token.span);
        let ty: Type = match &receiver.reference {
            Some(_) => syn::parse_quote!(&#self_ty),
            None => self_ty.clone(),
        };
        if is_self(self_ty) && args.wrt.iter().flatten().any(|name| name == "self") {
            self.errors.at(
                receiver,
                "#[grad] on a method alone cannot see the type of `self`, so `self` is a \
                 constant; to differentiate with respect to `self`, put `#[grad]` on the \
                 `impl` block too: `#[grad] impl Model { #[grad] fn loss(&self, …) … }`",
            );
        }
        if !self_is_struct(args, self_ty, body) {
            // A constant `self`: its fields are read as written (see `expr`).
            self.constant_self = true;
            if is_self(self_ty) && args.wrt.is_none() {
                self.probe_self = Some(receiver.self_token.span);
            }
            let var = self.declare_struct(&ident, VarKind::Int);
            return Some(Param {
                ident,
                ty,
                var,
                wrt: false,
                strukt: None,
            });
        }
        let Some(strukt) = crate::layout::struct_path(self_ty) else {
            self.errors.at(
                self_ty,
                "#[grad] differentiates `self` of a struct that derives `Differentiable`; \
                 leave `self` out with `wrt(..)` to treat it as a constant",
            );
            return None;
        };
        if !self.numbers_of_own_float(self_ty, receiver, context.layouts) {
            self.constant_self = true; // its fields are not reported again
            self.self_rejected = true;
            return None;
        }
        let var = self.declare_struct(&ident, VarKind::Real);
        // Left out by `wrt(..)`: a struct parameter with no partial of its own, as any
        // other (`wrt(..)` is applied with the others' names).
        Some(Param {
            ident,
            ty,
            var,
            wrt: true,
            strukt: Some(strukt),
        })
    }
}

/// The type of the partial of a collection of structs: `Vec<Layer>` for a slice or a
/// `Vec`, the array type itself for an array.
fn partial_of_collection(ty: &Type) -> Type {
    match ty {
        Type::Slice(slice) => {
            let element = &slice.elem;
            syn::parse_quote!(::autodiff::__private::vec::Vec<#element>)
        }
        ty => ty.clone(),
    }
}

/// Whether `self` is differentiated: unless `wrt(..)` leaves it out, when its type is
/// known (the `impl` block is marked `#[grad]`); a method marked alone sees only `Self`.
pub fn differentiates_self(args: &GradArgs, self_ty: &Type) -> bool {
    !is_self(self_ty)
        && args
            .wrt
            .as_ref()
            .is_none_or(|names| names.iter().any(|name| name == "self"))
}

/// Whether `self` is a struct parameter, with its fields known: when it is differentiated,
/// and when `wrt(..)` leaves it out but the type is known to derive `Differentiable` (another
/// method of the block differentiates `self`) or the body calls its methods (`self.f(x)`),
/// whose pullbacks take its partial. Otherwise `self` is a constant whose fields are read as
/// written, and its type need not derive `Differentiable`.
pub fn self_is_struct(args: &GradArgs, self_ty: &Type, body: &syn::Block) -> bool {
    struct Calls(bool);
    impl<'ast> syn::visit::Visit<'ast> for Calls {
        fn visit_expr_method_call(&mut self, call: &'ast syn::ExprMethodCall) {
            let receiver = crate::lower::strip_parens(&call.receiver);
            if matches!(receiver, Expr::Path(path) if path.path.is_ident("self")) {
                self.0 = true;
            }
            syn::visit::visit_expr_method_call(self, call);
        }
    }
    if is_self(self_ty) {
        return false;
    }
    let mut calls = Calls(false);
    syn::visit::Visit::visit_block(&mut calls, body);
    differentiates_self(args, self_ty) || args.self_derives || calls.0
}

/// Whether a type is written `Self`.
pub fn is_self(ty: &Type) -> bool {
    matches!(ty, Type::Path(path) if path.qself.is_none() && path.path.is_ident("Self"))
}

/// The length of a tuple type `(f64, f64, …)` of at least two `f64`s (or `f32`s).
fn real_tuple(ty: &Type, float: Float) -> Option<usize> {
    match ty {
        Type::Tuple(tuple) if tuple.elems.len() >= 2 && tuple.elems.iter().all(|e| float.is(e)) => {
            Some(tuple.elems.len())
        }
        _ => None,
    }
}

/// Whether a type holds the other float type than the function's.
fn mixes_floats(ty: &Type, float: Float) -> bool {
    let mut floats = Vec::new();
    floats_in(ty, &mut floats);
    floats.iter().any(|(other, _)| *other != float)
}

/// The float type of a function, `f64` or `f32`: its return type's, else its first
/// parameter's that holds one, else `f64`. Every other `f64` or `f32` of the signature
/// must be the same; each one that is not is an error under it.
///
/// ```text
/// fn f(x: f32, w: &[f32]) -> f32      f32
/// fn g(x: f32, y: f64) -> f32          f32, and an error under `f64`
/// ```
pub fn signature_float(sig: &syn::Signature, errors: &mut Errors) -> Float {
    let mut floats = Vec::new();
    if let ReturnType::Type(_, ty) = &sig.output {
        floats_in(ty, &mut floats);
    }
    let from_return = !floats.is_empty();
    for input in &sig.inputs {
        if let FnArg::Typed(typed) = input {
            floats_in(&typed.ty, &mut floats);
        }
    }
    let Some(&(float, _)) = floats.first() else {
        return Float::F64;
    };
    let (real, source) = (float.name(), if from_return { "returns" } else { "takes" });
    for (other, ty) in floats.iter().filter(|(other, _)| *other != float) {
        errors.push(syn::Error::new(
            ty.span(),
            format!(
                "a #[grad] function computes in one float type, and this one {source} \
                 `{real}`: write `{real}` here too, not `{}`",
                other.name()
            ),
        ));
    }
    float
}

/// Whether a type is a slice of rows of run-time length of numbers of `float`,
/// `[Vec<f>]`, `Vec<Vec<f>>` or `[&[f]]` (behind the parameter's reference).
fn ragged_rows(ty: &Type, float: Float) -> bool {
    let element = match ty {
        Type::Slice(slice) => &*slice.elem,
        Type::Path(path) => {
            let Some(last) = path.path.segments.last() else {
                return false;
            };
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                return false;
            };
            match args.args.first() {
                Some(syn::GenericArgument::Type(ty)) if last.ident == "Vec" => ty,
                _ => return false,
            }
        }
        _ => return false,
    };
    row_of(element, float)
}

/// Whether a type is a row of numbers of run-time length: `Vec<f>` or `&[f]`.
fn row_of(ty: &Type, float: Float) -> bool {
    match ty {
        Type::Reference(reference) if reference.mutability.is_none() => {
            matches!(&*reference.elem, Type::Slice(slice) if float.is(&slice.elem))
        }
        ty => super::stmt::is_vec_of(ty, float),
    }
}

/// Whether a type is a sequence of vectors of numbers: `&[Vec<f64>]`, `Vec<Vec<f64>>`,
/// `&Vec<Vec<f32>>`, `[Vec<f64>; N]`.
fn ragged(ty: &Type) -> bool {
    let inner = match ty {
        Type::Reference(reference) => &*reference.elem,
        ty => ty,
    };
    let element = match inner {
        Type::Slice(slice) => Some(&*slice.elem),
        Type::Array(array) => Some(&*array.elem),
        Type::Path(path) => path.path.segments.last().and_then(|last| {
            let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
                return None;
            };
            match args.args.first() {
                Some(syn::GenericArgument::Type(ty)) if last.ident == "Vec" => Some(ty),
                _ => None,
            }
        }),
        _ => None,
    };
    element.is_some_and(|element| {
        super::stmt::is_vec_of(element, Float::F64) || super::stmt::is_vec_of(element, Float::F32)
    })
}
