//! Prints the costliest frames of an hpcrun measurement file or measurement folder, through the
//! format-neutral profile model: `top_frames DIR_OR_FILE [METRIC]`.

use profcodec_hpcrun::{MeasurementFolder, read_measurement_prefix};
use profcodec_profile::{GroupBy, Query};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: top_frames DIR_OR_FILE [METRIC]");
        std::process::exit(2);
    };
    let profile = if std::path::Path::new(&path).is_dir() {
        MeasurementFolder::open(&path)?.to_profile()?
    } else {
        read_measurement_prefix(&std::fs::read(&path)?)?
            .0
            .to_profile()?
    };
    let mut query = Query::new().limit(10);
    if let Some(metric) = args.next() {
        query = query.value_type(metric);
    }
    let top = profile.top(&query)?;
    println!(
        "{} in {}, {} contexts, total {}",
        top.value_type, top.unit, top.contexts, top.total.self_value
    );
    for row in &top.rows {
        let module = row.module.as_deref().unwrap_or("");
        println!("{:>14.6}  {} {module}", row.self_value, row.name);
    }
    println!("by load module:");
    for row in profile.top(&query.group(GroupBy::Module))?.rows {
        println!("{:>14.6}  {}", row.self_value, row.name);
    }
    Ok(())
}
