"""gpucvt.convert_file against `gpucvt convert`: the same bytes, the same summary."""

import json
import os
import subprocess
import threading

import numpy as np
import pytest

import gpucvt
from conftest import gpucvt_bin, ml_dtypes, words

safetensors_numpy = pytest.importorskip("safetensors.numpy")


def exe():
    e = gpucvt_bin()
    if e is None:
        pytest.skip("no gpucvt binary (scripts/test builds one and sets GPUCVT_BIN)")
    return e


def cli_convert(src, dst, args):
    r = subprocess.run([exe(), "convert", str(src), "-o", str(dst), *args, "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def data(n=10_240, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 100).astype(dtype)
    x[:5] = [np.nan, np.inf, -np.inf, 1e-30, 0.0]
    return x


def safetensors_file(path):
    tensors = {
        "a.weight": data(4096, 1).reshape(64, 64),
        "b.weight": data(1024, 2).reshape(32, 32).astype(np.float16),
        "norm": data(64, 3),
        "step": np.arange(8, dtype=np.int64),
        "c.bias": data(96, 4).astype(ml_dtypes.bfloat16),
    }
    safetensors_numpy.save_file(tensors, str(path))
    return tensors


CASES = [
    ("npy", {"to": "e4m3"}, ["--to", "e4m3"]),
    ("npy", {"to": "e4m3", "satfinite": True}, ["--to", "e4m3", "--satfinite"]),
    ("npy", {"to": "bf16", "mode": "rs", "seed": 7}, ["--to", "bf16", "--mode", "rs", "--seed", "7"]),
    ("npy", {"to": "e2m1", "mode": "rs", "seed": 3, "rbits_width": 5, "satfinite": True},
     ["--to", "e2m1", "--mode", "rs", "--seed", "3", "--rbits-width", "5", "--satfinite"]),
    ("npy", {"to": "e4m3", "block": 32}, ["--to", "e4m3", "--block", "32"]),
    ("npy", {"to": "e2m1", "block": 32, "scale_rule": "rp"},
     ["--to", "e2m1", "--block", "32", "--scale-rule", "rp"]),
    ("npy", {"cvt": "cvt.rn.satfinite.e5m2x2.f32"}, ["--cvt", "cvt.rn.satfinite.e5m2x2.f32"]),
    ("npy", {"to": "s8", "mode": "rni", "threads": 2}, ["--to", "s8", "--mode", "rni", "--threads", "2"]),
    ("raw", {"to": "f16", "from_": "f32", "relu": True}, ["--to", "f16", "--from", "f32", "--relu"]),
    ("raw", {"to": "e2m1", "from_": "f32"}, ["--to", "e2m1", "--from", "f32"]),
    ("st", {"to": "e4m3"}, ["--to", "e4m3"]),
    ("st", {"to": "e4m3", "mode": "rs", "seed": 11}, ["--to", "e4m3", "--mode", "rs", "--seed", "11"]),
    ("st", {"to": "e5m2", "tensor": "*.weight", "exclude": ["b.*"]},
     ["--to", "e5m2", "--tensor", "*.weight", "--exclude", "b.*"]),
    ("st", {"to": "e4m3", "block": 32}, ["--to", "e4m3", "--block", "32"]),
    ("st", {"to": "e2m1", "block": 16, "tensor": ["a.weight", "norm"]},
     ["--to", "e2m1", "--block", "16", "--tensor", "a.weight", "--tensor", "norm"]),
    ("st", {"to": np.float16, "ftz": True}, ["--to", "f16", "--ftz"]),
]


@pytest.mark.parametrize("kind,kw,args", CASES)
def test_output_and_summary_equal_the_cli(tmp_path, kind, kw, args):
    ext = {"npy": ".npy", "raw": ".bin", "st": ".safetensors"}[kind]
    src = tmp_path / f"in{ext}"
    if kind == "npy":
        np.save(src, data())
    elif kind == "raw":
        data().tofile(src)
    else:
        safetensors_file(src)
    want = cli_convert(src, tmp_path / f"cliout{ext}", args)
    got = gpucvt.convert_file(src, tmp_path / f"pyout{ext}", **kw)
    assert (tmp_path / f"pyout{ext}").read_bytes() == (tmp_path / f"cliout{ext}").read_bytes()
    for scale in ("_scale.npy", "_scale.bin"):  # sidecar scale files
        c, p = tmp_path / f"cliout{scale}", tmp_path / f"pyout{scale}"
        assert c.exists() == p.exists()
        if c.exists():
            assert c.read_bytes() == p.read_bytes()
    # The same summary, but for the output's name.
    assert got.to_dict() == json.loads(json.dumps(want).replace("cliout", "pyout"))
    assert got.total.elements == want["total"]["elements"]
    assert [t.name for t in got.tensors] == [t["name"] for t in want["tensors"]]


def test_outputs_read_back(tmp_path):
    x = data()
    np.save(tmp_path / "x.npy", x)
    s = gpucvt.convert_file(tmp_path / "x.npy", tmp_path / "y.npy", to="e4m3", satfinite=True)
    y = np.load(tmp_path / "y.npy")
    assert (words(y) == words(gpucvt.astype(x, "e4m3", satfinite=True))).all()
    assert s.kind == "npy" and s.total.elements == x.size
    assert s.tensors[0].shape == (x.size,) and s.tensors[0].from_ == "f32" and s.tensors[0].to == "e4m3"
    assert s.total.saturated > 0 and s.total.max_abs_error > 0

    tensors = safetensors_file(tmp_path / "m.safetensors")
    s = gpucvt.convert_file(tmp_path / "m.safetensors", tmp_path / "o.safetensors", to="bf16",
                            exclude="norm")
    out = safetensors_numpy.load_file(str(tmp_path / "o.safetensors"))
    assert out["norm"].dtype == np.float32 and (words(out["norm"]) == words(tensors["norm"])).all()
    want = gpucvt.astype(tensors["a.weight"], "bf16")
    assert (words(out["a.weight"]) == words(want)).all()
    assert s.copied == ["norm"]
    # Not linear layers' weights: kept by the default choice, with their reasons.
    assert dict(s.kept) == {
        "step": "a 1-d tensor (a bias or a scale), not a linear layer's weight",
        "c.bias": "a 1-d tensor (a bias or a scale), not a linear layer's weight",
    }
    assert all(k["by_default"] for k in s.to_dict()["kept"])
    assert (words(out["c.bias"]) == words(tensors["c.bias"])).all()

    s = gpucvt.convert_file(tmp_path / "m.safetensors", tmp_path / "o.safetensors", to="bf16",
                            exclude="norm", all=True)
    out = safetensors_numpy.load_file(str(tmp_path / "o.safetensors"))
    assert (words(out["c.bias"]) == words(gpucvt.astype(tensors["c.bias"], "bf16"))).all()
    assert [k for k, _ in s.kept] == ["step"]
    assert not s.to_dict()["kept"][0]["by_default"]
    with pytest.raises(ValueError, match="all converts every tensor: give it or tensor, not both"):
        gpucvt.convert_file(tmp_path / "m.safetensors", tmp_path / "o.safetensors", to="bf16",
                            tensor="a.weight", all=True)
    assert "Summary(" in repr(s)

    s = gpucvt.convert_file(tmp_path / "m.safetensors", tmp_path / "p.safetensors", to="e4m3",
                            dry_run=True)
    assert s.dry_run and s.output_bytes > 0 and not (tmp_path / "p.safetensors").exists()


def test_rs_with_seed_equals_astype_for_npy(tmp_path):
    x = data(300_000)
    np.save(tmp_path / "x.npy", x)
    gpucvt.convert_file(tmp_path / "x.npy", tmp_path / "y.npy", to="bf16", mode="rs", seed=5)
    y = np.load(tmp_path / "y.npy")
    assert (words(y) == words(gpucvt.astype(x, "bf16", mode="rs", seed=5))).all()


@pytest.mark.parametrize(
    "kw,cli_args,spelled",
    [
        ({"to": "e9m9"}, ["--to", "e9m9"], [("for to;", "for --to;")]),
        ({"to": "e4m3", "from_": "f33"}, ["--to", "e4m3", "--from", "f33"],
         [("for from_ ", "for --from ")]),
        ({"cvt": "cvt.rn.e4m3.f32"}, ["--cvt", "cvt.rn.e4m3.f32"],
         [('cvt="cvt.rn.e4m3.f32"', '--cvt "cvt.rn.e4m3.f32"')]),
        ({"cvt": "cvt.rn.f32.f64"}, ["--cvt", "cvt.rn.f32.f64"], []),
        ({"to": "e4m3", "rbits_width": 5}, ["--to", "e4m3", "--rbits-width", "5"],
         [("rbits_width", "--rbits-width"), ('mode="rs"', "--mode rs")]),
        ({"to": "e4m3", "block": 5}, ["--to", "e4m3", "--block", "5"], []),
        ({"to": "e4m3", "tensor": "nothing*"}, None, None),
        ({"to": "e4m3", "mode": "rq"}, None, None),
        ({"to": "e4m3", "cvt": "cvt.rn.f16.f32"}, None, None),
        ({}, None, None),
        ({"to": "e4m3", "threads": 0}, None, None),
        ({"to": "e4m3", "scale_rule": "rp"}, None, None),
        ({"to": "e4m3", "block": 32, "scale_rule": "max"}, None, None),
    ],
)
def test_bad_options_raise_value_error_with_the_cli_message(tmp_path, kw, cli_args, spelled):
    # One check in the library for both front ends: the message is the CLI's with each
    # option spelled as the keyword (`rbits_width`, `mode="rs"`) instead of the flag.
    np.save(tmp_path / "x.npy", data(96))
    with pytest.raises(ValueError) as e:
        gpucvt.convert_file(tmp_path / "x.npy", tmp_path / "y.npy", **kw)
    assert not (tmp_path / "y.npy").exists()
    assert "--" not in str(e.value)
    if cli_args is not None:
        r = subprocess.run([exe(), "convert", str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npy"),
                            *cli_args], capture_output=True, text=True)
        assert r.returncode == 2
        want = str(e.value)
        for py, flag in spelled:
            assert py in want, (py, want)
            want = want.replace(py, flag)
        assert r.stderr == f"error: {want}\n"


def test_file_errors_raise_os_error(tmp_path):
    with pytest.raises(OSError) as e:
        gpucvt.convert_file(tmp_path / "missing.npy", tmp_path / "y.npy", to="e4m3")
    assert "missing.npy" in str(e.value)
    np.save(tmp_path / "x.npy", data(64))
    with pytest.raises(OSError):
        gpucvt.convert_file(tmp_path / "x.npy", tmp_path / "no" / "such" / "y.npy", to="e4m3")
    (tmp_path / "bad.npy").write_bytes(b"\x93NUMPY garbage")
    with pytest.raises(ValueError):
        gpucvt.convert_file(tmp_path / "bad.npy", tmp_path / "y.npy", to="e4m3")


def test_the_gil_is_released_while_converting(tmp_path):
    x = data(1 << 22)
    np.save(tmp_path / "x.npy", x)
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(1)
            done.wait(0.001)

    t = threading.Thread(target=tick)
    t.start()
    n0 = len(ticks)
    try:
        gpucvt.convert_file(tmp_path / "x.npy", tmp_path / "y.npy", to="e4m3", mode="rs", threads=1)
    finally:
        done.set()
        t.join()
    assert len(ticks) - n0 > 3


def _figures(x, back):
    """SQNR (dB) and the largest relative error of `back` against `x`, by NumPy in float64,
    over the elements finite on both sides, as the summary defines them."""
    x = x.astype(np.float64)
    back = back.astype(np.float64)
    ok = np.isfinite(x) & np.isfinite(back)
    err = np.abs(back[ok] - x[ok])
    nz = x[ok] != 0
    rel = float((err[nz] / np.abs(x[ok][nz])).max()) if nz.any() else 0.0
    sq = float((err * err).sum())
    sqnr = None if sq == 0 else 10 * np.log10(float((x[ok] ** 2).sum()) / sq)
    return sqnr, rel


def test_sqnr_and_relative_error_equal_numpy_on_the_read_back_data(tmp_path):
    # Specials and subnormals included: the figures leave the non-finite ones out.
    x = data(4096, 7).reshape(64, 64)
    x[1, :4] = [1e-42, -1e-40, 3e-39, 0.0]
    np.save(tmp_path / "x.npy", x)
    s = gpucvt.convert_file(tmp_path / "x.npy", tmp_path / "y.npy", to="e4m3", satfinite=True)
    back = np.load(tmp_path / "y.npy").view(ml_dtypes.float8_e4m3fn)
    sqnr, rel = _figures(x, back)
    t = s.tensors[0].stats
    assert t.sqnr_db == pytest.approx(sqnr, rel=1e-12) and t.max_rel_error == rel
    assert s.total.sqnr_db == pytest.approx(sqnr, rel=1e-12)

    # MXFP8 in a checkpoint: the codes times their blocks' power-of-two scales.
    w = data(64 * 128, 8).reshape(64, 128)
    w[~np.isfinite(w)] = 0.5
    safetensors_numpy.save_file({"model.layers.0.mlp.up_proj.weight": w}, str(tmp_path / "m.safetensors"))
    s = gpucvt.convert_file(tmp_path / "m.safetensors", tmp_path / "q.safetensors", recipe="mxfp8")
    # (The safetensors package's own parser: its NumPy loader has no FP8 dtypes.)
    import safetensors
    out = {k: v for k, v in safetensors.deserialize((tmp_path / "q.safetensors").read_bytes())}
    wq, sq = out["model.layers.0.mlp.up_proj.weight"], out["model.layers.0.mlp.up_proj.weight_scale"]
    assert (wq["dtype"], sq["dtype"]) == ("F8_E4M3", "F8_E8M0")
    codes = np.frombuffer(bytes(wq["data"]), ml_dtypes.float8_e4m3fn).reshape(64, 128)
    codes = codes.astype(np.float64)
    scale = np.frombuffer(bytes(sq["data"]), np.uint8).reshape(64, 4).astype(np.int64)
    back = codes * np.repeat(2.0 ** (scale - 127), 32, axis=1)
    sqnr, rel = _figures(w, back)
    t = s.tensors[0].stats
    assert t.sqnr_db == pytest.approx(sqnr, rel=1e-12) and t.max_rel_error == rel
    assert 25 < t.sqnr_db < 40  # e4m3 keeps about 31 dB of a Gaussian

    # An exact conversion has no SQNR: None, JSON null.
    ints = np.arange(-64, 64, dtype=np.float32)
    np.save(tmp_path / "i.npy", ints)
    s = gpucvt.convert_file(tmp_path / "i.npy", tmp_path / "j.npy", to="bf16")
    assert s.total.sqnr_db is None and s.total.max_rel_error == 0.0
    assert s.to_dict()["total"]["sqnr_db"] is None


def test_checkpoint_folder_in_a_stack_layout(tmp_path):
    # A folder of one shard and its config: converted into a folder in the compressed-tensors
    # layout, with the same numbers as the CLI's.
    src = tmp_path / "model"
    src.mkdir()
    rng = np.random.default_rng(3)
    w = rng.normal(0, 0.05, (32, 64)).astype(np.float32)
    w[0, :4] = [0.0, -0.0, 1e-40, 1e30]
    safetensors_numpy.save_file({"layer.proj.weight": w, "lm_head.weight": w[:8]},
                                str(src / "model.safetensors"))
    (src / "config.json").write_text(json.dumps({"model_type": "llama"}))
    with pytest.raises(ValueError, match="unknown layout \"gguf\" for layout"):
        gpucvt.convert_file(src, tmp_path / "x", recipe="fp8-row", layout="gguf")
    s = gpucvt.convert_file(src, tmp_path / "out", recipe="fp8-row", layout="compressed-tensors")
    assert s.kind == "checkpoint" and [t.name for t in s.tensors] == ["layer.proj.weight"]
    raw = (tmp_path / "out" / "model.safetensors").read_bytes()
    header = json.loads(raw[8 : 8 + int.from_bytes(raw[:8], "little")])
    assert header["layer.proj.weight"]["dtype"] == "F8_E4M3"
    assert header["layer.proj.weight_scale"]["shape"] == [32, 1]
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["quantization_config"]["ignore"] == ["lm_head"]
    cli = tmp_path / "cli"
    r = subprocess.run([gpucvt_bin(), "convert", str(src), "-o", str(cli), "--recipe", "fp8-row",
                        "--layout", "compressed-tensors", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["tensors"] == s.to_dict()["tensors"]
    for f in ("model.safetensors", "config.json"):
        assert (cli / f).read_bytes() == (tmp_path / "out" / f).read_bytes()
