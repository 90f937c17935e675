//! Timelines of any input as traces (feature `timeline`): each format's converter (its crate's
//! `timeline` module) into one [`TimelineWriter`] (`profcodec-timeline`), which writes
//! Perfetto's protobuf or Chrome's trace-event JSON. This is the one place that chooses the
//! converter of an input.
//!
//! ```no_run
//! use profcodec::timeline::{Filter, Format, TimelineWriter, add_path};
//!
//! let out = std::io::BufWriter::new(std::fs::File::create("run.perfetto-trace")?);
//! let mut trace = TimelineWriter::new(out, Format::Perfetto, Filter::new());
//! let summary = add_path(&mut trace, "hpctoolkit-run-database".as_ref())?;
//! trace.finish()?;
//! println!("{} tracks, {} slices", summary.tracks, summary.slices);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::Write;
use std::path::{Path, PathBuf};

#[allow(unused_imports)] // without a format feature no converter takes a source
use profcodec_common::Source;
pub use profcodec_timeline::{Error, Filter, Format, Summary, Timeline, TimelineWriter};

use crate::{OpenError, Opened};

/// Adds the timeline of the input at `path` to `writer`, recognised by its content: an
/// HPCToolkit database folder with a `trace.db` (or one of its files: the database it is in),
/// an hpcrun measurement folder or one `.hpctrace` file beside its `.hpcrun`, or an
/// EasyProfiler capture. A folder that is no HPCToolkit database is read as a measurement
/// folder, whose error says what it lacks. The input is opened with [`crate::open`], and its
/// files as [`Opened::open_member`] opens them.
pub fn add_path<W: Write>(writer: &mut TimelineWriter<W>, path: &Path) -> Result<Summary, Error> {
    // A path that cannot be read is that error (not a StatProfiler template, which names no
    // file of its own and holds no timeline).
    if let Err(source) = std::fs::metadata(path) {
        return Err(Error::input(path, source));
    }
    match crate::open(path) {
        Ok(opened) => add_timeline(writer, &opened),
        Err(OpenError::Unknown { path, .. }) => Err(not_a_timeline(path)),
        Err(OpenError::NotADatabase(dir)) => measurement(writer, &dir),
        Err(e) => Err(Error::Read(e.into())),
    }
}

/// Adds the timeline of `input` to `writer` (see [`add_path`] for the inputs that have one).
/// Fails, whatever the conversion gave, when a file of the input was cut while it was read
/// ([`Opened::check_intact`]).
pub fn add_timeline<W: Write>(
    writer: &mut TimelineWriter<W>,
    input: &Opened,
) -> Result<Summary, Error> {
    add_timeline_to(&mut writer.timeline(), input)
}

/// [`add_timeline`] into a converter's view of a trace ([`TimelineWriter::timeline`], or one
/// whose sink stands in front of the writer's, as a report's activity does).
pub fn add_timeline_to(timeline: &mut Timeline<'_>, input: &Opened) -> Result<Summary, Error> {
    let result = dispatch(timeline, input);
    // What a cut file gave is zeros, not the input: its error wins.
    input.check_intact().map_err(|e| Error::Read(e.into()))?;
    result
}

/// Fails with [`Error::NoMatch`] when the filter of `writer` keeps threads or ranks and kept
/// none of those its inputs hold, naming those they have: call it after the last input, before
/// [`TimelineWriter::finish`], so that a filter that matches nothing writes no trace.
pub fn check_filter<W: Write>(writer: &mut TimelineWriter<W>) -> Result<(), Error> {
    let timeline = writer.timeline();
    match timeline.tracks.unmatched(timeline.filter) {
        Some(e) => Err(Error::NoMatch(e)),
        None => Ok(()),
    }
}

