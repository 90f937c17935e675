//! Placing instructions in program structure from the hpcstruct files of a measurement folder
//! (`structs/*.hpcstruct`), as hpcprof does unless `--ignore-structs`: an instruction becomes
//! its function, the loops around it, its line, and the instruction itself nested in the line
//! (hpcprof keeps that innermost instruction's values but leaves it out of meta.db).

use std::collections::HashMap;
use std::path::Path;

use profcodec_hpcrun::structs::{self, ModuleStructure};

use crate::companion;

/// The largest hpcstruct file read (one of a large library is some hundreds of megabytes).
pub(crate) const MAX_STRUCT_FILE: u64 = 2 << 30;

/// The structure of every load module the folder's hpcstruct files describe, by the module's
/// path as the files name it. A file that cannot be read is left out, as hpcprof leaves it,
/// with a warning that names it and says why.
pub(crate) fn load(folder: &Path, warnings: &mut Vec<String>) -> HashMap<String, ModuleStructure> {
    let mut modules = HashMap::new();
    let Ok(entries) = std::fs::read_dir(folder.join("structs")) else {
        return modules;
    };
    let mut files: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "hpcstruct"))
        .collect();
    files.sort();
    let allowed = companion::allowed(folder);
    for file in files {
        let read = companion::checked(&allowed, &file, MAX_STRUCT_FILE).and_then(|resolved| {
            structs::read(&resolved).map_err(|e| format!("{}: {e}", file.display()))
        });
        match read {
            Ok(lms) => {
                for lm in lms {
                    modules.entry(lm.path().to_owned()).or_insert(lm);
                }
            }
            Err(why) => warnings.push(format!(
                "{why}; structure file left out, its modules' instructions are not placed in \
                 their functions, loops and lines"
            )),
        }
    }
    modules
}
