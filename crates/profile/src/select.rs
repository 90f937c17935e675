//! Which threads, ranks and processes a question is about: a [`Selection`], matched the same
//! way by every query, export and timeline, and the one error, [`NoMatch`], when it keeps
//! nothing, which names what the inputs do have.
//!
//! A thread is matched by its id in decimal or by its name, wherever the format names threads
//! (EasyProfiler does; HPCToolkit's and hpcrun's THREAD ids have no names). A rank is a number;
//! a context without a rank is rank 0, as a single-process run is. A process is its pid.
//! Summary contexts (HPCToolkit's summary profile, which sums every thread) are never chosen
//! by a selection.
//!
//! ```
//! use profcodec_profile::{Context, Frame, IdKind, Measured, ProfileBuilder, Selection, Unit};
//!
//! let mut b = ProfileBuilder::new();
//! let time = b.intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)?;
//! let main = b.intern_string("main")?;
//! let main = b.intern_frame(Frame::function(main))?;
//! let worker = b.intern_string("worker")?;
//! let t1 = b.intern_context(Context::new([(IdKind::Thread, 1)]).with_name(worker))?;
//! let t2 = b.intern_context(Context::new([(IdKind::Thread, 2)]))?;
//! b.add_sample(t1, [main], time, 5.0)?;
//! b.add_sample(t2, [main], time, 7.0)?;
//! let profile = b.build();
//!
//! let worker = Selection::new().threads(["worker"]);
//! assert_eq!(worker.select(&profile)?, [true, false]);
//! let missing = Selection::new().threads(["9"]).select(&profile).unwrap_err();
//! assert_eq!(
//!     missing.to_string(),
//!     "no thread matches '9'; the inputs have threads: 1 worker, 2"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::ids::ContextId;
use crate::model::{Context, IdKind, Profile};

/// The most values of each kind an error lists before it says how many there are in all.
const LISTED: usize = 12;

/// The most distinct threads (and ranks, and processes) [`Seen`] remembers: enough for any
/// error message, bounded whatever the inputs hold.
const REMEMBERED: usize = 4096;

/// Which threads, ranks and processes to keep (see the [module docs](self)). Each list keeps
/// everything when empty; a context is kept when it passes every list, and a list is passed
/// when some entry matches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Selection {
    /// Threads, each by its id in decimal or its name.
    pub threads: Vec<String>,
    /// MPI ranks (no rank is rank 0).
    pub ranks: Vec<u64>,
    /// Processes, by pid.
    pub processes: Vec<u64>,
}

/// The selection in words, as the tables' headings say it: `thread main, rank 0,1,
/// process 4711` (empty when it keeps everything).
impl std::fmt::Display for Selection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let numbers = |n: &[u64]| n.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        let parts = [
            ("thread", self.threads.join(",")),
            ("rank", numbers(&self.ranks)),
            ("process", numbers(&self.processes)),
        ];
        let mut first = true;
        for (kind, list) in parts.iter().filter(|(_, list)| !list.is_empty()) {
            if !first {
                f.write_str(", ")?;
            }
            first = false;
            write!(f, "{kind} {list}")?;
        }
        Ok(())
    }
}

impl Selection {
    /// Keeps everything.
    pub fn new() -> Selection {
        Selection::default()
    }

    /// This selection keeping only these threads (ids or names).
    pub fn threads<S: Into<String>>(mut self, threads: impl IntoIterator<Item = S>) -> Selection {
        self.threads = threads.into_iter().map(Into::into).collect();
        self
    }

    /// This selection keeping only these ranks.
    pub fn ranks(mut self, ranks: impl IntoIterator<Item = u64>) -> Selection {
        self.ranks = ranks.into_iter().collect();
        self
    }

    /// This selection keeping only these processes.
    pub fn processes(mut self, processes: impl IntoIterator<Item = u64>) -> Selection {
        self.processes = processes.into_iter().collect();
        self
    }

    /// Whether the selection keeps everything (every list is empty).
    pub fn keeps_all(&self) -> bool {
        self.threads.is_empty() && self.ranks.is_empty() && self.processes.is_empty()
    }

    /// Whether a thread with this id and name (either may be unknown) is kept.
    pub fn keeps_thread(&self, id: Option<u64>, name: Option<&str>) -> bool {
        keeps_thread(&self.threads, id, name)
    }

    /// Whether the tracks of `rank` (`None`: no rank, which is rank 0) are kept.
    pub fn keeps_rank(&self, rank: Option<u64>) -> bool {
        keeps_rank(&self.ranks, rank)
    }

    /// Whether process `pid` (`None`: unknown) is kept.
    pub fn keeps_process(&self, pid: Option<u64>) -> bool {
        self.processes.is_empty() || pid.is_some_and(|p| self.processes.contains(&p))
    }

