//! Any opened input in the format-neutral profile model (feature `profile`).
//!
//! Each format crate converts its own files (`to_profile` there); what lives here is the choice
//! of what to convert for an input as [`open`](crate::open) found it: a database directory or
//! one of its files, a measurement folder or one file, a session or one file.

use std::borrow::Cow;

use profcodec_profile::Profile;

use crate::{Opened, ReadError};

/// The most values of non-summary HPCToolkit profiles [`to_profile`] reads into the model: below
/// it the model holds every profile (so per-thread and per-rank questions work), above it the
/// summary profile only, which keeps a database of tens of thousands of profiles at the cost of
/// its context tree. 2^20 stored values make about 25 MB of model.
pub const HPCTOOLKIT_ALL_PROFILES_MAX_VALUES: u64 = 1 << 20;

/// The input in the format-neutral profile model, which `top`, `diff` and the exporters read.
/// A database, measurement folder or session is one profile.
///
/// - HPCToolkit: a database directory (meta.db and profile.db; cct.db and trace.db are not
///   read) with every profile up to [`HPCTOOLKIT_ALL_PROFILES_MAX_VALUES`] values, else the
///   summary only; a lone meta.db gives the tree without values.
/// - hpcrun: a `.hpcrun` file is one thread's profile; a measurement folder is one profile with
///   a context per thread. A `.hpctrace` alone holds no values.
/// - NYTProf: the model as Devel::NYTProf::Data builds it (evals collapsed) with the call
///   paths `nytprofcalls` prints, in one pass; the old Pynytprof layout too.
/// - EasyProfiler: the blocks' call tree per thread (no spans).
/// - StatProfiler: every file of a session, process by process, one context per process.
///
/// Memory: the model, and for a session one file's bytes at a time.
///
/// ```no_run
/// let input = profcodec::open("hpctoolkit-database")?;
/// let profile = profcodec::to_profile(&input)?;
/// let top = profile.top(&profcodec::profile::Query::new().limit(10))?;
/// for row in &top.rows {
///     println!("{:>12.6} {}", row.self_value, row.name);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn to_profile(input: &Opened) -> Result<Profile, ReadError> {
    to_profile_with(input, &ConvertOptions::new())
}

/// How [`to_profile_with`] converts an input. The default is [`to_profile`]'s: no spans, the
/// call tree kept, a second thread where the format gains from one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvertOptions {
    spans: bool,
    flat_only: bool,
    flat_lines: bool,
    second_thread: bool,
}

impl Default for ConvertOptions {
    fn default() -> Self {
        ConvertOptions {
            spans: false,
            flat_only: false,
            flat_lines: true,
            second_thread: true,
        }
    }
}

impl ConvertOptions {
    /// [`to_profile`]'s options.
    pub fn new() -> ConvertOptions {
        ConvertOptions::default()
    }

    /// Keep the timed spans of the formats that record them (EasyProfiler's blocks, each with
    /// its start and end), which [`to_profile`] leaves out because they grow with the input
    /// rather than with its distinct call paths: what timed views (speedscope's evented
    /// profiles) show. Other formats have none.
    pub fn spans(mut self, spans: bool) -> ConvertOptions {
        self.spans = spans;
        self
    }

    /// Where the format records flat per-frame values of its own besides a call tree
    /// (NYTProf: the per-sub and per-line figures Devel::NYTProf reports, and the call paths
    /// of its `<` records), convert the flat values only, without call tree or call edges:
    /// what a query that reads flat values needs
    /// ([`Query::source_in`](crate::profile::Query::source_in) says which), in less time and
    /// memory. Formats whose values are the call tree's convert as before.
    pub fn flat_only(mut self, flat_only: bool) -> ConvertOptions {
        self.flat_only = flat_only;
        self
    }

    /// With [`ConvertOptions::flat_only`], keep the flat values of lines (NYTProf's statement
    /// lines) besides those of functions. On by default; a query by function or module reads
    /// none, and a profile has many more lines than functions.
    pub fn flat_lines(mut self, flat_lines: bool) -> ConvertOptions {
        self.flat_lines = flat_lines;
        self
    }

