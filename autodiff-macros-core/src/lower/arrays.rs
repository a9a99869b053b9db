//! Arrays written whole: copies (`let v = w;`, `h = next;`), literals (`[a * b, c]`, also
//! nested), arrays taken apart (`let [a, b] = w;`) and arrays returned by calls
//! (`let v: [f64; 2] = rot(y, t);`), each lowered as the element-wise statements it
//! stands for.

use super::control::strip as strip_expr;
use super::iter::expr_span;
use super::*;

impl Lowering {
    /// `h = next;`, `h = [a, b];` or `h = rot(h, t);` of an array (or a row) written
    /// whole, lowered as what it stands for; `false` for another assignment.
    pub(super) fn array_assignment_statement(&mut self, assign: &syn::ExprAssign) -> bool {
        // `h = next;` of arrays (or rows) of the same shape: a copy of each element.
        let shapes = (
            self.copied_array(&assign.left),
            self.copied_array(&assign.right),
        );
        if let (Some(target), Some(source)) = shapes {
            if target.len() == source.len() {
                self.array_assignment(&assign.left, &assign.right, &source);
                return true;
            }
        }
        let Some(dims) = self.copied_array(&assign.left) else {
            return false;
        };
        let local = Ident::new("__assigned_array", Span::mixed_site());
        let target = &assign.left;
        // `h = rot(h, t);` of a function returning an array: its outputs, then the array
        // built of them.
        let real = Ident::new(self.real_name(), Span::call_site());
        let len = dims.first().cloned().unwrap_or_default();
        let ty: Type = syn::parse_quote!([#real; #len]);
        let pat: Pat = syn::parse_quote!(#local);
        if let (1, Some(mut statements)) =
            (dims.len(), self.array_call(&pat, Some(&ty), &assign.right))
        {
            statements.push(syn::parse_quote!(#target = #local;));
            self.statement(&syn::parse_quote!({ #(#statements)* }));
            return true;
        }
        // `h = [a, b];`: the literal in a local of its own first, since its elements may
        // read `h`.
        if let Expr::Array(_) = strip_expr(&assign.right) {
            let source = &assign.right;
            let block: syn::Stmt = syn::parse_quote_spanned! {source.span()=>
                {
                    let #local = #source;
                    #target = #local;
                }
            };
            self.statement(&block);
            return true;
        }
        false
    }

    /// The dimensions of the array that `expr` reads whole: an array variable of numbers
    /// (`w`), or part of one, or a row of a slice of arrays (`h[t]`, `xs[s]`).
    pub(super) fn copied_array(&self, expr: &Expr) -> Option<Vec<TokenStream>> {
        let (base, indices) = split_index(strip_expr(expr));
        let var = match base {
            Expr::Path(path) if path.qself.is_none() => {
                self.scopes.lookup(path.path.get_ident()?)?
            }
            _ => return None,
        };
        let v = &self.vars[var];
        // A row bound by a loop (`let r = *row;`) is copied as an array is; a window or
        // chunk is not.
        let window = self
            .aliases
            .get(&var)
            .is_some_and(|alias| alias.offset.is_some());
        if v.kind != VarKind::Real || window {
            return None;
        }
        let rest = match (v.slice, indices.len()) {
            (false, k) => v.dims.get(k..)?,
            (true, 0) => return None,
            (true, k) => v.dims.get(k - 1..)?,
        };
        (!rest.is_empty()).then(|| rest.to_vec())
    }

    /// `let v = w;` of an array of numbers, or `let row = h[t];` (`dims` the dimensions
    /// of what is copied): written out as what it does, `let mut v = [[0.0; d1]; d0];`
    /// and loops that copy each element.
    pub(super) fn array_copy(
        &mut self,
        ident: Option<&Ident>,
        source: &Expr,
        dims: &[TokenStream],
    ) {
        let Some(ident) = ident else {
            return;
        };
        let span = source.span();
        let zeros = dims
            .iter()
            .rev()
            .fold(quote!(0.0), |inner, dim| quote!([#inner; #dim]));
        let declare: syn::Stmt = syn::parse_quote_spanned!(span=> let mut #ident = #zeros;);
        self.statement(&declare);
        self.array_assignment(&syn::parse_quote!(#ident), source, dims);
    }

    /// `h = next;` (or `h[t] = row;`) of arrays of numbers: loops that assign each element
    /// (`dims` the dimensions of what is copied).
    pub(super) fn array_assignment(&mut self, target: &Expr, source: &Expr, dims: &[TokenStream]) {
        let span = source.span();
        let indices: Vec<Ident> = (0..dims.len())
            .map(|k| Ident::new(&format!("__assign_index_{k}"), Span::mixed_site()))
            .collect();
        let copy = indices.iter().zip(dims).rev().fold(
            quote!(#target #([#indices])* = #source #([#indices])*;),
            |body, (index, dim)| quote!(for #index in 0..#dim { #body }),
        );
        let copy: syn::Stmt = syn::parse_quote_spanned!(span=> #copy);
        self.statement(&copy);
    }

    /// The statements a `let` of an array returned by a call stands for (`None` for
    /// another `let`): `let [a, b] = h(x);` is `let (a, b) = h(x);`, and
    /// `let v: [f64; 2] = h(x);` is `let (o0, o1) = h(x); let v = [o0, o1];`. The call
    /// is differentiated through the callee's pullback, as one returning a tuple is.
    pub(super) fn array_call(
        &self,
        pat: &Pat,
        ty: Option<&Type>,
        init: &Expr,
    ) -> Option<Vec<syn::Stmt>> {
        let call = strip_expr(init);
        let varying = match call {
            Expr::Call(call) => !self.constant_arguments(call),
            Expr::MethodCall(call) => self.is_whole(&call.receiver),
            _ => false,
        };
        // A constant call (`h(1.0)`) is taken apart into constants (see `destructure`).
        let constant = matches!(call, Expr::Call(call) if self.constant_call_of_path(call));
        if !(varying || (constant && ty.is_some())) {
            return None;
        }
        match (pat, ty) {
            (Pat::Slice(slice), None) => {
                let names: Vec<&Pat> = slice.elems.iter().collect();
                (names.len() >= 2).then(|| syn::parse_quote!(let (#(#names),*) = #call;))
            }
            (Pat::Ident(name), Some(ty)) if name.by_ref.is_none() && name.subpat.is_none() => {
                let dims = array_dims(ty, self.float)?;
                let [len] = dims.as_slice() else {
                    return None;
                };
                let len: usize = syn::parse2::<syn::LitInt>(len.clone())
                    .ok()?
                    .base10_parse()
                    .ok()?;
                if len < 2 {
                    return None;
                }
                let outputs: Vec<Ident> = (0..len)
                    .map(|k| Ident::new(&format!("__autodiff_output_{k}"), Span::mixed_site()))
                    .collect();
                let ident = &name.ident;
                let mutability = &name.mutability;
                Some(if varying {
                    syn::parse_quote! {
                        let (#(#outputs),*) = #call;
                        let #mutability #ident = [#(#outputs),*];
                    }
                } else {
                    syn::parse_quote! {
                        let [#(#outputs),*] = #call;
                        let #mutability #ident = [#(#outputs),*];
                    }
                })
            }
            _ => None,
        }
    }

    pub(super) fn destructure(&mut self, slice: &syn::PatSlice, init: &Expr) {
        // `let [a, b] = h(1.0);` of a call whose arguments read no number: constants.
        if let Expr::Call(call) = strip_expr(init) {
            if self.constant_call_of_path(call) {
                let message = "#[grad] binds array elements to names or `_`";
                if let Some(names) = self.part_names(&slice.elems, message) {
                    self.constant_parts(names, call, |k| quote!([#k]));
                }
                return;
            }
        }
        let Expr::Path(path) = strip_expr(init) else {
            if matches!(strip_expr(init), Expr::Array(_)) {
                // `let [a, b] = [x * y, x + y];`: the array bound to a local first.
                let parts = Ident::new(
                    &format!("__autodiff_parts{}", self.vars.len()),
                    expr_span(init),
                );
                let statements: Vec<syn::Stmt> = syn::parse_quote! {
                    let #parts = #init;
                    let #slice = #parts;
                };
                for statement in &statements {
                    self.statement(statement);
                }
                return;
            }
            self.error(
                init,
                "#[grad] takes an array apart when it is named (`let [a, b] = w;`) or written \
                 out (`let [a, b] = [x, y];`)",
            );
            return;
        };
        let Some(ident) = path.path.get_ident() else {
            self.error(init, "expected a local array or an array parameter");
            return;
        };
        let Some(var) = self.scopes.lookup(ident) else {
            self.error(
                init,
                format!("`{ident}` is not a local variable of this function"),
            );
            return;
        };
        let v = &self.vars[var];
        let fits = !v.slice && v.dims.len() == 1 && !self.aliases.contains_key(&var);
        if !fits {
            self.error(
                init,
                "#[grad] takes apart one-dimensional arrays of `f64` (`let [a, b] = w;`)",
            );
            return;
        }
        let span = ident.span();
        for (position, element) in slice.elems.iter().enumerate() {
            let name = match element {
                Pat::Ident(name) if name.subpat.is_none() && name.by_ref.is_none() => name,
                Pat::Wild(_) => continue,
                other => {
                    self.error(other, "#[grad] binds array elements to names or `_`");
                    continue;
                }
            };
            let (value, nodes) = self.collect(|this| {
                let index = this.push(NodeKind::Const(quote!(#position)), Num::Int, span);
                let place = Place {
                    var,
                    indices: vec![index],
                };
                this.push(NodeKind::Read(place), Num::Real, span)
            });
            let element = self.declare(&name.ident, VarKind::Real, Vec::new(), Num::Real);
            self.vars[element].mutable = name.mutability.is_some();
            self.emit(Stmt::Let {
                var: element,
                value: Some(value),
                nodes,
            });
        }
    }

    /// `let v = [a * b, c];`, also nested (`[[c, -s], [s, c]]`, rows of one length): a
    /// local array of zeros, then one assignment per element.
    pub(super) fn array_literal(&mut self, ident: Option<&Ident>, array: &syn::ExprArray) {
        let span = array.bracket_token.span.join();
        let mut shape = Shape::default();
        shape.walk(array, &mut Vec::new());
        if let Some((tokens, message)) = shape.error {
            self.error(tokens, message);
            return;
        }
        let zero = self.real_literal("0.0");
        let zeros_const = shape
            .dims
            .iter()
            .rev()
            .fold(quote!(#zero), |inner, len| quote!([#inner; #len]));
        let (zeros, nodes) =
            self.collect(|this| this.push(NodeKind::Const(zeros_const), Num::Real, span));
        let var = self.declare_hidden(VarKind::Real, Num::Real);
        self.vars[var].dims = shape.dims.iter().map(|len| quote!(#len)).collect();
        self.vars[var].mutable = true;
        self.vars[var].reassigned = true;
        self.emit(Stmt::Let {
            var,
            value: Some(zeros),
            nodes,
        });
        let errors = self.errors.count();
        for (position, element) in shape.leaves {
            let (value, nodes) = self.collect(|this| this.real(element));
            let (indices, index_nodes) = self.collect(|this| {
                position
                    .iter()
                    .map(|i| this.push(NodeKind::Const(quote!(#i)), Num::Int, span))
                    .collect::<Vec<_>>()
            });
            let mut all = index_nodes;
            all.extend(nodes);
            self.emit(Stmt::Assign {
                place: Place { var, indices },
                value,
                nodes: all,
            });
        }
        // An element reported: the array's uses are not reported again.
        if self.errors.count() > errors {
            self.silent.push(var);
        }
        // Bound to the user's name only now: the elements cannot refer to it.
        if let Some(ident) = ident {
            self.scopes.bind(ident, var);
        }
    }

    /// `[c; N]` or `[[c; M]; N]` with a constant `c`: the dimensions and the constant node.
    pub(super) fn array_init(&mut self, expr: &Expr) -> (Option<Vec<TokenStream>>, Option<NodeId>) {
        let mut dims = Vec::new();
        let mut current = expr;
        while let Expr::Repeat(repeat) = current {
            dims.push(repeat.len.to_token_stream());
            current = &repeat.expr;
        }
        let element = self.expr(current);
        let constant = matches!(self.nodes[element].kind, NodeKind::Const(_))
            && self.nodes[element].num != Num::Int;
        if !constant {
            self.error(
                current,
                "a local array starts from a constant (`[0.0; N]`); assign its elements after",
            );
            return (None, None);
        }
        let value = self.push(
            NodeKind::Const(expr.to_token_stream()),
            Num::Real,
            expr.span(),
        );
        (Some(dims), Some(value))
    }
}

/// The shape of a (nested) array literal: its lengths, outermost first, and its elements
/// with their positions; or what makes it not rectangular.
#[derive(Default)]
struct Shape<'a> {
    dims: Vec<usize>,
    leaves: Vec<(Vec<usize>, &'a Expr)>,
    /// The depth at which elements are numbers, once one is seen.
    depth: Option<usize>,
    error: Option<(TokenStream, &'static str)>,
}

impl<'a> Shape<'a> {
    fn walk(&mut self, array: &'a syn::ExprArray, position: &mut Vec<usize>) {
        let depth = position.len();
        let len = array.elems.len();
        match self.dims.get(depth) {
            Some(&known) if known != len => {
                self.fail(
                    array,
                    "the rows of a nested array literal must have one length",
                );
                return;
            }
            Some(_) => {}
            None => self.dims.push(len),
        }
        for (i, element) in array.elems.iter().enumerate() {
            position.push(i);
            match strip_expr(element) {
                Expr::Array(inner) => {
                    if self.depth.is_some_and(|d| d <= depth + 1) {
                        self.fail(
                            element,
                            "an array literal mixes numbers and rows at one level",
                        );
                    } else {
                        self.walk(inner, position);
                    }
                }
                _ => {
                    if *self.depth.get_or_insert(depth + 1) != depth + 1 {
                        self.fail(
                            element,
                            "an array literal mixes numbers and rows at one level",
                        );
                    } else {
                        self.leaves.push((position.clone(), element));
                    }
                }
            }
            position.pop();
            if self.error.is_some() {
                return;
            }
        }
    }

    fn fail(&mut self, tokens: impl ToTokens, message: &'static str) {
        if self.error.is_none() {
            self.error = Some((tokens.to_token_stream(), message));
        }
    }
}
