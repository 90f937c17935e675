//! Why an export failed.

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// Writing the output failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
