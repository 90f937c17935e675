#![allow(clippy::unwrap_used)]

use super::*;

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn write_text(text: &str) -> impl FnOnce(&mut dyn Write) -> io::Result<()> + '_ {
    move |out| out.write_all(text.as_bytes())
}

/// Writes `text` into a new file at `path` through the policy, with `overwrite`.
fn write(path: &Path, overwrite: Overwrite, text: &str) -> Result<(), WriteError<io::Error>> {
    OutputPath::file(path)
        .overwrite(overwrite)
        .check()?
        .write_file(write_text(text))
}

/// A folder output at `path` holding one file `name` with `text`.
fn write_folder(
    path: &Path,
    overwrite: Overwrite,
    name: &str,
    text: &str,
) -> Result<(), WriteError<io::Error>> {
    OutputPath::folder(path)
        .overwrite(overwrite)
        .check()?
        .write_with(|staged| {
            std::fs::create_dir(staged)?;
            std::fs::write(staged.join(name), text)
        })
}

#[test]
fn a_new_file_is_written_and_nothing_is_left_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    write(&out, Overwrite::Never, "new").unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "new");
    assert_eq!(names(dir.path()), ["out"]);
}

#[test]
fn an_existing_file_is_refused_unless_overwrite_and_then_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "old").unwrap();
    let err = OutputPath::file(&file).check().unwrap_err();
    assert!(
        matches!(&err, OutputError::Exists { path, existing: Existing::File } if *path == file),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        format!("{} already exists (a file)", file.display())
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "old");
    write(&file, Overwrite::SameKind, "new").unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
    assert_eq!(names(dir.path()), ["file"]);
}

#[test]
fn a_file_output_never_replaces_a_folder() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let full = dir.path().join("results");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("keep"), "mine").unwrap();
    for folder in [&empty, &full] {
        for overwrite in [Overwrite::Never, Overwrite::SameKind] {
            let err = OutputPath::file(folder)
                .overwrite(overwrite)
                .check()
                .unwrap_err();
            assert!(matches!(err, OutputError::IsAFolder { .. }), "{err:?}");
            let message = err.to_string();
            assert!(message.contains("is a folder"), "{message}");
            assert!(!message.contains("force"), "{message}");
        }
    }
    // A path ending with `/` names a folder even where none is.
    let mut slash = dir.path().join("new").into_os_string();
    slash.push("/");
    let err = OutputPath::file(PathBuf::from(slash)).check().unwrap_err();
    assert!(matches!(err, OutputError::IsAFolder { .. }), "{err:?}");
    assert_eq!(names(dir.path()), ["empty", "results"]);
    assert_eq!(names(&full), ["keep"]);
}

#[test]
fn a_folder_output_never_replaces_a_file_nor_a_folder_profcodec_did_not_write() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "mine").unwrap();
    let err = write_folder(&file, Overwrite::SameKind, "a", "b").unwrap_err();
    assert!(
        matches!(err, WriteError::Output(OutputError::IsAFile { .. })),
        "{err:?}"
    );
    let parent = dir.path().join("parent");
    std::fs::create_dir(&parent).unwrap();
    std::fs::write(parent.join("thesis.tex"), "mine").unwrap();
    let err = write_folder(&parent, Overwrite::SameKind, "a", "b").unwrap_err();
    assert!(
        matches!(
            err,
            WriteError::Output(OutputError::NotReplaceable {
                existing: Existing::Folder,
                ..
            })
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("never replaces"), "{err}");
    assert_eq!(names(&parent), ["thesis.tex"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine");
}

#[test]
fn a_folder_profcodec_wrote_is_marked_and_replaced_whole_with_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("dataset");
    write_folder(&out, Overwrite::Never, "old.parquet", "old").unwrap();
    assert_eq!(names(&out), [FOLDER_MARKER, "old.parquet"]);
    let err = write_folder(&out, Overwrite::Never, "new.parquet", "new").unwrap_err();
    assert!(
        matches!(
            err,
            WriteError::Output(OutputError::Exists {
                existing: Existing::ProfcodecFolder,
                ..
            })
        ),
        "{err:?}"
    );
    write_folder(&out, Overwrite::SameKind, "new.parquet", "new").unwrap();
    assert_eq!(
        names(&out),
        [FOLDER_MARKER, "new.parquet"],
        "merged with the old folder"
    );
    assert_eq!(names(dir.path()), ["dataset"]);
}

#[test]
fn an_empty_folder_takes_a_folder_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("db");
    std::fs::create_dir(&out).unwrap();
    write_folder(&out, Overwrite::Never, "meta.db", "new").unwrap();
    assert_eq!(names(&out), [FOLDER_MARKER, "meta.db"]);
}

