//! Makes a database: `prof [--ignore-structs] [-jN] MEASUREMENT OUT.d`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut options = profcodec_hpcprof::Options::default();
    let mut paths = Vec::new();
    for a in std::env::args().skip(1) {
        if a == "--ignore-structs" {
            options.ignore_structs = true;
        } else if let Some(j) = a.strip_prefix("-j") {
            options.jobs = Some(j.parse()?);
        } else {
            paths.push(a);
        }
    }
    let out = paths
        .pop()
        .ok_or("usage: prof [--ignore-structs] [-jN] MEASUREMENT... OUT.d")?;
    let db = profcodec_hpcprof::prof(&paths, &options)?;
    profcodec_hpcprof::write_database(&db, std::path::Path::new(&out))?;
    Ok(())
}
