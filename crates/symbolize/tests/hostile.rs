//! Binaries made to hurt the symbolizer (HOSTILE.md classes 1, 5, 6 and 8): paths that leave
//! the folders binaries are read from, files that are no binary, DWARF nested past the
//! parser's stack, and another program of the same name.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use profcodec_symbolize::{
    Binary, MAX_DIE_DEPTH, Probe, Rejection, Resolution, SearchPath, Symbolizer,
};

fn probes() -> [Probe; 3] {
    [
        Probe::ret(MAIN_RETURN),
        Probe::ret(SECOND_RETURN),
        Probe::leaf(LEAF),
    ]
}

fn names(symbolizer: &mut Symbolizer, r: &Resolution) -> Vec<String> {
    let Resolution::Resolved { binary, .. } = r else {
        panic!("not resolved: {r}");
    };
    probes()
        .iter()
        .map(|p| {
            symbolizer.lookup(*binary, *p)[0]
                .function
                .clone()
                .unwrap_or_default()
        })
        .collect()
}

#[test]
fn a_recorded_path_outside_the_folders_is_never_opened() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut symbolizer = Symbolizer::new(SearchPath::new([dir.path().to_owned()]));
    let r = symbolizer.resolve("/etc/shadow", &probes(), None);
    match &r {
        Resolution::NotFound { tried, outside } => {
            assert_eq!(
                tried,
                &[dir.path().join("shadow"), dir.path().join("etc/shadow")]
            );
            assert_eq!(outside, &[PathBuf::from("/etc/shadow")]);
        }
        other => panic!("{other}"),
    }
    assert!(
        r.to_string()
            .ends_with("not read, outside the folders binaries are read from: /etc/shadow"),
        "{r}"
    );
    assert_eq!(symbolizer.binaries_read(), 0);
    // Without any folder, nothing at all is looked at.
    let mut symbolizer = Symbolizer::new(SearchPath::default());
    let r = symbolizer.resolve("/etc/passwd", &probes(), None);
    assert_eq!(
        r.to_string(),
        "not found (tried nothing); not read, outside the folders binaries are read from: \
         /etc/passwd"
    );
}

#[cfg(unix)]
#[test]
fn links_out_of_the_folders_and_system_files_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let secret = elsewhere.path().join("secret");
    std::fs::write(&secret, program(["main", "other", "work"], Vec::new())).expect("write");
    std::os::unix::fs::symlink(&secret, dir.path().join("prog")).expect("symlink");
    std::os::unix::fs::symlink("/proc/self/environ", dir.path().join("self")).expect("symlink");
    let mut symbolizer = Symbolizer::new(SearchPath::new([dir.path().to_owned()]));
    for (name, expected) in [
        ("prog", "through a symbolic link"),
        ("self", "/proc, /sys and /dev"),
    ] {
        let r = symbolizer.resolve(&format!("/bin/{name}"), &probes(), None);
        let Resolution::Rejected { candidates } = &r else {
            panic!("{r}")
        };
        assert!(
            matches!(
                candidates[0].1,
                Rejection::Escapes { .. } | Rejection::SystemPath { .. }
            ),
            "{r}"
        );
        assert!(r.to_string().contains(expected), "{r}");
    }
    // `..` in a recorded path does not climb out of a folder either.
    let r = symbolizer.resolve(&format!("/../../..{}", secret.display()), &probes(), None);
    assert!(!matches!(r, Resolution::Resolved { .. }), "{r}");
    assert_eq!(symbolizer.binaries_read(), 0);
    // A root that is `/` still never reads /proc.
    let mut symbolizer = Symbolizer::new(SearchPath::new([PathBuf::from("/")]));
    let r = symbolizer.resolve("/proc/self/environ", &probes(), None);
    assert!(r.to_string().contains("/proc, /sys and /dev"), "{r}");
}

#[cfg(unix)]
#[test]
fn fifos_folders_and_files_of_other_kinds_are_refused_unread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if made.is_ok_and(|s| s.success()) {
        let e = Binary::open(&fifo).expect_err("a FIFO");
        assert_eq!(
            e.to_string(),
            "not a binary: a device, FIFO or socket, not a regular file"
        );
    }
    let e = Binary::open(dir.path()).expect_err("a folder");
    assert_eq!(
        e.to_string(),
        "not a binary: a directory, not a regular file"
    );
    let shadow_like = dir.path().join("shadow");
    std::fs::write(&shadow_like, "root:$6$salt$hash:19000:0:99999:7:::\n").expect("write");
    let e = Binary::open(&shadow_like).expect_err("text");
    assert_eq!(
        e.to_string(),
        "not a binary: not an ELF file: it starts with 72 6f 6f 74 (7f 45 4c 46 expected)"
    );
    // An ELF of the wrong kind: a relocatable object (type 1), a core file (type 4).
    let mut object = program(["main", "other", "work"], Vec::new());
    object[16] = 1;
    let e = Binary::from_bytes("object.o", object).expect_err("ET_REL");
    assert!(e.to_string().contains("ELF type 1 at byte 16"), "{e}");
    // Section headers past the end of the file.
    let mut cut = program(["main", "other", "work"], Vec::new());
    cut.truncate(cut.len() - 8);
    let e = Binary::from_bytes("cut", cut).expect_err("cut");
    assert!(e.to_string().contains("end past the file's"), "{e}");
}

