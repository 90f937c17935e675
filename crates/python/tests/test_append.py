"""``profcodec.export_parquet(paths, out, append=True)``: inputs added to a dataset profcodec
wrote, as ``profcodec export --parquet OUT --append`` adds them."""

import subprocess

import pytest

import profcodec
from test_parity import native_sql


@pytest.fixture(scope="module")
def sql_feature():
    if not native_sql():
        pytest.skip("the package was built without its `sql` feature (maturin --features sql)")


def files(folder):
    """Every file below ``folder``: its bytes and modification time, by relative path."""
    return {
        str(f.relative_to(folder)): (f.read_bytes(), f.stat().st_mtime_ns)
        for f in folder.rglob("*")
        if f.is_file()
    }


def inputs_rows(folder, pyarrow):
    import pyarrow.parquet as pq

    rows = []
    for part in sorted((folder / "inputs").iterdir()):
        rows += pq.read_table(part).to_pylist()
    return sorted(rows, key=lambda r: r["input"])


def test_append_adds_new_files_as_the_command_line_does(testdata, cli, pyarrow, sql_feature, tmp_path):
    a, b = testdata / "nytprof" / "hello.nytprof.out", testdata / "hpctoolkit" / "demo.d"
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    profcodec.export_parquet(a, ours)
    before = files(ours)
    with pytest.warns(UserWarning, match=r"already \(input 0\); it is added again as input 2"):
        rows = profcodec.export_parquet([b, a], ours, append=True)
    assert rows["inputs"] == 2 and rows["hpctoolkit.values"] > 0
    after = files(ours)
    assert all(after[name] == old for name, old in before.items())
    assert "inputs/part-00001.parquet" in after
    # The command line, adding the same inputs, writes the same files.
    for args in (["--parquet", theirs, a], ["--parquet", theirs, "--append", b, a]):
        out = subprocess.run([str(cli), "export", *map(str, args)], capture_output=True)
        assert out.returncode == 0, out.stderr
    assert sorted(files(theirs)) == sorted(after)
    for name, (data, _) in files(theirs).items():
        if not name.startswith("inputs/") and not name.startswith(".profcodec"):
            assert after[name][0] == data, name
    assert inputs_rows(ours, pyarrow) == inputs_rows(theirs, pyarrow)
    assert [r["input"] for r in inputs_rows(ours, pyarrow)] == [0, 1, 2]


def test_append_refusals(testdata, sql_feature, tmp_path):
    a = testdata / "nytprof" / "hello.nytprof.out"
    with pytest.raises(ValueError, match="not both"):
        profcodec.export_parquet(a, tmp_path / "x", append=True, overwrite=True)
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    with pytest.raises(profcodec.FileError, match="never adds to"):
        profcodec.export_parquet(a, theirs, append=True)
    file = tmp_path / "file"
    file.write_text("data")
    with pytest.raises(profcodec.FileError, match="is a file"):
        profcodec.export_parquet(a, file, append=True)
    # A damaged inputs table: refused, and the dataset left as it was.
    ds = tmp_path / "ds"
    profcodec.export_parquet(a, ds, append=True)  # missing: a new dataset
    (ds / "inputs" / "part-00000.parquet").write_bytes(b"not parquet")
    before = files(ds)
    with pytest.raises(profcodec.FileError, match="the inputs table does not read"):
        profcodec.export_parquet(a, ds, append=True)
    assert files(ds) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ds", "file", "theirs"]
