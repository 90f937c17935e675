//! Format detection from a file's first bytes.
//!
//! Each magic is cited from the as-implemented notes in `shared/specs/as-implemented/`.

use std::fmt;

/// A file format (or, for HPCToolkit, one file of a database) that profcodec knows.
///
/// It is shown by two names: [`Format::name`] for people (`Devel::NYTProf profile`,
/// `HPCToolkit meta.db`), and [`Format::short_name`] for programs (`nytprof`, `hpctoolkit`),
/// which is also how it serialises (the `format` of `info --json`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// HPCToolkit `meta.db` (`HPCTOOLKIT` + `meta`).
    HpctoolkitMeta,
    /// HPCToolkit `profile.db` (`HPCTOOLKIT` + `prof`).
    HpctoolkitProfile,
    /// HPCToolkit `cct.db` (`HPCTOOLKIT` + `ctxt`).
    HpctoolkitCct,
    /// HPCToolkit `trace.db` (`HPCTOOLKIT` + `trce`).
    HpctoolkitTrace,
    /// A directory holding an HPCToolkit database (`meta.db` and its siblings).
    HpctoolkitDatabase,
    /// An hpcrun measurement file: `HPCRUN____02.00l` or `HPCRUN-profile____<version>`.
    Hpcrun,
    /// An hpcrun trace file: `HPCRUN-trace______<version>`.
    Hpctrace,
    /// A Devel::NYTProf profile (`NYTProf 5 0`; the old Pynytprof layout shares the banner).
    Nytprof,
    /// An EasyProfiler capture (u32 signature 0x45617379, bytes `ysaE` on disk).
    EasyProfiler,
    /// A Devel::StatProfiler file (`=statprofiler`).
    StatProfiler,
}

/// The input starts with no magic profcodec knows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format: at byte 0x0: expected a profiler file's magic but found {}", hex(&self.first_bytes))]
pub struct UnknownFormat {
    /// Up to the first 16 bytes of the input.
    pub first_bytes: Vec<u8>,
}

fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "an empty input".to_owned();
    }
    let hex: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let text: String = bytes
        .iter()
        .map(|&b| if b.is_ascii_graphic() { b as char } else { '.' })
        .collect();
    format!("{} ({text:?})", hex.join(" "))
}

impl Format {
    /// Detects the format from the first bytes of a file (24 bytes are enough for every format).
    pub fn detect(head: &[u8]) -> Result<Format, UnknownFormat> {
        // HPCToolkit database v4: magic[10] "HPCTOOLKIT", format[4] (FORMATS.md, common header).
        if let Some(rest) = head.strip_prefix(b"HPCTOOLKIT") {
            match rest.get(..4) {
                Some(b"meta") => return Ok(Format::HpctoolkitMeta),
                Some(b"prof") => return Ok(Format::HpctoolkitProfile),
                Some(b"ctxt") => return Ok(Format::HpctoolkitCct),
                Some(b"trce") => return Ok(Format::HpctoolkitTrace),
                _ => {}
            }
        }
        // hpcrun.md, version table: 16-byte 02.00l magic, 24-byte later magics.
        if head.starts_with(b"HPCRUN____") || head.starts_with(b"HPCRUN-profile____") {
            return Ok(Format::Hpcrun);
        }
        if head.starts_with(b"HPCRUN-trace______") {
            return Ok(Format::Hpctrace);
        }
        // nytprof-v5.md: the header's first line.
        if head.starts_with(b"NYTProf ") {
            return Ok(Format::Nytprof);
        }
        // statprofiler.md, Container: 13 bytes, no NUL.
        if head.starts_with(b"=statprofiler") {
            return Ok(Format::StatProfiler);
        }
        // easyprofiler.md: u32 signature 0x45617379 stored little-endian.
        if head.starts_with(b"ysaE") {
            return Ok(Format::EasyProfiler);
        }
        Err(UnknownFormat {
            first_bytes: head[..head.len().min(16)].to_vec(),
        })
    }

    /// A human-readable name that tells the kinds of input of a format apart, as `profcodec
    /// info` prints it (`HPCToolkit meta.db`, `hpcrun trace`, `Devel::NYTProf profile`).
    pub fn name(self) -> &'static str {
        match self {
            Format::HpctoolkitMeta => "HPCToolkit meta.db",
            Format::HpctoolkitProfile => "HPCToolkit profile.db",
            Format::HpctoolkitCct => "HPCToolkit cct.db",
            Format::HpctoolkitTrace => "HPCToolkit trace.db",
            Format::HpctoolkitDatabase => "HPCToolkit database",
            Format::Hpcrun => "hpcrun measurement",
            Format::Hpctrace => "hpcrun trace",
            Format::Nytprof => "Devel::NYTProf profile",
            Format::EasyProfiler => "EasyProfiler capture",
            Format::StatProfiler => "Devel::StatProfiler file",
        }
    }

    /// The format's one name in every machine-readable output, whatever the kind of input
    /// (`hpctoolkit` for a database and each of its files, `hpcrun` for measurements and
    /// traces): the `format` of `info --json` and of a dump's header, the table set of `sql` and
    /// `export`. Each format crate owns it (`profcodec_nytprof::FORMAT_NAME`).
    ///
    /// ```
    /// assert_eq!(profcodec::Format::HpctoolkitMeta.short_name(), "hpctoolkit");
    /// assert_eq!(profcodec::Format::Nytprof.short_name(), "nytprof");
    /// ```
    pub fn short_name(self) -> &'static str {
        match self {
            Format::HpctoolkitMeta
            | Format::HpctoolkitProfile
            | Format::HpctoolkitCct
            | Format::HpctoolkitTrace
            | Format::HpctoolkitDatabase => names::HPCTOOLKIT,
            Format::Hpcrun | Format::Hpctrace => names::HPCRUN,
            Format::Nytprof => names::NYTPROF,
            Format::EasyProfiler => names::EASYPROFILER,
            Format::StatProfiler => names::STATPROFILER,
        }
    }

    /// The name of the cargo feature (and format crate) that handles this format: its
    /// [`short_name`](Format::short_name).
    pub fn feature(self) -> &'static str {
        self.short_name()
    }
}

