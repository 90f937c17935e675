//! An offline HTML report of a profile in the format-neutral model ([`profcodec_profile`]), so
//! that every format profcodec reads gets one: what was profiled, the top functions per value
//! type, an interactive flame graph (drawn from the call tree), callers and callees, the source line
//! by line, the activity of each track of a timeline, and with a base profile a comparison (a
//! differential flame graph and the functions that changed most).
//!
//! The report is a folder of linked pages: `index.html` (the tables as plain HTML cells, each
//! number's raw value in a `data-value` attribute; its style and scripts inline, nothing
//! fetched from any network), a page per source file with values per line (`files/<n>.html`,
//! nytprofhtml's columns and annotations), `flame.svg` and, for a comparison, `diff.svg`. It
//! opens from the file system in any current browser.
//!
//! This crate knows no file format: the caller reads the input into the model, hands over the
//! source text the input saves ([`Input::embedded_source`]) and, for a timeline, its
//! [`Activity`] (gathered by an [`ActivitySink`] in front of the trace writer) and the name of
//! the trace written beside the page ([`Input::trace_file`]).
//!
//! ```
//! use profcodec_profile::{Context, Frame, IdKind, Measured, ProfileBuilder, Unit};
//! use profcodec_report::{Input, Options, write_report};
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
//! let dir = tempfile::tempdir()?;
//! let out = dir.path().join("report");
//! write_report(&Input::new(&profile).format("example"), None, &Options::default(), &out)?;
//! let page = std::fs::read_to_string(out.join("index.html"))?;
//! assert!(page.contains(r#"data-name="work""#));
//! assert!(out.join("flame.svg").exists());
//! # Ok(())
//! # }
//! ```
//!
//! # Limits that keep a page small
//!
//! The flame graph omits frames narrower than [`Options::min_width`] percent of the total (as
//! flamegraph.pl's `--minwidth`), before the graph is drawn; the tables hold at most
//! [`Options::functions`] functions, [`Options::contexts`] single-context tables; a source page
//! is made per file with values per line (at most [`Options::source_files`], each within
//! [`Options::max_page`]), a row per line of text or with values (never per line number). The flame graphs are drawn node by node from the tree,
//! never through folded stacks that spell each whole call path. [`Options::max_output`] bounds
//! the files together: a report over it is refused before a byte is written. The model is read
//! a few times over, each pass linear in its size.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use profcodec_profile::Profile;

pub use activity::{Activity, ActivitySink};
pub use source::SourceUse;

mod activity;
mod budget;
mod calls;
mod files;
mod flame;
mod names;
mod page;
mod source;
mod text;
mod trees;

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// One side of a report: a profile and what is known of where it came from.
#[derive(Debug, Clone)]
pub struct Input<'a> {
    profile: &'a Profile,
    format: Option<String>,
    paths: Vec<String>,
    embedded: HashMap<String, Vec<String>>,
    source_folders: Vec<PathBuf>,
    timelines: Timelines,
}

/// What a report shows of an input's timelines.
#[derive(Debug, Clone, Default)]
struct Timelines {
    activity: Option<Activity>,
    /// The trace file beside the page: its name and size in bytes.
    trace: Option<(String, u64)>,
    note: Option<String>,
}

impl<'a> Input<'a> {
    /// A profile with nothing known of its origin.
    pub fn new(profile: &'a Profile) -> Input<'a> {
        Input {
            profile,
            format: None,
            paths: Vec::new(),
            embedded: HashMap::new(),
            source_folders: Vec::new(),
            timelines: Timelines::default(),
        }
    }

    /// This input with the name of the format it was read from (shown in the summary).
    pub fn format(mut self, format: impl Into<String>) -> Input<'a> {
        self.format = Some(format.into());
        self
    }

