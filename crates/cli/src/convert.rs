//! `profcodec convert`: a profile into a viewer's format (through the profile model and
//! `profcodec-export`), or a timeline into a trace (`timeline`).

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::Failure;
use crate::OpError;

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
    /// Inputs (files, database, measurement or session folders); several are merged; `-` reads
    /// standard input.
    #[arg(required = true)]
    pub(crate) inputs: Vec<PathBuf>,
}

/// Runs `profcodec convert`.
pub(crate) fn run(args: &ConvertArgs) -> Result<(), Failure> {
    crate::top::use_binary_path(&args.binary_path);
    if matches!(args.to, Target::Perfetto | Target::Chrome) {
        return timeline::run(args);
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
        for (input, output) in split_outputs(args)? {
            let mut one = profcodec::merged_profile(&[&input], &merge)?;
            args.filter.apply(&mut one, &[&input])?;
            let options = with_names(&options, one.format());
            write_output(Some(output), |out| {
                export(&one.profile, args.to, &options, out)
            })?;
        }
        return Ok(());
    }
    let output = check_output(args.output.as_deref(), args.force, &args.inputs)?;
    let mut merged = profcodec::merged_profile(&args.inputs, &merge)?;
    args.filter.apply(&mut merged, &args.inputs)?;
    // Folded names follow the source tool when every input comes from the same one.
    let options = with_names(&options, merged.format());
    write_output(output, |out| {
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
/// `b-nytprof.out.folded`), built from the raw names, never a lossy conversion.
pub(crate) fn split_outputs(
    args: &ConvertArgs,
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
    let names = unique_names(&args.inputs);
    let mut outputs = Vec::with_capacity(args.inputs.len());
    for (input, mut name) in args.inputs.iter().zip(names) {
        name.push(&extension);
        let checked = profcodec::output::OutputPath::file(folder.join(name))
            .overwrite(profcodec::output::Overwrite::from_force(args.force))
            .inputs(&args.inputs)
            .check()?;
        crate::note_stale_staging(&checked);
        outputs.push((input.clone(), checked));
    }
    Ok(outputs)
}

/// A distinct name for each of `inputs`: its file name, preceded by as many of its folders'
/// names (of its real path, joined by `-`) as make it differ from the others; the same file
/// named twice gets `-2`, `-3`... after its name.
fn unique_names(inputs: &[PathBuf]) -> Vec<std::ffi::OsString> {
    use std::collections::HashMap;
    use std::ffi::{OsStr, OsString};
    // Each input's path components, last first.
    let parts: Vec<Vec<OsString>> = inputs
        .iter()
        .map(|input| {
            let real = std::fs::canonicalize(input).unwrap_or_else(|_| input.clone());
            let mut parts: Vec<OsString> = real
                .components()
                .filter_map(|c| match c {
                    std::path::Component::Normal(p) => Some(p.to_os_string()),
                    _ => None,
                })
                .collect();
            parts.reverse();
            if parts.is_empty() {
                parts.push(OsString::from("profile"));
            }
            parts
        })
        .collect();
    let name = |parts: &[OsString], depth: usize| -> OsString {
        let mut name = OsString::new();
        for (i, part) in parts[..depth.min(parts.len())].iter().rev().enumerate() {
            if i > 0 {
                name.push("-");
            }
            name.push(part);
        }
        name
    };
    let mut depth = vec![1usize; inputs.len()];
    loop {
        let names: Vec<OsString> = parts.iter().zip(&depth).map(|(p, &d)| name(p, d)).collect();
        let mut seen: HashMap<&OsStr, Vec<usize>> = HashMap::new();
        for (i, n) in names.iter().enumerate() {
            seen.entry(n.as_os_str()).or_default().push(i);
        }
        let mut deeper = false;
        for clash in seen.values().filter(|v| v.len() > 1) {
            for &i in clash {
                // The same path twice is told apart by a number, not by its folders.
                let differs = clash.iter().any(|&j| parts[j] != parts[i]);
                if differs && depth[i] < parts[i].len() {
                    depth[i] += 1;
                    deeper = true;
                }
            }
        }
        if deeper {
            continue;
        }
        // What is still the same (the same file twice) is numbered.
        let mut count: HashMap<OsString, usize> = HashMap::new();
        return names
            .into_iter()
            .map(|mut n| {
                let k = count.entry(n.clone()).or_insert(0);
                *k += 1;
                if *k > 1 {
                    n.push(format!("-{k}"));
                }
                n
            })
            .collect();
    }
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
        eprintln!("profcodec: folded values: {words}");
    }
    result.map_err(|err| match err {
        e::ExportError::Io(io) => OpError::Io(io),
        other => OpError::Usage(other.to_string()),
    })
}

/// Checks `output` (a file; standard output when `None`) against the output policy, before any
/// input is read: an existing file is refused unless `force`, a folder always, and so is an
/// output that is one of `inputs`.
pub(crate) fn check_output(
    output: Option<&Path>,
    force: bool,
    inputs: &[PathBuf],
) -> Result<Option<profcodec::output::CheckedOutput>, Failure> {
    let Some(output) = output else {
        return Ok(None);
    };
    let checked = profcodec::output::OutputPath::file(output)
        .overwrite(profcodec::output::Overwrite::from_force(force))
        .inputs(inputs)
        .check()?;
    crate::note_stale_staging(&checked);
    Ok(Some(checked))
}

/// Runs `write` into the checked `output` atomically (a staging sibling renamed into place
/// when complete), or into standard output when `output` is `None`.
pub(crate) fn write_output(
    output: Option<profcodec::output::CheckedOutput>,
    write: impl FnOnce(&mut dyn Write) -> Result<(), OpError>,
) -> Result<(), Failure> {
    let Some(output) = output else {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        write(&mut out)?;
        out.flush()?;
        return Ok(());
    };
    output.write_file(write)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(inputs: &[&str]) -> Vec<String> {
        let inputs: Vec<PathBuf> = inputs.iter().map(PathBuf::from).collect();
        unique_names(&inputs)
            .into_iter()
            .map(|n| n.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn split_names_keep_the_path_that_tells_inputs_apart() {
        assert_eq!(
            names(&["/r/a/nytprof.out", "/r/b/x.out"]),
            ["nytprof.out", "x.out"]
        );
        assert_eq!(
            names(&["/r/a/nytprof.out", "/r/b/nytprof.out", "/r/c.out"]),
            ["a-nytprof.out", "b-nytprof.out", "c.out"]
        );
        assert_eq!(names(&["/x/a/t/p", "/y/a/t/p"]), ["x-a-t-p", "y-a-t-p"]);
        assert_eq!(names(&["/r/p", "/r/p"]), ["p", "p-2"]);
    }

    #[cfg(unix)]
    #[test]
    fn split_names_are_built_from_raw_names() {
        use std::os::unix::ffi::OsStrExt;
        let a = PathBuf::from(std::ffi::OsStr::from_bytes(b"/r/\xff/p"));
        let b = PathBuf::from(std::ffi::OsStr::from_bytes(b"/r/\xfe/p"));
        let names = unique_names(&[a, b]);
        assert_eq!(names[0].as_bytes(), b"\xff-p");
        assert_eq!(names[1].as_bytes(), b"\xfe-p");
    }
}
