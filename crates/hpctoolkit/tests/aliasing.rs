//! Aliasing: files whose structures all point at one shared array or string. Each
//! file is written by the crate's writers and then patched so that every pointer names the
//! same bytes, at the sizes of the issue (where a pass per alias takes seconds to hours). The
//! decoders must answer a typed error after work and memory linear in the file: each test
//! asserts the error and the bytes allocated (the counting allocator), never a timer.
//!
//! `cargo test -p profcodec-hpctoolkit --test aliasing -- --ignored write_fuzz_seeds` writes
//! small files of the same shapes into `fuzz/corpus/`.

use std::io::Cursor;
use std::sync::Mutex;

use profcodec_hpctoolkit::model::{
    ContextStart, Meta, MetricStart, MetricValue, ProfileValue, SourceFile, TraceElement,
};
use profcodec_hpctoolkit::read::TraceReader;
use profcodec_hpctoolkit::write::{
    CctDbWriter, ProfileDbWriter, ProfileInfo, TraceDbWriter, write_meta,
};
use profcodec_hpctoolkit::{CctDb, Database, Error, MetaDb, ProfileDb, TraceDb};

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// The tests run one at a time so that each one's allocation count is its own.
static SERIAL: Mutex<()> = Mutex::new(());

/// Runs `f` and returns its result with the bytes it allocated.
fn counted<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = A.total_allocated();
    let out = f();
    (out, A.total_allocated() - before)
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// A profile.db of `n` profiles whose value blocks all point at profile 1's block of
/// `n_values` values.
fn profiles_on_one_block(n: u32, n_values: u32) -> Vec<u8> {
    let mut infos = vec![ProfileInfo {
        flags: 1,
        id_tuple: None,
    }];
    infos.extend((1..n).map(|_| ProfileInfo {
        flags: 0,
        id_tuple: Some(&[]),
    }));
    let mut w = ProfileDbWriter::new(Cursor::new(Vec::new()), &infos).expect("layout");
    let contexts: Vec<ContextStart> = (0..n_values)
        .map(|i| ContextStart {
            ctx_id: i + 1,
            start: i.into(),
        })
        .collect();
    let values: Vec<MetricValue> = (0..n_values)
        .map(|i| MetricValue {
            metric_id: 1,
            value: f64::from(i) + 1.0,
        })
        .collect();
    w.write_profile(1, &contexts, &values).expect("block");
    let mut bytes = w.finish().expect("finish").into_inner();
    let view = ProfileDb::parse(&bytes).expect("written profile.db");
    let first = view.profile(1).expect("profile 1").offset as usize;
    let offsets: Vec<usize> = (2..n)
        .map(|i| view.profile(i).expect("profile").offset as usize)
        .collect();
    // Copy profile 1's {PSVB} (the first 0x20 bytes of its {PI}) over every later one.
    let block: [u8; 0x20] = bytes[first..first + 0x20].try_into().expect("PSVB");
    for at in offsets {
        bytes[at..at + 0x20].copy_from_slice(&block);
    }
    bytes
}

#[test]
fn profiles_sharing_one_value_block_are_refused() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // The shape: 400,000 profiles on one 12,713-value block (21.5 MB); a check per
    // profile would look at 5.1 billion values.
    let bytes = profiles_on_one_block(400_000, 12_713);
    let view = ProfileDb::parse(&bytes).expect("headers are fine");
    let aliased: u64 = (0..view.profile_count())
        .map(|i| view.profile(i).map_or(0, |p| p.values.len() as u64))
        .sum();
    assert_eq!(
        aliased,
        399_999 * 12_713,
        "every profile sees the shared block"
    );
    let (result, used) = counted(|| view.validate());
    let e = result.expect_err("aliased blocks");
    assert!(
        matches!(
            e,
            Error::Overlap {
                field: "PSVB.pValues",
                other_field: "PSVB.pValues",
                ..
            }
        ),
        "{e}"
    );
    assert!(e.offset().is_some_and(|o| o > 0));
    // 32 bytes per non-empty array, reserved once: about 3 x 32 bytes per 48-byte {PI}.
    assert!(used <= bytes.len() * 2, "validate allocated {used} bytes");
    let (result, used) = counted(|| profcodec_hpctoolkit::write::profiles_from_read(&view));
    assert!(matches!(result, Err(Error::Overlap { .. })));
    assert!(
        used <= bytes.len() * 2,
        "the model copy allocated {used} bytes"
    );
    // The profile model refuses it before reading any value, every profile asked for.
    #[cfg(feature = "profile")]
    {
        let mut meta = Vec::new();
        write_meta(
            &Meta {
                title: "aliased".into(),
                ..Meta::default()
            },
            &mut meta,
        )
        .expect("meta.db");
        let db = Database::from_parts(&meta[..], Some(&bytes[..]), None, None).expect("headers");
        let options = profcodec_hpctoolkit::profile::ProfileOptions::new()
            .profiles(profcodec_hpctoolkit::profile::Profiles::All);
        let (result, used) = counted(|| db.to_profile(&options));
        assert!(matches!(result, Err(Error::Overlap { .. })), "{result:?}");
        assert!(
            used <= bytes.len() * 2,
            "the profile model allocated {used} bytes"
        );
    }
    println!("profile.db {} bytes: {e}", bytes.len());
}

