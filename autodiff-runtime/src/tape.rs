//! placeholder
/// placeholder
pub struct Tape;
/// placeholder
pub struct Var;
