//! The real profiler's files (`shared/corpus/statprofiler`) against the real reader's dumps
//! (`*.reader.txt`, made by `dump.pl` over `Devel::StatProfiler::Reader`), and rewrites of them.
#![allow(clippy::unwrap_used)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use profcodec_statprofiler::read::packets::Packets;
use profcodec_statprofiler::read::reader_file_name;
use profcodec_statprofiler::{Frame, PerlText, Profile, Reader, TraceReader};
use profcodec_testkit::corpus::{corpus_subdir, files_below};

fn corpus_files() -> Option<(PathBuf, Vec<PathBuf>)> {
    let dir = corpus_subdir(env!("CARGO_MANIFEST_DIR"), "statprofiler")?;
    let files: Vec<PathBuf> = files_below(&dir)
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name.starts_with("statprof.out.") || name == "profile.bin")
                && !name.ends_with(".reader.txt")
        })
        .collect();
    assert!(
        files.len() >= 8,
        "expected the 8 corpus files, found {files:?}"
    );
    Some((dir, files))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// What `dump.pl` prints for a file, rebuilt from our trace reader.
fn dump(data: &[u8], shown_path: &str) -> String {
    let reader = Reader::from_slice(data).unwrap();
    let header = reader.header().clone();
    let g = header.genealogy.unwrap();
    let v = header.perl_version.unwrap();
    let mut out = String::new();
    writeln!(out, "file: {shown_path}").unwrap();
    writeln!(out, "format_version: 1").unwrap();
    writeln!(
        out,
        "perl_version: {}.{}.{}",
        v.revision, v.version, v.subversion
    )
    .unwrap();
    writeln!(
        out,
        "tick_duration_us: {}",
        header.tick_duration_us.unwrap()
    )
    .unwrap();
    writeln!(out, "stack_sample_depth: {}", header.stack_depth.unwrap()).unwrap();
    writeln!(
        out,
        "genealogy: id={} ordinal={} parent_id={} parent_ordinal={}",
        g.id.hex(),
        g.ordinal,
        g.parent_id.hex(),
        g.parent_ordinal
    )
    .unwrap();
    let meta: Vec<String> = header
        .metadata
        .iter()
        .map(|(k, v)| format!("{:?} => {:?}", text(&k.bytes), text(&v.bytes)))
        .collect();
    writeln!(out, "header_metadata: {{{}}}", meta.join(", ")).unwrap();
    let mut traces = TraceReader::new(reader);
    let (mut n, mut total) = (0u64, 0u64);
    while let Some(t) = traces.next_trace().unwrap() {
        n += 1;
        total += u64::from(t.weight);
        writeln!(
            out,
            "trace {n} weight={} op=\"{}\" sections_changed={} metadata_changed={}",
            t.weight,
            text(t.op_name.bytes),
            u8::from(t.sections_changed),
            u8::from(t.metadata_changed)
        )
        .unwrap();
        for f in t.frames() {
            match f {
                Frame::Sub {
                    package,
                    name,
                    file,
                    line,
                    first_line,
                } => writeln!(
                    out,
                    "  sub  \"{}::{}\" file=\"{}\" line={line} first_line={first_line}",
                    text(package.bytes),
                    text(name.bytes),
                    text(&reader_file_name(file.bytes, &g.id))
                ),
                Frame::Xsub { package, name } => writeln!(
                    out,
                    "  xsub \"{}::{}\" file=\"\" line=-1 first_line=-1",
                    text(package.bytes),
                    text(name.bytes)
                ),
                Frame::Eval { file, line } => writeln!(
                    out,
                    "  eval file=\"{}\" line={line}",
                    text(&reader_file_name(file.bytes, &g.id))
                ),
                Frame::Main { file, line } => {
                    writeln!(out, "  main file=\"{}\" line={line}", text(file.bytes()))
                }
            }
            .unwrap();
        }
    }
    let mut sources: Vec<(String, String)> = traces
        .source_code()
        .iter()
        .map(|(seq, s)| (format!("(eval {seq})"), text(&s.bytes)))
        .collect();
    sources.sort();
    for (k, s) in sources {
        writeln!(out, "source \"{k}\" = \"{s}\"").unwrap();
    }
    writeln!(
        out,
        "end: traces={n} total_weight={total} file_ended={} stream_ended={}",
        u8::from(traces.file_ended()),
        u8::from(traces.stream_ended())
    )
    .unwrap();
    out.push('\n');
    out
}

