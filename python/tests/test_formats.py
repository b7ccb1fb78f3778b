"""gpucvt.formats, finfo and values; the docstrings' examples."""

import doctest

import numpy as np
import pytest

import gpucvt
from conftest import FLOATS, ml_dtypes, words
from peers import ml_dtypes_described


def test_formats_lists_the_catalogue():
    names = gpucvt.formats()
    assert names[:5] == ["f64", "f32", "tf32", "f16", "bf16"]
    for f in ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "ue8m0", "ue4m3", "s4", "u64"]:
        assert f in names
    assert len(names) == len(set(names))
    for f in names:  # every name is usable
        assert gpucvt.finfo(f).name == f


@pytest.mark.parametrize("fmt", [f for f in FLOATS])
def test_finfo_matches_ml_dtypes(fmt):
    ml_dtypes_described()
    want = ml_dtypes.finfo(FLOATS[fmt])
    got = gpucvt.finfo(FLOATS[fmt])
    assert got.name == fmt
    assert got.bits == want.bits
    for a in ["max", "min", "eps", "smallest_normal", "smallest_subnormal", "tiny"]:
        assert getattr(got, a) == float(getattr(want, a)), a
    assert got.nmant == want.nmant


def test_finfo_of_formats_ml_dtypes_lacks():
    t = gpucvt.finfo("tf32")
    assert (t.bits, t.man_bits, t.max, t.has_inf, t.has_nan) == (32, 10, 3.4011621342146535e38, True, True)
    e = gpucvt.finfo("e2m1")
    assert (e.has_inf, e.has_nan, e.max, e.min, e.min_normal, e.smallest_subnormal) == (False, False, 6.0, -6.0, 1.0, 0.5)
    s = gpucvt.finfo("s8")
    assert (s.bits, s.max, s.min, s.eps, s.is_float) == (8, 127.0, -128.0, 1.0, False)
    u = gpucvt.finfo("ue8m0")
    assert (u.has_zero, u.min, u.max) == (False, 2.0**-127, 2.0**127)
    assert "bits=8" in repr(u)


@pytest.mark.parametrize("fmt", [f for f in FLOATS if f not in ("f32", "f64")])
def test_values_match_ml_dtypes(fmt):
    v = gpucvt.values(fmt)
    bits = gpucvt.finfo(fmt).bits
    assert v.dtype == np.float64 and v.shape == (2**bits,)
    container = np.dtype(FLOATS[fmt]).itemsize * 8
    want = np.arange(2**bits, dtype=f"uint{container}").view(FLOATS[fmt]).astype(np.float64)
    assert np.array_equal(v, want, equal_nan=True)
    assert (np.signbit(v) == np.signbit(want)).all()


def test_values_and_astype_agree():
    # Converting every value back gives its own encoding (NaNs aside).
    for fmt in ["bf16", "e4m3", "e3m2", "s4", "u4"]:
        v = gpucvt.values(fmt)
        keep = ~np.isnan(v)
        back = words(gpucvt.astype(v[keep], fmt, mode="rz"))
        assert (back == np.arange(len(v))[keep]).all(), fmt


def test_docstring_examples_run():
    r = doctest.testmod(gpucvt, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert r.attempted >= 10 and r.failed == 0


def test_help_is_useful():
    doc = gpucvt.astype.__doc__
    for word in ["mode", "rbits", "seed", "satfinite", "threads", ">>>", "ml_dtypes"]:
        assert word in doc
    for f in [gpucvt.formats, gpucvt.finfo, gpucvt.values]:
        assert ">>>" in f.__doc__
