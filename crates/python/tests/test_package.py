"""The package as a user meets it: the README's example runs, the type stubs name everything
the native module offers, and the extension is built for the stable ABI."""

import ast
import os
import re
from pathlib import Path

import profcodec
from profcodec import _profcodec
from conftest import REPO

PACKAGE = Path(__file__).resolve().parents[1]


def run_python_blocks(readme, tmp_path, monkeypatch, capsys):
    """Runs the Python blocks of `readme` in a temporary folder holding the repository's
    testdata (their paths), where what they write goes; returns what they printed."""
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), re.S)
    assert blocks
    (tmp_path / "testdata").symlink_to(REPO / "testdata")
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        exec(compile(block, readme.name, "exec"), {})
    return capsys.readouterr().out


def test_the_readme_example_runs(capsys, monkeypatch, tmp_path, pyarrow):
    out = run_python_blocks(PACKAGE / "README.md", tmp_path, monkeypatch, capsys)
    assert "HPCToolkit database 4.0" in out
    assert "values," in out
    assert "['files', 'lines', 'subs', 'calls']" in out
    assert "main::BEGIN@2 118" in out
    assert (tmp_path / "hello.pb.gz").stat().st_size > 0
    assert (tmp_path / "hello.speedscope.json").stat().st_size > 0


def test_the_repository_readme_python_example_runs(capsys, monkeypatch, tmp_path):
    out = run_python_blocks(REPO / "README.md", tmp_path, monkeypatch, capsys)
    assert "main::fib" in out


def test_the_stubs_name_every_native_item():
    stubs = ast.parse((PACKAGE / "python" / "profcodec" / "_profcodec.pyi").read_text())
    stubbed = {
        node.name
        for node in stubs.body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))
    }
    native = {name for name in dir(_profcodec) if not name.startswith("_")}
    assert native == stubbed
    for cls in stubs.body:
        if isinstance(cls, ast.ClassDef):
            methods = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
            real = {n for n in dir(getattr(_profcodec, cls.name)) if not n.startswith("_")}
            assert real == methods - {"__init__", "__len__", "__fspath__", "__arrow_c_stream__"}, cls.name


def test_every_native_item_has_a_docstring():
    for name in dir(_profcodec):
        if name.startswith("_"):
            continue
        item = getattr(_profcodec, name)
        assert item.__doc__, name
        for attr in dir(item) if isinstance(item, type) else []:
            if not attr.startswith("_"):
                assert getattr(item, attr).__doc__, f"{name}.{attr}"


def test_the_extension_uses_the_stable_abi():
    assert os.path.basename(_profcodec.__file__).endswith(".abi3.so")


def test_the_public_names():
    assert set(profcodec.__all__) <= set(dir(profcodec))
    assert profcodec.hpctoolkit.Database is _profcodec.Database