/// A trace.db of `n` lines all spanning line 0's `n_elems` elements.
fn traces_on_one_run(n: u32, n_elems: u32) -> Vec<u8> {
    let mut lines = vec![(1, u64::from(n_elems))];
    lines.extend((1..n).map(|i| (i + 1, 0)));
    let mut w = TraceDbWriter::new(Cursor::new(Vec::new()), &lines).expect("layout");
    let elems: Vec<TraceElement> = (0..n_elems)
        .map(|i| TraceElement {
            timestamp: u64::from(i) + 100,
            ctx_id: 1,
        })
        .collect();
    w.append(0, &elems).expect("line 0");
    let mut bytes = w.finish().expect("finish").into_inner();
    let view = TraceDb::parse(&bytes).expect("written trace.db");
    let first = view.trace(0).expect("line 0").offset as usize;
    let offsets: Vec<usize> = (1..n)
        .map(|i| view.trace(i).expect("line").offset as usize)
        .collect();
    // pStart and pEnd of line 0 over every other line's.
    let run: [u8; 0x10] = bytes[first + 8..first + 0x18].try_into().expect("CTH");
    for at in offsets {
        bytes[at + 8..at + 0x18].copy_from_slice(&run);
    }
    bytes
}

#[test]
fn trace_lines_sharing_one_run_are_refused() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 60,000 lines over one run of 60,000 elements: 3.6 billion elements by alias.
    let bytes = traces_on_one_run(60_000, 60_000);
    let view = TraceDb::parse(&bytes).expect("headers are fine");
    let (result, used) = counted(|| view.validate());
    let e = result.expect_err("aliased lines");
    assert!(
        matches!(
            e,
            Error::Overlap {
                field: "CTH.pStart",
                ..
            }
        ),
        "{e}"
    );
    assert!(used <= bytes.len() * 2, "validate allocated {used} bytes");
    let (result, used) = counted(|| profcodec_hpctoolkit::model::Traces::from_read(&view));
    assert!(matches!(result, Err(Error::Overlap { .. })));
    assert!(
        used <= bytes.len() * 2,
        "the model copy allocated {used} bytes"
    );
    // The streaming reader (the timeline converter's) refuses the file before any line, with
    // validate's error, checked on the head alone.
    let (result, used) = counted(|| TraceReader::new(Cursor::new(&bytes[..])));
    let streamed = result.expect_err("aliased lines, streamed");
    assert_eq!(streamed.to_string(), e.to_string());
    // The head (read into a growing buffer) and the 32 bytes per line of the check.
    assert!(used <= bytes.len() * 3, "the reader allocated {used} bytes");
    println!("trace.db {} bytes: {e}", bytes.len());
}

/// A cct.db of `n` contexts all pointing at context 1's block of `n_values` values.
fn contexts_on_one_block(n: u32, n_values: u32) -> Vec<u8> {
    let mut w = CctDbWriter::new(Cursor::new(Vec::new()), n).expect("layout");
    let values: Vec<ProfileValue> = (0..n_values)
        .map(|i| ProfileValue {
            prof_index: i + 1,
            value: 1.0,
        })
        .collect();
    w.write_context(
        1,
        &[MetricStart {
            metric_id: 0,
            start: 0,
        }],
        &values,
    )
    .expect("block");
    let mut bytes = w.finish().expect("finish").into_inner();
    let view = CctDb::parse(&bytes).expect("written cct.db");
    let first = view.context(1).expect("context 1").offset as usize;
    let offsets: Vec<usize> = (2..n)
        .map(|i| view.context(i).expect("context").offset as usize)
        .collect();
    let block: [u8; 0x20] = bytes[first..first + 0x20].try_into().expect("CSVB");
    for at in offsets {
        bytes[at..at + 0x20].copy_from_slice(&block);
    }
    bytes
}

#[test]
fn contexts_sharing_one_block_are_refused() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 100,000 contexts on one block of 100,000 values: 10 billion values by alias.
    let bytes = contexts_on_one_block(100_000, 100_000);
    let view = CctDb::parse(&bytes).expect("headers are fine");
    let (result, used) = counted(|| view.validate());
    let e = result.expect_err("aliased blocks");
    assert!(matches!(e, Error::Overlap { .. }), "{e}");
    assert!(used <= bytes.len() * 2, "validate allocated {used} bytes");
    let (result, used) = counted(|| profcodec_hpctoolkit::model::ContextMajor::from_read(&view));
    assert!(matches!(result, Err(Error::Overlap { .. })));
    assert!(
        used <= bytes.len() * 2,
        "the model copy allocated {used} bytes"
    );
    println!("cct.db {} bytes: {e}", bytes.len());
}

