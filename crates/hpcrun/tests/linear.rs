//! Linear work: inputs built at a size where a pass that rescans a growing structure
//! per record would take seconds. Each case counts the steps of the helper
//! ([`profcodec_hpcrun::work`], per thread) and the bytes allocated (the counting allocator),
//! never the time.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::sync::Mutex;

use profcodec_hpcrun::*;

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// Allocation is counted process-wide: the tests take turns, whole, so that no other test
/// allocates while one measures.
static ALLOCATING: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    ALLOCATING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` and returns its result, the steps it counted and the bytes it allocated in all.
/// The caller holds [`turn`].
fn measured<T>(f: impl FnOnce() -> T) -> (T, u64, usize) {
    work::reset();
    let before = A.total_allocated();
    let out = f();
    (out, work::steps(), A.total_allocated() - before)
}

/// A 04.00 file with one metric, `nodes` nodes (a chain when `chain`, else all roots) and a value
/// of 1 on each.
fn v4(nodes: u32, chain: bool) -> Measurement {
    let mut b = MeasurementBuilder::new(Version::V0400B);
    let metric = b.metric("CPUTIME (sec)", ValueFormat::Int, 1);
    let lm = b.load_module("/bin/demo");
    let mut parent = None;
    for i in 0..nodes {
        let n = b.node(parent, lm, u64::from(i));
        b.add(n, metric, MetricValue::Int(1));
        if chain {
            parent = Some(n);
        }
    }
    b.build()
}

/// hpcrun 04.00b `info` on a hostile file: a 65,535-entry id tuple against a 65,535-entry dictionary.
/// Every tuple kind is found at the end of the dictionary (kinds descending), so a scan per entry
/// would compare 65,535 x ~57,000 times.
fn id_tuple_file() -> Vec<u8> {
    id_tuple_file_of(u16::MAX)
}

fn id_tuple_file_of(entries: u16) -> Vec<u8> {
    let mut m = v4(4, true);
    m.dictionary = (0..entries)
        .rev()
        .map(|kind| DictionaryEntry {
            kind,
            name: Text::from(format!("K{kind}")),
        })
        .collect();
    m.sparse.as_mut().unwrap().id_tuple = (0..entries)
        .map(|i| IdTupleEntry {
            kind: i & 0x3fff,
            physical: u64::from(i),
            logical: u64::from(i),
        })
        .collect();
    write_measurement(&m).unwrap()
}

#[test]
fn a_65535_entry_id_tuple_is_named_in_linear_steps() {
    let _turn = turn();
    let bytes = id_tuple_file();
    assert!(bytes.len() > 1_500_000, "{}", bytes.len());
    let m = read_measurement(&bytes).unwrap();
    let (names, steps, allocated) = measured(|| m.id_tuple_names());
    assert_eq!(names.len(), 65_535);
    assert_eq!(names[3].1.unwrap(), "K3");
    assert_eq!(
        steps,
        2 * 65_535,
        "one step per dictionary entry and per tuple entry"
    );
    // The names (32 bytes an entry) and a fixed table of 2^14 kinds.
    assert!(allocated < 40 * 65_535 + (256 << 10), "{allocated} bytes");
}

#[test]
fn inclusive_sums_of_a_deep_chain_take_one_walk() {
    let _turn = turn();
    const N: u32 = 200_000;
    let m = v4(N, true);
    let (sums, steps, allocated) = measured(|| m.inclusive_sums(0, 0));
    assert_eq!(sums.len(), N as usize);
    let root = CctIndex::new(&m.epochs[0].cct).roots().next().unwrap();
    assert_eq!(sums[root], f64::from(N));
    // The chain's node ids run 1..=N in file order: the leaf holds only itself.
    assert_eq!(sums[N as usize - 1], 1.0);
    // A subtree walk per node would take N^2 / 2 = 2e10 steps.
    assert!(steps <= 4 * u64::from(N), "{steps} steps");
    assert!(allocated < 200 * N as usize, "{allocated} bytes");
}

#[test]
fn values_of_every_node_cost_each_value_once_even_when_starts_go_up_and_down() {
    let _turn = turn();
    // An unvalidated context index whose starts alternate 0, N, 0, N, ...: each pair (0, N)
    // is a well-formed range, so a reader taking every such range would cover the N values once
    // per context.
    const N: u32 = 100_000;
    let mut m = v4(N, false);
    let sparse = m.sparse.as_mut().unwrap();
    for (i, c) in sparse.contexts.iter_mut().enumerate() {
        c.start = if i % 2 == 0 { 0 } else { u64::from(N) };
    }
    let (sums, steps, _) = measured(|| m.self_values(0, 0));
    assert_eq!(sums.len(), N as usize);
    assert!(steps <= 3 * u64::from(N), "{steps} steps");
    assert!(sums.iter().sum::<f64>() <= f64::from(N));
}

#[test]
#[cfg(feature = "profile")]
fn converting_to_the_profile_model_is_linear() {
    let _turn = turn();
    // A 200,000-deep chain: a converter that walked each node's path to the root would take
    // 2e10 steps; one that rescanned the load map per node 200,000 x modules.
    const N: u32 = 200_000;
    let quarter = v4(N / 4, true);
    let (_, _, allocated_quarter) = measured(|| quarter.to_profile().unwrap());
    let m = v4(N, true);
    let (profile, steps, allocated) = measured(|| m.to_profile().unwrap());
    assert_eq!(profile.nodes().len(), N as usize);
    let total: f64 = profile
        .node_values()
        .iter()
        .filter_map(|v| v.self_value)
        .sum();
    assert_eq!(total, f64::from(N));
    // One preorder walk of the CCT (each node once) and one pass over the values.
    assert!(steps <= 4 * u64::from(N), "{steps} steps");
    // A frame, a node, a value and their hash-index entries per CCT node (with the growth of
    // their tables: about 640 bytes a node in all), and four times the nodes cost at most
    // about four times the bytes.
    assert!(allocated < 1000 * N as usize, "{allocated} bytes");
    assert!(
        allocated < 5 * allocated_quarter,
        "{allocated} bytes for {N} nodes, {allocated_quarter} for a quarter"
    );

    // A 65,535-entry id tuple becomes one context of 65,535 ids, each named once.
    let m = read_measurement(&id_tuple_file()).unwrap();
    let (profile, steps, _) = measured(|| m.to_profile().unwrap());
    let (_, context) = profile.contexts().next().unwrap();
    assert_eq!(context.ids.len(), 65_535 - 65_535 / 16_384 - 1);
    assert!(steps <= 3 * 65_535, "{steps} steps");
}

#[test]
fn trailing_bytes_after_a_04_00_footer_are_found_in_one_pass() {
    let _turn = turn();
    let m = v4(16, true);
    let file = write_measurement(&m).unwrap();
    // 1 MiB of footer magics: each is a candidate footer, each checked in O(1).
    let mut data = file.clone();
    for _ in 0..(1 << 20) / 8 {
        data.extend_from_slice(b"HPCRUNsm");
    }
    data.push(0); // the file does not end with the magic
    let (view, steps, allocated) = measured(|| V4View::parse_prefix(&data).unwrap());
    assert_eq!(view.end(), file.len() as u64);
    view.validate().unwrap();
    assert!(
        steps <= 1,
        "the real footer is the first candidate: {steps}"
    );
    assert!(allocated < 64 << 10, "{allocated} bytes");
    assert_eq!(
        read_measurement(&data).unwrap_err(),
        Error::TrailingData {
            offset: file.len() as u64,
            size: (data.len() - file.len()) as u64
        }
    );
    let (back, end) = read_measurement_prefix(&data).unwrap();
    assert_eq!((back, end), (m, file.len() as u64));

    // Candidates that do not name their own offset are each checked once.
    let mut fake = b"HPCRUN-profile____04.00b".to_vec();
    fake.resize(4096, 0);
    for _ in 0..(1 << 20) / 8 {
        fake.extend_from_slice(b"HPCRUNsm");
    }
    fake.push(0);
    let (err, steps, _) = measured(|| V4View::parse_prefix(&fake).unwrap_err());
    assert!(steps <= (1 << 20) / 8 + 1, "{steps} steps");
    assert!(err.offset().unwrap() < fake.len() as u64);
}

#[test]
fn trailing_bytes_after_the_last_epoch_are_trailing_data() {
    let _turn = turn();
    for version in [
        Version::V0200L,
        Version::V0198B,
        Version::V0200B,
        Version::V0200BNoAux,
        Version::V0300B,
    ] {
        let mut b = MeasurementBuilder::new(version);
        let metric = b.metric("cycles", ValueFormat::Int, 1);
        let lm = b.load_module("/bin/demo");
        let n = b.node(None, lm, 0x400000);
        b.add(n, metric, MetricValue::Int(7));
        let m = b.build();
        let file = write_measurement(&m).unwrap();
        let mut data = file.clone();
        data.extend_from_slice(&[0u8; 4096]);
        let err = read_measurement(&data).unwrap_err();
        assert_eq!(
            err,
            Error::TrailingData {
                offset: file.len() as u64,
                size: 4096
            },
            "{version}"
        );
        assert!(
            err.to_string()
                .starts_with("data after the end of the measurement")
        );
        let (back, end) = read_measurement_prefix(&data).unwrap();
        assert_eq!(end, file.len() as u64, "{version}");
        assert_eq!(back.epochs, m.epochs, "{version}");
        // A cut epoch tag is a truncation, not trailing data.
        let mut cut = file.clone();
        cut.extend_from_slice(b"EPOC");
        let err = read_measurement(&cut).unwrap_err();
        assert!(matches!(err, Error::Truncated(_)), "{version}: {err}");
    }
}

#[test]
fn a_folder_lists_regular_files_only_paired_and_sorted_by_thread() {
    let _turn = turn();
    let dir = std::env::temp_dir().join(format!("hpcrun-linear-folder-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let profile = write_measurement(&v4(3, true)).unwrap();
    for thread in ["000", "001", "999", "1000"] {
        let stem = format!("my-prog-000000-{thread}-11ac0300-5176-0");
        std::fs::write(dir.join(format!("{stem}.hpcrun")), &profile).unwrap();
        std::fs::write(
            dir.join(format!("{stem}.hpctrace")),
            write_trace(&Trace::default()),
        )
        .unwrap();
    }
    std::fs::write(dir.join("notes.txt"), b"not a measurement").unwrap();
    // A FIFO named like a profile: opening it would block until a writer came.
    let fifo = dir.join("my-prog-000000-002-11ac0300-5176-0.hpcrun");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    let folder = MeasurementFolder::open(&dir).unwrap();
    let threads: Vec<Option<u64>> = folder.threads().iter().map(|t| t.thread).collect();
    assert_eq!(threads, [Some(0), Some(1), Some(999), Some(1000)]);
    for t in folder.threads() {
        assert_eq!(t.rank, Some(0));
        assert!(t.profile.is_some() && t.trace.is_some(), "{t:?}");
        assert_eq!(t.read_profile().unwrap().unwrap().epochs[0].cct.len(), 3);
        assert!(t.read_trace().unwrap().unwrap().records.is_empty());
    }
    assert_eq!(folder.files().count(), 8);
    if made.is_ok_and(|s| s.success()) {
        assert!(folder.files().all(|f| f != fifo));
    }
    std::fs::remove_dir_all(&dir).unwrap();
    let empty = std::env::temp_dir().join(format!("hpcrun-linear-empty-{}", std::process::id()));
    std::fs::create_dir_all(&empty).unwrap();
    assert!(matches!(
        MeasurementFolder::open(&empty),
        Err(FolderError::Empty(_))
    ));
    std::fs::remove_dir_all(&empty).unwrap();
}

/// Writes small files of each shape above into `$HPCRUN_SEED_DIR` (the fuzz seeds of
/// `fuzz/corpus/hpcrun/`): `cargo test -p profcodec-hpcrun --test linear -- --ignored`.
#[test]
#[ignore = "writes the fuzz seeds when HPCRUN_SEED_DIR is set"]
fn write_fuzz_seeds() {
    let _turn = turn();
    // The full-size hostile file, for timing the CLI by hand (BENCHMARKS.md, hpcrun).
    if let Some(dir) = std::env::var_os("HPCRUN_HOSTILE_DIR") {
        let path = std::path::Path::new(&dir).join("id-tuple-65535.hpcrun");
        std::fs::write(path, id_tuple_file()).unwrap();
    }
    let Some(dir) = std::env::var_os("HPCRUN_SEED_DIR") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).unwrap();
    write("linear-id-tuple-150.hpcrun", &id_tuple_file_of(150));
    write(
        "linear-chain-100.hpcrun",
        &write_measurement(&v4(100, true)).unwrap(),
    );
    let mut up_down = v4(64, false);
    for (i, c) in up_down
        .sparse
        .as_mut()
        .unwrap()
        .contexts
        .iter_mut()
        .enumerate()
    {
        c.start = if i % 2 == 0 { 0 } else { 64 };
    }
    write(
        "linear-starts-up-and-down.hpcrun",
        &write_measurement(&up_down).unwrap(),
    );
    let mut trailing = write_measurement(&v4(4, true)).unwrap();
    for _ in 0..64 {
        trailing.extend_from_slice(b"HPCRUNsm");
    }
    trailing.push(0);
    write("linear-footer-candidates.hpcrun", &trailing);
    let mut b = MeasurementBuilder::new(Version::V0200B);
    let metric = b.metric("cycles", ValueFormat::Int, 1);
    let lm = b.load_module("/bin/demo");
    let n = b.node(None, lm, 0x400000);
    b.add(n, metric, MetricValue::Int(7));
    let mut epochs = write_measurement(&b.build()).unwrap();
    epochs.extend_from_slice(&[0x55; 64]);
    write("linear-trailing-after-epochs.hpcrun", &epochs);
    // A trace has no end marker: what follows the last whole record is a cut record.
    let trace = Trace {
        records: (0..32)
            .map(|i| TraceRecord {
                time: 1000 + i,
                ctx: 1,
                metric: None,
            })
            .collect(),
        ..Trace::default()
    };
    let mut cut = write_trace(&trace);
    cut.extend_from_slice(&[0x55; 7]);
    std::fs::write(dir.join("../hpctrace/linear-cut-record.hpctrace"), cut).unwrap();
}
