//! Hostile measurement folders (the checklist of `shared/design/HOSTILE.md`): companion files
//! that lead out of the folder or are not files, a damaged profile, entries that are not a
//! thread's files, a kernel listing that inflates past its budget. Each is refused or left out
//! in words naming the file and why; none is read outside the folder, none hangs.

use std::path::{Path, PathBuf};

use profcodec_hpcprof::{Made, Options, ProfError, make, prof};
use profcodec_hpcrun::{LoadModule, read_measurement, write_measurement};

#[global_allocator]
static ALLOCATOR: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// The profile of demo.m (no companion files).
fn demo_profile() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/hpcprof/demo.m/demo-000000-000-0-1-0.hpcrun")
}

/// A copy of demo.m at `to` whose load map also names `modules` (recorded relative to the
/// measurement folder, as hpcrun records its vdso and kernel symbols).
fn demo_naming(to: &Path, modules: &[&str]) -> PathBuf {
    let mut m = read_measurement(&std::fs::read(demo_profile()).expect("demo profile"))
        .expect("demo profile decodes");
    let loadmap = &mut m.epochs[0].loadmap;
    for name in modules {
        let id = loadmap.iter().map(|lm| lm.id).max().unwrap_or(0) + 1;
        loadmap.push(LoadModule {
            id,
            name: (*name).into(),
            ..LoadModule::default()
        });
    }
    std::fs::create_dir_all(to).expect("measurement folder");
    let profile = to.join("demo-000000-000-0-1-0.hpcrun");
    std::fs::write(&profile, write_measurement(&m).expect("writes")).expect("profile");
    profile
}

fn made(m: &Path) -> Made {
    make(&[m], &Options::default()).expect("the database is made")
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

#[test]
fn a_vdso_linked_out_of_the_folder_is_refused_in_words() {
    let tmp = tempfile::tempdir().unwrap();
    let secret = tmp.path().join("secret.so");
    std::fs::write(&secret, b"\x7fELF not read").unwrap();
    let m = tmp.path().join("demo.m");
    demo_naming(&m, &["vdso/linked.vdso", "vdso/../../secret.so"]);
    std::fs::create_dir(m.join("vdso")).unwrap();
    std::os::unix::fs::symlink(&secret, m.join("vdso/linked.vdso")).unwrap();

    let made = made(&m);
    let linked: Vec<&String> = made
        .warnings
        .iter()
        .filter(|w| w.contains("linked.vdso"))
        .collect();
    assert_eq!(linked.len(), 1, "{:?}", made.warnings);
    let w = linked[0];
    assert!(
        w.contains("outside the folders allowed (the measurement folder")
            && w.contains("secret.so")
            && w.contains("symbols left out"),
        "{w}"
    );
    // A `..` path is not a file of the folder: never opened (hpcprof's --foreign).
    assert!(
        !made.warnings.iter().any(|w| w.contains("../")),
        "{:?}",
        made.warnings
    );
}

#[test]
fn a_structure_file_that_is_a_fifo_is_left_out_without_waiting() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("demo.m");
    demo_naming(&m, &[]);
    std::fs::create_dir(m.join("structs")).unwrap();
    mkfifo(&m.join("structs/pipe.hpcstruct"));
    let outside = tmp.path().join("outside.hpcstruct");
    std::fs::write(&outside, "<HPCToolkitStructure/>").unwrap();
    std::os::unix::fs::symlink(&outside, m.join("structs/linked.hpcstruct")).unwrap();
    std::fs::write(
        m.join("structs/damaged.hpcstruct"),
        "<HPCToolkitStructure><LM n=",
    )
    .unwrap();

    let made = made(&m);
    let about = |name: &str| -> String {
        made.warnings
            .iter()
            .find(|w| w.contains(name))
            .unwrap_or_else(|| panic!("no warning about {name}: {:?}", made.warnings))
            .clone()
    };
    let fifo = about("pipe.hpcstruct");
    assert!(fifo.contains("a FIFO, not a regular file"), "{fifo}");
    assert!(fifo.contains("structure file left out"), "{fifo}");
    let linked = about("linked.hpcstruct");
    assert!(linked.contains("outside the folders allowed"), "{linked}");
    let damaged = about("damaged.hpcstruct");
    assert!(damaged.contains("structure file left out"), "{damaged}");
    // Left out, the database is the one made without structure.
    let ignored = prof(
        &[&m],
        &Options {
            ignore_structs: true,
            ..Options::default()
        },
    )
    .unwrap();
    assert_eq!(made.database, ignored);
}

#[test]
fn a_damaged_profile_is_an_error_naming_the_file_and_the_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("demo.m");
    let profile = demo_naming(&m, &[]);
    let bytes = std::fs::read(&profile).unwrap();
    std::fs::write(&profile, &bytes[..bytes.len() / 2]).unwrap();
    let err = make(&[&m], &Options::default()).unwrap_err();
    assert!(matches!(err, ProfError::Decode { .. }), "{err:?}");
    let text = err.to_string();
    assert!(
        text.starts_with(&profile.display().to_string()) && text.contains("at byte 0x"),
        "{text}"
    );
}

