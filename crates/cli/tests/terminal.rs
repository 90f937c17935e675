//! No byte of a hostile input reaches the terminal raw (HOSTILE.md, class 2): profiles whose
//! sub, block, thread and file names carry OSC 52 (the clipboard), OSC 0 (the title), CSI 2J
//! (clear the screen), a C1 CSI (U+009B), bidi overrides and isolates, tabs and newlines, read
//! by every verb that prints text (`top`, `--full-names`, `diff`, `info`, `dump`, `validate`),
//! and by the warnings and errors that name them. Text escapes them as `\x1b`, `\u{202e}`; JSON
//! as `\u001b`, `\u202e`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::run;

/// The attacks, each a name of its own: the clipboard, the title, the screen, a C1 CSI, bidi
/// overrides and isolates, a tab and a newline that would break a table row.
const OSC52: &str = "clip\x1b]52;c;cm0gLXJmIH4=\x07";
const OSC0: &str = "title\x1b]0;owned\x1b\\";
const CSI: &str = "clear\x1b[2J\x1b[H";
const C1: &str = "c1\u{9b}2J\u{9d}0;t\u{9c}\u{85}";
const BIDI: &str = "bidi\u{202e}\u{202a}\u{202b}\u{202c}\u{202d}\u{2066}\u{2067}\u{2068}\u{2069}\u{200e}\u{200f}\u{61c}";
const BREAKS: &str = "row\tbreak\nfake\r\x7f\0";

/// Every character a terminal obeys, or that reorders what it shows: C0 and C1 controls, DEL,
/// bidi controls. A newline is allowed where the output is lines (`allow_newline`).
fn raw_control(text: &str, allow_newline: bool) -> Option<char> {
    text.chars().find(|&c| {
        !(allow_newline && c == '\n')
            && (c.is_control()
                || matches!(
                    c,
                    '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
                ))
    })
}

/// Asserts that neither stream of `out` (of `what`) holds a raw control or bidi character.
fn assert_clean(what: &str, out: &Output) {
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        if let Some(c) = raw_control(&text, true) {
            panic!("{what}: {stream} holds U+{:04X} raw:\n{text}", u32::from(c));
        }
    }
}

/// A NYTProf profile (testdata's `hello`, whose sub is `main::fib`) with its sub named
/// `sub_name`, its script's file named `file_name` and its application attribute `app`.
fn nytprof(dir: &Path, file: &str, sub_name: &str, file_name: &str, app: &str) -> PathBuf {
    let bytes = std::fs::read(common::testdata("nytprof/hello.nytprof.out")).expect("testdata");
    let mut p = profcodec_nytprof::Profile::from_bytes(&bytes).expect("hello reads");
    let rename = |s: &str| s.replace("main::fib", sub_name);
    p.subs = std::mem::take(&mut p.subs)
        .into_iter()
        .map(|(k, mut sub)| {
            sub.name = rename(&sub.name);
            for calls in sub
                .callers
                .values_mut()
                .flat_map(|lines| lines.values_mut())
            {
                calls.calling_subs = calls.calling_subs.iter().map(|s| rename(s)).collect();
            }
            (rename(&k), sub)
        })
        .collect();
    let script = p
        .files
        .values()
        .find(|f| f.eval.is_none() && f.name.ends_with("hello.pl"))
        .map(|f| f.fid)
        .expect("hello.pl in hello's profile");
    for f in p.files.values_mut() {
        f.subs_defined = f.subs_defined.iter().map(|s| rename(s)).collect();
        if f.fid == script {
            f.name = file_name.to_owned();
        }
    }
    p.attributes.insert("application".into(), app.into());
    let path = dir.join(file);
    let mut out = Vec::new();
    p.write(&mut out).expect("the profile writes");
    std::fs::write(&path, out).expect("write the crafted profile");
    path
}

/// An EasyProfiler capture of one thread named `thread` with a block of each name of `blocks`,
/// its file `file`.
fn easyprofiler(dir: &Path, name: &str, thread: &str, blocks: &[&str], file: &str) -> PathBuf {
    use profcodec_easyprofiler::{
        Capture, Convention, Descriptor, Record, RecordBody, Thread, Version,
    };
    let descriptors = blocks
        .iter()
        .enumerate()
        .map(|(id, n)| {
            Some(Box::new(Descriptor {
                id: id as u32,
                line: 7,
                color: 0xff00_ff00,
                block_type: 1,
                status: 1,
                name: n.as_bytes().to_vec(),
                file: file.as_bytes().to_vec(),
            }))
        })
        .collect();
    let records = (0..blocks.len() as u64)
        .map(|i| Record {
            begin: 1000 + i * 100,
            end: 1000 + i * 100 + 50 + i,
            descriptor: i as u32,
            body: RecordBody::Named(Vec::new()),
        })
        .collect();
    let mut c = Capture {
        version: Version::V2_1_0,
        pid: 1,
        cpu_frequency: 0,
        begin_time: 1000,
        end_time: 1000 + 100 * blocks.len() as u64,
        descriptors,
        threads: vec![Thread {
            id: 7,
            name: Some(thread.as_bytes().to_vec()),
            context_switches: Vec::new(),
            records,
        }],
        ..Capture::default()
    };
    c.update_counters(Convention::Runtime);
    let path = dir.join(name);
    std::fs::write(&path, c.to_bytes().expect("the capture writes")).expect("write the capture");
    path
}

