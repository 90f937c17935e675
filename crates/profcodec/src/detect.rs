//! Format detection from a file's first bytes.
//!
//! Each magic is cited from the as-implemented notes in `shared/specs/as-implemented/`.

use std::fmt;

/// A file format (or, for HPCToolkit, one file of a database) that profcodec knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(any(feature = "serde", feature = "inspect"), derive(serde::Serialize))]
#[cfg_attr(
    any(feature = "serde", feature = "inspect"),
    serde(rename_all = "kebab-case")
)]
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

    /// A short human-readable name, as `profcodec info` prints it.
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

    /// The name of the cargo feature (and format crate) that handles this format.
    pub fn feature(self) -> &'static str {
        match self {
            Format::HpctoolkitMeta
            | Format::HpctoolkitProfile
            | Format::HpctoolkitCct
            | Format::HpctoolkitTrace
            | Format::HpctoolkitDatabase => "hpctoolkit",
            Format::Hpcrun | Format::Hpctrace => "hpcrun",
            Format::Nytprof => "nytprof",
            Format::EasyProfiler => "easyprofiler",
            Format::StatProfiler => "statprofiler",
        }
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