    /// Whether `context`, a context of `profile`, is kept: never a summary; when the
    /// selection keeps all, every other context.
    pub fn keeps_context(&self, profile: &Profile, context: &Context) -> bool {
        let name = context.name.map(|s| profile.string(s));
        !context.summary
            && self.keeps_thread(context.id(IdKind::Thread), name)
            && self.keeps_rank(context.id(IdKind::Rank))
            && self.keeps_process(context.id(IdKind::Process))
    }

    /// The contexts of `profile` this selection keeps, as one flag per context (indexed by
    /// [`ContextId::index`]); [`NoMatch`] when it keeps none although the profile has contexts
    /// that are no summary, or when it asks for threads, ranks or processes that no context
    /// has.
    pub fn select(&self, profile: &Profile) -> Result<Vec<bool>, NoMatch> {
        let flags: Vec<bool> = profile
            .contexts()
            .map(|(_, c)| self.keeps_context(profile, c))
            .collect();
        if flags.contains(&true) || self.keeps_all() {
            return Ok(flags);
        }
        let mut seen = Seen::new();
        for (_, c) in profile.contexts().filter(|(_, c)| !c.summary) {
            seen.add(
                c.id(IdKind::Rank),
                c.id(IdKind::Process),
                c.id(IdKind::Thread),
                c.name.map(|s| profile.string(s)),
            );
        }
        Err(seen.no_match(self))
    }

    /// The contexts of `profile` this selection keeps ([`Selection::select`]), as ids.
    pub fn context_ids(&self, profile: &Profile) -> Result<Vec<ContextId>, NoMatch> {
        let flags = self.select(profile)?;
        Ok(profile
            .contexts()
            .filter(|(id, _)| flags[id.index()])
            .map(|(id, _)| id)
            .collect())
    }
}

/// Whether some entry of `wanted` (all when empty) is the thread's id in decimal or its name.
pub(crate) fn keeps_thread(wanted: &[String], id: Option<u64>, name: Option<&str>) -> bool {
    wanted.is_empty()
        || wanted.iter().any(|t| {
            id.is_some_and(|id| t.trim().parse::<u64>() == Ok(id)) || name.is_some_and(|n| n == t)
        })
}

/// Whether `rank` (`None`: rank 0) is one of `wanted` (all when empty).
pub(crate) fn keeps_rank(wanted: &[u64], rank: Option<u64>) -> bool {
    wanted.is_empty() || wanted.contains(&rank.unwrap_or(0))
}

/// The threads, ranks and processes that inputs hold, gathered while they are read (a
/// timeline's converters report each thread they meet), for the [`NoMatch`] that says what a
/// selection could have matched. Bounded: it remembers at most a few thousand of each and
/// counts the rest.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seen {
    threads: BTreeSet<(Option<u64>, Option<String>)>,
    ranks: BTreeSet<u64>,
    processes: BTreeSet<u64>,
    /// Whether some value was not remembered, past [`REMEMBERED`].
    more: bool,
}

impl Seen {
    /// Nothing seen yet.
    pub fn new() -> Seen {
        Seen::default()
    }

    /// Notes a thread (or a context: any of its parts may be unknown). A thread with neither
    /// id nor name is no thread; a missing rank is rank 0.
    pub fn add(
        &mut self,
        rank: Option<u64>,
        process: Option<u64>,
        thread: Option<u64>,
        name: Option<&str>,
    ) {
        let name = name.filter(|n| !n.is_empty());
        if thread.is_some() || name.is_some() {
            let key = (thread, name.map(str::to_owned));
            if self.threads.len() < REMEMBERED {
                self.threads.insert(key);
            } else {
                self.more |= !self.threads.contains(&key);
            }
        }
        let mut remember = |set: &mut BTreeSet<u64>, value: u64| {
            if set.len() < REMEMBERED {
                set.insert(value);
            } else {
                self.more |= !set.contains(&value);
            }
        };
        remember(&mut self.ranks, rank.unwrap_or(0));
        if let Some(pid) = process {
            remember(&mut self.processes, pid);
        }
    }

