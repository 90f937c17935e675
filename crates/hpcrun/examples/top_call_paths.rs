//! The call paths that cost the most: `top_call_paths FILE_OR_FOLDER [METRIC]` prints, for each
//! profile (a `.hpcrun` file, or every one in a measurement folder), the five nodes with the
//! largest inclusive value of METRIC (default: the first metric), with their call path.

use profcodec_hpcrun::{CctIndex, MeasurementFolder, read_measurement};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let input = args
        .next()
        .ok_or("usage: top_call_paths FILE_OR_FOLDER [METRIC]")?;
    let metric_name = args.next();
    let files = if std::path::Path::new(&input).is_dir() {
        let folder = MeasurementFolder::open(&input)?;
        folder
            .threads()
            .iter()
            .filter_map(|t| t.profile.clone())
            .collect()
    } else {
        vec![input.into()]
    };
    for path in files {
        let m = read_measurement(&std::fs::read(&path)?)?;
        let Some(epoch) = m.epochs.first() else {
            continue;
        };
        let metric = match &metric_name {
            Some(name) => m.metric_by_name(name).map(|(id, _)| id),
            None => (!epoch.metrics.is_empty()).then_some(0),
        };
        let Some(metric) = metric else { continue };
        let inclusive = m.inclusive_sums(0, metric);
        let index = CctIndex::new(&epoch.cct);
        let modules = epoch.load_module_index();
        let mut nodes: Vec<usize> = (0..epoch.cct.len()).collect();
        nodes.sort_by(|&a, &b| inclusive[b].total_cmp(&inclusive[a]));
        println!(
            "{} ({}):",
            path.display(),
            epoch.metrics[usize::from(metric)].name
        );
        for &n in nodes.iter().take(5) {
            let frames: Vec<String> = index
                .path_to_root(n)
                .iter()
                .rev()
                .map(|&i| {
                    let node = &epoch.cct[i];
                    let module = modules.get(&node.lm_id).map_or_else(
                        || "?".to_owned(),
                        |lm| {
                            lm.name
                                .to_string()
                                .rsplit('/')
                                .next()
                                .unwrap_or("?")
                                .to_owned()
                        },
                    );
                    format!("{module}+{:#x}", node.ip)
                })
                .collect();
            println!("  {:>12.6}  {}", inclusive[n], frames.join(" > "));
        }
    }
    Ok(())
}
