//! `profcodec convert --to perfetto|chrome`: timelines (EasyProfiler captures, HPCToolkit
//! trace.db, hpcrun .hpctrace) as traces, through `profcodec::timeline`.

use std::path::Path;

use profcodec::timeline::{Format, TraceInput, write_trace};

use crate::Failure;
use crate::OpError;

use super::{ConvertArgs, Target};

/// The time window of the timeline conversions (`--to perfetto`, `--to chrome`); their
/// threads, ranks and depth are the filter flags every target shares.
#[derive(Debug, clap::Args)]
pub(crate) struct TimelineArgs {
    /// Timelines: start of the time window, in nanoseconds on the trace's own clock (as `dump`
    /// prints the timestamps: since the epoch for HPCToolkit and hpcrun, EasyProfiler's time
    /// after the tick conversion); what spans it begins at it.
    #[arg(long, value_name = "NS")]
    pub(crate) from: Option<u64>,
    /// Timelines: end of the time window, in nanoseconds like --from; what spans it ends at it.
    #[arg(long, value_name = "NS")]
    pub(crate) until: Option<u64>,
}

/// Runs `convert --to perfetto|chrome`.
/// `args.inputs` are expanded, `given` the inputs as given, `output` checked against them
/// (`None` with --split, or for standard output).
pub(crate) fn run(
    args: &ConvertArgs,
    given: &[std::path::PathBuf],
    output: Option<profcodec::output::CheckedOutput>,
) -> Result<(), Failure> {
    let format = match args.to {
        Target::Chrome => Format::Chrome,
        _ => Format::Perfetto,
    };
    let t = &args.timeline;
    let mut filter = args.filter.timeline_filter();
    filter.from = t.from;
    filter.until = t.until;
    if let (Some(from), Some(until)) = (t.from, t.until)
        && from > until
    {
        return Err(Failure {
            status: 2,
            message: format!("--from {from} is after --until {until}"),
        });
    }
    // A trace's size follows its samples times the depth of their call paths, which the
    // input's size does not bound: the output stops at the budget instead.
    let budget = |inputs: &[&Path]| {
        args.max_output.unwrap_or_else(|| {
            profcodec_export::default_output_budget(profcodec_export::input_bytes(inputs))
        })
    };
    let convert = |inputs: &[&Path], out: &mut dyn std::io::Write| -> Result<(), OpError> {
        let budgeted = profcodec_export::BudgetWriter::new(out, budget(inputs));
        let traced: Vec<TraceInput<'_>> = inputs.iter().map(|p| TraceInput::Path(p)).collect();
        // A filter that kept nothing fails before the trace is finished: no file is placed.
        write_trace(budgeted, format, filter.clone(), &traced).map_err(|e| match e {
            profcodec::timeline::Error::NoMatch(e) => {
                OpError::Usage(crate::filter::no_match(inputs, None, &e).message)
            }
            e => failure(&e),
        })?;
        Ok(())
    };
    if args.split {
        for (input, output) in super::split_outputs(args, given)? {
            let watch = super::Watch::new(&[&input]);
            super::write_output(Some(output), &watch, |out| convert(&[&input], out))?;
        }
        return Ok(());
    }
    let inputs: Vec<&Path> = args.inputs.iter().map(|p| p.as_path()).collect();
    let watch = super::Watch::new(&inputs);
    super::write_output(output, &watch, |out| convert(&inputs, out))
}

/// A conversion error as the CLI reports it: damaged or unreadable input is invalid (exit 1),
/// an input that is no timeline a usage error (exit 2).
fn failure(e: &profcodec::timeline::Error) -> OpError {
    use profcodec::timeline::Error;
    match e {
        Error::NotATimeline { .. } => OpError::Usage(e.to_string()),
        Error::Write(io) => match profcodec_export::over_budget(io) {
            Some(over) => OpError::Usage(format!(
                "the trace would be larger than its budget of {} bytes (by default 100 times \
                 the inputs' size plus 64 MiB); nothing was written; --max-output SIZE (or \
                 unlimited) allows more, --depth or --from/--until make it smaller",
                over.budget
            )),
            None => OpError::Io(std::io::Error::new(io.kind(), io.to_string())),
        },
        _ => OpError::invalid(e, None),
    }
}
