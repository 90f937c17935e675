//! Many inputs as one profile model, decoded on every core (feature `profile`).
//!
//! The runs of a test suite, one file per rank or per process: each input is opened and
//! converted ([`to_profile`](crate::to_profile)) on a thread of a rayon pool, and the profiles
//! are appended to one [`ProfileBuilder`] on the calling thread in input order, as they come.
//! Appending in input order, one after the other, is what makes the result the sequential
//! merge's to the bit: the builder numbers strings, frames, nodes and contexts in the order it
//! first meets them, and the values of an entry shared by several inputs (the same process id,
//! an HPCToolkit summary) are floating-point sums, whose last bits depend on the order of the
//! additions. Decoding, most of the work, is what runs in parallel.

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use profcodec_profile::{GroupBy, ModelError, Profile, ProfileBuilder, Query, Source};

use crate::conversion::{ConvertOptions, to_profile_with};
use crate::{Format, OpenError, Opened, ReadError};

/// How [`merged_profile`] reads its inputs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MergeOptions {
    convert: ConvertOptions,
    jobs: Option<NonZeroUsize>,
}

impl MergeOptions {
    /// Without spans, on every core.
    pub fn new() -> MergeOptions {
        MergeOptions::default()
    }

    /// Keep the timed spans of the formats that record them
    /// ([`to_profile_with_spans`](crate::to_profile_with_spans)), which speedscope's evented
    /// profiles and the Firefox Profiler's markers show.
    pub fn spans(mut self, spans: bool) -> MergeOptions {
        self.convert = self.convert.spans(spans);
        self
    }

    /// Convert each input as `convert` says ([`ConvertOptions`]: spans, flat values only).
    /// Whether a conversion may use a second thread is the merge's to say: none when it decodes
    /// inputs on several threads. [`Merged::call_tree_left_out`] says whether a call tree was
    /// left out.
    pub fn convert(mut self, convert: ConvertOptions) -> MergeOptions {
        self.convert = convert;
        self
    }

    /// Decode on `jobs` threads. `0`, the default, is rayon's: `RAYON_NUM_THREADS` when it is
    /// set, else one thread per core. With one, every input is decoded and merged on the
    /// calling thread and no thread is started.
    pub fn jobs(mut self, jobs: usize) -> MergeOptions {
        self.jobs = NonZeroUsize::new(jobs);
        self
    }
}

/// The inputs of [`merged_profile`] as one profile.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Merged {
    /// One input's profile as it is; several merged by identity, each input's contexts kept.
    pub profile: Profile,
    /// Each input's format, in input order.
    pub formats: Vec<Format>,
    /// Whether the call tree of some input was left out ([`ConvertOptions::flat_only`]).
    pub call_tree_left_out: bool,
}

impl Merged {
    /// The merge of inputs of `formats` converted as `convert` says.
    fn new(profile: Profile, formats: Vec<Format>, convert: &ConvertOptions) -> Merged {
        let call_tree_left_out = formats.iter().any(|&f| convert.leaves_out_call_tree(f));
        Merged {
            profile,
            formats,
            call_tree_left_out,
        }
    }

    /// The format of every input, when they all have the same one.
    pub fn format(&self) -> Option<Format> {
        let first = *self.formats.first()?;
        self.formats.iter().all(|&f| f == first).then_some(first)
    }
}

/// Why [`merged_profile`] (or [`profiles`]) failed. The first input at fault, in input order,
/// is named, as a sequential merge would name it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MergeError {
    /// An input could not be opened, or it shrank while it was read (the message names it).
    #[error(transparent)]
    Open(#[from] OpenError),
    /// An input could not be converted into the profile model.
    #[error("{}: {format}: {source}", input.display())]
    Read {
        /// The input.
        input: PathBuf,
        /// The format it was taken for.
        format: Format,
        /// Why its conversion failed.
        source: ReadError,
    },
    /// An input's profile could not be added to those before it: a table of the merged model
    /// would outgrow its handles.
    #[error("{}: {source}", input.display())]
    Append {
        /// The input.
        input: PathBuf,
        /// The table that overflowed.
        source: ModelError,
    },
}

