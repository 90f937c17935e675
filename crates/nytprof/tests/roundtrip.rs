//! Proptest round trips: varints at every length boundary, records (plain and deflated), and the
//! model through its writer.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};

use profcodec_common::Cursor;
use profcodec_nytprof::model::{FileInfo, LineTime, PidRun, SubInfo};
use profcodec_nytprof::raw::{encode_u32, put_i32, put_u32, read_i32, read_u32};
use profcodec_nytprof::read::Line;
use profcodec_nytprof::{ModelOptions, Profile, Record, Str, Writer, parse};
use proptest::prelude::*;

const BOUNDARIES: &[u32] = &[
    0,
    0x7f,
    0x80,
    0x3fff,
    0x4000,
    0x1f_ffff,
    0x20_0000,
    0xfff_ffff,
    0x1000_0000,
    u32::MAX,
];

#[test]
fn varint_boundaries() {
    for &b in BOUNDARIES {
        for v in [b.wrapping_sub(1), b, b.wrapping_add(1)] {
            let mut out = Vec::new();
            put_u32(&mut out, v);
            let expected_len = match v {
                0..=0x7f => 1,
                0x80..=0x3fff => 2,
                0x4000..=0x1f_ffff => 3,
                0x20_0000..=0xfff_ffff => 4,
                _ => 5,
            };
            assert_eq!(out.len(), expected_len, "{v:#x}");
            assert_eq!(encode_u32(v).1, expected_len);
            assert_eq!(read_u32(&mut Cursor::new(&out, 0), "v").unwrap(), v);
            // Every cut of the encoding is a truncation error, never a wrong value.
            for cut in 0..out.len() {
                assert!(read_u32(&mut Cursor::new(&out[..cut], 0), "v").is_err());
            }
        }
    }
    for v in [-1, -5, i32::MIN, i32::MAX, -0x80, 0x7f] {
        let mut out = Vec::new();
        put_i32(&mut out, v);
        assert_eq!(read_i32(&mut Cursor::new(&out, 0), "v").unwrap(), v);
        if v < 0 {
            assert_eq!(out.len(), 5);
        }
    }
}

/// Owned form of a record, for generating.
#[derive(Debug, Clone)]
enum Owned {
    Attr(Vec<u8>),
    Comment(Vec<u8>),
    PidStart(u32, u32, f64),
    PidEnd(u32, f64),
    NewFid([u32; 6], Vec<u8>, bool),
    TimeLine(i32, u32, u32),
    TimeBlock(i32, [u32; 4]),
    Discount,
    Src(u32, u32, Vec<u8>, bool),
    SubInfo(u32, Vec<u8>, u32, u32),
    Callers([u32; 4], [f64; 3], Vec<u8>, Vec<u8>),
    Entry(u32, u32),
    Return(u32, f64, f64, Vec<u8>),
}

fn s(bytes: &[u8], utf8: bool) -> Str<'_> {
    Str { bytes, utf8 }
}

impl Owned {
    fn record(&self) -> Record<'_> {
        match self {
            Owned::Attr(t) => Record::Attribute(Line { text: t }),
            Owned::Comment(t) => Record::Comment(Line { text: t }),
            Owned::PidStart(pid, ppid, time) => Record::PidStart {
                pid: *pid,
                ppid: *ppid,
                time: *time,
            },
            Owned::PidEnd(pid, time) => Record::PidEnd {
                pid: *pid,
                time: *time,
            },
            Owned::NewFid(v, name, u) => Record::NewFid {
                fid: v[0],
                eval_fid: v[1],
                eval_line: v[2],
                flags: v[3],
                size: v[4],
                mtime: v[5],
                name: s(name, *u),
            },
            Owned::TimeLine(t, f, l) => Record::TimeLine {
                ticks: *t,
                fid: *f,
                line: *l,
            },
            Owned::TimeBlock(t, v) => Record::TimeBlock {
                ticks: *t,
                fid: v[0],
                line: v[1],
                block_line: v[2],
                sub_line: v[3],
            },
            Owned::Discount => Record::Discount,
            Owned::Src(f, l, t, u) => Record::SrcLine {
                fid: *f,
                line: *l,
                text: s(t, *u),
            },
            Owned::SubInfo(f, n, a, b) => Record::SubInfo {
                fid: *f,
                name: s(n, false),
                first_line: *a,
                last_line: *b,
            },
            Owned::Callers(u, n, a, b) => Record::SubCallers {
                fid: u[0],
                line: u[1],
                caller: s(a, false),
                count: u[2],
                incl: n[0],
                excl: n[1],
                reci: n[2],
                rec_depth: u[3],
                called: s(b, true),
            },
            Owned::Entry(f, l) => Record::SubEntry { fid: *f, line: *l },
            Owned::Return(d, a, b, n) => Record::SubReturn {
                depth: *d,
                incl_ticks: *a,
                excl_ticks: *b,
                name: s(n, false),
            },
        }
    }
}

