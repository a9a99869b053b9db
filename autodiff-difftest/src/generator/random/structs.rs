//! The structs of random programs: the program's struct and the one it may hold, how
//! their variables are declared, loops over collections of them and names for their
//! elements, and structs built in the body.

use super::*;

/// Declares a struct variable (a parameter, or `self`) and its fields, `m.w`.
///
/// `element`: an element of a collection of the struct, whose struct fields are read by
/// field only.
pub(super) fn declare_struct(g: &mut Gen, name: &str, element: bool) {
    g.declare(name, Kind::Struct, false);
    let def = g.structure.clone().expect("a struct");
    for (field, f) in &def.fields {
        let kind = match f {
            Field::Scalar => Kind::Real { deref: false },
            Field::Array(n) => Kind::Array {
                len: ALen::Fixed(Len::Lit(*n)),
                inner: None,
                owner: Owner::Field,
                local: false,
            },
            Field::Nested(n, k) => Kind::Array {
                len: ALen::Fixed(Len::Lit(*n)),
                inner: Some(*k),
                owner: Owner::Field,
                local: false,
            },
            Field::Vec => Kind::Array {
                len: ALen::Run,
                inner: None,
                owner: Owner::Field,
                local: false,
            },
            Field::Int(hi) => Kind::Int { hi: Hi::Max(*hi) },
            Field::Bool => Kind::Bool,
            Field::Inner => {
                declare_inner(g, &format!("{name}.{field}"), !element);
                continue;
            }
            // Elements by constant indices (and the last of a `Vec`), each an inner
            // struct, and the collection, which loops go over.
            Field::Items | Field::Parts(_) => {
                let path = format!("{name}.{field}");
                let (indices, elem) = match f {
                    Field::Parts(k) => ((0..*k).map(|i| i.to_string()).collect(), Some(*k)),
                    _ => (
                        vec![
                            "0".to_string(),
                            "1".to_string(),
                            format!("{path}.len() - 1"),
                        ],
                        None,
                    ),
                };
                for index in indices {
                    declare_inner(g, &format!("{path}[{index}]"), true);
                }
                g.collections.push((path, Elem::Inner(elem)));
                continue;
            }
        };
        g.declare(&format!("{name}.{field}"), kind, false);
    }
}

/// Declares the fields of an inner struct at `name` (`m.i0`, `m.it1[0]`, `p`): `name.c`
/// and `name.v`.
pub(super) fn declare_inner(g: &mut Gen, name: &str, whole: bool) {
    g.declare(name, Kind::Inner { whole }, false);
    g.declare(&format!("{name}.c"), Kind::Real { deref: false }, false);
    g.declare(
        &format!("{name}.v"),
        Kind::Array {
            len: ALen::Fixed(Len::Lit(2)),
            inner: None,
            owner: Owner::Field,
            local: false,
        },
        false,
    );
}

/// A random struct: one to five fields of numbers, maybe a `Vec`, an integer, a flag.
pub(super) fn random_struct(g: &mut Gen) -> StructDef {
    let mut fields = Vec::new();
    let count = g.rng.random_range(1..4);
    for _ in 0..count {
        let i = fields.len();
        let field = match g.rng.random_range(0..7) {
            0 | 1 => (format!("b{i}"), Field::Scalar),
            2 | 3 => (format!("w{i}"), Field::Array(g.rng.random_range(1..5))),
            4 => (
                format!("u{i}"),
                Field::Nested(g.rng.random_range(1..4), g.rng.random_range(1..4)),
            ),
            5 => (format!("v{i}"), Field::Vec),
            _ => match g.rng.random_range(0..3) {
                0 => (format!("i{i}"), Field::Inner),
                1 => (format!("it{i}"), Field::Items),
                _ => (format!("pt{i}"), Field::Parts(g.rng.random_range(2..4))),
            },
        };
        fields.push(field);
    }
    if g.chance(0.4) {
        let i = fields.len();
        fields.push((format!("n{i}"), Field::Int(g.rng.random_range(1..5))));
    }
    if g.chance(0.3) {
        let i = fields.len();
        fields.push((format!("on{i}"), Field::Bool));
    }
    // Shuffled, so that constants sit between numbers.
    for i in (1..fields.len()).rev() {
        let j = g.rng.random_range(0..=i);
        fields.swap(i, j);
    }
    StructDef { fields }
}

