"""What one face can do, the other can: every subcommand of the command line has its Python
counterpart (``COUNTERPARTS``), and each verb gives in Python what it gives on the command line
for the same corpus input: validate's findings, dump's records, rewrite's bytes, diff's rows,
the timelines, sql's rows and the Parquet export."""

import collections
import json
import os
import re
import subprocess

import pytest

import profcodec
from conftest import corpus_dir
from test_formats import NO_PROFILE, inputs

CORPUS = corpus_dir()

#: Each subcommand of ``profcodec --help`` and what does the same in Python: a function of the
#: package, or ``Class.method``.
COUNTERPARTS = {
    "info": "Input.info",
    "validate": "Input.validate",
    "dump": "Input.dump",
    "rewrite": "Input.rewrite",
    "merge": "merge",
    "prof": "prof",
    "top": "Profile.top",
    "diff": "diff",
    "convert": "Input.convert",
    "export": "export_parquet",
    "sql": "sql",
    "report": "Input.report",
}


#: Each subcommand and the tests that check the Python counterpart gives what the command line
#: gives for the same inputs: ``module::test`` of this folder.
PARITY_TESTS = {
    "info": ["test_parity::test_info_is_the_command_lines"],
    "validate": ["test_parity::test_validate_is_the_command_lines"],
    "dump": ["test_parity::test_dump_is_the_command_lines"],
    "rewrite": ["test_parity::test_rewrite_is_the_command_lines"],
    "merge": [
        "test_parity::test_merge_is_the_command_lines",
        "test_parity::test_a_folder_is_never_a_file_output",
    ],
    "top": [
        "test_parity::test_top_is_the_command_lines",
        "test_options::test_top_text_is_the_command_lines",
        "test_parity::test_top_of_many_inputs_is_the_command_lines",
    ],
    "diff": ["test_parity::test_diff_is_the_command_lines"],
    "prof": ["test_parity::test_prof_is_the_command_lines"],
    "convert": [
        "test_convert::test_every_target_is_the_command_lines",
        "test_parity::test_timelines_are_the_command_lines",
    ],
    "export": ["test_parity::test_export_is_the_command_lines"],
    "sql": ["test_parity::test_sql_is_the_command_lines"],
    "report": ["test_report::test_report_equals_the_command_lines"],
}


def subcommands(cli):
    """The subcommands ``profcodec --help`` lists (``help`` aside)."""
    out = subprocess.run([str(cli), "--help"], capture_output=True, text=True, check=True)
    section = out.stdout.split("Commands:", 1)[1].split("\n\n", 1)[0]
    names = [m.group(1) for m in re.finditer(r"^  ([a-z][a-z-]*)\s", section, re.M)]
    assert names, out.stdout
    return [name for name in names if name != "help"]


def counterpart(name):
    """The Python object ``COUNTERPARTS`` names: ``Class.method`` or a function."""
    item = profcodec
    for part in name.split("."):
        item = getattr(item, part)
    return item


def test_every_subcommand_has_a_python_counterpart(cli):
    commands = subcommands(cli)
    assert {"info", "validate", "dump", "rewrite", "top", "diff", "convert", "sql"} <= set(
        commands
    )
    missing = [c for c in commands if c not in COUNTERPARTS]
    assert not missing, f"subcommands without a Python counterpart in COUNTERPARTS: {missing}"
    for command in commands:
        try:
            item = counterpart(COUNTERPARTS[command])
        except AttributeError:
            pytest.fail(f"profcodec {command}: its counterpart {COUNTERPARTS[command]} is missing")
        assert callable(item) and item.__doc__, COUNTERPARTS[command]


def test_every_subcommand_has_a_parity_test(cli):
    import importlib

    missing = [c for c in subcommands(cli) if not PARITY_TESTS.get(c)]
    assert not missing, f"subcommands without a test in PARITY_TESTS: {missing}"
    for command, tests in PARITY_TESTS.items():
        for test in tests:
            module, name = test.split("::")
            assert callable(getattr(importlib.import_module(module), name, None)), (
                f"profcodec {command}: {test} does not exist"
            )


def run_cli(cli, *args):
    return subprocess.run([str(cli), *map(str, args)], capture_output=True)


