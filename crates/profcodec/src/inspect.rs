//! The inspection verbs over any input (feature `inspect`): `info`, `validate`, `dump` and
//! `rewrite`. Each format's implementation lives in its own crate (`profcodec_<format>::inspect`);
//! this is the one place that dispatches to them. Every verb checks, before it returns, that no
//! file of the input was cut while it was read ([`Opened::check_intact`]).

// A build without any format answers every verb with `Unsupported`: its arguments go unused.
#![cfg_attr(
    not(any(
        feature = "hpctoolkit",
        feature = "hpcrun",
        feature = "nytprof",
        feature = "easyprofiler",
        feature = "statprofiler"
    )),
    allow(unused_variables, dead_code)
)]

use std::path::Path;

use profcodec_common::inspect::Source;
pub use profcodec_common::inspect::{
    Dump, DumpLayout, DumpOptions, Error, Finding, RewriteOptions, RewriteReport, Validated,
    dump_to_string, write_json,
};

use crate::output::{CheckedOutput, WriteError};
use crate::{Format, Opened};

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

fn source(input: &Opened) -> Source<'_> {
    input.source()
}

/// What a verb answers for a format this build does not include.
fn not_compiled(op: &'static str) -> Error {
    Error::Unsupported { op }
}

/// Runs `verb` and then the input's intact check, whose error wins: what a cut file gave is
/// zeros, not the input.
fn checked<T>(input: &Opened, verb: Result<T, Error>) -> Result<T, Error> {
    input.check_intact().map_err(|e| Error::invalid(e, None))?;
    verb
}

macro_rules! dispatch {
    ($input:expr, $op:literal, |$m:ident| $call:expr) => {{
        let input: &Opened = $input;
        let result = match input.format().feature() {
            #[cfg(feature = "hpctoolkit")]
            "hpctoolkit" => {
                use profcodec_hpctoolkit::inspect as $m;
                $call
            }
            #[cfg(feature = "hpcrun")]
            "hpcrun" => {
                use profcodec_hpcrun::inspect as $m;
                $call
            }
            #[cfg(feature = "nytprof")]
            "nytprof" => {
                use profcodec_nytprof::inspect as $m;
                $call
            }
            #[cfg(feature = "easyprofiler")]
            "easyprofiler" => {
                use profcodec_easyprofiler::inspect as $m;
                $call
            }
            #[cfg(feature = "statprofiler")]
            "statprofiler" => {
                use profcodec_statprofiler::inspect as $m;
                $call
            }
            _ => Err(not_compiled($op)),
        };
        checked(input, result)
    }};
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
pub fn info(input: &Opened) -> Result<Info, Error> {
    let info: profcodec_common::inspect::Info =
        dispatch!(input, "info", |m| m::info(&source(input)))?;
    Ok(Info {
        format: input.format(),
        version: info.version,
        details: info.details,
    })
}

/// Decodes everything and checks every offset, count and cross-reference, once: the fullest
/// decode the format has. Damage is an error; what the real tool tolerates but a careful user
/// should hear of (trailing bytes after the end of the stream) is a [`Finding`].
pub fn validate(input: &Opened) -> Result<Validated, Error> {
    dispatch!(input, "validate", |m| m::validate(&source(input)))
}

/// Streams the full content into `dump`: the header, then each record as it is decoded (see
/// [`Dump`] for the conventions). An error ends the dump; the caller closes it.
pub fn dump(input: &Opened, dump: &mut Dump<'_>) -> Result<(), Error> {
    dispatch!(input, "dump", |m| m::dump(&source(input), dump))
}

/// Decodes `input` and encodes it again (into another version or format with
/// [`RewriteOptions::to`]) at `output`, a path checked against [`crate::output`]'s policy: the
/// output appears whole once complete or not at all, and is never merged with old output.
pub fn rewrite(
    input: &Opened,
    output: CheckedOutput,
    options: &RewriteOptions,
) -> Result<RewriteReport, WriteError<Error>> {
    output.write_with(|staged| rewrite_into(input, staged, options))
}

/// [`rewrite`] into `out`, a path that does not exist yet (a file, or a folder for an
/// HPCToolkit database), in a folder that does: no output policy, no atomic placement. For
/// callers that stage the output themselves.
pub fn rewrite_into(
    input: &Opened,
    out: &Path,
    options: &RewriteOptions,
) -> Result<RewriteReport, Error> {
    dispatch!(input, "rewrite", |m| m::rewrite(
        &source(input),
        out,
        options
    ))
}

impl Opened {
    /// [`info`] of this input.
    pub fn info(&self) -> Result<Info, Error> {
        info(self)
    }
}

impl From<crate::ReadError> for Error {
    /// Damage stays [`Error::Invalid`] (a file of the input that cannot be opened too); what
    /// the input cannot give is a usage error.
    fn from(e: crate::ReadError) -> Self {
        match e {
            crate::ReadError::Unsupported(message) => Error::Usage(message),
            crate::ReadError::Io(e) => Error::Io(e),
            other => {
                let offset = other.offset();
                Error::invalid(other, offset)
            }
        }
    }
}

/// What [`merge_files`] did.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct MergeReport {
    /// Number of inputs merged.
    pub inputs: usize,
    /// What the format's own merge tool would warn about (for NYTProf, `nytprofmerge`'s
    /// warnings: an attribute or option that differs between the inputs).
    pub warnings: Vec<String>,
}