#[test]
fn a_database_of_the_same_format_is_replaced_with_overwrite() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/hpctoolkit/demo.d");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    std::fs::create_dir(&db).unwrap();
    for name in names(&demo) {
        let from = demo.join(&name);
        if from.is_file() {
            std::fs::copy(&from, db.join(&name)).unwrap();
        }
    }
    let check = |format| {
        OutputPath::folder(&db)
            .overwrite(Overwrite::SameKind)
            .format(format)
            .check()
    };
    let err = check(Format::Nytprof).unwrap_err();
    assert!(matches!(err, OutputError::NotReplaceable { .. }), "{err:?}");
    check(Format::HpctoolkitDatabase)
        .unwrap()
        .write_with(|staged| std::fs::create_dir(staged))
        .unwrap();
    assert_eq!(names(&db), [FOLDER_MARKER]);
}

#[cfg(unix)]
#[test]
fn a_character_device_is_written_through() {
    let null = Path::new("/dev/null");
    for overwrite in [Overwrite::Never, Overwrite::SameKind] {
        write(null, overwrite, "discarded").unwrap();
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(
        std::fs::metadata(null)
            .unwrap()
            .file_type()
            .is_char_device()
    );
}

#[cfg(target_os = "linux")]
#[test]
fn a_fifo_is_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    write(&fifo, Overwrite::Never, "through the pipe").unwrap();
    assert_eq!(reader.join().unwrap(), "through the pipe");
    assert_eq!(names(dir.path()), ["fifo"]);
}

#[test]
fn an_output_that_is_holds_or_lies_in_an_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    std::fs::create_dir(&db).unwrap();
    std::fs::write(db.join("meta.db"), "input").unwrap();
    let file = dir.path().join("self.out");
    std::fs::write(&file, "input").unwrap();
    let cases = [
        (OutputPath::file(&file).input(&file), Overlap::Is),
        (OutputPath::folder(&db).input(&db), Overlap::Is),
        (OutputPath::folder(dir.path()).input(&db), Overlap::Contains),
        (
            OutputPath::folder(db.join("copy")).input(&db),
            Overlap::Inside,
        ),
        // Through another spelling of the same path.
        (
            OutputPath::file(db.join("..").join("self.out")).input(&file),
            Overlap::Is,
        ),
    ];
    for (output, want) in cases {
        let err = output.overwrite(Overwrite::SameKind).check().unwrap_err();
        assert!(
            matches!(&err, OutputError::OverlapsInput { overlap, .. } if *overlap == want),
            "{err:?}"
        );
    }
    assert_eq!(names(&db), ["meta.db"]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "input");
}

#[test]
fn of_two_writers_of_one_new_output_the_second_fails_and_the_first_stays() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let first = OutputPath::file(&out).check().unwrap();
    let second = OutputPath::file(&out).check().unwrap();
    first.write_file(write_text("first")).unwrap();
    let err = second.write_file(write_text("second")).unwrap_err();
    assert!(
        matches!(
            err,
            WriteError::Output(OutputError::AppearedMeanwhile { .. })
        ),
        "{err:?}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "first");

    let folder = dir.path().join("folder");
    let first = OutputPath::folder(&folder).check().unwrap();
    let second = OutputPath::folder(&folder).check().unwrap();
    let make = |text: &'static str| {
        move |staged: &Path| {
            std::fs::create_dir(staged)?;
            std::fs::write(staged.join("f"), text)
        }
    };
    first.write_with(make("first")).unwrap();
    let err = second.write_with(make("second")).unwrap_err();
    assert!(
        matches!(
            err,
            WriteError::Output(OutputError::AppearedMeanwhile { .. })
        ),
        "{err:?}"
    );
    assert_eq!(std::fs::read_to_string(folder.join("f")).unwrap(), "first");
    assert_eq!(names(dir.path()), ["folder", "out"]);
}