    /// Let the conversion of one input use a second thread where the format gains from one
    /// (NYTProf's zlib stream inflated ahead of the parsing). On by default; off for a caller
    /// that already keeps every core busy with an input each ([`merged_profile`](crate::merged_profile)
    /// on several threads), where the second thread only competes with the others.
    pub fn second_thread(mut self, second_thread: bool) -> ConvertOptions {
        self.second_thread = second_thread;
        self
    }

    /// Whether these options leave out the call tree of an input of `format`
    /// ([`ConvertOptions::flat_only`]).
    pub fn leaves_out_call_tree(&self, format: crate::Format) -> bool {
        self.flat_only && format.feature() == "nytprof"
    }
}

/// [`to_profile`] as `options` say.
// Only NYTProf and EasyProfiler read options.
#[cfg_attr(
    not(any(feature = "nytprof", feature = "easyprofiler")),
    allow(unused_variables)
)]
pub fn to_profile_with(input: &Opened, options: &ConvertOptions) -> Result<Profile, ReadError> {
    let profile = match input.format().feature() {
        #[cfg(feature = "hpctoolkit")]
        "hpctoolkit" => hpctoolkit(input),
        #[cfg(feature = "hpcrun")]
        "hpcrun" => hpcrun(input),
        #[cfg(feature = "nytprof")]
        "nytprof" => nytprof(input, options),
        #[cfg(feature = "easyprofiler")]
        "easyprofiler" => easyprofiler(input, options.spans),
        #[cfg(feature = "statprofiler")]
        "statprofiler" => statprofiler(input),
        feature => Err(crate::error::not_compiled(input, feature)),
    };
    // A file cut while it was read: its lost bytes read as zeros, whatever they gave is
    // replaced by the error that says so.
    input.check_intact()?;
    profile
}

/// [`to_profile`] with the timed spans of the formats that record them
/// ([`ConvertOptions::spans`]).
pub fn to_profile_with_spans(input: &Opened) -> Result<Profile, ReadError> {
    to_profile_with(input, &ConvertOptions::new().spans(true))
}

/// The source text an input saves, per file: (the file as the profile model names it, its lines
/// from line 1, a line the input lacks empty).
pub type SavedSources = Vec<(String, Vec<String>)>;

/// [`to_profile`] and the source text the input saves, read in the same pass: NYTProf's saved
/// source (`savesrc`). Formats and files that save none give none. What shows source line by
/// line asks for it (`profcodec report`).
pub fn to_profile_with_sources(input: &Opened) -> Result<(Profile, SavedSources), ReadError> {
    #[cfg(feature = "nytprof")]
    if input.format().feature() == "nytprof" {
        let read = nytprof_with_sources(input, true, &ConvertOptions::new());
        input.check_intact()?;
        return read;
    }
    Ok((to_profile(input)?, Vec::new()))
}

/// How `format`'s own tools name frames in folded stacks, where that differs from the profile
/// model's labels: NYTProf's `nytprofcalls` writes every `(eval N)` as `(eval 0)`, spaces
/// kept (`main::__ANON__[(eval 0)[t.pl:3]:1]`). `None` for the labels. This is what
/// `profcodec_export::ExportOptions::folded_names` takes, so that folded stacks read as the
/// source tool's.
///
/// (`nytprofcalls`' `tr/; /??/` runs over its sub ids, not over the names, so it prints names
/// as they are, spaces included. The exporter then makes any name safe for the format, which
/// `nytprofcalls` does not: a `;` in a name is written as `:`, a line break as a space.)
pub fn folded_frame_namer(format: crate::Format) -> Option<fn(&str) -> Cow<'_, str>> {
    match format.feature() {
        #[cfg(feature = "nytprof")]
        "nytprof" => Some(nytprofcalls_frame),
        _ => None,
    }
}

/// A frame's name as `nytprofcalls` prints it.
#[cfg(feature = "nytprof")]
fn nytprofcalls_frame(label: &str) -> Cow<'_, str> {
    profcodec_nytprof::calls::nytprofcalls_name(label)
}

