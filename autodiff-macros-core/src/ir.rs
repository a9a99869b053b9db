//! The intermediate representation between the user's `syn` tree and the generated code.
//!
//! A body lowers to a tree of [`Stmt`]s over program variables ([`Var`]: scalars, arrays,
//! integers, booleans). Every expression a statement evaluates is a small graph of
//! [`Node`]s (static single assignment, operands before users) kept in one arena per
//! function, so a node's id names its slot in the generated code. Every node and variable
//! keeps the span of the user tokens it came from.
//!
//! ```text
//! fn f(w: &[f64; 3], x: f64) -> f64 {        var0 w: [f64; 3] (param)   var1 x (param)
//!     let mut acc = 0.0;                      let var2 acc = %0          %0 = const 0.0
//!     for i in 0..3 {                         for var3 i in 0..3 {
//!         acc += w[i] * x;                        var2 = %5              %1 = read var2
//!     }                                                                  %2 = read var3
//!     acc.tanh()                                                         %3 = read var0[%2]
//! }                                                                      %4 = read var1
//!                                                                        %5 = add(%1, mul(%3, %4))
//!                                             }
//!                                             return %7                  %7 = tanh(read var2)
//! ```
//! The generated forward pass follows the tree; the reverse sweep walks it backwards
//! (loops run in reverse, each `if` replays the branch the forward pass took).

use crate::ops::Op;
pub use crate::types::Float;
use proc_macro2::{Span, TokenStream};
use syn::{Ident, Path, Type};

/// Index of a node in [`Function::nodes`].
pub type NodeId = usize;
/// Index of a variable in [`Function::vars`].
pub type VarId = usize;

/// A function being differentiated.
#[derive(Clone)]
pub struct Function {
    /// The item as the user wrote it; emitted unchanged.
    pub original: syn::ItemFn,
    /// Parameters in declaration order.
    pub params: Vec<Param>,
    /// The parameters whose partials are returned (indices into `params`), in that order.
    pub wrt: Vec<usize>,
    /// `const` and `use` items declared inside the body, copied into the generated function.
    pub items: Vec<syn::Item>,
    /// The fields of struct parameters that the body can read.
    pub fields: Vec<FieldParam>,
    /// How many numbers it returns: 1, or the length of the tuple it returns (then only the
    /// pullback is generated).
    pub outputs: usize,
    /// A vector output (`[f64; M]`, nested, or `Vec<f64>`): the local variable the body
    /// returns whole (its [`Stmt::Return`] reads it with no index). Only its pullback,
    /// forward mode and Jacobian are generated; `codegen::contract` makes the pullback.
    pub output: Option<VectorOutput>,
    /// The float type it computes in, `f64` or `f32`: every real parameter, local, partial,
    /// adjoint and saved value has it.
    pub real: Float,
    /// A method marked alone whose `self` is a constant only because `#[grad]` cannot see
    /// its type (no `wrt(..)`): the generated code checks that the type does not derive
    /// `Differentiable` (then the user meant to differentiate it), with the span of `self`.
    pub probe_self: Option<proc_macro2::Span>,
    /// `#[grad(reassociate)]`: the sums that loops accumulate may run in lanes
    /// (`codegen::lanes`).
    pub reassociate: bool,
    /// `#[grad(parallel)]` (the span of `parallel`): the loops whose gradients are
    /// preaccumulated run in chunks on rayon's thread pool (`codegen::preaccumulate`).
    pub parallel: Option<proc_macro2::Span>,
    /// A method or associated function (of an `impl` block marked `#[grad]`): the
    /// functions it generates are reached through `Self::`.
    pub in_impl: bool,
    /// Every program variable: parameters, locals, loop variables.
    pub vars: Vec<Var>,
    /// Every expression node of the body.
    pub nodes: Vec<Node>,
    /// The body; its last statement is the [`Stmt::Return`].
    pub body: Block,
    /// Values that must be constants (an integer exponent, a conversion to an integer), with
    /// the error to report, under the user's tokens, if one depends on a differentiated
    /// parameter after all.
    pub constant_uses: Vec<(NodeId, syn::Error)>,
}

