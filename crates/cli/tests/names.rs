//! `profcodec top` of a database whose functions are long C++ template instantiations, as the
//! Kripke tutorial database's are (RAJA kernels of about 1,000, 400 and 2,800 characters):
//! off a terminal every line is at most 200 characters and the names show `<…>` and `(…)`; on
//! a terminal (a pseudo-terminal made by util-linux `script`) every line fits its width and
//! the name column is cut with a visible `…`; `--full-names` and `--json` keep each full name.
//! The two RAJA executors, alike when shortened, show the template argument that tells them
//! apart, on a terminal of 80 columns too, where the file column stays readable.
//!
//! The database, `testdata/hpctoolkit/kripke-names.d`, is made by profcodec-hpctoolkit's
//! writer from the model below (the Python package's tests read it too). The test checks the
//! files are what the writer makes now; `PROFCODEC_BLESS=1 cargo test -p profcodec-cli --test
//! names` rewrites them.
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use profcodec_hpctoolkit::model::{
    Database, DatabaseBuilder, EntryPointKind, Function, Identifier, Parent, Relation,
};
use serde_json::Value;

/// The most characters a line of `top` takes off a terminal.
const OFF_TERMINAL: usize = 200;

fn database_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpctoolkit/kripke-names.d")
}

fn segment(index: &str) -> String {
    format!("RAJA::TypedRangeSegment<Kripke::{index}, long>")
}

/// A kernel body as GCC names it: `Kripke::Kernel::LTimes(Kripke::Core::DataStore&)::{lambda(Kripke::Moment, ...)#1}`.
fn lambda(kernel: &str, indices: &[&str]) -> String {
    let params: Vec<String> = indices.iter().map(|i| format!("Kripke::{i}")).collect();
    format!(
        "Kripke::Kernel::{kernel}(Kripke::Core::DataStore&)::{{lambda({})#1}}",
        params.join(", ")
    )
}

/// RAJA's loop data over `indices`, calling the kernel's lambda.
fn loop_data(kernel: &str, indices: &[&str]) -> String {
    let segments: Vec<String> = indices.iter().map(|i| segment(i)).collect();
    format!(
        "RAJA::internal::LoopData<camp::tuple<{}>, camp::tuple<>, camp::resources::v1::Host, {}>",
        segments.join(", "),
        lambda(kernel, indices)
    )
}

/// `n` nested `RAJA::statement::For` loops around the lambda.
fn statements(n: usize) -> String {
    let segs: Vec<String> = (0..n).map(|i| format!("{i}l")).collect();
    let mut s = format!(
        "RAJA::statement::Lambda<0l, RAJA::statement::Segs<{}>, RAJA::statement::Params<> >",
        segs.join(", ")
    );
    for i in (1..n).rev() {
        s = format!("RAJA::statement::For<{i}l, RAJA::seq_exec, {s}>");
    }
    s
}

/// A RAJA statement executor's `exec` of a Kripke kernel, as the Kripke database names them.
fn executor(kernel: &str, indices: &[&str], for_types: &[&str]) -> String {
    let data = loop_data(kernel, indices);
    let types: Vec<String> = for_types.iter().map(|i| segment(i)).collect();
    format!(
        "void RAJA::internal::StatementExecutor<{}, RAJA::internal::ForTypes<{}>>::exec<{data}>({data}&)",
        statements(indices.len()),
        types.join(", ")
    )
}

