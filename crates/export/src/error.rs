//! Why an export failed.

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ExportError {
    /// Writing the output failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The metric asked for is not a value type of the profile.
    #[error("no such metric: value type: {name:?} is not one of {known}")]
    UnknownMetric {
        /// The name asked for.
        name: String,
        /// The names the profile has, comma-separated.
        known: String,
    },
    /// The profile has no value type, so there is nothing to export.
    #[error("the profile holds no values: value types: none")]
    NoValues,
}