impl Opened {
    /// [`to_profile`] of this input.
    pub fn to_profile(&self) -> Result<Profile, ReadError> {
        to_profile(self)
    }
}

/// A model error (a table over `u32::MAX` entries) as a read error without offset.
#[cfg(any(feature = "hpcrun", feature = "nytprof", feature = "easyprofiler"))]
fn model_error(e: impl std::fmt::Display) -> ReadError {
    ReadError::invalid(e, None)
}

#[cfg(feature = "hpctoolkit")]
fn hpctoolkit(input: &Opened) -> Result<Profile, ReadError> {
    use crate::Format;
    use profcodec_hpctoolkit::files::DatabaseFiles;
    use profcodec_hpctoolkit::{Database, FileKind};
    // A database directory, or a lone meta.db (the tree without values).
    if !matches!(
        input.format(),
        Format::HpctoolkitDatabase | Format::HpctoolkitMeta
    ) {
        return Err(ReadError::Unsupported(
            "the profile model needs meta.db: give the database directory".to_owned(),
        ));
    }
    // The files are opened for `input` (`Opened::open_member`): a shrink of one of them is
    // `input`'s, which `to_profile` checks.
    let files = DatabaseFiles::load(&input.source()).map_err(crate::open::member_error)?;
    let meta = files.bytes(FileKind::Meta).unwrap_or_default();
    let db = Database::from_parts(meta, files.bytes(FileKind::Profile), None, None)?;
    let options =
        hpctoolkit_profile_options(db.profile().as_ref(), HPCTOOLKIT_ALL_PROFILES_MAX_VALUES)?;
    Ok(db.to_profile(&options)?)
}

/// The profiles [`to_profile`] reads: all of them when their values number at most
/// `max_values`, else the summary only. Counting reads the profile infos only.
#[cfg(feature = "hpctoolkit")]
fn hpctoolkit_profile_options(
    profiles: Option<&profcodec_hpctoolkit::ProfileDb<'_>>,
    max_values: u64,
) -> Result<profcodec_hpctoolkit::profile::ProfileOptions, ReadError> {
    use profcodec_hpctoolkit::profile::{ProfileOptions, Profiles};
    let mut values = 0u64;
    if let Some(p) = profiles {
        for prof in p.profiles() {
            let prof = prof?;
            if !prof.is_summary() {
                values += prof.values.len() as u64;
            }
        }
    }
    let which = if values <= max_values {
        Profiles::All
    } else {
        Profiles::SummaryOnly
    };
    Ok(ProfileOptions::new().profiles(which))
}

#[cfg(feature = "hpcrun")]
fn hpcrun(input: &Opened) -> Result<Profile, ReadError> {
    use crate::Format;
    use profcodec_hpcrun::{FolderError, MeasurementFolder, ProfileError};
    if input.path().is_dir() {
        let folder =
            MeasurementFolder::open(input.path()).map_err(|e| ReadError::invalid(e, None))?;
        #[cfg(feature = "symbolize")]
        let profile = symbols::folder_profile(&folder);
        #[cfg(not(feature = "symbolize"))]
        let profile = folder.to_profile();
        return profile.map_err(|e| {
            let offset = match &e {
                ProfileError::Folder(FolderError::Decode { source, .. }) => source.offset(),
                _ => None,
            };
            ReadError::invalid(e, offset)
        });
    }
    if input.format() == Format::Hpctrace {
        return Err(ReadError::Unsupported(
            "a trace holds no metric values: name its .hpcrun file or the measurement folder"
                .to_owned(),
        ));
    }
    // Bytes after the measurement are a finding of validation, not part of the profile.
    let (m, _) = profcodec_hpcrun::read_measurement_prefix(input.bytes())?;
    #[cfg(feature = "symbolize")]
    {
        let mut converter = profcodec_hpcrun::ProfileConverter::with_symbols(symbols::search());
        // A file of a measurement folder: the folder's vdso/ and gpubins/ too.
        if let Some(folder) = input.path().parent() {
            converter.look_in_folder(folder);
        }
        converter.add(&m, None).map_err(model_error)?;
        symbols::report(&converter.module_reports());
        Ok(converter.finish())
    }
    #[cfg(not(feature = "symbolize"))]
    m.to_profile().map_err(model_error)
}

