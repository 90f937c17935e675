//! Crafted inputs whose naive conversion costs far more than their size (`cargo xtask
//! hostile`): each is small, and each stresses one way an output can grow faster than its
//! input.
//!
//! - [`nytprof_chain_program`]: a Perl program whose subs call each other in one chain, for
//!   Devel::NYTProf to profile (folded stacks and sampled speedscope grow with depth squared).
//! - [`easyprofiler_deep`]: one thread of blocks nested `depth` deep under one long name
//!   (folded stacks grow with depth squared times the name).
//! - [`easyprofiler_long_name`]: many blocks sharing one very long name (Chrome JSON has no
//!   string table).
//! - [`hpctoolkit_aliased_trace`]: a trace.db whose lines all point at one line's samples (each
//!   line read again: output grows with lines times samples).

use profcodec_easyprofiler::{
    Capture, Convention, Descriptor, Record, RecordBody, Thread, Version,
};
use profcodec_hpctoolkit::TraceDb;
use profcodec_hpctoolkit::model::TraceElement;
use profcodec_hpctoolkit::write::TraceDbWriter;

/// A Perl program of `depth` subs, each calling the next once: `f0` calls `f1` ... calls
/// `f<depth-1>`, which spins a little so that the chain's end has time.
pub fn nytprof_chain_program(depth: usize) -> String {
    let mut program = String::with_capacity(depth * 32);
    program.push_str("use strict;\n");
    for i in 0..depth.saturating_sub(1) {
        program.push_str(&format!("sub f{i} {{ f{}() }}\n", i + 1));
    }
    program.push_str(&format!(
        "sub f{} {{ my $x = 0; $x += $_ for 1 .. 1000; $x }}\n",
        depth.saturating_sub(1)
    ));
    program.push_str("f0();\n");
    program
}

/// One block descriptor named `name`.
fn descriptor(id: u32, name: Vec<u8>) -> Option<Box<Descriptor>> {
    Some(Box::new(Descriptor {
        id,
        line: 1,
        color: 0xff00_ff00,
        block_type: 1,
        status: 1,
        name,
        file: b"hostile.cpp".to_vec(),
    }))
}

/// A capture of one thread holding `records` (in the order the library stores them: a block
/// after the blocks it holds) of the descriptors `names`.
fn capture(names: Vec<Vec<u8>>, records: Vec<Record>, end: u64) -> Vec<u8> {
    let mut c = Capture {
        version: Version::V2_1_0,
        pid: 1,
        cpu_frequency: 0,
        begin_time: 0,
        end_time: end,
        descriptors: names
            .into_iter()
            .enumerate()
            .map(|(id, name)| descriptor(id as u32, name))
            .collect(),
        threads: vec![Thread {
            id: 7,
            name: Some(b"Main".to_vec()),
            context_switches: Vec::new(),
            records,
        }],
        ..Capture::default()
    };
    c.update_counters(Convention::Runtime);
    c.to_bytes().expect("an in-memory capture writes")
}

/// One thread of `depth` blocks nested in each other, all of one descriptor named by
/// `name_len` bytes.
pub fn easyprofiler_deep(depth: u64, name_len: usize) -> Vec<u8> {
    let records = (0..depth)
        .rev()
        .map(|k| Record {
            begin: k,
            end: 2 * depth - k,
            descriptor: 0,
            body: RecordBody::Named(Vec::new()),
        })
        .collect();
    capture(vec![vec![b'n'; name_len]], records, 2 * depth + 1)
}

/// One thread of `blocks` blocks one after the other, all of one descriptor named by
/// `name_len` bytes.
pub fn easyprofiler_long_name(blocks: u64, name_len: usize) -> Vec<u8> {
    let records = (0..blocks)
        .map(|i| Record {
            begin: i * 10,
            end: i * 10 + 9,
            descriptor: 0,
            body: RecordBody::Named(Vec::new()),
        })
        .collect();
    capture(vec![vec![b'n'; name_len]], records, blocks * 10 + 1)
}

/// `trace_db` (an HPCToolkit trace.db with at least one line of samples) rewritten with
/// `lines` lines whose headers all point at the first non-empty line's samples, each with the
/// profile index of one of the original lines in turn.
pub fn hpctoolkit_aliased_trace(trace_db: &[u8], lines: u32) -> Vec<u8> {
    let view = TraceDb::parse(trace_db).expect("a valid trace.db");
    let originals: Vec<_> = view
        .traces()
        .map(|t| t.expect("a valid trace line"))
        .collect();
    let first = originals
        .iter()
        .find(|t| !t.elems.is_empty())
        .expect("a line with samples");
    let elems: Vec<TraceElement> = first
        .elems
        .iter()
        .map(|e| TraceElement {
            timestamp: e.timestamp(),
            ctx_id: e.ctx_id(),
        })
        .collect();
    let mut layout = vec![(first.prof_index, elems.len() as u64)];
    layout.extend((1..lines).map(|i| (originals[i as usize % originals.len()].prof_index, 0)));
    let mut w =
        TraceDbWriter::new(std::io::Cursor::new(Vec::new()), &layout).expect("a trace.db layout");
    w.append(0, &elems).expect("in memory");
    let mut bytes = w.finish().expect("in memory").into_inner();
    let view = TraceDb::parse(&bytes).expect("just written");
    let offsets: Vec<usize> = (0..lines)
        .map(|i| view.trace(i).expect("a line").offset as usize)
        .collect();
    // Each header's start and end pointers (16 bytes after the profile index) copied from the
    // first line's.
    let run: [u8; 0x10] = bytes[offsets[0] + 8..offsets[0] + 0x18]
        .try_into()
        .expect("16 bytes");
    for at in &offsets[1..] {
        bytes[at + 8..at + 0x18].copy_from_slice(&run);
    }
    bytes
}

/// Writes into the new folder `dir` the HPCToolkit database `demo` (its meta.db, profile.db and
/// cct.db copied) with its trace.db replaced by [`hpctoolkit_aliased_trace`] of `lines` lines.
pub fn write_hpctoolkit_aliased_database(
    demo: &std::path::Path,
    dir: &std::path::Path,
    lines: u32,
) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for file in ["meta.db", "profile.db", "cct.db"] {
        std::fs::copy(demo.join(file), dir.join(file))?;
    }
    let trace = std::fs::read(demo.join("trace.db"))?;
    std::fs::write(
        dir.join("trace.db"),
        hpctoolkit_aliased_trace(&trace, lines),
    )
}
