//! The bounds of the stand-ins `#[grad]` generates for what a function was not asked for,
//! so that a call to one is a single error that says what to add.
//!
//! A `#[grad]` function without `jvp` still gets a hidden `<name>_jvp` with the signature
//! the option would give it, bounded by `for<'a> Missing: ForwardMode`. Nothing implements
//! the trait, so the function compiles and every call of it fails with the message below,
//! at the call (in a caller's generated forward mode, at the user's call of the function).
//! The same holds for the second-order functions a caller's `hvp` or `hessian` calls, and
//! for `<name>_grad` of a function whose output is not a scalar.

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
