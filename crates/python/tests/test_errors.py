"""Bad inputs raise profcodec.Error subclasses carrying the Rust error's message and byte
offset; nothing crashes the interpreter, whatever the bytes."""

import errno
import random
import shutil

import pytest

import profcodec
from test_formats import inputs


def test_the_classes():
    assert issubclass(profcodec.InvalidDataError, profcodec.Error)
    assert issubclass(profcodec.InvalidDataError, ValueError)
    assert issubclass(profcodec.UnknownFormatError, profcodec.Error)
    assert issubclass(profcodec.UnsupportedError, profcodec.Error)
    assert issubclass(profcodec.QueryError, profcodec.Error)
    assert issubclass(profcodec.FileError, profcodec.Error)
    assert issubclass(profcodec.FileError, OSError)


def test_a_missing_file(tmp_path):
    with pytest.raises(profcodec.FileError) as e:
        profcodec.open(tmp_path / "nothing.prof")
    assert e.value.errno == errno.ENOENT
    assert "nothing.prof" in str(e.value)
    assert isinstance(e.value, OSError)


def test_unknown_bytes_and_empty_files(tmp_path):
    elf = tmp_path / "a.out"
    elf.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(100))
    with pytest.raises(profcodec.UnknownFormatError, match="7f 45 4c 46"):
        profcodec.open(elf)
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    with pytest.raises(profcodec.UnknownFormatError, match="empty"):
        profcodec.open(empty)
    with pytest.raises(profcodec.UnknownFormatError, match="meta.db"):
        profcodec.open(tmp_path)


def test_a_truncated_nytprof_profile_names_the_offset(corpus, tmp_path):
    data = (corpus / "nytprof" / "nested__compress0.nytprof.out").read_bytes()
    cut = tmp_path / "cut.nytprof.out"
    cut.write_bytes(data[: len(data) // 2])
    run = profcodec.open(cut)
    with pytest.raises(profcodec.InvalidDataError) as e:
        run.profile()
    assert e.value.offset is not None and 0 < e.value.offset <= len(data)
    assert e.value.message == str(e.value)
    assert "byte" in e.value.message
    with pytest.raises(profcodec.InvalidDataError):
        run.info()


def test_a_damaged_database(corpus, tmp_path):
    db = tmp_path / "db"
    shutil.copytree(corpus / "hpctoolkit" / "dbase" / "small.d", db)
    profile_db = db / "profile.db"
    data = profile_db.read_bytes()
    profile_db.write_bytes(data[: len(data) - 20])
    with pytest.raises(profcodec.InvalidDataError) as e:
        profcodec.hpctoolkit.read(db)
    assert e.value.offset is not None
    assert "profile.db" in e.value.message
    with pytest.raises(profcodec.InvalidDataError):
        profcodec.open(db).profile()
    # meta.db missing: not a database.
    (db / "meta.db").unlink()
    with pytest.raises(profcodec.Error):
        profcodec.hpctoolkit.read(db)


def test_read_refuses_what_is_no_database(corpus):
    with pytest.raises(profcodec.UnsupportedError, match="not an HPCToolkit database"):
        profcodec.hpctoolkit.read(corpus / "easyprofiler" / "sample_v210_rdtsc.prof")
    with pytest.raises(profcodec.FileError):
        profcodec.hpctoolkit.read(corpus / "no such database")


def mutations(data, rng, count):
    """Byte flips, truncations and overwritten words of `data`."""
    for _ in range(count):
        b = bytearray(data)
        kind = rng.randrange(3)
        if kind == 0 or len(b) < 16:
            for _ in range(rng.randint(1, 8)):
                if b:
                    b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif kind == 1:
            b = b[: rng.randrange(len(b))]
        else:
            at = rng.randrange(len(b) - 8)
            b[at : at + 8] = rng.choice([b"\xff" * 8, bytes(8), b"\x00\x00\x00\x80" * 2])
        yield bytes(b)


def exercise(path):
    """Everything an input offers (its profile, its conversions, its tables); only profcodec
    errors may come out."""
    try:
        run = profcodec.open(path)
        run.info()
        profile = run.profile()
        profile.top(limit=None)
        profile.top(group="line", limit=3)
        profile.to_folded()
        profile.convert("pprof")
    except profcodec.Error as e:
        assert isinstance(e.message, str) and e.message
        assert e.offset is None or e.offset >= 0
    try:
        run = profcodec.open(path)
        for name in run.table_names():
            run.arrow_stream(name)
        run.arrow_stream("profile.nodes")
    except profcodec.Error as e:
        assert isinstance(e.message, str) and e.message
        assert e.offset is None or e.offset >= 0


def test_hostile_files_raise_only_profcodec_errors(corpus, tmp_path):
    rng = random.Random(19)
    files = [p for p in inputs() if p.is_file() and p.stat().st_size < 4 << 20]
    assert len(files) > 50
    for source in files:
        target = tmp_path / source.name
        for data in mutations(source.read_bytes(), rng, 12):
            target.write_bytes(data)
            exercise(target)


def test_hostile_databases_raise_only_profcodec_errors(corpus, tmp_path):
    rng = random.Random(233)
    source = corpus / "hpctoolkit" / "dbase" / "loops-cputime-t.d"
    db = tmp_path / "db"
    shutil.copytree(source, db)
    for name in ("meta.db", "profile.db"):
        original = (source / name).read_bytes()
        for data in mutations(original, rng, 40):
            (db / name).write_bytes(data)
            exercise(db)
            try:
                profcodec.hpctoolkit.read(db, graphframe=False)
                database = profcodec.hpctoolkit.open(db)
                database.values()
                database.profiles()
                database.metrics()
                database.traces()
            except profcodec.Error:
                pass
        (db / name).write_bytes(original)