#[test]
fn a_failed_writer_leaves_the_old_output_and_no_staging() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("file");
    std::fs::write(&file, "old").unwrap();
    let err = OutputPath::file(&file)
        .overwrite(Overwrite::SameKind)
        .check()
        .unwrap()
        .write_file(|out| {
            out.write_all(b"half of the new")?;
            Err::<(), _>(io::Error::other("no samples"))
        })
        .unwrap_err();
    assert!(matches!(err, WriteError::Write(_)), "{err:?}");
    assert_eq!(err.to_string(), "no samples");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "old");

    let new = dir.path().join("new");
    let err = OutputPath::folder(&new)
        .check()
        .unwrap()
        .write_with(|staged| {
            std::fs::create_dir(staged)?;
            Err::<(), _>(io::Error::other("damaged input"))
        })
        .unwrap_err();
    assert_eq!(err.to_string(), "damaged input");
    assert_eq!(names(dir.path()), ["file"]);
}

#[test]
fn a_writer_that_makes_the_wrong_kind_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let err = OutputPath::file(&out)
        .check()
        .unwrap()
        .write_with(|staged| std::fs::create_dir(staged))
        .unwrap_err();
    assert!(
        matches!(err, WriteError::Output(OutputError::IsAFolder { .. })),
        "{err:?}"
    );
    assert!(names(dir.path()).is_empty());
}

#[test]
fn a_missing_folder_is_a_typed_error_and_is_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("no such folder");
    let err = OutputPath::file(folder.join("out")).check().unwrap_err();
    match &err {
        OutputError::FolderMissing { folder: f, source } => {
            assert_eq!(*f, folder);
            assert_eq!(source.kind(), ErrorKind::NotFound);
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("does not exist"), "{err}");
    assert!(!folder.exists());

    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let err = OutputPath::file(file.join("out")).check().unwrap_err();
    assert!(
        matches!(&err, OutputError::NotAFolder { folder } if *folder == file),
        "{err:?}"
    );
}

#[test]
fn a_relative_output_goes_into_the_current_folder() {
    // Only the folder's lookup differs: a relative path with no folder is not refused as a
    // missing "" folder.
    let checked = OutputPath::file("profcodec-output-test-never-written").check();
    assert!(checked.is_ok(), "{checked:?}");
}

/// A staging folder as a run of profcodec makes it, named after `pid`, with a half-written
/// output and its lock file (not held).
fn staging_of(dir: &Path, pid: u32, tail: &str) -> PathBuf {
    let staging = dir.join(format!("{STAGING_PREFIX}{pid}-{tail}"));
    std::fs::create_dir(&staging).unwrap();
    std::fs::write(staging.join("output"), "half").unwrap();
    std::fs::write(staging.join(STAGING_LOCK), "").unwrap();
    staging
}

/// Holds the lock of `staging` through an open file description of its own, as a live run
/// (in another container, on another host) holds it.
fn hold(staging: &Path) -> File {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(staging.join(STAGING_LOCK))
        .unwrap();
    assert!(try_lock(&file).unwrap());
    file
}

#[cfg(unix)]
#[test]
fn staging_whose_lock_nobody_holds_is_removed_by_the_next_check() {
    let dir = tempfile::tempdir().unwrap();
    // The pid in the name does not matter: pid 1 runs here, and the folder is still dead.
    let stale = staging_of(dir.path(), 1, "abc123");
    let checked = OutputPath::file(dir.path().join("out")).check().unwrap();
    assert_eq!(
        checked.removed_stale_staging(),
        std::slice::from_ref(&stale)
    );
    assert!(!stale.exists());
}

#[cfg(unix)]
#[test]
fn staging_whose_lock_a_live_run_holds_survives_whatever_its_pid() {
    let dir = tempfile::tempdir().unwrap();
    // A pid no process has here (a run in another pid namespace or on another host): judged
    // by the pid, it would be removed.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let gone = child.id();
    child.wait().unwrap();
    let live = staging_of(dir.path(), gone, "def456");
    let held = hold(&live);
    let checked = OutputPath::file(dir.path().join("out")).check().unwrap();
    assert!(checked.removed_stale_staging().is_empty());
    assert_eq!(
        std::fs::read_to_string(live.join("output")).unwrap(),
        "half"
    );
    // Once its run ends (its lock is released), it is a killed run's staging.
    drop(held);
    let checked = OutputPath::file(dir.path().join("out")).check().unwrap();
    assert_eq!(checked.removed_stale_staging(), std::slice::from_ref(&live));
}

