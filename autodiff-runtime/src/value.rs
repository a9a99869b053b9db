//! placeholder
/// placeholder
pub struct Value;
