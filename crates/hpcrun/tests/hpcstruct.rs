//! Hostile structure files (`.hpcstruct`): nesting without end, ranges over the whole address
//! space, XML that is not well-formed, elements out of place, truncations and bit flips of a
//! good file. Each gives a worded error (or a structure) without a panic, and reading allocates
//! at most a small multiple of the input. One test in its own binary, so that no other test
//! allocates while it measures.

use profcodec_hpcrun::structs::{MAX_DEPTH, ScopeKind, StructError, parse};
use profcodec_testkit::hostile::{allocation_limit, bit_flips, truncation_points};

#[global_allocator]
static A: cap::Cap<std::alloc::System> = cap::Cap::new(std::alloc::System, usize::MAX);

/// Each range costs its parsed pair, a node of the ordered map that keeps the first of
/// overlapping ranges and an entry of the final table (about 130 bytes together, measured) for
/// as little as 6 bytes of input (`[0-1) `): about 22 times; 32 leaves room for the strings and
/// the statement nodes.
const FACTOR: usize = 32;

/// A structure file in the shape hpcstruct writes (HPCToolkit's
/// `src/tool/hpcstruct/Struct-Output.cpp`), with an inlined call in a loop.
const GOOD: &str = r#"<?xml version="1.0"?>
<!DOCTYPE HPCToolkitStructure [
<!ELEMENT HPCToolkitStructure (LM)*>
]>
<HPCToolkitStructure i="0" version="4.9" n="">
<LM i="2" n="/opt/app/bin/solver" has-calls="0" v="{}">
  <F i="3" n="/src/solver.c">
    <P i="4" n="solve" l="10" v="{[0x1000-0x1001)}">
      <S i="5" l="10" v="{[0x1000-0x1010)}"/>
      <L i="6" l="12" f="/src/solver.c" v="{[0x1010-0x1011)}">
        <S i="7" l="12" v="{[0x1010-0x1020) [0x1040-0x1048)}"/>
        <A i="8" l="13" f="/src/solver.c" n="" v="{}">
          <A i="9" l="3" f="/src/kernel.h" n="axpy&lt;double&gt;" v="{}">
            <S i="10" l="4" v="{[0x1020-0x1040)}"/>
          </A>
        </A>
      </L>
      <A i="11" l="0" f="/src/other.h" n="&lt;inline&gt;" v="{}">
        <S i="12" l="7" v="{[0x1048-0x1050)}"/>
      </A>
      <C i="13" l="14" v="{[0x1050-0x1055)}" t="0x2000" d=""/>
    </P>
  </F>
</LM>
</HPCToolkitStructure>
"#;

/// Reads `xml`, checking the allocation bound; the result.
fn read(xml: &[u8]) -> Result<Vec<profcodec_hpcrun::structs::ModuleStructure>, StructError> {
    let before = A.total_allocated();
    let result = parse(xml);
    let used = A.total_allocated() - before;
    let limit = allocation_limit(xml.len(), FACTOR);
    assert!(
        used <= limit,
        "{used} bytes allocated for {} bytes of input (limit {limit}): {}",
        xml.len(),
        String::from_utf8_lossy(&xml[..xml.len().min(200)])
    );
    result
}

/// The error `xml` gives, as text.
fn error(xml: &str) -> String {
    match read(xml.as_bytes()) {
        Ok(m) => panic!("read: {} modules from {xml:.200}", m.len()),
        Err(e) => e.to_string(),
    }
}

/// `body` inside a load module, file and procedure.
fn in_procedure(body: &str) -> String {
    format!(
        "<HPCToolkitStructure i=\"0\" version=\"4.9\"><LM i=\"2\" n=\"/x\"><F i=\"3\" n=\"x.c\">\
         <P i=\"4\" n=\"p\" l=\"1\" v=\"{{[0x0-0x1)}}\">{body}</P></F></LM></HPCToolkitStructure>"
    )
}