/// Merges `inputs`, all of one format, into one file of that format at `output` (a path
/// checked against [`crate::output`]'s policy) that the format's own tool reads: for NYTProf,
/// the file `nytprofmerge` would write, which Devel::NYTProf loads with the same per-sub and
/// per-line totals (see `profcodec_nytprof::merge`). Formats without a merge into their own
/// layout are refused with a [`Error::Usage`] naming the input.
///
/// The inputs are read on every core (feature `profile`; `RAYON_NUM_THREADS` sets the number of
/// threads) and merged in input order as they come, so memory is the merged profile and at most
/// two inputs' models per thread. The output is written only once every input has been read: a damaged input, or one of
/// another format, leaves no output, and its error names it.
///
/// ```no_run
/// use profcodec::output::OutputPath;
/// let inputs = ["nytprof.out.101", "nytprof.out.102"];
/// let output = OutputPath::file("merged.out").inputs(inputs).check()?;
/// let report = profcodec::merge_files(&inputs, output)?;
/// assert_eq!(report.inputs, 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn merge_files<P: AsRef<Path> + Sync>(
    inputs: &[P],
    output: CheckedOutput,
) -> Result<MergeReport, WriteError<Error>> {
    let merge = read_for_merge(inputs).map_err(WriteError::Write)?;
    output.write_with(|staged| merge.write(staged))
}

/// The inputs of [`merge_files`], read and merged in memory, ready to be written.
enum MergeInto {
    #[cfg(feature = "nytprof")]
    Nytprof(Box<profcodec_nytprof::inspect::Merge>, usize),
}

impl MergeInto {
    #[cfg_attr(not(feature = "nytprof"), allow(unused_variables))]
    fn write(self, out: &Path) -> Result<MergeReport, Error> {
        match self {
            #[cfg(feature = "nytprof")]
            MergeInto::Nytprof(merge, inputs) => Ok(MergeReport {
                inputs,
                warnings: merge.write(out)?,
            }),
        }
    }
}

/// `error` with the input it is about named first.
fn about(input: &Path, error: Error) -> Error {
    match error {
        Error::Invalid { message, offset } => Error::Invalid {
            message: format!("{}: {message}", input.display()),
            offset,
        },
        Error::Usage(message) => Error::Usage(format!("{}: {message}", input.display())),
        Error::Unsupported { op } => Error::Usage(format!(
            "{}: {op} is not supported by this build",
            input.display()
        )),
        Error::Io(e) => Error::Io(std::io::Error::new(
            e.kind(),
            format!("{}: {e}", input.display()),
        )),
        other => other,
    }
}

/// One input of [`merge_files`] as read on any thread: what its format's merge read of it.
enum ReadForMerge {
    #[cfg(feature = "nytprof")]
    Nytprof(profcodec_nytprof::inspect::MergeInput),
    /// A format without a merge into its own layout, and why (the format crate's `NO_MERGE`).
    #[cfg_attr(
        not(any(
            feature = "easyprofiler",
            feature = "statprofiler",
            feature = "hpcrun",
            feature = "hpctoolkit"
        )),
        allow(dead_code)
    )]
    Refused(&'static str),
}

