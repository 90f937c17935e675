//! Turn hpcrun measurement folders into HPCToolkit database v4 folders, as HPCToolkit's
//! `hpcprof` does: meta.db, profile.db, cct.db, trace.db and `metrics/default.yaml`.
//!
//! This crate joins the two ends of HPCToolkit's pipeline: it reads measurements with
//! `profcodec-hpcrun` and writes databases with `profcodec-hpctoolkit`, and is the one crate of
//! the workspace that imports two format crates.
//!
//! What it computes, as hpcprof does:
//!
//! - one calling-context tree unified over every thread and rank: hpcrun's primary root and its
//!   "no activity" node become the global context, the thread fences become the `main thread` and
//!   `application thread` entry points, and every other node an instruction placed in the
//!   program's structure: its function, loops and line from the measurement's hpcstruct files
//!   (the instruction itself kept in profile.db but left out of meta.db, as hpcprof leaves it),
//!   else its function from the vdso's or the kernel's symbols, else the instruction (its load
//!   module and offset);
//! - every stored metric with the four propagation scopes (`point`; `function`, summed up
//!   through lexical nesting but not through calls; `lex_aware`, the same but a loop's without
//!   its inner loops; `execution`, summed through everything), values scaled by the metric's period, and their sums over threads in the
//!   summary profile;
//! - identifier tuples, with logical indexes generated for the entries hpcrun leaves to hpcprof
//!   (`LOGIC_LOCAL` and `LOGIC_GLOBAL`);
//! - traces mapped to the unified contexts.
//!
//! Measurement files are decoded on every core ([`Options::jobs`]) and merged in a fixed order,
//! so the database is the same for any number of jobs.
//!
//! ```
//! let db = profcodec_hpcprof::prof(
//!     &["../../testdata/hpcprof/demo.m"],
//!     &profcodec_hpcprof::Options { ignore_structs: true, ..Default::default() },
//! )?;
//! println!("{} contexts, {} profiles", db.meta.contexts.len(), db.profiles.len());
//! # assert!(db.profiles.len() >= 2);
//! # Ok::<(), profcodec_hpcprof::ProfError>(())
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

mod build;
mod companion;
mod input;
mod structure;
mod symbols;
mod yaml;

use std::io;
use std::path::{Path, PathBuf};

pub use build::prof_inputs;
use profcodec_hpctoolkit::model::Database;
pub use yaml::metrics_yaml;

/// How a database is made: hpcprof's options, as far as they are implemented.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Worker threads decoding measurement files (hpcprof's `-j`); `None` uses every core.
    pub jobs: Option<usize>,
    /// Ignore the `structs/` folders of the measurements (hpcprof's `--ignore-structs`).
    pub ignore_structs: bool,
    /// Leave out trace.db (hpcprof's `--no-traces`).
    pub no_traces: bool,
    /// The database's title (hpcprof's `-n`); by default the measured program's name.
    pub title: Option<String>,
}

/// Why a database could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProfError {
    /// A measurement folder or file could not be listed or read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The folder or file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
    /// A measurement file is damaged.
    #[error("{}: {source}", path.display())]
    Decode {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        source: profcodec_hpcrun::Error,
    },
    /// A measurement file holds something this hpcprof does not place (yet), said in words.
    #[error("{}: {what}", path.display())]
    Unsupported {
        /// The file or folder.
        path: PathBuf,
        /// What is not supported.
        what: String,
    },
    /// The inputs hold no `.hpcrun` profile.
    #[error("no .hpcrun profile in the measurements given")]
    NoProfiles,
    /// The worker pool could not be started.
    #[error("cannot start {jobs} worker threads: {message}")]
    Pool {
        /// The number of workers asked for.
        jobs: usize,
        /// Why not.
        message: String,
    },
}

/// A database made, with what was left out of it on the way.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Made {
    /// The database.
    pub database: Database,
    /// What was left out, in words, each naming the file and why: an entry of a measurement
    /// folder that is no thread's file, a structure or symbols file refused by the rule of
    /// files a measurement names ([`profcodec_common::named`]: inside the measurement folder,
    /// a regular file, within a size) or that could not be read.
    pub warnings: Vec<String>,
}

/// Makes the database of the measurement folders or `.hpcrun` files `measurements`.
pub fn prof<P: AsRef<Path>>(measurements: &[P], options: &Options) -> Result<Database, ProfError> {
    make(measurements, options).map(|made| made.database)
}

/// [`prof`], with a warning for everything left out.
pub fn make<P: AsRef<Path>>(measurements: &[P], options: &Options) -> Result<Made, ProfError> {
    let mut warnings = Vec::new();
    let inputs = input::list(measurements, options, &mut warnings)?;
    let database = build::make_inputs(&inputs, options, &mut warnings)?;
    Ok(Made { database, warnings })
}

/// Writes `db` into the folder `dir` (created when missing) as hpcprof lays a database out:
/// meta.db, profile.db, cct.db, trace.db when the database has traces, `FORMATS.md`,
/// `metrics/default.yaml` and `metrics/METRICS.yaml.ex`. The caller chooses the folder; the
/// umbrella's output policy makes the write atomic.
pub fn write_database(db: &Database, dir: &Path) -> io::Result<()> {
    profcodec_hpctoolkit::write::write_database(db, dir)?;
    std::fs::write(dir.join("FORMATS.md"), FORMATS_MD)?;
    let metrics = dir.join("metrics");
    std::fs::create_dir_all(&metrics)?;
    std::fs::write(metrics.join("METRICS.yaml.ex"), METRICS_YAML_EX)?;
    std::fs::write(metrics.join("default.yaml"), metrics_yaml(&db.meta))
}

/// `FORMATS.md`: what each file of the database holds, for whoever opens the folder (hpcprof
/// writes one; HPCToolkit's `check-db` expects it).
const FORMATS_MD: &str = include_str!("../assets/FORMATS.md");

/// `metrics/METRICS.yaml.ex`: a commented example of the metrics taxonomy schema, to start a
/// taxonomy of one's own from (hpcprof writes one; HPCToolkit's `check-db` expects it).
const METRICS_YAML_EX: &str = include_str!("../assets/METRICS.yaml.ex");

pub use input::Input;
