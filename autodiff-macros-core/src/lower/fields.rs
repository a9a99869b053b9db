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

/// The variables of the fields of a collection's elements, by their paths inside one
/// element (`w`, `inner.b`), and the first of them, whose length is the collection's.
#[derive(Default)]
pub(super) struct CollectionNames {
    pub(super) fields: HashMap<String, Ident>,
    pub(super) first: Option<Ident>,
    /// The variable of the elements as wholes (`m·layers·`), indexed like the fields.
    pub(super) element: Option<Ident>,
    /// A variable that stands for a path into an element that `#[grad]` rejected, once
    /// reported (`ms·` followed by `·`): silent at its uses, so that the path gives no
    /// second error.
    pub(super) rejected: Option<Ident>,
}

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
        let Some(fields) = self.members(ty, layouts) else {
            return;
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
                FieldKind::Struct(ty) | FieldKind::Tuple(ty) => {
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
                    self.struct_field(&binding, param, &access, differentiable, None);
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
                FieldKind::Collection(element, len) => {
                    if skip {
                        continue;
                    }
                    let key = name.replace('·', ".");
                    let names = self.collection_fields(
                        param,
                        ident,
                        &element,
                        len,
                        layouts,
                        &name,
                        &access,
                        differentiable,
                    );
                    self.collections.insert(key, names);
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
                inner: None,
            });
            let path = name.replace('·', ".");
            self.field_names.insert(path, binding);
        }
    }

    /// Declares `binding`, a struct held by parameter `param` at `access` (and `inner`,
    /// for the elements of a collection), as a whole: for calls that pass it.
    fn struct_field(
        &mut self,
        binding: &Ident,
        param: usize,
        access: &TokenStream,
        differentiable: bool,
        inner: Option<TokenStream>,
    ) -> VarId {
        let var = self.declare_struct(binding, VarKind::Real);
        self.fields.push(FieldParam {
            param,
            access: access.clone(),
            var,
            differentiable,
            strukt: true,
            inner,
        });
        var
    }

    /// Whether the numbers of the struct or tuple `ty` (its own fields, not those of
    /// structs it holds, which are checked in their turn) are of the function's float
    /// type; an error under `at` otherwise.
    pub(super) fn numbers_of_own_float(
        &mut self,
        ty: &Type,
        at: &dyn ToTokens,
        layouts: &Layouts,
    ) -> bool {
        let types: Vec<Type> = match ty {
            Type::Tuple(tuple) => tuple.elems.iter().cloned().collect(),
            _ => match layouts.get(ty).map(|input| layout::parse(&input)) {
                Some(Ok(layout)) => layout
                    .fields
                    .into_iter()
                    .filter(|field| !field.skip)
                    .map(|field| field.ty)
                    .collect(),
                _ => return true, // reported by `members`
            },
        };
        let mut floats = Vec::new();
        for field in &types {
            if matches!(
                FieldKind::of(field),
                FieldKind::Real(_) | FieldKind::Vector(_)
            ) {
                crate::types::floats_in(field, &mut floats);
            }
        }
        let Some((other, _)) = floats.iter().find(|(float, _)| *float != self.float) else {
            return true;
        };
        let (own, other) = (self.real_name(), other.name());
        self.errors.at(
            at,
            format!(
                "this type's numbers are `{other}`s, and a function of `{own}` differentiates \
                 numbers of `{own}`: make its fields `{own}` (or the function `{other}`)"
            ),
        );
        false
    }

    /// The fields of a struct type (from its layout) or of a tuple type: each as written
    /// after `.`, what it holds, and whether it is skipped. `None` after an error.
    fn members(
        &mut self,
        ty: &Type,
        layouts: &Layouts,
    ) -> Option<Vec<(TokenStream, FieldKind, bool)>> {
        if !self.numbers_of_own_float(ty, ty, layouts) {
            return None;
        }
        if let Type::Tuple(tuple) = ty {
            return Some(
                tuple
                    .elems
                    .iter()
                    .enumerate()
                    .map(|(position, ty)| {
                        let index = syn::Index::from(position);
                        (quote!(#index), FieldKind::of(ty), false)
                    })
                    .collect(),
            );
        }
        let Some(input) = layouts.get(ty) else {
            self.errors.at(
                ty,
                "#[grad] could not learn this struct's fields: derive them with \
                 `#[derive(autodiff::Differentiable)]` on the struct",
            );
            return None;
        };
        match layout::parse(&input) {
            Ok(layout) => Some(
                layout
                    .fields
                    .into_iter()
                    .map(|field| (field.ident.to_token_stream(), field.kind, field.skip))
                    .collect(),
            ),
            Err(error) => {
                self.errors.push(error);
                None
            }
        }
    }

    /// Declares the fields of the elements of a collection of structs (`ps: &[Particle]`,
    /// `m.layers: Vec<Layer>`, `[Layer; K]`) at `access`, each as a variable indexed by the
    /// element first (`ps·pos[i][k]`), and returns their names for the body's paths.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn collection_fields(
        &mut self,
        param: usize,
        ident: &Ident,
        element: &Type,
        len: Option<TokenStream>,
        layouts: &Layouts,
        name: &str,
        access: &TokenStream,
        differentiable: bool,
    ) -> CollectionNames {
        let mut names = CollectionNames::default();
        // An element as a whole, for calls (`apply(layer, h)`, `layer.forward(h)`): a
        // struct indexed by the element (`m·layers·[l]`).
        let binding = Ident::new(&format!("{name}·"), ident.span());
        let var = self.struct_field(&binding, param, access, differentiable, Some(quote!()));
        match &len {
            Some(len) => self.vars[var].dims = vec![len.clone()],
            None => self.vars[var].slice = true,
        }
        names.element = Some(binding);
        let rejected = Ident::new(&format!("{name}··"), ident.span());
        let var = self.declare(&rejected, VarKind::Real, Vec::new(), Num::Unknown);
        self.silent.push(var);
        names.rejected = Some(rejected);
        self.element_fields(
            param,
            ident,
            element,
            &len,
            layouts,
            name,
            access,
            quote!(),
            "",
            differentiable,
            &mut names,
            0,
        );
        names
    }

    #[allow(clippy::too_many_arguments)]
    fn element_fields(
        &mut self,
        param: usize,
        ident: &Ident,
        element: &Type,
        len: &Option<TokenStream>,
        layouts: &Layouts,
        name: &str,
        access: &TokenStream,
        inner: TokenStream,
        path: &str,
        differentiable: bool,
        names: &mut CollectionNames,
        depth: usize,
    ) {
        if depth > MAX_DEPTH {
            self.errors
                .at(element, "structs nest too deeply for #[grad]");
            return;
        }
        let Some(fields) = self.members(element, layouts) else {
            return;
        };
        for (member, kind, skip) in fields {
            let label = member.to_string();
            let label = label.trim_start_matches("r#");
            let inner = quote!(#inner . #member);
            let name = format!("{name}·{label}");
            let path = if path.is_empty() {
                label.to_owned()
            } else {
                format!("{path}.{label}")
            };
            let differentiable = differentiable && !skip;
            let (kind, mut dims, num) = match kind {
                FieldKind::Real(dims) => (VarKind::Real, dims, Num::Real),
                FieldKind::Int => (VarKind::Int, Vec::new(), Num::Int),
                FieldKind::Bool => (VarKind::Bool, Vec::new(), Num::Bool),
                FieldKind::Struct(ty) | FieldKind::Tuple(ty) if !skip => {
                    self.element_fields(
                        param,
                        ident,
                        &ty,
                        len,
                        layouts,
                        &name,
                        access,
                        inner,
                        &path,
                        differentiable,
                        names,
                        depth + 1,
                    );
                    continue;
                }
                FieldKind::Vector(_) | FieldKind::Collection(..) if !skip => {
                    self.errors.at(
                        element,
                        format!(
                            "#[grad] reads the elements of a collection of structs \
                             (`Vec<Layer>`, `&[Particle]`, `[Layer; K]`) when their fields are \
                             numbers, arrays, integers or structs of them; `{label}`, a `Vec` \
                             or collection inside each element, is not supported yet"
                        ),
                    );
                    // Its uses are not reported again.
                    let binding = Ident::new(&name, ident.span());
                    let var = self.declare(&binding, VarKind::Real, Vec::new(), Num::Unknown);
                    self.silent.push(var);
                    names.fields.insert(path, binding);
                    continue;
                }
                _ => continue,
            };
            if let Some(len) = len {
                dims.insert(0, len.clone());
            }
            let binding = Ident::new(&name, ident.span());
            let var = self.declare(&binding, kind, dims, num);
            self.vars[var].is_param = true;
            self.vars[var].slice = len.is_none();
            self.fields.push(FieldParam {
                param,
                access: access.clone(),
                var,
                differentiable: differentiable && kind == VarKind::Real,
                strukt: false,
                inner: Some(inner),
            });
            names.first.get_or_insert_with(|| binding.clone());
            names.fields.insert(path, binding);
        }
    }
}

/// The body with every path to a field of a struct parameter (`m.layer.w`) replaced by the
/// name of the field's variable (`m·layer·w`), and every read of a field of a
/// collection's element (`m.layers[l].w[i]`, `p.w[i]` in `for p in &m.layers`) by the
/// field's variable indexed by the element first (`m·layers·w[l][i]`). Paths to
/// something else are left alone.
pub(super) fn rename(
    block: &syn::Block,
    names: &HashMap<String, Ident>,
    collections: &HashMap<String, CollectionNames>,
    errors: &mut Errors,
) -> syn::Block {
    let mut block = block.clone();
    if !names.is_empty() || !collections.is_empty() {
        let mut rename = Rename::new(names, collections);
        rename.visit_block_mut(&mut block);
        errors.extend(rename.errors);
    }
    block
}

pub(super) struct Rename<'a> {
    pub(super) names: &'a HashMap<String, Ident>,
    pub(super) collections: &'a HashMap<String, CollectionNames>,
    /// The names bound to a collection's elements (by a loop, or `let p = &ps[i];`),
    /// innermost last: the name, the collection's path, and the element's index.
    elements: Vec<(String, String, Expr)>,
    errors: Errors,
}

