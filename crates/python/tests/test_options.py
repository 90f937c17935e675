"""The options of ``Profile.top``, ``Input.profile`` and ``profcodec.diff`` that the command
line has too give what it gives: ``top``'s text table with short or full names
(``Top.to_text``, ``--full-names``), the binaries of hpcrun measurements searched in
``binary_path`` (``--binary-path``; also of ``Input.convert``, its timelines included,
``to_folded``, the ``profile`` tables and ``report``), and ``diff``'s ``min_change`` and
``min_relative`` (``--min-change``, ``--min-relative``).

``testdata/hpctoolkit/kripke-names.d`` is a database whose functions are long C++ template
instantiations, as the Kripke tutorial database's are (written by the CLI's test
``crates/cli/tests/names.rs``)."""

import json
import shutil
import subprocess
import warnings

import pytest

import profcodec

#: The width of ``profcodec top``'s lines off a terminal (standard output a pipe).
OFF_TERMINAL = 200


def run_cli(cli, *args):
    out = subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out


@pytest.fixture(scope="module")
def kripke(testdata):
    return testdata / "hpctoolkit" / "kripke-names.d"


@pytest.mark.parametrize(
    "flags, options",
    [
        ([], {}),
        (["-n", "0", "--by", "inclusive"], {"limit": None, "by": "inclusive"}),
        (["--thread", "0"], {"thread": 0}),
        (["--group", "line"], {"group": "line"}),
        (["--group", "path"], {"group": "path"}),
    ],
)
def test_top_text_is_the_command_lines(cli, kripke, flags, options):
    profile = profcodec.open(kripke).profile()
    top = profile.top(**options)
    text = top.to_text(width=OFF_TERMINAL)
    assert text == run_cli(cli, "top", *flags, kripke).stdout
    assert all(len(line) <= OFF_TERMINAL for line in text.splitlines())
    # Uncut, the short names need no cut here (call paths, longer, do); the rows keep the
    # full names, as --json.
    assert str(top) == top.to_text()
    if options.get("group") != "path":
        assert top.to_text() == text
    rows = json.loads(run_cli(cli, "top", "--json", *flags, kripke).stdout)
    assert [r["name"] for r in top.rows] == [r["name"] for r in rows]
    if options.get("group", "function") == "function":
        assert "<…>" in text and "(…)" in text
        assert max(len(r["name"]) for r in top.rows) > 2500


def test_full_names_are_the_command_lines(cli, kripke):
    top = profcodec.open(kripke).profile().top(full_names=True)
    text = top.to_text()
    assert text == run_cli(cli, "top", "--full-names", kripke).stdout
    for row in top.rows[:3]:
        assert f"  {row['name']}  " in text
    assert "…" not in text
    # A narrow width cuts the name and file columns with a visible mark.
    short = profcodec.open(kripke).profile().top()
    cut = short.to_text(width=80)
    assert all(len(line) <= 80 for line in cut.splitlines()), cut
    assert "…  " in cut


def test_top_text_of_a_corpus_database_is_the_command_lines(corpus, cli):
    path = corpus / "hpctoolkit" / "dbase" / "loops-cputime-t.d"
    top = profcodec.open(path).profile().top(limit=None)
    assert top.to_text(width=OFF_TERMINAL) == run_cli(cli, "top", "-n", "0", path).stdout


def unstructured(corpus, tmp_path):
    """A copy of ``small.m`` without its ``structs/`` folder: its hpcstruct file names every
    address without the binary, so the binary's lookup (and its refusal) is what is read."""
    copy = tmp_path / "small.m"
    if not copy.exists():
        shutil.copytree(
            corpus / "hpctoolkit" / "meas" / "small.m",
            copy,
            ignore=shutil.ignore_patterns("structs"),
        )
    return copy


def unresolved(message):
    """What a report of an unresolved module says, without the hint after it."""
    return message.split("no symbols for ", 1)[1].split("; addresses shown", 1)[0]


