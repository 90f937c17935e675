//! The call paths with the most inclusive cost in an hpcrun measurement file, as load module +
//! offset (hpcrun files hold no procedure names):
//! `cargo run -p profcodec-hpcrun --example top_call_paths -- FILE.hpcrun`.

use profcodec_hpcrun::{CctIndex, read_measurement};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: top_call_paths FILE")?;
    let m = read_measurement(&std::fs::read(path)?)?;
    let (epoch, inclusive) = (&m.epochs[0], m.inclusive_sums(0, 0)); // metric 0, every node
    let (index, lms) = (CctIndex::new(&epoch.cct), epoch.load_module_index());
    let mut nodes: Vec<usize> = (0..epoch.cct.len()).collect();
    nodes.sort_by(|&a, &b| inclusive[b].total_cmp(&inclusive[a]));
    for &n in nodes.iter().take(10) {
        let frame = |&i: &usize| {
            let node = &epoch.cct[i];
            let module = lms
                .get(&node.lm_id)
                .map_or("?".into(), |l| l.name.to_string());
            format!("{module}+{:#x}", node.ip)
        };
        let path: Vec<String> = index.path_to_root(n).iter().rev().map(frame).collect();
        println!("{:10.4}  {}", inclusive[n], path.join(" > "));
    }
    Ok(())
}
