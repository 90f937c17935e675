//! The HTML report of any inputs (feature `report`), made by `profcodec-report` from the profile
//! model: this is where the report's inputs are opened, read into the model with the source
//! they save ([`to_profile_with_sources`](crate::to_profile_with_sources)), merged, and, for
//! inputs with a timeline, written into a Perfetto trace beside the page while each track's
//! activity is gathered for it. The page itself knows no format.
//!
//! ```no_run
//! use profcodec::output::{OutputPath, Overwrite};
//! use profcodec::report::{Error, Input, Options, report};
//!
//! let out = OutputPath::folder("report").overwrite(Overwrite::Never).input("nytprof.out").check()?;
//! let input = Input::Path("nytprof.out".as_ref());
//! let written = report::<Error>(&[input], None, &Options::new(), out, &mut |_| {})?;
//! println!("{} files, {} bytes", written.files.len(), written.bytes);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use profcodec_profile::{Profile, ProfileBuilder, Selection};
use profcodec_report::{Activity, Input as Page};
pub use profcodec_report::{Options, ReportError, SourceRoot, SourceUse, Written};

use crate::output::{CheckedOutput, WriteError};
use crate::timeline::{Filter, Format as TraceFormat, Timeline, TimelineWriter};
use crate::{Format, OpenError, Opened, ReadError, SavedSources};

/// The name of the Perfetto trace written beside the page.
pub const TRACE_FILE: &str = "trace.perfetto-trace";

/// One input of a report.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// A path, opened when its turn comes and closed after it: several inputs never hold their
    /// bytes at once.
    Path(&'a Path),
    /// An input already opened.
    Opened(&'a Opened),
}

impl Input<'_> {
    /// The input's path.
    pub fn path(&self) -> &Path {
        match self {
            Input::Path(path) => path,
            Input::Opened(opened) => opened.path(),
        }
    }
}

