"""astype's compat= (a peer's cast reproduced on purpose) and nan=.

Each peer's rules are checked two ways: against the exact reference of test_astype (the
values by search in each format's table; NaN encodings built here from each format's
layout by the rule the docs state), and, for ml_dtypes in the version the rules describe,
against the pinned package itself, bit for bit, NaNs included.
"""

import numpy as np
import pytest

import gpucvt
from conftest import FLOATS, ml_dtypes, words
from peers import ML_DTYPES
from test_astype import (
    FNUZ,
    IEEE_SPECIALS,
    LAYOUTS,
    PAIRS,
    SMALL,
    boundary_dense,
    correctly_rounded,
    every_encoding,
    in_range,
    random_bits,
)

#: The ml_dtypes series compat="ml_dtypes" describes.
COMPAT_ML_DTYPES = (0, 7)
NUMPY_TYPES = {"f64", "f32", "f16"}


def ml_dtypes_pairs():
    return [(s, d) for s, d in PAIRS if not (s in NUMPY_TYPES and d in NUMPY_TYPES)]


@pytest.mark.parametrize("src,dst", ml_dtypes_pairs())
def test_compat_ml_dtypes_is_ml_dtypes_bit_for_bit(src, dst):
    if ML_DTYPES != COMPAT_ML_DTYPES:
        pytest.skip(
            f"compat='ml_dtypes' describes ml_dtypes 0.7; this is {ml_dtypes.__version__}"
        )
    if src in SMALL:
        x = every_encoding(src)
    else:
        ftype = np.float32 if src == "f32" else np.float64
        x = np.concatenate([boundary_dense(dst, ftype), random_bits(ftype, 100_000, 7)])
    got = gpucvt.astype(x, dst, compat="ml_dtypes")
    with np.errstate(all="ignore"):
        want = x.astype(FLOATS[dst])
    assert got.dtype == want.dtype
    bad = words(got) != words(want)
    if bad.any():
        i = np.nonzero(bad)[0][:5]
        pytest.fail(
            f"{src} -> {dst}: {bad.sum()} differ, e.g. "
            + ", ".join(f"{words(x)[j]:#x}: {words(got)[j]:#x} vs {words(want)[j]:#x}" for j in i)
        )


def nan_code(dst, rule, negative):
    """The NaN a rule gives in `dst`, built from its layout: the quiet NaN (top mantissa
    bit), the all-ones mantissa, or the format's one NaN; with the sign where it has one."""
    e, m, _ = LAYOUTS[dst]
    sign = 1 << (e + m)
    if dst in FNUZ:
        return sign  # the one NaN, 0x80
    if dst == "e4m3":
        body = (1 << (e + m)) - 1  # 0x7f, the only NaN magnitude
    elif rule == "signed_quiet":
        body = ((1 << e) - 1) << m | 1 << (m - 1)
    else:  # signed_canonical, negative_canonical: every mantissa bit set
        body = ((1 << e) - 1) << m | ((1 << m) - 1)
    if rule == "negative_canonical" or negative:
        return body | sign
    return body


#: The peers' NaN rules by destination, as the docs state them (docs/reference/peers.md).
NAN_RULES = {
    "torch": {"f16": "negative_canonical", "bf16": "negative_canonical",
              "e4m3": "signed_canonical", "e5m2": "signed_canonical",
              "e4m3fnuz": "signed_canonical", "e5m2fnuz": "signed_canonical"},
    "xla": {"f16": "signed_quiet", "bf16": "signed_quiet", "e4m3": "signed_canonical",
            "e5m2": "signed_quiet", "e4m3fnuz": "signed_quiet", "e5m2fnuz": "signed_quiet",
            "e4m3b11fnuz": "signed_quiet", "e2m3": None, "e3m2": None, "e2m1": None},
    "ml_dtypes": {d: "signed_quiet" for d in LAYOUTS if d != "f16"},
}


@pytest.mark.parametrize(
    "peer,dst", [(p, d) for p, rules in NAN_RULES.items() for d in rules]
)
@pytest.mark.parametrize("ftype", [np.float32, np.float64])
def test_peers_against_the_exact_reference(peer, dst, ftype):
    x = np.concatenate([boundary_dense(dst, ftype), random_bits(ftype, 50_000, 11)])
    got = words(gpucvt.astype(x, dst, compat=peer))
    # Values: round to nearest even, once; torch (every format) and XLA (bf16, f16) round an
    # f64 to f32 first (NumPy's f64 -> f32 is the correctly rounded IEEE conversion).
    twice = ftype is np.float64 and (peer == "torch" or (peer == "xla" and dst in ("bf16", "f16")))
    with np.errstate(all="ignore"):
        v = x.astype(np.float32).astype(np.float64) if twice else x.astype(np.float64)
    finite = in_range(v, dst)
    keep = np.isin(v, finite)
    want = correctly_rounded(v[keep], dst)
    assert (got[keep] == want).all(), f"{peer} {ftype.__name__} -> {dst}: values"
    # NaN: the peer's rule; into e2m1/e2m3/e3m2, XLA gives -0 and ml_dtypes the zero of the
    # other sign.
    nan = np.isnan(x)
    neg = np.signbit(x[nan])
    rule = NAN_RULES[peer][dst]
    e, m, _ = LAYOUTS[dst]
    if rule is None or (peer == "ml_dtypes" and dst in ("e2m3", "e3m2", "e2m1")):
        zero_neg = np.ones_like(neg) if peer == "xla" else ~neg
        want_nan = np.where(zero_neg, 1 << (e + m), 0)
    else:
        want_nan = np.array([nan_code(dst, rule, n) for n in neg], dtype=np.int64)
    assert (got[nan] == want_nan).all(), f"{peer} {ftype.__name__} -> {dst}: NaN"
    # Infinities into a format without them: NaN of the value's sign where it has one.
    inf = np.isinf(v)
    if dst not in IEEE_SPECIALS and dst not in ("e2m3", "e3m2", "e2m1") and rule is not None:
        want_inf = np.array([nan_code(dst, rule, n) for n in np.signbit(v[inf])])
        assert (got[inf] == want_inf).all(), f"{peer} {ftype.__name__} -> {dst}: inf"


