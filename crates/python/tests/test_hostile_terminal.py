"""No byte of a hostile input reaches the terminal raw (HOSTILE.md, class 2): the text Python
prints or hands out for printing (``Top.to_text()``, ``str(top)``, the warnings Python prints on
standard error) shows control characters, escape sequences and bidi controls escaped, while the
rows keep the names as the input has them."""

import unicodedata
import warnings

import profcodec

# A name of the same length as hello's ``main::fib`` (9 bytes, so the uncompressed profile stays
# well formed when it is put in its place): CSI 2J (clear the screen), and a C1 CSI (U+009B:
# NYTProf reads a name without its UTF-8 tag as Latin-1).
HOSTILE = b"m\x1b[2J\x9b2Jx"
assert len(HOSTILE) == len(b"main::fib")


def raw_controls(text):
    """The characters of ``text`` a terminal obeys or reorders by, newlines apart."""
    return [
        c
        for c in text
        if c != "\n" and (unicodedata.category(c) == "Cc" or c in "\u061c\u200e\u200f"
                          or "\u202a" <= c <= "\u202e" or "\u2066" <= c <= "\u2069")
    ]


def hostile_profile(testdata, tmp_path):
    data = (testdata / "nytprof" / "hello.nytprof.out").read_bytes()
    path = tmp_path / "hostile.nytprof.out"
    path.write_bytes(data.replace(b"main::fib", HOSTILE))
    return path


def test_top_text_escapes_names(testdata, tmp_path):
    profile = profcodec.open(hostile_profile(testdata, tmp_path)).profile()
    top = profile.top(limit=None)
    name = HOSTILE.decode("latin-1")
    # The rows are data: the name as the input has it.
    assert name in [row["name"] for row in top.rows]
    whole = profile.top(limit=None, full_names=True).to_text()
    for text in (top.to_text(), str(top), whole):
        assert not raw_controls(text), repr(text)
        assert "m\\x1b[2J\\u{9b}2Jx" in text, text
    # Cut to a width, the columns are measured on the escaped text.
    assert not raw_controls(top.to_text(width=60))


def test_warnings_escape_names_from_inputs(testdata, tmp_path):
    """A folder of profiles whose entries carry escape sequences: the warnings that say what
    was passed over name them escaped."""
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "a.nytprof.out").write_bytes((testdata / "nytprof" / "hello.nytprof.out").read_bytes())
    (folder / "empty\x1b]52;c;cm0gLXJmIH4=\x07\u202e.out").write_bytes(b"")
    (folder / "junk\x1b]0;owned\x07.out").write_bytes(b"junk\x1b[2J")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        profcodec.merged_profile([folder])
    for w in caught:
        assert not raw_controls(str(w.message)), repr(str(w.message))
