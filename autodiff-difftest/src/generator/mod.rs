//! The seeded generator of random `#[grad]` programs: an AST of the documented subset
//! ([`ast`]) and a random walk over it ([`random`]). Plain Rust on `std` and `rand`, so
//! that the build script compiles it too (`#[path]`).

pub mod ast;
pub mod emit;
pub mod random;
pub mod render;
