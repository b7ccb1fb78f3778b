"""gpucvt.check against `gpucvt check --json`."""

import json
import os
import subprocess
from pathlib import Path

import pytest

import gpucvt
from conftest import REPO, gpucvt_bin

FILES = sorted(
    str(p.relative_to(REPO))
    for d in ["examples", "crates/gpucvt/tests/data"]
    for p in (REPO / d).rglob("*")
    if p.suffix in (".ptx", ".mlir", ".visaasm")
)


def cli_check(path, *args):
    exe = gpucvt_bin()
    if exe is None:
        pytest.skip("no gpucvt binary (set GPUCVT_BIN)")
    r = subprocess.run(
        [exe, "check", "--json", str(path), *args], capture_output=True, text=True, cwd=REPO
    )
    assert r.returncode in (0, 1), r.stderr
    return json.loads(r.stdout)


def test_the_files_are_there():
    assert len(FILES) >= 40
    assert "examples/ptx/mistakes.ptx" in FILES


@pytest.mark.parametrize("path", FILES)
def test_check_equals_check_json(path):
    want = cli_check(path)
    got = gpucvt.check(REPO / path)
    assert [d.to_dict() for d in got] == want
    # The same as text (the dialect told by the file's content, or given).
    text = (REPO / path).read_bytes().decode("utf-8")
    dialect = {".ptx": "ptx", ".mlir": "tile", ".visaasm": "visa"}[Path(path).suffix]
    assert gpucvt.check(text, dialect=dialect) == got
    if "\n" in text:
        assert gpucvt.check(text) == got


def test_check_options_equal_the_cli():
    p = "examples/ptx/mistakes.ptx"
    want = cli_check(p, "--target", "sm_100a", "--ptx-version", "8.7")
    got = gpucvt.check(str(REPO / p), target="sm_100a", ptx_version="8.7")
    assert [d.to_dict() for d in got] == want
    assert got != gpucvt.check(str(REPO / p))
    t = "crates/gpucvt/tests/data/tile/v13_4.mlir"
    want = cli_check(t, "--tile-version", "13.1")
    assert [d.to_dict() for d in gpucvt.check(REPO / t, tile_version="13.1")] == want
    assert want  # 13.4 ops are errors at 13.1


def test_diagnostic_fields():
    d = gpucvt.check(REPO / "examples/ptx/mistakes.ptx")[0]
    assert (d.line, d.column, d.severity, d.rule) == (18, 5, "error", "ptx.rounding-required")
    line, column, severity, rule, message = d
    assert message.startswith("cvt.f16.f32 needs a rounding modifier")
    assert list(d.to_dict()) == ["line", "column", "severity", "message", "rule"]


def test_text_or_path(tmp_path, monkeypatch):
    ptx = ".version 8.7\n.target sm_90\n.entry k() {\n .reg .f32 %f;\n .reg .b16 %h;\n cvt.f16.f32 %h, %f;\n}\n"
    f = tmp_path / "k.ptx"
    f.write_text(ptx)
    from_path = gpucvt.check(str(f))
    assert [d.rule for d in from_path] == ["ptx.rounding-required"]
    assert gpucvt.check(f) == from_path == gpucvt.check(ptx)
    # One line naming a missing file with a source suffix: a path, not text.
    with pytest.raises(FileNotFoundError, match="cannot read"):
        gpucvt.check(str(tmp_path / "missing.ptx"))
    with pytest.raises(FileNotFoundError):
        gpucvt.check(tmp_path / "missing.mlir")
    # A one-line text that names no file is text.
    assert gpucvt.check("cvt.f16.f32 %h, %f;") != []
    other = tmp_path / "k.txt"
    other.write_text(ptx)
    with pytest.raises(ValueError, match="cannot tell the dialect"):
        gpucvt.check(other)
    assert gpucvt.check(other, dialect="ptx") == from_path
    bad = tmp_path / "bad.ptx"
    bad.write_bytes(b"\xff\xfe cvt")
    with pytest.raises(ValueError, match="cannot read"):
        gpucvt.check(bad)
    (tmp_path / "dir.ptx").mkdir()
    with pytest.raises(OSError, match="cannot read"):
        gpucvt.check(tmp_path / "dir.ptx")
    with pytest.raises(ValueError, match="apply to PTX"):
        gpucvt.check(REPO / "examples/tile/mistakes.mlir", target="sm_90")
    with pytest.raises(ValueError):
        gpucvt.check(ptx, target="sm_1")
    with pytest.raises(ValueError, match="invalid dialect"):
        gpucvt.check(ptx, dialect="cuda")
    with pytest.raises(TypeError):
        gpucvt.check(b"cvt")
    assert [d.rule for d in gpucvt.check("")][0] == "ptx.directive"  # empty PTX: no .version
    # A huge text stays cheap (a diagnostic per statement, no recursion).
    many = ".version 8.7\n.target sm_90\n.entry k() {\n .reg .f32 %f;\n .reg .b16 %h;\n" + " cvt.f16.f32 %h, %f;\n" * 20000 + "}\n"
    assert len(gpucvt.check(many)) == 20000
    deep = "{" * 100000
    assert gpucvt.check(deep)  # block depth reported, no stack overflow
    assert os.path.exists(REPO / "examples")
