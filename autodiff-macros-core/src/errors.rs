//! Collecting errors, so the user sees every unsupported construct of a function at once.

use quote::ToTokens;
use std::fmt::Display;

/// Errors gathered while walking the user's function, merged with [`syn::Error::combine`].
#[derive(Default)]
pub struct Errors {
    combined: Option<syn::Error>,
}

impl Errors {
    /// Records an error under the given tokens.
    pub fn at(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error.
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.combined {
            Some(combined) => combined.combine(error),
            None => self.combined = Some(error),
        }
    }

    /// Records every error of `other`.
    pub fn extend(&mut self, other: Errors) {
        if let Some(error) = other.combined {
            self.push(error);
        }
    }

    /// How many errors were recorded.
    pub fn count(&self) -> usize {
        self.combined
            .as_ref()
            .map_or(0, |e| e.clone().into_iter().count())
    }

    /// `Err` with every recorded error, or `Ok(value)` when there were none.
    pub fn finish<T>(self, value: T) -> syn::Result<T> {
        match self.combined {
            Some(error) => Err(error),
            None => Ok(value),
        }
    }
}
