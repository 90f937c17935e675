//! `profcodec sql` and `profcodec export`: run by the program `profcodec-sql` (the package
//! `profcodec-sql`, crates/sql), which links DataFusion, Arrow and Parquet so that this one does
//! not. It is looked for beside this executable, then on `PATH`, and run with the same
//! arguments (on Unix in place of this process, so that its exit status, signals and output are
//! the command's own); when it is not installed, the verb says how to install it (exit status 2).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

use crate::Failure;

/// The program that runs `sql` and `export`.
pub(crate) const SQL_PROGRAM: &str = "profcodec-sql";

/// The arguments of a verb another program runs: everything after the verb, unparsed (its
/// `--help` too, which that program answers).
#[derive(Debug, clap::Args)]
#[command(disable_help_flag = true)]
pub(crate) struct Passed {
    /// The verb's arguments (`profcodec sql --help` lists them when profcodec-sql is installed).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "ARGS"
    )]
    args: Vec<OsString>,
}

/// What `profcodec help sql` and `profcodec help export` add.
pub(crate) const AFTER_HELP: &str = "Run by the program profcodec-sql, which links DataFusion, \
Arrow and Parquet: install it with `cargo install --path crates/sql` (in the profcodec \
repository); `profcodec sql --help` and `profcodec export --help` then list every option.";

/// Runs `profcodec-sql VERB ARGS...`; returns only when it could not be run, or (where a process
/// cannot be replaced) with its exit status.
pub(crate) fn run(verb: &str, passed: &Passed) -> Result<(), Failure> {
    let Some(program) = find(SQL_PROGRAM) else {
        return Err(Failure {
            status: 2,
            message: missing(verb),
        });
    };
    let mut command = Command::new(&program);
    command.arg(verb).args(&passed.args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Its usage lines then read `profcodec sql ...`, the command the user typed.
        let error = command.arg0("profcodec").exec();
        Err(Failure {
            status: 2,
            message: format!("could not run {}: {error}", program.display()),
        })
    }
    #[cfg(not(unix))]
    {
        let status = command.status().map_err(|error| Failure {
            status: 2,
            message: format!("could not run {}: {error}", program.display()),
        })?;
        match status.code() {
            Some(0) => Ok(()),
            code => Err(Failure {
                status: code.and_then(|c| u8::try_from(c).ok()).unwrap_or(1),
                message: String::new(),
            }),
        }
    }
}

/// `name` (with the platform's executable suffix) beside this executable, else the first on
/// `PATH`.
fn find(name: &str) -> Option<PathBuf> {
    let file = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    let beside = std::env::current_exe()
        .ok()
        .and_then(|me| me.parent().map(|dir| dir.join(&file)));
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .map(|dir| dir.join(&file));
    beside.into_iter().chain(on_path).find(|p| runnable(p))
}

/// A regular file this user may run.
fn runnable(path: &std::path::Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

/// What `profcodec VERB` says when profcodec-sql is not installed.
fn missing(verb: &str) -> String {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|me| {
            me.parent()
                .map(|dir| format!(" (looked beside {} and on PATH)", dir.display()))
        })
        .unwrap_or_default();
    format!(
        "{verb} is run by the program {SQL_PROGRAM}, which is not installed{beside}. \
         Install it with `cargo install --path crates/sql` in the profcodec repository (it links \
         DataFusion, Arrow and Parquet: about 20 minutes to build on 2 cores); in a checkout, \
         `cargo build --release -p profcodec-sql` puts it beside target/release/profcodec."
    )
}