/// The three long names, largest self value first, and what `top` shows of each by default:
/// the two executors, alike when shortened, show the template argument that tells them apart.
fn long_names() -> [(String, &'static str); 3] {
    let sweep = ["SdomId", "Direction", "Group", "ZoneK", "ZoneJ", "ZoneI"];
    let scattering = "Kripke::Kernel::scattering(Kripke::Core::DataStore&)::{lambda(Kripke::SdomId, \
        Kripke::Moment, Kripke::Moment, Kripke::Legendre, Kripke::GlobalGroup, Kripke::GlobalGroup, \
        Kripke::ZoneI, Kripke::ZoneJ, Kripke::ZoneK)#1}::operator()(Kripke::SdomId, Kripke::Moment, \
        Kripke::Moment, Kripke::Legendre, Kripke::GlobalGroup, Kripke::GlobalGroup, Kripke::ZoneI, \
        Kripke::ZoneJ, Kripke::ZoneK) const";
    [
        (
            executor("LTimes", &["Moment", "Direction", "Group", "Zone"], &[]),
            "void RAJA::internal::StatementExecutor<…, RAJA::internal::ForTypes<>>::exec<…>(…)",
        ),
        (
            scattering.to_owned(),
            "Kripke::Kernel::scattering(…)::{lambda(…)#1}::operator()(…) const",
        ),
        (
            executor("SweepSubdomain", &sweep, &sweep.repeat(5)),
            "void RAJA::internal::StatementExecutor<…, RAJA::internal::ForTypes<…>>::exec<…>(…)",
        ),
    ]
}

/// The files the functions are defined in.
const STATEMENT_EXECUTOR: &str =
    "/usr/WS2/kripke/tpl/raja/include/RAJA/pattern/kernel/internal/StatementList.hpp";
const SCATTERING: &str = "/usr/WS2/kripke/src/Kripke/Kernel/Scattering.cpp";

/// The database: main calls the three kernels (self 40, 25 and 15 seconds) and spends 5 of its
/// own, on one thread.
fn model() -> Database {
    let mut b = DatabaseBuilder::new("kripke.exe");
    let cpu = b.add_cputime_metric();
    let exe = b.add_module("/usr/WS2/kripke/build/bin/kripke.exe");
    let executor_file = b.add_file(STATEMENT_EXECUTOR);
    let scattering_file = b.add_file(SCATTERING);
    let main_file = b.add_file("/usr/WS2/kripke/src/kripke.cpp");
    let main = b.add_function(Function {
        name: Some("main".into()),
        module: Some(exe),
        offset: 0x40_1000,
        file: Some(main_file),
        line: 120,
        flags: 0,
    });
    let entry = b.add_entry_point(EntryPointKind::MAIN_THREAD, "main thread");
    let main_ctx = b.add_function_context(Parent::EntryPoint(entry), Relation::CALL, main);
    let thread = b.add_profile(vec![Identifier {
        kind: 3,
        logical_id: 0,
        ..Identifier::default()
    }]);
    let mut total = 5.0;
    let values = [40.0, 25.0, 15.0];
    for (i, ((name, _), value)) in long_names().into_iter().zip(values).enumerate() {
        let file = if i == 1 {
            scattering_file
        } else {
            executor_file
        };
        let f = b.add_function(Function {
            name: Some(name),
            module: Some(exe),
            offset: 0x40_2000 + 0x1000 * i as u64,
            file: Some(file),
            line: 40 + i as u32,
            flags: 0,
        });
        let ctx = b.add_function_context(Parent::Context(main_ctx), Relation::CALL, f);
        let id = b.ctx_id(ctx);
        b.set_value(thread, id, cpu.execution, value);
        b.set_value(thread, id, cpu.function, value);
        total += value;
    }
    let id = b.ctx_id(main_ctx);
    b.set_value(thread, id, cpu.execution, total);
    b.set_value(thread, id, cpu.function, 5.0);
    // The entry point and the whole program (ctxId 0) include everything, as hpcprof writes.
    let entry = b.entry_ctx_id(entry);
    b.set_value(thread, entry, cpu.execution, total);
    b.set_value(thread, 0, cpu.execution, total);
    b.finish()
}

/// The database's files as the writer makes them, by file name.
fn written() -> Vec<(String, Vec<u8>)> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("kripke-names.d");
    profcodec_hpctoolkit::write::write_database(&model(), &out).unwrap();
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn testdata_database_is_what_the_writer_makes() {
    let dir = database_dir();
    let bless = std::env::var_os("PROFCODEC_BLESS").is_some();
    for (name, bytes) in written() {
        let path = dir.join(&name);
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &bytes).unwrap();
            continue;
        }
        let on_disk = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (PROFCODEC_BLESS=1 writes it)", path.display()));
        assert!(
            on_disk == bytes,
            "{} differs from what the writer makes (PROFCODEC_BLESS=1 rewrites it)",
            path.display()
        );
    }
}