#[test]
fn hostile_structure_files_give_worded_errors_within_bounded_memory() {
    // The good file: procedure, loop, inlined call (site, then callee), statement.
    let modules = read(GOOD.as_bytes()).expect("good");
    assert_eq!(modules.len(), 1);
    let m = &modules[0];
    assert_eq!(m.path(), "/opt/app/bin/solver");
    let kinds = |a| {
        m.lookup(a)
            .expect("scopes")
            .iter()
            .map(|s| (s.kind, s.name, s.file, s.line, s.entry))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        kinds(0x1024),
        [
            (
                ScopeKind::Procedure,
                Some("solve"),
                Some("/src/solver.c"),
                Some(10),
                Some(0x1000)
            ),
            (
                ScopeKind::Loop,
                None,
                Some("/src/solver.c"),
                Some(12),
                Some(0x1010)
            ),
            (
                ScopeKind::CallSite,
                None,
                Some("/src/solver.c"),
                Some(13),
                None
            ),
            (
                ScopeKind::Inlined,
                Some("axpy<double>"),
                Some("/src/kernel.h"),
                Some(3),
                None
            ),
            (
                ScopeKind::Statement,
                None,
                Some("/src/kernel.h"),
                Some(4),
                None
            ),
        ]
    );
    assert_eq!(kinds(0x1044).len(), 3);
    // A guard alien only sets the file of what it holds.
    assert_eq!(
        kinds(0x104c),
        [
            (
                ScopeKind::Procedure,
                Some("solve"),
                Some("/src/solver.c"),
                Some(10),
                Some(0x1000)
            ),
            (
                ScopeKind::Statement,
                None,
                Some("/src/other.h"),
                Some(7),
                None
            ),
        ]
    );
    // A call statement reads as a statement.
    assert_eq!(
        kinds(0x1054)[1],
        (
            ScopeKind::Statement,
            None,
            Some("/src/solver.c"),
            Some(14),
            None
        )
    );
    assert!(m.lookup(0x1055).is_none() && m.lookup(0xfff).is_none());

    // Nesting without end: an error at the first element too deep, no recursion.
    let deep = in_procedure(&"<L i=\"1\" l=\"1\">".repeat(100_000));
    let e = error(&deep);
    assert!(
        e.starts_with("structure nested too deep: <L>: at byte 0x")
            && e.ends_with(&format!(
                "expected at most {MAX_DEPTH} nested elements but found more"
            )),
        "{e}"
    );
    let deep = in_procedure(&"<A i=\"1\" l=\"1\" f=\"a.h\" n=\"f\">".repeat(100_000));
    assert!(error(&deep).starts_with("structure nested too deep: <A>"));

    // Ranges over the whole address space: read, with no cost per address.
    let huge = in_procedure(
        r#"<S i="5" l="2" v="{[0x0-0xffffffffffffffff)}"/><S i="6" l="3" v="{[0x10-0x20)}"/>"#,
    );
    let m = &read(huge.as_bytes()).expect("huge")[0];
    assert_eq!(m.ranges(), 1);
    let line = |a| m.lookup(a).and_then(|s| s.last().and_then(|s| s.line));
    assert_eq!(
        (line(0x18), line(u64::MAX - 1), line(u64::MAX)),
        (Some(2), Some(2), None)
    );
    // Where the body of `in_procedure` starts.
    let body_at = in_procedure("").find("</P>").expect("body");
    assert_eq!(
        error(&in_procedure(
            r#"<S i="5" l="2" v="{[0x0-0x10000000000000000)}"/>"#
        )),
        format!(
            "a structure attribute holds a value the format does not allow: <S> v: at byte \
             {body_at:#x}: expected address ranges \"{{[0xlo-0xhi) ...}}\" in hexadecimal but \
             found \"{{[0x0-0x10000000000000000)}}\""
        )
    );
    assert!(
        error(&in_procedure(r#"<S i="5" l="2" v="{[0x20-0x10)}"/>"#))
            .contains("expected address ranges whose ends are not below their starts")
    );
    // Many ranges in one attribute: memory linear in the input (checked by `read`).
    let many: String = (0..200_000u64)
        .map(|i| format!("[{i:x}-{:x}) ", i + 1))
        .collect();
    let m = &read(in_procedure(&format!("<S i=\"5\" l=\"2\" v=\"{{{many}}}\"/>")).as_bytes())
        .expect("many")[0];
    assert_eq!(m.ranges(), 200_000);
    // A long value is quoted in part.
    let long = in_procedure(&format!(
        "<S i=\"5\" l=\"{}\" v=\"{{}}\"/>",
        "9".repeat(100_000)
    ));
    let e = error(&long);
    assert!(
        e.contains("expected a line number from 0 to 4294967295") && e.len() < 400,
        "{e}"
    );

    // XML that is not well-formed.
    let e = error(r#"<HPCToolkitStructure i="0"><LM i="2" n="/x"><F i="3" n="x.c"></LM>"#);
    assert!(e.starts_with("not well-formed XML: at byte 0x"), "{e}");
    let e = error("\u{0}\u{ff}<<<>>>");
    assert!(
        e.starts_with("not well-formed XML") || e.contains("out of place"),
        "{e}"
    );
    assert_eq!(
        error(""),
        "the structure file ends too early: at byte 0x0: expected <HPCToolkitStructure> but \
         found the end of the file"
    );
    let cut = &GOOD[..GOOD.find("</L>").expect("loop end")];
    assert_eq!(
        error(cut),
        format!(
            "the structure file ends too early: at byte {:#x}: expected </L> but found the end \
             of the file",
            cut.len()
        )
    );
    // A custom entity is not expanded (no billion laughs): an error.
    let laughs = "<!DOCTYPE x [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;\">]>\
                  <HPCToolkitStructure i=\"0\"><LM i=\"2\" n=\"&b;&b;&b;\"/></HPCToolkitStructure>";
    assert!(
        error(laughs).starts_with("not well-formed XML"),
        "{}",
        error(laughs)
    );

    // Elements out of place, and values the format does not allow.
    for (body, expected) in [
        (
            r#"<P i="5" n="q" v="{}"></P>"#,
            "a structure element out of place: <P>: at byte {at}: expected a <P> outside every \
             other <P>",
        ),
        (
            r#"<X i="5"/>"#,
            "a structure element out of place: <X>: at byte {at}: expected one of the elements \
             HPCToolkitStructure, LM, F, P, L, A, S, C",
        ),
        (
            r#"<S i="5" l="-1" v="{}"/>"#,
            "a structure attribute holds a value the format does not allow: <S> l: at byte {at}: \
             expected a line number from 0 to 4294967295 but found \"-1\"",
        ),
    ] {
        let expected = expected.replace("{at}", &format!("{body_at:#x}"));
        assert_eq!(error(&in_procedure(body)), expected);
    }
    assert_eq!(
        error(
            r#"<HPCToolkitStructure i="0"><LM i="2" n="/x"><S i="3" l="1" v="{[0x0-0x1)}"/></LM></HPCToolkitStructure>"#
        ),
        "a structure element out of place: <S>: at byte 0x2c: expected a statement inside a <P>"
    );
    assert_eq!(
        error(r#"<LM i="2" n="/x"></LM>"#),
        "a structure element out of place: <LM>: at byte 0x0: expected the one root element \
         <HPCToolkitStructure>"
    );
    assert_eq!(
        error(r#"<HPCToolkitStructure i="0"><F i="3" n="x.c"></F></HPCToolkitStructure>"#),
        "a structure element out of place: <F>: at byte 0x1b: expected an element inside an <LM>"
    );

    // Every truncation and some thousand bit flips of the good file: no panic.
    let good = GOOD.as_bytes();
    for at in truncation_points(good.len()) {
        let _ = read(&good[..at]);
    }
    for mutant in bit_flips(good, 4000) {
        let _ = read(&mutant);
    }
}
