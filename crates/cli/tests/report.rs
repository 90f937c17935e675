//! `profcodec report`: a report of a real file of each format (and a comparison), opened in
//! headless Chromium, whose top functions equal `profcodec top --json`'s, and for NYTProf whose
//! per-line times equal `nytprofcsv`'s; bad inputs and output paths as validate and convert
//! treat them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod corpus_inputs;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use corpus_inputs::{profcodec, run_ok};
use profcodec_testkit::corpus::corpus_dir;
use profcodec_testkit::speedscope::Speedscope;

mod common;
use common::testdata;

/// The page's DOM as headless Chromium rendered it (served from 127.0.0.1 by the testkit's
/// harness, which bounds every load: a browser that hangs fails the test with a message), with
/// its screenshot copied beside the report as `screenshot.png`; the page's own text when
/// `PROFCODEC_CHROMIUM` is unset (after saying so).
fn rendered(report: &Path, work: &Path) -> String {
    rendered_page(report, "index.html", work)
}

/// [`rendered`] of the page `page` of the report (`files/0.html`).
fn rendered_page(report: &Path, page: &str, work: &Path) -> String {
    let Some(chromium) = std::env::var_os("PROFCODEC_CHROMIUM") else {
        println!("Chromium check not run: PROFCODEC_CHROMIUM is set by `cargo xtask test`");
        return std::fs::read_to_string(report.join(page)).unwrap();
    };
    // One browser at a time: the machine has few cores, and each browser's load is timed.
    static BROWSER: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let page = Speedscope::load_page(report, page, Path::new(&chromium), work)
        .unwrap_or_else(|e| panic!("{}: {e}", report.display()));
    assert!(
        page.title.contains("profcodec"),
        "the page did not load: title {:?}, DOM {:.300}",
        page.title,
        page.dom
    );
    let _ = std::fs::copy(&page.screenshot, work.join("screenshot.png"));
    page.dom
}

/// An attribute value or text as the DOM serializes it (or, without Chromium, as the template
/// escaped it), unescaped.
fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&#x2f;", "/")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let end = tag[start..].find('"')? + start;
    Some(unescape(&tag[start..end]))
}

/// One table row of the page: its attributes and its cells' raw values by column.
#[derive(Debug)]
struct PageRow {
    attrs: String,
    values: HashMap<String, f64>,
    cols: Vec<String>,
    /// The text of a `<pre>` in the row (a source line), unescaped.
    text: String,
}

