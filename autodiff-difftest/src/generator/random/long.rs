//! Long programs: a function under test of thousands of operations, whose gradient has
//! well over the 2,000 `let`s beyond which `#[grad]` cuts it into segments (functions of
//! at most 250 statements, see `autodiff-macros-core/src/codegen/outline.rs`).
//!
//! The body is a sequence of runs, each a few of the ordinary random statements, drawn
//! from the same tables as the ordinary programs': mostly straight ones (`let`s,
//! assignments, local arrays, tuples, calls, casts), and now and then one with loops or
//! branches (whose gradient stays in the function, between segments). Each run reads the
//! parameters and the values the runs before it threaded through, then threads one value
//! on, squashed into [-1.6, 1.6] (`tanh`, `sin`, …, as `bounded` does), and its own locals
//! go out of reach; so values stay in range however long the function, and a value is
//! read by many runs after the one that computed it. Values that live across runs are
//! assigned only by the thread (`x0 = tanh(…)`), never shadowed, and arrays across runs
//! are not written, so that no value grows run after run.
//!
//! The straight runs leave out what `#[grad]` binds to values of types it does not know
//! (constant paths, integer variables, indices computed from numbers: see
//! `Gen::straight`), which would keep the statements around them out of segments; the
//! statements with loops and branches have them all. Three kinks in four are drawn as
//! smooth operations, and `to_degrees` as `to_radians`: among thousands of operations,
//! every point would otherwise be near some kink, or some value beyond the check's
//! limits.
//!
//! Not in long programs: `f32`, `stop_gradient` (some would be in every long program,
//! which would then never be checked against finite differences), early `return`s and
//! items in the function's body (either keeps most of the gradient out of segments:
//! `#[grad]` puts what follows a `return` in a block of its own, and segments must be
//! able to name every item the body names).

use super::*;

/// The operations (at least) of the function under test of a long program.
pub const LONG_OPS: usize = 3_000;

/// Values threaded from run to run that stay in reach.
const WINDOW: usize = 8;

/// The long program numbered `index` of the stream seeded by `seed`, of at least `ops`
/// operations: the same triple always gives the same program. Its helpers, struct and
/// module items are drawn as the ordinary programs' are.
pub fn long_program(seed: u64, index: u64, ops: usize) -> Program {
    // Another stream than the ordinary program of the same index.
    let seed = seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x4C4F_4E47;
    build(seed, Some(ops))
}

/// The operations of `stmts` (each node of each expression but reads of variables and
/// elements), loop bodies counted once.
fn ops(stmts: &[Stmt]) -> usize {
    let mut count = 0;
    visit_stmts(stmts, &mut |e| {
        if !matches!(e, Expr::Var { .. } | Expr::Index(..)) {
            count += 1;
        }
    });
    count
}

impl Gen {
    /// The body of a long function under test (see the module documentation), of at
    /// least `target` operations.
    pub(super) fn long_body(&mut self, target: usize, body: &mut Vec<Stmt>) {
        let mut threads: Vec<String> = Vec::new();
        let mut count = 0;
        while count < target {
            let start = body.len();
            let mark = self.vars.len();
            // What lives across runs is neither shadowed, nor assigned, nor written.
            self.settled = self.vars.iter().map(|v| v.name.clone()).collect();
            let frozen = self.frozen.len();
            for v in &mut self.vars {
                if matches!(v.kind, Kind::Real { .. }) {
                    v.protected = true;
                }
            }
            let arrays: Vec<String> = self.arrays().into_iter().map(|v| v.name).collect();
            self.frozen.extend(arrays);
            // A straight run, then maybe a statement with loops or branches.
            self.straight = true;
            for _ in 0..self.rng.random_range(3..9) {
                self.budget = 4;
                self.stmt(0, body);
            }
            if self.chance(0.1) {
                self.straight = false;
                self.budget = self.rng.random_range(3..10);
                self.stmt(0, body);
                self.straight = true;
            }
            self.frozen.truncate(frozen);
            // The value threaded on: reads what the run computed, squashed.
            let mut e = self.expr(2);
            let made: Vec<String> = self.vars[mark..]
                .iter()
                .filter(|v| matches!(v.kind, Kind::Real { deref: false }))
                .map(|v| v.name.clone())
                .collect();
            for name in made.iter().rev().take(3) {
                let read = Expr::Var {
                    name: name.clone(),
                    deref: false,
                };
                e = Expr::Bin(BinOp::Add, Box::new(e), Box::new(read));
            }
            let e = self.bounded(e);
            self.straight = false;
            self.vars.truncate(mark);
            // Now and then into a value that lives across runs (a parameter `mut`, a
            // thread `let mut`), else into a new one.
            let targets: Vec<String> = self
                .reals()
                .into_iter()
                .filter(|v| v.mutable && !v.name.contains('.'))
                .map(|v| v.name)
                .collect();
            if !targets.is_empty() && self.chance(0.15) {
                let name = self.pick(&targets);
                body.push(Stmt::Assign(Place::Var(name), "", e));
            } else {
                let name = self.fresh("s");
                let mutable = self.chance(0.3);
                body.push(Stmt::Let {
                    name: name.clone(),
                    mutable,
                    annotated: self.chance(0.3),
                    init: e,
                });
                self.declare(&name, Kind::Real { deref: false }, mutable);
                threads.push(name);
                if threads.len() > WINDOW {
                    let old = threads.remove(0);
                    self.vars.retain(|v| v.name != old);
                }
            }
            count += ops(&body[start..]);
        }
        self.settled.clear();
    }
}
