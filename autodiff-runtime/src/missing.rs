//! The bounds of the stand-ins `#[grad]` generates for what a function was not asked for,
//! so that a call to one is a single error that says what to add.
//!
//! A `#[grad]` function without `jvp` still gets a hidden `<name>_jvp` with the signature
//! the option would give it, bounded by `for<'a> Missing: ForwardMode`. Nothing implements
//! the trait, so the function compiles and every call of it fails with the message below,
//! at the call (in a caller's generated forward mode, at the user's call of the function).
//! The same holds for the hidden functions a caller's forward mode and second order call,
//! and for `<name>_grad` of a function whose output is not a scalar.

/// The type the stand-ins' bounds are about; it implements none of the traits here.
#[derive(Debug)]
pub struct Missing;

/// Not implemented: the bound of a `<name>_jvp` that was not asked for.
#[diagnostic::on_unimplemented(
    message = "the function called here has no forward mode",
    label = "add `jvp` to this function's `#[grad(..)]`",
    note = "forward mode (`jvp`, `jacobian`) calls the forward mode of each annotated \
            function it calls: `#[grad(jvp)]` on the callee generates it"
)]
pub trait ForwardMode {}

/// Not implemented: the bound of the hidden functions that callers' forward mode and
/// second order call, of a function that has none of `jvp`, `jacobian`, `hvp` and
/// `hessian`.
#[diagnostic::on_unimplemented(
    message = "the function called here has no forward mode or second order",
    label = "add the caller's mode to this function's `#[grad(..)]`: `jvp` for a caller's \
             `jvp` or `jacobian`, `hvp` for its `hvp` or `hessian`",
    note = "forward mode (`jvp`, `jacobian`) calls the forward mode of each annotated \
            function it calls, and second order (`hvp`, `hessian`) its second order: \
            `#[grad(jvp)]` on the callee generates the first, `#[grad(hvp)]` both"
)]
pub trait CalleeMode {}

/// Not implemented: the bound of the hidden second-order functions of a function that
/// has neither `hvp` nor `hessian`.
#[diagnostic::on_unimplemented(
    message = "the function called here has no second-order mode",
    label = "add `hvp` (or `hessian`) to this function's `#[grad(..)]`",
    note = "`hvp` and `hessian` call the second-order mode of each annotated function they \
            call: `#[grad(hvp)]` or `#[grad(hessian)]` on the callee generates it"
)]
pub trait SecondOrder {}

/// Not implemented: the bound of `<name>_grad` of a function whose output is an array, a
/// vector or a tuple.
#[diagnostic::on_unimplemented(
    message = "`_grad` exists only for a function with a scalar output",
    label = "this function returns several numbers: call its `_vjp` or its `_jacobian`",
    note = "an output `y` of several numbers has a Jacobian, not a gradient: \
            `<name>_vjp(p…, u, …)` gives the partials of `u·y` (one row `uᵀJ`, the seed `u` \
            of the output's shape), and `#[grad(jacobian)]` generates \
            `<name>_jacobian(p…) -> (y, J_p…)`"
)]
pub trait ScalarOutput {}

/// Not implemented: the bound of the reduction that `#[grad(parallel)]` calls, when the
/// `rayon` feature is off.
#[diagnostic::on_unimplemented(
    message = "`#[grad(parallel)]` runs on rayon's thread pool, which needs the `rayon` feature",
    label = "enable the `rayon` feature of autodiff for `parallel`",
    note = "in Cargo.toml: `autodiff = {{ package = \"autodiff-static\", version = \"0.1\", \
            features = [\"rayon\"] }}`"
)]
pub trait Rayon {}

/// Not implemented: the bound of the hidden functions a caller reaches when it calls a
/// function that writes through `&mut` and also returns a value (`f(&mut y, x);`).
#[diagnostic::on_unimplemented(
    message = "a call that writes through `&mut` is followed only into a function that \
               returns nothing",
    label = "this function returns a value as well as writing through `&mut`",
    note = "`#[grad]` follows `step(&mut y, dt);` as `y = <what step leaves in y>`, which a \
            function returning nothing defines; return the written value instead \
            (`y = step(y, dt);`), or split the function"
)]
pub trait WrittenOutput {}

/// The partials that `g_grad` returns, as the call `g(a, b)` in a `#[grad]` body reads
/// them: the value and one partial per number passed. Implemented for `E` itself only, so
/// that a `g_grad` returning another number of partials (a callee with `wrt(..)` leaving
/// numbers out, a hand-written `_grad` of another arity) is one error that says so.
#[diagnostic::on_unimplemented(
    message = "the `_grad` of the function called here does not return one partial per \
               number the call passes",
    label = "a `#[grad]` body differentiates this call with respect to each number it passes",
    note = "`_grad` returns the value and a partial for each parameter in `wrt(..)`: remove \
            `wrt(..)` from the callee, or pass the numbers it leaves out in an array (calls \
            passing arrays whole go through the callee's `_vjp`, which has every partial)"
)]
pub trait CallPartials<E> {
    /// The partials, as read.
    fn partials(self) -> E;
}

impl<T> CallPartials<T> for T {
    #[inline]
    fn partials(self) -> T {
        self
    }
}

/// A second implementation of [`CallPartials`] for every type, which no call reads, so
/// that rustc does not take the first as the only candidate and unify the two tuples
/// (which would report a bare "mismatched types" instead of the message above).
#[derive(Debug)]
pub struct NotPartials<T>(pub T);

impl<T> CallPartials<NotPartials<T>> for T {
    #[inline]
    fn partials(self) -> NotPartials<T> {
        NotPartials(self)
    }
}

/// What `g_grad` returned, as the call reads it (see [`CallPartials`]).
#[inline]
pub fn call_partials<P: CallPartials<E>, E>(returned: P) -> E {
    returned.partials()
}