/// The crafted inputs of a test: a NYTProf profile and an EasyProfiler capture whose names carry
/// every attack, and a plain NYTProf profile to compare with.
struct Inputs {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    nytprof: PathBuf,
    easy: PathBuf,
    plain: PathBuf,
    plain_easy: PathBuf,
}

fn inputs() -> Inputs {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().to_path_buf();
    let nytprof = nytprof(
        &path,
        "hostile.nytprof.out",
        &format!("main::{OSC52}{BIDI}{BREAKS}"),
        &format!("/src/{OSC0}{C1}.pl"),
        &format!("{CSI}app"),
    );
    let plain = path.join("plain.nytprof.out");
    std::fs::copy(common::testdata("nytprof/hello.nytprof.out"), &plain).expect("copy hello");
    let easy = easyprofiler(
        &path,
        "hostile.prof",
        &format!("Main{OSC0}{BIDI}"),
        &[OSC52, OSC0, CSI, C1, BIDI, BREAKS],
        &format!("/src/{CSI}{C1}.cpp"),
    );
    Inputs {
        _dir: dir,
        dir: path,
        nytprof,
        easy,
        plain,
        plain_easy: common::testdata("easyprofiler/small_v210.prof"),
    }
}

/// `profcodec ARGS`, which must succeed, with neither stream holding a raw control.
fn clean_ok(args: &[&std::ffi::OsStr]) -> Output {
    let out = run(args);
    let what = format!("{args:?}");
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_clean(&what, &out);
    out
}

fn os<S: AsRef<std::ffi::OsStr> + ?Sized>(s: &S) -> &std::ffi::OsStr {
    s.as_ref()
}

/// `top`, by every grouping, cut to a width and with `--full-names`, prints the hostile names
/// escaped, one line per row: the escapes are visible, and the row count is the table's.
#[test]
fn top_prints_names_escaped() {
    let i = inputs();
    for input in [&i.nytprof, &i.easy] {
        for group in ["function", "line", "module", "path"] {
            // NYTProf records no call tree to group by path.
            if group == "path" && input == &i.nytprof {
                continue;
            }
            for full in [false, true] {
                let mut args = vec![os("top"), os("--group"), os(group), os("-n"), os("0")];
                if full {
                    args.push(os("--full-names"));
                }
                args.push(input.as_os_str());
                let out = clean_ok(&args);
                let text = String::from_utf8_lossy(&out.stdout);
                if group == "function" {
                    assert!(text.contains(r"\x1b]52;c;cm0gLXJmIH4=\x07"), "{text}");
                    assert!(text.contains(r"\u{202e}"), "{text}");
                    // Whole names show the tab and newline escaped (a cut name ends before).
                    if input == &i.nytprof && full {
                        assert!(text.contains(r"\t") && text.contains(r"\n"), "{text}");
                    }
                }
                // The heading, the header, the rows and the total: no name split a row.
                let rows = text.lines().skip(2).filter(|l| !l.contains("total"));
                for row in rows {
                    assert!(
                        row.trim_start().starts_with(|c: char| c.is_ascii_digit()),
                        "a row that is not a row: {row:?} in\n{text}"
                    );
                }
            }
        }
    }
}