/// Where [`to_profile`] finds the binaries of hpcrun measurements, and what it says about them
/// (feature `symbolize`).
///
/// Process-wide settings, as the environment variable `PROFCODEC_BINARY_PATH` is: a front end
/// sets them once (the `profcodec` command from `--binary-path` and for its stderr report) and
/// every conversion uses them. Binaries are searched in the folders of [`set_binary_path`](symbols::set_binary_path),
/// then those of `PROFCODEC_BINARY_PATH` (colon-separated) and the input's own folder, each for
/// the recorded file name; the recorded path itself only where it lies under one of these
/// folders ([`profcodec_hpcrun::symbols`]).
#[cfg(feature = "symbolize")]
pub mod symbols {
    use std::path::PathBuf;
    use std::sync::RwLock;

    pub use profcodec_hpcrun::symbols::{ModuleReport, Resolution, SearchPath};

    type Reporter = Box<dyn Fn(&ModuleReport) + Send + Sync>;

    static BINARY_PATH: RwLock<Vec<PathBuf>> = RwLock::new(Vec::new());
    static REPORTER: RwLock<Option<Reporter>> = RwLock::new(None);

    /// The folders searched for binaries before `PROFCODEC_BINARY_PATH`'s (`--binary-path`).
    pub fn set_binary_path(dirs: impl IntoIterator<Item = PathBuf>) {
        if let Ok(mut path) = BINARY_PATH.write() {
            *path = dirs.into_iter().collect();
        }
    }

    /// Calls `reporter` with what became of each load module of every measurement converted
    /// from now on (resolved or not, and why not).
    pub fn set_reporter(reporter: impl Fn(&ModuleReport) + Send + Sync + 'static) {
        if let Ok(mut r) = REPORTER.write() {
            *r = Some(Box::new(reporter));
        }
    }

    /// What a front end says of `report`: that its structure file (`structs/*.hpcstruct`) was
    /// not used, and why; that its names come from a binary not proven to be the one that ran
    /// (once per module), or without the binary's refused DWARF; that the module stayed
    /// unresolved in some files, and why, with `hint`, the front end's way to name a folder of binaries (`--binary-path DIR`, `binary_path`).
    /// Nothing for a module resolved with its structure.
    pub fn warnings(report: &ModuleReport, hint: &str) -> Vec<String> {
        let mut warnings = Vec::new();
        if let Some(why) = &report.structure_error {
            warnings.push(format!(
                "no structure for {} (loops and inlined calls): {why}",
                report.module
            ));
        }
        if let Some(why) = &report.unverified {
            warnings.push(format!("names from an unverified binary: {why}"));
        }
        if let Some(why) = &report.debug_info_refused {
            warnings.push(format!(
                "no file or line for {} (names from its symbol table): {why}",
                report.module
            ));
        }
        if let Some(why) = &report.unresolved {
            warnings.push(format!(
                "no symbols for {} ({} of {} files): {why}; addresses shown as [0x...] ({hint} \
                 or PROFCODEC_BINARY_PATH finds moved binaries)",
                report.module,
                report.files - report.resolved,
                report.files
            ));
        }
        warnings
    }

    /// The search path: [`resolving`]'s folders on this thread, then [`set_binary_path`]'s,
    /// then `PROFCODEC_BINARY_PATH`'s.
    pub fn search() -> SearchPath {
        let mut first = LOCAL_PATH.with(|p| p.borrow().clone());
        first.extend(BINARY_PATH.read().map(|p| p.clone()).unwrap_or_default());
        SearchPath::new(first).with(SearchPath::from_env().dirs().to_vec())
    }

