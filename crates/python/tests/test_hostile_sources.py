"""Input.report() reads source files a profile names only where the user allows it (the
input's own folder and ``source_roots``), never /proc, /sys or /dev, never through a link or
``..`` out of an allowed folder, only regular files of at most 16 MiB; a UserWarning per file
says whether the page embeds it, and why not (HOSTILE.md class 1)."""

import os
import struct
import uuid
import warnings

import profcodec
from conftest import nytprof_varint as varint


def report_text(out):
    """Every page of the report folder (the index and the source pages), one after another."""
    pages = [out / "index.html", *sorted((out / "files").glob("*.html"))]
    return "".join(p.read_text(encoding="utf-8") for p in pages)


def naming(files):
    """A NYTProf profile (no saved source) with a timed statement at line 1 of each file."""
    out = bytearray(b"NYTProf 5 0\n:ticks_per_sec=10000000\n:nv_size=8\n")
    out += b"P" + varint(7) + varint(1) + struct.pack("<d", 1.0)
    for fid, name in enumerate(files, 1):
        name = name.encode()
        out += b"@" + b"".join(varint(v) for v in (fid, 0, 0, 0x2, 0, 0))
        out += b"'" + varint(len(name)) + name
    for fid, _ in enumerate(files, 1):
        out += b"+" + varint(1000 * fid) + varint(fid) + varint(1)
    out += b"p" + varint(7) + struct.pack("<d", 2.0)
    return bytes(out)


def test_report_embeds_only_allowed_sources_and_says_why(tmp_path, monkeypatch):
    inside, secret = tmp_path / "input", tmp_path / "secret"
    inside.mkdir()
    secret.mkdir()
    marker = f"SECRET-{uuid.uuid4()}"
    (secret / "id_rsa").write_text(marker + "\n")
    (inside / "ok.pl").write_text("print 'allowed line';\n")
    os.symlink(secret / "id_rsa", inside / "link.pl")
    with open(inside / "big.pl", "wb") as big:
        big.truncate(17 << 20)
    monkeypatch.setenv("PROFCODEC_TEST_MARKER", marker)
    files = [
        "ok.pl",
        str(secret / "id_rsa"),
        "../secret/id_rsa",
        str(inside / "link.pl"),
        "/proc/self/environ",
        str(inside / "big.pl"),
    ]
    profile = inside / "nytprof.out"
    profile.write_bytes(naming(files))

    out = tmp_path / "report"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        profcodec.open(profile).report(out)
    page = report_text(out)
    assert marker not in page
    assert "allowed line" in page
    said = {}
    for w in caught:
        text = str(w.message)
        for f in files:
            if text.startswith(f"source of {f} "):
                said[f] = text
    assert set(said) == set(files), [str(w.message) for w in caught]
    assert "embedded in the page, from" in said["ok.pl"]
    for f in files[1:4]:
        assert "not embedded" in said[f] and "outside the folders allowed" in said[f], said[f]
        assert "source_roots" in said[f]
    assert "under /proc, /sys or /dev" in said["/proc/self/environ"]
    assert "too large: 17.0 MiB (17825792 bytes)" in said[str(inside / "big.pl")]

    # A folder given in source_roots is let in; /proc never.
    out = tmp_path / "report-roots"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        profcodec.open(profile).report(out, source_roots=[str(secret), "/"])
    page = report_text(out)
    assert marker in page
    assert "PROFCODEC_TEST_MARKER" not in page
    environ = [str(w.message) for w in caught if "/proc/self/environ" in str(w.message)]
    assert environ and "under /proc, /sys or /dev" in environ[0]
