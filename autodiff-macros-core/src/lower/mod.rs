//! Lowering: the user's `syn::ItemFn` → [`Function`], statements over variables whose
//! expressions are graphs of nodes.
//!
//! ```text
//! fn f(x: f64) -> f64 {          var0 x (param)
//!     let mut y = x * 2.0;        let var1 y = %2        %0 = read var0  %1 = 2.0  %2 = mul
//!     y += x.sin();               var1 = %6              %3 = read var1  %4 = read var0
//!                                                        %5 = sin(%4)    %6 = add(%3, %5)
//!     y                           return %7              %7 = read var1
//! }
//! ```
//!
//! Names resolve to variables through nested scopes, so shadowing gives a new variable and
//! assignment writes the existing one. Blocks used as values are flattened into the
//! enclosing statements (every variable has its own slot, so nothing clashes), and an `if`
//! used as a value becomes a temporary assigned in both branches. Everything this step
//! cannot lower is recorded as an error under the user's tokens and lowering goes on, so
//! one compile reports every problem in the function.

use crate::args::GradArgs;
use crate::errors::Errors;
use crate::expand::{Context, Layouts};
use crate::ir::{
    Block, FieldParam, Function, Node, NodeId, NodeKind, Num, Param, Place, Stmt, Var, VarId,
    VarKind,
};
use crate::ops::{self, Arg, Op};
use crate::types::{
    array_dims, floats_in, integer_slice, is_bool, is_integer, slice_element, Float,
};

mod arrays;
mod body;
mod closure;
mod control;
mod expr;
mod fields;
mod iter;
mod literal;
mod opaque;
mod signature;
mod stmt;
mod written;
pub use control::strip as strip_parens;
pub use opaque::is_opaque;
use proc_macro2::{Span, TokenStream};
use quote::{quote, ToTokens};
pub use signature::{differentiates_self, is_self, self_is_struct, signature_float};
use std::collections::{HashMap, HashSet};
use syn::spanned::Spanned;
use syn::{BinOp, Expr, FnArg, Ident, Item, ItemFn, Lit, Local, Pat, Path, ReturnType, Type, UnOp};

/// Lowers a function. Returns every error found in it at once.
pub fn lower(original: ItemFn, args: &GradArgs, context: &Context) -> syn::Result<Function> {
    lower_with(original, args, context, None)
}

