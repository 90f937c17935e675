//! Placing instructions in program structure from the hpcstruct files of a measurement folder
//! (`structs/*.hpcstruct`), as hpcprof does unless `--ignore-structs`: an instruction becomes
//! its function, the loops around it, its line, and the instruction itself nested in the line
//! (hpcprof keeps that innermost instruction's values but leaves it out of meta.db).

use std::collections::HashMap;
use std::path::Path;

use profcodec_hpcrun::structs::{self, ModuleStructure};

/// The structure of every load module the folder's hpcstruct files describe, by the module's
/// path as the files name it. A file that cannot be read is left out, as hpcprof leaves it.
pub(crate) fn load(folder: &Path) -> HashMap<String, ModuleStructure> {
    let mut modules = HashMap::new();
    let Ok(entries) = std::fs::read_dir(folder.join("structs")) else {
        return modules;
    };
    let mut files: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "hpcstruct") && p.is_file())
        .collect();
    files.sort();
    for file in files {
        let Ok(lms) = structs::read(&file) else {
            continue;
        };
        for lm in lms {
            modules.entry(lm.path().to_owned()).or_insert(lm);
        }
    }
    modules
}