#[cfg(unix)]
#[test]
fn the_lock_of_another_process_keeps_its_staging() {
    let dir = tempfile::tempdir().unwrap();
    let live = staging_of(dir.path(), 1, "ghi789");
    // flock(1) holds the lock from another process while its command sleeps (`--close`: the
    // command does not inherit it, so killing flock(1) releases it).
    let Ok(mut holder) = std::process::Command::new("flock")
        .args(["--exclusive", "--close"])
        .arg(live.join(STAGING_LOCK))
        .args(["sleep", "30"])
        .spawn()
    else {
        println!("no flock(1): the lock of another process not tried");
        return;
    };
    // Until flock(1) holds it, the lock can be taken here.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let probe = OpenOptions::new()
            .read(true)
            .write(true)
            .open(live.join(STAGING_LOCK))
            .unwrap();
        if !try_lock(&probe).unwrap() {
            break;
        }
        drop(probe);
        assert!(
            std::time::Instant::now() < deadline,
            "flock(1) took no lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let checked = OutputPath::file(dir.path().join("out")).check().unwrap();
    assert!(checked.removed_stale_staging().is_empty());
    assert!(live.join("output").is_file());
    holder.kill().unwrap();
    holder.wait().unwrap();
    let checked = OutputPath::file(dir.path().join("out")).check().unwrap();
    assert_eq!(checked.removed_stale_staging(), std::slice::from_ref(&live));
}

#[test]
fn staging_without_a_lock_file_is_left_alone() {
    // Kept on purpose (the only copy of a replaced output), or made by an older profcodec.
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join(format!("{STAGING_PREFIX}1-kept"));
    std::fs::create_dir(&kept).unwrap();
    std::fs::write(kept.join("replaced"), "the old output").unwrap();
    let checked = OutputPath::file(dir.path().join("out")).check().unwrap();
    assert!(checked.removed_stale_staging().is_empty());
    assert!(kept.join("replaced").is_file());
}

#[cfg(unix)]
#[test]
fn a_run_holds_its_own_staging_while_it_writes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    OutputPath::file(&out)
        .check()
        .unwrap()
        .write_file(|w| {
            // Another run checking an output in the same folder meanwhile.
            let other = OutputPath::file(dir.path().join("other")).check().unwrap();
            assert!(other.removed_stale_staging().is_empty());
            w.write_all(b"whole")
        })
        .unwrap();
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "whole");
    assert_eq!(names(dir.path()), ["out"]);
}

#[test]
fn an_io_error_names_the_step_and_the_path() {
    let err = io_at(Step::Rename, Path::new("/x/out"))(io::Error::other("disk full"));
    assert_eq!(
        err.to_string(),
        "could not rename the staged output into place at /x/out: disk full"
    );
    assert_eq!(err.path(), Path::new("/x/out"));
}

/// Adds `files` (relative path, text) to the folder at `path` as an append.
fn append_files(path: &Path, files: &[(&str, &str)]) -> Result<(), WriteError<io::Error>> {
    OutputPath::folder(path)
        .append(true)
        .check()?
        .write_with(|staged| {
            for (name, text) in files {
                let file = staged.join(name);
                std::fs::create_dir_all(file.parent().unwrap())?;
                std::fs::write(file, text)?;
            }
            Ok(())
        })
}

