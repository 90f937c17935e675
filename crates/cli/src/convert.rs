//! `profcodec convert`: a profile into a viewer's format (through the profile model and
//! `profcodec-export`), or a timeline into a trace (`timeline`).

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::Failure;
use crate::OpError;

pub(crate) mod timeline;
mod watch;

pub(crate) use watch::Watch;

/// What `convert --to` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Target {
    /// Folded stacks (`frame;frame;frame value` lines) for flame graphs (inferno, flamegraph.pl).
    Folded,
    /// pprof's gzipped profile.proto (`go tool pprof`, Pyroscope, Polar Signals).
    Pprof,
    /// speedscope's JSON file format.
    Speedscope,
    /// callgrind's format (KCachegrind, `callgrind_annotate`).
    Callgrind,
    /// The Firefox Profiler's processed format (EasyProfiler's blocks as markers).
    Firefox,
    /// A Perfetto protobuf trace (timelines: EasyProfiler, HPCToolkit trace.db, .hpctrace).
    Perfetto,
    /// Chrome's trace event JSON (timelines, as `perfetto`).
    Chrome,
}

/// Arguments of `profcodec convert`.
#[derive(Debug, clap::Args)]
pub(crate) struct ConvertArgs {
    /// The output format.
    #[arg(long, value_enum)]
    pub(crate) to: Target,
    /// The output file (with --split, a folder); standard output when absent.
    #[arg(short, long)]
    pub(crate) output: Option<PathBuf>,
    /// One output per input, into the folder named by --output, instead of one merged output.
    #[arg(long, requires = "output")]
    pub(crate) split: bool,
    /// Replace an existing output whole.
    #[arg(long)]
    pub(crate) force: bool,
    /// The metric (value type) written: folded stacks and speedscope's sampled profiles carry
    /// one, by default the format's main time metric; callgrind writes every metric unless this
    /// names one.
    #[arg(long)]
    pub(crate) metric: Option<String>,
    /// The most bytes folded stacks, speedscope, pprof and the timelines may write (their
    /// outputs can grow with the square of a call chain's depth): a size such as 500M or 2G, or
    /// `unlimited`; by default 100 times the inputs' size plus 64 MiB. An output projected over
    /// it is refused and nothing is written (speedscope first writes call trees evented); a
    /// timeline stops when it reaches it, and nothing is written.
    #[arg(long, value_name = "SIZE", value_parser = profcodec_export::parse_size)]
    pub(crate) max_output: Option<u64>,
    /// Which threads and ranks are written, for every target.
    #[command(flatten)]
    pub(crate) filter: crate::filter::FilterArgs,
    /// The time window of timelines (perfetto, chrome).
    #[command(flatten)]
    pub(crate) timeline: timeline::TimelineArgs,
    /// A folder where the binaries of hpcrun measurements are searched by file name (as in top).
    #[arg(long, value_name = "DIR")]
    pub(crate) binary_path: Vec<PathBuf>,
    #[arg(short, long, value_name = "N", default_value_t = 0, help = crate::top::JOBS)]
    pub(crate) jobs: usize,
    /// Inputs (files, database, measurement or session folders, or a folder of profiles that
    /// stands for the profiles in it); several are merged; `-` reads standard input.
    #[arg(required = true)]
    pub(crate) inputs: Vec<PathBuf>,
}

/// Runs `profcodec convert`.
pub(crate) fn run(mut args: ConvertArgs) -> Result<(), Failure> {
    crate::top::use_binary_path(&args.binary_path);
    // The output is checked against the inputs as given before any is read (with --split,
    // each output once the expanded inputs name it); then a folder of profiles stands for
    // its profiles.
    let given = std::mem::take(&mut args.inputs);
    let output = match args.split {
        true => None,
        false => check_output(args.output.as_deref(), args.force, &given)?,
    };
    args.inputs = crate::expand_inputs(&given)?;
    let args = &args;
    if matches!(args.to, Target::Perfetto | Target::Chrome) {
        return timeline::run(args, &given, output);
    }
    let to = clap::ValueEnum::to_possible_value(&args.to);
    let to = to.as_ref().map_or("", |v| v.get_name());
    args.filter.refuse_depth(&format!("--to {to}"))?;
    let mut options = profcodec_export::ExportOptions::default();
    options.metric.clone_from(&args.metric);
    options.max_output = Some(args.max_output.unwrap_or_else(|| {
        profcodec_export::default_output_budget(profcodec_export::input_bytes(&args.inputs))
    }));
    let merge = profcodec::MergeOptions::new()
        .spans(args.to.wants_spans())
        .jobs(args.jobs);
    if args.split {
        for (input, output) in split_outputs(args, &given)? {
            let watch = Watch::new(&[&input]);
            let mut one = profcodec::merged_profile(&[&input], &merge)?;
            args.filter.apply(&mut one, &[&input])?;
            let options = with_names(&options, one.format());
            write_output(Some(output), &watch, |out| {
                export(&one.profile, args.to, &options, out)
            })?;
        }
        return Ok(());
    }
    let watch = Watch::new(&args.inputs);
    let mut merged = profcodec::merged_profile(&args.inputs, &merge)?;
    args.filter.apply(&mut merged, &args.inputs)?;
    // Folded names follow the source tool when every input comes from the same one.
    let options = with_names(&options, merged.format());
    write_output(output, &watch, |out| {
        export(&merged.profile, args.to, &options, out)
    })
}

/// `options` with the folded frame names of `format`'s tools (none for inputs of several
/// formats).
fn with_names(
    options: &profcodec_export::ExportOptions,
    format: Option<profcodec::Format>,
) -> profcodec_export::ExportOptions {
    let mut options = options.clone();
    options.folded_names = format.and_then(profcodec::folded_frame_namer);
    options
}