def test_binary_path_is_the_command_lines(corpus, cli, tmp_path):
    measurement = unstructured(corpus, tmp_path)
    # A file of the recorded binary's name that is not the binary: found in binary_path, and
    # refused, with the reason naming it.
    decoy = tmp_path / "testmeas-small"
    decoy.write_bytes(b"not an ELF file")
    with pytest.warns(UserWarning, match="no symbols for") as caught:
        profile = profcodec.open(measurement).profile(binary_path=[tmp_path])
    said = [unresolved(str(w.message)) for w in caught if "no symbols" in str(w.message)]
    assert len(said) == 1 and str(decoy) in said[0], said
    out = run_cli(cli, "top", "--json", "-n", "0", "--binary-path", tmp_path, measurement)
    assert [unresolved(line) for line in out.stderr.splitlines() if "no symbols" in line] == said
    rows = json.loads(out.stdout)
    top = profile.top(limit=None)
    assert [(r["name"], r["self"]) for r in top.rows] == [(r["name"], r["self"]) for r in rows]
    assert any(r["name"].startswith("[0x") for r in top.rows)

    # Without it the binary is not found, and the reason says so.
    with pytest.warns(UserWarning) as caught:
        profcodec.open(measurement).profile()
    message = next(str(w.message) for w in caught if "no symbols" in str(w.message))
    assert str(decoy) not in message
    out = run_cli(cli, "top", measurement)
    assert [unresolved(line) for line in out.stderr.splitlines() if "no symbols" in line] == [
        unresolved(message)
    ]

    # diff takes it for the sides it reads.
    with pytest.warns(UserWarning) as caught:
        profcodec.diff(measurement, measurement, binary_path=[str(tmp_path)])
    assert any(str(decoy) in str(w.message) for w in caught)


def said(caught):
    """What the warnings caught say of unresolved modules."""
    return [unresolved(str(w.message)) for w in caught if "no symbols" in str(w.message)]


def cli_said(stderr):
    """What the command line's standard error says of unresolved modules."""
    return [unresolved(line) for line in stderr.splitlines() if "no symbols" in line]


@pytest.fixture
def decoy(tmp_path):
    """A folder holding a file of ``small.m``'s recorded binary's name that is not it: found
    through ``binary_path``, refused, and named by the reason."""
    folder = tmp_path / "binaries"
    folder.mkdir()
    (folder / "testmeas-small").write_bytes(b"not an ELF file")
    return folder


def chrome_slices(data):
    doc = json.loads(data)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return sorted(e["name"] for e in events if e.get("ph") in ("B", "X"))


@pytest.mark.parametrize("to", ["chrome", "folded"])
def test_convert_binary_path_is_the_command_lines(corpus, cli, tmp_path, decoy, to):
    # small.m has a trace: chrome is its timeline, folded its profile.
    measurement = unstructured(corpus, tmp_path)
    with pytest.warns(UserWarning, match="no symbols for") as caught:
        out = profcodec.open(measurement).convert(to, binary_path=[decoy])
    assert len(said(caught)) == 1 and str(decoy / "testmeas-small") in said(caught)[0]
    written = tmp_path / f"out.{to}"
    run = run_cli(cli, "convert", "--to", to, "-o", written, "--binary-path", decoy, measurement)
    assert cli_said(run.stderr) == said(caught)
    if to == "chrome":
        slices = chrome_slices(out)
        assert slices == chrome_slices(written.read_bytes())
        # The addresses: the binary found is refused.
        assert any(s.startswith("function at 0x") for s in slices), slices
    else:
        assert out == written.read_bytes()
        with pytest.warns(UserWarning, match="no symbols for") as caught:
            folded = profcodec.open(measurement).to_folded(binary_path=[decoy])
        assert out == folded.encode() and cli_said(run.stderr) == said(caught)

    # Without it the decoy is not looked at.
    with pytest.warns(UserWarning, match="no symbols for") as caught:
        profcodec.open(measurement).convert(to)
    assert all(str(decoy) not in m for m in said(caught))


def test_tables_and_report_take_binary_path(corpus, cli, tmp_path, decoy):
    measurement = unstructured(corpus, tmp_path)
    with pytest.warns(UserWarning, match="no symbols for") as caught:
        stream = profcodec.open(measurement).arrow_stream("profile.frames", binary_path=[decoy])
    assert len(stream) > 0
    assert len(said(caught)) == 1 and str(decoy / "testmeas-small") in said(caught)[0]
    # The format's own tables build no model: nothing to say.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        profcodec.open(measurement).arrow_stream("values", binary_path=[decoy])

    # The report reads the measurement for its profile and its timeline, and says it once,
    # as the command line does.
    with pytest.warns(UserWarning, match="no symbols for") as caught:
        profcodec.open(measurement).report(tmp_path / "report", binary_path=[decoy])
    run = run_cli(cli, "report", "-o", tmp_path / "cli-report", "--binary-path", decoy, measurement)
    assert said(caught) == cli_said(run.stderr)
    assert len(said(caught)) == 1 and str(decoy / "testmeas-small") in said(caught)[0]