    /// Runs `convert` (a [`to_profile`](crate::to_profile) on this thread) with binaries
    /// searched in `dirs` first, and returns what became of each load module rather than
    /// giving it to the reporter: a library front end (the Python package's `binary_path`)
    /// searches per call, not process-wide as [`set_binary_path`] does.
    pub fn resolving<T>(dirs: Vec<PathBuf>, convert: impl FnOnce() -> T) -> (T, Vec<ModuleReport>) {
        /// Puts back the folders of an enclosing call, even when `convert` unwinds.
        struct Restore(Vec<PathBuf>);
        impl Drop for Restore {
            fn drop(&mut self) {
                let before = std::mem::take(&mut self.0);
                LOCAL_PATH.with(|p| p.replace(before));
            }
        }
        let _restore = Restore(LOCAL_PATH.with(|p| p.replace(dirs)));
        deferred(convert)
    }

    thread_local! {
        /// The folders of [`resolving`] on this thread, while it runs.
        static LOCAL_PATH: std::cell::RefCell<Vec<PathBuf>> =
            const { std::cell::RefCell::new(Vec::new()) };
        /// The reports kept by [`deferred`] on this thread, while it runs.
        static DEFERRED: std::cell::RefCell<Option<Vec<ModuleReport>>> =
            const { std::cell::RefCell::new(None) };
    }

    /// Runs `convert` with the reports of its conversions kept rather than given to the
    /// reporter, and returns them: a merge converts inputs on several threads and has them
    /// [`report`]ed in input order.
    pub(crate) fn deferred<T>(convert: impl FnOnce() -> T) -> (T, Vec<ModuleReport>) {
        DEFERRED.with(|d| d.replace(Some(Vec::new())));
        let result = convert();
        let kept = DEFERRED.with(|d| d.take()).unwrap_or_default();
        (result, kept)
    }

    pub(crate) fn report(reports: &[ModuleReport]) {
        let kept = DEFERRED.with(|d| match d.borrow_mut().as_mut() {
            Some(kept) => {
                kept.extend_from_slice(reports);
                true
            }
            None => false,
        });
        if kept {
            return;
        }
        if let Ok(r) = REPORTER.read()
            && let Some(r) = r.as_ref()
        {
            reports.iter().for_each(r);
        }
    }

    /// A measurement folder's profile, symbolized.
    pub(crate) fn folder_profile(
        folder: &profcodec_hpcrun::MeasurementFolder,
    ) -> Result<profcodec_profile::Profile, profcodec_hpcrun::ProfileError> {
        let (profile, reports) = folder.to_profile_with_symbols(search())?;
        report(&reports);
        Ok(profile)
    }
}

#[cfg(feature = "nytprof")]
fn nytprof(input: &Opened, options: &ConvertOptions) -> Result<Profile, ReadError> {
    nytprof_with_sources(input, false, options).map(|(profile, _)| profile)
}

/// The profile of a NYTProf input as `options` say and, when `sources`, the source it saved.
#[cfg(feature = "nytprof")]
fn nytprof_with_sources(
    input: &Opened,
    sources: bool,
    options: &ConvertOptions,
) -> Result<(Profile, SavedSources), ReadError> {
    use profcodec_nytprof::{ModelOptions, Profile as Nyt, pynytprof};
    let bytes = input.bytes();
    if pynytprof::detect(bytes) {
        let py = pynytprof::parse(bytes)?;
        let profile = pynytprof::to_profile(&py)
            .to_profile(None)
            .map_err(model_error)?;
        return Ok((profile, Vec::new()));
    }
    // One pass: the model as Devel::NYTProf::Data builds it (evals collapsed) and the call
    // paths nytprofcalls prints, from the same records; the program's source only when asked.
    let flat_only = options.leaves_out_call_tree(input.format());
    let model = ModelOptions::default()
        .keep_source(sources)
        .second_thread(options.second_thread);
    let (profile, calls, report, error) = if flat_only {
        let (profile, report, error) = Nyt::from_bytes_report(bytes, model);
        (profile, None, report, error)
    } else {
        let (profile, calls, report, error) = Nyt::from_bytes_with_call_paths(bytes, model);
        (profile, Some(calls), report, error)
    };
    if let Some(e) = error {
        return Err(ReadError::invalid(report.error_message(&e), e.offset()));
    }
    let saved = if sources {
        profile.saved_source_lines()
    } else {
        Vec::new()
    };
    Ok((
        match &calls {
            Some(calls) => profile.to_profile(Some(calls)),
            None => profile.to_flat_profile(options.flat_lines),
        }
        .map_err(model_error)?,
        saved,
    ))
}

