//! What `profcodec info` prints about any input (feature `info`): the format, its version and
//! the counts and properties a user asks first, in display order.

use crate::{Format, Opened, ReadError};

#[cfg(feature = "easyprofiler")]
mod easyprofiler;
#[cfg(feature = "hpcrun")]
mod hpcrun;
#[cfg(feature = "hpctoolkit")]
mod hpctoolkit;
#[cfg(feature = "nytprof")]
mod nytprof;
#[cfg(feature = "statprofiler")]
mod statprofiler;

/// The summary of an input ([`info`]).
#[derive(Debug, Clone, serde::Serialize)]
#[non_exhaustive]
pub struct Info {
    /// The detected format.
    pub format: Format,
    /// The format version as the file states it (for example `04.00b`, `5.0`, `2.1.0`; an
    /// HPCToolkit database lists its files' versions once each, comma-separated).
    pub version: String,
    /// Format-specific counts and properties, in display order: the summary first (title,
    /// program, time span, who was measured, what was measured), then counts.
    pub details: serde_json::Map<String, serde_json::Value>,
}

/// The format, version and a summary of `input`. Each format reads its files once, with the
/// fullest decode the summary needs (NYTProf: the model; EasyProfiler: the block tree;
/// StatProfiler: one counting pass; HPCToolkit and hpcrun: the headers, sections and counts).
///
/// ```no_run
/// let info = profcodec::info(&profcodec::open("prog.nytprof.out")?)?;
/// println!("{} {}", info.format, info.version);
/// for (key, value) in &info.details {
///     println!("  {key}: {value}");
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn info(input: &Opened) -> Result<Info, ReadError> {
    let info = match input.format().feature() {
        #[cfg(feature = "hpctoolkit")]
        "hpctoolkit" => hpctoolkit::info(input),
        #[cfg(feature = "hpcrun")]
        "hpcrun" => hpcrun::info(input),
        #[cfg(feature = "nytprof")]
        "nytprof" => nytprof::info(input),
        #[cfg(feature = "easyprofiler")]
        "easyprofiler" => easyprofiler::info(input),
        #[cfg(feature = "statprofiler")]
        "statprofiler" => statprofiler::info(input),
        feature => Err(crate::error::not_compiled(input, feature)),
    };
    // A file of the input cut while it was read: the error that says so, in place of what
    // its zeros gave.
    input.check_intact()?;
    info
}

impl Opened {
    /// [`info`] of this input.
    pub fn info(&self) -> Result<Info, ReadError> {
        info(self)
    }
}