#[test]
fn entries_that_are_no_threads_files_are_said() {
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("demo.m");
    demo_naming(&m, &[]);
    std::fs::write(m.join("notes.txt"), "stray").unwrap();
    std::fs::create_dir(m.join("old.hpcrun")).unwrap();
    std::fs::write(m.join("demo-000000-000-0-1-0.log"), "hpcrun's log").unwrap();
    std::fs::create_dir(m.join("structs")).unwrap();

    let made = made(&m);
    assert_eq!(made.warnings.len(), 1, "{:?}", made.warnings);
    assert_eq!(
        made.warnings[0],
        format!(
            "{}: 2 entries left out, not a regular .hpcrun or .hpctrace file nor one of hpcrun's \
             folders (structs, vdso, gpubins, kernel_symbols): notes.txt, old.hpcrun",
            m.display()
        )
    );
    // The database is the one of the profile alone.
    assert_eq!(
        made.database,
        prof(&[demo_profile()], &Options::default()).unwrap()
    );
}

#[test]
fn a_clean_folder_has_no_warning() {
    let demo = demo_profile();
    let made = made(demo.parent().unwrap());
    assert!(made.warnings.is_empty(), "{:?}", made.warnings);
}

#[test]
fn a_kernel_listing_inflating_past_its_budget_stops_there() {
    // 10 KB of xz that inflates to 65 MiB of text: refused from the sizes it declares, before
    // anything is inflated (the xz reader would hold all of it at once).
    let tmp = tempfile::tempdir().unwrap();
    let m = tmp.path().join("demo.m");
    demo_naming(&m, &["kernel_symbols/bomb"]);
    std::fs::create_dir(m.join("kernel_symbols")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/kernel-symbols-bomb.xz"),
        m.join("kernel_symbols/bomb"),
    )
    .unwrap();
    let options = Options {
        jobs: Some(1),
        ..Options::default()
    };
    let (made, allocated) =
        profcodec_testkit::hostile::capped(&ALLOCATOR, 32 << 20, || make(&[&m], &options));
    let made = made.expect("the database is made");
    assert_eq!(made.warnings.len(), 1, "{:?}", made.warnings);
    assert!(
        made.warnings[0].contains("kernel_symbols/bomb")
            && made.warnings[0].contains("inflates to more than 67108864 bytes"),
        "{}",
        made.warnings[0]
    );
    eprintln!("allocated {allocated} bytes in all");
}

#[test]
fn metrics_declared_but_unmeasured_cost_nothing_along_a_deep_chain() {
    // 1,000 metrics declared and a chain of 20,000 calls above the measured leaf: the values
    // propagated up the chain hold the one metric measured, not every metric declared (that
    // would be 20,000 x 1,000 x 4 scopes x 8 bytes = 640 MB).
    const METRICS: usize = 1_000;
    const DEPTH: usize = 20_000;
    let mut m = read_measurement(&std::fs::read(demo_profile()).expect("demo profile"))
        .expect("demo profile decodes");
    let measured = m.sparse.as_ref().expect("sparse values").contexts[0].ctx as i32;
    let epoch = &mut m.epochs[0];
    let template = epoch.metrics[0].clone();
    for i in 0..METRICS {
        let mut desc = template.clone();
        desc.name = format!("UNMEASURED{i}").into();
        epoch.metrics.push(desc);
    }
    let at = epoch
        .cct
        .iter()
        .position(|n| n.id == measured)
        .expect("the measured node");
    let leaf = epoch.cct[at];
    let first = epoch.cct.iter().map(|n| n.id).max().unwrap_or(0) + 1;
    let mut chain = Vec::with_capacity(DEPTH);
    let mut parent = leaf.parent;
    for id in (first..).take(DEPTH) {
        let mut node = leaf;
        node.id = id;
        node.parent = parent;
        parent = id;
        chain.push(node);
    }
    epoch.cct[at].parent = parent;
    epoch.cct.splice(at..at, chain);
    let bytes = write_measurement(&m).expect("writes");

    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("deep.m");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("deep-000000-000-0-1-0.hpcrun"), &bytes).unwrap();
    let options = Options {
        jobs: Some(1),
        ..Options::default()
    };
    let cap = profcodec_testkit::hostile::allocation_limit(bytes.len(), 64);
    let (made, allocated) =
        profcodec_testkit::hostile::capped(&ALLOCATOR, cap, || make(&[&folder], &options));
    let made = made.expect("the database is made");
    assert!(made.database.meta.contexts.len() > DEPTH);
    eprintln!(
        "{} input bytes, {allocated} bytes allocated in all (cap {cap})",
        bytes.len()
    );
}

#[test]
fn an_identifier_tuple_as_long_as_the_input_allows_is_refused_in_words() {
    let mut m = read_measurement(&std::fs::read(demo_profile()).expect("demo profile"))
        .expect("demo profile decodes");
    let tuple = &mut m.sparse.as_mut().expect("sparse values").id_tuple;
    let entry = tuple[0];
    tuple.resize(60_000, entry);
    let tmp = tempfile::tempdir().unwrap();
    let profile = tmp.path().join("long-000000-000-0-1-0.hpcrun");
    std::fs::write(&profile, write_measurement(&m).expect("writes")).unwrap();
    let err = make(&[&profile], &Options::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("an identifier tuple of 60000 entries (hpcrun writes a few; more than 64"),
        "{err}"
    );
}