#[cfg(feature = "easyprofiler")]
fn easyprofiler(input: &Opened, spans: bool) -> Result<Profile, ReadError> {
    // Tolerant, as the reader's own tree: a capture the C++ reader would refuse for a counter
    // or its depth still has its blocks. Walked from the file; without spans, memory grows
    // with the distinct call paths, not the blocks.
    let view = profcodec_easyprofiler::parse(input.bytes())?;
    let walk = view.walk()?;
    let options = profcodec_easyprofiler::ProfileOptions::new().spans(spans);
    walk.to_profile_with(options).map_err(model_error)
}

#[cfg(feature = "statprofiler")]
fn statprofiler(input: &Opened) -> Result<Profile, ReadError> {
    use profcodec_statprofiler::ProfileConverter;
    let mut converter = ProfileConverter::new();
    let invalid = |e: profcodec_statprofiler::ProfileError| {
        let offset = e.offset();
        ReadError::invalid(e, offset)
    };
    match statprofiler_session(input)? {
        None => converter.add_file(input.bytes()).map_err(invalid)?,
        Some(processes) => {
            // One file open at a time, as the input was opened (mapped when large): memory
            // holds the model and one file, however many files the session has.
            for process in &processes {
                for file in &process.files {
                    let member = input.open_member(&file.path)?;
                    converter
                        .add_file(member.bytes())
                        .map_err(|e| invalid(e).in_file(&file.path))?;
                }
            }
        }
    }
    Ok(converter.finish())
}

/// The session of a Devel::StatProfiler input (a folder or a template prefix), `None` for one
/// file, standard input included
/// ([`session_of_input`](profcodec_statprofiler::session::session_of_input)), with its errors
/// as [`ReadError`]s.
#[cfg(feature = "statprofiler")]
pub fn statprofiler_session(
    input: &Opened,
) -> Result<Option<Vec<profcodec_statprofiler::session::Process>>, ReadError> {
    use profcodec_statprofiler::session::{SessionError, session_of_input};
    session_of_input(input.path(), input.bytes()).map_err(|e| match &e {
        SessionError::Invalid { source, .. } => {
            let offset = source.offset();
            ReadError::invalid(e, offset)
        }
        _ => ReadError::invalid(e, None),
    })
}

#[cfg(all(test, feature = "hpctoolkit"))]
mod tests {
    use super::*;

    /// Each synthetic thread profile stores more than one value: a budget below the total reads
    /// the summary alone.
    #[test]
    fn hpctoolkit_reads_the_summary_only_above_the_value_budget() {
        use profcodec_hpctoolkit::write::synthetic::{Synthetic, SyntheticConfig};
        let dir = tempfile::tempdir().expect("tempdir");
        let config = SyntheticConfig {
            profiles: 3,
            contexts: 20,
            trace_elems: 0,
            ..SyntheticConfig::default()
        };
        Synthetic::new(config)
            .write_dir(dir.path(), 1 << 20)
            .expect("write");
        let db = profcodec_hpctoolkit::Database::open(dir.path()).expect("open");
        let profiles = db.profile().expect("profile.db");
        let values: u64 = profiles
            .profiles()
            .map(|p| p.expect("profile"))
            .filter(|p| !p.is_summary())
            .map(|p| p.values.len() as u64)
            .sum();
        for (max, contexts) in [(values, 4), (values - 1, 1)] {
            let options = hpctoolkit_profile_options(Some(&profiles), max).expect("options");
            let model = db.to_profile(&options).expect("model");
            assert_eq!(model.contexts().len(), contexts, "budget {max}");
        }
    }
}