impl<'a> Rename<'a> {
    /// Renames the paths of `names` and of `collections`.
    pub(super) fn new(
        names: &'a HashMap<String, Ident>,
        collections: &'a HashMap<String, CollectionNames>,
    ) -> Self {
        Rename {
            names,
            collections,
            elements: Vec::new(),
            errors: Errors::default(),
        }
    }

    /// `ps[i].pos` or `p.pos` (`p` an element bound by a loop) as the field's variable
    /// indexed by the element, `ps·pos[i]`.
    fn element_field(&mut self, field: &syn::ExprField) -> Option<Expr> {
        let mut members = Vec::new();
        let mut expr = &Expr::Field(field.clone());
        loop {
            match expr {
                Expr::Field(field) => {
                    members.push(member_name(&field.member));
                    expr = &field.base;
                }
                Expr::Paren(paren) => expr = &paren.expr,
                _ => break,
            }
        }
        members.reverse();
        let inner = members.join(".");
        let (collection, index) = match expr {
            Expr::Path(path) if path.qself.is_none() => {
                self.element(&path.path.get_ident()?.to_string())?
            }
            Expr::Index(indexed) => {
                let collection = match &*indexed.expr {
                    Expr::Path(path) if path.qself.is_none() => path
                        .path
                        .get_ident()?
                        .to_string()
                        .trim_start_matches("r#")
                        .to_owned(),
                    Expr::Field(field) => path_of(field)?,
                    _ => return None,
                };
                let mut index = (*indexed.index).clone();
                self.visit_expr_mut(&mut index);
                (collection, index)
            }
            _ => return None,
        };
        let names = self.collections.get(&collection)?;
        let Some(var) = names.fields.get(&inner) else {
            self.errors.at(
                field,
                format!(
                    "#[grad] reads the fields of `{collection}`'s elements that hold numbers, \
                     arrays, integers or `bool`s (`{collection}[i].field`), and passes the \
                     elements whole; `{inner}` is not one of those fields"
                ),
            );
            // Its uses are not reported again.
            let mut rejected = names.rejected.clone()?;
            rejected.set_span(field.member.span());
            return Some(syn::parse_quote!(#rejected[#index]));
        };
        let mut var = var.clone();
        var.set_span(field.member.span());
        Some(syn::parse_quote!(#var[#index]))
    }

    /// The collection and index of the element that `name` is bound to, innermost
    /// binding first.
    fn element(&self, name: &str) -> Option<(String, Expr)> {
        self.elements
            .iter()
            .rev()
            .find(|(element, ..)| element == name)
            .map(|(_, collection, index)| (collection.clone(), index.clone()))
    }

    /// `layer`, a name bound to an element, as `&m·layers·[l]`.
    fn element_whole(&self, path: &syn::ExprPath) -> Option<Expr> {
        if path.qself.is_some() {
            return None;
        }
        let ident = path.path.get_ident()?;
        let (collection, index) = self.element(&ident.to_string())?;
        let mut element = self.collections.get(&collection)?.element.clone()?;
        element.set_span(ident.span());
        Some(syn::parse_quote_spanned!(ident.span()=> &#element[#index]))
    }

    /// The collection a loop runs over (`ps`, `&m.layers`, `m.layers.iter()`, with
    /// `.enumerate()`, or a part of one, `&ps[1..]`, `ps[a..b].iter()`): its path, whether
    /// it is enumerated, and the part's range.
    fn looped_collection(&self, expr: &Expr) -> Option<Looped> {
        match expr {
            Expr::Reference(reference) if reference.mutability.is_none() => {
                self.looped_collection(&reference.expr)
            }
            Expr::Paren(paren) => self.looped_collection(&paren.expr),
            Expr::MethodCall(call) if call.args.is_empty() && call.method == "iter" => self
                .looped_collection(&call.receiver)
                .filter(|looped| !looped.enumerated),
            Expr::MethodCall(call) if call.args.is_empty() && call.method == "enumerate" => self
                .looped_collection(&call.receiver)
                .filter(|looped| !looped.enumerated)
                .map(|looped| Looped {
                    enumerated: true,
                    ..looped
                }),
            Expr::Index(indexed) => {
                let Expr::Range(range) = &*indexed.index else {
                    return None;
                };
                let looped = self.looped_collection(&indexed.expr)?;
                (!looped.enumerated && looped.range.is_none()).then(|| Looped {
                    range: Some(range.clone()),
                    ..looped
                })
            }
            expr => {
                let path = collection_path(expr)?;
                self.collections.contains_key(&path).then_some(Looped {
                    path,
                    enumerated: false,
                    range: None,
                })
            }
        }
    }

    /// `for p in &m.layers { … p.w[i] … }` as `for p·index in 0..m·layers·w.len() { …
    /// m·layers·w[p·index][i] … }`; over a part, `for p in &ps[a..b]` as
    /// `for p·index in a..b`, and `for (i, p) in ps[a..b].iter().enumerate()` as
    /// `for i in 0..(b - a)` with `p` the element `a + i`. `None` for a loop over something
    /// else.
    fn element_loop(&mut self, for_loop: &mut syn::ExprForLoop) -> Option<()> {
        let Looped {
            path: collection,
            enumerated,
            range,
        } = self.looped_collection(&for_loop.expr)?;
        let first = self.collections.get(&collection)?.first.clone();
        let (index, element) = match (&*for_loop.pat, enumerated) {
            (Pat::Ident(element), false) => {
                let name = format!("{}·index", element.ident);
                (
                    Ident::new(&name, element.ident.span()),
                    element.ident.clone(),
                )
            }
            (Pat::Tuple(tuple), true) if tuple.elems.len() == 2 => {
                match (&tuple.elems[0], &tuple.elems[1]) {
                    (Pat::Ident(index), Pat::Ident(element)) => {
                        (index.ident.clone(), element.ident.clone())
                    }
                    _ => return None,
                }
            }
            _ => return None,
        };
        let Some(first) = first else {
            self.errors.at(
                &for_loop.expr,
                format!("the elements of `{collection}` hold no numbers for #[grad] to read"),
            );
            return Some(());
        };
        *for_loop.pat = syn::parse_quote!(#index);
        let at: Expr = match range {
            None => {
                *for_loop.expr = syn::parse_quote!(0..#first.len());
                syn::parse_quote!(#index)
            }
            Some(mut range) => {
                // The bounds read the collection's length as the body does.
                let mut bound = |bound: Option<Box<Expr>>, otherwise: Expr| -> Expr {
                    let mut bound = bound.map_or(otherwise, |bound| *bound);
                    self.visit_expr_mut(&mut bound);
                    syn::parse_quote!((#bound))
                };
                let start = bound(range.start.take(), syn::parse_quote!(0usize));
                let end = bound(range.end.take(), syn::parse_quote!(#first.len()));
                let inclusive = matches!(range.limits, syn::RangeLimits::Closed(_));
                match (enumerated, inclusive) {
                    (false, false) => *for_loop.expr = syn::parse_quote!(#start..#end),
                    (false, true) => *for_loop.expr = syn::parse_quote!(#start..=#end),
                    (true, false) => *for_loop.expr = syn::parse_quote!(0..(#end - #start)),
                    (true, true) => *for_loop.expr = syn::parse_quote!(0..(#end + 1 - #start)),
                }
                if enumerated {
                    syn::parse_quote!((#start + #index))
                } else {
                    syn::parse_quote!(#index)
                }
            }
        };
        self.elements.push((element.to_string(), collection, at));
        self.visit_block_mut(&mut for_loop.body);
        self.elements.pop();
        self.whole_uses(&element, for_loop.body.stmts.iter());
        Some(())
    }

    /// An error under the first use of the element `element` that is left once its
    /// fields are renamed: a use of it whole.
    fn whole_uses<'s>(&mut self, element: &Ident, stmts: impl Iterator<Item = &'s syn::Stmt>) {
        let mut uses = Uses {
            name: element.to_string(),
            first: None,
        };
        for stmt in stmts {
            syn::visit::Visit::visit_stmt(&mut uses, stmt);
        }
        if let Some(span) = uses.first {
            self.errors.push(syn::Error::new(
                span,
                format!(
                    "#[grad] reads an element of a collection of structs through its fields \
                     (`{element}.w[i]`); passing `{element}` whole or calling its methods is \
                     not supported yet"
                ),
            ));
        }
    }

    /// `let p = &ps[i];` (or `&m.layers[l]`): `p` names that element for the rest of the
    /// block; `None` for another statement.
    fn element_let(&mut self, stmt: &syn::Stmt) -> Option<(Ident, String, Expr)> {
        let syn::Stmt::Local(local) = stmt else {
            return None;
        };
        let (Pat::Ident(pat), Some(init)) = (&local.pat, &local.init) else {
            return None;
        };
        if init.diverge.is_some() || pat.by_ref.is_some() || pat.subpat.is_some() {
            return None;
        }
        // `let q = p;` or `let q = &p;` of a name bound to an element: another name for it.
        let named = match &*init.expr {
            Expr::Reference(reference) => &*reference.expr,
            expr => expr,
        };
        if let Expr::Path(path) = named {
            let (collection, index) = self.element(&path.path.get_ident()?.to_string())?;
            return Some((pat.ident.clone(), collection, index));
        }
        let Expr::Reference(reference) = &*init.expr else {
            return None;
        };
        let Expr::Index(indexed) = &*reference.expr else {
            return None;
        };
        let collection = collection_path(&indexed.expr)?;
        if !self.collections.contains_key(&collection) {
            return None;
        }
        let mut index = (*indexed.index).clone();
        self.visit_expr_mut(&mut index);
        Some((pat.ident.clone(), collection, index))
    }
}

/// What a loop over a collection of structs runs over.
struct Looped {
    /// The collection's path (`ps`, `m.layers`).
    path: String,
    /// Under `.enumerate()`.
    enumerated: bool,
    /// A part of it (`&ps[1..]`), by its range.
    range: Option<syn::ExprRange>,
}

/// The first use of a name in a block.
struct Uses {
    name: String,
    first: Option<Span>,
}

impl<'ast> syn::visit::Visit<'ast> for Uses {
    fn visit_expr_path(&mut self, path: &'ast syn::ExprPath) {
        if self.first.is_none() && path.qself.is_none() && path.path.is_ident(&self.name) {
            self.first = Some(path.path.segments[0].ident.span());
        }
    }
}

/// A field's name as written after `.` (without `r#`), or a tuple field's index.
fn member_name(member: &syn::Member) -> String {
    match member {
        syn::Member::Named(name) => name.to_string().trim_start_matches("r#").to_owned(),
        syn::Member::Unnamed(index) => index.index.to_string(),
    }
}

/// `ps` or `m.layers` as a string.
fn collection_path(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Path(path) if path.qself.is_none() => Some(
            path.path
                .get_ident()?
                .to_string()
                .trim_start_matches("r#")
                .to_owned(),
        ),
        Expr::Field(field) => path_of(field),
        Expr::Paren(paren) => collection_path(&paren.expr),
        _ => None,
    }
}

impl VisitMut for Rename<'_> {
    fn visit_block_mut(&mut self, block: &mut syn::Block) {
        if self.collections.is_empty() {
            return visit_mut::visit_block_mut(self, block);
        }
        let depth = self.elements.len();
        let mut bound = Vec::new();
        let mut stmts = Vec::new();
        for mut stmt in std::mem::take(&mut block.stmts) {
            if let Some((element, collection, index)) = self.element_let(&stmt) {
                self.elements.push((element.to_string(), collection, index));
                bound.push((element, stmts.len()));
                continue;
            }
            self.visit_stmt_mut(&mut stmt);
            stmts.push(stmt);
        }
        self.elements.truncate(depth);
        for (element, from) in bound {
            self.whole_uses(&element, stmts[from..].iter());
        }
        block.stmts = stmts;
    }

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
        if let Expr::ForLoop(for_loop) = expr {
            if !self.collections.is_empty() {
                // Before the iterable is renamed: `&ps[1..]` would become a part of
                // `ps·`, the elements as wholes.
                if self.element_loop(for_loop).is_some() {
                    return;
                }
                self.visit_expr_mut(&mut for_loop.expr);
                self.visit_pat_mut(&mut for_loop.pat);
                self.visit_block_mut(&mut for_loop.body);
                return;
            }
        }
        // `ps.len()`, `m.layers.len()`: the length of a field of the elements.
        if let Expr::MethodCall(call) = expr {
            if call.method == "len" && call.args.is_empty() {
                let first = collection_path(&call.receiver)
                    .and_then(|path| self.collections.get(&path))
                    .and_then(|names| names.first.clone());
                if let Some(first) = first {
                    *call.receiver = syn::parse_quote!(#first);
                    return;
                }
            }
        }
        // An element indexed and used whole (`apply(&m.layers[l], h)`): `m·layers·[l]`.
        if let Expr::Index(indexed) = expr {
            let element = collection_path(&indexed.expr)
                .and_then(|path| self.collections.get(&path))
                .and_then(|names| names.element.clone());
            if let Some(mut element) = element {
                element.set_span(indexed.expr.span());
                *indexed.expr = syn::parse_quote_spanned!(element.span()=> #element);
                self.visit_expr_mut(&mut indexed.index);
                return;
            }
        }
        // An element used whole (`apply(layer, h)`, `layer.forward(h)`): a reference to
        // it, `&m·layers·[l]`.
        if let Expr::Path(path) = expr {
            if let Some(renamed) = self.element_whole(path) {
                *expr = renamed;
                return;
            }
        }
        if let Expr::Field(field) = expr {
            if !self.collections.is_empty() {
                if let Some(renamed) = self.element_field(field) {
                    *expr = renamed;
                    return;
                }
            }
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