impl Gen {
    /// A loop over a collection of structs or a part of it (`for p in ms.iter()`,
    /// `for p in ms`, `for p in &ms[1..]`, `for (i, p) in ms.iter().enumerate()`), or a name for one of its elements
    /// (`let p = &ms[i];`, the index one that does not change while `p` is in scope):
    /// random statements that read `p`'s fields and call its methods, then an update of
    /// a number with one of its fields.
    pub(super) fn struct_loop(&mut self, depth: usize, out: &mut Vec<Stmt>) {
        let collections = self.collections.clone();
        let (ms, elem) = self.pick(&collections);
        let p = self.fresh("p");
        let declare = |g: &mut Gen, p: &str| match elem {
            Elem::S => declare_struct(g, p, true),
            Elem::Inner(_) => declare_inner(g, p, true),
        };
        if self.chance(0.25) {
            // Literal indices, the last one, or a loop variable over the run-time length.
            let mut indices = match elem {
                Elem::Inner(Some(k)) => (0..k).map(IExpr::Lit).collect(),
                _ => vec![
                    IExpr::Lit(0),
                    IExpr::Lit(1),
                    IExpr::Pred(Box::new(IExpr::Len(ms.clone()))),
                ],
            };
            for v in self.ints() {
                if elem != Elem::Inner(None) && elem != Elem::S {
                    break;
                }
                if !v.mutable && matches!(v.kind, Kind::Int { hi: Hi::BelowN }) {
                    indices.push(IExpr::Var(v.name));
                }
            }
            let index = self.pick(&indices);
            // Then a number updated with one of its fields (an element bound and never
            // read would leave the collection named but not read as structs: a constant
            // of another type to `#[grad]`).
            let targets = self.assignable_reals();
            if targets.is_empty() {
                return;
            }
            out.push(Stmt::LetElement(p.clone(), ms, index));
            declare(self, &p);
            let read = match elem {
                Elem::S => self.field_read(&p),
                Elem::Inner(_) => Some(Expr::Var {
                    name: format!("{p}.c"),
                    deref: false,
                }),
            };
            if let Some(read) = read {
                let target = self.pick(&targets).name;
                out.push(Stmt::Assign(Place::Var(target), "+", read));
            }
            return;
        }
        let label = self.label();
        self.push_scope();
        let frozen = self.frozen.len();
        // The whole collection or a part of it (never empty: it holds at least two).
        let part = self.pick(&[
            ms.clone(),
            ms.clone(),
            format!("{ms}[1..]"),
            format!("{ms}[..{ms}.len() - 1]"),
            format!("{ms}[..=1]"),
        ]);
        let whole = part == ms;
        let (pattern, iter) = match self.rng.random_range(0..3) {
            0 => (p.clone(), format!("{part}.iter()")),
            // A parameter is a reference already; a field is borrowed (`&m.it0`).
            1 if whole && !ms.contains('.') => (p.clone(), ms.clone()),
            1 => (p.clone(), format!("&{part}")),
            _ => {
                let i = self.fresh("i");
                let hi = match elem {
                    Elem::Inner(Some(k)) => Hi::Max(k - 1),
                    _ => Hi::BelowN,
                };
                self.declare(&i, Kind::Int { hi }, false);
                (format!("({i}, {p})"), format!("{part}.iter().enumerate()"))
            }
        };
        declare(self, &p);
        self.loops.push(LoopCtx {
            label: label.clone(),
            value: false,
        });
        self.control += 1;
        let n = self.rng.random_range(0..3);
        // In the loop's own scope: the update below sees what the statements shadow.
        let mut body = self.block_here(depth + 1, n);
        let targets = self.assignable_reals();
        let read = match elem {
            Elem::S => self.field_read(&p),
            Elem::Inner(_) => Some(if self.chance(0.5) {
                Expr::Var {
                    name: format!("{p}.c"),
                    deref: false,
                }
            } else {
                let k = self.index(&ALen::Fixed(Len::Lit(2)));
                Expr::Index(format!("{p}.v"), vec![k])
            }),
        };
        if let Some(read) = read {
            if !targets.is_empty() {
                let target = self.pick(&targets).name;
                let e = self.expr(1);
                body.push(Stmt::Assign(
                    Place::Var(target),
                    "+",
                    Expr::Bin(BinOp::Mul, Box::new(read), Box::new(e)),
                ));
            }
        }
        self.end_for(frozen, label, pattern, iter, body, out);
    }