/// The array or vector a function returns.
#[derive(Clone)]
pub struct VectorOutput {
    /// The variable returned.
    pub var: VarId,
    /// The return type, as written.
    pub ty: Type,
    /// After `codegen::contract`: the parameter holding the pullback's seed, of the
    /// output's shape (the function then returns `Σ seed·output`).
    pub seed: Option<usize>,
}

/// A parameter of the function.
#[derive(Clone)]
pub struct Param {
    /// Its name, with the user's span.
    pub ident: Ident,
    /// Its type, as written.
    pub ty: Type,
    /// Its variable.
    pub var: VarId,
    /// Whether it is differentiated (`f64` and `f64` arrays are, unless `wrt(..)` leaves
    /// them out; integers and booleans never are).
    pub wrt: bool,
    /// For a struct parameter (`m: &Mlp` or `m: Mlp`): the struct type, `Mlp`. Its
    /// fields are variables of their own ([`Function::fields`]); `var` stands for the
    /// struct as a whole, which the body never reads.
    pub strukt: Option<Type>,
}

/// A field of a struct parameter (at any depth: `m.layer.w`) that holds numbers: a
/// variable of its own, read as `m.layer.w` and with its adjoint in the same field of the
/// parameter's partial.
#[derive(Clone)]
pub struct FieldParam {
    /// The parameter (an index into [`Function::params`]).
    pub param: usize,
    /// The field's path after the parameter's name: `.layer.w`.
    pub access: TokenStream,
    /// Its variable.
    pub var: VarId,
    /// Whether it is differentiated with its struct (not an integer, a `bool` or a field
    /// marked `#[differentiable(skip)]`).
    pub differentiable: bool,
    /// Whether it holds a struct (passed whole to calls, never read as a number).
    pub strukt: bool,
    /// For a field of the elements of a collection of structs (`m.layers[l].w`, a
    /// variable indexed `[l][..]`): the path inside one element, `.w`; `access` is then
    /// the collection's path, `.layers`, so that the variable read whole is the collection
    /// (`m.layers.len()`).
    pub inner: Option<TokenStream>,
}

/// A program variable.
#[derive(Clone)]
pub struct Var {
    /// What it holds.
    pub kind: VarKind,
    /// Array dimensions, outermost first, as constant expressions (empty for a scalar).
    /// For a slice, the dimensions of one element.
    pub dims: Vec<TokenStream>,
    /// A slice or `Vec` of run-time length: one more index, outermost, before `dims`.
    pub slice: bool,
    /// A slice of rows of run-time length each (`&[Vec<f64>]`, `&[&[f64]]`), data that is
    /// only read: `slice`, with `dims` one placeholder ([`ROW_LENGTH`]) that no generated
    /// code may use; a row's length is `Len` of its place.
    pub rows: bool,
    /// For an integer: whether the reverse sweep can compute its value again (it is never
    /// changed after its `let`, and that `let` reads only such values).
    pub stable: bool,
    /// A parameter (never written unless declared `mut`).
    pub is_param: bool,
    /// Whether some statement writes it after its declaration.
    pub reassigned: bool,
    /// Declared `mut` by the user (kept in the generated code).
    pub mutable: bool,
}

/// The dimension of a row of run-time length in `Var::dims`: a name that nothing
/// defines, so that code using it as a constant length does not compile.
pub const ROW_LENGTH: &str = "__autodiff_row_of_run_time_length";

/// What a variable holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarKind {
    /// `f64` values (a scalar or an array of them).
    Real,
    /// An integer: a loop variable, an integer parameter or an immutable integer local.
    /// Always a constant for differentiation, and recomputed in the reverse sweep.
    Int,
    /// A boolean: a parameter or a local used in conditions.
    Bool,
    /// Numbers that are only read, never differentiated, and that the generated functions
    /// take as they are, with no buffer or tangent: rows of run-time length
    /// (`&[Vec<f64>]`, see `Var::rows`).
    Data,
    /// A parameter of a type #[grad] does not look into (an enum, a `&str`): a constant,
    /// read only in expressions evaluated as written (`lower::opaque`).
    Opaque,
}

/// A sequence of statements.
pub type Block = Vec<Stmt>;