/// The JSON forms of `top`, `diff` and `info` keep every name whole (it reads back the same),
/// with C1 and bidi controls escaped as JSON escapes too.
#[test]
fn json_escapes_c1_and_bidi() {
    let i = inputs();
    for (input, plain) in [(&i.nytprof, &i.plain), (&i.easy, &i.plain_easy)] {
        let runs = [
            vec![os("top"), os("--json"), input.as_os_str()],
            vec![
                os("diff"),
                os("--json"),
                plain.as_os_str(),
                input.as_os_str(),
            ],
            vec![os("info"), os("--json"), input.as_os_str()],
            vec![os("dump"), input.as_os_str()],
            vec![os("dump"), os("--pretty"), input.as_os_str()],
            vec![os("dump"), os("--format"), os("ndjson"), input.as_os_str()],
        ];
        for args in runs {
            let out = clean_ok(&args);
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(text.contains(r"\u001b"), "{args:?}: {text}");
            if args[0] != "info" {
                assert!(text.contains(r"\u202e"), "{args:?}: {text}");
            }
            // Each document still reads, and its names are the input's.
            let documents: Vec<serde_json::Value> = if args.contains(&os("ndjson")) {
                text.lines()
                    .map(|l| serde_json::from_str(l).expect("JSON"))
                    .collect()
            } else {
                vec![serde_json::from_str(&text).expect("JSON")]
            };
            let all = serde_json::to_string(&documents).expect("JSON");
            let back: serde_json::Value = serde_json::from_str(&all).expect("JSON");
            if args[0] != "info" {
                assert!(format!("{back}").contains("cm0gLXJmIH4="), "{args:?}");
            }
        }
    }
    // The top rows name the sub whole.
    let out = clean_ok(&[os("top"), os("--json"), i.nytprof.as_os_str()]);
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let names: Vec<&str> = rows
        .as_array()
        .expect("rows")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    let hostile = format!("main::{OSC52}{BIDI}{BREAKS}");
    assert!(names.contains(&hostile.as_str()), "{names:?}");
}