fn boundary_u32() -> impl Strategy<Value = u32> {
    prop_oneof![
        any::<u32>(),
        proptest::sample::select(BOUNDARIES.to_vec()),
        0u32..300,
    ]
}

fn text() -> impl Strategy<Value = Vec<u8>> {
    // Line records cannot hold `\n`; an `nv_size` attribute must say 8.
    proptest::collection::vec(
        any::<u8>().prop_filter("no newline", |b| *b != b'\n'),
        0..20,
    )
    .prop_filter("nv_size", |t| !t.starts_with(b"nv_size="))
}

fn bytes() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..40)
}

fn nv() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>().prop_filter("not NaN", |v| !v.is_nan()),
        -1e9..1e9f64
    ]
}

fn owned() -> impl Strategy<Value = Owned> {
    let u = boundary_u32;
    prop_oneof![
        text().prop_map(Owned::Attr),
        text().prop_map(Owned::Comment),
        (u(), u(), nv()).prop_map(|(a, b, c)| Owned::PidStart(a, b, c)),
        (u(), nv()).prop_map(|(a, b)| Owned::PidEnd(a, b)),
        (proptest::array::uniform6(u()), bytes(), any::<bool>())
            .prop_map(|(a, b, c)| Owned::NewFid(a, b, c)),
        (any::<i32>(), u(), u()).prop_map(|(a, b, c)| Owned::TimeLine(a, b, c)),
        (any::<i32>(), proptest::array::uniform4(u())).prop_map(|(a, b)| Owned::TimeBlock(a, b)),
        Just(Owned::Discount),
        (u(), u(), bytes(), any::<bool>()).prop_map(|(a, b, c, d)| Owned::Src(a, b, c, d)),
        (u(), bytes(), u(), u()).prop_map(|(a, b, c, d)| Owned::SubInfo(a, b, c, d)),
        (
            proptest::array::uniform4(u()),
            proptest::array::uniform3(nv()),
            bytes(),
            bytes()
        )
            .prop_map(|(a, b, c, d)| Owned::Callers(a, b, c, d)),
        (u(), u()).prop_map(|(a, b)| Owned::Entry(a, b)),
        (u(), nv(), nv(), bytes()).prop_map(|(a, b, c, d)| Owned::Return(a, b, c, d)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn any_u32_and_i32_round_trip(v in any::<u32>(), i in any::<i32>()) {
        let mut out = Vec::new();
        put_u32(&mut out, v);
        put_i32(&mut out, i);
        let mut c = Cursor::new(&out, 0);
        prop_assert_eq!(read_u32(&mut c, "v").unwrap(), v);
        prop_assert_eq!(read_i32(&mut c, "i").unwrap(), i);
        prop_assert!(c.is_empty());
    }

    #[test]
    fn records_round_trip(
        records in proptest::collection::vec(owned(), 0..40),
        deflate_at in proptest::option::of(0usize..40),
        level in 0u32..10,
    ) {
        let mut w = Writer::new(Vec::new()).compression_level(level);
        w.header(5, 0).unwrap();
        let mut expected = Vec::new();
        for (i, r) in records.iter().enumerate() {
            if deflate_at == Some(i) {
                w.record(&Record::StartDeflate).unwrap();
                expected.push(None);
            }
            w.record(&r.record()).unwrap();
            expected.push(Some(r));
        }
        let bytes = w.finish().unwrap();
        let file = parse(&bytes).unwrap();
        let got: Vec<Record<'_>> = file.records().map(|r| r.unwrap()).collect();
        prop_assert_eq!(got.len(), expected.len());
        for (g, e) in got.iter().zip(&expected) {
            match e {
                None => prop_assert_eq!(*g, Record::StartDeflate),
                Some(e) => prop_assert_eq!(*g, e.record()),
            }
        }
        // Uncompressed files come back byte for byte.
        if deflate_at.is_none() || deflate_at.is_some_and(|d| d >= records.len()) {
            prop_assert_eq!(profcodec_nytprof::write::rewrite(&file, level).unwrap(), bytes.clone());
        }
        // The streaming reader agrees.
        let mut reader = profcodec_nytprof::Reader::new(&bytes[..]).unwrap();
        let mut i = 0;
        while let Some(r) = reader.next_record() {
            prop_assert_eq!(r.unwrap(), got[i]);
            i += 1;
        }
        prop_assert_eq!(i, got.len());
    }

    #[test]
    fn model_round_trips(
        nfiles in 1u32..5,
        lines in proptest::collection::vec((1u32..5, 0u32..50, 0i32..100_000, 1i64..5), 0..30),
        subs in proptest::collection::vec(("[a-z]{1,6}", 1u32..5, 0u32..40, proptest::collection::vec((1u32..5, 0u32..50, 1u32..9, 0u32..1000, "[a-z]{1,4}"), 0..4)), 0..8),
        compress in proptest::option::of(0u32..10),
    ) {
        let mut p = Profile { major: 5, minor: 0, ..Profile::default() };
        p.attributes.insert("ticks_per_sec".into(), "10000000".into());
        p.attributes.insert("nv_size".into(), "8".into());
        p.options.insert("calls".into(), "1".into());
        p.comments.push("Perl profile database.".into());
        for fid in 1..=nfiles {
            p.files.insert(fid, FileInfo {
                fid,
                name: format!("/tmp/f{fid}.pl \u{e9}"),
                name_utf8: false,
                eval: (fid > 1 && fid % 2 == 0).then_some(profcodec_nytprof::model::EvalParent { fid: 1, line: 3 }),
                flags: 0x12,
                size: 0,
                mtime: 0,
                subs_defined: BTreeSet::new(),
                merged_fids: Vec::new(),
            });
        }
        for (fid, line, ticks, count) in lines {
            let fid = fid.min(nfiles);
            let e = p.line_times.entry(fid).or_default().entry(line).or_insert(LineTime { time: 0.0, count: 0 });
            e.time = f64::from(ticks) / 1e7;
            e.count = count;
        }
        for (name, fid, first, callers) in subs {
            let fid = fid.min(nfiles);
            let name = format!("main::{name}");
            if p.subs.contains_key(&name) {
                // One definition per name: the loader keeps the lowest fid of several.
                continue;
            }
            let mut si = SubInfo { name: name.clone(), fid: Some(fid), first_line: Some(first), last_line: Some(first + 2), ..SubInfo::default() };
            for (cfid, cline, count, t, caller) in callers {
                let ci = si.callers.entry(cfid.min(nfiles)).or_default().entry(cline).or_default();
                ci.count += u64::from(count);
                ci.incl += f64::from(t) * 1e-6;
                ci.excl += f64::from(t) * 5e-7;
                ci.calling_subs.insert(format!("main::{caller}"));
                si.calls += u64::from(count);
                si.incl += f64::from(t) * 1e-6;
                si.excl += f64::from(t) * 5e-7;
            }
            p.files.get_mut(&fid).unwrap().subs_defined.insert(name.clone());
            p.subs.insert(name, si);
        }
        p.pids.push(PidRun { pid: 42, ppid: 1, start: 1000.5, end: Some(1001.25) });
        let mut out = Vec::new();
        p.write_with(&mut out, compress).unwrap();
        // The raw model: collapsing would merge the sibling evals made above.
        let back = Profile::from_bytes_with(&out, ModelOptions::raw()).unwrap();
        prop_assert_eq!(&back.files, &p.files);
        prop_assert_eq!(&back.attributes, &p.attributes);
        prop_assert_eq!(&back.options, &p.options);
        prop_assert_eq!(&back.pids, &p.pids);
        prop_assert_eq!(back.subs.keys().collect::<Vec<_>>(), p.subs.keys().collect::<Vec<_>>());
        for (name, si) in &p.subs {
            let b = &back.subs[name];
            prop_assert_eq!(b.calls, si.calls);
            prop_assert_eq!(b.fid, si.fid);
            prop_assert_eq!(b.first_line, si.first_line);
            let places = |s: &SubInfo| s.callers.iter().map(|(f, l)| (*f, l.iter().map(|(l, c)| (*l, c.count, c.calling_subs.clone())).collect::<Vec<_>>())).collect::<BTreeMap<_, _>>();
            prop_assert_eq!(places(b), places(si));
            prop_assert!((b.incl - si.incl).abs() < 1e-9);
        }
        for (fid, ls) in &p.line_times {
            for (line, lt) in ls {
                let b = back.line_times[fid][line];
                prop_assert_eq!(b.count, lt.count);
                prop_assert!((b.time - lt.time).abs() < 1e-12);
            }
        }
    }

    /// Block mode (`blocks=1`): a profile made of `*` statements (some discounted) over a few
    /// fids, read into the raw model, written by the model writer and read again keeps its
    /// line, block and sub line times and counts.
    #[test]
    fn block_times_round_trip(
        statements in proptest::collection::vec(
            (1u32..4, 0u32..30, 0u32..10, 0u32..6, 0i32..50_000, any::<bool>()),
            1..60,
        ),
        compress in proptest::option::of(0u32..10),
    ) {
        let mut w = Writer::new(Vec::new());
        w.header(5, 0).unwrap();
        for line in [&b"ticks_per_sec=10000000"[..], b"nv_size=8"] {
            w.record(&Record::Attribute(Line { text: line })).unwrap();
        }
        w.record(&Record::PidStart { pid: 7, ppid: 1, time: 10.0 }).unwrap();
        for fid in 1..4u32 {
            let name = format!("/tmp/b{fid}.pl");
            w.record(&Record::NewFid {
                fid, eval_fid: 0, eval_line: 0, flags: 0x12, size: 0, mtime: 0,
                name: Str { bytes: name.as_bytes(), utf8: false },
            }).unwrap();
        }
        for (fid, line, block, sub, ticks, discounted) in &statements {
            if *discounted {
                w.record(&Record::Discount).unwrap();
            }
            w.record(&Record::TimeBlock {
                ticks: *ticks, fid: *fid, line: *line, block_line: *block, sub_line: *sub,
            }).unwrap();
        }
        w.record(&Record::PidEnd { pid: 7, time: 11.0 }).unwrap();
        let original = Profile::from_bytes_with(&w.finish().unwrap(), ModelOptions::raw()).unwrap();
        prop_assert!(original.block_times.is_some() && original.sub_times.is_some());
        let mut out = Vec::new();
        original.write_with(&mut out, compress).unwrap();
        let back = Profile::from_bytes_with(&out, ModelOptions::raw()).unwrap();
        let same = |a: &profcodec_nytprof::model::LineTimes, b: &profcodec_nytprof::model::LineTimes| {
            a.len() == b.len() && a.iter().zip(b).all(|((fa, la), (fb, lb))| {
                fa == fb && la.len() == lb.len() && la.iter().zip(lb).all(|((x, p), (y, q))| {
                    x == y && p.count == q.count && (p.time - q.time).abs() < 1e-12
                })
            })
        };
        prop_assert!(same(&original.line_times, &back.line_times));
        prop_assert!(same(original.block_times.as_ref().unwrap(), back.block_times.as_ref().unwrap()));
        prop_assert!(same(original.sub_times.as_ref().unwrap(), back.sub_times.as_ref().unwrap()));
    }

    /// Eval collapsing over arbitrary eval trees, sources, subs and callers never panics, and
    /// running it again changes nothing.
    #[test]
    fn collapse_is_total_and_idempotent(
        parents in proptest::collection::vec((0u32..12, 0u32..3), 1..24),
        sources in proptest::collection::vec((0u32..24, 0u32..3, "[ab0]{0,3}"), 0..30),
        subs in proptest::collection::vec((0u32..24, any::<bool>(), proptest::collection::vec((0u32..25, 0u32..3, 1u64..4), 0..3)), 0..20),
        lines in proptest::collection::vec((0u32..25, 0u32..3, 1i64..5), 0..20),
        max in 1usize..4,
    ) {
        let mut p = Profile::default();
        p.files.insert(1, FileInfo {
            fid: 1, name: "main".into(), name_utf8: false, eval: None, flags: 0, size: 0,
            mtime: 0, subs_defined: BTreeSet::new(), merged_fids: Vec::new(),
        });
        for (i, (parent, line)) in parents.iter().enumerate() {
            let fid = i as u32 + 2;
            let parent = 1 + parent % fid.saturating_sub(1).max(1);
            p.files.insert(fid, FileInfo {
                fid, name: format!("(eval {fid})[main:{line}]"), name_utf8: false,
                eval: Some(profcodec_nytprof::model::EvalParent { fid: parent, line: *line }),
                flags: 0, size: 0, mtime: 0, subs_defined: BTreeSet::new(), merged_fids: Vec::new(),
            });
        }
        let nfiles = p.files.len() as u32;
        for (fid, line, text) in sources {
            p.source.entry(1 + fid % nfiles).or_default().insert(line, text);
        }
        for (fid, line, count) in lines {
            let e = p.line_times.entry(1 + fid % nfiles).or_default().entry(line).or_default();
            e.count += count;
            e.time += 0.25;
        }
        for (i, (fid, anon, callers)) in subs.into_iter().enumerate() {
            let fid = 1 + fid % nfiles;
            let name = if anon {
                format!("main::__ANON__[(eval {fid})[main:1]:{}]", i % 2)
            } else {
                format!("main::s{i}")
            };
            let mut si = SubInfo { name: name.clone(), fid: Some(fid), first_line: Some(1), last_line: Some(2), ..SubInfo::default() };
            for (cfid, cline, count) in callers {
                let ci = si.callers.entry(1 + cfid % nfiles).or_default().entry(cline).or_default();
                ci.count += count;
                ci.incl += 0.5;
                ci.calling_subs.insert("main::RUNTIME".into());
                si.calls += count;
            }
            p.files.get_mut(&fid).unwrap().subs_defined.insert(name.clone());
            p.subs.insert(name, si);
        }
        p.collapse_evals(max);
        let _ = p.dump_profile_data();
        let once = p.clone();
        p.collapse_evals(max);
        prop_assert_eq!(p, once);
    }
}