def sample():
    """Up to three inputs of each format (the first, the largest, the last), and one of each
    kind that holds no profile (a trace alone, one file of a database)."""
    if CORPUS is None:
        return []
    by_codec = collections.defaultdict(list)
    no_profile = {}
    for path in inputs():
        if path.name.endswith(NO_PROFILE):
            suffix = next(s for s in NO_PROFILE if path.name.endswith(s))
            no_profile.setdefault(suffix, path)
            continue
        by_codec[profcodec.open(path).codec].append(path)

    def size(p):
        return sum(f.stat().st_size for f in p.iterdir()) if p.is_dir() else p.stat().st_size

    chosen = []
    for paths in by_codec.values():
        for p in (paths[0], max(paths, key=size), paths[-1]):
            if p not in chosen:
                chosen.append(p)
    return chosen + list(no_profile.values())


def ids(path):
    return f"{path.parent.name}/{path.name}"


@pytest.mark.parametrize("path", sample(), ids=ids)
def test_validate_is_the_command_lines(cli, path):
    out = run_cli(cli, "validate", path)
    run = profcodec.open(path)
    if out.returncode == 0:
        assert run.validate() == []
        assert out.stdout.decode() == f"{path}: valid\n"
    else:
        assert out.returncode == 1, out.stderr
        with pytest.raises(profcodec.InvalidDataError):
            run.validate()


@pytest.mark.parametrize("path", sample(), ids=ids)
def test_info_is_the_command_lines(cli, path):
    out = run_cli(cli, "info", "--json", path)
    if out.returncode != 0:
        with pytest.raises(profcodec.Error):
            profcodec.open(path).info()
        return
    [printed] = json.loads(out.stdout)
    assert printed["path"] == str(path)
    assert json.loads(json.dumps(profcodec.open(path).info())) == printed["info"]


@pytest.mark.parametrize("path", sample(), ids=ids)
def test_top_is_the_command_lines(cli, path):
    out = run_cli(cli, "top", "--json", "-n", "0", path)
    if out.returncode != 0:
        with pytest.raises(profcodec.Error):
            profcodec.open(path).profile().top(limit=None)
        return
    top = profcodec.open(path).profile().top(limit=None)
    printed = json.loads(out.stdout)
    assert len(top.rows) == len(printed)
    # The command line leaves out what a row lacks, and adds each row's share and metric.
    for ours, theirs in zip(top.rows, printed):
        assert {k: v for k, v in ours.items() if v is not None} == {
            k: v for k, v in theirs.items() if k in ours and v is not None
        }
        assert theirs["metric"] == top.value_type and theirs["unit"] == top.unit
    text = run_cli(cli, "top", "-n", "0", path).stdout
    assert top.to_text(width=200) == text.decode()


def test_top_of_many_inputs_is_the_command_lines(corpus, cli, tmp_path):
    inputs = [
        corpus / "nytprof" / "fork__compress0.nytprof.out",
        corpus / "nytprof" / "fork__compress0.31274.nytprof.out",
    ]
    text = run_cli(cli, "top", "-n", "0", *inputs).stdout.decode()
    for jobs in [None, 1]:
        merged = profcodec.merged_profile(inputs, jobs=jobs)
        assert merged.top(limit=None).to_text(width=200) == text
    # A folder stands for its profiles, in name order, as on the command line.
    runs = tmp_path / "runs"
    runs.mkdir()
    for path in inputs:
        (runs / path.name).write_bytes(path.read_bytes())
    by_folder = run_cli(cli, "top", "-n", "0", runs).stdout.decode()
    assert profcodec.merged_profile([runs]).top(limit=None).to_text(width=200) == by_folder
    with pytest.raises(ValueError):
        profcodec.merged_profile([])
    with pytest.raises(profcodec.FileError):
        profcodec.merged_profile([inputs[0], tmp_path / "missing.out"])


def with_trailing_data(source, tmp_path):
    target = tmp_path / source.name
    target.write_bytes(source.read_bytes() + b"GARBAGEGARBAGE")
    return target