/// `diff`'s table, `info`'s details and `validate`'s lines print the names escaped.
#[test]
fn diff_info_and_validate_print_escaped() {
    let i = inputs();
    for full in [false, true] {
        let mut args = vec![os("diff")];
        if full {
            args.push(os("--full-names"));
        }
        args.extend([i.plain.as_os_str(), i.nytprof.as_os_str()]);
        let out = clean_ok(&args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains(r"\x1b]52;c;"), "{text}");
    }
    let out = clean_ok(&[os("info"), i.nytprof.as_os_str(), i.easy.as_os_str()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(r"\x1b[2J"), "{text}");
    clean_ok(&[os("validate"), i.nytprof.as_os_str(), i.easy.as_os_str()]);
}

/// A hostile file name (an input's own, or one inside a folder of profiles) is printed escaped
/// in what the command says of it: `info`, `validate`'s verdict and its error, the error of an
/// input that is not valid, and the words about a folder's entries.
#[test]
fn file_names_in_messages_are_escaped() {
    let i = inputs();
    let evil = i.dir.join(format!("{OSC52}{BIDI}{C1}.nytprof.out"));
    std::fs::copy(&i.plain, &evil).expect("copy");
    let out = clean_ok(&[os("info"), evil.as_os_str()]);
    assert!(String::from_utf8_lossy(&out.stdout).contains(r"\x1b]52;c;"));
    let out = clean_ok(&[os("validate"), evil.as_os_str()]);
    assert!(String::from_utf8_lossy(&out.stdout).contains(r"\u{202e}"));

    // A damaged input: the error names it, escaped, on standard error.
    let bytes = std::fs::read(&i.nytprof).expect("read");
    let cut = i.dir.join(format!("cut{CSI}{BIDI}.nytprof.out"));
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).expect("write");
    for verb in ["validate", "info", "top", "dump"] {
        let out = run([os(verb), cut.as_os_str()]);
        assert!(!out.status.success(), "{verb} of a cut file");
        assert_clean(verb, &out);
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(r"\x1b[2J"),
            "{verb}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // An input that does not exist, and one of no known format.
    let missing = i.dir.join(format!("gone{OSC0}"));
    let out = run([os("top"), missing.as_os_str()]);
    assert!(!out.status.success());
    assert_clean("top of a missing file", &out);
    let unknown = i.dir.join(format!("text{OSC0}.out"));
    std::fs::write(&unknown, b"not a profile\x1b]52;c;eA==\x07\n").expect("write");
    let out = run([os("info"), unknown.as_os_str()]);
    assert!(!out.status.success());
    assert_clean("info of no profile", &out);

    // A folder of profiles whose entries carry the attacks: what is skipped is said, escaped.
    let folder = i.dir.join("folder");
    std::fs::create_dir(&folder).expect("mkdir");
    std::fs::copy(&i.plain, folder.join("a.nytprof.out")).expect("copy");
    std::fs::write(folder.join(format!("empty{CSI}{BIDI}.out")), b"").expect("write");
    std::fs::write(folder.join(format!("junk{OSC52}.out")), b"junk\x1b[2J").expect("write");
    let out = run([os("top"), folder.as_os_str()]);
    assert_clean("top of a folder", &out);
}

/// A thread filter that matches nothing lists the threads there are, their names escaped.
#[test]
fn usage_errors_that_list_names_are_escaped() {
    let i = inputs();
    let out = run([os("top"), os("--thread"), os("nope"), i.easy.as_os_str()]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_clean("top --thread of no thread", &out);
    assert!(String::from_utf8_lossy(&out.stderr).contains(r"\x1b]0;owned"));
    let out = run([os("top"), os("--metric"), os("nope"), i.nytprof.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    assert_clean("top --metric of no metric", &out);
}

/// `profcodec ARGS` on a terminal: `script` (util-linux) runs it with standard output and
/// error on a pseudo-terminal, and the terminal's text is returned (both streams, newlines as
/// `\r\n`). `None` where there is no `script` to run.
fn on_terminal(args: &[&std::ffi::OsStr]) -> Option<String> {
    // `script -c` takes one command string: the program and its arguments are passed in the
    // environment and expanded by the shell, never parsed as text.
    let mut command = std::process::Command::new("script");
    let mut line = String::from("exec \"$PROFCODEC\"");
    for (k, arg) in args.iter().enumerate() {
        command.env(format!("PROFCODEC_ARG{k}"), arg);
        line.push_str(&format!(" \"$PROFCODEC_ARG{k}\""));
    }
    let out = command
        .args(["-qec", &line, "/dev/null"])
        .env("PROFCODEC", env!("CARGO_BIN_EXE_profcodec"))
        .env("SHELL", "/bin/sh")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The attacks' raw forms, none of which may reach a terminal.
const PAYLOADS: [&str; 5] = ["\x1b]52;", "\x1b]0;", "\x1b[2J", "\u{9b}", "\u{202e}"];

/// `convert` with no `-o` writes folded stacks and callgrind to standard output: on a terminal
/// every name is escaped, line by line; into a pipe the bytes are the exact ones a file gets.
#[test]
fn convert_to_a_terminal_escapes_and_to_a_pipe_writes_exact_bytes() {
    let i = inputs();
    for (k, (input, to)) in [
        (&i.nytprof, "folded"),
        (&i.nytprof, "callgrind"),
        (&i.easy, "folded"),
        (&i.easy, "speedscope"),
    ]
    .into_iter()
    .enumerate()
    {
        let args = [os("convert"), os("--to"), os(to), input.as_os_str()];
        let file = i.dir.join(format!("out{k}.{to}"));
        let written = [&args[..3], &[os("-o"), file.as_os_str(), input.as_os_str()]].concat();
        let written = run(written);
        assert!(written.status.success(), "{to}: {written:?}");
        let exact = std::fs::read(&file).expect("the converted file");
        let piped = run(args);
        assert!(piped.status.success());
        assert_eq!(piped.stdout, exact, "{to}: a pipe gets the file's bytes");
        let Some(shown) = on_terminal(&args) else {
            eprintln!("no `script` to run a terminal: the terminal half is not tested");
            return;
        };
        for payload in PAYLOADS {
            assert!(
                !shown.contains(payload),
                "{to}: {payload:?} raw in\n{shown}"
            );
        }
        // Where the format keeps a name's controls (folded stacks replace them), the terminal
        // shows them escaped.
        if String::from_utf8_lossy(&exact).contains(OSC52) {
            assert!(
                shown.contains(r"\x1b]52;c;cm0gLXJmIH4=\x07"),
                "{to}: {shown}"
            );
        }
        // As many lines as the file has: a name's newline is escaped, the lines' kept.
        let lines = String::from_utf8_lossy(&exact).lines().count();
        assert!(
            shown.lines().count() >= lines,
            "{to}: {} lines for {lines}",
            shown.lines().count()
        );
    }
}

/// The progress bar of `report` (two inputs, on a terminal) names the file it reads: a file
/// name carrying the attacks shows them escaped.
#[test]
fn the_progress_bar_names_files_escaped() {
    let i = inputs();
    let hostile = i.dir.join(format!("{OSC52}{C1}{BIDI}{CSI}.nytprof.out"));
    std::fs::copy(&i.plain, &hostile).expect("copy hello");
    let report = i.dir.join("report");
    let args = [
        os("report"),
        os("-o"),
        report.as_os_str(),
        hostile.as_os_str(),
        i.plain.as_os_str(),
    ];
    let Some(shown) = on_terminal(&args) else {
        eprintln!("no `script` to run a terminal: not tested");
        return;
    };
    assert!(report.join("index.html").is_file(), "{shown}");
    assert!(shown.contains(r"clip\x1b]52"), "{shown:?}");
    for payload in PAYLOADS {
        assert!(!shown.contains(payload), "{payload:?} raw in\n{shown:?}");
    }
}