/// A statement of the body.
#[derive(Clone)]
pub enum Stmt {
    /// `let var = value;` (or `let var;` with no value yet).
    Let {
        /// The declared variable.
        var: VarId,
        /// Its initial value.
        value: Option<NodeId>,
        /// The nodes evaluated by this statement, in order.
        nodes: Vec<NodeId>,
    },
    /// `place = value;` (compound assignments are lowered to this).
    Assign {
        /// What is written.
        place: Place,
        /// The value written.
        value: NodeId,
        /// The nodes evaluated by this statement, in order.
        nodes: Vec<NodeId>,
    },
    /// `vector.push(value)`: like an assignment to `vector[len]`, whose index node (the
    /// length before the push) is the place's only index.
    Push {
        /// The new element, `vector[len]`.
        place: Place,
        /// The value pushed.
        value: NodeId,
        /// The nodes evaluated by this statement, in order.
        nodes: Vec<NodeId>,
    },
    /// `let (a, b) = h(x);` of a function returning a tuple: each variable gets its part.
    Unpack {
        /// The variables, in the tuple's order.
        vars: Vec<VarId>,
        /// The call (a [`NodeKind::Pullback`] with as many outputs).
        value: NodeId,
        /// The nodes evaluated by this statement, in order.
        nodes: Vec<NodeId>,
    },
    /// An expression evaluated for its effects (a call); its value is dropped.
    Eval {
        /// The nodes evaluated by this statement, in order.
        nodes: Vec<NodeId>,
    },
    /// `for var in start..end` / `start..=end` with constant bounds.
    For {
        /// The loop variable (an integer).
        var: VarId,
        /// The first value, a constant expression.
        start: TokenStream,
        /// The bound, a constant expression.
        end: TokenStream,
        /// `..=` rather than `..`.
        inclusive: bool,
        /// The loop body.
        body: Block,
    },
    /// A loop run by a counter `0, 1, 2, …` (the lowering of run-time ranges, iterator
    /// loops, `while` and `loop`). It stops after `count` iterations, or as soon as one of
    /// the `exits` flags is set (checked before each iteration).
    Loop {
        /// The counter (an integer variable): 0 in the first iteration.
        counter: VarId,
        /// The number of iterations, evaluated once before the loop (`None`: unbounded).
        count: Option<NodeId>,
        /// A constant bound on the number of iterations, when there is one (the forward
        /// pass then keeps what the sweep needs in stack arrays).
        max_trips: Option<TokenStream>,
        /// The nodes evaluated for `count`, before the loop.
        nodes: Vec<NodeId>,
        /// Flags that end the loop (`break`, `return`, a `while` condition that failed).
        exits: Vec<VarId>,
        /// The loop body.
        body: Block,
    },
    /// `flag = value` for a control flag (`break`, `continue`, `return`); the reverse sweep
    /// never needs it, since the branches it guards replay from saved flags.
    SetFlag {
        /// The flag (a boolean variable).
        var: VarId,
        /// Its new value.
        value: bool,
    },
    /// `if cond { then } else { otherwise }`.
    If {
        /// The condition (a boolean node).
        cond: NodeId,
        /// The nodes evaluated for the condition.
        nodes: Vec<NodeId>,
        /// Taken when the condition holds.
        then: Block,
        /// Taken otherwise (empty for no `else`).
        otherwise: Block,
    },
    /// The function's result. Always the last statement of the body.
    Return {
        /// The returned value.
        value: NodeId,
        /// The nodes evaluated by this statement, in order.
        nodes: Vec<NodeId>,
    },
}

/// Collects the variables that `block` writes (assignments, pushes) into `written` and
/// those it declares (`let`, unpacking, loop variables and counters) into `declared`,
/// through nested blocks.
pub fn writes(block: &[Stmt], written: &mut Vec<VarId>, declared: &mut Vec<VarId>) {
    for stmt in block {
        match stmt {
            Stmt::Let { var, .. } => declared.push(*var),
            Stmt::Unpack { vars, .. } => declared.extend(vars),
            Stmt::Assign { place, .. } | Stmt::Push { place, .. } => written.push(place.var),
            Stmt::For { var, body, .. } => {
                declared.push(*var);
                writes(body, written, declared);
            }
            Stmt::Loop { counter, body, .. } => {
                declared.push(*counter);
                writes(body, written, declared);
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                writes(then, written, declared);
                writes(otherwise, written, declared);
            }
            Stmt::SetFlag { .. } | Stmt::Eval { .. } | Stmt::Return { .. } => {}
        }
    }
}