    /// This input with one more path it was read from (shown in the summary).
    pub fn path(mut self, path: impl Into<String>) -> Input<'a> {
        self.paths.push(path.into());
        self
    }

    /// This input with the text of a source file that the input itself saves (as the profile
    /// model names the file), line 1 first: preferred over the file on disk.
    pub fn embedded_source(mut self, file: impl Into<String>, lines: Vec<String>) -> Input<'a> {
        self.embedded.insert(file.into(), lines);
        self
    }

    /// This input with one more folder whose files it may name as its sources and the page
    /// may show: the input's own folder (a database's, whose `src/` holds the copied sources,
    /// a measurement folder, the folder of a profile file). A source file is read from disk
    /// only under these folders and [`Options::source_roots`], never under `/proc`, `/sys` or
    /// `/dev`, and only a regular file of at most 16 MiB ([`profcodec_common::named`]); which
    /// files were shown, and why others were not, is [`Written::sources`].
    pub fn source_folder(mut self, folder: impl Into<PathBuf>) -> Input<'a> {
        self.source_folders.push(folder.into());
        self
    }

    /// This input with the activity of its timelines (each track's slices and when it was
    /// busy), which the page draws track by track.
    pub fn timelines(mut self, mut activity: Activity) -> Input<'a> {
        activity.close_all();
        self.timelines.activity = Some(activity);
        self
    }

    /// This input with the trace of its timelines written beside the page: its file name in
    /// the report folder and its size in bytes. The page links to it and says how to open it.
    pub fn trace_file(mut self, name: impl Into<String>, bytes: u64) -> Input<'a> {
        self.timelines.trace = Some((name.into(), bytes));
        self
    }

    /// This input with a note on its timelines, shown on the page: why it has none, or why no
    /// trace was written.
    pub fn timeline_note(mut self, note: impl Into<String>) -> Input<'a> {
        self.timelines.note = Some(note.into());
        self
    }

    /// The profile.
    pub fn profile(&self) -> &'a Profile {
        self.profile
    }
}

/// Where source files named by a profile are looked for on disk: a folder, optionally in place
/// of a path prefix the profile records (`FROM=TO` on the command line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceRoot {
    /// The recorded prefix replaced by `to`; `None`: `to` is searched for the recorded path
    /// (made relative) and for the file's name.
    pub from: Option<String>,
    /// The folder on this machine.
    pub to: PathBuf,
}

impl std::str::FromStr for SourceRoot {
    type Err = std::convert::Infallible;

    /// `FROM=TO` or `TO`.
    fn from_str(s: &str) -> Result<SourceRoot, Self::Err> {
        Ok(match s.split_once('=') {
            Some((from, to)) if !from.is_empty() => SourceRoot {
                from: Some(from.to_owned()),
                to: PathBuf::from(to),
            },
            _ => SourceRoot {
                from: None,
                to: PathBuf::from(s),
            },
        })
    }
}

/// What a report shows, and the limits that keep it small.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// The flame graph omits frames narrower than this percentage of the total (flamegraph.pl's
    /// `--minwidth`, as a share rather than pixels). Default 0.1.
    pub min_width: f64,
    /// The most functions in each top-functions table (and with callers and callees). Default
    /// 200.
    pub functions: usize,
    /// The most single-context tables (threads, ranks, processes) beside the whole program's.
    /// Default 16.
    pub contexts: usize,
    /// The most source files given a page, those with the most of the main value first.
    /// Default: every file with values per line (within the output budget).
    pub source_files: usize,
    /// The most bytes one page may take: a source page projected over it is left out (the
    /// index says which). Default 16 MiB.
    pub max_page: u64,
    /// The most lines of one source file shown. Default 20,000.
    pub source_lines: usize,
    /// The most value types shown as columns. Default 8.
    pub value_types: usize,
    /// Where source files are looked for on disk, in order, before the recorded path itself;
    /// files under these folders may be shown (as those under [`Input::source_folder`]).
    pub source_roots: Vec<SourceRoot>,
    /// The main value type by name (flame graph, ordering, comparison); `None` for the profile's
    /// default.
    pub metric: Option<String>,
    /// The page's title; `None` for the program's name or the input's path.
    pub title: Option<String>,
    /// The most bytes the report's files may take together (`--max-output`): a report
    /// projected over it is refused with [`ReportError::OutputTooLarge`] before a byte is
    /// written, and the memory it is made in stays within it. `None`: no budget.
    pub max_output: Option<u64>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            min_width: 0.1,
            functions: 200,
            contexts: 16,
            source_files: usize::MAX,
            max_page: 16 << 20,
            source_lines: 20_000,
            value_types: 8,
            source_roots: Vec::new(),
            metric: None,
            title: None,
            max_output: None,
        }
    }
}