/// The inputs (files, database, measurement or session folders, in any of the formats) as one
/// profile model: one input as [`to_profile`](crate::to_profile) gives it, several merged by
/// frame identity with each input's contexts kept apart (what `profcodec top`, `diff` and
/// `convert` read). The result is the same, to the bit, as appending each input's profile in
/// turn to a [`ProfileBuilder`].
///
/// Inputs are decoded in parallel on [`MergeOptions::jobs`] threads and merged as they come, in
/// input order; the first input that fails, in input order, ends the merge with its error.
/// Memory: the merged model, and at most two models per thread waiting for their turn (never
/// the inputs' bytes, which are mapped or read one input per thread).
///
/// ```no_run
/// let inputs = ["run1/nytprof.out", "run2/nytprof.out", "run3/nytprof.out"];
/// let merged = profcodec::merged_profile(&inputs, &profcodec::MergeOptions::new())?;
/// let top = merged.profile.top(&profcodec::profile::Query::new().limit(10))?;
/// for row in &top.rows {
///     println!("{:>12.6} {}", row.self_value, row.name);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn merged_profile<P: AsRef<Path> + Sync>(
    inputs: &[P],
    options: &MergeOptions,
) -> Result<Merged, MergeError> {
    merged_profile_with(inputs, options, |_| Ok(())).map(|(merged, _)| merged)
}

/// [`merged_profile`] of what `query` reads: when it reads flat values, the inputs' flat values
/// only ([`ConvertOptions::flat_only`]), and only those of functions unless it groups by line
/// ([`ConvertOptions::flat_lines`]); this leaves out the call tree of the formats that record
/// both (NYTProf's call paths and call edges, and its statement lines, most of the time of
/// converting it besides the per-sub figures). Else, or when the flat values turn out not to
/// answer it ([`Query::source_in`]), the whole profile. The query's answer ([`Profile::top`]) is
/// the one it has on [`merged_profile`]'s profile: the flat values of the frames it groups are
/// the same in both, and so is where the query reads.
///
/// ```no_run
/// use profcodec::profile::Query;
///
/// let inputs = ["run1/nytprof.out", "run2/nytprof.out"];
/// let query = Query::new().limit(10);
/// let merged = profcodec::merged_profile_for(&inputs, &query, &profcodec::MergeOptions::new())?;
/// for row in &merged.profile.top(&query)?.rows {
///     println!("{:>12.6} {}", row.self_value, row.name);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn merged_profile_for<P: AsRef<Path> + Sync>(
    inputs: &[P],
    query: &Query,
    options: &MergeOptions,
) -> Result<Merged, MergeError> {
    if query.group != GroupBy::Path && query.source != Source::Tree {
        let convert = options
            .convert
            .flat_only(true)
            .flat_lines(query.group == GroupBy::Line);
        let merged = merged_profile(inputs, &options.convert(convert))?;
        // A query the profile refuses (a value type it lacks) is refused by both alike.
        let flat = query
            .source_in(&merged.profile)
            .map_or(true, |source| source == Source::Flat);
        if flat || !merged.call_tree_left_out {
            return Ok(merged);
        }
    }
    merged_profile(inputs, options)
}

/// [`merged_profile`], with `also` run on each opened input after its conversion, on the
/// thread that converted it: what else a caller reads from its inputs (the source code that
/// NYTProf files embed). Its results come back in input order; its error is the input's, as a
/// conversion's is.
pub fn merged_profile_with<P, X>(
    inputs: &[P],
    options: &MergeOptions,
    also: impl Fn(&Opened) -> Result<X, ReadError> + Sync,
) -> Result<(Merged, Vec<X>), MergeError>
where
    P: AsRef<Path> + Sync,
    X: Send,
{
    let pool = pool(inputs.len(), options.jobs);
    // Every core decodes an input of its own: a conversion's second thread would compete.
    let convert = options.convert.second_thread(pool.is_none());
    let load = |input: &Path| load(input, &convert, &also);
    if let [one] = inputs {
        let (profile, format, extra) = load(one.as_ref())?;
        let merged = Merged::new(profile, vec![format], &convert);
        return Ok((merged, vec![extra]));
    }
    let mut merge = Merge {
        builder: ProfileBuilder::new(),
        formats: Vec::with_capacity(inputs.len()),
        extras: Vec::with_capacity(inputs.len()),
    };
    match pool {
        None => {
            for input in inputs {
                let input = input.as_ref();
                merge.add(input, load(input)?)?;
            }
        }
        Some(pool) => {
            let window = 2 * pool.current_num_threads();
            ordered(
                &pool,
                inputs.len(),
                window,
                |i| quietly(|| load(inputs[i].as_ref())),
                |i, (loaded, said)| {
                    say(&said);
                    merge.add(inputs[i].as_ref(), loaded?)
                },
            )?;
        }
    }
    let merged = Merged::new(merge.builder.build(), merge.formats, &convert);
    Ok((merged, merge.extras))
}

