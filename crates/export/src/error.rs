//! Why an export failed.

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// Writing the output failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The metric asked for ([`ExportOptions::metric`](crate::ExportOptions::metric)) is no
    /// value type of the profile.
    #[error("no such metric: --metric {name:?} is not one of {known}")]
    UnknownMetric {
        /// The name asked for.
        name: String,
        /// The value types the profile has, comma-separated.
        known: String,
    },
}