/// Lowers a function with a vector output for its pullback: with one more parameter, the
/// seed (of the output's type; `&[f64]` for a `Vec`), and returning `Σ seed·output`, whose
/// gradient with respect to the other parameters is the vector–Jacobian product. The
/// output is still computed in its variable ([`Function::output`]), for the pullback's
/// value.
pub fn lower_contracted(
    mut original: ItemFn,
    args: &GradArgs,
    context: &Context,
) -> syn::Result<Function> {
    let seed = if crate::types::mentions(&original.to_token_stream(), &|i| i == "seed") {
        Ident::new("__seed", Span::mixed_site())
    } else {
        Ident::new("seed", Span::mixed_site())
    };
    let ty = match &original.sig.output {
        ReturnType::Type(_, ty) => seed_type(ty),
        ReturnType::Default => syn::parse_quote!(f64),
    };
    original.sig.inputs.push(syn::parse_quote!(#seed: #ty));
    let mut function = lower_with(original, args, context, Some(seed))?;
    let index = function.params.len() - 1;
    function.params[index].wrt = false;
    function.wrt.retain(|&i| i != index);
    if let Some(output) = &mut function.output {
        output.seed = Some(index);
    }
    Ok(function)
}

/// The type of a vector output's seed: the output's array type, or a slice for a `Vec`.
pub fn seed_type(output: &Type) -> Type {
    if matches!(strip_group(output), Type::Array(_)) {
        return output.clone();
    }
    let real = if stmt::is_vec_of(output, Float::F32) {
        quote!(f32)
    } else {
        quote!(f64)
    };
    syn::parse_quote!(&[#real])
}

fn lower_with(
    original: ItemFn,
    args: &GradArgs,
    context: &Context,
    contract: Option<Ident>,
) -> syn::Result<Function> {
    // A constant of unknown type that a loop assigns a number to (`let mut y = PI;` then
    // `y *= x;` in a loop) is a number from its declaration on: the loop's statements before
    // the assignment read it as one in later iterations. Lowered again until no such
    // declaration is found late (each lowering finds at least one more, or stops).
    let mut real_from_start = HashSet::new();
    loop {
        let mut lowering = lower_once(
            &original,
            args,
            context,
            contract.clone(),
            real_from_start.clone(),
        );
        let late: Vec<(String, usize)> = std::mem::take(&mut lowering.promoted_in_loops)
            .into_iter()
            .filter(|key| !real_from_start.contains(key))
            .collect();
        if late.is_empty() || real_from_start.len() > 64 {
            return finish(lowering, original, args, context);
        }
        real_from_start.extend(late);
    }
}

/// One lowering of `original`, with the declarations of `real_from_start` numbers from
/// the start.
fn lower_once(
    original: &ItemFn,
    args: &GradArgs,
    context: &Context,
    contract: Option<Ident>,
    real_from_start: HashSet<(String, usize)>,
) -> Lowering {
    let mut lowering = Lowering {
        contract,
        real_from_start,
        ..Lowering::default()
    };
    let params = lowering.signature(original, args, context);
    lowering.lowered_params = params;
    let body = fields::rename(
        &original.block,
        &lowering.field_names,
        &lowering.collections,
        &mut lowering.errors,
    );
    let body = literal::scalarize(&body, &mut lowering.errors);
    lowering.function_body(&body);
    lowering
}

/// The function that `lowering` lowered.
fn finish(
    mut lowering: Lowering,
    original: ItemFn,
    args: &GradArgs,
    context: &Context,
) -> syn::Result<Function> {
    let params = std::mem::take(&mut lowering.lowered_params);
    let wrt = match &args.wrt {
        Some(names) => names
            .iter()
            .filter_map(|name| params.iter().position(|p| p.ident == *name))
            .collect(),
        None => (0..params.len()).filter(|&i| params[i].wrt).collect(),
    };
    let outputs = lowering.outputs;
    let output = lowering.output.take();
    let probe_self = lowering.probe_self;
    let real = lowering.float;
    let Lowering {
        vars,
        fields,
        nodes,
        mut blocks,
        items,
        constant_uses,
        errors,
        ..
    } = lowering;
    errors.finish(Function {
        original,
        params,
        fields,
        in_impl: context.self_ty.is_some(),
        reassociate: args.reassociate || args.parallel.is_some(),
        parallel: args.parallel,
        probe_self,
        outputs,
        output,
        real,
        wrt,
        items,
        vars,
        nodes,
        body: blocks.pop().unwrap_or_default(),
        constant_uses,
    })
}

/// A type without the invisible groups and parentheses around it.
fn strip_group(ty: &Type) -> &Type {
    match ty {
        Type::Group(group) => strip_group(&group.elem),
        Type::Paren(paren) => strip_group(&paren.elem),
        ty => ty,
    }
}

/// The kind of variable that holds a value of this kind (a constant of unknown type is
/// taken for an integer until an `f64` is assigned to it).
fn kind_of(num: Num) -> VarKind {
    match num {
        Num::Real => VarKind::Real,
        Num::Bool => VarKind::Bool,
        Num::Int | Num::Unknown => VarKind::Int,
        Num::Opaque => VarKind::Opaque,
    }
}

/// Local names in nested block scopes, each mapped to its variable. Lookups are hashed, so
/// a body with thousands of `let`s lowers in linear time.
#[derive(Default)]
struct Scopes {
    /// For each name, its variables from the outermost scope to the innermost.
    bindings: HashMap<String, Vec<VarId>>,
    /// For each open block, the names it declared.
    declared: Vec<Vec<String>>,
}

impl Scopes {
    pub(super) fn push(&mut self) {
        self.declared.push(Vec::new());
    }

    pub(super) fn pop(&mut self) {
        for name in self.declared.pop().unwrap_or_default() {
            if let Some(stack) = self.bindings.get_mut(&name) {
                stack.pop();
            }
        }
    }

    pub(super) fn bind(&mut self, ident: &Ident, var: VarId) {
        let name = ident.to_string();
        self.bindings.entry(name.clone()).or_default().push(var);
        if let Some(scope) = self.declared.last_mut() {
            scope.push(name);
        }
    }

    pub(super) fn lookup(&self, ident: &Ident) -> Option<VarId> {
        self.bindings.get(&ident.to_string())?.last().copied()
    }
}

#[derive(Default)]
struct Lowering {
    vars: Vec<Var>,
    /// For reads of each variable: what kind of number they give.
    var_nums: Vec<Num>,
    nodes: Vec<Node>,
    scopes: Scopes,
    /// Blocks under construction, innermost last.
    blocks: Vec<Block>,
    /// Nodes of statements under construction, innermost last.
    pending: Vec<Vec<NodeId>>,
    items: Vec<Item>,
    constant_uses: Vec<(NodeId, syn::Error)>,
    errors: Errors,
    /// Names bound to an element (or a window) of a slice or array by an iterator loop,
    /// by the placeholder variable the name resolves to.
    aliases: HashMap<VarId, Alias>,
    /// The loops around the code being lowered, innermost last.
    loops: Vec<LoopContext>,
    /// How many loop bodies enclose the code being lowered: those of `loops`, and those of
    /// `for` loops over constant ranges, which have no context since nothing leaves them.
    loop_bodies: usize,
    /// How many variables of each name have been declared, so that a declaration is known
    /// by its name and rank from one lowering of the function to the next.
    declared: HashMap<String, usize>,
    /// The name and rank of each variable's declaration (for those with a name).
    declaration: HashMap<VarId, (String, usize)>,
    /// Declarations of constants of unknown type (`let mut y = PI;`, a part of a constant
    /// call's tuple) to declare as numbers from the start: the previous lowering assigned
    /// them a number inside a loop (see [`Lowering::promoted_in_loops`]).
    real_from_start: HashSet<(String, usize)>,
    /// Declarations of constants of unknown type that became numbers at an assignment
    /// inside a loop, where the loop's earlier statements had read them as constants in
    /// the iterations after the first: the function is lowered again with them numbers
    /// from the start.
    promoted_in_loops: Vec<(String, usize)>,
    /// The parameters as lowered by [`Lowering::signature`] (until the function is built).
    lowered_params: Vec<Param>,
    /// Local vectors `vec![c; n]` declared in a loop body: the sweep sizes their adjoints
    /// by the length they start with, so `push` cannot grow them.
    loop_vectors: Vec<VarId>,
    /// `return` anywhere but at the end: the result variable and the flag that ends the
    /// function.
    early_return: Option<(VarId, VarId)>,
    /// Control flags set so far (`break`, `continue`, `return`), in order; a block guards
    /// what follows a statement that set one of its live flags.
    flags_set: Vec<VarId>,
    /// For each control flag, the depth of the loop it belongs to (0: the function).
    flag_depth: HashMap<VarId, usize>,
    /// Parameters whose type was rejected: their uses are not reported again.
    silent: Vec<VarId>,
    /// Parameters of a type #[grad] does not look into (see `opaque`).
    opaque: Vec<VarId>,
    /// Parameters declared as references (`w: &[f64; 3]`, slices): a loop over one yields
    /// references to its elements.
    references: Vec<VarId>,
    /// How many closure bodies enclose the code being lowered.
    closures: usize,
    /// Closures bound to a name (`let sq = |t: f64| t * t;`), by the placeholder variable
    /// their name is bound to; inlined at each call (see `closure`).
    named_closures: HashMap<VarId, closure::NamedClosure>,
    /// The fields of struct parameters, each a variable of its own.
    fields: Vec<FieldParam>,
    /// For each field of a struct parameter, by its path (`m.layer.w`): the name its
    /// variable is bound to (`m·layer·w`, which no user can write by accident).
    field_names: HashMap<String, Ident>,
    /// For each collection of structs, parameter or field, by its path (`ps`,
    /// `m.layers`): the variables of its elements' fields.
    collections: HashMap<String, fields::CollectionNames>,
    /// The variables of struct parameters as a whole, which the body cannot read.
    structs: Vec<VarId>,
    /// A method whose `self` is a constant: `self.field` reads are constants.
    constant_self: bool,
    /// `self` was rejected with an error: its uses are not reported again.
    self_rejected: bool,
    /// How many numbers the function returns (a tuple for more than one).
    outputs: usize,
    /// A vector output: its dimensions and whether it is a `Vec` (from the signature),
    /// then the variable returned (from the body).
    vector_output: Option<(Vec<TokenStream>, bool, Type)>,
    /// See [`Function::output`].
    output: Option<crate::ir::VectorOutput>,
    /// Lowering the pullback of a vector output: the seed parameter it is contracted with.
    contract: Option<Ident>,
    /// See [`Function::probe_self`].
    probe_self: Option<Span>,
    /// The float type the function computes in, read from its signature.
    float: Float,
    /// Whether the return type was rejected (the returned value is then not checked).
    return_rejected: bool,
    /// The const generic parameters: loops they bound run for a count known only at run
    /// time as far as the generated code can tell (Rust does not size arrays by arithmetic
    /// on them), so their values go to the workspace.
    generic_consts: Vec<String>,
}

/// A name bound by an iterator loop to part of a slice or array: `for x in xs` binds `x`
/// to `xs[k]`, `for w in xs.windows(2)` binds `w` to `xs[k..k + 2]`.
#[derive(Clone)]
struct Alias {
    /// The slice or array.
    var: VarId,
    /// Integer variables giving the leading indices.
    prefix: Vec<VarId>,
    /// An integer variable added to the next index (windows and chunks).
    offset: Option<VarId>,
    /// The length, for `.len()` of a window or chunk.
    len: Option<VarId>,
    /// How many references the name is away from the element: 1 for `for row in m` or
    /// `m.iter()` (a `&[f64; 2]`), 0 for `for &row in m` or `.copied()` (the row itself),
    /// 2 in `.filter(|row| …)`. A row passed whole to a call is passed as a reference when
    /// the argument as written is one (`dot(row, x)`, `dot(&row, x)`).
    refs: usize,
}

/// A loop being lowered, for `break` and `continue`.
struct LoopContext {
    /// Its label, without the `'`.
    label: Option<String>,
    /// Set by `break`: ends the loop.
    break_flag: Option<VarId>,
    /// Set by `continue`: skips the rest of the iteration.
    continue_flag: Option<VarId>,
    /// For `loop` used as a value: the variable `break value` assigns.
    value: Option<VarId>,
}

impl Lowering {
    /// Whether tokens name a const generic parameter.
    pub(super) fn mentions_generic(&self, tokens: &TokenStream) -> bool {
        crate::types::mentions(tokens, &|ident| {
            self.generic_consts.contains(&ident.to_string())
        })
    }

    // ----- building blocks ---------------------------------------------------------------

    pub(super) fn declare(
        &mut self,
        ident: &Ident,
        kind: VarKind,
        dims: Vec<TokenStream>,
        num: Num,
    ) -> VarId {
        let name = ident.to_string();
        let rank = self.declared.entry(name.clone()).or_insert(0);
        *rank += 1;
        let key = (name, *rank);
        // A constant of unknown type that a loop later assigns a number to.
        let (kind, num) =
            if kind == VarKind::Int && num == Num::Unknown && self.real_from_start.contains(&key) {
                (VarKind::Real, Num::Real)
            } else {
                (kind, num)
            };
        let var = self.declare_hidden(kind, num);
        self.vars[var].dims = dims;
        self.scopes.bind(ident, var);
        self.declaration.insert(var, key);
        var
    }

    /// A variable of the body, bound to the user's name; or, for `None` (`let _ = …`,
    /// `for _ in …`, the value of an `if`), bound to no name at all: a made-up name would
    /// hide the user's variable of that name.
    pub(super) fn declare_named(
        &mut self,
        ident: Option<&Ident>,
        kind: VarKind,
        dims: Vec<TokenStream>,
        num: Num,
    ) -> VarId {
        match ident {
            Some(ident) => self.declare(ident, kind, dims, num),
            None => {
                let var = self.declare_hidden(kind, num);
                self.vars[var].dims = dims;
                var
            }
        }
    }

    /// The variable of a struct (a parameter, a struct field of one, or `self`), which the
    /// body passes whole but never reads as a number.
    pub(super) fn declare_struct(&mut self, ident: &Ident, kind: VarKind) -> VarId {
        let var = self.declare(ident, kind, Vec::new(), Num::Unknown);
        self.vars[var].is_param = true;
        self.structs.push(var);
        var
    }

    /// A variable no name refers to (a counter, a bound, a flag, a temporary).
    pub(super) fn declare_hidden(&mut self, kind: VarKind, num: Num) -> VarId {
        self.vars.push(Var {
            kind,
            dims: Vec::new(),
            is_param: false,
            reassigned: false,
            mutable: false,
            slice: false,
            rows: false,
            stable: true,
        });
        self.var_nums.push(num);
        self.vars.len() - 1
    }

    /// A read of a whole variable.
    pub(super) fn read_var(&mut self, var: VarId, span: Span) -> NodeId {
        let num = self.var_nums[var];
        let place = Place {
            var,
            indices: Vec::new(),
        };
        self.push(NodeKind::Read(place), num, span)
    }

    /// An `f64` temporary, `0.0` until assigned (the value of an `if`, a `match`, a
    /// `loop`, or a block that a flag may cut short).
    pub(super) fn temporary(&mut self, span: Span) -> VarId {
        let var = self.declare_hidden(VarKind::Real, Num::Real);
        self.vars[var].mutable = true;
        self.vars[var].reassigned = true;
        let (value, nodes) = self
            .collect(|this| this.push(NodeKind::Const(this.real_literal("0.0")), Num::Real, span));
        self.emit(Stmt::Let {
            var,
            value: Some(value),
            nodes,
        });
        var
    }

    /// A literal of the function's float type: `0.0f64`, `0.0f32`.
    pub(super) fn real_literal(&self, value: &str) -> TokenStream {
        self.float.literal(value)
    }

    /// The function's float type, `f64` or `f32`, for messages.
    pub(super) fn real_name(&self) -> &'static str {
        self.float.name()
    }

    /// Records an error at a span.
    /// Reports `what` (a construct whose gradient allocates) under `tokens` when generated
    /// code may not allocate: the `alloc` feature of `autodiff` is off.
    pub(super) fn needs_alloc(&mut self, tokens: impl ToTokens, what: &str) {
        if let Some(message) = alloc_missing(what) {
            self.errors.push(syn::Error::new_spanned(tokens, message));
        }
    }

    /// [`needs_alloc`](Self::needs_alloc) under one span.
    pub(super) fn needs_alloc_at(&mut self, span: Span, what: &str) {
        if let Some(message) = alloc_missing(what) {
            self.errors.push(syn::Error::new(span, message));
        }
    }

    pub(super) fn error_at(&mut self, span: Span, message: impl std::fmt::Display) -> NodeId {
        self.errors.push(syn::Error::new(span, message));
        self.poisoned(span)
    }

    pub(super) fn push(&mut self, kind: NodeKind, num: Num, span: Span) -> NodeId {
        self.nodes.push(Node { kind, num, span });
        let id = self.nodes.len() - 1;
        if let Some(pending) = self.pending.last_mut() {
            pending.push(id);
        }
        id
    }

    /// The variable in scope that a path expression names (`w`), if it names one.
    pub(super) fn named_var(&self, expr: &Expr) -> Option<VarId> {
        match expr {
            Expr::Path(path) if path.qself.is_none() => self.scopes.lookup(path.path.get_ident()?),
            _ => None,
        }
    }

    /// A stand-in value after an error, so lowering can go on and find more errors.
    pub(super) fn poisoned(&mut self, span: Span) -> NodeId {
        self.push(NodeKind::Const(quote!(0.0)), Num::Unknown, span)
    }

    pub(super) fn error(
        &mut self,
        tokens: impl ToTokens,
        message: impl std::fmt::Display,
    ) -> NodeId {
        let span = tokens
            .to_token_stream()
            .into_iter()
            .next()
            .map(|t| t.span());
        self.errors.at(tokens, message);
        self.poisoned(span.unwrap_or_else(Span::call_site))
    }

    pub(super) fn emit(&mut self, stmt: Stmt) {
        if let Some(block) = self.blocks.last_mut() {
            block.push(stmt);
        }
    }

    /// Runs `f` collecting the nodes it creates, for one statement.
    pub(super) fn collect<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> (T, Vec<NodeId>) {
        self.pending.push(Vec::new());
        let value = f(self);
        let nodes = self.pending.pop().unwrap_or_default();
        (value, nodes)
    }

    /// Lowers `body` into a new block of its own (a loop body or a branch).
    pub(super) fn nested_block(&mut self, body: impl FnOnce(&mut Self)) -> Block {
        self.blocks.push(Vec::new());
        self.scopes.push();
        body(self);
        self.scopes.pop();
        self.blocks.pop().unwrap_or_default()
    }
}

/// `a[i][j]` → (`a`, [`i`, `j`]); anything else → (itself, []).
fn split_index(expr: &Expr) -> (&Expr, Vec<&Expr>) {
    let mut indices = Vec::new();
    let mut current = expr;
    loop {
        match current {
            Expr::Index(index) => {
                indices.push(&*index.index);
                current = &index.expr;
            }
            Expr::Paren(paren) => current = &paren.expr,
            Expr::Group(group) => current = &group.expr,
            _ => break,
        }
    }
    indices.reverse();
    (current, indices)
}

/// Statements that have no value (`x = …`, `x += …`, `for …`).
fn is_statement_only(expr: &Expr) -> bool {
    match expr {
        Expr::Assign(_) | Expr::ForLoop(_) | Expr::While(_) => true,
        Expr::If(expr_if) => expr_if.else_branch.is_none(),
        Expr::Binary(binary) => compound_operator(&binary.op).is_some(),
        _ => false,
    }
}

/// The operator of a compound assignment (`+=` → `+`).
fn compound_operator(op: &BinOp) -> Option<&'static str> {
    match op {
        BinOp::AddAssign(_) => Some("+"),
        BinOp::SubAssign(_) => Some("-"),
        BinOp::MulAssign(_) => Some("*"),
        BinOp::DivAssign(_) => Some("/"),
        BinOp::RemAssign(_) => Some("%"),
        _ => None,
    }
}

fn has_generic_args(path: &Path) -> bool {
    path.segments
        .iter()
        .any(|segment| !segment.arguments.is_none())
}

/// The error for `what` when the `alloc` feature is off; `None` when it is on.
fn alloc_missing(what: &str) -> Option<String> {
    (!cfg!(feature = "alloc")).then(|| {
        format!(
            "{what} needs the `alloc` feature of `autodiff` (its gradient keeps a `Vec`); \
             without it, #[grad] supports `f64`s, arrays and loops with constant bounds"
        )
    })
}
