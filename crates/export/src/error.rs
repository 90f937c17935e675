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
    /// The output projected from the profile is over [`ExportOptions::max_output`]: nothing was
    /// written. (Deep call chains: folded and sampled stacks grow with the square of the depth.)
    ///
    /// [`ExportOptions::max_output`]: crate::ExportOptions::max_output
    #[error(
        "the {target} output would take {} ({projected} bytes), over the output budget of {} \
         ({budget} bytes): nothing was written; --max-output {} allows it (--max-output SIZE \
         sets the budget, by default 100 times the input plus 64 MiB)",
        crate::budget::human(*projected),
        crate::budget::human(*budget),
        crate::budget::suggestion(*projected)
    )]
    OutputTooLarge {
        /// What would have been written: `folded`, `speedscope`, `pprof` (its samples, encoded
        /// before gzip).
        target: &'static str,
        /// The size projected, in bytes.
        projected: u64,
        /// The budget, in bytes.
        budget: u64,
    },
}