fn shown(dir: &Path, file: &Path) -> String {
    file.strip_prefix(dir)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn traces_equal_the_real_readers_dump() {
    let Some((dir, files)) = corpus_files() else {
        return;
    };
    for file in &files {
        let data = std::fs::read(file).unwrap();
        let mut want_path = file.clone().into_os_string();
        want_path.push(".reader.txt");
        let want = std::fs::read_to_string(&want_path).unwrap();
        let got = dump(&data, &shown(&dir, file));
        if got != want {
            let line = got
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(got.lines().count().min(want.lines().count()));
            panic!(
                "{}: first difference at line {}:\n ours: {:?}\n real: {:?}",
                file.display(),
                line + 1,
                got.lines().nth(line),
                want.lines().nth(line)
            );
        }
    }
}

/// The logical stream of a file: every packet decompressed and concatenated.
fn logical_stream(data: &[u8]) -> (Vec<u8>, Vec<usize>) {
    let mut dec = snap::raw::Decoder::new();
    let mut out = Vec::new();
    let mut sizes = Vec::new();
    for p in Packets::new(data).unwrap() {
        sizes.push(p.unwrap().decompress_into(&mut dec, &mut out).unwrap());
    }
    (out, sizes)
}

#[test]
fn rewrite_gives_the_same_logical_stream() {
    let Some((_, files)) = corpus_files() else {
        return;
    };
    for file in &files {
        let data = std::fs::read(file).unwrap();
        let profile = Profile::parse(&data).unwrap();
        let again = profile.to_bytes();
        let (a, pa) = logical_stream(&data);
        let (b, pb) = logical_stream(&again);
        assert_eq!(a, b, "{}: logical streams differ", file.display());
        assert_eq!(&data[..14], &again[..14]);
        assert_eq!(Profile::parse(&again).unwrap(), profile);
        // Packets are cut where the real writer's buffer cuts them; only the fork's extra flush
        // (the parent's first file) adds a boundary the stream does not record.
        if !file.to_string_lossy().contains("fork/") {
            assert_eq!(pa, pb, "{}: packet sizes differ", file.display());
        }
    }
}

#[test]
fn io_read_and_slice_readers_agree() {
    let Some((_, files)) = corpus_files() else {
        return;
    };
    for file in &files {
        let data = std::fs::read(file).unwrap();
        let mut a = Reader::from_slice(&data).unwrap();
        let mut b = Reader::new(std::io::Cursor::new(&data)).unwrap();
        assert_eq!(a.header(), b.header());
        loop {
            let ea = a.next_event().unwrap().map(|e| e.to_owned());
            let eb = b.next_event().unwrap().map(|e| e.to_owned());
            assert_eq!(ea, eb);
            if ea.is_none() {
                break;
            }
        }
    }
}

#[test]
fn corpus_session_groups_the_fork() {
    let Some((dir, _)) = corpus_files() else {
        return;
    };
    let procs =
        profcodec_statprofiler::session::open_session(&dir.join("fork/statprof.out")).unwrap();
    assert_eq!(procs.len(), 2);
    assert_eq!(procs[0].parent, None);
    assert_eq!(procs[0].files.len(), 2);
    assert_eq!(procs[0].files[1].genealogy().ordinal, 2);
    assert_eq!(procs[1].parent, Some((procs[0].id, 1)));
    let single =
        profcodec_statprofiler::session::open_session(&dir.join("file_option/profile.bin"))
            .unwrap();
    assert_eq!(single.len(), 1);
}
