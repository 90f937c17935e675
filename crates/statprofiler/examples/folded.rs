//! Folded stacks (`outer;inner weight`, what flame graph tools read) of a StatProfiler file or
//! a whole session: `cargo run -p profcodec-statprofiler --example folded -- PATH`.

use std::collections::BTreeMap;

use profcodec_statprofiler::{Reader, TraceReader, session::open_session};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: folded PATH")?;
    let mut folded: BTreeMap<String, u64> = BTreeMap::new();
    for file in open_session(path.as_ref())?.iter().flat_map(|p| &p.files) {
        let bytes = std::fs::read(&file.path)?;
        let mut traces = TraceReader::new(Reader::from_slice(&bytes)?);
        while let Some(trace) = traces.next_trace()? {
            let names: Vec<String> = trace.frames().rev().map(|f| f.to_string()).collect();
            *folded.entry(names.join(";")).or_default() += u64::from(trace.weight);
        }
    }
    for (stack, weight) in folded {
        println!("{stack} {weight}");
    }
    Ok(())
}