@pytest.mark.parametrize(
    "relative",
    [
        "easyprofiler/sample_v210_rdtsc.prof",
        "statprofiler/nested/statprof.out.00007e37000000026b026e8c262fea275ce8c4d40b0c967d.00000001",
    ],
)
def test_trailing_data_is_found_as_the_command_line_finds_it(corpus, cli, tmp_path, relative):
    path = with_trailing_data(corpus / relative, tmp_path)
    run = profcodec.open(path)
    # Refused by default, as the command line refuses it.
    assert run_cli(cli, "validate", path).returncode == 1
    with pytest.raises(profcodec.InvalidDataError, match="trailing data") as e:
        run.validate()
    assert e.value.offset is not None
    # Accepted when asked, with the same findings.
    out = run_cli(cli, "validate", "--allow-trailing", path)
    assert out.returncode == 0
    findings = run.validate(allow_trailing=True)
    assert [f"{path}: {f['message']}" for f in findings] == out.stderr.decode().splitlines()
    assert findings[0]["finding"] == "trailing_data"
    assert findings[0]["size"] == len(b"GARBAGEGARBAGE")


@pytest.mark.parametrize("path", sample(), ids=ids)
def test_dump_is_the_command_lines(cli, path, tmp_path):
    run = profcodec.open(path)
    ndjson = run_cli(cli, "dump", "--format", "ndjson", path)
    if ndjson.returncode != 0:
        with pytest.raises(profcodec.Error):
            run.dump()
        return
    assert run.dump(format="ndjson") == ndjson.stdout.decode()
    assert run.records() == [json.loads(line) for line in ndjson.stdout.splitlines()]
    assert run.records()[0]["record"] == "header"
    assert run.dump() == run_cli(cli, "dump", path).stdout.decode()
    pretty = run_cli(cli, "dump", "--pretty", path).stdout
    written = tmp_path / "dump.json"
    assert run.dump(written, pretty=True) is None
    assert written.read_bytes() == pretty
    # An existing file is replaced only when asked to.
    with pytest.raises(profcodec.FileError, match="overwrite=True"):
        run.dump(written, format="ndjson")
    assert run.dump(written, format="ndjson", overwrite=True) is None
    assert written.read_bytes() == ndjson.stdout
    assert sorted(os.listdir(tmp_path)) == ["dump.json"]