/// The rows of the element whose opening tag holds `marker`, up to the next `</table>`.
fn rows(dom: &str, marker: &str) -> Vec<PageRow> {
    let start = dom
        .find(marker)
        .unwrap_or_else(|| panic!("{marker} is not on the page"));
    let end = dom[start..].find("</table>").unwrap() + start;
    let mut out = Vec::new();
    for chunk in dom[start..end].split("<tr").skip(1) {
        let Some(tag_end) = chunk.find('>') else {
            continue;
        };
        let attrs = chunk[..tag_end].to_owned();
        let mut values = HashMap::new();
        let mut cols = Vec::new();
        for td in chunk.split("<td").skip(1) {
            let tag = &td[..td.find('>').unwrap_or(td.len())];
            if let Some(col) = attr(tag, "data-col") {
                if let Some(v) = attr(tag, "data-value").filter(|v| !v.is_empty()) {
                    values.insert(col.clone(), v.parse::<f64>().unwrap());
                }
                cols.push(col);
            }
        }
        let text = chunk
            .split_once("<pre>")
            .and_then(|(_, rest)| rest.split_once("</pre>"))
            .map(|(t, _)| unescape(t))
            .unwrap_or_default();
        out.push(PageRow {
            attrs,
            values,
            cols,
            text,
        });
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

/// Checks that the rows of `profcodec top --json` (by self and by inclusive) are in the
/// page's whole-program table with the same self, inclusive and calls.
fn check_top(dom: &str, input: &Path) -> usize {
    let table = rows(dom, "id=\"top-all\"");
    assert!(!table.is_empty(), "{}: no top rows", input.display());
    let mut checked = 0;
    for by in ["self", "inclusive"] {
        let json = run_ok([
            "top".as_ref(),
            "--json".as_ref(),
            "-n".as_ref(),
            "20".as_ref(),
            "--by".as_ref(),
            by.as_ref(),
            input.as_os_str(),
        ]);
        let top: Vec<serde_json::Value> = serde_json::from_slice(&json).unwrap();
        for row in &top {
            let name = row["name"].as_str().unwrap();
            let file = row["file"].as_str().unwrap_or("");
            let metric = row["metric"].as_str().unwrap();
            let self_value = row["self"].as_f64().unwrap();
            let found = table.iter().find(|r| {
                attr(&r.attrs, "data-name").as_deref() == Some(name)
                    && attr(&r.attrs, "data-file").as_deref() == Some(file)
                    && r.values
                        .get(&format!("self:{metric}"))
                        .is_some_and(|&v| close(v, self_value))
            });
            let Some(found) = found else {
                panic!(
                    "{}: top row {name:?} ({file}) self {self_value} is not on the page",
                    input.display()
                );
            };
            match row["inclusive"].as_f64() {
                Some(inclusive) => {
                    let page = found.values[&format!("incl:{metric}")];
                    assert!(
                        close(page, inclusive),
                        "{name}: inclusive {page} vs {inclusive}"
                    );
                }
                None => assert!(!found.values.contains_key(&format!("incl:{metric}"))),
            }
            if let Some(calls) = row["calls"].as_f64() {
                assert!(found.cols.iter().any(|c| c == "calls"));
                let page = found.values.get("calls").copied().unwrap_or(f64::NAN);
                assert!(close(page, calls), "{name}: calls {page} vs {calls}");
            }
            checked += 1;
        }
    }
    checked
}

fn report(inputs: &[&Path], base: Option<&Path>, out: &Path) {
    let mut cmd = profcodec();
    cmd.arg("report").arg("-o").arg(out);
    if let Some(base) = base {
        cmd.arg("--base").arg(base);
    }
    cmd.args(inputs);
    let result = cmd.output().unwrap();
    assert!(
        result.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&result.stderr)
    );
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    for remote in ["http://", "https://", "//cdn"] {
        let outside = index
            .match_indices(remote)
            .any(|(i, _)| !index[i.saturating_sub(60)..i].contains("xmlns"));
        assert!(!outside, "{}: the page names {remote}", out.display());
    }
}

/// A real file of each format: testdata's, and the corpus's where it is present.
fn inputs() -> Vec<PathBuf> {
    let mut inputs = vec![
        testdata("nytprof/hello.nytprof.out"),
        testdata("hpctoolkit/demo.d"),
        testdata("hpcrun/demo-04.00b.hpcrun"),
        testdata("easyprofiler/small_v210.prof"),
        testdata("statprofiler/features.statprof"),
    ];
    match corpus_dir(env!("CARGO_MANIFEST_DIR")) {
        Some(corpus) => inputs.extend([
            corpus.join("nytprof/multi__compress0.nytprof.out"),
            corpus.join("hpctoolkit/dbase/loops-cputime-t.d"),
            corpus.join("hpctoolkit/meas/small.m"),
            corpus.join("easyprofiler/sample_v210_rdtsc.prof"),
            corpus.join("statprofiler/nested"),
        ]),
        None => println!("corpus reports not checked: no corpus"),
    }
    inputs
}

#[test]
fn the_top_functions_of_each_format_are_tops() {
    let dir = tempfile::tempdir().unwrap();
    for (i, input) in inputs().iter().enumerate() {
        let out = dir.path().join(format!("report-{i}"));
        report(&[input], None, &out);
        let work = dir.path().join(format!("work-{i}"));
        std::fs::create_dir_all(&work).unwrap();
        let dom = rendered(&out, &work);
        let checked = check_top(&dom, input);
        assert!(checked > 0, "{}", input.display());
        assert!(dom.contains("id=\"summary\""));
        println!("{}: {checked} top rows checked", input.display());
    }
}

/// One row of nytprofcsv's CSV: time, count, code.
type CsvRow = (f64, f64, String);

/// `nytprofcsv`'s CSV of `file` (written for `profile` into `dir`): per line, (time, count);
/// and the lines with string evals, to which nytprofcsv adds the evals' own statements (the
/// report shows an eval as a file of its own, `(eval N)[file:line]`, as the model holds it).
fn nytprofcsv(profile: &Path, file: &str, dir: &Path) -> Option<(Vec<CsvRow>, Vec<u32>)> {
    let status = std::process::Command::new("nytprofcsv")
        .arg("--file")
        .arg(profile)
        .arg("--out")
        .arg(dir)
        .output()
        .ok()?;
    assert!(status.status.success(), "nytprofcsv failed");
    let stem: String = file
        .trim_start_matches('/')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    // nytprofcsv names a file by its path below @INC where it lies there (`Carp-pm-4-line.csv`),
    // else by its whole path, with its fid: the longest name that ends the file's path.
    let csv = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            let base = name.strip_suffix("-line.csv")?;
            let (base, fid) = base.rsplit_once('-')?;
            fid.parse::<u32>().ok()?;
            let ends = stem == base || stem.ends_with(&format!("-{base}"));
            ends.then(|| (base.len(), p.clone()))
        })
        .max()
        .map(|(_, p)| p)
        .unwrap_or_else(|| panic!("no CSV of {file} ({stem}) in {}", dir.display()));
    let base = csv
        .file_name()
        .unwrap()
        .to_string_lossy()
        .rsplitn(3, '-')
        .nth(2)
        .unwrap()
        .to_owned();
    let eval_lines: Vec<u32> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().to_string_lossy().into_owned();
            let inner = name.strip_prefix("(eval ")?.split_once(")[")?.1;
            let (of, line) = inner.split_once(']')?.0.rsplit_once('-')?;
            (of == base).then(|| line.parse().ok()).flatten()
        })
        .collect();
    let text = std::fs::read_to_string(csv).unwrap();
    let lines = text
        .lines()
        // The header's lines begin with `#`, every line of the file with its time.
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .map(|l| {
            let mut parts = l.splitn(4, ',');
            let time: f64 = parts.next().unwrap().parse().unwrap();
            let count: f64 = parts.next().unwrap().parse().unwrap();
            let code = parts.nth(1).unwrap_or("").to_owned();
            (time, count, code)
        })
        .collect();
    Some((lines, eval_lines))
}

