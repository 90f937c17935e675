//! Errors of the HPCToolkit database codec.

/// An error while reading or writing an HPCToolkit database (filled in by the reading half).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The input ended early.
    #[error(transparent)]
    Truncated(#[from] profcodec_common::Truncated),
}