def test_documented_examples():
    f64 = np.float64([1 + 2**-8 + 2**-40])
    assert words(gpucvt.astype(f64, "bf16")) == [0x3F81]  # rounded once
    assert words(gpucvt.astype(f64, "bf16", compat="ml_dtypes")) == [0x3F81]
    assert words(gpucvt.astype(f64, "bf16", compat="torch")) == [0x3F80]
    assert words(gpucvt.astype(f64, "bf16", compat="jax")) == [0x3F80]
    neg_nan = np.float32([-np.nan])
    assert words(gpucvt.astype(neg_nan, "e4m3")) == [0x7F]
    assert words(gpucvt.astype(neg_nan, "e4m3", compat="torch")) == [0xFF]
    assert words(gpucvt.astype(neg_nan, "bf16", compat="torch")) == [0xFFFF]
    assert words(gpucvt.astype(np.float32([np.nan]), "bf16", compat="torch")) == [0xFFFF]
    assert words(gpucvt.astype(np.float32([np.nan, -np.nan]), "e2m1", compat="xla")).tolist() == [8, 8]
    assert words(gpucvt.astype(np.float32([np.nan, -np.nan]), "e2m1", compat="ml_dtypes")).tolist() == [8, 0]
    assert words(gpucvt.astype(np.float32([np.nan, -np.nan]), "e2m1")).tolist() == [7, 7]


def test_ue8m0_rules():
    x = np.float32([0.0, -1.0, 1.5, 3.0, 2.0**-127, 1.25 * 2.0**-127, 1.5 * 2.0**-127, 2.0**-128])
    # gpucvt (PTX's cvt.rn semantics): the sign ignored, zero and tiny values 0x00, ties to
    # the even encoding.
    assert words(gpucvt.astype(x, "ue8m0")).tolist() == [0, 0x7F, 0x80, 0x80, 0, 0, 0, 0]
    # ml_dtypes 0.7: NaN for zero and negatives, ties up, the lowest binade correctly rounded.
    assert words(gpucvt.astype(x, "ue8m0", compat="ml_dtypes")).tolist() == [
        0xFF, 0xFF, 0x80, 0x81, 0, 0, 1, 0]
    # torch: the sign ignored, ties up, the lowest binade (2^-127, 2^-126) rounded up.
    assert words(gpucvt.astype(x, "ue8m0", compat="torch")).tolist() == [
        0, 0x7F, 0x80, 0x81, 0, 1, 1, 0]
    if ML_DTYPES == COMPAT_ML_DTYPES:
        assert words(x.astype(ml_dtypes.float8_e8m0fnu)).tolist() == words(
            gpucvt.astype(x, "ue8m0", compat="ml_dtypes")).tolist()


def test_nan_payload():
    x = np.array([0x7FD00001, 0xFFE00000, 0x7F800001, 0x7FC00000], dtype=np.uint32).view(np.float32)
    got = words(gpucvt.astype(x, "bf16", nan="payload")).tolist()
    # The sign and the top 7 mantissa bits; a payload whose bits all fall below bf16's
    # mantissa (0x7f800001) gives the quiet NaN of its sign, so that it stays a NaN.
    assert got == [0x7FD0, 0xFFE0, 0x7FC0, 0x7FC0]
    assert words(gpucvt.astype(x, "bf16")).tolist() == [0x7FFF] * 4
    f16 = np.array([0xFE01], dtype=np.uint16).view(np.float16)
    assert words(gpucvt.astype(f16, "f32", nan="payload")).tolist() == [0xFFC02000]


def test_compat_errors():
    x = np.float32([1.0])
    with pytest.raises(ValueError, match='unknown peer "tf".*ml_dtypes, torch, xla'):
        gpucvt.astype(x, "e4m3", compat="tf")
    with pytest.raises(ValueError, match="takes no mode="):
        gpucvt.astype(x, "e4m3", compat="torch", mode="rz")
    with pytest.raises(ValueError, match="takes no satfinite="):
        gpucvt.astype(x, "e4m3", compat="torch", satfinite=True)
    with pytest.raises(ValueError, match="takes no nan="):
        gpucvt.astype(x, "e4m3", compat="xla", nan="payload")
    with pytest.raises(ValueError, match="PyTorch 2.15.*e2m1"):
        gpucvt.astype(x, "e2m1", compat="torch")
    with pytest.raises(ValueError, match="NumPy's cast"):
        gpucvt.astype(x, "f16", compat="ml_dtypes")
    with pytest.raises(ValueError, match="s32"):
        gpucvt.astype(x, "s32", compat="ml_dtypes")
    with pytest.raises(ValueError, match='nan must be "canonical" or "payload"'):
        gpucvt.astype(x, "e4m3", nan="quiet")
    with pytest.raises(TypeError, match="compat must be a str"):
        gpucvt.astype(x, "e4m3", compat=1)


def test_threads_do_not_change_compat_results():
    x = random_bits(np.float64, 1 << 17, 5)
    one = gpucvt.astype(x, "bf16", compat="torch", threads=1)
    many = gpucvt.astype(x, "bf16", compat="torch", threads=4)
    assert (words(one) == words(many)).all()