#[test]
fn nytprof_line_times_are_nytprofcsvs() {
    let mut profiles = vec![testdata("nytprof/hello.nytprof.out")];
    if let Some(corpus) = corpus_dir(env!("CARGO_MANIFEST_DIR")) {
        profiles.push(corpus.join("nytprof/multi__compress0.nytprof.out"));
    }
    let dir = tempfile::tempdir().unwrap();
    for (i, profile) in profiles.iter().enumerate() {
        let out = dir.path().join(format!("report-{i}"));
        report(&[profile], None, &out);
        let work = dir.path().join(format!("work-{i}"));
        std::fs::create_dir_all(&work).unwrap();
        // The hottest file's page comes first.
        let dom = rendered_page(&out, "files/0.html", &work);
        let start = dom.find("<div class=\"source\"").expect("a source view");
        let tag = &dom[start..start + dom[start..].find('>').unwrap()];
        let file = attr(tag, "data-file").unwrap();
        let csv_dir = dir.path().join(format!("csv-{i}"));
        let Some((csv, eval_lines)) = nytprofcsv(profile, &file, &csv_dir) else {
            println!("nytprofcsv check not run: nytprofcsv is installed by `cargo xtask test`");
            return;
        };
        let lines = rows(&dom[start..], "class=\"data lines\"");
        // The page's lines in order: (number, text, time, statements).
        let page: Vec<(u32, &str, f64, f64)> = lines
            .iter()
            .filter_map(|r| {
                let number = attr(&r.attrs, "data-line")?.parse().ok()?;
                let value = |k: &str| r.values.get(k).copied().unwrap_or(0.0);
                Some((number, r.text.as_str(), value("time"), value("statements")))
            })
            .collect();
        // nytprofcsv's rows are lines of its own copy of the source, which can lack a few of
        // the lines (a statement over several lines may be one row): each row is matched to
        // the page's next line of the same text.
        let (mut compared, mut count_differs, mut unmatched, mut next) = (0, 0, 0, 0);
        for (time, count, code) in &csv {
            let code = code.trim();
            let found = (next..page.len().min(next + 8)).find(|&i| page[i].1.trim() == code);
            let Some(i) = found else {
                unmatched += usize::from(*time > 0.0);
                continue;
            };
            next = i + 1;
            let (line, _, page_time, page_count) = page[i];
            if eval_lines.contains(&line) {
                continue;
            }
            assert!(
                (page_time - time).abs() <= 5e-7,
                "{file}:{line}: page time {page_time}, nytprofcsv {time}"
            );
            // The statement counts are the model's (shown, not checked here: nytprofcsv counts
            // a statement on some closing braces that the model's line table does not).
            if page_count != *count {
                count_differs += 1;
            }
            compared += usize::from(*time > 0.0);
        }
        assert!(
            unmatched * 10 <= compared,
            "{file}: {unmatched} timed rows of nytprofcsv matched no line of the page"
        );
        assert!(compared > 0, "{file}: no line with statements compared");
        println!(
            "{file}: {compared} lines' times equal nytprofcsv's ({count_differs} statement counts differ)"
        );
    }
}