/// Collects the variables that `block` names, at any depth: those it reads (in its
/// nodes, also as arguments passed whole), writes or declares.
pub fn mentions(nodes: &[Node], block: &[Stmt], named: &mut Vec<VarId>) {
    let mut declared = Vec::new();
    writes(block, named, &mut declared);
    named.extend(declared);
    each_node(block, &mut |id| match &nodes[id].kind {
        NodeKind::Read(place) => named.push(place.var),
        NodeKind::Len(place) => named.push(place.var),
        // An array, slice or struct passed whole to a pullback is read too.
        NodeKind::Pullback { args, .. } => {
            named.extend(args.iter().filter_map(|arg| match arg {
                CallArg::Whole { place, .. } => Some(place.var),
                CallArg::Value(_) => None,
            }));
        }
        _ => {}
    });
}

/// Calls `visit` with each node that `block` evaluates, at any depth, in order.
pub fn each_node(block: &[Stmt], visit: &mut impl FnMut(NodeId)) {
    for stmt in block {
        for &id in stmt.nodes() {
            visit(id);
        }
        match stmt {
            Stmt::For { body, .. } | Stmt::Loop { body, .. } => each_node(body, visit),
            Stmt::If {
                then, otherwise, ..
            } => {
                each_node(then, visit);
                each_node(otherwise, visit);
            }
            _ => {}
        }
    }
}

/// Whether `block` holds a loop, at any depth.
pub fn has_loop(block: &[Stmt]) -> bool {
    block.iter().any(|stmt| match stmt {
        Stmt::For { .. } | Stmt::Loop { .. } => true,
        Stmt::If {
            then, otherwise, ..
        } => has_loop(then) || has_loop(otherwise),
        _ => false,
    })
}

/// A variable, or an element of an array variable.
#[derive(Clone)]
pub struct Place {
    /// The variable.
    pub var: VarId,
    /// One integer node per dimension (empty for a scalar).
    pub indices: Vec<NodeId>,
}

/// One value computed by an expression.
#[derive(Clone)]
pub struct Node {
    /// What computes it.
    pub kind: NodeKind,
    /// What it is known to be, for checking arguments.
    pub num: Num,
    /// The user tokens it came from.
    pub span: Span,
}

