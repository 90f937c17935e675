"""A folder of profiles drops nothing without a word (HOSTILE.md, class 12): each entry passed
over (an empty file, a FIFO, a link to nothing, a folder that is no input) is a UserWarning
that says why, in the words of the command line's standard error; a damaged profile in the
folder fails the call, naming the file."""

import os
import shutil
import warnings

import pytest

import profcodec
from conftest import REPO

HELLO = REPO / "testdata" / "nytprof" / "hello.nytprof.out"


@pytest.fixture
def runs(tmp_path):
    """One good profile beside what a folder of profiles may also hold."""
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(HELLO, runs / "nytprof.out.1")
    (runs / "nytprof.out.2").write_bytes(b"")
    os.mkfifo(runs / "nytprof.out.3")
    os.symlink(tmp_path / "gone", runs / "nytprof.out.4")
    (runs / "nytprof.out.5").mkdir()
    (runs / "nytprof.out.5" / "notes.txt").write_text("no profile")
    return runs


def expected_warnings(runs):
    gone = runs.parent / "gone"
    return [
        f"{runs / 'nytprof.out.2'}: skipped: not a profile: unknown format: at byte 0x0: "
        "expected a profiler file's magic but found an empty input",
        f"{runs / 'nytprof.out.3'}: skipped: a FIFO is not read (reading one could block): "
        "profiles are read from files",
        f"{runs / 'nytprof.out.4'}: skipped: a symbolic link to {gone}, which does not exist",
        f"{runs / 'nytprof.out.5'}: skipped: a folder that is no HPCToolkit database, hpcrun "
        "measurement folder or Devel::StatProfiler session (the folders inside a folder of "
        "profiles are not searched)",
    ]


def skip_warnings(record):
    return [str(w.message) for w in record if "skipped" in str(w.message)]


def test_merged_profile_warns_of_each_skipped_entry(runs):
    with pytest.warns(UserWarning) as record:
        merged = profcodec.merged_profile([runs])
    assert skip_warnings(record) == expected_warnings(runs)
    for w in record:
        if "skipped" in str(w.message):
            assert w.category is UserWarning
    # What was read is the one profile, as if it alone had been named.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        alone = profcodec.merged_profile([runs / "nytprof.out.1"])
    assert merged.to_folded() == alone.to_folded()


def test_merge_warns_of_each_skipped_entry(runs, tmp_path):
    with pytest.warns(UserWarning) as record:
        report = profcodec.merge([runs], tmp_path / "merged.out")
    assert report["inputs"] == 1
    assert skip_warnings(record) == expected_warnings(runs)


def test_a_damaged_profile_in_a_folder_fails_naming_it(runs):
    hello = HELLO.read_bytes()
    damaged = runs / "nytprof.out.0"
    damaged.write_bytes(hello[: len(hello) // 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(profcodec.InvalidDataError) as e:
            profcodec.merged_profile([runs])
    assert str(damaged) in str(e.value)
