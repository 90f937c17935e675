//! [`Target`]: the exporters by name, for callers that choose one at run time (the `profcodec
//! convert` command, the Python package's `convert(to=...)`).

use std::io::Write;

use profcodec_profile::Profile;

use crate::{ExportError, ExportOptions};

/// An output format of the exporters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Target {
    /// Folded stacks ([`write_folded`](crate::write_folded)).
    Folded,
    /// callgrind's format ([`write_callgrind`](crate::write_callgrind)).
    Callgrind,
    /// speedscope's JSON file format ([`write_speedscope`](crate::write_speedscope)).
    Speedscope,
    /// pprof's gzipped profile.proto (`pprof::write_pprof`, feature `pprof`).
    #[cfg(feature = "pprof")]
    Pprof,
    /// The Firefox Profiler's processed format (`firefox::write_firefox`, feature `firefox`).
    #[cfg(feature = "firefox")]
    Firefox,
}

impl Target {
    /// Every target of this build, in the order of [`Target::name`]'s documentation.
    pub const ALL: &'static [Target] = &[
        Target::Folded,
        Target::Callgrind,
        Target::Speedscope,
        #[cfg(feature = "pprof")]
        Target::Pprof,
        #[cfg(feature = "firefox")]
        Target::Firefox,
    ];

    /// The target's name: `folded`, `callgrind`, `speedscope`, `pprof` or `firefox`.
    pub fn name(self) -> &'static str {
        match self {
            Target::Folded => "folded",
            Target::Callgrind => "callgrind",
            Target::Speedscope => "speedscope",
            #[cfg(feature = "pprof")]
            Target::Pprof => "pprof",
            #[cfg(feature = "firefox")]
            Target::Firefox => "firefox",
        }
    }

    /// The target called `name` ([`Target::name`]), if this build has it.
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.iter().copied().find(|t| t.name() == name)
    }

    /// The usual file extension of the target's files (without the leading dot).
    pub fn extension(self) -> &'static str {
        match self {
            Target::Folded => "folded",
            Target::Callgrind => "callgrind",
            Target::Speedscope => "speedscope.json",
            #[cfg(feature = "pprof")]
            Target::Pprof => "pb.gz",
            #[cfg(feature = "firefox")]
            Target::Firefox => "json",
        }
    }

    /// Whether the target shows timed spans (speedscope's evented profiles, the Firefox
    /// Profiler's markers), so that the profile is best made with them.
    pub fn wants_spans(self) -> bool {
        match self {
            Target::Speedscope => true,
            #[cfg(feature = "firefox")]
            Target::Firefox => true,
            _ => false,
        }
    }

    /// Writes `profile` in this format into `out`.
    pub fn write(
        self,
        profile: &Profile,
        options: &ExportOptions,
        out: &mut dyn Write,
    ) -> Result<(), ExportError> {
        match self {
            Target::Folded => crate::write_folded(profile, options, out),
            Target::Callgrind => crate::write_callgrind(profile, options, out),
            Target::Speedscope => crate::write_speedscope(profile, options, out),
            #[cfg(feature = "pprof")]
            Target::Pprof => crate::pprof::write_pprof(profile, options, out),
            #[cfg(feature = "firefox")]
            Target::Firefox => crate::firefox::write_firefox(profile, options, out),
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
