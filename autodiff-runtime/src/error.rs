//! Errors of the dynamic engines.

use core::fmt;

/// An operation was applied outside its domain, for example [`Value::log`](crate::Value::log)
/// of a number that is not positive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DomainError {
    /// The operation, as written in user code (`"log"`).
    pub operation: &'static str,
    /// The argument that is outside the domain.
    pub value: f64,
}

impl fmt::Display for DomainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is undefined for {} (the argument must be positive)",
            self.operation, self.value
        )
    }
}

impl core::error::Error for DomainError {}