/// An input of [`write_trace`]: a path, opened as [`add_path`] opens it, or an input already
/// opened ([`add_timeline`]).
#[derive(Debug, Clone, Copy)]
pub enum TraceInput<'a> {
    /// A file or folder, recognised by its content.
    Path(&'a Path),
    /// An opened input.
    Opened(&'a Opened),
}

/// Writes the trace of `inputs` into `out` as `format`, keeping what `filter` keeps, as
/// `profcodec convert --to perfetto|chrome` writes it: every input's timeline added in order,
/// then the filter checked ([`check_filter`]: one that kept none of the threads or ranks the
/// inputs hold fails before the trace is finished), then the trace finished. Returns `out`.
pub fn write_trace<W: Write>(
    out: W,
    format: Format,
    filter: Filter,
    inputs: &[TraceInput<'_>],
) -> Result<W, Error> {
    let mut writer = TimelineWriter::new(out, format, filter);
    for input in inputs {
        match input {
            TraceInput::Path(path) => add_path(&mut writer, path)?,
            TraceInput::Opened(opened) => add_timeline(&mut writer, opened)?,
        };
    }
    check_filter(&mut writer)?;
    writer.finish()
}

/// The converter of `input`'s format.
#[allow(unused_variables, unused_imports)] // without a format feature, no converter is named
fn dispatch(timeline: &mut Timeline<'_>, input: &Opened) -> Result<Summary, Error> {
    use crate::Format as F;
    match input.format() {
        #[cfg(feature = "hpctoolkit")]
        F::HpctoolkitDatabase => {
            profcodec_hpctoolkit::timeline::write_timeline(&input.source(), timeline)
        }
        #[cfg(feature = "hpctoolkit")]
        F::HpctoolkitMeta | F::HpctoolkitProfile | F::HpctoolkitCct | F::HpctoolkitTrace => {
            // One file of a database: the database it is in, its files opened as this one was.
            let dir = input.path().parent().filter(|d| !d.as_os_str().is_empty());
            let database = Source {
                path: dir.unwrap_or(Path::new(".")),
                bytes: &[],
                members: input,
            };
            profcodec_hpctoolkit::timeline::write_timeline(&database, timeline)
        }
        #[cfg(feature = "hpcrun")]
        F::Hpctrace => hpcrun(&input.source(), timeline),
        #[cfg(feature = "easyprofiler")]
        F::EasyProfiler => {
            profcodec_easyprofiler::timeline::write_timeline(&input.source(), timeline)
        }
        // A measurement folder, or any other folder: its error says what it lacks.
        #[cfg(feature = "hpcrun")]
        _ if input.path().is_dir() => hpcrun(&input.source(), timeline),
        _ => Err(not_a_timeline(input.path().to_owned())),
    }
}

/// A folder that holds no input profcodec knows: read as a measurement folder, whose error says
/// what it lacks.
fn measurement<W: Write>(writer: &mut TimelineWriter<W>, dir: &Path) -> Result<Summary, Error> {
    #[cfg(feature = "hpcrun")]
    {
        // The folder holds nothing to open: its files are never read.
        let folder = Source::file(dir, &[]);
        hpcrun(&folder, &mut writer.timeline())
    }
    #[cfg(not(feature = "hpcrun"))]
    {
        let _ = writer;
        Err(not_a_timeline(dir.to_owned()))
    }
}

/// The timeline of an hpcrun measurement folder or trace, its frames named from the binaries
/// as [`crate::to_profile`] names them (the same search path, and the same report of each load
/// module), with the feature `symbolize`.
#[cfg(feature = "hpcrun")]
fn hpcrun(source: &Source<'_>, timeline: &mut Timeline<'_>) -> Result<Summary, Error> {
    #[cfg(feature = "symbolize")]
    {
        let (summary, reports) = profcodec_hpcrun::timeline::write_timeline_with_symbols(
            source,
            timeline,
            crate::symbols::search(),
        )?;
        crate::symbols::report(&reports);
        Ok(summary)
    }
    #[cfg(not(feature = "symbolize"))]
    profcodec_hpcrun::timeline::write_timeline(source, timeline)
}

/// Whether `input` may hold a timeline: not a NYTProf or StatProfiler input, which never do
/// (a StatProfiler session is a folder, which [`add_timeline`] would read as a measurement
/// folder). An input that may hold one and does not is refused by [`add_timeline`] with
/// [`Error::NotATimeline`].
pub fn may_have_timeline(input: &Opened) -> bool {
    !matches!(input.format().feature(), "nytprof" | "statprofiler")
}

/// The error of an input without a timeline.
pub(crate) fn not_a_timeline(path: PathBuf) -> Error {
    Error::NotATimeline {
        path,
        reason: "expected an EasyProfiler capture, an HPCToolkit database with a trace.db, \
                 or hpcrun .hpctrace files (a measurement folder)",
    }
}