    /// A struct built in the body (`let p = Pair { a: e, b: [e1, e2] };`), or a copy of
    /// one in scope (`let q = p;`), or one taken apart (`let Pair { a: x, .. } = p;`).
    pub(super) fn pair_let(&mut self, out: &mut Vec<Stmt>) {
        self.pairs = true;
        let pairs: Vec<String> = self
            .visible()
            .into_iter()
            .filter(|v| matches!(v.kind, Kind::Pair))
            .map(|v| v.name)
            .collect();
        match self.rng.random_range(0..4) {
            0 if !pairs.is_empty() => {
                let of = self.pick(&pairs);
                let name = self.fresh("pr");
                out.push(Stmt::CopyPair(name.clone(), of));
                self.declare_pair(&name, false);
            }
            1 if !pairs.is_empty() => {
                let of = self.pick(&pairs);
                let (mut a, mut b) = (
                    self.chance(0.7).then(|| self.fresh("e")),
                    self.chance(0.7).then(|| self.fresh("h")),
                );
                if a.is_none() && b.is_none() {
                    a = Some(self.fresh("e"));
                }
                if let Some(a) = &a {
                    self.declare(a, Kind::Real { deref: false }, false);
                }
                if let Some(b) = &b {
                    self.declare(b, pair_array(), false);
                }
                let b = b.take();
                out.push(Stmt::DestructurePair { a, b, of });
            }
            _ => {
                let name = self.fresh("pr");
                let mutable = self.chance(0.4);
                let a = self.expr(2);
                let b = vec![self.expr(1), self.expr(1)];
                let shorthand = self.chance(0.3);
                out.push(Stmt::LetPair {
                    name: name.clone(),
                    mutable,
                    a,
                    b,
                    shorthand,
                });
                self.declare_pair(&name, mutable);
            }
        }
    }

    /// Declares a [`PAIR`] local and its fields.
    fn declare_pair(&mut self, name: &str, mutable: bool) {
        self.declare(name, Kind::Pair, false);
        self.declare(&format!("{name}.a"), Kind::Real { deref: false }, mutable);
        self.declare(&format!("{name}.b"), pair_array(), mutable);
    }

    /// A read of a number field of the struct `p` (`p.b0`, `p.w1[k]`, `p.u2[i][j]`), if
    /// it has one.
    fn field_read(&mut self, p: &str) -> Option<Expr> {
        let def = self.structure.clone()?;
        let numbers: Vec<(String, Field)> = def
            .fields
            .into_iter()
            .filter(|(_, f)| {
                matches!(
                    f,
                    Field::Scalar | Field::Array(_) | Field::Nested(..) | Field::Inner
                )
            })
            .collect();
        if numbers.is_empty() {
            return None;
        }
        let (name, field) = self.pick(&numbers);
        let name = format!("{p}.{name}");
        Some(match field {
            Field::Array(n) => {
                let i = self.index(&ALen::Fixed(Len::Lit(n)));
                Expr::Index(name, vec![i])
            }
            Field::Nested(n, k) => {
                let i = self.index(&ALen::Fixed(Len::Lit(n)));
                let j = self.index(&ALen::Fixed(Len::Lit(k)));
                Expr::Index(name, vec![i, j])
            }
            Field::Inner => Expr::Var {
                name: format!("{name}.c"),
                deref: false,
            },
            _ => Expr::Var { name, deref: false },
        })
    }
}

/// The kind of a [`PAIR`]'s field `b`: a local array of two.
fn pair_array() -> Kind {
    Kind::Array {
        len: ALen::Fixed(Len::Lit(2)),
        inner: None,
        owner: Owner::Array,
        local: true,
    }
}