impl Target {
    /// The exporter's target; `None` for the timelines, which do not go through the model.
    fn model_target(self) -> Option<profcodec_export::Target> {
        use profcodec_export::Target as T;
        match self {
            Target::Folded => Some(T::Folded),
            Target::Pprof => Some(T::Pprof),
            Target::Speedscope => Some(T::Speedscope),
            Target::Callgrind => Some(T::Callgrind),
            Target::Firefox => Some(T::Firefox),
            Target::Perfetto | Target::Chrome => None,
        }
    }

    /// Whether the target shows timed spans (speedscope's evented profiles, the Firefox
    /// Profiler's markers).
    fn wants_spans(self) -> bool {
        self.model_target()
            .is_some_and(profcodec_export::Target::wants_spans)
    }
}

/// The outputs of `--split`, one file per input in the folder `--output` names (made when
/// missing), each checked against the output policy before any input is read. Names are the
/// inputs' file names with the target's extension; inputs of the same file name are told apart
/// by as many of their folders' names as it takes (`a-nytprof.out.folded`,
/// `b-nytprof.out.folded`: `profcodec::output::distinct_names`). `given` are the inputs as the
/// command line gives them ([`checked`]).
pub(crate) fn split_outputs(
    args: &ConvertArgs,
    given: &[PathBuf],
) -> Result<Vec<(PathBuf, profcodec::output::CheckedOutput)>, Failure> {
    let folder = args.output.as_deref().unwrap_or(Path::new("."));
    match std::fs::create_dir(folder) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && folder.is_dir() => {}
        Err(e) => {
            return Err(Failure {
                status: profcodec_cli::failure::OUTPUT_FAILED,
                message: format!("could not make the output folder {}: {e}", folder.display()),
            });
        }
    }
    let extension = std::ffi::OsString::from(format!(".{}", extension(args.to)));
    let names = profcodec::output::distinct_names(&args.inputs);
    let mut outputs = Vec::with_capacity(args.inputs.len());
    for (input, mut name) in args.inputs.iter().zip(names) {
        name.push(&extension);
        let checked = checked(
            profcodec::output::OutputPath::file(folder.join(name))
                .overwrite(profcodec::output::Overwrite::from_force(args.force)),
            given,
        )?;
        outputs.push((input.clone(), checked));
    }
    Ok(outputs)
}

/// The usual file extension of `to`.
pub(crate) fn extension(to: Target) -> &'static str {
    match to.model_target() {
        Some(target) => target.extension(),
        None if to == Target::Perfetto => "perfetto-trace",
        None => "json",
    }
}

fn export(
    profile: &profcodec_profile::Profile,
    to: Target,
    options: &profcodec_export::ExportOptions,
    out: &mut dyn Write,
) -> Result<(), OpError> {
    use profcodec_export as e;
    let Some(target) = to.model_target() else {
        unreachable!("timelines do not go through the model")
    };
    let result = target.write(profile, options, out);
    // Folded lines carry bare numbers: say what they count (NYTProf's are 10 MHz ticks).
    if result.is_ok()
        && to == Target::Folded
        && let Ok(words) = e::folded::values_in_words(profile, options)
    {
        profcodec_cli::failure::say(format_args!("profcodec: folded values: {words}"));
    }
    result.map_err(|err| match err {
        e::ExportError::Io(io) => OpError::Io(io),
        other => OpError::Usage(other.to_string()),
    })
}

/// Checks `output` (a file; standard output when `None`) as [`checked`] does: an existing file
/// is refused unless `force`, a folder always.
pub(crate) fn check_output(
    output: Option<&Path>,
    force: bool,
    given: &[PathBuf],
) -> Result<Option<profcodec::output::CheckedOutput>, Failure> {
    let Some(output) = output else {
        return Ok(None);
    };
    let spec = profcodec::output::OutputPath::file(output)
        .overwrite(profcodec::output::Overwrite::from_force(force));
    Ok(Some(checked(spec, given)?))
}

/// Checks the output `spec` against the output policy and against `given`, the inputs as the
/// command line gives them, before any input is read: an output that is an input, holds one,
/// or lies inside one is refused. A folder of profiles given as an input is checked as the
/// folder, not as the profiles it stands for: an output written into it would be one more of
/// its profiles, counted again by every later read. merge, convert and report check here.
pub(crate) fn checked(
    spec: profcodec::output::OutputPath,
    given: &[PathBuf],
) -> Result<profcodec::output::CheckedOutput, Failure> {
    let checked = spec.inputs(given).check()?;
    crate::note_stale_staging(&checked);
    Ok(checked)
}

/// Runs `write` into the checked `output` atomically (a staging sibling renamed into place
/// when complete), or into standard output when `output` is `None` (escaped for the terminal
/// when it is one, where a name from an input could drive it; the exact bytes into a pipe or a
/// file); its bytes are counted on
/// `watch`'s line, which says an output much larger than its inputs.
pub(crate) fn write_output(
    output: Option<profcodec::output::CheckedOutput>,
    watch: &Watch,
    write: impl FnOnce(&mut dyn Write) -> Result<(), OpError>,
) -> Result<(), Failure> {
    let watched = |out: &mut dyn Write| {
        let mut out = watch.writer(out);
        write(&mut out)?;
        out.flush()?;
        out.finish();
        Ok::<(), OpError>(())
    };
    let Some(output) = output else {
        let stdout = std::io::stdout();
        let terminal = std::io::IsTerminal::is_terminal(&stdout);
        let mut out = std::io::BufWriter::new(stdout.lock());
        let mut out = profcodec::terminal::EscapingWriter::lines_on_terminal(&mut out, terminal);
        watched(&mut out)?;
        out.finish()?;
        return Ok(());
    };
    output.write_file(watched)?;
    Ok(())
}