/// The names are as long as the Kripke database's.
#[test]
fn the_names_are_as_long_as_kripkes() {
    let lengths: Vec<usize> = long_names().iter().map(|(n, _)| n.len()).collect();
    assert!(
        lengths[0] > 900 && lengths[1] > 350 && lengths[2] > 2500,
        "{lengths:?}"
    );
}

fn ok(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn top(args: &[&str]) -> String {
    ok(&Command::new(env!("CARGO_BIN_EXE_profcodec"))
        .arg("top")
        .args(args)
        .arg(database_dir())
        .output()
        .unwrap())
}

/// The table's rows (after the heading and the column names, before the total), as lines.
fn rows(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 4, "{text}");
    lines[2..lines.len() - 1].to_vec()
}

#[test]
fn off_a_terminal_lines_are_at_most_200_characters_and_names_short() {
    let text = top(&[]);
    for line in text.lines() {
        let n = line.chars().count();
        assert!(n <= OFF_TERMINAL, "{n} characters: {line}");
    }
    let rows = rows(&text);
    for ((full, short), row) in long_names().iter().zip(&rows) {
        assert!(row.contains(short), "{short} in {row}");
        assert!(!row.contains(full.as_str()), "{row}");
    }
    // The short names leave room for the files, whole.
    assert!(rows[0].ends_with(STATEMENT_EXECUTOR), "{}", rows[0]);
    assert!(rows[1].ends_with(SCATTERING), "{}", rows[1]);
    assert!(rows[3].contains("main"), "{}", rows[3]);
    assert!(text.contains("<…>") && text.contains("(…)"), "{text}");
}

#[test]
fn full_names_are_printed_whole() {
    let text = top(&["--full-names"]);
    let rows = rows(&text);
    for ((full, _), row) in long_names().iter().zip(&rows) {
        // Each name whole, then its file after two blanks.
        assert!(row.contains(&format!("  {full}  ")), "{full} in {row}");
    }
    assert!(!text.contains('…'), "{text}");
    // Every line is as wide as the longest name asks.
    assert!(text.lines().any(|l| l.chars().count() > 2500));
}

#[test]
fn json_keeps_full_names() {
    for args in [&["--json"][..], &["--json", "--full-names"][..]] {
        let json: Value = serde_json::from_str(&top(args)).unwrap();
        let names: Vec<&str> = json
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        let expected: Vec<String> = long_names().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names[..3], expected, "{args:?}");
        assert_eq!(names[3], "main");
    }
}

