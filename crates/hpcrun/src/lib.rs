//! Read and write hpcrun measurement files (`.hpcrun`, every version from 02.00l to 04.00b) and
//! `.hpctrace` traces.
//!
//! The call paths that cost the most CPU time in a measurement:
//!
//! ```
//! use profcodec_hpcrun::{CctIndex, read_measurement};
//!
//! let bytes = std::fs::read("../../testdata/hpcrun/demo-04.00b.hpcrun")?;
//! let m = read_measurement(&bytes)?;
//! let (metric, desc) = m.metric_by_name("CPUTIME (sec)").expect("a CPUTIME metric");
//! let epoch = &m.epochs[0];
//! let inclusive = m.inclusive_sums(0, metric); // every node's subtree total, in one pass
//! let index = CctIndex::new(&epoch.cct);
//! let lms = epoch.load_module_index();
//!
//! let mut nodes: Vec<usize> = (0..epoch.cct.len()).collect();
//! nodes.sort_by(|&a, &b| inclusive[b].total_cmp(&inclusive[a]));
//! println!("top call paths by {desc}", desc = desc.name);
//! for &n in nodes.iter().take(3) {
//!     let path: Vec<String> = index.path_to_root(n).iter().rev().map(|&i| {
//!         let node = &epoch.cct[i];
//!         let module = lms.get(&node.lm_id).map_or("?".into(), |lm| lm.name.to_string());
//!         format!("{module}+{:#x}", node.ip)
//!     }).collect();
//!     println!("{:>10.4}  {}", inclusive[n], path.join(" > "));
//! }
//! # assert!(inclusive[nodes[0]] > 0.0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The byte grammar of every version is in [`format`](mod@format), as HPCToolkit's `hpcrun-fmt.{h,c}` and
//! `write_data.c` read and write it.
//!
//! | magic | read | written | model |
//! |---|---|---|---|
//! | `HPCRUN____02.00l` | yes | yes | epochs, dense values, LUSH always |
//! | `HPCRUN-profile____01.98b` | yes | yes | as 02.00l, big-endian, LUSH under the epoch flag |
//! | `HPCRUN-profile____02.00b` | yes (both layouts) | yes (both layouts) | epochs, full descriptors, lm ids |
//! | `HPCRUN-profile____03.00b` | yes | yes | as 02.00b with the auxiliary metric fields |
//! | `HPCRUN-profile____04.00b` | yes ([`V4View`], zerocopy) | yes | one epoch, sparse values, id tuple |
//! | `HPCRUN-trace______01.0xb` | yes ([`TraceView`], zerocopy) | yes | records, data-centric flag |
//!
//! Cost: every reader takes time and memory linear in its input. Counts are checked against the
//! bytes left before anything is allocated for them; each byte is decoded once (a 02.00b file at
//! most twice, once per metric layout); the helpers that look things up per record
//! ([`NodeValues`], [`CctIndex::inclusive_sums`], [`name_id_tuple`], [`MeasurementFolder`]) index
//! once and never rescan a growing structure.
//!
//! Profiles: with the default feature `profile`, [`Measurement::to_profile`],
//! [`MeasurementFolder::to_profile`] and [`ProfileConverter`] give the format-neutral model of
//! `profcodec-profile` (what it holds and how it matches hpcprof: [`profile`](mod@profile)),
//! and [`timeline`] the `.hpctrace` files as a timeline (one track per thread, samples as
//! nested slices), the model `profcodec-timeline` writes as Perfetto or Chrome traces.
//!
//! Tables: with the feature `arrow`, `tables` reads a measurement folder or file as Arrow record
//! batches (profiles, metrics, nodes, values, trace records), the `hpcrun` set of
//! `profcodec-arrow`'s SQL and Parquet export.
//!
//! Fidelity: reading then writing gives the same bytes for every file whose 04.00 sections sit
//! where hpcrun puts them ([`V4View::is_canonical`]: each section at the next multiple of 1024,
//! zero gaps, footer last), which is every file hpcrun writes; every real corpus file is checked.
//!
//! ```
//! use profcodec_hpcrun::{Measurement, NvPair, Version, read_measurement, write_measurement};
//! let mut m = Measurement { version: Version::V0400B, ..Measurement::default() };
//! m.header.push(NvPair::new("program-name", "demo"));
//! m.epochs.push(Default::default());
//! let bytes = write_measurement(&m).unwrap();
//! assert_eq!(bytes.len() % 1024, 112); // sections 1024-aligned, 112-byte footer
//! let back = read_measurement(&bytes).unwrap();
//! assert_eq!(back.header_value("program-name").unwrap(), "demo");
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

/// The format's one name in every machine-readable output: the `format` of a dump's header and
/// of `info --json`, the table set of `sql` and `export`, and the umbrella's cargo feature.
pub const FORMAT_NAME: &str = "hpcrun";

// The README's examples use the profile model too.
#[doc = include_str!("../README.md")]
#[cfg(all(doctest, feature = "profile"))]
pub struct ReadmeDoctests;

mod builder;
mod cct;
mod error;
mod folder;
#[doc = include_str!("format.md")]
pub mod format {}
#[cfg(feature = "inspect")]
pub mod inspect;
pub mod migrate;
mod model;
#[cfg(feature = "profile")]
pub mod profile;
pub mod raw;
pub mod read;
#[cfg(feature = "symbolize")]
pub mod structs;
#[cfg(feature = "symbolize")]
pub mod symbols;
#[cfg(feature = "arrow")]
pub mod tables;
mod text;
#[cfg(feature = "profile")]
pub mod timeline;
mod values;
#[doc(hidden)]
pub mod work;
pub mod write;

pub use builder::{LoadModuleId, MeasurementBuilder, MetricId, NodeId};
pub use cct::CctIndex;
pub use error::Error;
pub use folder::{FolderError, MeasurementFolder, ThreadFiles};
pub use model::*;
#[cfg(feature = "profile")]
pub use profile::{ProfileConverter, ProfileError};
pub use read::{
    TraceRecords, TraceStream, TraceView, V4View, detect_version, read_measurement,
    read_measurement_partial, read_measurement_prefix, read_trace,
};
#[cfg(feature = "symbolize")]
pub use symbols::{ModuleReport, SearchPath};
pub use text::Text;
pub use values::NodeValues;
pub use write::{WriteError, write_measurement, write_trace};

impl Measurement {
    /// Reads a measurement file of any version ([`read_measurement`]).
    pub fn parse(data: &[u8]) -> Result<Self, Error> {
        read_measurement(data)
    }
}

impl Trace {
    /// Reads a trace file ([`read_trace`]).
    pub fn parse(data: &[u8]) -> Result<Self, Error> {
        read_trace(data)
    }
}