/// What computes a node's value.
#[derive(Clone)]
pub enum NodeKind {
    /// A constant written by the user (a literal, a path to a `const`, `[0.0; N]`), emitted
    /// as is.
    Const(TokenStream),
    /// The current value of a variable or array element.
    Read(Place),
    /// An elementary operation from the table.
    Op {
        /// The table entry.
        op: &'static Op,
        /// Operands, the receiver first.
        args: Vec<NodeId>,
    },
    /// A call to a user function `path(args)`, differentiated through `path_grad(args)`.
    Call {
        /// The function as written (`g`, `module::g`).
        path: Path,
        /// The arguments.
        args: Vec<NodeId>,
    },
    /// A call that passes an array, a slice or a struct whole (`g(m, x)`, `self.g(x)`,
    /// `self.layer.g(x)`): the forward pass calls the function for its value, the sweep
    /// calls its pullback `g_vjp` with the call's adjoint.
    Pullback {
        /// What is called.
        callee: Callee,
        /// The arguments (for a method, the receiver first).
        args: Vec<CallArg>,
        /// How many `f64`s it returns: 1, or the length of the tuple it returns (unpacked
        /// by a [`Stmt::Unpack`]).
        outputs: usize,
    },
    /// `(a, b)` returned by a function with several outputs.
    Tuple(Vec<NodeId>),
    /// `stop_gradient(arg)`: the value of `arg`, with no gradient flowing back.
    StopGradient(NodeId),
    /// `arg as ty`: a numeric conversion. Differentiable only as `as f64` of an `f64`.
    Cast {
        /// The converted value.
        arg: NodeId,
        /// The target type.
        ty: Type,
    },
    /// `let name: ty = arg;` with an integer type: the constant keeps its declared type.
    Typed {
        /// The value.
        arg: NodeId,
        /// The declared type.
        ty: Type,
    },
    /// An operation without a derivative: a comparison (`<`, `<=`, `>`, `>=`, `==`, `!=`),
    /// `&&`, `||`, or an integer remainder `%`.
    Infix {
        /// The operator, as tokens.
        op: TokenStream,
        /// Left operand.
        lhs: NodeId,
        /// Right operand.
        rhs: NodeId,
    },
    /// `!arg`.
    Not(NodeId),
    /// `arg.is_nan()`, `arg.is_finite()`, …: a test of a float's class, a `bool`.
    Test {
        /// The method, one of [`crate::ops::TESTS`].
        method: proc_macro2::Ident,
        /// The tested value.
        arg: NodeId,
    },
    /// `TABLE[i][j]`: an element of a constant array (a `const` or `static` item).
    ConstElement {
        /// The constant, as written.
        table: TokenStream,
        /// One integer node per index.
        indices: Vec<NodeId>,
    },
    /// `vec![element; len]`: a local vector of a constant element; with no element,
    /// `Vec::with_capacity(len)`, filled by `push`.
    Vector {
        /// The element (a constant), as written.
        element: Option<TokenStream>,
        /// The length (an integer node).
        len: NodeId,
    },
    /// `xs.len()` of a slice variable, or `rows[i].len()` of one of its rows of run-time
    /// length (a parameter `&[Vec<f64>]`), the place's indices naming the row.
    Len(Place),
    /// The `index`-th local partial of an operation at `args`, as its rule computes it,
    /// held constant: a partial that is piecewise constant (`abs`, `max`, `clamp`, the
    /// roundings), whose own derivative is zero. Made by the tangent transformation
    /// (`codegen::hvp`), never by lowering.
    RulePartial {
        /// The table entry.
        op: &'static Op,
        /// Operands, the receiver first.
        args: Vec<NodeId>,
        /// Which of its `Real` arguments the partial is with respect to.
        index: usize,
    },
    /// A helper of the runtime's `loops` module on integers (a trip count, the `k`-th
    /// value of a range).
    ///
    /// Also a call of a user's function with constant arguments only (integers,
    /// `bool`s, constants; no `f64` of the function's), whose value is a constant:
    /// `scale(n)`, `bounds(n).0`.
    Intrinsic {
        /// The function, by its path: `::autodiff::__private::loops::count`, or the
        /// user's path as written.
        function: TokenStream,
        /// Its arguments.
        args: Vec<NodeId>,
        /// A field of the result read at once (`.0` of a returned tuple), or nothing.
        field: TokenStream,
    },
}

/// The function a [`NodeKind::Pullback`] calls.
#[derive(Clone)]
pub enum Callee {
    /// `path(args)`.
    Path(Path),
    /// `receiver.method(args)`, the receiver being the first argument.
    Method(Ident),
}

/// An argument of a [`NodeKind::Pullback`].
#[derive(Clone)]
pub enum CallArg {
    /// A number (`f64`, integer or `bool`).
    Value(NodeId),
    /// A parameter, a field of a struct parameter, or a row of one, passed whole.
    Whole {
        /// What is passed: a variable with fewer indices than it has dimensions.
        place: Place,
        /// Passed as `&place` rather than `place`.
        reference: bool,
        /// Passed as `*param`: a parameter that is a reference (`w: &[f64; 3]`) passed by
        /// value to a callee taking an array or struct by value.
        deref: bool,
    },
}

/// What kind of value a node holds, as far as lowering can tell without type inference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Num {
    /// An `f64`.
    Real,
    /// An integer (a literal, a loop variable, arithmetic on integers).
    Int,
    /// A boolean.
    Bool,
    /// A constant whose type only the compiler knows (a path to a `const`).
    Unknown,
    /// A constant that holds no number, passed to a call as it is: an opaque parameter
    /// (`name: &str`, `op: Op`) or a string literal. No partial, no tangent.
    Opaque,
}

impl Num {
    /// Whether a call's argument of this kind is passed as it is, with no buffer for its
    /// partial and no tangent: an integer, a `bool` or an opaque constant.
    pub fn passed_as_is(self) -> bool {
        matches!(self, Num::Int | Num::Bool | Num::Opaque)
    }
}

impl Stmt {
    /// The nodes the statement itself evaluates (not those of nested blocks).
    pub fn nodes(&self) -> &[NodeId] {
        match self {
            Stmt::Let { nodes, .. }
            | Stmt::Assign { nodes, .. }
            | Stmt::Push { nodes, .. }
            | Stmt::Unpack { nodes, .. }
            | Stmt::Eval { nodes }
            | Stmt::If { nodes, .. }
            | Stmt::Loop { nodes, .. }
            | Stmt::Return { nodes, .. } => nodes,
            Stmt::For { .. } | Stmt::SetFlag { .. } => &[],
        }
    }
}