#[test]
fn a_comparison_has_both_values_and_a_differential_flame_graph() {
    let base = testdata("hpcrun/demo-03.00b.hpcrun");
    let new = testdata("hpcrun/demo-04.00b.hpcrun");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("compare");
    report(&[&new], Some(&base), &out);
    assert!(out.join("diff.svg").exists());
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let dom = rendered(&out, &work);
    check_top(&dom, &new);
    let json = run_ok([
        "diff".as_ref(),
        "--json".as_ref(),
        "-n".as_ref(),
        "10".as_ref(),
        base.as_os_str(),
        new.as_os_str(),
    ]);
    let diff: Vec<serde_json::Value> = serde_json::from_slice(&json).unwrap();
    let changes = rows(&dom, "id=\"changes\"");
    for row in &diff {
        let name = row["name"].as_str().unwrap();
        let metric = row["metric"].as_str().unwrap_or("");
        let found = changes
            .iter()
            .find(|r| attr(&r.attrs, "data-name").as_deref() == Some(name))
            .unwrap_or_else(|| panic!("{name} is not in the comparison"));
        let change = found
            .values
            .iter()
            .find(|(k, _)| k.starts_with("change:") && (metric.is_empty() || k.ends_with(metric)))
            .map(|(_, v)| *v)
            .unwrap();
        let expected = row["self_change"].as_f64().unwrap_or(f64::NAN);
        assert!(
            close(change, expected),
            "{name}: change {change} vs {expected}"
        );
    }
}

#[test]
fn bad_input_is_worded_as_validate_words_it() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(testdata("nytprof/hello.nytprof.out")).unwrap();
    let cut = dir.path().join("cut.nytprof.out");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let validate = profcodec().arg("validate").arg(&cut).output().unwrap();
    let out = dir.path().join("r");
    let report = profcodec()
        .arg("report")
        .arg("-o")
        .arg(&out)
        .arg(&cut)
        .output()
        .unwrap();
    assert_eq!(report.status.code(), validate.status.code());
    let said = |o: &std::process::Output| String::from_utf8_lossy(&o.stderr).into_owned();
    let (v, r) = (said(&validate), said(&report));
    // The decoder's words (what, where, expected, seen) are the same.
    let words = |s: &str| s.rsplit(": ").next().unwrap_or("").trim().to_owned();
    assert_eq!(words(&r), words(&v), "report said {r:?}, validate {v:?}");
    assert!(!out.exists(), "a failed report leaves nothing");
}

