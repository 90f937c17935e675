"""to_folded() and convert(to=...) write what ``profcodec convert`` writes for the same input,
into files the viewers' parsers read; the writes are atomic and failures are profcodec
errors."""

import collections
import errno
import gzip
import json
import os
import subprocess

import pytest

import profcodec
from test_formats import NO_PROFILE, inputs

TARGETS = ("folded", "callgrind", "speedscope", "pprof", "firefox")


def convertible():
    """Up to three inputs with a profile of each format: the first, the largest, the last."""
    by_codec = collections.defaultdict(list)
    for path in inputs():
        if path.name.endswith(NO_PROFILE) or path.name == "meta.db":
            continue
        by_codec[profcodec.open(path).codec].append(path)
    chosen = []
    for paths in by_codec.values():
        size = lambda p: sum(f.stat().st_size for f in p.iterdir()) if p.is_dir() else p.stat().st_size
        for p in (paths[0], max(paths, key=size), paths[-1]):
            if p not in chosen:
                chosen.append(p)
    return chosen


def cli_convert(cli, to, path, *extra):
    out = subprocess.run(
        [str(cli), "convert", "--to", to, *extra, str(path)], capture_output=True
    )
    assert out.returncode == 0, out.stderr.decode()
    return out.stdout


@pytest.mark.parametrize("path", convertible(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_to_folded_is_the_command_lines(cli, path):
    run = profcodec.open(path)
    folded = run.to_folded()
    expected = cli_convert(cli, "folded", path).decode()
    assert collections.Counter(folded.splitlines()) == collections.Counter(expected.splitlines())
    assert run.profile().to_folded() == folded


@pytest.mark.parametrize("path", convertible(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_target_is_the_command_lines(cli, path, tmp_path):
    run = profcodec.open(path)
    for to in TARGETS:
        written = tmp_path / f"out.{to}"
        assert run.convert(to, written) is None
        data = written.read_bytes()
        assert data == run.convert(to), to
        assert data == cli_convert(cli, to, path), to


def varint(data, at):
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def top_level_fields(proto):
    """The field numbers of a protobuf message, each field's bytes walked to the end."""
    fields, at = set(), 0
    while at < len(proto):
        key, at = varint(proto, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            _, at = varint(proto, at)
        elif wire == 2:
            length, at = varint(proto, at)
            at += length
        else:
            raise AssertionError(f"wire type {wire} of field {number} at byte {at}")
        fields.add(number)
    assert at == len(proto)
    return fields


def test_the_viewers_read_the_files(corpus, tmp_path):
    """The outputs parse as their viewers read them: JSON for speedscope and the Firefox
    Profiler, gzip around a protobuf for pprof, callgrind's header and events."""
    run = profcodec.open(corpus / "easyprofiler" / "sample_v210_rdtsc.prof")
    speedscope = json.loads(run.convert("speedscope"))
    assert speedscope["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    # Input.convert reads EasyProfiler's timed blocks, as the command line does.
    assert any(p["type"] == "evented" for p in speedscope["profiles"])
    assert not any(
        p["type"] == "evented" for p in json.loads(run.profile().convert("speedscope"))["profiles"]
    )
    firefox = json.loads(run.convert("firefox"))
    assert "meta" in firefox and firefox["threads"]
    run.convert("pprof", tmp_path / "profile.pb.gz")
    proto = gzip.open(tmp_path / "profile.pb.gz").read()
    fields = top_level_fields(proto)
    # profile.proto: sample_type (1), sample (2), location (4), function (5), string_table (6).
    assert {1, 2, 4, 5, 6} <= fields
    callgrind = run.convert("callgrind").decode()
    assert callgrind.startswith("# callgrind format") and "\nevents:" in callgrind


def test_folded_with_a_metric_and_into_a_file(corpus, cli, tmp_path):
    path = corpus / "nytprof" / "nested__compress0.nytprof.out"
    run = profcodec.open(path)
    profile = run.profile()
    other = [v["name"] for v in profile.value_types if v["name"] != profile.default_value_type]
    assert other
    folded = run.to_folded(metric=other[0])
    assert folded == cli_convert(cli, "folded", path, "--metric", other[0]).decode()
    out = tmp_path / "nested.folded"
    out.write_text("old content that must go")
    # An existing file is replaced only when asked to.
    with pytest.raises(profcodec.FileError, match="already exists.*overwrite=True"):
        run.to_folded(out)
    assert out.read_text() == "old content that must go"
    assert run.to_folded(out, overwrite=True) is None
    assert out.read_text() == run.to_folded()
    # Nothing is left beside the output.
    assert sorted(os.listdir(tmp_path)) == ["nested.folded"]


def test_convert_failures_are_profcodec_errors(corpus, tmp_path):
    run = profcodec.open(corpus / "hpctoolkit" / "dbase" / "loops-cputime-t.d")
    with pytest.raises(ValueError, match="folded, callgrind, speedscope, pprof, firefox"):
        run.convert("svg")
    with pytest.raises(profcodec.QueryError, match="CPUTIME"):
        run.to_folded(metric="no such metric")
    with pytest.raises(profcodec.QueryError):
        run.profile().convert("pprof", metric="no such metric")
    with pytest.raises(profcodec.FileError, match="no such folder") as e:
        run.convert("folded", tmp_path / "no such folder" / "out.folded")
    assert e.value.errno == errno.ENOENT
    # A failed write leaves the old output whole and nothing beside it.
    out = tmp_path / "kept.folded"
    out.write_text("old")
    with pytest.raises(profcodec.QueryError):
        run.to_folded(out, metric="no such metric", overwrite=True)
    assert out.read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == ["kept.folded"]
    with pytest.raises(profcodec.UnsupportedError):
        profcodec.open(corpus / "hpctoolkit" / "dbase" / "loops-cputime-t.d" / "trace.db").to_folded()


def test_an_output_path_never_deletes_what_profcodec_did_not_write(corpus, tmp_path):
    """The output policy: a folder is never replaced by a file, with or without overwrite,
    nor is the input; /dev/null is written through."""
    path = corpus / "nytprof" / "nested__compress0.nytprof.out"
    run = profcodec.open(path)
    results = tmp_path / "results"
    results.mkdir()
    (results / "thesis.tex").write_text("mine")
    empty = tmp_path / "empty"
    empty.mkdir()
    for folder in (results, empty, tmp_path):
        for overwrite in (False, True):
            with pytest.raises(profcodec.FileError, match="is a folder") as e:
                run.convert("folded", folder, overwrite=overwrite)
            assert "overwrite" not in str(e.value)
            with pytest.raises(profcodec.FileError, match="is a folder"):
                run.profile().to_folded(folder, overwrite=overwrite)
    assert (results / "thesis.tex").read_text() == "mine"
    assert empty.is_dir() and not list(empty.iterdir())
    # The input itself is never the output.
    copy = tmp_path / "copy.out"
    copy.write_bytes(path.read_bytes())
    with pytest.raises(profcodec.FileError, match="is the input"):
        profcodec.open(copy).to_folded(copy, overwrite=True)
    assert copy.read_bytes() == path.read_bytes()
    # A character device is written through, as cp does.
    assert run.convert("pprof", "/dev/null") is None
    assert os.path.exists("/dev/null") and not os.path.isfile("/dev/null")
    assert sorted(os.listdir(tmp_path)) == ["copy.out", "empty", "results"]
