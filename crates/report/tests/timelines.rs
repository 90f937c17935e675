//! The timelines section: the tracks an `ActivitySink` saw on their way to a trace writer, as
//! table rows with their raw values, the link to the trace beside the page, and the note of an
//! input without a timeline.
#![allow(clippy::unwrap_used)]

use std::io;

use profcodec_profile::timeline::{Arg, CallPath, Location, Name, Sink, Track, TrackId, TrackKind};
use profcodec_profile::{Context, Frame, IdKind, Measured, Profile, ProfileBuilder, Unit};
use profcodec_report::{Activity, Input, Options, write_report};

/// The trace writer's stand-in: it counts the events it is handed.
#[derive(Default)]
struct Counted(usize);

impl Sink for Counted {
    fn open(&mut self, _: &Track<'_>) -> io::Result<()> {
        Ok(())
    }
    fn close(&mut self, _: TrackId) -> io::Result<()> {
        Ok(())
    }
    fn begin(
        &mut self,
        _: TrackId,
        _: u64,
        _: Name<'_>,
        _: Option<Location<'_>>,
        _: Option<CallPath<'_>>,
        _: &[Arg<'_>],
    ) -> io::Result<()> {
        self.0 += 1;
        Ok(())
    }
    fn end(&mut self, _: TrackId, _: u64) -> io::Result<()> {
        self.0 += 1;
        Ok(())
    }
    fn instant(&mut self, _: TrackId, _: u64, _: Name<'_>, _: &[Arg<'_>]) -> io::Result<()> {
        self.0 += 1;
        Ok(())
    }
    fn counter(&mut self, _: TrackId, _: u64, _: f64) -> io::Result<()> {
        Ok(())
    }
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn profile() -> Profile {
    let mut b = ProfileBuilder::new();
    let thread = b
        .intern_context(Context::new([(IdKind::Thread, 0)]))
        .unwrap();
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)
        .unwrap();
    let main = b.intern_string("main").unwrap();
    let main = b.intern_frame(Frame::function(main)).unwrap();
    b.add_sample(thread, [main], time, 10.0).unwrap();
    b.build()
}

fn track(id: TrackId, parent: Option<TrackId>, name: &str) -> Track<'_> {
    Track {
        id,
        parent,
        name,
        kind: TrackKind::Slices,
        order: 0,
    }
}

const WORK: Name<'static> = Name {
    key: 1,
    text: "work",
};

/// Two threads of one process: a busy one and one that worked a tenth of the time.
fn activity() -> Activity {
    let mut activity = Activity::new();
    let mut writer = Counted::default();
    let mut sink = activity.tee(&mut writer);
    sink.open(&track(1, None, "process 7")).unwrap();
    sink.open(&track(2, Some(1), "main thread")).unwrap();
    sink.open(&track(3, Some(1), "worker")).unwrap();
    sink.begin(2, 0, WORK, None, None, &[]).unwrap();
    sink.begin(3, 0, WORK, None, None, &[]).unwrap();
    sink.begin(2, 10, WORK, None, None, &[]).unwrap();
    sink.end(3, 100).unwrap();
    sink.instant(3, 500, WORK, &[]).unwrap();
    sink.end_several(2, 1_000, 2).unwrap();
    sink.close(2).unwrap();
    sink.close(3).unwrap();
    sink.close(1).unwrap();
    // The writer saw every event the activity saw.
    assert_eq!(writer.0, 7);
    activity
}

fn page(input: &Input<'_>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    write_report(input, None, &Options::new(), &out).unwrap();
    std::fs::read_to_string(out.join("index.html")).unwrap()
}

#[test]
fn each_track_is_a_row_with_its_raw_values() {
    let profile = profile();
    let input = Input::new(&profile)
        .timelines(activity())
        .trace_file("trace.perfetto-trace", 1536);
    let page = page(&input);
    let section = &page[page.find("id=\"timelines\"").unwrap()..];
    assert!(section.contains("2 tracks, 3 slices"), "{section:.600}");
    assert!(section.contains("<a href=\"trace.perfetto-trace\" download>"));
    assert!(section.contains("(1.5 KiB)") && section.contains("ui.perfetto.dev"));
    let row = |name: &str| {
        let start = section.find(&format!("data-name=\"{name}\"")).unwrap();
        &section[start..start + section[start..].find("</tr>").unwrap()]
    };
    let main = row("main thread");
    assert!(main.contains("process 7 &#x2f; main thread"), "{main}");
    for cell in [
        "data-col=\"slices\" data-value=\"2.0\"",
        "data-col=\"busy\" data-value=\"1000.0\"",
        "data-col=\"busy-share\" data-value=\"1.0\"",
        "data-col=\"depth\" data-value=\"2.0\"",
    ] {
        assert!(main.contains(cell), "{cell} not in {main}");
    }
    let worker = row("worker");
    for cell in [
        "data-col=\"slices\" data-value=\"1.0\"",
        "data-col=\"busy\" data-value=\"100.0\"",
        "data-col=\"until\" data-value=\"500.0\"",
        "data-col=\"instants\" data-value=\"1.0\"",
    ] {
        assert!(worker.contains(cell), "{cell} not in {worker}");
    }
    // The worker is drawn busy in the first tenth of the timeline only.
    assert!(worker.contains("<rect x=\"0\"") && worker.contains("<rect x=\"9\""));
    assert!(!worker.contains("<rect x=\"10\""), "{worker}");
}

#[test]
fn an_input_without_a_timeline_gets_its_note() {
    let profile = profile();
    let page = page(&Input::new(&profile).timeline_note("No timeline: a file of lines."));
    let section = &page[page.find("id=\"timelines\"").unwrap()..];
    assert!(section.contains("No timeline: a file of lines."));
    assert!(!section.contains("<table"));
}