def test_databases_say_nothing_of_binaries(kripke):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        profcodec.open(kripke).profile(binary_path=["/nonexistent"])


LOOPS = ("hpctoolkit/dbase/loops-cputime-t.d", "hpctoolkit/dbase/loops-cputime-t.nostruct.d")


@pytest.mark.parametrize(
    "flags, options",
    [
        (["--min-change", "0.05"], {"min_change": 0.05}),
        (["--min-change", "0.05"], {"min_change": "0.05"}),
        (["--min-change", "1ms"], {"min_change": "1ms"}),
        (["--min-relative", "50"], {"min_relative": 0.5}),
        (["--min-relative", "50%"], {"min_relative": "50%"}),
        (
            ["--min-change", "250us", "--min-relative", "5", "--by", "inclusive"],
            {"min_change": "250us", "min_relative": 0.05, "by": "inclusive", "limit": None},
        ),
    ],
)
def test_diff_minimums_are_the_command_lines(corpus, cli, flags, options):
    base, new = (corpus / p for p in LOOPS)
    out = run_cli(cli, "diff", "--json", "-n", "0", *flags, base, new)
    options = {"limit": None, **options}
    diff = profcodec.diff(base, new, **options)
    assert diff.rows == json.loads(out.stdout)
    # The minimums leave rows out.
    assert 0 < len(diff) < len(profcodec.diff(base, new, limit=None))


def test_diff_minimums_refuse_what_the_command_line_refuses(corpus, cli):
    base, new = (corpus / p for p in LOOPS)
    for bad in ["2 parsecs", -1.0, float("nan")]:
        with pytest.raises(ValueError, match="min_change"):
            profcodec.diff(base, new, min_change=bad)
    for bad in [-0.5, "five", "-5%"]:
        with pytest.raises(ValueError, match="min_relative"):
            profcodec.diff(base, new, min_relative=bad)
    # A time where the metric is a count.
    counts = [corpus / "hpctoolkit" / "dbase" / p for p in ("loops-perf.d", "loops-perf.nostruct.d")]
    out = subprocess.run(
        [str(cli), "diff", "--min-change", "1ms", *map(str, counts)], capture_output=True, text=True
    )
    assert out.returncode == 2
    with pytest.raises(profcodec.QueryError, match="not a time"):
        profcodec.diff(*counts, min_change="1ms")
    assert len(profcodec.diff(*counts, min_change=1e8, limit=None)) > 0


@pytest.mark.parametrize(
    "flags, options",
    [
        (["--thread", "Worker 1"], {"thread": "Worker 1"}),
        (["--thread", "Worker 1,Worker 2"], {"thread": ["Worker 1", "Worker 2"]}),
        (["--rank", "0"], {"rank": 0}),
    ],
)
def test_selections_are_the_command_lines(corpus, cli, flags, options):
    capture = corpus / "easyprofiler" / "sample_v210_rdtsc.prof"
    top = profcodec.open(capture).profile().top(**options)
    assert top.to_text(width=OFF_TERMINAL) == run_cli(cli, "top", *flags, capture).stdout
    rows = json.loads(run_cli(cli, "top", "--json", *flags, capture).stdout)
    assert [r["self"] for r in top.rows] == [r["self"] for r in rows]


def test_a_selection_that_keeps_nothing_says_what_there_is(corpus, cli):
    capture = corpus / "easyprofiler" / "sample_v210_rdtsc.prof"
    with pytest.raises(profcodec.QueryError, match="no thread matches 'Worker 9'; the inputs have threads"):
        profcodec.open(capture).profile().top(thread="Worker 9")
    out = subprocess.run([str(cli), "top", "--thread", "Worker 9", str(capture)], capture_output=True, text=True)
    assert out.returncode == 2 and "no thread matches 'Worker 9'" in out.stderr