/// Opens and reads input `path` for the merge (on any thread): its format and what was read;
/// `second_thread` as [`profcodec_nytprof::ModelOptions::second_thread`] (NYTProf only).
#[cfg_attr(not(feature = "nytprof"), allow(unused_variables))]
fn read_one(path: &Path, second_thread: bool) -> Result<(Format, ReadForMerge), Error> {
    let opened = crate::open(path).map_err(|e| Error::Usage(e.to_string()))?;
    let this = opened.format();
    let result = match this.feature() {
        #[cfg(feature = "nytprof")]
        "nytprof" => profcodec_nytprof::inspect::Merge::read_with(&source(&opened), second_thread)
            .map(ReadForMerge::Nytprof),
        #[cfg(feature = "easyprofiler")]
        "easyprofiler" => Ok(ReadForMerge::Refused(
            profcodec_easyprofiler::inspect::NO_MERGE,
        )),
        #[cfg(feature = "statprofiler")]
        "statprofiler" => Ok(ReadForMerge::Refused(
            profcodec_statprofiler::inspect::NO_MERGE,
        )),
        #[cfg(feature = "hpcrun")]
        "hpcrun" => Ok(ReadForMerge::Refused(profcodec_hpcrun::inspect::NO_MERGE)),
        #[cfg(feature = "hpctoolkit")]
        "hpctoolkit" => Ok(ReadForMerge::Refused(
            profcodec_hpctoolkit::inspect::NO_MERGE,
        )),
        _ => Err(not_compiled("merge")),
    };
    checked(&opened, result)
        .map(|read| (this, read))
        .map_err(|e| about(path, e))
}

/// Reads the inputs (on every core with feature `profile`, at most two inputs per thread read
/// ahead of the merge) and merges them in input order, checking that they share the first
/// one's format. The first input at fault, in input order, ends it with its error.
// Without NYTProf, every format is refused at the first input.
#[cfg_attr(not(feature = "nytprof"), allow(clippy::never_loop))]
fn read_for_merge<P: AsRef<Path> + Sync>(inputs: &[P]) -> Result<MergeInto, Error> {
    let mut format: Option<Format> = None;
    #[cfg(feature = "nytprof")]
    let mut nytprof = Box::new(profcodec_nytprof::inspect::Merge::new());
    let mut fold = |i: usize, read: Result<(Format, ReadForMerge), Error>| {
        let path = inputs[i].as_ref();
        let (this, read) = read?;
        match format {
            None => format = Some(this),
            Some(first) if first != this => {
                return Err(Error::Usage(format!(
                    "{}: is a {this}, but the first input is a {first}: merge writes one \
                     file of one format, so all its inputs must be of that format",
                    path.display()
                )));
            }
            Some(_) => {}
        }
        match read {
            #[cfg(feature = "nytprof")]
            ReadForMerge::Nytprof(read) => {
                nytprof.add_read(read);
                Ok(())
            }
            ReadForMerge::Refused(why) => Err(about(
                path,
                Error::Usage(format!(
                    "merge writes no {} file: {why}; top, convert and report read many \
                     inputs of any format as one",
                    this.short_name()
                )),
            )),
        }
    };
    #[cfg(feature = "profile")]
    let pool = crate::merge::pool(inputs.len(), None);
    #[cfg(not(feature = "profile"))]
    let pool: Option<std::convert::Infallible> = None;
    // Every core reads an input of its own: a reader's second thread would compete.
    let second_thread = pool.is_none();
    let read = |i: usize| read_one(inputs[i].as_ref(), second_thread);
    match pool {
        #[cfg(feature = "profile")]
        Some(pool) => {
            let window = 2 * pool.current_num_threads();
            crate::merge::ordered(&pool, inputs.len(), window, read, fold)?;
        }
        _ => {
            for i in 0..inputs.len() {
                fold(i, read(i))?;
            }
        }
    }
    match format.map(Format::feature) {
        #[cfg(feature = "nytprof")]
        Some("nytprof") => Ok(MergeInto::Nytprof(nytprof, inputs.len())),
        _ => Err(Error::Usage("merge needs at least one input".into())),
    }
}
