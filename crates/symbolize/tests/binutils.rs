//! Addresses of a small C and a small C++ program, built here with `gcc`/`g++ -g -O0` (and one
//! inlining `-O2` build), resolved as binutils' `addr2line -f -i -C` and `nm` resolve them.
//!
//! Without gcc, g++ or binutils the tests say so loudly and pass, except in CI (`CI` set),
//! where they fail (`profcodec_testkit::native`).

use std::path::Path;

use profcodec_symbolize::{
    Binary, Probe, Rejection, Resolution, SearchPath, SourceFrame, Symbolizer,
};
use profcodec_testkit::native::{C_PROGRAM, CPP_PROGRAM, build, nm_functions, tools_present};

/// binutils' frames of `address`, outermost first, as [`SourceFrame`]s.
fn binutils_frames(bin: &Path, address: u64) -> Vec<SourceFrame> {
    profcodec_testkit::native::addr2line(bin, address)
        .into_iter()
        .map(|f| SourceFrame {
            function: f.function,
            file: f.file,
            line: f.line,
        })
        .collect()
}

/// Every few bytes of every function nm lists: our frames equal binutils'.
fn compare_all(bin: &Path, only: impl Fn(&str) -> bool) -> usize {
    let mut binary = Binary::open(bin).expect("open binary");
    assert!(binary.has_debug_info());
    let mut compared = 0;
    for (start, size, name) in nm_functions(bin) {
        if !only(&name) {
            continue;
        }
        for address in (start..start + size).step_by(3) {
            let ours = binary.lookup(Probe::leaf(address));
            let theirs = binutils_frames(bin, address);
            assert_eq!(&*ours, &theirs[..], "{name} at 0x{address:x}");
            compared += 1;
        }
    }
    compared
}

#[test]
fn c_functions_and_lines_match_addr2line() {
    if !tools_present(&["gcc", "addr2line", "nm"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc", &["-g", "-O0"]);
    let n = compare_all(&bin, |n| ["leaf", "middle", "main", "square"].contains(&n));
    assert!(n > 30, "{n} addresses compared");
}

#[test]
fn inlined_calls_match_addr2line() {
    if !tools_present(&["gcc", "addr2line", "nm"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc", &["-g", "-O2"]);
    let n = compare_all(&bin, |n| ["leaf", "middle", "main"].contains(&n));
    assert!(n > 5, "{n} addresses compared");
    // Somewhere in leaf, square is inlined: two frames.
    let mut binary = Binary::open(&bin).expect("open");
    let (start, size, _) = nm_functions(&bin)
        .into_iter()
        .find(|f| f.2 == "leaf")
        .expect("leaf");
    let inlined = (start..start + size).any(|a| {
        let frames = binary.lookup(Probe::leaf(a));
        frames.len() == 2 && frames[1].function.as_deref() == Some("square")
    });
    assert!(inlined, "square inlined into leaf");
}

#[test]
fn cpp_names_are_demangled_as_addr2line_does() {
    if !tools_present(&["g++", "addr2line", "nm"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = build(dir.path(), "grid.cpp", CPP_PROGRAM, "g++", &["-g", "-O0"]);
    let n = compare_all(&bin, |n| n.contains("sim") || n == "main");
    assert!(n > 30, "{n} addresses compared");
    let mut binary = Binary::open(&bin).expect("open");
    let (start, ..) = nm_functions(&bin)
        .into_iter()
        .find(|f| f.2.contains("sweep"))
        .expect("sweep");
    let frames = binary.lookup(Probe::leaf(start));
    assert_eq!(
        frames[0].function.as_deref(),
        Some(
            "sim::Grid<double, 64>::sweep(std::map<std::__cxx11::basic_string<char, \
             std::char_traits<char>, std::allocator<char> >, double, \
             std::less<std::__cxx11::basic_string<char, std::char_traits<char>, \
             std::allocator<char> > >, std::allocator<std::pair<std::__cxx11::basic_string<char, \
             std::char_traits<char>, std::allocator<char> > const, double> > > const&)"
        )
    );
}

#[test]
fn another_binary_of_the_same_name_is_rejected() {
    if !tools_present(&["gcc", "nm"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let ran = build(dir.path(), "prog.c", C_PROGRAM, "gcc", &["-g", "-O0"]);
    // The addresses of the program that ran: return addresses in main and middle, a leaf in leaf.
    let functions = nm_functions(&ran);
    let f = |name: &str| {
        functions
            .iter()
            .find(|f| f.2 == name)
            .expect("function")
            .clone()
    };
    let mut binary = Binary::open(&ran).expect("open");
    let call_after = |b: &mut Binary, (start, size, _): (u64, u64, String)| {
        (start + 1..=start + size)
            .find(|&a| b.check(&[Probe::ret(a)], None).is_ok())
            .expect("a call")
    };
    let probes = vec![
        Probe::ret(call_after(&mut binary, f("main"))),
        Probe::ret(call_after(&mut binary, f("middle"))),
        Probe::leaf(f("leaf").0 + 8),
    ];
    // Another program under the same name, somewhere else.
    let other_dir = dir.path().join("other");
    std::fs::create_dir(&other_dir).expect("mkdir");
    let other_src = C_PROGRAM.replace(
        "s += square(i);",
        "s += square(i) * 7 + n / (i + 1) - 3 * i;",
    );
    let other = build(
        &other_dir,
        "prog.c",
        &format!("int pad[4096];\nvoid a(void) {{}}\nvoid b(void) {{ a(); a(); }}\n{other_src}"),
        "gcc",
        &["-g", "-O0"],
    );
    // The folder of the program that ran is searched after the other's.
    let mut symbolizer =
        Symbolizer::new(SearchPath::new([other_dir.clone(), dir.path().to_owned()]));
    let recorded = ran.to_string_lossy().into_owned();
    match symbolizer.resolve(&recorded, &probes, None) {
        Resolution::Resolved { path, .. } => {
            assert_eq!(path, ran, "the right one, after the wrong one")
        }
        other => panic!("{other}"),
    }
    // With the right one gone, nothing is resolved, and the report says why.
    std::fs::remove_file(&ran).expect("rm");
    let mut symbolizer = Symbolizer::new(SearchPath::new([other_dir, dir.path().to_owned()]));
    match symbolizer.resolve(&recorded, &probes, None) {
        Resolution::Rejected { candidates } => {
            assert_eq!(candidates.len(), 1);
            assert!(
                matches!(
                    candidates[0].1,
                    Rejection::NotCallSites { .. } | Rejection::OutsideCode { .. }
                ),
                "{:?}",
                candidates[0]
            );
        }
        other => panic!("{other}"),
    }
    let _ = other;
}

#[test]
fn a_missing_binary_is_not_found() {
    let mut symbolizer = Symbolizer::new(SearchPath::default());
    let r = symbolizer.resolve("/nonexistent/prog", &[Probe::leaf(0x1000)], None);
    assert!(matches!(r, Resolution::NotFound { .. }), "{r}");
}