/// Each input's own profile ([`to_profile`](crate::to_profile)), in input order: the inputs
/// decoded on [`MergeOptions::jobs`] threads, as [`merged_profile`] decodes them, but not
/// merged (the two sides of a diff). The first input that fails, in input order, ends it with
/// its error. Memory: every input's model.
pub fn profiles<P: AsRef<Path> + Sync>(
    inputs: &[P],
    options: &MergeOptions,
) -> Result<Vec<Profile>, MergeError> {
    let pool = pool(inputs.len(), options.jobs);
    let convert = options.convert.second_thread(pool.is_none());
    let load = |input: &P| load(input.as_ref(), &convert, |_| Ok(()));
    let mut profiles = Vec::with_capacity(inputs.len());
    match pool {
        None => {
            for input in inputs {
                profiles.push(load(input)?.0);
            }
        }
        Some(pool) => ordered(
            &pool,
            inputs.len(),
            inputs.len(),
            |i| quietly(|| load(&inputs[i])),
            |_, (loaded, said)| {
                say(&said);
                profiles.push(loaded?.0);
                Ok::<_, MergeError>(())
            },
        )?,
    }
    Ok(profiles)
}

/// The merge so far.
struct Merge<X> {
    builder: ProfileBuilder,
    formats: Vec<Format>,
    extras: Vec<X>,
}

impl<X> Merge<X> {
    /// Appends what was read of `input`.
    fn add(&mut self, input: &Path, (profile, format, extra): Loaded<X>) -> Result<(), MergeError> {
        self.builder
            .append(&profile)
            .map_err(|source| MergeError::Append {
                input: input.to_path_buf(),
                source,
            })?;
        self.formats.push(format);
        self.extras.push(extra);
        Ok(())
    }
}

/// What was read of one input: its profile, its format and what the caller read of it.
type Loaded<X> = (Profile, Format, X);

/// The pool that decodes `inputs` inputs on `jobs` threads; `None` to decode them on the
/// calling thread: one input or one thread, or no thread could be started.
pub(crate) fn pool(inputs: usize, jobs: Option<NonZeroUsize>) -> Option<rayon::ThreadPool> {
    if inputs < 2 || jobs.is_some_and(|j| j.get() == 1) {
        return None;
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.map_or(0, NonZeroUsize::get))
        .thread_name(|i| format!("profcodec-merge-{i}"))
        .build()
        .ok()?;
    (pool.current_num_threads() > 1).then_some(pool)
}

/// One input in the profile model as `convert` says, its format and what `also` reads of it.
fn load<X>(
    input: &Path,
    convert: &ConvertOptions,
    also: impl Fn(&Opened) -> Result<X, ReadError>,
) -> Result<Loaded<X>, MergeError> {
    let opened = crate::open(input)?;
    let profile = to_profile_with(&opened, convert);
    let read = profile.and_then(|profile| Ok((profile, also(&opened)?)));
    // A file cut while it was read (its lost pages read as zeros): that error, not the result.
    opened.check_intact()?;
    let format = opened.format();
    let (profile, extra) = read.map_err(|source| MergeError::Read {
        input: input.to_path_buf(),
        format,
        source,
    })?;
    Ok((profile, format, extra))
}

