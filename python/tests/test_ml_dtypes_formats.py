"""ml_dtypes' FP8 variants (IEEE-style E4M3 and E3M4; the fnuz formats): properties and the
rules ml_dtypes and gpucvt share. (The element-by-element comparisons with ml_dtypes are in
test_astype.py, through FLOATS.)"""

import numpy as np
import pytest

import gpucvt
from conftest import ml_dtypes, words
from peers import ml_dtypes_described

NEW = {
    "e4m3ieee": ml_dtypes.float8_e4m3,
    "e3m4": ml_dtypes.float8_e3m4,
    "e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz,
}
FNUZ = ["e4m3fnuz", "e5m2fnuz", "e4m3b11fnuz"]


@pytest.mark.parametrize("fmt", NEW)
def test_finfo_matches_ml_dtypes(fmt):
    ml_dtypes_described()
    fi, ml = gpucvt.finfo(fmt), ml_dtypes.finfo(NEW[fmt])
    assert gpucvt.finfo(np.dtype(NEW[fmt])).name == fmt
    assert fi.dtype == np.dtype(NEW[fmt])
    assert fi.bits == ml.bits
    assert fi.max == float(ml.max)
    assert fi.min == float(ml.min)
    assert fi.min_normal == float(ml.smallest_normal)
    assert fi.smallest_subnormal == float(ml.smallest_subnormal)
    assert fi.eps == float(ml.eps)
    assert fi.has_inf == (fmt not in FNUZ)


@pytest.mark.parametrize("fmt", NEW)
def test_values_match_ml_dtypes(fmt):
    ml_dtypes_described()
    v = gpucvt.values(fmt)
    want = np.arange(256, dtype=np.uint8).view(NEW[fmt]).astype(np.float64)
    assert (np.isnan(v) == np.isnan(want)).all()
    ok = ~np.isnan(v)
    assert (words(v[ok]) == words(want[ok])).all()


@pytest.mark.parametrize("fmt", FNUZ)
def test_fnuz_rules(fmt):
    x = np.float32([np.nan, -np.nan, np.inf, -np.inf, -0.0, -1e-30, 1e30, -1e30])
    got = words(gpucvt.astype(x, fmt)).tolist()
    # NaN and infinities give the one NaN 0x80; -0 and a tiny negative value give +0; an
    # overflow rounded to nearest gives NaN.
    assert got == [0x80, 0x80, 0x80, 0x80, 0, 0, 0x80, 0x80]
    # satfinite clamps infinities and overflows; NaN stays NaN.
    sf = words(gpucvt.astype(x, fmt, satfinite=True)).tolist()
    assert sf == [0x80, 0x80, 0x7F, 0xFF, 0, 0, 0x7F, 0xFF]
    # 0x80 is NaN as a source.
    assert np.isnan(gpucvt.astype(np.uint8([0x80]).view(NEW[fmt]), "f32")).all()
    # ml_dtypes follows the same rules.
    ml_dtypes_described()
    assert got == words(x.astype(NEW[fmt])).tolist()


def test_e4m3_names_keep_their_meaning():
    # OCP e4m3 (float8_e4m3fn): 448 is its largest value; IEEE-style E4M3 overflows at 248.
    x = np.float32([448.0])
    assert words(gpucvt.astype(x, "e4m3")).tolist() == [0x7E]
    assert words(gpucvt.astype(x, "float8_e4m3")).tolist() == [0x78]  # +inf
    assert gpucvt.astype(x, "float8_e4m3").dtype == np.dtype(ml_dtypes.float8_e4m3)
    assert gpucvt.astype(x, "e4m3").dtype == np.dtype(ml_dtypes.float8_e4m3fn)


@pytest.mark.parametrize("fmt", NEW)
def test_f64_sources_are_correctly_rounded(fmt):
    # ml_dtypes rounds f64 through f32 (the README's double rounding); gpucvt rounds once:
    # the nearest value by search in the table of values, ties to the even encoding.
    v = gpucvt.values(fmt)
    pos = np.arange(128)
    finite = np.isfinite(v[pos])
    vals, codes = v[pos][finite], pos[finite]
    order = np.argsort(vals, kind="stable")
    vals, codes = vals[order], codes[order]
    top = gpucvt.finfo(fmt).max
    rng = np.random.default_rng(4)
    mids = (vals[:-1] + vals[1:]) / 2
    x = np.concatenate([vals, mids, mids * (1 + 2.0**-30), mids * (1 - 2.0**-30)])
    x = np.concatenate([x, -x, rng.uniform(-top, top, 50_000)])
    x = x[np.abs(x) <= top]
    a = np.abs(x)
    hi = np.clip(np.searchsorted(vals, a), 1, len(vals) - 1)
    lo = hi - 1
    dlo, dhi = a - vals[lo], vals[hi] - a
    pick_hi = (dhi < dlo) | ((dhi == dlo) & (codes[hi] % 2 == 0))
    code = np.where(pick_hi, codes[hi], codes[lo])
    neg = np.signbit(x) & ((code != 0) | (fmt not in FNUZ))  # fnuz: no -0
    want = np.where(neg, code | 0x80, code)
    assert (words(gpucvt.astype(x, fmt)) == want).all()