/// A meta.db of `n` source files whose paths all point at one `len`-byte path, or (with
/// `suffix`) at a suffix of it.
fn files_on_one_string(n: u32, len: usize, suffix: bool) -> Vec<u8> {
    let mut meta = Meta {
        title: "aliased".into(),
        ..Meta::default()
    };
    meta.files.push(SourceFile {
        flags: 0,
        path: "p".repeat(len),
    });
    meta.files.extend((1..n).map(|i| SourceFile {
        flags: 0,
        path: format!("f{i}"),
    }));
    let mut bytes = Vec::new();
    write_meta(&meta, &mut bytes).expect("meta.db");
    let view = MetaDb::parse(&bytes).expect("written meta.db");
    let long = view
        .file(profcodec_hpctoolkit::read::FileIndex(0))
        .expect("file 0")
        .path;
    let p_long = long.as_ptr() as u64 - bytes.as_ptr() as u64;
    let files_at = le_u64(&bytes, 0x78) as usize;
    let p_files = le_u64(&bytes, files_at) as usize;
    let stride = usize::from(bytes[files_at + 0xc]);
    let target = if suffix { p_long + 1 } else { p_long };
    for i in 1..n as usize {
        let at = p_files + i * stride + 8;
        bytes[at..at + 8].copy_from_slice(&target.to_le_bytes());
    }
    bytes
}

#[test]
fn file_paths_sharing_one_long_string_are_refused() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // 16,000 source files on one 250,000-byte path: 4 GB of names from 0.5 MB.
    let bytes = files_on_one_string(16_000, 250_000, false);
    let view = MetaDb::parse(&bytes).expect("headers are fine");
    let (result, used) = counted(|| view.validate());
    let e = result.expect_err("amplified strings");
    assert!(matches!(e, Error::Invalid { field: "char*", .. }), "{e}");
    assert!(used <= bytes.len(), "validate allocated {used} bytes");
    let (result, used) = counted(|| Meta::from_read(&view));
    assert!(result.is_err());
    assert!(used <= bytes.len(), "the model copy allocated {used} bytes");
    let (result, _) = counted(|| Database::from_parts(bytes.as_slice(), None, None, None));
    assert!(
        result.is_err(),
        "opening the database checks meta.db's strings"
    );
    println!("meta.db {} bytes: {e}", bytes.len());

    // Pointers into the middle of a string: never written by hpcprof, refused however few.
    let bytes = files_on_one_string(3, 40, true);
    let e = MetaDb::parse(&bytes)
        .expect("headers")
        .validate()
        .expect_err("suffix");
    assert!(
        matches!(
            e,
            Error::Overlap {
                field: "SFS.pPath",
                other_field: "SFS.pPath",
                ..
            }
        ),
        "{e}"
    );

    // Whole strings shared by a few pointers, as hpcprof's interned string table does: fine.
    let bytes = files_on_one_string(50, 40, false);
    MetaDb::parse(&bytes)
        .expect("headers")
        .validate()
        .expect("shared whole strings within the bound");
}

#[test]
fn metrics_sharing_one_scope_instance_array_are_refused() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut b = profcodec_hpctoolkit::model::DatabaseBuilder::new("metrics");
    for _ in 0..3 {
        b.add_cputime_metric();
    }
    let db = b.finish();
    let mut bytes = Vec::new();
    write_meta(&db.meta, &mut bytes).expect("meta.db");
    let metrics_at = le_u64(&bytes, 0x38) as usize;
    let p_metrics = le_u64(&bytes, metrics_at) as usize;
    let sz_metric = usize::from(bytes[metrics_at + 0xc]);
    // Metric 2's pScopeInsts := metric 0's.
    let first = le_u64(&bytes, p_metrics + 8);
    let at = p_metrics + 2 * sz_metric + 8;
    bytes[at..at + 8].copy_from_slice(&first.to_le_bytes());
    let e = MetaDb::parse(&bytes)
        .expect("headers")
        .validate()
        .expect_err("aliased");
    assert!(
        matches!(
            e,
            Error::Overlap {
                field: "MD.pScopeInsts",
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.offset(), Some(at as u64));
}

/// Small files of each shape for the fuzz targets' corpora.
#[test]
#[ignore = "writes into fuzz/corpus; run by hand"]
fn write_fuzz_seeds() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    let write = |dir: &str, name: &str, bytes: &[u8]| {
        std::fs::write(root.join(dir).join(name), bytes).expect("write seed");
    };
    write(
        "hpctoolkit_profile",
        "aliased-blocks.db",
        &profiles_on_one_block(6, 4),
    );
    write(
        "hpctoolkit_trace",
        "aliased-lines.db",
        &traces_on_one_run(5, 4),
    );
    write(
        "hpctoolkit_cct",
        "aliased-blocks.db",
        &contexts_on_one_block(6, 3),
    );
    write(
        "hpctoolkit_meta",
        "aliased-paths.db",
        &files_on_one_string(6, 64, false),
    );
    write(
        "hpctoolkit_meta",
        "suffix-paths.db",
        &files_on_one_string(4, 16, true),
    );
}
