//! `profcodec report`: the arguments, and the report of `profcodec::report` under a progress
//! bar; its errors are mapped as the inspection verbs' are.

use std::path::PathBuf;

use profcodec::report::{Input, Options, SourceRoot, Step, report_filtered};
use profcodec_cli::failure::{Failure, note_stale_staging, say};

/// Arguments of `profcodec report`.
#[derive(Debug, clap::Args)]
pub(crate) struct ReportArgs {
    /// The report folder to make (its parent must exist); it holds index.html.
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// A base profile to compare with: a differential flame graph and the functions whose
    /// value changed most.
    #[arg(long)]
    pub(crate) base: Option<PathBuf>,
    /// Replace an existing report folder whole.
    #[arg(long)]
    pub(crate) force: bool,
    /// The main metric (value type): the flame graph's and the ordering's; by default the
    /// format's main time metric.
    #[arg(long)]
    pub(crate) metric: Option<String>,
    /// Leave out of the flame graph the frames narrower than this percentage of the total
    /// (flamegraph.pl's --minwidth), so that a page for a huge profile stays small.
    #[arg(long, value_name = "PERCENT", default_value_t = 0.1)]
    pub(crate) min_width: f64,
    /// The most bytes the report folder may take (its page, flame graphs and trace): a size
    /// such as 500M or 2G, or `unlimited`; by default 100 times the inputs' size plus 64 MiB,
    /// as for convert. A report projected over it is refused and nothing is written.
    #[arg(long, value_name = "SIZE", value_parser = profcodec_export::parse_size)]
    pub(crate) max_output: Option<u64>,
    /// The most functions per table.
    #[arg(long, default_value_t = 200)]
    pub(crate) functions: usize,
    /// The most source files shown line by line (those with the most time).
    #[arg(long, default_value_t = 10)]
    pub(crate) source_files: usize,
    /// Where source files are looked for: a folder, or FROM=TO to replace a recorded path
    /// prefix; may be given several times. Source files are read from disk only under these
    /// folders and each input's own folder, never under /proc, /sys or /dev, and only regular
    /// files of at most 16 MiB; stderr says which files the page embeds, and why others not.
    #[arg(long, value_name = "[FROM=]TO")]
    pub(crate) source_root: Vec<SourceRoot>,
    /// Which threads and ranks the page and its trace show (the base's too).
    #[command(flatten)]
    pub(crate) filter: crate::filter::FilterArgs,
    /// A folder where the binaries of hpcrun measurements are searched by file name (as in top).
    #[arg(long, value_name = "DIR")]
    pub(crate) binary_path: Vec<PathBuf>,
    /// Inputs (files, database, measurement or session folders, or a folder of profiles that
    /// stands for the profiles in it); several are merged.
    #[arg(required = true)]
    pub(crate) inputs: Vec<PathBuf>,
}

/// Runs `profcodec report`.
pub(crate) fn run(args: &ReportArgs) -> Result<(), Failure> {
    crate::top::use_binary_path(&args.binary_path);
    let all: Vec<PathBuf> = args.inputs.iter().chain(&args.base).cloned().collect();
    // The output is checked before any input is read, as convert checks it.
    let checked = profcodec::output::OutputPath::folder(&args.output)
        .overwrite(profcodec::output::Overwrite::from_force(args.force))
        .inputs(&all)
        .check()?;
    note_stale_staging(&checked);
    let mut options = Options::new().min_width(args.min_width);
    options.functions = args.functions.max(1);
    options.source_files = args.source_files;
    options.source_roots.clone_from(&args.source_root);
    options.metric.clone_from(&args.metric);
    options.max_output = args.max_output;
    let inputs: Vec<Input<'_>> = args.inputs.iter().map(|p| Input::Path(p)).collect();
    let base = args.base.as_deref().map(Input::Path);
    let bar = crate::progress(&all);
    let filter = args.filter.timeline_filter();
    let written =
        report_filtered::<crate::OpError>(&inputs, base, &options, &filter, checked, &mut |step| {
            match step {
                Step::Reading(path) => bar.set_message(format!("reading {}", path.display())),
                Step::Timeline(path) => bar.set_message(format!("timeline of {}", path.display())),
                Step::Read(_) => bar.inc(1),
                _ => bar.set_message(format!("writing {}", args.output.display())),
            }
        });
    bar.finish_and_clear();
    let written = written?;
    // What the page embeds besides the inputs, so that nothing is shared unseen.
    for source in &written.sources {
        say(format_args!("profcodec: {source}"));
    }
    Ok(())
}