#[test]
fn the_output_is_treated_as_convert_treats_it() {
    let dir = tempfile::tempdir().unwrap();
    let input = testdata("easyprofiler/small_v210.prof");
    let out = dir.path().join("r");
    report(&[&input], None, &out);
    // An existing report is replaced only with --force.
    let again = profcodec()
        .args(["report", "-o"])
        .arg(&out)
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    let forced = profcodec()
        .args(["report", "--force", "-o"])
        .arg(&out)
        .arg(&input)
        .output()
        .unwrap();
    assert!(forced.status.success());
    // A folder profcodec did not write, a file, a missing parent: refused before reading.
    let mine = dir.path().join("mine");
    std::fs::create_dir(&mine).unwrap();
    std::fs::write(mine.join("notes.txt"), "keep").unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "keep").unwrap();
    for target in [
        mine.clone(),
        file.clone(),
        dir.path().join("no/such/folder"),
    ] {
        let refused = profcodec()
            .args(["report", "--force", "-o"])
            .arg(&target)
            .arg(&input)
            .output()
            .unwrap();
        assert_eq!(refused.status.code(), Some(3), "{}", target.display());
    }
    assert_eq!(
        std::fs::read_to_string(mine.join("notes.txt")).unwrap(),
        "keep"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
    // An output inside an input folder is refused.
    let db = testdata("hpctoolkit/demo.d");
    let inside = profcodec()
        .args(["report", "-o"])
        .arg(db.join("report"))
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(inside.status.code(), Some(3));
}

/// The inputs with a timeline: testdata's, and the corpus's where it is present.
fn timeline_inputs() -> Vec<PathBuf> {
    let mut inputs = vec![
        testdata("hpctoolkit/demo.d"),
        testdata("easyprofiler/small_v210.prof"),
    ];
    if let Some(corpus) = corpus_dir(env!("CARGO_MANIFEST_DIR")) {
        inputs.extend([
            corpus.join("hpctoolkit/meas/small.m"),
            corpus.join("hpctoolkit/dbase/loops-cputime-t.d"),
            corpus.join("easyprofiler/sample_v210_rdtsc.prof"),
        ]);
    }
    inputs
}

#[test]
fn timelines_are_the_converted_trace_track_by_track() {
    let dir = tempfile::tempdir().unwrap();
    for (i, input) in timeline_inputs().iter().enumerate() {
        let out = dir.path().join(format!("report-{i}"));
        report(&[input], None, &out);
        // The trace beside the page is `convert --to perfetto`'s, byte for byte.
        let converted = dir.path().join(format!("convert-{i}.perfetto-trace"));
        run_ok([
            "convert".as_ref(),
            "--to".as_ref(),
            "perfetto".as_ref(),
            "-o".as_ref(),
            converted.as_os_str(),
            input.as_os_str(),
        ]);
        let beside = std::fs::read(out.join("trace.perfetto-trace")).unwrap();
        assert!(
            beside == std::fs::read(&converted).unwrap(),
            "{}: the trace beside the page differs from convert's",
            input.display()
        );
        let work = dir.path().join(format!("work-{i}"));
        std::fs::create_dir_all(&work).unwrap();
        let dom = rendered(&out, &work);
        assert!(
            dom.contains("href=\"trace.perfetto-trace\"") && dom.contains("ui.perfetto.dev"),
            "{}: no link to the trace that says how to open it",
            input.display()
        );
        // Each track's slices are the Chrome trace's slices of the lane of that name.
        let chrome = run_ok([
            "convert".as_ref(),
            "--to".as_ref(),
            "chrome".as_ref(),
            input.as_os_str(),
        ]);
        let mut expected: HashMap<String, f64> = HashMap::new();
        for (track, ..) in profcodec_testkit::timeline::chrome_slices(&chrome) {
            *expected.entry(track).or_default() += 1.0;
        }
        let mut page: HashMap<String, f64> = HashMap::new();
        for row in rows(&dom, "class=\"data sortable timelines\"") {
            let (Some(label), Some(name)) = (
                attr(&row.attrs, "data-track"),
                attr(&row.attrs, "data-name"),
            ) else {
                continue;
            };
            *page.entry(name).or_default() += row.values["slices"];
            let busy = row.values["busy"];
            let span = row.values["until"] - row.values["from"];
            assert!(
                busy <= span + 1.0,
                "{label}: busy {busy} over a span of {span}"
            );
        }
        assert!(
            !page.is_empty(),
            "{}: no track on the page",
            input.display()
        );
        assert_eq!(page, expected, "{}: slices per track", input.display());
        println!(
            "{}: {} tracks as the trace has them",
            input.display(),
            page.len()
        );
    }
}

#[test]
fn an_input_without_a_timeline_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    report(&[&testdata("nytprof/hello.nytprof.out")], None, &out);
    assert!(!out.join("trace.perfetto-trace").exists());
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    let section = &page[page.find("id=\"timelines\"").unwrap()..];
    assert!(section.contains("No timeline: expected"), "{section:.400}");
}

