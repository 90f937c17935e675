//! Exporters from the format-neutral profile model ([`profcodec_profile::Profile`]) to the
//! formats of the viewers profiler users already know.
//!
//! | target | module | viewers |
//! |---|---|---|
//! | folded stacks | [`folded`] | inferno, flamegraph.pl, speedscope |
//! | callgrind | [`callgrind`] | KCachegrind, `callgrind_annotate` |
//! | speedscope JSON | [`speedscope`] | speedscope |
//! | pprof (feature `pprof`) | `pprof` | `go tool pprof`, Pyroscope, Polar Signals |
//! | Firefox Profiler (feature `firefox`) | `firefox` | profiler.firefox.com |
//!
//! Every exporter streams to any [`std::io::Write`].
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod callgrind;
mod error;
#[cfg(feature = "firefox")]
pub mod firefox;
pub mod folded;
#[cfg(feature = "pprof")]
pub mod pprof;
#[cfg(any(feature = "pprof", feature = "firefox"))]
mod select;
pub mod speedscope;

pub use error::ExportError;

/// Options shared by the exporters.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ExportOptions {
    /// The value type (metric) exported by exporters that carry one value; `None` is the
    /// profile's default value type.
    pub metric: Option<String>,
}