#[test]
fn a_2_gib_file_named_as_a_module_is_refused_from_its_header() {
    let dir = tempfile::tempdir().expect("tempdir");
    let big = dir.path().join("prog");
    let file = std::fs::File::create(&big).expect("create");
    file.set_len(2 << 30).expect("a sparse 2 GiB file");
    drop(file);
    let e = Binary::open(&big).expect_err("zeros");
    assert!(e.to_string().contains("not an ELF file"), "{e}");
    // An ELF header in front of 2 GiB of zeros: its sections are read, never the file whole
    // (the allocation test holds this under a cap).
    let header = program(["main", "other", "work"], Vec::new());
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .open(&big)
        .expect("open");
    std::io::Write::write_all(&mut f, &header).expect("write");
    drop(f);
    let mut symbolizer = Symbolizer::new(SearchPath::new([dir.path().to_owned()]));
    let r = symbolizer.resolve("prog", &probes(), None);
    assert!(matches!(r, Resolution::Resolved { .. }), "{r}");
    assert_eq!(names(&mut symbolizer, &r), ["main", "other", "work"]);
}

#[test]
fn dwarf_nested_past_the_bound_is_refused_and_the_symbol_table_used() {
    for depth in [300, 20_000] {
        let mut binary = Binary::from_bytes("deep", deep_program(depth)).expect("opens");
        assert!(!binary.has_debug_info());
        let why = binary.debug_info_refused().expect("refused").to_owned();
        assert!(
            why.contains(&format!("nests its entries deeper than {MAX_DIE_DEPTH}")),
            "{why}"
        );
        let frames = binary.lookup(Probe::leaf(LEAF));
        assert_eq!(frames.len(), 1);
        assert_eq!(frames[0].function.as_deref(), Some("work"));
    }
}

#[test]
fn dwarf_at_the_bound_is_read_on_a_default_thread_stack() {
    // Nesting: the unit at 0, the subprogram at 1, the inlined calls below it; the null entry
    // after the innermost is read one deeper still.
    let depth = MAX_DIE_DEPTH as usize - 2;
    // A spawned thread has the standard 2 MiB stack, a merge worker's.
    let frames = std::thread::spawn(move || {
        let mut binary = Binary::from_bytes("deep", deep_program(depth)).expect("opens");
        assert!(binary.has_debug_info(), "{:?}", binary.debug_info_refused());
        binary.lookup(Probe::leaf(LEAF)).len()
    })
    .join()
    .expect("no overflow");
    assert_eq!(frames, depth + 1);
}

#[test]
fn another_program_of_the_same_name_is_said_to_be_unverified() {
    let dir = tempfile::tempdir().expect("tempdir");
    // Same shape, other names: the addresses fit it as well as the program that ran.
    std::fs::write(
        dir.path().join("prog"),
        program(["main", "beta", "alpha"], Vec::new()),
    )
    .expect("write");
    let mut symbolizer = Symbolizer::new(SearchPath::new([dir.path().to_owned()]));
    let r = symbolizer.resolve("/build/prog", &probes(), None);
    let Resolution::Resolved { unverified, .. } = &r else {
        panic!("{r}")
    };
    assert_eq!(
        unverified.as_deref(),
        Some(
            "no build id was recorded to compare, and the 3 recorded addresses that fit its \
             code would fit another build of the same shape"
        )
    );
    assert_eq!(names(&mut symbolizer, &r), ["main", "beta", "alpha"]);
}

#[test]
fn a_binary_whose_code_does_not_fit_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("prog"),
        program(["main", "other", "work"], Vec::new()),
    )
    .expect("write");
    let mut symbolizer = Symbolizer::new(SearchPath::new([dir.path().to_owned()]));
    let r = symbolizer.resolve("prog", &[Probe::leaf(0x10_0000)], None);
    assert!(r.to_string().contains("lie outside its code"), "{r}");
    // Return addresses that follow no call.
    let r = symbolizer.resolve("prog", &[Probe::ret(0x31), Probe::ret(0x32)], None);
    assert!(r.to_string().contains("follow no call instruction"), "{r}");
    let _ = Path::new("");
}

/// The seeds of the `symbolize` fuzz target (`fuzz/corpus/symbolize`): the crafted binaries
/// above, each after the three addresses (see the target for the layout).
#[test]
#[ignore = "writes fuzz/corpus/symbolize; run by hand to make the seeds again"]
fn write_fuzz_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/symbolize");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let seeds = [
        ("plain", program(["main", "other", "work"], Vec::new())),
        ("inlined", deep_program(3)),
        ("deep", deep_program(2000)),
        (
            "zlib_bomb",
            bomb_program(compressed(1, 1_900_000_000, &zlib_zeros(1 << 20))),
        ),
        (
            "zstd_bomb",
            bomb_program(compressed(2, 1_900_000_000, &zstd_zeros(1 << 20))),
        ),
        (
            "zlib_past_claim",
            bomb_program(compressed(1, 4096, &zlib_zeros(1 << 16))),
        ),
    ];
    for (name, elf) in seeds {
        let mut seed = vec![3, 0b011, 0];
        for a in [MAIN_RETURN, SECOND_RETURN, LEAF] {
            seed.extend_from_slice(&a.to_le_bytes());
        }
        seed.extend(elf);
        assert!(seed.len() < 50_000, "{name}: {} bytes", seed.len());
        std::fs::write(dir.join(name), seed).expect("write");
    }
}