#[test]
fn a_report_over_max_output_is_refused_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let input = testdata("nytprof/hello.nytprof.out");
    let out = dir.path().join("r");
    let refused = profcodec()
        .args(["report", "--max-output", "10K", "-o"])
        .arg(&out)
        .arg(&input)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&refused.stderr);
    // A usage error, as convert's over its budget.
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(
        said.contains("over the output budget of 10.0 KiB") && said.contains("--max-output"),
        "{said}"
    );
    assert!(!out.exists(), "an over-budget report leaves nothing");
    run_ok::<_, &std::ffi::OsStr>([
        "report".as_ref(),
        "--max-output".as_ref(),
        "64M".as_ref(),
        "-o".as_ref(),
        out.as_os_str(),
        input.as_os_str(),
    ]);
    assert!(out.join("index.html").is_file());
}

/// Every page of the report folder `out`: its path in the folder and its text.
fn pages(out: &Path) -> Vec<(String, String)> {
    let mut pages = vec![(
        "index.html".to_owned(),
        std::fs::read_to_string(out.join("index.html")).unwrap(),
    )];
    if let Ok(entries) = std::fs::read_dir(out.join("files")) {
        let mut names: Vec<String> = entries
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let text = std::fs::read_to_string(out.join("files").join(&name)).unwrap();
            pages.push((format!("files/{name}"), text));
        }
    }
    pages
}

/// The values of attribute `name` in every tag of `page`, unescaped.
fn attrs<'a>(page: &'a str, name: &'a str) -> impl Iterator<Item = String> + 'a {
    let key = format!(" {name}=\"");
    page.match_indices(key.clone().leak() as &str)
        .map(move |(i, _)| {
            let start = i + key.len();
            let end = page[start..].find('"').unwrap() + start;
            unescape(&page[start..end])
        })
}

/// Checks that every link of every page of the report `out` names an existing file, and an
/// anchor that page has; and that no page names an address outside the folder or loads
/// anything (no `src`, no `url(`, no `@import`).
fn check_links(out: &Path) -> usize {
    let pages = pages(out);
    let ids: HashMap<&str, std::collections::HashSet<String>> = pages
        .iter()
        .map(|(path, text)| (path.as_str(), attrs(text, "id").collect()))
        .collect();
    let mut checked = 0;
    for (path, text) in &pages {
        let here = Path::new(path).parent().unwrap();
        for word in ["http://", "https://", " src=\"", "url(", "@import", "//cdn"] {
            assert!(
                !text.contains(word),
                "{path} of {} names {word}",
                out.display()
            );
        }
        for href in attrs(text, "href").chain(attrs(text, "data")) {
            let (file, anchor) = href.split_once('#').unwrap_or((&href, ""));
            let target = if file.is_empty() {
                path.clone()
            } else {
                let joined = here.join(file);
                // `..` out of files/ back to the folder.
                let mut parts: Vec<&str> = Vec::new();
                for part in joined.to_str().unwrap().split('/') {
                    match part {
                        ".." => {
                            parts
                                .pop()
                                .unwrap_or_else(|| panic!("{path}: {href} leaves the report"));
                        }
                        "" | "." => {}
                        part => parts.push(part),
                    }
                }
                parts.join("/")
            };
            assert!(
                out.join(&target).is_file(),
                "{path}: the link {href} names {target}, which is not in the report"
            );
            if !anchor.is_empty() {
                let known = ids
                    .get(target.as_str())
                    .unwrap_or_else(|| panic!("{path}: {href}: {target} is no page"));
                assert!(
                    known.contains(anchor),
                    "{path}: the link {href} names the anchor {anchor}, which {target} lacks"
                );
            }
            checked += 1;
        }
    }
    checked
}

