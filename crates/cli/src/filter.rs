//! The filter flags, one definition for every subcommand that filters (`top`, `diff`,
//! `convert` to any target, `report`): a thread is its id or its name, a rank a number, each repeatable
//! or a comma list. The matching is the profile model's `Selection`; a filter that matches
//! nothing is a usage error (exit status 2) whose words list what the inputs have.

use std::path::Path;

use profcodec::timeline::Filter;
use profcodec_profile::Selection;

use crate::Failure;

/// `--thread`, `--rank` and `--depth`.
#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct FilterArgs {
    /// Only these threads, each by its id or, where the format names threads (EasyProfiler),
    /// its name; HPCToolkit's and hpcrun's THREAD ids. Repeat or separate with commas. A filter
    /// that matches nothing is an error (exit status 2) that lists the threads there are.
    #[arg(long, value_name = "ID|NAME", value_delimiter = ',')]
    pub(crate) thread: Vec<String>,
    /// Only these MPI ranks, all their threads (an input without ranks is rank 0). Repeat or
    /// separate with commas.
    #[arg(long, value_name = "RANK", value_delimiter = ',')]
    pub(crate) rank: Vec<u64>,
    /// Timelines (convert --to perfetto or chrome, the report's trace): the deepest nesting
    /// kept (1: top-level slices only). Refused where no timeline is written.
    #[arg(long, value_name = "LEVELS", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) depth: Option<u32>,
}

impl FilterArgs {
    /// The threads and ranks chosen, as the model's selection.
    pub(crate) fn selection(&self) -> Selection {
        Selection::new()
            .threads(self.thread.iter().cloned())
            .ranks(self.rank.iter().copied())
    }

    /// The timeline filter of these flags (no time window).
    pub(crate) fn timeline_filter(&self) -> Filter {
        let mut filter = Filter::new();
        filter.threads.clone_from(&self.thread);
        filter.ranks.clone_from(&self.rank);
        filter.depth = self.depth;
        filter
    }

    /// Refuses `--depth` where `what` writes no timeline.
    pub(crate) fn refuse_depth(&self, what: &str) -> Result<(), Failure> {
        match self.depth {
            Some(_) => Err(Failure::new(
                2,
                format!(
                    "--depth keeps the levels of a timeline's slices, and {what} writes no \
                     timeline (convert --to perfetto or chrome does)"
                ),
            )),
            None => Ok(()),
        }
    }

    /// Keeps of `merged` (read from `inputs`) only what these flags select.
    pub(crate) fn apply(
        &self,
        merged: &mut profcodec::Merged,
        inputs: &[impl AsRef<Path>],
    ) -> Result<(), Failure> {
        let format = merged.format();
        merged
            .profile
            .keep_selected(&self.selection())
            .map_err(|e| no_match(inputs, format, &e))
    }
}

/// A filter that matches nothing in `inputs` (of `format`, when all have the same): a usage
/// error that names the input, when one, and the format, so that "the inputs record no
/// threads" says whose.
pub(crate) fn no_match(
    inputs: &[impl AsRef<Path>],
    format: Option<profcodec::Format>,
    e: &dyn std::fmt::Display,
) -> Failure {
    let mut named = String::new();
    if let [one] = inputs {
        named = format!("{}: ", one.as_ref().display());
    }
    if let Some(format) = format {
        named.push_str(&format!("{format}: "));
    }
    Failure::new(2, format!("{named}{e}"))
}
