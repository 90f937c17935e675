//! hpcrun measurements whose load maps point into programs built here (`gcc`/`g++ -g -O0`),
//! written with this crate's writer: every resolved address names the function, file and line
//! binutils' `addr2line -f -i -C` gives for it (a calling frame's return address minus one).
//!
//! Without gcc, g++ or binutils the tests say so loudly and pass, except in CI (`CI` set)
//! (`profcodec_testkit::native`).

use std::path::Path;

use profcodec_hpcrun::{
    LoadModuleId, MeasurementBuilder, MeasurementFolder, MetricValue, ModuleReport,
    ProfileConverter, SearchPath, ValueFormat, Version, read_measurement, write_measurement,
};
use profcodec_profile::{FrameKind, NodeId, Profile};
use profcodec_testkit::native::{C_PROGRAM, CPP_PROGRAM, disassemble, nm_name, tools_present};

fn build(dir: &Path, name: &str, source: &str, compiler: &str) -> std::path::PathBuf {
    profcodec_testkit::native::build(dir, name, source, compiler, &["-g", "-O0"])
}

/// binutils' (function, file, line) frames of `address`, outermost first (`??` and 0 where it
/// knows nothing).
fn addr2line(bin: &Path, address: u64) -> Vec<(String, String, u32)> {
    profcodec_testkit::native::addr2line(bin, address)
        .into_iter()
        .map(|f| {
            (
                f.function.unwrap_or_else(|| "??".to_owned()),
                f.file.unwrap_or_else(|| "??".to_owned()),
                f.line.unwrap_or(0),
            )
        })
        .collect()
}

/// The (function, file, line) frames the model gives CCT node `node` whose address is `ip`:
/// the node's frame and its ancestors' of the same address, outermost first.
fn model_frames(profile: &Profile, node: NodeId, ip: u64) -> Vec<(String, String, u32)> {
    let mut frames = Vec::new();
    let mut at = Some(node);
    while let Some(n) = at {
        let frame = profile.frame(profile.node(n).frame);
        if frame.address != Some(ip) {
            break;
        }
        let s = |id: Option<profcodec_profile::StringId>| id.map(|i| profile.string(i).to_owned());
        frames.push((
            s(frame.function).unwrap_or_default(),
            s(frame.file).unwrap_or_default(),
            frame.line.unwrap_or(0),
        ));
        let done = frame.kind == FrameKind::Function;
        at = profile.node(n).parent;
        if done {
            break;
        }
    }
    frames.reverse();
    frames
}

/// A measurement of `bin` (recorded as `recorded`): main calls middle calls leaf, sampled at
/// every instruction of leaf; also the nodes' (id, ip, is a calling frame).
fn c_measurement(bin: &Path, recorded: &str) -> (Vec<u8>, Vec<(u64, bool)>) {
    let main = disassemble(bin, "main");
    let middle = disassemble(bin, "middle");
    let leaf = disassemble(bin, "leaf");
    let mut b = MeasurementBuilder::new(Version::V0400B);
    b.header("program-name", "prog")
        .header("mpi-rank", "0")
        .header("thread-id", "0");
    let time = b.metric("CPUTIME (sec)", ValueFormat::Real, 1);
    b.load_module("/usr/lib/x86_64-linux-gnu/libc.so.6-not-used");
    let exe: LoadModuleId = b.load_module(recorded);
    let m = b.node(None, exe, main.returns[0]);
    let mid = b.node(Some(m), exe, middle.returns[0]);
    let mut probes = vec![(main.returns[0], true), (middle.returns[0], true)];
    for &ip in &leaf.instructions {
        let n = b.node(Some(mid), exe, ip);
        b.add(n, time, MetricValue::Real(0.01));
        probes.push((ip, false));
    }
    (write_measurement(&b.build()).expect("write"), probes)
}

fn check_against_addr2line(
    profile: &Profile,
    nodes: &[(i32, NodeId)],
    m: &profcodec_hpcrun::Measurement,
    bin: &Path,
) -> usize {
    let mut checked = 0;
    for node in &m.epochs[0].cct {
        let Some(&(_, model)) = nodes.iter().find(|(id, _)| *id == node.id) else {
            continue;
        };
        let calls = m.epochs[0].cct.iter().any(|c| c.parent == node.id);
        let probe = if calls { node.ip - 1 } else { node.ip };
        let ours = model_frames(profile, model, node.ip);
        assert_eq!(ours, addr2line(bin, probe), "ip 0x{:x}", node.ip);
        checked += 1;
    }
    checked
}

