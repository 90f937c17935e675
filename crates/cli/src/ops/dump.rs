//! The streaming writer behind `profcodec dump` lives in `profcodec::inspect` ([`Dump`]); what
//! the CLI adds is its `--format` choice and, for tests, a dump as text.

pub(crate) use profcodec::inspect::{Dump, DumpLayout, DumpOptions};

/// The layout of a dump (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum DumpFormat {
    /// One JSON document.
    Json,
    /// Newline-delimited JSON: one record a line.
    Ndjson,
}

impl From<DumpFormat> for DumpLayout {
    fn from(f: DumpFormat) -> DumpLayout {
        match f {
            DumpFormat::Json => DumpLayout::Json,
            DumpFormat::Ndjson => DumpLayout::Ndjson,
        }
    }
}

/// The dump of `input` in `layout` (compact), as text, for tests.
#[cfg(test)]
pub(crate) fn dump_text(
    codec: &dyn super::Codec,
    input: &profcodec::Opened,
    layout: DumpLayout,
) -> String {
    let mut out = Vec::new();
    let mut dump = Dump::new(
        &mut out,
        DumpOptions {
            layout,
            pretty: false,
        },
    );
    codec.dump(input, &mut dump).expect("dump");
    dump.finish().expect("finish");
    String::from_utf8(out).expect("a dump is UTF-8")
}

/// The whole dump of `input` as one JSON value (`{"header": ..., "records": [...]}`), for tests.
#[cfg(test)]
pub(crate) fn dump_value(codec: &dyn super::Codec, input: &profcodec::Opened) -> serde_json::Value {
    serde_json::from_str(&dump_text(codec, input, DumpLayout::Json)).expect("a dump is JSON")
}