def test_a_partial_dump_is_the_command_lines(corpus, cli, tmp_path):
    data = (corpus / "nytprof" / "nested__compress0.nytprof.out").read_bytes()
    cut = tmp_path / "cut.nytprof.out"
    cut.write_bytes(data[: len(data) // 2])
    run = profcodec.open(cut)
    with pytest.raises(profcodec.InvalidDataError) as e:
        run.dump(format="ndjson")
    assert e.value.offset is not None
    out = run_cli(cli, "dump", "--format", "ndjson", "--partial", cut)
    assert out.returncode == 1
    partial = run.dump(format="ndjson", partial=True)
    assert partial == out.stdout.decode()
    last = json.loads(partial.splitlines()[-1])
    assert last["record"] == "error" and last["offset"] == e.value.offset
    # Into a file: what was decoded, closed by the error record; without partial, nothing.
    assert run.dump(tmp_path / "partial.ndjson", format="ndjson", partial=True) is None
    assert (tmp_path / "partial.ndjson").read_text() == partial
    with pytest.raises(profcodec.InvalidDataError):
        run.dump(tmp_path / "none.ndjson", format="ndjson")
    assert not (tmp_path / "none.ndjson").exists()


def tree(path):
    """A file's bytes, or a folder's files by relative path (profcodec's folder marker aside)."""
    if path.is_file():
        return path.read_bytes()
    return {
        str(f.relative_to(path)): f.read_bytes()
        for f in sorted(path.rglob("*"))
        if f.is_file() and not f.name.startswith(".profcodec")
    }


def rewritable():
    """Inputs that rewrite: one database, the hpcrun files, and the files of the other
    formats (an hpcrun measurement folder is rewritten file by file)."""
    return [p for p in sample() if p.is_file() or (p / "meta.db").is_file()]


@pytest.mark.parametrize("path", rewritable(), ids=ids)
def test_rewrite_is_the_command_lines(cli, path, tmp_path):
    run = profcodec.open(path)
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    out = run_cli(cli, "rewrite", path, theirs)
    if out.returncode != 0:
        with pytest.raises(profcodec.Error):
            run.rewrite(ours)
        assert not ours.exists()
        return
    report = run.rewrite(ours)
    assert tree(ours) == tree(theirs)
    copied = [line for line in out.stderr.decode().splitlines() if "copied unchanged" in line]
    assert len(report["copied"]) == len(copied)
    assert set(report) == {"dropped", "copied"}
    # The output policy: an existing output is replaced only when asked to, never the input.
    with pytest.raises(profcodec.FileError, match="overwrite=True"):
        run.rewrite(ours)
    run.rewrite(ours, overwrite=True)
    assert tree(ours) == tree(theirs)
    with pytest.raises(profcodec.FileError):
        run.rewrite(path, overwrite=True)


def test_merge_is_the_command_lines(corpus, cli, tmp_path):
    inputs = [
        corpus / "nytprof" / "fork__compress0.nytprof.out",
        corpus / "nytprof" / "fork__compress0.31274.nytprof.out",
    ]
    theirs, ours = tmp_path / "theirs.out", tmp_path / "ours.out"
    out = run_cli(cli, "merge", "-o", theirs, *inputs)
    assert out.returncode == 0, out.stderr
    report = profcodec.merge(inputs, ours)
    assert ours.read_bytes() == theirs.read_bytes()
    assert report["inputs"] == 2 and isinstance(report["warnings"], list)
    # The output policy of every verb: replaced only when asked to, never an input.
    with pytest.raises(profcodec.FileError, match="overwrite=True"):
        profcodec.merge(inputs, ours)
    with pytest.raises(profcodec.FileError):
        profcodec.merge(inputs, inputs[0], overwrite=True)
    # Formats without a merge are refused in words, as on the command line.
    capture = corpus / "easyprofiler" / "sample_v210_rdtsc.prof"
    refused = run_cli(cli, "merge", "-o", tmp_path / "no.out", capture, capture)
    assert refused.returncode == 2
    with pytest.raises(profcodec.UnsupportedError):
        profcodec.merge([capture, capture], tmp_path / "no.out")
    assert not (tmp_path / "no.out").exists()


def test_prof_is_the_command_lines(testdata, cli, tmp_path):
    measurement = testdata / "hpcprof" / "demo.m"
    theirs, ours = tmp_path / "theirs.d", tmp_path / "ours.d"
    out = run_cli(cli, "prof", "-j", "2", "--ignore-structs", "-o", theirs, measurement)
    assert out.returncode == 0, out.stderr
    summary = profcodec.prof([measurement], ours, jobs=1, ignore_structs=True)
    assert str(summary["path"]) == str(ours) and summary["threads"] >= 1
    files = lambda d: sorted(p.relative_to(d) for p in d.rglob("*") if p.is_file())
    assert files(ours) == files(theirs)
    for name in files(ours):
        assert (ours / name).read_bytes() == (theirs / name).read_bytes(), name
    # The output policy of every verb: an existing folder is never replaced.
    with pytest.raises(profcodec.FileError):
        profcodec.prof([measurement], ours, ignore_structs=True)
    with pytest.raises(profcodec.FileError):
        profcodec.prof([measurement], measurement / "db.d", ignore_structs=True)
    assert not (measurement / "db.d").exists()


def test_a_folder_of_profiles_merges_as_its_profiles(corpus, cli, tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ["fork__compress0.nytprof.out", "fork__compress0.31274.nytprof.out"]:
        (runs / name).write_bytes((corpus / "nytprof" / name).read_bytes())
    (runs / "prove.log").write_text("ok 1\n")
    theirs, ours = tmp_path / "theirs.out", tmp_path / "ours.out"
    out = run_cli(cli, "merge", "-o", theirs, runs)
    assert out.returncode == 0, out.stderr
    assert profcodec.merge([runs], ours)["inputs"] == 2
    assert ours.read_bytes() == theirs.read_bytes()
    (tmp_path / "empty").mkdir()
    with pytest.raises(profcodec.UnknownFormatError, match="holds no profile"):
        profcodec.merge([tmp_path / "empty"], tmp_path / "none.out")


def folder_with_a_file(tmp_path):
    """An existing folder, with a file in it, where an output is asked for."""
    folder = tmp_path / "existing"
    folder.mkdir()
    (folder / "keep.txt").write_bytes(b"not profcodec's")
    return folder


def untouched(folder):
    assert sorted(p.name for p in folder.iterdir()) == ["keep.txt"]
    assert (folder / "keep.txt").read_bytes() == b"not profcodec's"


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_folder_is_never_a_file_output(corpus, cli, tmp_path, overwrite):
    """`merge`, `convert`, `dump` and the rewrite of a file write one file: an existing folder
    at the output path is refused, with overwrite too, and left as it was, as on the command
    line (exit status 3)."""
    nytprof = corpus / "nytprof" / "fork__compress0.nytprof.out"
    inputs = [nytprof, corpus / "nytprof" / "fork__compress0.31274.nytprof.out"]
    folder = folder_with_a_file(tmp_path)
    force = ["--force"] if overwrite else []
    run = profcodec.open(nytprof)
    writers = {
        "merge": (
            lambda: profcodec.merge(inputs, folder, overwrite=overwrite),
            ["merge", *force, "-o", folder, *inputs],
        ),
        "convert": (
            lambda: run.convert("folded", folder, overwrite=overwrite),
            ["convert", "--to", "folded", *force, "-o", folder, nytprof],
        ),
        "rewrite": (
            lambda: run.rewrite(folder, overwrite=overwrite),
            ["rewrite", *force, nytprof, folder],
        ),
        "dump": (lambda: run.dump(folder, overwrite=overwrite), None),
    }
    for verb, (python, command) in writers.items():
        with pytest.raises(profcodec.FileError, match="is a folder"):
            python()
        untouched(folder)
        if command is not None:
            out = run_cli(cli, *command)
            assert out.returncode == 3, (verb, out.stderr)
            assert b"is a folder" in out.stderr, verb
            untouched(folder)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["existing"]


@pytest.mark.parametrize(
    "relative, to",
    [
        ("easyprofiler/sample_v120_rdtsc.prof", "gui"),
        ("nytprof/nested__compress0.nytprof.out", "nytprof"),
        (
            "statprofiler/nested/statprof.out.00007e37000000026b026e8c262fea275ce8c4d40b0c967d.00000001",
            "plain",
        ),
    ],
)
def test_rewrite_to_another_layout_is_the_command_lines(corpus, cli, tmp_path, relative, to):
    path = corpus / relative
    out = run_cli(cli, "rewrite", "--to", to, path, tmp_path / "theirs")
    assert out.returncode == 0, out.stderr
    report = profcodec.open(path).rewrite(tmp_path / "ours", to)
    assert tree(tmp_path / "ours") == tree(tmp_path / "theirs")
    dropped = [line for line in out.stderr.decode().splitlines() if ": dropped: " in line]
    assert [line.split(": dropped: ", 1)[1] for line in dropped] == report["dropped"]
    with pytest.raises(profcodec.UnsupportedError):
        profcodec.open(path).rewrite(tmp_path / "bad", "no-such-layout")


DIFFS = [
    ("nytprof/nested__compress0.nytprof.out", "nytprof/nested__default.nytprof.out"),
    ("hpctoolkit/dbase/loops-cputime-t.d", "hpctoolkit/dbase/loops-cputime-t.nostruct.d"),
    ("easyprofiler/sample_v201_rdtsc.prof", "easyprofiler/sample_v210_rdtsc.prof"),
]


@pytest.mark.parametrize("base, new", DIFFS)
@pytest.mark.parametrize(
    "flags, options",
    [
        ([], {}),
        (["-n", "0", "--by", "inclusive"], {"limit": None, "by": "inclusive"}),
        (["--group", "line", "-n", "5"], {"group": "line", "limit": 5}),
    ],
)
def test_diff_is_the_command_lines(corpus, cli, base, new, flags, options):
    base, new = corpus / base, corpus / new
    out = run_cli(cli, "diff", "--json", *flags, base, new)
    assert out.returncode == 0, out.stderr
    diff = profcodec.diff(base, new, **options)
    assert diff.rows == json.loads(out.stdout)
    assert len(diff) == len(diff.rows)
    # A profile read already compares the same.
    again = profcodec.diff(profcodec.open(base).profile(), profcodec.open(new), **options)
    assert again.rows == diff.rows
    assert list(diff.to_pandas().columns)[0] == "name"


def test_diff_refuses_what_the_command_line_refuses(corpus, cli):
    base = corpus / "nytprof" / "nested__compress0.nytprof.out"
    new = corpus / "hpctoolkit" / "dbase" / "loops-cputime-t.d"
    assert run_cli(cli, "diff", base, new).returncode == 2
    with pytest.raises(profcodec.QueryError):
        profcodec.diff(base, new)
    with pytest.raises(profcodec.QueryError):
        profcodec.diff(base, base, "no such metric")


def timelines():
    """The inputs with a timeline, one or two of each kind."""
    if CORPUS is None:
        return []
    hpctoolkit = CORPUS / "hpctoolkit"
    return [
        CORPUS / "easyprofiler" / "sample_v120_rdtsc.prof",
        CORPUS / "easyprofiler" / "sample_v210_rdtsc.prof",
        hpctoolkit / "dbase" / "loops-cputime-t.d",
        hpctoolkit / "meas" / "small.m",
    ]


@pytest.mark.parametrize("path", timelines(), ids=ids)
@pytest.mark.parametrize("to", ["perfetto", "chrome"])
def test_timelines_are_the_command_lines(cli, path, to, tmp_path):
    run = profcodec.open(path)
    theirs = tmp_path / f"theirs.{to}"
    assert run_cli(cli, "convert", "--to", to, "-o", theirs, path).returncode == 0
    assert run.convert(to) == theirs.read_bytes()
    ours = tmp_path / f"ours.{to}"
    assert run.convert(to, ours) is None
    assert ours.read_bytes() == theirs.read_bytes()
    # With filters.
    shallow = run_cli(cli, "convert", "--to", to, "--depth", "1", "--rank", "0", path)
    assert shallow.returncode == 0, shallow.stderr
    assert run.convert(to, depth=1, ranks=[0]) == shallow.stdout


def test_timeline_refusals_are_the_command_lines(corpus, cli):
    path = corpus / "nytprof" / "nested__compress0.nytprof.out"
    run = profcodec.open(path)
    assert run_cli(cli, "convert", "--to", "perfetto", path).returncode == 2
    with pytest.raises(profcodec.UnsupportedError, match="not a timeline"):
        run.convert("perfetto")
    capture = profcodec.open(corpus / "easyprofiler" / "sample_v210_rdtsc.prof")
    with pytest.raises(profcodec.UnsupportedError, match="budget"):
        capture.convert("chrome", max_output=100)
    with pytest.raises(ValueError):
        capture.convert("chrome", from_ns=2, until_ns=1)
    # A filter that keeps none of the threads is refused, in the command line's words.
    path = corpus / "easyprofiler" / "sample_v210_rdtsc.prof"
    out = run_cli(cli, "convert", "--to", "chrome", "--thread", "no such thread", path)
    assert out.returncode == 2
    with pytest.raises(profcodec.QueryError) as e:
        capture.convert("chrome", threads=["no such thread"])
    assert str(e.value) in out.stderr.decode()
    # The model holds no timeline: a profile converts only to the model's targets.
    with pytest.raises(ValueError, match="folded"):
        capture.profile().convert("perfetto")


def native_sql():
    """Whether the package was built with its `sql` feature: without it `sql()` says so before
    it opens anything; with it, a missing input is a FileError."""
    try:
        profcodec.sql("SELECT 1", ["no such input"])
    except profcodec.UnsupportedError:
        return False
    except profcodec.FileError:
        return True
    return True


@pytest.fixture(scope="session")
def sql_feature():
    if not native_sql():
        if os.environ.get("PROFCODEC_PYTEST_STRICT") == "1":
            pytest.fail("the package was built without its `sql` feature")
        pytest.skip("the package was built without its `sql` feature (maturin --features sql)")


def cli_rows(cli, query, paths):
    out = run_cli(cli, "sql", "--format", "json", query, *paths)
    assert out.returncode == 0, out.stderr.decode()
    return json.loads(out.stdout)


def without_nulls(rows):
    """Rows as the command line's JSON writes them: a null column is left out."""
    return [{k: v for k, v in row.items() if v is not None} for row in rows]


SQL_INPUTS = [
    "nytprof/nested__compress0.nytprof.out",
    "hpctoolkit/dbase/loops-cputime-t.d",
    "easyprofiler/sample_v210_rdtsc.prof",
]

QUERIES = [
    "SELECT * FROM inputs ORDER BY input",
    "SELECT input, label, COUNT(*) AS n FROM profile.frames GROUP BY input, label "
    "ORDER BY input, label",
    "SELECT * FROM nytprof.lines ORDER BY file, line",
    "SELECT profile, ctx_id, metric_id, value FROM hpctoolkit.values "
    "ORDER BY profile, ctx_id, metric_id",
    "SELECT v.input, v.name, COUNT(*) AS row_count, MAX(n.self_value) AS largest "
    "FROM profile.node_values n "
    "JOIN profile.value_types v ON n.value_type = v.value_type AND n.input = v.input "
    "GROUP BY v.input, v.name ORDER BY v.input, v.name",
]


@pytest.mark.parametrize("query", QUERIES)
def test_sql_is_the_command_lines(corpus, cli, pyarrow, sql_feature, query):
    paths = [corpus / p for p in SQL_INPUTS]
    table = profcodec.sql(query, paths)
    assert isinstance(table, pyarrow.Table)
    assert without_nulls(table.to_pylist()) == cli_rows(cli, query, paths)


def test_sql_takes_one_path_and_refuses_what_the_command_line_refuses(
    corpus, cli, sql_feature
):
    path = corpus / "nytprof" / "nested__compress0.nytprof.out"
    one = profcodec.sql("SELECT COUNT(*) AS n FROM nytprof.subs", path)
    assert one.to_pylist() == cli_rows(cli, "SELECT COUNT(*) AS n FROM nytprof.subs", [path])
    for query in ["SELECT * FROM hpctoolkit.values", "COPY (SELECT 1) TO '/tmp/x.csv'"]:
        assert run_cli(cli, "sql", query, path).returncode == 2
        with pytest.raises(profcodec.QueryError):
            profcodec.sql(query, [path])


def dataset(folder):
    """The files of a Parquet dataset by relative path (profcodec's folder marker aside)."""
    return sorted(
        str(f.relative_to(folder))
        for f in folder.rglob("*")
        if f.is_file() and not f.name.startswith(".profcodec")
    )


def test_export_is_the_command_lines(corpus, cli, pyarrow, sql_feature, tmp_path):
    import pyarrow.parquet as pq

    paths = [corpus / p for p in SQL_INPUTS]
    theirs, ours = tmp_path / "theirs", tmp_path / "ours"
    out = run_cli(cli, "export", "--parquet", theirs, *paths)
    assert out.returncode == 0, out.stderr
    rows = profcodec.export_parquet(paths, ours)
    assert dataset(ours) == dataset(theirs)
    for name in dataset(ours):
        assert pq.read_table(ours / name).equals(pq.read_table(theirs / name)), name
    # The command line prints `set.table: R rows in F files` per table, in the same order.
    printed = [line.split(": ")[0] for line in out.stdout.decode().splitlines()]
    assert list(rows) == printed
    for line in out.stdout.decode().splitlines():
        table, rest = line.split(": ")
        assert rows[table] == int(rest.split()[0])
    # A dry run reads the same rows and writes nothing.
    dry = profcodec.export_parquet(paths, dry_run=True)
    assert {t: r for t, r in dry.items() if t != "inputs"} == {
        t: r for t, r in rows.items() if t != "inputs"
    }
    # The output policy: a dataset profcodec wrote is replaced only when asked to.
    with pytest.raises(profcodec.FileError, match="overwrite=True"):
        profcodec.export_parquet(paths, ours)
    one = profcodec.export_parquet(paths[0], ours, overwrite=True, tables=["nytprof.lines"])
    assert "nytprof.lines" in one and "profile.frames" not in one
