//! `profcodec report`: the arguments, and the report of `profcodec::report` under a progress
//! bar; its errors are mapped as the inspection verbs' are.

use std::path::PathBuf;

use profcodec::report::{Input, Options, SourceRoot, Step, report_filtered};
use profcodec::terminal::escape_display;
use profcodec_cli::failure::{Failure, say};

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
    /// The most source files given a page of their own (those with the most time); by default
    /// every file with values per line, within --max-output.
    #[arg(long)]
    pub(crate) source_files: Option<usize>,
    /// Open the report's index.html in the browser (xdg-open, or open on macOS) once written.
    #[arg(long)]
    pub(crate) open: bool,
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
pub(crate) fn run(mut args: ReportArgs) -> Result<(), Failure> {
    crate::top::use_binary_path(&args.binary_path);
    // The output is checked against the inputs as given before any is read, as convert's;
    // then a folder of profiles stands for its profiles.
    let given: Vec<PathBuf> = args.inputs.iter().chain(&args.base).cloned().collect();
    let checked = crate::convert::checked(
        profcodec::output::OutputPath::folder(&args.output)
            .overwrite(profcodec::output::Overwrite::from_force(args.force)),
        &given,
    )?;
    args.inputs = crate::expand_inputs(&args.inputs)?;
    let all: Vec<PathBuf> = args.inputs.iter().chain(&args.base).cloned().collect();
    let mut options = Options::new().min_width(args.min_width);
    options.functions = args.functions.max(1);
    if let Some(files) = args.source_files {
        options.source_files = files;
    }
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
                // File names are escaped for the terminal, as every message's.
                Step::Reading(path) => {
                    bar.set_message(format!("reading {}", escape_display(&path.display())));
                }
                Step::Timeline(path) => {
                    bar.set_message(format!("timeline of {}", escape_display(&path.display())));
                }
                Step::Read(_) => bar.inc(1),
                _ => bar.set_message(format!(
                    "writing {}",
                    escape_display(&args.output.display())
                )),
            }
        });
    bar.finish_and_clear();
    let written = written?;
    // What the page embeds besides the inputs, so that nothing is shared unseen.
    for source in &written.sources {
        say(format_args!("profcodec: {source}"));
    }
    // The page to open, on standard output so that a script can take it.
    let index = args.output.join("index.html");
    println!("{}", profcodec::terminal::escape_display(&index.display()));
    if args.open {
        open_in_browser(&index);
    }
    Ok(())
}

/// Opens `page` in the user's browser, saying so when no opener is found.
fn open_in_browser(page: &std::path::Path) {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    // The browser outlives this program: it is started, not waited for.
    if let Err(e) = std::process::Command::new(opener)
        .arg(page)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        say(format_args!(
            "profcodec: the report could not be opened with {opener}: {e}"
        ));
    }
}