impl Options {
    /// The default options.
    pub fn new() -> Options {
        Options::default()
    }

    /// These options with the flame graph's pruning threshold, in percent of the total.
    pub fn min_width(mut self, percent: f64) -> Options {
        self.min_width = percent;
        self
    }

    /// These options looking for source files under `root` too.
    pub fn source_root(mut self, root: SourceRoot) -> Options {
        self.source_roots.push(root);
        self
    }

    /// These options with an output budget of `bytes` (see [`Options::max_output`]).
    pub fn max_output(mut self, bytes: u64) -> Options {
        self.max_output = Some(bytes);
        self
    }

    /// These options with the main value type named `name`.
    pub fn metric(mut self, name: impl Into<String>) -> Options {
        self.metric = Some(name.into());
        self
    }
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// The metric asked for is unknown, the profile has no values, or the base measures it in
    /// another unit.
    #[error(transparent)]
    Query(#[from] profcodec_profile::QueryError),
    /// Writing the folder failed.
    #[error("writing the report: {0}")]
    Io(#[from] std::io::Error),
    /// The page's template failed (a bug).
    #[error("rendering the report page: {0}")]
    Template(String),
    /// The report's files would take more than [`Options::max_output`]: nothing was written.
    #[error(
        "the report would take {} ({projected} bytes), over the output budget of {} ({budget} \
         bytes): nothing was written; --max-output {} allows it (--max-output SIZE sets the \
         budget, by default 100 times the inputs' size plus 64 MiB)",
        text::bytes(*projected),
        text::bytes(*budget),
        budget::suggestion(*projected)
    )]
    OutputTooLarge {
        /// The size of the files projected, in bytes.
        projected: u64,
        /// The budget, in bytes.
        budget: u64,
    },
}

/// What [`write_report`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Written {
    /// The files written, `index.html` first.
    pub files: Vec<PathBuf>,
    /// Their total size in bytes.
    pub bytes: u64,
    /// Where the text of each source file shown line by line came from, or why the page has
    /// none: what a front end says of the files it read besides its inputs.
    pub sources: Vec<SourceUse>,
}

/// Writes the report of `input` (compared with `base` when given) into the folder `folder`,
/// which is made (its parent must exist; an existing folder is written into).
pub fn write_report(
    input: &Input<'_>,
    base: Option<&Input<'_>>,
    options: &Options,
    folder: &Path,
) -> Result<Written, ReportError> {
    // Everything is made, and checked against the budget, before anything is written.
    let rendered = page::render(input, base, options)?;
    std::fs::create_dir_all(folder)?;
    let mut written = Written {
        files: Vec::new(),
        bytes: 0,
        sources: rendered.sources.clone(),
    };
    let mut put = |name: &str, bytes: &[u8]| -> Result<(), ReportError> {
        let path = folder.join(name);
        std::fs::write(&path, bytes)?;
        written.files.push(path);
        written.bytes += bytes.len() as u64;
        Ok(())
    };
    for (name, bytes) in &rendered.files {
        if let Some((folder_name, _)) = name.split_once('/') {
            std::fs::create_dir_all(folder.join(folder_name))?;
        }
        put(name, bytes)?;
    }
    Ok(written)
}
