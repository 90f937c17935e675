//! `profcodec convert`: a profile into a viewer's format (through the profile model and
//! `profcodec-export`), or a timeline into a trace (`timeline`).

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::Failure;
use crate::ops::{self, OpError};

pub(crate) mod timeline;

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
    /// The most bytes folded stacks, speedscope and pprof may write (their outputs can grow
    /// with the square of a call chain's depth): a size such as 500M or 2G, or `unlimited`; by
    /// default 100 times the inputs' size plus 64 MiB. An output projected over it is refused
    /// and nothing is written (speedscope first writes call trees evented).
    #[arg(long, value_name = "SIZE", value_parser = profcodec_export::parse_size)]
    pub(crate) max_output: Option<u64>,
    /// Timeline filters (perfetto, chrome).
    #[command(flatten)]
    pub(crate) timeline: timeline::TimelineArgs,
    /// Inputs (files, database, measurement or session folders); several are merged.
    #[arg(required = true)]
    pub(crate) inputs: Vec<PathBuf>,
}

/// Runs `profcodec convert`.
pub(crate) fn run(args: &ConvertArgs) -> Result<(), Failure> {
    if matches!(args.to, Target::Perfetto | Target::Chrome) {
        return timeline::run(args);
    }
    let mut options = profcodec_export::ExportOptions::default();
    options.metric.clone_from(&args.metric);
    options.max_output = Some(args.max_output.unwrap_or_else(|| {
        profcodec_export::default_output_budget(profcodec_export::input_bytes(&args.inputs))
    }));
    let spans = args.to.wants_spans();
    if args.split {
        let folder = args.output.as_deref().unwrap_or(Path::new("."));
        for input in &args.inputs {
            let (profile, format) = load(input, spans)?;
            let options = with_names(&options, Some(format));
            let name = split_name(input, args.to);
            write_output(Some(&folder.join(name)), args.force, |out| {
                export(&profile, args.to, &options, out)
            })?;
        }
        return Ok(());
    }
    // Folded names follow the source tool when every input comes from the same one.
    let mut formats: Vec<profcodec::Format> = Vec::new();
    let profile = crate::merged_profile_with(&args.inputs, |input| {
        let (profile, format) = load(input, spans)?;
        formats.push(format);
        Ok(profile)
    })?;
    let same = formats.windows(2).all(|w| w[0] == w[1]);
    let options = with_names(&options, formats.first().copied().filter(|_| same));
    write_output(args.output.as_deref(), args.force, |out| {
        export(&profile, args.to, &options, out)
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

/// One input in the profile model (with spans when asked), and its format.
fn load(
    input: &Path,
    spans: bool,
) -> Result<(profcodec_profile::Profile, profcodec::Format), Failure> {
    crate::open_and(input, |opened| {
        let profile = if spans {
            profcodec::to_profile_with_spans(opened)?
        } else {
            crate::profile_with(ops::codec(opened.format()), opened)?
        };
        Ok((profile, opened.format()))
    })
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

/// The output file name of `input` under `--split`: its file name with the target's extension.
fn split_name(input: &Path, to: Target) -> String {
    let stem = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "profile".to_owned());
    format!("{stem}.{}", extension(to))
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
    result.map_err(|err| match err {
        e::ExportError::Io(io) => OpError::Io(io),
        other => OpError::Usage(other.to_string()),
    })
}

/// Runs `write` into `output` atomically (a staging sibling renamed into place when complete;
/// an existing file refused unless `force`), or into standard output when `output` is `None`.
pub(crate) fn write_output(
    output: Option<&Path>,
    force: bool,
    write: impl FnOnce(&mut dyn Write) -> Result<(), OpError>,
) -> Result<(), Failure> {
    let Some(output) = output else {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        write(&mut out)?;
        out.flush()?;
        return Ok(());
    };
    profcodec::output::write_file_atomically(output, ops::replace(force), write)?;
    Ok(())
}