#[test]
fn c_addresses_resolve_as_addr2line_does() {
    if !tools_present(&["gcc", "addr2line", "objdump", "nm"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc");
    let (bytes, probes) = c_measurement(&bin, &bin.to_string_lossy());
    let m = read_measurement(&bytes).expect("read");
    let mut converter = ProfileConverter::with_symbols(SearchPath::new([dir.path().to_owned()]));
    let (_, nodes) = converter.add_with_nodes(&m, None).expect("convert");
    let reports = converter.module_reports();
    let profile = converter.finish();
    let checked = check_against_addr2line(&profile, &nodes, &m, &bin);
    assert_eq!(checked, probes.len());
    // leaf's loop inlines square: some samples have two frames.
    assert!(profile.frames().any(|(_, f)| f.kind == FrameKind::Inlined
        && f.function.is_some_and(|s| profile.string(s) == "square")));
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0].resolved, 1);
    assert_eq!(reports[0].binary.as_deref(), Some(bin.as_path()));
    // hpcrun records no build id: the names are said to come from an unverified binary.
    let why = reports[0].unverified.as_deref().expect("unverified");
    assert!(
        why.starts_with(&format!("{}: no build id was recorded", bin.display())),
        "{why}"
    );
    assert_eq!(reports[0].debug_info_refused, None);
}