/// `top` run on a pseudo-terminal of `cols` columns (util-linux `script`), its output with
/// the terminal's carriage returns removed; `None`, after saying why, without `script`.
fn top_on_terminal(cols: usize, args: &str) -> Option<String> {
    let usable = Command::new("script")
        .args(["-qec", "true", "/dev/null"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !usable {
        eprintln!("SKIPPED: util-linux `script` is missing: no pseudo-terminal to run `top` on");
        return None;
    }
    let command = format!(
        "stty cols {cols} rows 50; exec '{}' top {args} '{}'",
        env!("CARGO_BIN_EXE_profcodec"),
        database_dir().display()
    );
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    Some(ok(&out).replace('\r', ""))
}

/// The name and file cells of each row: the text under the `name` and `file` headings.
fn name_and_file_cells(text: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let header: Vec<char> = lines[1].chars().collect();
    let at = |word: &str| {
        let w: Vec<char> = word.chars().collect();
        header
            .windows(w.len())
            .position(|x| x == w.as_slice())
            .unwrap()
    };
    let (name, file) = (at("name"), at("file"));
    rows(text)
        .iter()
        .map(|row| {
            let chars: Vec<char> = row.chars().collect();
            let cell = |r: std::ops::Range<usize>| {
                chars[r.start.min(chars.len())..r.end.min(chars.len())]
                    .iter()
                    .collect::<String>()
                    .trim()
                    .to_owned()
            };
            (cell(name..file), cell(file..chars.len()))
        })
        .collect()
}

#[test]
fn on_a_terminal_lines_fit_its_width_and_names_are_cut_with_a_mark() {
    for cols in [100, 80] {
        let Some(text) = top_on_terminal(cols, "") else {
            return;
        };
        for line in text.lines() {
            let n = line.chars().count();
            assert!(n <= cols, "{n} characters on a terminal of {cols}: {line}");
        }
        let cells = name_and_file_cells(&text);
        // The executors' names do not fit: each keeps the part that tells it from the other,
        // after a mark.
        for (row, (_, short)) in [0, 2].into_iter().zip([&long_names()[0], &long_names()[2]]) {
            let name = &cells[row].0;
            assert!(name.starts_with('…'), "{name} at {cols}: {text}");
            assert!(
                short.ends_with(name.trim_start_matches('…')),
                "{name}: {text}"
            );
        }
        assert_ne!(cells[0].0, cells[2].0, "{text}");
        // The values stay whole.
        let rows = rows(&text);
        assert!(rows[0].trim_start().starts_with("40.000 s"), "{}", rows[0]);
        assert!(text.lines().last().unwrap().contains("85.000 s"), "{text}");
    }
}

/// At 80 columns, as the Kripke database showed them, no two rows of different functions
/// show the same name, the name column has the room before the file column, and the file
/// column keeps a readable width: at least 16 characters, file names that fit it whole.
#[test]
fn at_80_columns_rows_are_told_apart_and_files_stay_readable() {
    let Some(text) = top_on_terminal(80, "") else {
        return;
    };
    let cells = name_and_file_cells(&text);
    let json: Value = serde_json::from_str(&top(&["--json"])).unwrap();
    let full: Vec<&str> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(cells.len(), full.len(), "{text}");
    for i in 0..cells.len() {
        for j in i + 1..cells.len() {
            if full[i] != full[j] {
                assert_ne!(
                    cells[i].0, cells[j].0,
                    "rows {i} and {j} look alike: {text}"
                );
            }
        }
    }
    let name_width = cells.iter().map(|(n, _)| n.chars().count()).max().unwrap();
    let file_width = cells.iter().map(|(_, f)| f.chars().count()).max().unwrap();
    assert!(name_width >= file_width, "{text}");
    assert!(file_width >= 16, "{text}");
    assert!(cells[1].1.ends_with("/Scattering.cpp"), "{text}");
    assert!(cells[0].1.ends_with("tementList.hpp"), "{text}");
    assert!(cells[3].1.ends_with("/kripke.cpp"), "{text}");
}

/// Off a terminal the short names are distinct too, and `--json` keeps each full name.
#[test]
fn short_names_are_distinct_off_a_terminal() {
    let cells = name_and_file_cells(&top(&[]));
    let names: std::collections::HashSet<&str> = cells.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names.len(), cells.len(), "{cells:?}");
}

#[test]
fn full_names_on_a_terminal_are_not_cut() {
    let Some(text) = top_on_terminal(100, "--full-names") else {
        return;
    };
    let rows = rows(&text);
    for ((full, _), row) in long_names().iter().zip(&rows) {
        assert!(row.contains(full.as_str()), "{full} in {row}");
    }
}
