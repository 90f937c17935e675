//! Builders and writers of HPCToolkit database files.
//!
//! The writers follow the layout hpcprof writes and readers in the field were tested on
//! (hpctoolkit-db-v4.md): meta.db sections in the order General, IdNames, Metrics, Strings,
//! Modules, Files, Functions, Context with child context arrays before their parents; the
//! 0x30-byte cct.db header; value blocks at 4-byte-aligned offsets with the summary profile
//! written last; trace lines at 8-byte-aligned offsets with room reserved for a declared
//! capacity; the four footers.
//!
//! - [`write_meta`], [`write_profiles`], [`write_context_major`], [`write_traces`] and
//!   [`write_database`] write a [`crate::model`].
//! - [`ProfileDbWriter`], [`CctDbWriter`] and [`TraceDbWriter`] stream: profiles, context blocks
//!   and trace elements are written as they are produced, in any order, and only their small
//!   headers stay in memory until `finish`.
//! - [`transpose`] makes cct.db from a profile.db with memory bounded by a budget.
//!
//! Every writer checks what the format promises its readers (sorted arrays, non-empty contexts,
//! handles that exist) and answers [`std::io::ErrorKind::InvalidInput`] rather than write a file
//! a reader would reject.

mod bytes;
mod cct;
mod from_read;
mod meta;
mod profile;
pub mod synthetic;
mod trace;
mod transpose;

use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};
use std::path::Path;

pub use cct::CctDbWriter;
pub use from_read::profiles_from_read;
pub use meta::write_meta;
pub use profile::{ProfileDbWriter, ProfileInfo};
pub use trace::TraceDbWriter;
pub use transpose::{TransposeOptions, TransposeStats, transpose};

use crate::model::{ContextMajor, Database, Profile, Traces};

/// Major and minor version written in every file header.
pub const VERSION: (u8, u8) = (4, 0);

/// Writes profile.db: the non-summary profiles in index order, then the summary profiles (as
/// hpcprof does, hpctoolkit-db-v4.md).
pub fn write_profiles<W: Write + Seek>(profiles: &[Profile], out: W) -> io::Result<W> {
    let infos: Vec<ProfileInfo<'_>> = profiles
        .iter()
        .map(|p| ProfileInfo {
            flags: p.flags,
            id_tuple: p.id_tuple.as_deref(),
        })
        .collect();
    let mut w = ProfileDbWriter::new(out, &infos)?;
    let order = profiles
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.is_summary())
        .chain(profiles.iter().enumerate().filter(|(_, p)| p.is_summary()));
    for (i, p) in order {
        w.write_profile(i as u32, &p.values.contexts, &p.values.values)?;
    }
    w.finish()
}

/// Writes cct.db: one block per `ctxId`, in `ctxId` order.
pub fn write_context_major<W: Write + Seek>(cct: &ContextMajor, out: W) -> io::Result<W> {
    let n =
        u32::try_from(cct.contexts.len()).map_err(|_| invalid("more than u32::MAX contexts"))?;
    let mut w = CctDbWriter::new(out, n)?;
    for (ctx, block) in cct.contexts.iter().enumerate() {
        w.write_context(ctx as u32, &block.metrics, &block.values)?;
    }
    w.finish()
}

/// Writes trace.db with each line's room exactly its length.
pub fn write_traces<W: Write + Seek>(traces: &Traces, out: W) -> io::Result<W> {
    let lines: Vec<(u32, u64)> = traces
        .traces
        .iter()
        .map(|t| (t.prof_index, t.elements.len() as u64))
        .collect();
    let mut w = TraceDbWriter::new(out, &lines)?;
    for (i, t) in traces.traces.iter().enumerate() {
        w.append(i as u32, &t.elements)?;
    }
    w.set_time_range(traces.min_timestamp, traces.max_timestamp);
    w.finish()
}

/// Writes a database into the directory `dir` (created when missing): meta.db, profile.db, and
/// cct.db and trace.db when the model has them.
pub fn write_database(db: &Database, dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let create =
        |name: &str| File::create(dir.join(name)).map(|f| BufWriter::with_capacity(1 << 20, f));
    let mut meta = create("meta.db")?;
    write_meta(&db.meta, &mut meta)?;
    meta.flush()?;
    write_profiles(&db.profiles, create("profile.db")?)?.flush()?;
    if let Some(cct) = &db.context_major {
        write_context_major(cct, create("cct.db")?)?.flush()?;
    }
    if let Some(traces) = &db.traces {
        write_traces(traces, create("trace.db")?)?.flush()?;
    }
    Ok(())
}

/// The error every writer answers when the data breaks a promise of the format.
pub(crate) fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, what.to_owned())
}