/// What a conversion says about the binaries of hpcrun measurements
/// ([`symbols::set_reporter`](crate::symbols::set_reporter)), kept while it runs on a thread of
/// the pool and said in input order on the calling thread, as a sequential merge says it.
#[cfg(feature = "symbolize")]
type Said = Vec<crate::symbols::ModuleReport>;
#[cfg(not(feature = "symbolize"))]
type Said = ();

/// Runs `convert`, keeping what it says.
#[cfg(feature = "symbolize")]
fn quietly<T>(convert: impl FnOnce() -> T) -> (T, Said) {
    crate::conversion::symbols::deferred(convert)
}

/// Says what a conversion kept.
#[cfg(feature = "symbolize")]
fn say(said: &Said) {
    crate::conversion::symbols::report(said);
}

#[cfg(not(feature = "symbolize"))]
fn quietly<T>(convert: impl FnOnce() -> T) -> (T, Said) {
    (convert(), ())
}

#[cfg(not(feature = "symbolize"))]
fn say(_: &Said) {}

/// Runs `load` for each index of `0..count` on the threads of `pool` and gives each result to
/// `fold` on the calling thread in index order, as the loop `for i in 0..count { fold(i,
/// load(i))? }` does. At most `window` (at least one) results are loaded or loading and not yet
/// folded, so memory holds that many at once. The first error of `fold` ends the run: no load
/// starts after it, and those running are waited for and dropped. A panic of `load` is resumed
/// on the calling thread.
///
/// The calling thread must not be a thread of `pool`: it waits for the results.
pub(crate) fn ordered<T: Send, E>(
    pool: &rayon::ThreadPool,
    count: usize,
    window: usize,
    load: impl Fn(usize) -> T + Sync,
    mut fold: impl FnMut(usize, T) -> Result<(), E>,
) -> Result<(), E> {
    let window = window.max(1);
    let stop = AtomicBool::new(false);
    let (done, results) = mpsc::channel();
    pool.in_place_scope_fifo(|scope| {
        // The scope waits for every spawned load, even on an early return: they see `stop`.
        let _stop_on_return = StopOnDrop(&stop);
        let (load, stop) = (&load, &stop);
        let spawn = |i: usize| {
            let done = done.clone();
            scope.spawn_fifo(move |_| {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let result = catch_unwind(AssertUnwindSafe(|| load(i)));
                // The receiver is gone only when the run ended: the result is not wanted.
                let _ = done.send((i, result));
            });
        };
        let mut spawned = count.min(window);
        (0..spawned).for_each(&spawn);
        let mut waiting = BTreeMap::new();
        for next in 0..count {
            let result = loop {
                if let Some(result) = waiting.remove(&next) {
                    break result;
                }
                // `done` is held here, so this waits until a load sends, and each does.
                let Ok((i, result)) = results.recv() else {
                    unreachable!("a sender is held")
                };
                waiting.insert(i, result);
            };
            match result {
                Ok(value) => fold(next, value)?,
                Err(panic) => resume_unwind(panic),
            }
            // A place in the window is free.
            if spawned < count {
                spawn(spawned);
                spawned += 1;
            }
        }
        Ok(())
    })
}

