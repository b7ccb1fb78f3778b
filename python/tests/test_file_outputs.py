"""convert_file's outputs as units with their sidecars, interrupts, and read-only targets
(issue 41 §6). Dequantized values are checked against a NumPy reference that decodes the
codes and scales itself."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import gpucvt

# e2m1's values by code (sign in bit 3), from the OCP MX specification's table.
E2M1 = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6, -0.0, -0.5, -1, -1.5, -2, -3, -4, -6])


def data(shape, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) * 10).astype(np.float32)


def mxfp4_reference(q, s):
    """MXFP4 dequantized by NumPy: e2m1 code × 2^(ue8m0 − 127), blocks of 32 along the last axis."""
    v = E2M1[q.astype(np.int64)]
    scale = np.exp2(s.astype(np.float64) - 127)
    return v * np.repeat(scale, 32, axis=-1)


def unit(path):
    """The bytes of the data, scale and second-level scale files of an output (None: absent)."""
    stem = str(path)[: -len(".npy")]
    parts = [str(path), stem + "_scale.npy", stem + "_scale_2.npy"]
    return [open(p, "rb").read() if os.path.exists(p) else None for p in parts]


def temporaries(d):
    return [p.name for p in d.iterdir() if p.name.endswith(".gpucvt-tmp")]


def test_a_second_run_removes_the_stale_second_level(tmp_path):
    """nvfp4 then mxfp4 into one name left q_scale_2.npy, which dequantization used (64 NaN,
    max error 2.84): now it is removed, and the values are MXFP4's."""
    x = data((64, 64), 1)
    np.save(tmp_path / "x.npy", x)
    q = tmp_path / "q.npy"
    gpucvt.convert_file(tmp_path / "x.npy", q, recipe="nvfp4")
    assert (tmp_path / "q_scale_2.npy").exists()
    gpucvt.convert_file(tmp_path / "x.npy", q, recipe="mxfp4")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "q.npy", "q.npy.gpucvt.json", "q_scale.npy", "x.npy"]
    gpucvt.dequantize_file(q, tmp_path / "b.npy", to="f64")
    got = np.load(tmp_path / "b.npy")
    want = mxfp4_reference(np.load(q), np.load(tmp_path / "q_scale.npy"))
    assert not np.isnan(got).any()
    assert (got.view(np.uint64) == want.view(np.uint64)).all()


def test_concurrent_threads_leave_one_calls_unit(tmp_path):
    """Python threads converting into one .npy gave the data of one and the scales of another
    in 1–4 of 10 trials: now the unit left is always one call's, byte for byte."""
    writers = 4
    want = []
    for w in range(writers):
        np.save(tmp_path / f"x{w}.npy", data((16 << w, 256), 10 + w))
        gpucvt.convert_file(tmp_path / f"x{w}.npy", tmp_path / f"r{w}.npy", recipe="nvfp4")
        want.append(unit(tmp_path / f"r{w}.npy"))
    q = tmp_path / "q.npy"
    errors = []

    def write(w):
        try:
            gpucvt.convert_file(tmp_path / f"x{w}.npy", q, recipe="nvfp4", threads=1)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    for rnd in range(20):
        ts = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert not errors, errors
        assert unit(q) in want, f"round {rnd}: parts of different calls"
        gpucvt.dequantize_file(q, tmp_path / "b.npy")
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_read_only_output_needs_force(tmp_path):
    np.save(tmp_path / "x.npy", data((4, 32), 2))
    out = tmp_path / "y.npy"
    out.write_bytes(b"old")
    out.chmod(0o444)
    with pytest.raises(PermissionError) as e:
        gpucvt.convert_file(tmp_path / "x.npy", out, to="bf16")
    assert str(e.value).endswith(
        "y.npy is read-only: it is replaced or removed only when forced (force=True)")
    assert out.read_bytes() == b"old"
    gpucvt.convert_file(tmp_path / "x.npy", out, to="bf16", force=True)
    assert out.read_bytes() != b"old" and (out.stat().st_mode & 0o777) == 0o444
    gpucvt.convert_file(tmp_path / "x.npy", tmp_path / "q.npy", recipe="mxfp8")
    with pytest.raises(PermissionError):
        gpucvt.dequantize_file(tmp_path / "q.npy", out)
    gpucvt.dequantize_file(tmp_path / "q.npy", out, force=True)


def slow_input(path):
    """An f64 .npy whose MX conversion goes element by element through the exact core: slow
    enough (seconds) to be interrupted while it writes."""
    np.save(path, np.arange(1 << 22, dtype=np.float64) * 0.37)


SLOW = dict(to="e4m3", satfinite=True, block=32, threads=1)


def test_ctrl_c_stops_the_conversion_and_writes_nothing(tmp_path):
    """Ctrl-C waited for the call to finish, and the output was written anyway."""
    slow_input(tmp_path / "x.npy")
    out = tmp_path / "y.npy"
    out.write_bytes(b"old")
    finished, sent = threading.Event(), threading.Event()

    def interrupt():
        while not finished.is_set():
            if temporaries(tmp_path):
                sent.set()
                os.kill(os.getpid(), signal.SIGINT)
                return
            time.sleep(0.002)

    t = threading.Thread(target=interrupt)
    t.start()
    start = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            gpucvt.convert_file(tmp_path / "x.npy", out, **SLOW)
    finally:
        finished.set()
        t.join()
    assert sent.is_set()
    assert time.monotonic() - start < 30
    assert out.read_bytes() == b"old"
    assert temporaries(tmp_path) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.npy", "y.npy"]


SCRIPT = """
import signal, sys
import gpucvt
if sys.argv[3] == "own":
    seen = []
    signal.signal(getattr(signal, sys.argv[4]), lambda *a: seen.append(1))
gpucvt.convert_file(sys.argv[1], sys.argv[2], to="e4m3", satfinite=True, block=32, threads=1)
print("completed", "handled" if sys.argv[3] == "own" and seen else "")
"""


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_remove_the_temporaries(tmp_path, sig):
    """SIGTERM and SIGHUP left .gpucvt-tmp files: now the conversion stops, removes them, and
    the process still ends by the signal, as its default action does. A program's own handler
    is left to decide."""
    if not hasattr(signal, sig):
        pytest.skip(f"no {sig} here")
    slow_input(tmp_path / "x.npy")
    out = tmp_path / "y.npy"
    for mode in ["default", "own"]:
        out.write_bytes(b"old")
        p = subprocess.Popen([sys.executable, "-c", textwrap.dedent(SCRIPT), str(tmp_path / "x.npy"),
                              str(out), mode, sig], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
        deadline = time.monotonic() + 60
        while not temporaries(tmp_path) and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        assert p.poll() is None, "the conversion ended before it could be signalled"
        p.send_signal(getattr(signal, sig))
        stdout, stderr = p.communicate(timeout=60)
        if mode == "default":
            assert p.returncode == -getattr(signal, sig), (p.returncode, stderr)
            assert out.read_bytes() == b"old"
        else:
            assert p.returncode == 0 and stdout.strip() == "completed handled", stderr
        assert temporaries(tmp_path) == []