impl Stmt {
    /// The nodes the statement itself evaluates, to edit (`None` for a statement without
    /// nodes of its own).
    pub fn nodes_mut(&mut self) -> Option<&mut Vec<NodeId>> {
        match self {
            Stmt::Let { nodes, .. }
            | Stmt::Assign { nodes, .. }
            | Stmt::Push { nodes, .. }
            | Stmt::Unpack { nodes, .. }
            | Stmt::Eval { nodes }
            | Stmt::If { nodes, .. }
            | Stmt::Loop { nodes, .. }
            | Stmt::Return { nodes, .. } => Some(nodes),
            Stmt::For { .. } | Stmt::SetFlag { .. } => None,
        }
    }
}

impl Function {
    /// The field of a struct parameter that a variable stands for, if any.
    pub fn field(&self, var: VarId) -> Option<&FieldParam> {
        self.fields.iter().find(|f| f.var == var)
    }

    /// `base[i][j]…` for a place of `var` whose indices' tokens are `indices`, where
    /// `base` is how the variable (or its adjoint, or tangent) is read whole. The path of a
    /// field of a collection's elements goes after the collection's index:
    /// `m.layers[l].w[i]`.
    pub fn indexed(
        &self,
        var: VarId,
        base: TokenStream,
        indices: impl IntoIterator<Item = TokenStream>,
    ) -> TokenStream {
        let mut indices = indices.into_iter();
        match self.field(var).and_then(|field| field.inner.as_ref()) {
            Some(inner) => match indices.next() {
                Some(first) => quote::quote!(#base [#first] #inner #([#indices])*),
                None => base,
            },
            None => quote::quote!(#base #([#indices])*),
        }
    }

    /// The struct parameter (an index into `params`) whose variable this is, if any.
    pub fn struct_param(&self, var: VarId) -> Option<usize> {
        self.params
            .iter()
            .position(|p| p.var == var && p.strukt.is_some())
    }

    /// Whether a variable holds reals in a binding of its own (a number or an array):
    /// not a slice or vector, a field of a struct parameter, or a struct parameter.
    pub fn plain_real(&self, var: VarId) -> bool {
        let v = &self.vars[var];
        v.kind == VarKind::Real
            && !v.slice
            && self.field(var).is_none()
            && self.struct_param(var).is_none()
    }
}

/// Whether a node can be computed again in the reverse sweep: it reads only constants and
/// integer variables (no `f64` value, no call, no condition). Indices and integer locals
/// must be, since the reverse sweep recomputes them instead of saving them.
pub fn recomputable(nodes: &[Node], vars: &[Var], node: NodeId) -> bool {
    let again = |n: &NodeId| recomputable(nodes, vars, *n);
    match &nodes[node].kind {
        NodeKind::Const(_) => true,
        NodeKind::Read(place) => {
            let var = &vars[place.var];
            var.kind == VarKind::Int && var.stable && place.indices.iter().all(again)
        }
        NodeKind::Len(place) => vars[place.var].is_param && place.indices.iter().all(again),
        NodeKind::ConstElement { indices, .. } => indices.iter().all(again),
        NodeKind::Op { args, .. } => args.iter().all(again),
        // The reverse sweep computes again integers and constants of unknown type only: a
        // call whose argument is a real constant (`h(W[1] + 1.19)`) keeps its value.
        NodeKind::Intrinsic { args, .. } => args
            .iter()
            .all(|arg| nodes[*arg].num != Num::Real && again(arg)),
        NodeKind::Typed { arg, .. } | NodeKind::Cast { arg, .. } => again(arg),
        NodeKind::Infix { lhs, rhs, .. } => {
            nodes[node].num != Num::Bool && again(lhs) && again(rhs)
        }
        NodeKind::Call { .. }
        | NodeKind::Pullback { .. }
        | NodeKind::Tuple(_)
        | NodeKind::StopGradient(_)
        | NodeKind::Not(_)
        | NodeKind::Test { .. }
        | NodeKind::RulePartial { .. }
        | NodeKind::Vector { .. } => false,
    }
}