#[test]
fn cpp_names_resolve_demangled() {
    if !tools_present(&["g++", "addr2line", "objdump", "nm"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = build(dir.path(), "grid.cpp", CPP_PROGRAM, "g++");
    let sweep = disassemble(&bin, &nm_name(&bin, "5sweep"));
    let main = disassemble(&bin, "main");
    let mut b = MeasurementBuilder::new(Version::V0400B);
    let time = b.metric("CPUTIME (sec)", ValueFormat::Real, 1);
    let exe = b.load_module(bin.to_string_lossy().into_owned());
    let call = main
        .returns
        .iter()
        .copied()
        .find(|&r| addr2line(&bin, r - 1)[0].0 == "main" && addr2line(&bin, r - 1)[0].2 == 20)
        .expect("the call of sweep");
    let m = b.node(None, exe, call);
    for &ip in &sweep.instructions {
        let n = b.node(Some(m), exe, ip);
        b.add(n, time, MetricValue::Real(0.5));
    }
    let m = read_measurement(&write_measurement(&b.build()).expect("write")).expect("read");
    let mut converter = ProfileConverter::with_symbols(SearchPath::new([dir.path().to_owned()]));
    let (_, nodes) = converter.add_with_nodes(&m, None).expect("convert");
    let profile = converter.finish();
    let checked = check_against_addr2line(&profile, &nodes, &m, &bin);
    assert_eq!(checked, sweep.instructions.len() + 1);
    assert!(profile.frames().any(|(_, f)| f.function.is_some_and(|s| {
        profile
            .string(s)
            .starts_with("sim::Grid<double, 64>::sweep(std::map<std::__cxx11::basic_string<char")
    })));
}

#[test]
fn binaries_are_found_through_the_search_path_and_missing_ones_reported() {
    if !tools_present(&["gcc", "objdump"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc");
    // Recorded where it ran, elsewhere: found by file name in the search path.
    let (bytes, _) = c_measurement(&bin, "/gone/build/prog");
    let m = read_measurement(&bytes).expect("read");
    let mut converter = ProfileConverter::with_symbols(SearchPath::new([dir.path().to_owned()]));
    converter.add(&m, None).expect("convert");
    let reports = converter.module_reports();
    let profile = converter.finish();
    assert_eq!(reports[0].resolved, 1, "{reports:?}");
    assert!(
        profile
            .frames()
            .any(|(_, f)| f.function.is_some_and(|s| profile.string(s) == "leaf"))
    );
    // Without the search path: not found, said, and every address keeps its address form.
    let mut converter = ProfileConverter::with_symbols(SearchPath::default());
    converter.add(&m, None).expect("convert");
    let reports: Vec<ModuleReport> = converter.module_reports();
    let profile = converter.finish();
    assert_eq!(reports.len(), 1);
    assert!(reports[0].is_unresolved());
    let why = reports[0].unresolved.as_ref().expect("why").to_string();
    // The recorded path lies in no folder binaries are read from: not looked at.
    assert_eq!(
        why,
        "not found (tried nothing); not read, outside the folders binaries are read from: \
         /gone/build/prog"
    );
    assert!(
        profile
            .frames()
            .all(|(_, f)| f.function.is_none() && f.address.is_some())
    );
}

#[test]
fn a_folder_of_ranks_reads_each_binary_once() {
    if !tools_present(&["gcc", "objdump"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc");
    let (bytes, _) = c_measurement(&bin, &bin.to_string_lossy());
    let folder = dir.path().join("hpctoolkit-prog-measurements");
    std::fs::create_dir(&folder).expect("mkdir");
    for rank in 0..50 {
        let name = format!("prog-{rank:06}-000-a8c00270-{}-0.hpcrun", 1000 + rank);
        std::fs::write(folder.join(name), &bytes).expect("write");
    }
    let folder = MeasurementFolder::open(&folder).expect("open");
    let mut converter = ProfileConverter::with_symbols(SearchPath::new([dir.path().to_owned()]));
    converter.look_in_folder(folder.path());
    folder.add_to(&mut converter).expect("convert");
    assert_eq!(converter.binaries_read(), 1);
    let reports = converter.module_reports();
    assert_eq!((reports[0].files, reports[0].resolved), (50, 50));
    let (profile, _) = folder
        .to_profile_with_symbols(SearchPath::new([dir.path().to_owned()]))
        .expect("convert");
    // Every file says rank 0, thread 0: one context, fifty files' values.
    assert_eq!(folder.threads().len(), 50);
    assert!(
        profile
            .frames()
            .any(|(_, f)| f.function.is_some_and(|s| profile.string(s) == "leaf"))
    );
}

/// HPCToolkit's structure DTD, which hpcstruct prints into every file (HPCToolkit's
/// `src/lib/xml/hpc-structure.dtd.h`, the `HPCSTRUCT_DTD` of `printStructFileBegin`).
const HPCSTRUCT_DTD: &str = r#"<!-- ******************************************************************** -->
<!-- HPCToolkit Structure DTD                                             -->
<!-- Version 4.8                                                          -->
<!-- ******************************************************************** -->

<!ELEMENT HPCToolkitStructure (LM)*>
<!ATTLIST HPCToolkitStructure
	version CDATA #REQUIRED
	i       CDATA #REQUIRED
	n       CDATA #IMPLIED>
  <!-- Load module: -->
  <!--   (i)d: unique identifier for cross referencing -->
  <!--   (n)ame -->
  <!--   (l)ine range: "beg-end" (inclusive range) -->
  <!--   (v)ma-range-set: "{[beg-end), [beg-end)...}" -->
  <!--   (t)arget: target function address -->
  <!--   (d)evice: device name -->
  <!ELEMENT LM (F|P)*>
  <!ATTLIST LM
	i CDATA #REQUIRED
	n CDATA #REQUIRED
	v CDATA #IMPLIED>
  <!-- File: -->
  <!ELEMENT F (P|L|S)*>
  <!ATTLIST F
	i CDATA #REQUIRED
	n CDATA #REQUIRED>
  <!-- Procedure: ln=link name (if different than name) -->
  <!ELEMENT P (P|A|L|S|C)*>
  <!ATTLIST P
	i  CDATA #REQUIRED
	n  CDATA #REQUIRED
	ln CDATA #IMPLIED
	l  CDATA #IMPLIED
	s  CDATA #IMPLIED
	v  CDATA #IMPLIED>
  <!-- Alien: (f)ilename -->
  <!ELEMENT A (A|L|S|C)*>
  <!ATTLIST A
	i CDATA #REQUIRED
	f CDATA #IMPLIED
	n CDATA #IMPLIED
	ln CDATA #IMPLIED
	l CDATA #IMPLIED
	v CDATA #IMPLIED>
  <!-- Loop -->
  <!ELEMENT L (A|L|S|C)*>
  <!ATTLIST L
	i CDATA #REQUIRED
	l CDATA #REQUIRED
	f CDATA #IMPLIED
	v CDATA #IMPLIED>
  <!-- Statement -->
  <!ELEMENT S EMPTY>
  <!ATTLIST S
	i CDATA #REQUIRED
	l CDATA #REQUIRED
	v CDATA #IMPLIED>
  <!-- Callsite (a special Statement) -->
  <!ELEMENT C (C)*>
  <!ATTLIST C
	i CDATA #REQUIRED
	l CDATA #REQUIRED
	v CDATA #IMPLIED
	t CDATA #IMPLIED
	d CDATA #IMPLIED>
"#;

/// A loop of the built program: objdump's backward branch to `start`, ending at `end`, on
/// source line `line`.
#[derive(Debug, Clone, Copy)]
struct CodeLoop {
    start: u64,
    end: u64,
    line: u32,
}

/// Statement ranges by line.
type Lines = std::collections::BTreeMap<u32, Vec<(u64, u64)>>;

/// What a procedure or loop holds: its statements, and its inlined calls by (call line,
/// callee), each with the callee's statements.
#[derive(Default)]
struct Body {
    lines: Lines,
    inlined: std::collections::BTreeMap<(u32, String), Lines>,
}

/// A statement's `v`: its ranges merged where they touch, as hpcstruct's `VMAIntervalSet`
/// merges them, each moved by `shift`.
fn vset(ranges: &[(u64, u64)], shift: u64) -> String {
    let mut sorted = ranges.to_vec();
    sorted.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (lo, hi) in sorted {
        match merged.last_mut() {
            Some(last) if last.1 >= lo => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    let parts: Vec<String> = merged
        .iter()
        .map(|(lo, hi)| format!("[0x{:x}-0x{:x})", lo + shift, hi + shift))
        .collect();
    format!("{{{}}}", parts.join(" "))
}

/// Prints structure elements as hpcstruct's `Struct-Output.cpp` does.
struct StructWriter {
    out: String,
    /// The next index `i` (preorder).
    index: u32,
    shift: u64,
    file: String,
}

impl StructWriter {
    fn next(&mut self) -> u32 {
        self.index += 1;
        self.index - 1
    }

    fn line(&mut self, depth: usize, text: std::fmt::Arguments<'_>) {
        self.out.push_str(&"  ".repeat(depth));
        self.out.push_str(&text.to_string());
        self.out.push('\n');
    }

    /// `doStmtList`: one `<S>` per line.
    fn statements(&mut self, depth: usize, lines: &Lines) {
        for (line, ranges) in lines {
            let (i, v) = (self.next(), vset(ranges, self.shift));
            self.line(depth, format_args!("<S i=\"{i}\" l=\"{line}\" v=\"{v}\"/>"));
        }
    }

    /// `doTreeNode`'s inlined call: the call site's `<A>` (the caller's file and line, no name)
    /// holding the callee's (its file, its first line, its name).
    fn inlined(&mut self, depth: usize, call: u32, callee: &str, lines: &Lines) {
        let first = lines.keys().next().copied().unwrap_or(0);
        let file = self.file.clone();
        let i = self.next();
        self.line(
            depth,
            format_args!("<A i=\"{i}\" l=\"{call}\" f=\"{file}\" n=\"\" v=\"{{}}\">"),
        );
        let i = self.next();
        self.line(
            depth + 1,
            format_args!("<A i=\"{i}\" l=\"{first}\" f=\"{file}\" n=\"{callee}\" v=\"{{}}\">"),
        );
        self.statements(depth + 2, lines);
        self.line(depth + 1, format_args!("</A>"));
        self.line(depth, format_args!("</A>"));
    }

    /// `doTreeNode`: the statements, then the loops (`doLoopList`), then the inlined calls.
    fn body(&mut self, depth: usize, body: &Body, loops: &[(CodeLoop, Body)]) {
        self.statements(depth, &body.lines);
        for (l, inner) in loops {
            let (i, file, entry) = (self.next(), self.file.clone(), l.start + self.shift);
            self.line(
                depth,
                format_args!(
                    "<L i=\"{i}\" l=\"{}\" f=\"{file}\" v=\"{{[0x{entry:x}-0x{:x})}}\">",
                    l.line,
                    entry + 1
                ),
            );
            self.body(depth + 1, inner, &[]);
            self.line(depth, format_args!("</L>"));
        }
        for ((call, callee), lines) in &body.inlined {
            self.inlined(depth, *call, callee, lines);
        }
    }
}

/// hpcstruct's structure of the C program's `leaf`, `middle` and `main` in `bin`, for the load
/// module `lm`, and the program's loops.
///
/// Written by hand in the shape hpcstruct writes it (HPCToolkit's
/// `src/tool/hpcstruct/Struct-Output.cpp`: `printStructFileBegin`, `printLoadModuleBegin`,
/// `printFileBegin`, `earlyFormatProc`, `doTreeNode`, `doStmtList`, `doLoopList`): pretty-printed
/// two spaces a level, indices `i` in preorder from 2 at the load module, a procedure's and a
/// loop's `v` their entry byte, a statement's `v` the merged ranges of its line, in each scope
/// first the statements, then the loops, then the inlined calls. Its addresses come from the
/// binary built here (objdump's instructions, addr2line's lines and inlined calls, a loop where
/// objdump shows a backward branch), so the file fits whatever the local gcc made; `shift`
/// moves every address (the structure of another build).
fn hpcstruct(bin: &Path, lm: &str, shift: u64) -> (String, Vec<CodeLoop>) {
    let functions = profcodec_testkit::native::nm_functions(bin);
    let mut w = StructWriter {
        out: String::new(),
        index: 4,
        shift,
        file: String::new(),
    };
    let mut all_loops = Vec::new();
    for name in ["leaf", "middle", "main"] {
        let &(start, size, _) = functions.iter().find(|f| f.2 == name).expect("function");
        let code = disassemble(bin, name);
        let ends: Vec<u64> = code
            .instructions
            .iter()
            .skip(1)
            .copied()
            .chain([start + size])
            .collect();
        let mut loops: Vec<(CodeLoop, Body)> = Vec::new();
        for (k, text) in code.text.iter().enumerate() {
            let at = code.instructions[k];
            if !text.starts_with('j') || text.starts_with("jmp") {
                continue;
            }
            let target = text
                .split_whitespace()
                .nth(1)
                .and_then(|t| u64::from_str_radix(t, 16).ok());
            if let Some(target) = target.filter(|&t| t < at && t >= start) {
                let line = addr2line(bin, at)[0].2;
                let l = CodeLoop {
                    start: target,
                    end: ends[k],
                    line,
                };
                loops.push((l, Body::default()));
            }
        }
        let mut body = Body::default();
        for (k, &at) in code.instructions.iter().enumerate() {
            let chain = profcodec_testkit::native::addr2line(bin, at);
            w.file = chain[0].file.clone().expect("file");
            let into = match loops.iter().position(|(l, _)| l.start <= at && at < l.end) {
                Some(l) => &mut loops[l].1,
                None => &mut body,
            };
            let range = (at, ends[k]);
            match chain.as_slice() {
                [only] => into
                    .lines
                    .entry(only.line.expect("line"))
                    .or_default()
                    .push(range),
                [outer, callee] => into
                    .inlined
                    .entry((
                        outer.line.expect("call line"),
                        callee.function.clone().expect("callee"),
                    ))
                    .or_default()
                    .entry(callee.line.expect("line"))
                    .or_default()
                    .push(range),
                other => panic!("0x{at:x}: {other:?}"),
            }
        }
        let decl = addr2line(bin, start)[0].2;
        let (i, entry) = (w.next(), start + shift);
        w.line(
            2,
            format_args!(
                "<P i=\"{i}\" n=\"{name}\" l=\"{decl}\" v=\"{{[0x{entry:x}-0x{:x})}}\">",
                entry + 1
            ),
        );
        w.body(3, &body, &loops);
        w.line(2, format_args!("</P>"));
        all_loops.extend(loops.iter().map(|(l, _)| *l));
    }
    let xml = format!(
        "<?xml version=\"1.0\"?>\n<!DOCTYPE HPCToolkitStructure [\n{HPCSTRUCT_DTD}]>\n\
         <HPCToolkitStructure i=\"0\" version=\"4.9\" n=\"\">\n\
         <LM i=\"2\" n=\"{lm}\" has-calls=\"0\" v=\"{{}}\">\n  <F i=\"3\" n=\"{}\">\n\
         {}  </F>\n</LM>\n</HPCToolkitStructure>\n",
        w.file, w.out
    );
    (xml, all_loops)
}

/// A frame as the structure test compares it: kind, function, line, address.
type Shown = (FrameKind, String, u32, Option<u64>);

/// The frames of model node `node` up to its function's frame, outermost first.
fn frames_to_function(profile: &Profile, node: NodeId) -> Vec<Shown> {
    let mut frames = Vec::new();
    let mut at = Some(node);
    while let Some(n) = at {
        let f = profile.frame(profile.node(n).frame);
        frames.push((
            f.kind,
            f.function
                .map(|s| profile.string(s).to_owned())
                .unwrap_or_default(),
            f.line.unwrap_or(0),
            f.address,
        ));
        if f.kind == FrameKind::Function {
            break;
        }
        at = profile.node(n).parent;
    }
    frames.reverse();
    frames
}

/// The frames hpcprof's database shows for an address of the C program, from binutils: the
/// procedure (its declaration line and entry), the loop around the address, the inlined call
/// (its site's line, then the callee), and the statement's line.
fn expected_frames(bin: &Path, loops: &[CodeLoop], address: u64) -> Vec<Shown> {
    let chain = addr2line(bin, address);
    let outer = &chain[0].0;
    let functions = profcodec_testkit::native::nm_functions(bin);
    let &(start, ..) = functions.iter().find(|f| &f.2 == outer).expect("function");
    let decl = addr2line(bin, start)[0].2;
    let mut want = vec![(FrameKind::Function, outer.clone(), decl, Some(start))];
    if let Some(l) = loops.iter().find(|l| l.start <= address && address < l.end) {
        want.push((FrameKind::Loop, outer.clone(), l.line, Some(l.start)));
    }
    if let [site, callee] = chain.as_slice() {
        want.push((FrameKind::Line, outer.clone(), site.2, None));
        want.push((FrameKind::Inlined, callee.0.clone(), callee.2, None));
    }
    let last = chain.last().expect("a frame");
    want.push((FrameKind::Line, last.0.clone(), last.2, None));
    want
}

/// A measurement folder of the C program's measurement, with `structs/prog.hpcstruct` holding
/// `xml`; the folder and the structure file.
fn folder_with_structure(
    dir: &Path,
    bytes: &[u8],
    xml: &str,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let folder = dir.join("hpctoolkit-prog-measurements");
    std::fs::create_dir_all(folder.join("structs")).expect("mkdir");
    std::fs::write(folder.join("prog-000000-000-a8c00270-1000-0.hpcrun"), bytes).expect("write");
    let file = folder.join("structs").join("prog.hpcstruct");
    std::fs::write(&file, xml).expect("write");
    (folder, file)
}

#[test]
fn structure_files_name_procedures_loops_and_inlined_calls() {
    if !tools_present(&["gcc", "addr2line", "objdump", "nm"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc");
    let recorded = bin.to_string_lossy().into_owned();
    let (bytes, _) = c_measurement(&bin, &recorded);
    let (xml, loops) = hpcstruct(&bin, &recorded, 0);
    assert!(!loops.is_empty() && xml.contains("n=\"square\""), "{xml}");
    let (folder, file) = folder_with_structure(dir.path(), &bytes, &xml);
    let m = read_measurement(&bytes).expect("read");
    let cct = &m.epochs[0].cct;
    let expected: Vec<(i32, Vec<Shown>)> = cct
        .iter()
        .filter(|n| n.lm_id != 0)
        .map(|n| {
            let calls = cct.iter().any(|c| c.parent == n.id);
            let probe = if calls { n.ip - 1 } else { n.ip };
            (n.id, expected_frames(&bin, &loops, probe))
        })
        .collect();
    assert_eq!(expected.len(), cct.len());
    let convert = || {
        let mut converter =
            ProfileConverter::with_symbols(SearchPath::new([dir.path().to_owned()]));
        converter.look_in_folder(&folder);
        let (_, nodes) = converter.add_with_nodes(&m, None).expect("convert");
        let reports = converter.module_reports();
        (converter.finish(), nodes, reports)
    };
    let check = |profile: &Profile, nodes: &[(i32, NodeId)]| {
        for (id, want) in &expected {
            let &(_, node) = nodes.iter().find(|(n, _)| n == id).expect("node");
            assert_eq!(&frames_to_function(profile, node), want, "CCT node {id}");
        }
        assert!(profile.frames().any(|(_, f)| f.kind == FrameKind::Loop
            && f.function.is_some_and(|s| profile.string(s) == "leaf")));
    };
    // The binary is there too: the structure wins (the binary's DWARF knows no loops).
    let (profile, nodes, reports) = convert();
    check(&profile, &nodes);
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0].structure.as_deref(), Some(file.as_path()));
    assert_eq!(reports[0].structure_error, None);
    assert_eq!((reports[0].files, reports[0].resolved), (1, 1));
    assert_eq!(reports[0].binary.as_deref(), Some(bin.as_path()));
    // Without the binary: the structure alone names everything, and nothing is unresolved.
    std::fs::remove_file(&bin).expect("rm");
    let (profile, nodes, reports) = convert();
    check(&profile, &nodes);
    assert_eq!(reports[0].binary, None);
    assert_eq!(reports[0].unresolved, None);
    assert_eq!((reports[0].files, reports[0].resolved), (1, 1));
    // Samples of one statement share its node, as in hpcprof's databases.
    assert!(profile.nodes().len() < cct.len());
}

#[test]
fn a_structure_of_another_build_is_not_used() {
    if !tools_present(&["gcc", "addr2line", "objdump", "nm"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc");
    let recorded = bin.to_string_lossy().into_owned();
    let (bytes, _) = c_measurement(&bin, &recorded);
    let (xml, _) = hpcstruct(&bin, &recorded, 0x10_0000);
    let (folder, file) = folder_with_structure(dir.path(), &bytes, &xml);
    let folder = MeasurementFolder::open(&folder).expect("open");
    let (profile, reports) = folder
        .to_profile_with_symbols(SearchPath::new([dir.path().to_owned()]))
        .expect("convert");
    assert_eq!(reports[0].structure, None);
    let why = reports[0].structure_error.as_deref().expect("why");
    assert!(
        why.starts_with(&file.display().to_string())
            && why.ends_with("not the structure of the binary that ran"),
        "{why}"
    );
    // The binary's DWARF names the addresses instead: no loops.
    assert!(
        profile
            .frames()
            .any(|(_, f)| f.function.is_some_and(|s| profile.string(s) == "leaf"))
    );
    assert!(profile.frames().all(|(_, f)| f.kind != FrameKind::Loop));
}

#[test]
fn an_unreadable_structure_file_is_reported_and_the_binary_used() {
    if !tools_present(&["gcc", "objdump"]) {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = build(dir.path(), "prog.c", C_PROGRAM, "gcc");
    let recorded = bin.to_string_lossy().into_owned();
    let (bytes, _) = c_measurement(&bin, &recorded);
    let xml = format!("<HPCToolkitStructure i=\"0\" version=\"4.9\"><LM i=\"2\" n=\"{recorded}\">");
    let (folder, file) = folder_with_structure(dir.path(), &bytes, &xml);
    let m = read_measurement(&bytes).expect("read");
    let mut converter = ProfileConverter::with_symbols(SearchPath::new([dir.path().to_owned()]));
    converter.look_in_folder(&folder);
    converter.add(&m, None).expect("convert");
    let errors = converter.structure_errors();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].0, file);
    let reports = converter.module_reports();
    let why = reports[0].structure_error.as_deref().expect("why");
    assert_eq!(
        why,
        format!(
            "{}: the structure file ends too early: at byte {:#x}: expected </LM> but found \
             the end of the file",
            file.display(),
            xml.len()
        )
    );
    assert_eq!(
        (reports[0].resolved, reports[0].structure.as_ref()),
        (1, None)
    );
    let profile = converter.finish();
    assert!(
        profile
            .frames()
            .any(|(_, f)| f.function.is_some_and(|s| profile.string(s) == "leaf"))
    );
}