/// The formats' short names: each format crate's `FORMAT_NAME`, and the same name (the cargo
/// feature's) when this build leaves the crate out.
mod names {
    #[cfg(feature = "easyprofiler")]
    pub(super) const EASYPROFILER: &str = profcodec_easyprofiler::FORMAT_NAME;
    #[cfg(not(feature = "easyprofiler"))]
    pub(super) const EASYPROFILER: &str = "easyprofiler";
    #[cfg(feature = "hpcrun")]
    pub(super) const HPCRUN: &str = profcodec_hpcrun::FORMAT_NAME;
    #[cfg(not(feature = "hpcrun"))]
    pub(super) const HPCRUN: &str = "hpcrun";
    #[cfg(feature = "hpctoolkit")]
    pub(super) const HPCTOOLKIT: &str = profcodec_hpctoolkit::FORMAT_NAME;
    #[cfg(not(feature = "hpctoolkit"))]
    pub(super) const HPCTOOLKIT: &str = "hpctoolkit";
    #[cfg(feature = "nytprof")]
    pub(super) const NYTPROF: &str = profcodec_nytprof::FORMAT_NAME;
    #[cfg(not(feature = "nytprof"))]
    pub(super) const NYTPROF: &str = "nytprof";
    #[cfg(feature = "statprofiler")]
    pub(super) const STATPROFILER: &str = profcodec_statprofiler::FORMAT_NAME;
    #[cfg(not(feature = "statprofiler"))]
    pub(super) const STATPROFILER: &str = "statprofiler";
}

/// A format serialises as its [`short_name`](Format::short_name).
#[cfg(any(feature = "serde", feature = "inspect"))]
impl serde::Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.short_name())
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_magic() {
        let cases: &[(&[u8], Format)] = &[
            (b"HPCTOOLKITmeta\x04\x00", Format::HpctoolkitMeta),
            (b"HPCTOOLKITprof\x04\x00", Format::HpctoolkitProfile),
            (b"HPCTOOLKITctxt\x04\x00", Format::HpctoolkitCct),
            (b"HPCTOOLKITtrce\x04\x00", Format::HpctoolkitTrace),
            (b"HPCRUN____02.00l", Format::Hpcrun),
            (b"HPCRUN-profile____04.00b", Format::Hpcrun),
            (b"HPCRUN-profile____01.98b", Format::Hpcrun),
            (b"HPCRUN-trace______01.01b", Format::Hpctrace),
            (b"NYTProf 5 0\n", Format::Nytprof),
            (b"=statprofiler\x01", Format::StatProfiler),
            (b"ysaE\x00\x00\x01\x02", Format::EasyProfiler),
        ];
        for (head, want) in cases {
            assert_eq!(Format::detect(head), Ok(*want), "{head:?}");
        }
    }

    /// Every format's short name is its crate's, its cargo feature's and its table set's.
    #[test]
    fn short_names_are_the_feature_names() {
        let all = [
            Format::HpctoolkitMeta,
            Format::HpctoolkitProfile,
            Format::HpctoolkitCct,
            Format::HpctoolkitTrace,
            Format::HpctoolkitDatabase,
            Format::Hpcrun,
            Format::Hpctrace,
            Format::Nytprof,
            Format::EasyProfiler,
            Format::StatProfiler,
        ];
        let names: Vec<&str> = all.iter().map(|f| f.short_name()).collect();
        assert_eq!(
            names,
            [
                "hpctoolkit",
                "hpctoolkit",
                "hpctoolkit",
                "hpctoolkit",
                "hpctoolkit",
                "hpcrun",
                "hpcrun",
                "nytprof",
                "easyprofiler",
                "statprofiler"
            ]
        );
    }

    #[test]
    fn unknown_names_first_bytes() {
        let e = Format::detect(b"HPCTOOLKITxxxx").unwrap_err();
        assert!(e.to_string().contains("48 50 43"), "{e}");
        assert!(
            Format::detect(b"")
                .unwrap_err()
                .to_string()
                .contains("empty")
        );
    }
}
