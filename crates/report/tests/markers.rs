//! EasyProfiler's values and events are moments, not functions: the report leaves them out of
//! its function tables, callers and callees and flame graph, and says how many, as `top` does.
#![allow(clippy::unwrap_used)]

use profcodec_profile::{Context, Frame, FrameKind, IdKind, Measured, ProfileBuilder, Unit};
use profcodec_report::{Input, Options, write_report};

#[test]
fn values_and_events_are_left_out_of_the_functions_and_counted() {
    let mut b = ProfileBuilder::new();
    let thread = b
        .intern_context(Context::new([(IdKind::Thread, 1)]))
        .unwrap();
    let time = b
        .intern_value_type("time", Unit::Nanoseconds, Measured::SelfOnly)
        .unwrap();
    let calls = b
        .intern_value_type("calls", Unit::Count, Measured::SelfOnly)
        .unwrap();
    b.set_calls_value_type(calls).unwrap();
    let mut frame = |kind: FrameKind, name: &str| {
        let name = b.intern_string(name).unwrap();
        b.intern_frame(Frame::new(kind).with_function(name))
            .unwrap()
    };
    let main = frame(FrameKind::Block, "frame");
    let work = frame(FrameKind::Block, "work");
    let counter = frame(FrameKind::Value, "frame_no");
    let instant = frame(FrameKind::Event, "stage event");
    b.add_sample(thread, [main, work], time, 30.0).unwrap();
    b.add_sample(thread, [main], time, 10.0).unwrap();
    b.add_sample(thread, [main, work], calls, 3.0).unwrap();
    b.add_sample(thread, [main], calls, 1.0).unwrap();
    for marker in [counter, instant] {
        b.add_sample(thread, [main, marker], calls, 1000.0).unwrap();
        b.add_sample(thread, [main, marker], time, 5.0).unwrap();
    }
    let profile = b.build();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report");
    write_report(&Input::new(&profile), None, &Options::new(), &out).unwrap();
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    let flame = std::fs::read_to_string(out.join("flame.svg")).unwrap();
    for page in [&index, &flame] {
        assert!(page.contains(r#"data-name="work""#), "{page}");
        for marker in ["frame_no", "stage event"] {
            assert!(
                !page.contains(&format!(r#"data-name="{marker}""#)),
                "{marker} is shown as a function"
            );
        }
    }
    assert!(
        index.contains(
            "1 value and 1 event left out of the functions and the flame graph: they are \
             counters and instants, not functions"
        ),
        "{index}"
    );
}
