//! `profcodec convert --to perfetto|chrome`: timelines (EasyProfiler captures, HPCToolkit
//! trace.db, hpcrun .hpctrace) as traces.

use crate::Failure;

use super::ConvertArgs;

/// Filters of the timeline conversions.
#[derive(Debug, clap::Args)]
pub(crate) struct TimelineArgs {}

/// Runs `convert --to perfetto|chrome`.
pub(crate) fn run(args: &ConvertArgs) -> Result<(), Failure> {
    let _ = args;
    Err(Failure {
        status: 2,
        message: "timeline conversions are not built yet".to_owned(),
    })
}