#[test]
fn every_link_of_every_page_resolves_and_nothing_is_fetched() {
    let dir = tempfile::tempdir().unwrap();
    let all = inputs();
    for (i, input) in all.iter().enumerate() {
        let out = dir.path().join(format!("report-{i}"));
        report(&[input], None, &out);
        let links = check_links(&out);
        assert!(links > 0, "{}: no links", input.display());
        println!("{}: {links} links resolve", input.display());
    }
    // A comparison too.
    let out = dir.path().join("comparison");
    report(&[&all[0]], Some(&all[0]), &out);
    check_links(&out);
    // The index's path is printed.
    let printed = run_ok([
        "report".as_ref(),
        "-o".as_ref(),
        dir.path().join("printed").as_os_str(),
        all[0].as_os_str(),
    ]);
    assert_eq!(
        String::from_utf8(printed).unwrap().trim_end(),
        dir.path()
            .join("printed")
            .join("index.html")
            .display()
            .to_string()
    );
}

/// Data.pm's calls per call site: (file, line) -> (calls, inclusive time of the subs called).
fn data_pm_call_lines(profile: &Path) -> Option<HashMap<(String, u32), (f64, f64)>> {
    let script = r#"
        use Devel::NYTProf::Data;
        my $p = Devel::NYTProf::Data->new({ filename => $ARGV[0], quiet => 1 });
        for my $fi ($p->all_fileinfos) {
            my $calls = $fi->sub_call_lines;
            for my $line (keys %$calls) {
                my ($c, $t) = (0, 0);
                for my $s (values %{ $calls->{$line} }) { $c += $s->[0]; $t += $s->[1]; }
                printf "%s\t%d\t%s\t%.17g\n", $fi->filename, $line, $c, $t;
            }
        }
    "#;
    let out = std::process::Command::new("perl")
        .args(["-e", script])
        .arg(profile)
        .output()
        .ok()?;
    if !out.status.success() {
        println!(
            "Data.pm check not run: {}",
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("")
        );
        return None;
    }
    let text = String::from_utf8(out.stdout).unwrap();
    Some(
        text.lines()
            .map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                (
                    (f[0].to_owned(), f[1].parse().unwrap()),
                    (f[2].parse().unwrap(), f[3].parse().unwrap()),
                )
            })
            .collect(),
    )
}

#[test]
fn nytprof_line_calls_and_time_in_subs_are_data_pms() {
    let mut profiles = vec![testdata("nytprof/hello.nytprof.out")];
    if let Some(corpus) = corpus_dir(env!("CARGO_MANIFEST_DIR")) {
        for name in ["multi__compress0", "nested__compress0", "multi__default"] {
            profiles.push(corpus.join(format!("nytprof/{name}.nytprof.out")));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    for (i, profile) in profiles.iter().enumerate() {
        let Some(expected) = data_pm_call_lines(profile) else {
            return;
        };
        let out = dir.path().join(format!("report-{i}"));
        report(&[profile], None, &out);
        let mut compared = 0;
        for (path, page) in pages(&out).iter().skip(1) {
            let start = page.find("<div class=\"source\"").expect("a source view");
            let tag = &page[start..start + page[start..].find('>').unwrap()];
            let file = attr(tag, "data-file").unwrap();
            let mut seen = 0;
            for row in rows(&page[start..], "class=\"data lines\"") {
                let Some(line) = attr(&row.attrs, "data-line") else {
                    continue;
                };
                let line: u32 = line.parse().unwrap();
                let page_calls = row.values.get("calls").copied();
                let page_time = row.values.get("time_in_subs").copied();
                match expected.get(&(file.clone(), line)) {
                    Some(&(calls, time)) => {
                        assert_eq!(page_calls, Some(calls), "{path} {file}:{line} calls");
                        let t = page_time.unwrap();
                        assert!(
                            (t - time).abs() <= 1e-9 * time.abs().max(1e-9),
                            "{path} {file}:{line}: time in subs {t}, Data.pm {time}"
                        );
                        seen += 1;
                    }
                    None => assert!(
                        page_calls.is_none() && page_time.is_none(),
                        "{path} {file}:{line}: calls on the page, none in Data.pm"
                    ),
                }
            }
            // Every call line of Data.pm's is a row of the page (the first 20,000 rows).
            let lines = expected.keys().filter(|(f, _)| *f == file).count();
            assert_eq!(seen, lines, "{path} {file}: call lines");
            compared += seen;
        }
        println!(
            "{}: {compared} call lines equal Data.pm's",
            profile.display()
        );
    }
}