#[test]
fn an_append_adds_beside_what_is_there_and_backs_out_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ds");
    // Nothing there: a new, marked folder.
    append_files(&out, &[("t/input=0/part", "0")]).unwrap();
    assert_eq!(names(&out), [FOLDER_MARKER, "t"]);
    append_files(&out, &[("t/input=1/part", "1"), ("u/input=1/part", "1")]).unwrap();
    assert_eq!(names(&out.join("t")), ["input=0", "input=1"]);
    assert_eq!(
        std::fs::read_to_string(out.join("t/input=0/part")).unwrap(),
        "0"
    );
    // An entry already there fails the append, and what it had moved in is moved back out.
    let err = append_files(&out, &[("a/new", "x"), ("t/input=1/part", "again")]).unwrap_err();
    assert!(
        matches!(err, WriteError::Output(OutputError::AppearedMeanwhile { ref path }) if path.ends_with("t/input=1/part")),
        "{err:?}"
    );
    assert_eq!(names(&out), [FOLDER_MARKER, "t", "u"]);
    assert_eq!(
        std::fs::read_to_string(out.join("t/input=1/part")).unwrap(),
        "1"
    );
    assert_eq!(names(dir.path()), ["ds"]);
    // Folders profcodec did not write, files and links are never added to.
    let theirs = dir.path().join("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::write(theirs.join("notes"), "mine").unwrap();
    let err = append_files(&theirs, &[("x", "x")]).unwrap_err();
    assert!(
        matches!(err, WriteError::Output(OutputError::NotAppendable { .. })),
        "{err:?}"
    );
    let err = append_files(&theirs.join("notes"), &[("x", "x")]).unwrap_err();
    assert!(
        matches!(err, WriteError::Output(OutputError::IsAFile { .. })),
        "{err:?}"
    );
    #[cfg(unix)]
    {
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&out, &link).unwrap();
        let err = append_files(&link, &[("x", "x")]).unwrap_err();
        assert!(
            matches!(err, WriteError::Output(OutputError::NotAppendable { .. })),
            "{err:?}"
        );
    }
}

/// What stands at a refused output is named by its kind, never "a file" for what is not one.
#[cfg(unix)]
#[test]
fn refusals_name_each_kind_of_what_is_there() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("folder");
    std::fs::create_dir(&folder).unwrap();
    let to_folder = dir.path().join("to-folder");
    std::os::unix::fs::symlink(&folder, &to_folder).unwrap();
    let fifo = dir.path().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let socket = dir.path().join("socket");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let folder_output = |path: &Path| OutputPath::folder(path).check().unwrap_err().to_string();
    let file_output = |path: &Path| OutputPath::file(path).check().unwrap_err().to_string();

    let message = folder_output(&to_folder);
    assert!(
        message.ends_with("is a symbolic link to a folder, which a folder output never replaces"),
        "{message}"
    );
    let message = file_output(&to_folder);
    assert!(
        message.ends_with("already exists (a symbolic link to a folder)"),
        "{message}"
    );
    let message = folder_output(&fifo);
    assert!(
        message.ends_with("is a FIFO (named pipe), which a folder output never replaces"),
        "{message}"
    );
    let message = folder_output(Path::new("/dev/null"));
    assert!(
        message.ends_with("is a character device, which a folder output never replaces"),
        "{message}"
    );
    let message = folder_output(&socket);
    assert!(
        message.ends_with("is a socket, which a folder output never replaces"),
        "{message}"
    );
    let message = file_output(&socket);
    assert!(
        message.ends_with("is a socket, which profcodec did not write and never replaces"),
        "{message}"
    );
    let message = OutputPath::folder(&to_folder)
        .append(true)
        .check()
        .unwrap_err()
        .to_string();
    assert!(
        message.ends_with(
            "is a symbolic link to a folder, which profcodec did not write and never adds to"
        ),
        "{message}"
    );
    // As /dev/stdout is on a terminal or a pipe (into a file, it links to that file).
    let to_device = dir.path().join("to-null");
    std::os::unix::fs::symlink("/dev/null", &to_device).unwrap();
    {
        let message = folder_output(&to_device);
        assert!(
            message.ends_with(
                "is a symbolic link to a device, FIFO or other special file, which a folder \
                 output never replaces"
            ),
            "{message}"
        );
    }
}

/// A symbolic link to a FIFO is written through, as the FIFO itself is (`-o /dev/stdout`).
#[cfg(unix)]
#[test]
fn a_symbolic_link_to_a_fifo_is_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let link = dir.path().join("stdout");
    std::os::unix::fs::symlink(&fifo, &link).unwrap();
    let reader = std::thread::spawn({
        let fifo = fifo.clone();
        move || std::fs::read_to_string(fifo).unwrap()
    });
    OutputPath::file(&link)
        .check()
        .unwrap()
        .write_file(write_text("through"))
        .unwrap();
    assert_eq!(reader.join().unwrap(), "through");
    assert!(link.is_symlink());
}