/// Sets its flag when dropped: the loads not yet started of a run that ended are skipped.
struct StopOnDrop<'a>(&'a AtomicBool);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::Mutex;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    use super::*;

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
    }

    /// Loads that finish in reverse order are folded in index order, and never more than the
    /// window are loaded and not yet folded.
    #[test]
    fn the_reduction_folds_in_input_order_within_its_window() {
        for (threads, window) in [(1, 1), (2, 3), (4, 8)] {
            let unfolded = AtomicUsize::new(0);
            let most = AtomicUsize::new(0);
            let mut folded = Vec::new();
            let result: Result<(), ()> = ordered(
                &pool(threads),
                40,
                window,
                |i| {
                    let now = unfolded.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    // Later loads of each window finish first.
                    std::thread::sleep(Duration::from_micros(200 * (8 - i as u64 % 8)));
                    i * 10
                },
                |i, value| {
                    assert_eq!(value, i * 10);
                    folded.push(i);
                    unfolded.fetch_sub(1, Ordering::SeqCst);
                    Ok(())
                },
            );
            assert_eq!(result, Ok(()));
            assert_eq!(folded, (0..40).collect::<Vec<_>>(), "{threads} threads");
            let most = most.load(Ordering::SeqCst);
            assert!(most <= window, "{most} unfolded, window {window}");
        }
    }

    /// The first failure in index order ends the run, whichever failed first in time; no load
    /// starts after it.
    #[test]
    fn the_reduction_stops_at_the_first_failure_in_input_order() {
        let loaded = Mutex::new(Vec::new());
        let mut folded = Vec::new();
        let result = ordered(
            &pool(2),
            100,
            4,
            |i| {
                loaded.lock().unwrap().push(i);
                if i == 5 {
                    // Input 7 fails before input 5 does.
                    std::thread::sleep(Duration::from_millis(20));
                }
                i
            },
            |i, value| {
                if value == 5 || value == 7 {
                    return Err(i);
                }
                folded.push(i);
                Ok(())
            },
        );
        assert_eq!(result, Err(5));
        assert_eq!(folded, [0, 1, 2, 3, 4]);
        // Folding 0 to 4 freed five places after the first four: loads up to 8 started.
        assert!(loaded.lock().unwrap().iter().all(|&i| i < 5 + 4));
    }

    /// A panic of a load is the caller's.
    #[test]
    fn a_panicking_load_panics_the_caller() {
        let result = catch_unwind(|| {
            ordered(
                &pool(2),
                10,
                4,
                |i| assert_ne!(i, 3),
                |_, ()| Ok::<(), ()>(()),
            )
        });
        assert!(result.is_err());
    }

    fn testdata(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata")
            .join(rel)
    }

    /// On several threads, the merge is the sequential one to the bit (the `Debug` form prints
    /// each value's shortest round-trip digits), inputs that share contexts included.
    #[cfg(all(feature = "nytprof", feature = "statprofiler"))]
    #[test]
    fn a_parallel_merge_is_the_sequential_one() {
        let one = testdata("nytprof/evals_small.nytprof.out");
        let mut inputs = vec![one.clone(); 9];
        inputs.insert(3, testdata("nytprof/hello.nytprof.out"));
        inputs.push(testdata("statprofiler/features.statprof"));
        for spans in [false, true] {
            let options = MergeOptions::new().spans(spans);
            let sequential = merged_profile(&inputs, &options.jobs(1)).unwrap();
            let mut builder = ProfileBuilder::new();
            for input in &inputs {
                let opened = crate::open(input).unwrap();
                builder
                    .append(&to_profile_with(&opened, &ConvertOptions::new().spans(spans)).unwrap())
                    .unwrap();
            }
            let appended = format!("{:?}", builder.build());
            assert_eq!(format!("{:?}", sequential.profile), appended);
            for jobs in [2, 3] {
                let parallel = merged_profile(&inputs, &options.jobs(jobs)).unwrap();
                assert_eq!(format!("{:?}", parallel.profile), appended, "{jobs} jobs");
                assert_eq!(parallel.formats, sequential.formats);
            }
            let (_, paths) = merged_profile_with(&inputs, &options.jobs(2), |opened| {
                Ok(opened.path().to_path_buf())
            })
            .unwrap();
            assert_eq!(paths, inputs);
            assert_eq!(sequential.format(), None);
            assert_eq!(sequential.formats[0], Format::Nytprof);
        }
    }

    /// The first input that fails, in input order, is named, with the format it was taken for.
    #[cfg(feature = "nytprof")]
    #[test]
    fn the_first_failing_input_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let good = testdata("nytprof/hello.nytprof.out");
        let bytes = std::fs::read(&good).unwrap();
        let cut = dir.path().join("cut.out");
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let missing = dir.path().join("missing.out");
        let inputs = [good.clone(), good.clone(), cut.clone(), good, missing];
        for jobs in [1, 2] {
            let e = merged_profile(&inputs, &MergeOptions::new().jobs(jobs)).unwrap_err();
            assert!(matches!(e, MergeError::Read { .. }), "{e:?}");
            let message = e.to_string();
            assert!(
                message.starts_with(&format!("{}: {}: ", cut.display(), Format::Nytprof)),
                "{message}"
            );
        }
    }
}