/// What [`report`] is doing, for a front end's progress display.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Step<'a> {
    /// An input is read into the profile model.
    Reading(&'a Path),
    /// An input's timeline is written into the trace.
    Timeline(&'a Path),
    /// An input is done.
    Read(&'a Path),
    /// The page is written.
    Writing,
}

/// Why a report could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An input could not be opened, or is no profile.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// An input could not be read (the words are `validate`'s), named with the format it was
    /// taken for.
    #[error("{}: {format}: {source}", path.display())]
    Read {
        /// The input.
        path: PathBuf,
        /// The format it was taken for.
        format: Format,
        /// What is wrong.
        #[source]
        source: ReadError,
    },
    /// The inputs could not be merged into one profile (a table of the model would pass its
    /// bounds).
    #[error("{}: {message}", path.display())]
    Merge {
        /// The input that could not be added.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// An input's timeline could not be read, or the trace not written.
    #[error(transparent)]
    Timeline(#[from] crate::timeline::Error),
    /// The page could not be made: an unknown metric, or the folder could not be written.
    #[error(transparent)]
    Report(#[from] ReportError),
    /// The report folder could not be written.
    #[error("writing the report: {0}")]
    Io(#[from] std::io::Error),
    /// The filter's threads and ranks match nothing in the inputs (or in the base).
    #[error(transparent)]
    NoMatch(#[from] profcodec_profile::NoMatch),
}

/// One side of a report read: the merged profile, its formats' names, its paths, the folders
/// whose source files it may show and the source its inputs save.
struct Side {
    profile: Profile,
    formats: Vec<String>,
    paths: Vec<String>,
    folders: Vec<PathBuf>,
    sources: SavedSources,
}

/// The trace beside the page while the inputs are read, with the activity it shows.
struct Trace {
    path: PathBuf,
    writer: Option<TimelineWriter<profcodec_export::BudgetWriter<BufWriter<File>>>>,
    activity: Activity,
    tracks: u64,
    /// Why an input has no timeline (the last such reason), or why the trace was dropped.
    note: Option<String>,
}

impl Trace {
    fn new(folder: &Path, budget: u64, filter: &Filter) -> Result<Trace, Error> {
        let path = folder.join(TRACE_FILE);
        let out = profcodec_export::BudgetWriter::new(BufWriter::new(File::create(&path)?), budget);
        Ok(Trace {
            path,
            writer: Some(TimelineWriter::new(
                out,
                TraceFormat::Perfetto,
                filter.clone(),
            )),
            activity: Activity::new(),
            tracks: 0,
            note: None,
        })
    }

    /// Adds the timeline of `input`, if it has one.
    fn add(&mut self, input: &Opened) -> Result<(), Error> {
        use crate::timeline::Error as E;
        let Some(writer) = &mut self.writer else {
            return Ok(());
        };
        let Timeline {
            sink,
            filter,
            tracks,
        } = writer.timeline();
        let mut tee = self.activity.tee(sink);
        let added = if crate::timeline::may_have_timeline(input) {
            crate::timeline::add_timeline_to(&mut Timeline::new(&mut tee, filter, tracks), input)
        } else {
            Err(crate::timeline::not_a_timeline(input.path().to_owned()))
        };
        match added {
            Ok(summary) => self.tracks += summary.tracks,
            Err(E::NotATimeline { reason, .. }) => {
                self.note = Some(format!("No timeline: {reason}."));
            }
            Err(E::Write(io)) if profcodec_export::over_budget(&io).is_some() => {
                self.over_budget(&io);
            }
            Err(e) => return Err(e.into()),
        }
        Ok(())
    }

    /// Drops the trace and the activity, which would pass the budget, with the note that says
    /// so.
    fn over_budget(&mut self, io: &std::io::Error) {
        let budget = profcodec_export::over_budget(io).map_or(0, |o| o.budget);
        self.writer = None;
        self.activity = Activity::new();
        self.tracks = 0;
        self.note = Some(format!(
            "The timeline would make a trace larger than its budget of {budget} bytes (100 \
             times the inputs' size plus 64 MiB), so neither the trace nor the activity is \
             shown; `profcodec convert --to perfetto --max-output SIZE` writes the trace \
             (--depth or --from/--until make it smaller)."
        ));
    }

    /// Ends the trace: its size and the activity when some input had a timeline, else the
    /// note that says why not (the file removed).
    fn finish(mut self) -> Result<Result<(u64, Activity), Option<String>>, Error> {
        if let Some(writer) = self.writer.take()
            && self.tracks > 0
        {
            let finished = writer.finish().and_then(|mut out| {
                out.flush()
                    .map_err(crate::timeline::Error::Write)
                    .map(|()| drop(out))
            });
            match finished {
                Ok(()) => {
                    let bytes = std::fs::metadata(&self.path)?.len();
                    // What the other inputs lack is no news beside the timeline of those that
                    // have one.
                    return Ok(Ok((bytes, self.activity)));
                }
                Err(crate::timeline::Error::Write(io))
                    if profcodec_export::over_budget(&io).is_some() =>
                {
                    self.over_budget(&io);
                }
                Err(e) => return Err(e.into()),
            }
        }
        std::fs::remove_file(&self.path)?;
        Ok(Err(self.note))
    }
}

/// Reads one side of the report: each input opened in turn (unless given opened), read into
/// the model with its saved source, its timeline added to `trace`, then closed.
fn read_side(
    inputs: &[Input<'_>],
    selection: &Selection,
    mut trace: Option<&mut Trace>,
    progress: &mut dyn FnMut(Step<'_>),
) -> Result<Side, Error> {
    let mut side = Side {
        profile: Profile::default(),
        formats: Vec::new(),
        paths: Vec::new(),
        folders: Vec::new(),
        sources: Vec::new(),
    };
    let mut builder = (inputs.len() > 1).then(ProfileBuilder::new);
    for input in inputs {
        let path = input.path();
        progress(Step::Reading(path));
        let owned;
        let opened = match input {
            Input::Path(path) => {
                owned = crate::open(path)?;
                &owned
            }
            Input::Opened(opened) => *opened,
        };
        let read = |source: ReadError| Error::Read {
            path: path.to_owned(),
            format: opened.format(),
            source,
        };
        let (profile, sources) = crate::to_profile_with_sources(opened).map_err(read)?;
        if let Some(trace) = trace.as_deref_mut() {
            progress(Step::Timeline(path));
            trace.add(opened)?;
        }
        let format = opened.format().to_string();
        if !side.formats.contains(&format) {
            side.formats.push(format);
        }
        side.paths.push(path.display().to_string());
        let folder = input_folder(path);
        if !side.folders.contains(&folder) {
            side.folders.push(folder);
        }
        side.sources.extend(sources);
        match &mut builder {
            // Several inputs are merged by frame identity, each input's contexts kept apart.
            Some(builder) => builder.append(&profile).map_err(|e| Error::Merge {
                path: path.to_owned(),
                message: e.to_string(),
            })?,
            None => side.profile = profile,
        }
        progress(Step::Read(path));
    }
    if let Some(builder) = builder {
        side.profile = builder.build();
    }
    side.profile.keep_selected(selection)?;
    Ok(side)
}

/// The folder whose source files an input may name and the page show: a folder input itself
/// (a database with its copied sources in `src/`, a measurement or session folder), else the
/// folder that holds the input file.
fn input_folder(path: &Path) -> PathBuf {
    if path.is_dir() {
        return path.to_owned();
    }
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
        _ => PathBuf::from("."),
    }
}

/// The page's view of one side.
fn page_input(side: &Side) -> Page<'_> {
    let mut page = Page::new(&side.profile).format(side.formats.join(", "));
    for path in &side.paths {
        page = page.path(path.clone());
    }
    for folder in &side.folders {
        page = page.source_folder(folder.clone());
    }
    for (file, lines) in &side.sources {
        page = page.embedded_source(file.clone(), lines.clone());
    }
    page
}

/// Writes the report of `inputs` (several are merged into one profile, as `top` merges them),
/// compared with `base` when given, into the folder `output` checked against the output policy:
/// written into a staging folder and put in place whole once complete. `progress` hears of each
/// step.
///
/// The folder holds `index.html` with the flame graphs beside it and, when an input has a
/// timeline (an EasyProfiler capture, an HPCToolkit database with a trace.db, an hpcrun
/// measurement folder with traces), [`TRACE_FILE`], its Perfetto trace, within `convert`'s
/// output budget (100 times the inputs' size plus 64 MiB; above it the page says so and holds
/// no trace). The base's timeline is not read. The whole folder keeps [`Options::max_output`]
/// (by default that same budget): a page and flame graphs projected over what the trace left
/// of it are [`ReportError::OutputTooLarge`], and nothing is placed.
///
/// Source files the inputs name are shown line by line from the text an input saves, else
/// read from disk only under [`Options::source_roots`] and each input's own folder (a folder
/// input itself, or the folder holding an input file), never under `/proc`, `/sys` or `/dev`,
/// only regular files of at most 16 MiB: [`Written::sources`] says where each file's text came
/// from, or why the page has none, for the front end to tell the user.
///
/// Memory: the models of both sides and one input's bytes at a time.
///
/// The error is any type made from [`Error`]: [`Error`] itself, or the inspection verbs' error
/// (`profcodec::inspect::Error`, feature `inspect`), which a command line maps as it maps
/// theirs.
pub fn report<E: From<Error>>(
    inputs: &[Input<'_>],
    base: Option<Input<'_>>,
    options: &Options,
    output: CheckedOutput,
    progress: &mut dyn FnMut(Step<'_>),
) -> Result<Written, WriteError<E>> {
    report_filtered(inputs, base, options, &Filter::new(), output, progress)
}

/// [`report`] of the threads and ranks `filter` keeps (in both sides' profiles, and in the
/// trace, whose depth and time window it also sets): a filter that keeps no thread of a side's
/// profile is [`Error::NoMatch`], and nothing is written.
pub fn report_filtered<E: From<Error>>(
    inputs: &[Input<'_>],
    base: Option<Input<'_>>,
    options: &Options,
    filter: &Filter,
    output: CheckedOutput,
    progress: &mut dyn FnMut(Step<'_>),
) -> Result<Written, WriteError<E>> {
    // `convert`'s rule: the budget asked for, else 100 times the inputs plus 64 MiB.
    let budget = options.max_output.unwrap_or_else(|| {
        profcodec_export::default_output_budget(profcodec_export::input_bytes(
            &inputs.iter().map(Input::path).collect::<Vec<_>>(),
        ))
    });
    let placed = output.path().to_owned();
    output.write_with(|folder| {
        let sides = Sides {
            inputs,
            base,
            filter,
        };
        write_into(folder, &placed, sides, options, budget, progress).map_err(E::from)
    })
}

/// What a report reads: the inputs, the base, and the filter of both.
struct Sides<'a, 'i> {
    inputs: &'a [Input<'i>],
    base: Option<Input<'a>>,
    filter: &'a Filter,
}

/// [`report`] into the staging folder `folder`, which becomes `placed`.
fn write_into(
    folder: &Path,
    placed: &Path,
    sides: Sides<'_, '_>,
    options: &Options,
    budget: u64,
    progress: &mut dyn FnMut(Step<'_>),
) -> Result<Written, Error> {
    std::fs::create_dir(folder)?;
    let mut trace = Trace::new(folder, budget, sides.filter)?;
    let selection = sides.filter.selection();
    let new = read_side(sides.inputs, &selection, Some(&mut trace), progress)?;
    let base = sides
        .base
        .map(|base| read_side(&[base], &selection, None, progress))
        .transpose()?;
    let timeline = trace.finish()?;
    progress(Step::Writing);
    let mut page = page_input(&new);
    let trace_bytes = timeline.as_ref().ok().map(|(bytes, _)| *bytes);
    match timeline {
        Ok((bytes, activity)) => page = page.timelines(activity).trace_file(TRACE_FILE, bytes),
        Err(Some(note)) => page = page.timeline_note(note),
        Err(None) => {}
    }
    let base_page = base.as_ref().map(page_input);
    // The page and its flame graphs get what the trace left of the budget, and are refused
    // whole (the trace with them) when over it.
    let trace_taken = trace_bytes.unwrap_or(0);
    let mut page_options = options.clone();
    page_options.max_output = Some(budget.saturating_sub(trace_taken));
    let mut written =
        profcodec_report::write_report(&page, base_page.as_ref(), &page_options, folder).map_err(
            |e| match e {
                ReportError::OutputTooLarge { projected, .. } => ReportError::OutputTooLarge {
                    projected: projected.saturating_add(trace_taken),
                    budget,
                },
                e => e,
            },
        )?;
    if let Some(bytes) = trace_bytes {
        written.bytes += bytes;
        written.files.push(folder.join(TRACE_FILE));
    }
    // The files as they will be once the folder is in place.
    for file in &mut written.files {
        if let Ok(name) = file.strip_prefix(folder) {
            *file = placed.join(name);
        }
    }
    Ok(written)
}

/// A report's error as the inspection verbs' error, which the command line maps to its exit
/// statuses: damage stays invalid, named with the input's path and the format it was taken
/// for; an unknown metric, or what an input or this build cannot give, is a usage error; a
/// folder that cannot be written an I/O error.
#[cfg(feature = "inspect")]
impl From<Error> for crate::inspect::Error {
    fn from(e: Error) -> Self {
        use crate::inspect::Error as V;
        match e {
            Error::Open(e @ OpenError::Unknown { .. }) => V::Usage(e.to_string()),
            Error::Read {
                path,
                format,
                source,
            } => {
                let named = |message: String| format!("{}: {format}: {message}", path.display());
                match V::from(source) {
                    V::Invalid { message, offset } => V::Invalid {
                        message: named(message),
                        offset,
                    },
                    V::Usage(message) => V::Usage(named(message)),
                    other => V::invalid(named(other.to_string()), None),
                }
            }
            Error::Report(ReportError::Query(q)) => V::Usage(q.to_string()),
            // As convert words an output over its budget.
            Error::Report(e @ ReportError::OutputTooLarge { .. }) => V::Usage(e.to_string()),
            Error::NoMatch(e) => V::Usage(e.to_string()),
            Error::Report(ReportError::Io(io)) | Error::Io(io) => V::Io(io),
            e => V::invalid(e, None),
        }
    }
}