    /// The error of `selection` keeping nothing of what was seen: which of its lists matches
    /// nothing (or that they match nothing together), and what the inputs have instead.
    pub fn no_match(&self, selection: &Selection) -> NoMatch {
        let quoted = |values: &[String]| -> String {
            let quoted: Vec<String> = values.iter().map(|v| format!("'{v}'")).collect();
            quoted.join(" or ")
        };
        let numbers = |values: &[u64]| -> String {
            let words: Vec<String> = values.iter().map(u64::to_string).collect();
            words.join(" or ")
        };
        let any_thread = self
            .threads
            .iter()
            .any(|(id, name)| selection.keeps_thread(*id, name.as_deref()));
        let any_rank = self.ranks.iter().any(|&r| selection.keeps_rank(Some(r)));
        let any_process = self
            .processes
            .iter()
            .any(|&p| selection.keeps_process(Some(p)));
        let (asked, kinds): (String, Vec<&str>) = if !selection.threads.is_empty() && !any_thread {
            (
                format!("no thread matches {}", quoted(&selection.threads)),
                vec!["thread"],
            )
        } else if !selection.ranks.is_empty() && !any_rank {
            (
                format!("no rank matches {}", numbers(&selection.ranks)),
                vec!["rank"],
            )
        } else if !selection.processes.is_empty() && !any_process {
            (
                format!("no process matches {}", numbers(&selection.processes)),
                vec!["process"],
            )
        } else {
            // Each list matches something, but no thread passes them all.
            let mut parts = Vec::new();
            let mut kinds = Vec::new();
            if !selection.threads.is_empty() {
                parts.push(format!("thread {}", quoted(&selection.threads)));
                kinds.push("thread");
            }
            if !selection.ranks.is_empty() {
                parts.push(format!("rank {}", numbers(&selection.ranks)));
                kinds.push("rank");
            }
            if !selection.processes.is_empty() {
                parts.push(format!("process {}", numbers(&selection.processes)));
                kinds.push("process");
            }
            (format!("nothing is {}", parts.join(" and ")), kinds)
        };
        let mut message = asked;
        for (i, kind) in kinds.into_iter().enumerate() {
            let (plural, listed, count): (&str, Vec<String>, usize) = match kind {
                "thread" => (
                    "threads",
                    self.threads
                        .iter()
                        .take(LISTED)
                        .map(|(id, name)| match (id, name) {
                            (Some(id), Some(name)) => format!("{id} {name}"),
                            (Some(id), None) => id.to_string(),
                            (None, name) => name.clone().unwrap_or_default(),
                        })
                        .collect(),
                    self.threads.len(),
                ),
                "rank" => (
                    "ranks",
                    self.ranks.iter().take(LISTED).map(u64::to_string).collect(),
                    self.ranks.len(),
                ),
                _ => (
                    "processes",
                    self.processes
                        .iter()
                        .take(LISTED)
                        .map(u64::to_string)
                        .collect(),
                    self.processes.len(),
                ),
            };
            message.push_str(if i == 0 { "; " } else { "; and " });
            if listed.is_empty() {
                let _ = write!(message, "the inputs record no {plural}");
                continue;
            }
            let _ = write!(message, "the inputs have {plural}: {}", listed.join(", "));
            if count > listed.len() || self.more {
                let over = if self.more { "over " } else { "" };
                let _ = write!(message, ", … ({over}{count} in all)");
            }
        }
        NoMatch { message }
    }
}

/// A [`Selection`] that keeps nothing of its inputs: the message says which of its lists
/// matches nothing and lists (a bounded number of) the threads, ranks or processes the inputs
/// have, for example `no thread matches 'Worker 9'; the inputs have threads: 1 main, 2 Worker
/// 1`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct NoMatch {
    message: String,
}

impl Profile {
    /// This profile with only the contexts `selection` keeps ([`Selection::select`],
    /// [`Profile::retain_contexts`]): what every query and writer then shows is the selection.
    /// Nothing changes when it keeps everything; [`NoMatch`] when it keeps nothing.
    pub fn keep_selected(&mut self, selection: &Selection) -> Result<(), NoMatch> {
        if selection.keeps_all() {
            return Ok(());
        }
        let keep = selection.select(self)?;
        self.retain_contexts(&keep);
        Ok(())
    }

    /// This profile with only the contexts flagged in `keep` (one flag per context, indexed
    /// by [`ContextId::index`]; a missing flag drops the context): the others' values, call
    /// edge values and spans are dropped and the kept contexts renumbered in order. The call
    /// tree, frames and value types stay whole, so ids other than contexts' keep their meaning.
    /// With a [`Selection`]'s flags, what every writer shows is that selection.
    pub fn retain_contexts(&mut self, keep: &[bool]) {
        let mut new_ids = Vec::with_capacity(self.contexts.len());
        let mut next = 0u32;
        for i in 0..self.contexts.len() {
            if keep.get(i).copied().unwrap_or(false) {
                new_ids.push(Some(ContextId(next)));
                next += 1;
            } else {
                new_ids.push(None);
            }
        }
        let map = |id: ContextId| new_ids[id.index()];
        let mut index = 0;
        self.contexts.retain(|_| {
            index += 1;
            new_ids[index - 1].is_some()
        });
        self.node_values
            .retain_mut(|column| match map(column.context()) {
                Some(id) => {
                    column.set_context(id);
                    true
                }
                None => false,
            });
        self.flat_values.retain_mut(|v| match map(v.context) {
            Some(id) => {
                v.context = id;
                true
            }
            None => false,
        });
        self.edge_values.retain_mut(|v| match map(v.context) {
            Some(id) => {
                v.context = id;
                true
            }
            None => false,
        });
        self.spans.retain_mut(|s| match map(s.context) {
            Some(id) => {
                s.context = id;
                true
            }
            None => false,
        });
    }
}
