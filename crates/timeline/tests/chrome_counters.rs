//! Chrome JSON counters keep their thread: three workers' values of one descriptor stay three
//! series (the event's `tid` is the worker's, its `id` tells same-named counters apart).
#![allow(clippy::unwrap_used)] // test helpers: a failure is the test's panic

use std::collections::BTreeMap;
use std::path::Path;

use profcodec_common::Source;
use profcodec_easyprofiler::{
    Capture, Convention, Descriptor, Record, RecordBody, Thread, Value, Version,
};
use profcodec_timeline::{Filter, Format, TimelineWriter};

/// `profiler::DataType::Int32`.
const INT32: u8 = 6;

fn value(begin: u64, x: i32) -> Record {
    Record {
        begin,
        end: begin,
        descriptor: 0,
        body: RecordBody::Value(Value {
            data_type: INT32,
            value_id: 1,
            data: x.to_le_bytes().to_vec(),
            ..Value::default()
        }),
    }
}

#[test]
fn counters_of_three_threads_stay_apart() {
    let mut c = Capture {
        version: Version::V2_1_0,
        pid: 1,
        cpu_frequency: 0,
        begin_time: 0,
        end_time: 100,
        descriptors: vec![Some(Box::new(Descriptor {
            id: 0,
            line: 1,
            color: 0,
            block_type: 2,
            status: 1,
            name: b"queue".to_vec(),
            file: b"f.cpp".to_vec(),
        }))],
        threads: (11..14)
            .map(|tid| Thread {
                id: tid,
                name: Some(format!("worker {tid}").into_bytes()),
                context_switches: Vec::new(),
                records: vec![value(10, tid as i32), value(20, 2 * tid as i32)],
            })
            .collect(),
        ..Capture::default()
    };
    c.update_counters(Convention::Runtime);
    let data = c.to_bytes().unwrap();
    let mut w = TimelineWriter::new(Vec::new(), Format::Chrome, Filter::new());
    let capture = Source::file(Path::new("counters.prof"), &data);
    let summary =
        profcodec_easyprofiler::timeline::write_timeline(&capture, &mut w.timeline()).unwrap();
    assert_eq!(summary.counter_values, 6);
    let out = w.finish().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    // (tid, id) -> values in order.
    let mut series: BTreeMap<(i64, String), Vec<f64>> = BTreeMap::new();
    for e in v["traceEvents"].as_array().unwrap() {
        if e["ph"] == "C" {
            assert_eq!(e["name"], "queue");
            series
                .entry((
                    e["tid"].as_i64().unwrap(),
                    e["id"].as_str().unwrap().to_owned(),
                ))
                .or_default()
                .push(e["args"]["value"].as_f64().unwrap());
        }
    }
    let expected: BTreeMap<(i64, String), Vec<f64>> = (11..14)
        .map(|tid| ((tid, tid.to_string()), vec![tid as f64, 2.0 * tid as f64]))
        .collect();
    assert_eq!(series, expected);
}
