//! Exporters from the format-neutral profile model ([`profcodec_profile::Profile`]) to the
//! formats of the viewers profiler users already know.
//!
//! | target | function | viewers |
//! |---|---|---|
//! | folded stacks | [`write_folded`] | inferno, flamegraph.pl, speedscope |
//! | callgrind | [`write_callgrind`] | KCachegrind, QCachegrind, `callgrind_annotate` |
//! | speedscope JSON | [`write_speedscope`] | speedscope |
//! | pprof (feature `pprof`) | `pprof::write_pprof` | `go tool pprof`, Pyroscope, Polar Signals |
//! | Firefox Profiler (feature `firefox`) | `firefox::write_firefox` | profiler.firefox.com |
//!
//! [`Target`] names them, for a choice made at run time (`Target::from_name("pprof")`).
//!
//! Every exporter streams to any [`std::io::Write`] (wrap a file in a
//! [`BufWriter`](std::io::BufWriter) or not: the text exporters write in chunks of their own),
//! holds memory in proportion to the profile's distinct call paths and frames, never to the
//! output, and takes time linear in the profile and the output.
//!
//! Some outputs grow faster than the profile: folded stacks write every call path in full,
//! speedscope's sampled profiles and pprof's samples every frame of their stack, so a call
//! chain `d` deep writes `d²/2` frames. Those exporters project their output's size from the
//! call tree (in time linear in it) before writing anything, and refuse an output over
//! [`ExportOptions::max_output`] with [`ExportError::OutputTooLarge`], which names the size
//! and the `--max-output` flag that allows it; speedscope first writes its evented form,
//! linear in the call tree, where sampled stacks would be over the budget.
//! [`default_output_budget`] is the budget `profcodec convert` applies: 100 times the input
//! plus 64 MiB.
//!
//! # What is exported
//!
//! - **Which value type**: exporters of one value ([`folded`], [`speedscope`]'s sampled
//!   profiles) take [`ExportOptions::metric`] by name, else the profile's
//!   [default value type](profcodec_profile::Profile::default_value_type) (the format's main time
//!   metric). [`callgrind`] writes every value type as an event.
//! - **Which contexts**: outputs of one program ([`folded`], [`callgrind`]) add up the
//!   whole program as `profcodec top` does: HPCToolkit's summary profile where the profile has
//!   one, else every thread, rank or process. [`speedscope`] writes one profile per thread,
//!   rank or process.
//! - **Names**: frames are named by [`Profile::frame_label`](profcodec_profile::Profile::frame_label)
//!   (the function as the source tool spells it; a loop or line as `loop at file:line`), and
//!   [`ExportOptions::folded_names`] can rename them as the source tool's own folded output
//!   does (NYTProf's `nytprofcalls`).
//!
//! ```
//! use profcodec_export::{ExportOptions, write_folded};
//! use profcodec_profile::{Context, Frame, IdKind, Measured, ProfileBuilder, Unit};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut b = ProfileBuilder::new();
//! let thread = b.intern_context(Context::new([(IdKind::Thread, 0)]))?;
//! let time = b.intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)?;
//! let main = b.intern_string("main")?;
//! let main = b.intern_frame(Frame::function(main))?;
//! let work = b.intern_string("work")?;
//! let work = b.intern_frame(Frame::function(work))?;
//! b.add_sample(thread, [main, work], time, 30.0)?;
//! b.add_sample(thread, [main], time, 10.0)?;
//! let profile = b.build();
//!
//! let mut out = Vec::new();
//! write_folded(&profile, &ExportOptions::default(), &mut out)?;
//! assert_eq!(String::from_utf8(out)?, "main 10\nmain;work 30\n");
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::borrow::Cow;

mod budget;
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
mod target;
mod text;
mod values;

pub use budget::{
    BudgetWriter, OverBudget, default_output_budget, input_bytes, over_budget, parse_size,
};
pub use callgrind::write_callgrind;
pub use error::ExportError;
pub use folded::write_folded;
pub use speedscope::write_speedscope;
pub use target::Target;

/// A frame renaming for folded stacks: takes a frame's label, returns the name to write.
pub type FrameNamer = fn(&str) -> Cow<'_, str>;

/// Options shared by the exporters.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ExportOptions {
    /// The value type (metric) exported by exporters that carry one value; `None` is the
    /// profile's default value type.
    pub metric: Option<String>,
    /// How [`folded`] names frames, when the source tool's own folded output names them
    /// otherwise than their label: for NYTProf, `nytprofcalls` writes every `(eval N)` as
    /// `(eval 0)` (the `profcodec` command line passes that renaming for NYTProf inputs).
    /// `None`: the label. Either way the name is then made safe for the format (`;` written as
    /// `:`, control characters and line breaks as spaces; see [`folded`]). Frames whose names
    /// end up equal are one frame: their stacks are merged.
    pub folded_names: Option<FrameNamer>,
    /// The most bytes an export may write (see [`default_output_budget`] for the budget
    /// `profcodec convert` applies): folded stacks, speedscope and pprof project their size
    /// from the profile before writing anything, and refuse a larger output with
    /// [`ExportError::OutputTooLarge`] (speedscope first falls back from sampled stacks to its
    /// evented form, which grows with the call tree, not with its depth squared). callgrind and
    /// the Firefox Profiler's format grow with the profile only and are not checked. `None`:
    /// no budget.
    pub max_output: Option<u64>,
}

impl ExportOptions {
    /// The default options: the default value type, frames named by their labels.
    pub fn new() -> ExportOptions {
        ExportOptions::default()
    }

    /// These options exporting the value type called `name`.
    pub fn metric(mut self, name: impl Into<String>) -> ExportOptions {
        self.metric = Some(name.into());
        self
    }

    /// These options refusing an output of more than `bytes` bytes.
    pub fn max_output(mut self, bytes: u64) -> ExportOptions {
        self.max_output = Some(bytes);
        self
    }

    /// These options naming folded frames with `namer`.
    pub fn folded_names(mut self, namer: FrameNamer) -> ExportOptions {
        self.folded_names = Some(namer);
        self
    }
}

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;
