"""gpucvt.astype against ml_dtypes, stochastic rounding, and bad input."""

import subprocess
import sys

import numpy as np
import pytest

import gpucvt
from conftest import FLOATS, gpucvt_bin, ml_dtypes, words
from peers import ml_dtypes_described, ml_dtypes_f64_double_rounds

SMALL = [f for f in FLOATS if f not in ("f32", "f64")]


def every_encoding(fmt):
    """Every encoding of a format of at most 16 bits, as an array of its dtype."""
    bits = gpucvt.finfo(fmt).bits
    container = np.dtype(FLOATS[fmt]).itemsize * 8
    return np.arange(2**bits, dtype=f"uint{container}").view(FLOATS[fmt])


def boundary_dense(dst, ftype):
    """Inputs of type `ftype` dense around `dst`'s rounding boundaries: its values, the
    midpoints between neighbours, the neighbours of both in `ftype`, the overflow threshold's
    region, zeros, infinities and NaN, of both signs."""
    v = gpucvt.values(dst) if gpucvt.finfo(dst).bits <= 16 else np.float64([])
    v = np.unique(v[np.isfinite(v)])
    v = v[v >= 0]
    mids = (v[:-1] + v[1:]) / 2
    top = gpucvt.finfo(dst).max
    extra = [top * (1 + 2.0**-k) for k in range(1, 12)] + [top * 2, 0.0, np.inf, np.nan]
    base = np.concatenate([v, mids, extra]).astype(ftype)
    with np.errstate(over="ignore"):
        up = np.nextafter(base, ftype(np.inf))
        down = np.nextafter(base, ftype(0))
    x = np.concatenate([base, up, down])
    return np.concatenate([x, -x])


def random_bits(ftype, n, seed):
    rng = np.random.default_rng(seed)
    size = np.dtype(ftype).itemsize * 8
    return rng.integers(0, 2**size, n, dtype=f"uint{size}").view(ftype)


def documented(x, dst, got, want):
    """Which elements may differ from ml_dtypes as the README documents (NaN encodings;
    ue8m0's PTX semantics). Elements where both are NaN are equal."""
    xf = np.asarray(x).astype(np.float64)
    with np.errstate(invalid="ignore"):
        g = got.astype(np.float64)
        w = want.astype(np.float64)
    ok = np.isnan(g) & np.isnan(w)
    # A NaN into a format without NaN: the largest finite value (PTX), ml_dtypes gives ±0.
    if not gpucvt.finfo(dst).has_nan:
        ok |= np.isnan(xf)
    if dst == "ue8m0":
        # PTX ignores the sign, 0 and tiny values give 2^-127, ties go to the even encoding;
        # ml_dtypes gives NaN for negatives and zeros, rounds ties up and f32 subnormals up.
        ok |= ~(xf > 0) | (xf < 2.0**-126) | np.isin(xf, np.exp2(np.arange(-127, 128)) * 1.5)
    return ok


def assert_like_ml_dtypes(x, dst, **kw):
    """gpucvt against ml_dtypes, in the versions the tests describe: equal but where the
    README documents a difference."""
    ml_dtypes_described()
    got = gpucvt.astype(x, dst, mode="rn", **kw)
    with np.errstate(all="ignore"):
        want = x.astype(FLOATS[dst])
    assert got.dtype == np.dtype(FLOATS[dst])
    assert got.shape == x.shape
    diff = (words(got) != words(want)) & ~documented(x, dst, got, want)
    if diff.any():
        i = np.nonzero(diff)[0][:5]
        pytest.fail(
            f"{x.dtype} -> {dst}: {diff.sum()} differ, e.g. "
            + ", ".join(f"{x[j]!r}: {words(got)[j]:#x} vs {words(want)[j]:#x}" for j in i)
        )


def castable(src, dst):
    try:
        np.zeros(1, FLOATS[src]).astype(FLOATS[dst])
        return True
    except TypeError:  # ml_dtypes has no cast between e8m0 and the other FP8/FP6/FP4
        return False


PAIRS = [(s, d) for s in FLOATS for d in FLOATS if s != d and castable(s, d)]


@pytest.mark.parametrize("src,dst", [p for p in PAIRS if p[0] in SMALL])
def test_every_input_of_small_sources_matches_ml_dtypes(src, dst):
    assert_like_ml_dtypes(every_encoding(src), dst)


@pytest.mark.parametrize("dst", [d for d in FLOATS if d != "f32"])
def test_f32_boundary_dense_and_random_match_ml_dtypes(dst):
    x = np.concatenate(
        [boundary_dense(dst, np.float32), random_bits(np.float32, 200_000, 1)]
    )
    assert_like_ml_dtypes(x, dst)


@pytest.mark.parametrize("dst", [d for d in FLOATS if d != "f64"])
def test_f64_sources_exact_in_f32_match_ml_dtypes(dst):
    # f64 inputs that are f32 values: ml_dtypes' rounding through f32 is then exact.
    x = np.concatenate(
        [boundary_dense(dst, np.float32), random_bits(np.float32, 100_000, 2)]
    ).astype(np.float64)
    assert_like_ml_dtypes(x, dst)


#: Exponent bits, mantissa bits and bias of the signed float formats of at most 16 bits, as
#: their specifications give them (IEEE 754, OCP MX/FP8, ml_dtypes' fnuz variants): the
#: independent reference below decodes with these, not with gpucvt's tables.
LAYOUTS = {
    "f16": (5, 10, 15),
    "bf16": (8, 7, 127),
    "e4m3": (4, 3, 7),
    "e5m2": (5, 2, 15),
    "e4m3ieee": (4, 3, 7),
    "e3m4": (3, 4, 3),
    "e4m3fnuz": (4, 3, 8),
    "e5m2fnuz": (5, 2, 16),
    "e4m3b11fnuz": (4, 3, 11),
    "e2m3": (2, 3, 1),
    "e3m2": (3, 2, 3),
    "e2m1": (2, 1, 1),
}
IEEE_SPECIALS = {"f16", "bf16", "e5m2", "e4m3ieee", "e3m4"}  # an all-ones exponent: inf, NaN
FNUZ = {"e4m3fnuz", "e5m2fnuz", "e4m3b11fnuz"}  # no -0: 0x80 is the NaN


def positive_values(dst):
    """(codes, values) of the non-negative finite encodings of `dst`, from its layout."""
    e, m, bias = LAYOUTS[dst]
    codes = np.arange(2 ** (e + m))
    exp, man = codes >> m, codes & (2**m - 1)
    value = np.where(
        exp == 0,
        np.ldexp(man.astype(np.float64), 1 - bias - m),
        np.ldexp((man + 2**m).astype(np.float64), exp - bias - m),
    )
    finite = np.ones(codes.size, bool)
    if dst in IEEE_SPECIALS:
        finite = exp != 2**e - 1
    elif dst == "e4m3":
        finite = codes != 0x7F  # OCP E4M3's only NaN; no infinity
    return codes[finite], value[finite]


def correctly_rounded(x, dst):
    """Round-to-nearest-even of finite f64 `x` (|x| <= max) into a signed float format of
    at most 16 bits, by search in its table of values."""
    codes, vals = positive_values(dst)
    half = 2 ** sum(LAYOUTS[dst][:2])
    a = np.abs(x)
    hi = np.clip(np.searchsorted(vals, a), 1, vals.size - 1)
    lo = hi - 1
    dlo, dhi = a - vals[lo], vals[hi] - a
    pick_hi = (dhi < dlo) | ((dhi == dlo) & (codes[hi] % 2 == 0))
    code = np.where(pick_hi, codes[hi], codes[lo])
    negative = np.signbit(x)
    if dst in FNUZ:
        negative &= code != 0  # a negative value rounded to zero is +0
    return np.where(negative, code + half, code)


def in_range(x, dst):
    top = positive_values(dst)[1].max()
    with np.errstate(invalid="ignore"):
        return x[np.isfinite(x) & (np.abs(x.astype(np.float64)) <= top)]


def assert_correctly_rounded(x, dst):
    got = words(gpucvt.astype(x, dst))
    want = correctly_rounded(x.astype(np.float64), dst)
    bad = got != want
    if bad.any():
        i = np.nonzero(bad)[0][:5]
        pytest.fail(
            f"{x.dtype} -> {dst}: {bad.sum()} not correctly rounded, e.g. "
            + ", ".join(f"{x[j]!r}: {got[j]:#x}, not {want[j]:#x}" for j in i)
        )


def test_the_reference_layouts_decode_as_the_format_catalogue_does():
    # A check of the reference's constants against the catalogue's largest and smallest
    # values (a mistyped layout would otherwise make every comparison below meaningless).
    for dst in LAYOUTS:
        vals = positive_values(dst)[1]
        fi = gpucvt.finfo(dst)
        assert (vals.max(), vals[1]) == (fi.max, fi.smallest_subnormal), dst


@pytest.mark.parametrize("src", SMALL)
def test_every_input_of_small_sources_is_correctly_rounded(src):
    # Every encoding of a source of at most 16 bits, into every float format of at most 16
    # bits, against the independent reference (finite values within the format's range;
    # the special values and overflows are checked against the Rust suite's big-rational
    # reference, and here against ml_dtypes where it agrees).
    x = every_encoding(src)
    for dst in LAYOUTS:
        if dst != src:
            assert_correctly_rounded(in_range(x, dst), dst)


@pytest.mark.parametrize("dst", list(LAYOUTS))
@pytest.mark.parametrize("ftype", [np.float32, np.float64])
def test_f32_and_f64_sources_are_correctly_rounded(dst, ftype):
    x = boundary_dense(dst, ftype)
    rng = np.random.default_rng(3)
    top = gpucvt.finfo(dst).max
    x = np.concatenate([x, rng.uniform(-top, top, 100_000).astype(ftype)])
    if ftype is np.float32:
        x = np.concatenate([x, random_bits(np.float32, 200_000, 1)])
    assert_correctly_rounded(in_range(x, dst), dst)


@pytest.mark.parametrize("dst", ["f16", "bf16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1"])
def test_how_ml_dtypes_rounds_f64_sources(dst):
    # Documents a peer: ml_dtypes 0.5 and 0.6 round f64 to f32 first, then to the format
    # (double rounding); 0.7 rounds once. NumPy converts f64 -> f16 directly.
    ml_dtypes_described()
    x = in_range(boundary_dense(dst, np.float64), dst)
    rng = np.random.default_rng(3)
    top = gpucvt.finfo(dst).max
    x = np.concatenate([x, rng.uniform(-top, top, 100_000)])
    right = correctly_rounded(x, dst)
    want = words(x.astype(FLOATS[dst]))
    if dst == "f16" or not ml_dtypes_f64_double_rounds():
        assert (want == right).all()
    else:
        differ = want != right
        assert differ.any()
        twice = words(x.astype(np.float32).astype(FLOATS[dst]))
        assert (want == twice).all()


def test_the_documented_double_rounding_example():
    x = np.float64([1 + 2.0**-8 + 2.0**-40])
    assert words(gpucvt.astype(x, "bfloat16")).tolist() == [0x3F81]
    ml_dtypes_described()
    twice = [0x3F80] if ml_dtypes_f64_double_rounds() else [0x3F81]
    assert words(x.astype(ml_dtypes.bfloat16)).tolist() == twice


def test_documented_nan_differences():
    nan = np.float32([np.nan, -np.nan])
    # Formats without NaN: PTX gives the largest finite value, ml_dtypes a zero.
    assert words(gpucvt.astype(nan, "e2m1")).tolist() == [0x7, 0x7]
    assert np.isnan(gpucvt.values("e4m3")[words(gpucvt.astype(nan, "e4m3"))]).all()
    # NaN payloads: PTX returns the canonical NaN, ml_dtypes keeps sign and payload.
    payload = np.uint32([0x7FC0_1234, 0xFFC0_0000]).view(np.float32)
    assert words(gpucvt.astype(payload, "f16")).tolist() == [0x7FFF, 0x7FFF]
    assert words(payload.astype(np.float16)).tolist() != [0x7FFF, 0x7FFF]


def test_documented_ue8m0_differences():
    x = np.float32([-4.0, 0.0, 1.5 * 2.0**-20])
    got = words(gpucvt.astype(x, "ue8m0")).tolist()
    assert got == [129, 0, 108]  # |-4| = 2^2; 0 -> 2^-127; the tie to the even 2^-19
    ml_dtypes_described()
    assert words(x.astype(ml_dtypes.float8_e8m0fnu)).tolist()[:2] == [0xFF, 0xFF]


# --- stochastic rounding ------------------------------------------------------------------


@pytest.mark.parametrize("src", ["f32", "f16", "f64", "bf16"])
@pytest.mark.parametrize("dst", ["bf16", "f16", "e4m3", "e5m2", "e2m1", "s8"])
def test_rs_with_zero_random_bits_is_rz(src, dst):
    if src == dst:
        pytest.skip("same format")
    x = (
        every_encoding(src)
        if src in SMALL
        else np.concatenate([boundary_dense("e4m3", FLOATS[src]), random_bits(FLOATS[src], 5000, 4)])
    )
    got = gpucvt.astype(x, dst, mode="rs", rbits=np.zeros(x.size, np.uint32))
    assert (words(got) == words(gpucvt.astype(x, dst, mode="rz"))).all()


@pytest.mark.parametrize("src", ["f16", "bf16", "e4m3", "e5m2", "e3m2", "e2m1", "int8", "uint16"])
@pytest.mark.parametrize("dst,width", [("bf16", 16), ("f16", 13), ("e4m3", 8), ("e2m1", 3), ("s8", 32)])
def test_rs_of_small_sources_equals_rs_of_their_f32_values(src, dst, width):
    # Sources of at most 16 bits are widened to f32 for stochastic rounding (with the exact
    # core for the elements the widening cannot serve): the same bits as converting their f32
    # values, for every encoding, random words and both satfinite settings.
    if src not in FLOATS and dst == "s8":
        pytest.skip("integer to integer wraps (PTX), f32 to integer clamps")
    if src in FLOATS:
        x = every_encoding(src)
    else:
        x = np.arange(2**16 if src == "uint16" else 256, dtype=np.uint16).astype(src)
    rng = np.random.default_rng(21)
    for satfinite in (False, True):
        r = rng.integers(0, 2**32, x.size, dtype=np.uint32)
        kw = dict(mode="rs", rbits=r, rbits_width=width, satfinite=satfinite)
        got = gpucvt.astype(x, dst, **kw)
        want = gpucvt.astype(x.astype(np.float32), dst, **kw)
        assert (words(got) == words(want)).all()
        seeded = gpucvt.astype(x, dst, mode="rs", seed=8, satfinite=satfinite)
        wide = gpucvt.astype(x.astype(np.float32), dst, mode="rs", seed=8, satfinite=satfinite)
        assert (words(seeded) == words(wide)).all()


@pytest.mark.parametrize("src", ["f16", "bf16", "e4m3", "e5m2", "e2m1"])
def test_rs_into_wider_formats_is_exact_with_nan_payloads(src):
    # Nothing to round: rs equals rn, including the NaN payloads PTX keeps from bf16 to f32.
    x = every_encoding(src)
    r = np.random.default_rng(22).integers(0, 2**32, x.size, dtype=np.uint32)
    for dst in ["f32", "f64"]:
        want = words(gpucvt.astype(x, dst))
        assert (words(gpucvt.astype(x, dst, mode="rs", rbits=r, rbits_width=32)) == want).all()
        assert (words(gpucvt.astype(x, dst, mode="rs", seed=3)) == want).all()


def chi_square_of_round_ups(dst, step, width, rbits_of):
    """Elements a fraction p of a gap above a value of `dst`; returns the chi-square statistic
    of the counts rounded up against p (5 fractions: 5 degrees of freedom)."""
    n = 20_000
    ps = [1 / 16, 3 / 16, 5 / 16, 1 / 2, 13 / 16]
    x = np.concatenate([np.full(n, 1 + p * step, np.float32) for p in ps])
    got = gpucvt.astype(x, dst, mode="rs", rbits=rbits_of(x.size), rbits_width=width)
    up = (got.astype(np.float64) > 1).reshape(len(ps), n).sum(axis=1)
    return sum((u - n * p) ** 2 / (n * p * (1 - p)) for u, p in zip(up, ps))


# chi-square with 5 degrees of freedom: P(X > 20.52) = 0.001
CHI2_5_999 = 20.52


@pytest.mark.parametrize("dst,step,width", [("bf16", 2.0**-7, 16), ("e4m3", 2.0**-3, 8)])
def test_rs_rounds_up_the_discarded_fraction_of_the_time(dst, step, width):
    rng = np.random.default_rng(12345)
    given = chi_square_of_round_ups(
        dst, step, width, lambda n: rng.integers(0, 2**32, n, dtype=np.uint32)
    )
    assert given < CHI2_5_999
    # The same with gpucvt's own stream: astype draws it when rbits is not given.
    n = 20_000
    ps = [1 / 16, 3 / 16, 5 / 16, 1 / 2, 13 / 16]
    x = np.concatenate([np.full(n, 1 + p * step, np.float32) for p in ps])
    got = gpucvt.astype(x, dst, mode="rs", seed=2024, rbits_width=width)
    up = (got.astype(np.float64) > 1).reshape(len(ps), n).sum(axis=1)
    stat = sum((u - n * p) ** 2 / (n * p * (1 - p)) for u, p in zip(up, ps))
    assert stat < CHI2_5_999
    # A biased stream fails: the statistic can detect a wrong rounding probability.
    biased = chi_square_of_round_ups(
        dst, step, width, lambda n: np.full(n, 2 ** (width - 1), np.uint32)
    )
    assert biased > CHI2_5_999


@pytest.mark.parametrize(
    "ftype,to,seed,extra",
    [
        (np.float32, "bf16", 42, []),
        (np.float32, "e4m3", 7, ["--satfinite"]),
        (np.float32, "f16", 0, []),
        (np.float32, "e2m1", 3, ["--satfinite", "--rbits-width", "5"]),
        (np.float16, "e5m2", 9, []),
        (np.float64, "bf16", 11, []),
    ],
)
def test_rs_with_a_seed_equals_gpucvt_convert_seed(tmp_path, ftype, to, seed, extra):
    exe = gpucvt_bin()
    if exe is None:
        pytest.skip("no gpucvt binary (scripts/test builds one and sets GPUCVT_BIN)")
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(200_003) * 4).astype(ftype)
    src, out = tmp_path / "x.npy", tmp_path / "y.npy"
    np.save(src, x)
    args = [exe, "convert", str(src), "-o", str(out), "--to", to, "--mode", "rs"]
    r = subprocess.run(args + ["--seed", str(seed)] + extra, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    want = words(np.load(out))
    kw = {"satfinite": "--satfinite" in extra}
    if "--rbits-width" in extra:
        kw["rbits_width"] = int(extra[extra.index("--rbits-width") + 1])
    for threads in (1, 3, None):
        got = gpucvt.astype(x, to, mode="rs", seed=seed, threads=threads, **kw)
        assert (words(got) == want).all()


# --- modes, options, shapes ---------------------------------------------------------------


def test_modes_and_options():
    x = np.float32([2.5, -2.5, 3.5, 1e9, -1e9, 0.75])
    assert gpucvt.astype(x, "s32", mode="rni").tolist() == [2, -2, 4, 1000000000, -1000000000, 1]
    assert gpucvt.astype(x, "s8", mode="rzi").tolist() == [2, -2, 3, 127, -128, 0]
    assert gpucvt.astype(x, "f16", mode="rz").tolist()[3] == 65504.0
    assert gpucvt.astype(x, "f16").tolist()[3] == np.inf
    assert gpucvt.astype(x, "f16", satfinite=True).tolist()[3] == 65504.0
    assert gpucvt.astype(x, "bf16", relu=True).astype(np.float64).tolist()[1] == 0.0
    assert gpucvt.astype(x, "f16", sat=True).tolist() == [1, 0, 1, 1, 0, 0.75]
    sub = np.float32([1e-40])
    assert gpucvt.astype(sub, "bf16", ftz=True).astype(np.float32).tolist() == [0.0]
    assert gpucvt.astype(sub, "bf16").astype(np.float32).tolist() != [0.0]
    for mode in ["rn", "rna", "rz", "rm", "rp", "rs", "rni", "rzi", "rmi", "rpi", "RN"]:
        gpucvt.astype(x, "f16", mode=mode)


def test_dtype_spellings():
    x = np.float32([0.3, 1e3])
    want = words(gpucvt.astype(x, "e4m3"))
    for d in ["float8_e4m3fn", "F8_E4M3", "f8E4M3FN", ml_dtypes.float8_e4m3fn,
              np.dtype(ml_dtypes.float8_e4m3fn), "E4M3"]:
        assert (words(gpucvt.astype(x, d)) == want).all()
    assert gpucvt.astype(x, np.float16).dtype == np.float16
    # Strings are names that count bits; dtype objects keep NumPy's meaning.
    assert gpucvt.astype(x, "f4").dtype == np.dtype(ml_dtypes.float4_e2m1fn)
    assert gpucvt.astype(x, np.dtype("f4")).dtype == np.float32
    assert gpucvt.astype(x, "i8").dtype == np.int8
    assert gpucvt.astype(x, np.dtype("i8")).dtype == np.int64
    assert gpucvt.astype(x, "float16").dtype == np.float16
    # Formats neither NumPy nor ml_dtypes has: the unsigned container.
    assert gpucvt.astype(x, "tf32").dtype == np.uint32
    assert gpucvt.astype(x, "ue4m3").dtype == np.uint8
    assert gpucvt.astype(np.float32([-1, 7]), "s4").dtype == np.dtype(ml_dtypes.int4)
    assert gpucvt.astype(np.float32([-1, 7]), "s4").tolist() == [-1, 7]
    # ml_dtypes' 1-, 2- and 4-bit integers, both ways (one element per byte, low bits).
    for fmt, ml, vals in [("s1", "int1", [-1, 0]), ("u1", "uint1", [0, 1]),
                          ("s2", "int2", [-2, 1]), ("u2", "uint2", [0, 3]),
                          ("u4", "uint4", [15, 2])]:
        y = gpucvt.astype(np.float32(vals), fmt)
        assert y.dtype == np.dtype(getattr(ml_dtypes, ml)) and y.tolist() == vals, fmt
        assert gpucvt.astype(y, "f32").tolist() == vals, fmt
        assert gpucvt.astype(np.float32(vals), ml).dtype == y.dtype


def test_sources_of_every_kind():
    v = [1, 2, 100]
    for dt in [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
               np.uint64, np.float16, np.float32, np.float64, ml_dtypes.bfloat16,
               ml_dtypes.float8_e4m3fn, ml_dtypes.int4]:
        x = np.array([1, 2, 7], dt)
        assert gpucvt.astype(x, "f32").tolist() == [1.0, 2.0, 7.0], dt
    assert gpucvt.astype(v, "f32").tolist() == [1.0, 2.0, 100.0]  # a list: int64
    assert gpucvt.astype([0.5, 1.5], "f32").tolist() == [0.5, 1.5]
    big = np.array([1.5, 300.0], dtype=">f4")  # byte order other than the machine's
    assert gpucvt.astype(big, "f32").tolist() == [1.5, 300.0]


def test_layouts_and_shapes():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((64, 48)).astype(np.float32)
    want = gpucvt.astype(x, "e5m2")
    assert want.shape == (64, 48)
    assert (words(gpucvt.astype(x.T, "e5m2")) == words(want).T).all()
    assert (words(gpucvt.astype(x[::3, 1::2], "e5m2")) == words(want)[::3, 1::2]).all()
    assert (words(gpucvt.astype(np.asfortranarray(x), "e5m2")) == words(want)).all()
    z = gpucvt.astype(np.zeros((0, 5), np.float32), "bf16")
    assert z.shape == (0, 5)
    s = gpucvt.astype(np.float32(1.5), "bf16")
    assert s.shape == () and float(s) == 1.5
    s = gpucvt.astype(2.5, "e2m1", mode="rs", rbits=[0])  # a Python float: 0-d
    assert s.shape == () and float(s) == 2.0
    ro = x.copy()
    ro.setflags(write=False)
    out = gpucvt.astype(ro, "e5m2")
    assert (words(out) == words(want)).all()
    assert out.flags.writeable and out.flags.c_contiguous
    out[0, 0] = 0  # results are the caller's to modify


def test_threads_do_not_change_results():
    rng = np.random.default_rng(6)
    x = rng.standard_normal(1_000_003).astype(np.float32)
    one = gpucvt.astype(x, "e4m3", mode="rs", seed=5, threads=1)
    for t in (2, 7, None, 10**9):
        assert (words(gpucvt.astype(x, "e4m3", mode="rs", seed=5, threads=t)) == words(one)).all()
    r = rng.integers(0, 2**32, x.size, dtype=np.uint32)
    one = gpucvt.astype(x, "bf16", mode="rs", rbits=r, threads=1)
    assert (words(gpucvt.astype(x, "bf16", mode="rs", rbits=r, threads=5)) == words(one)).all()


# --- bad input ----------------------------------------------------------------------------


def test_bad_names_and_values_raise_value_error():
    x = np.float32([1.0])
    with pytest.raises(ValueError, match='unknown format "e4m3f"; did you mean "e4m3"'):
        gpucvt.astype(x, "e4m3f")
    with pytest.raises(ValueError, match="not supported yet"):
        gpucvt.astype(x, "complex64")
    with pytest.raises(ValueError, match="not supported yet"):
        gpucvt.astype(x, "bool")
    with pytest.raises(ValueError, match="ambiguous"):
        gpucvt.astype(x, "float")
    with pytest.raises(ValueError, match="invalid mode"):
        gpucvt.astype(x, "f16", mode="nearest")
    with pytest.raises(ValueError, match="rbits_width must be 1 to 32"):
        gpucvt.astype(x, "f16", mode="rs", rbits_width=33)
    with pytest.raises(ValueError, match="rbits_width is only valid"):
        gpucvt.astype(x, "f16", rbits_width=8)
    with pytest.raises(ValueError, match="rbits is only valid"):
        gpucvt.astype(x, "f16", rbits=[1])
    with pytest.raises(ValueError, match="one word per element: 1 elements, 2 words"):
        gpucvt.astype(x, "f16", mode="rs", rbits=[1, 2])
    with pytest.raises(ValueError, match="negative"):
        gpucvt.astype(x, "f16", mode="rs", rbits=[-1])
    with pytest.raises(ValueError, match="seed"):
        gpucvt.astype(x, "f16", mode="rs", seed=-1)
    with pytest.raises(ValueError, match="threads"):
        gpucvt.astype(x, "f16", threads=0)
    with pytest.raises(ValueError, match="unknown format"):
        gpucvt.finfo("nope")
    with pytest.raises(ValueError, match="at most 16 bits"):
        gpucvt.values("f32")


@pytest.mark.parametrize("fmt", ["e2m3", "e3m2", "e2m1"])
def test_bits_above_a_sub_byte_format_are_an_error_as_in_the_cli(fmt, tmp_path):
    # A byte with a bit set above the format's width is no encoding of it: refused, naming
    # the element, in the words `gpucvt convert` uses; the valid bytes convert.
    bits = gpucvt.finfo(fmt).bits
    raw = np.arange(2**bits, dtype=np.uint8)
    assert gpucvt.astype(raw.view(FLOATS[fmt]), "f32").shape == raw.shape
    bad = raw.copy()
    bad[5] |= 1 << bits
    with pytest.raises(ValueError, match=rf"element 5 is 0x{bad[5]:x}, which is not a {fmt} encoding"):
        gpucvt.astype(bad.view(FLOATS[fmt]), "f32")
    b = gpucvt_bin()
    if b is not None:
        np.save(tmp_path / "x.npy", bad)
        r = subprocess.run(
            [b, "convert", str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npy"),
             "--from", fmt, "--to", "f32"],
            capture_output=True,
            text=True,
        )
        assert r.returncode != 0
        assert f"element 5 is 0x{bad[5]:x}, which is not a {fmt} encoding" in r.stderr


@pytest.mark.parametrize("dst", ["bf16", "e4m3", "e2m1", "f16"])
def test_misaligned_arrays_convert_like_aligned_ones(dst):
    # A float32 view one byte into a buffer is contiguous but misaligned: converted through
    # an aligned copy (once returned None, with out= left unwritten).
    rng = np.random.default_rng(5)
    want = rng.normal(0, 3, 1000).astype(np.float32)
    buf = np.zeros(want.nbytes + 1, np.uint8)
    x = buf[1:].view(np.float32)
    x[:] = want
    assert not x.flags.aligned and x.flags.c_contiguous
    expect = words(gpucvt.astype(want, dst))
    assert (words(gpucvt.astype(x, dst)) == expect).all()
    out = np.empty(x.shape, gpucvt.astype(want[:1], dst).dtype)
    assert gpucvt.astype(x, dst, out=out) is out
    assert (words(out) == expect).all()


def test_wrong_dtypes_raise_type_error():
    for bad in [np.array([1 + 2j]), np.array([True]), np.array(["a"]), np.array([None]),
                np.zeros(2, [("a", np.float32)])]:
        with pytest.raises(TypeError):
            gpucvt.astype(bad, "f16")
    with pytest.raises(TypeError, match="unsigned integers"):
        gpucvt.astype(np.float32([1]), "f16", mode="rs", rbits=np.float32([0.5]))
    with pytest.raises(TypeError):
        gpucvt.astype(np.float32([1]), 3.5)
    with pytest.raises(TypeError):
        gpucvt.astype(np.float32([1]), "f16", mode=1)


def test_huge_arrays_fail_cleanly():
    # 2^40 elements through a zero-stride view: no process abort, a MemoryError.
    x = np.broadcast_to(np.float32(1.0), (2**40,))
    with pytest.raises(MemoryError):
        gpucvt.astype(x, "bf16")


def test_without_ml_dtypes_results_are_unsigned_containers():
    code = (
        "import sys; sys.modules['ml_dtypes'] = None\n"
        "import numpy as np, gpucvt\n"
        "y = gpucvt.astype(np.float32([1.0, -2.0]), 'float8_e4m3fn')\n"
        "assert y.dtype == np.uint8 and y.tolist() == [0x38, 0xc0], y\n"
        "assert gpucvt.astype(np.float32([1.0]), 'bf16').dtype == np.uint16\n"
        "assert gpucvt.astype(np.float32([1.0]), 'f16').dtype == np.float16\n"
        "assert gpucvt.finfo('bf16').dtype is None\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_dlpack_and_array_protocols():
    # A CPU torch tensor reaches astype through __dlpack__ (or __array__): objects with only
    # those methods stand in for one.
    class DLPack:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, **kw):
            return self.a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    class ArrayLike:
        def __array__(self, dtype=None, copy=None):
            return np.float16([1.5, 2.0])

    got = gpucvt.astype(DLPack(np.float32([1.5, 3.0])), "bf16")
    assert got.astype(np.float32).tolist() == [1.5, 3.0]
    assert gpucvt.astype(ArrayLike(), "e4m3").astype(np.float32).tolist() == [1.5, 2.0]


def test_the_gil_is_released_while_converting():
    # float64 sources go through the exact core (tens of ns per element): a conversion long
    # enough to see whether another Python thread runs meanwhile. Holding the GIL would
    # stop this thread for the whole call.
    import threading
    import time

    x = np.random.default_rng(9).standard_normal(8_000_000)
    span = {}

    def work():
        span["start"] = time.perf_counter()
        gpucvt.astype(x, "e4m3", threads=1)
        span["end"] = time.perf_counter()

    t = threading.Thread(target=work)
    stamps = []
    t.start()
    while t.is_alive():
        stamps.append(time.perf_counter())
    t.join()
    duration = span["end"] - span["start"]
    inside = [s for s in stamps if span["start"] <= s <= span["end"]]
    gaps = np.diff([span["start"], *inside, span["end"]])
    assert duration > 0.05, "too fast to tell"
    assert gaps.max() < duration / 2, (gaps.max(), duration)


def test_the_cached_fast_path_keeps_results_and_checks():
    # The first call caches a converter by the arguments as given; later calls with other
    # layouts, byte orders, shapes and bad values must still be right or raise.
    x = np.float32([[0.1, -2.5], [500.0, np.nan]])
    want = words(gpucvt.astype(x, "e4m3", satfinite=True))
    for _ in range(3):
        assert (words(gpucvt.astype(x, "e4m3", satfinite=True)) == want).all()
    assert (words(gpucvt.astype(x.T, "e4m3", satfinite=True)) == want.T).all()
    assert (words(gpucvt.astype(x.astype(">f4"), "e4m3", satfinite=True)) == want).all()
    assert gpucvt.astype(x[0], "e4m3", satfinite=True).shape == (2,)
    assert gpucvt.astype(np.float32(3.0).reshape(()), "e4m3").shape == ()
    assert gpucvt.astype(np.float32([]), "e4m3").shape == (0,)
    assert gpucvt.astype(x, "e4m3", satfinite=True).dtype == ml_dtypes.float8_e4m3fn
    with pytest.raises(ValueError):
        gpucvt.astype(x, "e4m3", satfinite=True, seed=-1)
    with pytest.raises(ValueError):
        gpucvt.astype(x, "e4m3", satfinite=True, threads=0)
    with pytest.raises(TypeError):
        gpucvt.astype(x, "e4m3", satfinite=True, seed=1.5)
    a = gpucvt.astype(x, "bf16", mode="rs", seed=3)
    assert (words(gpucvt.astype(x, "bf16", mode="rs", seed=3)) == words(a)).all()


# ---- out=: the result written into the caller's array ----

def _sentinel(shape, dtype):
    """An array of `dtype` whose bytes are all 0xA5, to see that nothing was written."""
    a = np.empty(shape, dtype=dtype)
    a.view(np.uint8).reshape(-1)[:] = 0xA5
    return a


@pytest.mark.parametrize("to", ["e4m3", "e5m2", "e2m1", "bf16", "f16", "s8", "tf32", "ue8m0"])
def test_out_gets_the_result_and_is_returned(to):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((3, 1000)) * 40).astype(np.float32)
    want = gpucvt.astype(x, to)
    for view in (want.dtype, np.dtype(f"uint{want.dtype.itemsize * 8}")):
        for _ in range(2):  # the first call, then the cached fast path
            out = _sentinel(x.shape, view)
            got = gpucvt.astype(x, to, out=out)
            assert got is out
            assert got.dtype == view
            np.testing.assert_array_equal(words(got), words(want))


def test_out_with_every_option_and_threads():
    rng = np.random.default_rng(6)
    x = (rng.standard_normal(1 << 18) * 8).astype(np.float32)
    out = np.empty(x.shape, np.uint8)
    for kw in [dict(mode="rz", satfinite=True), dict(mode="rs", seed=9),
               dict(mode="rs", rbits=rng.integers(0, 2**32, x.size, dtype=np.uint32)),
               dict(relu=True, threads=4), dict(sat=True, threads=3)]:
        want = gpucvt.astype(x, "e4m3", **kw).view(np.uint8)
        assert gpucvt.astype(x, "e4m3", out=out, **kw) is out
        np.testing.assert_array_equal(out, want)


def test_out_from_a_strided_x_and_other_sources():
    x64 = np.linspace(-3, 3, 40)
    xs = x64[::2]  # not contiguous: converted from a copy, into out
    out = np.empty(xs.shape, np.uint16)
    assert gpucvt.astype(xs, "bf16", out=out) is out
    np.testing.assert_array_equal(out, gpucvt.astype(np.ascontiguousarray(xs), "bf16").view(np.uint16))
    out = np.empty((2, 2), np.uint8)
    gpucvt.astype([[1.0, 2.0], [3.0, 500.0]], "e4m3", satfinite=True, out=out)
    np.testing.assert_array_equal(out, [[0x38, 0x40], [0x44, 0x7E]])
    # 0-d and empty arrays.
    out = np.empty((), np.float16)
    assert gpucvt.astype(np.float32(1.5), "f16", out=out) is out and out == 1.5
    out = np.empty((0, 3), np.uint8)
    assert gpucvt.astype(np.zeros((0, 3), np.float32), "e4m3", out=out) is out


@pytest.mark.parametrize(
    "out,error,message",
    [
        (lambda: [0] * 4, TypeError, "out must be a NumPy array, not list"),
        (lambda: _sentinel(4, np.int8), TypeError, "out has dtype int8"),
        (lambda: _sentinel(4, np.uint16), TypeError, "out has dtype uint16"),
        (lambda: _sentinel(4, np.float16), TypeError, "out has dtype float16"),
        (lambda: _sentinel(5, np.uint8), ValueError, r"out has shape \[5\], but x has shape \[4\]"),
        (lambda: _sentinel((2, 2), np.uint8), ValueError, "out has shape"),
        (lambda: _sentinel(8, np.uint8)[::2], ValueError, "C-contiguous"),
    ],
)
def test_bad_out_is_refused_before_anything_is_written(out, error, message):
    x = np.float32([1, 2, 3, 4])
    o = out()
    before = np.array(o, copy=True)
    with pytest.raises(error, match=message):
        gpucvt.astype(x, "e4m3", out=o)
    if isinstance(o, np.ndarray):
        np.testing.assert_array_equal(o, before)


def test_read_only_and_fortran_out_are_refused():
    x = np.float32([[1, 2], [3, 4]])
    o = _sentinel((2, 2), np.uint8)
    o.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        gpucvt.astype(x, "e4m3", out=o)
    f = np.asfortranarray(_sentinel((2, 2), np.uint8))
    with pytest.raises(ValueError, match="C-contiguous"):
        gpucvt.astype(x, "e4m3", out=f)
    assert (f.view(np.uint8) == 0xA5).all()
    # The bits of bf16 in the other byte order are not the result's dtype.
    with pytest.raises(TypeError, match="dtype"):
        gpucvt.astype(x, "bf16", out=np.empty((2, 2), np.dtype(">u2")))


def test_out_overlapping_x_is_refused():
    # Same memory (f32 -> tf32 keeps 32-bit words), part of it, and through a strided x.
    buf = np.float32([1.1, 2.2, 3.3, 4.4, 5.5, 6.6, 7.7, 8.8])
    keep = buf.copy()
    for x, out, to in [
        (buf, buf.view(np.uint32), "tf32"),
        (buf[:4], buf.view(np.uint16)[6:10], "bf16"),
        (buf[::2], buf.view(np.uint32)[4:], "tf32"),
        (buf[1:], buf.view(np.uint8)[:7], "e4m3"),
    ]:
        with pytest.raises(ValueError, match="overlaps x's memory"):
            gpucvt.astype(x, to, out=out)
        np.testing.assert_array_equal(buf, keep)
    # Neighbouring, not overlapping: fine.
    out = buf.view(np.uint16)[8:12]
    gpucvt.astype(buf[:4], "bf16", out=out)
    np.testing.assert_array_equal(buf[:4], keep[:4])
    np.testing.assert_array_equal(out, gpucvt.astype(keep[:4], "bf16").view(np.uint16))


@pytest.mark.parametrize("dst,mode", [("bf16", "rz"), ("f16", "rn"), ("e4m3", "rn"), ("e2m1", "rz")])
def test_pzo_is_the_library_modifier(dst, mode):
    # astype's pzo= is the same builder's .pzo as gpucvt convert --pzo and gpucvt.round:
    # negative results that round to zero come out +0, every other result unchanged.
    xs = np.float32([-0.0, 0.0, -1e-45, -1e-30, -1e-8, -0.01, -1.5, -np.inf, np.nan, 3.0])
    sat = dst in ("e4m3", "e2m1")
    got = gpucvt.astype(xs, dst, mode=mode, pzo=True, satfinite=sat).view(f"u{_bytes(dst)}")
    plain = gpucvt.astype(xs, dst, mode=mode, satfinite=sat).view(f"u{_bytes(dst)}")
    for x, g, p in zip(xs, got, plain):
        want = gpucvt.round(repr(float(x)), dst, mode=mode, pzo=True, satfinite=sat).bits
        assert int(g) == want, (x, g, want)
    sign = 1 << (8 * _bytes(dst) - 1) if dst != "e2m1" else 0x8
    changed = got != plain
    assert changed.any()
    assert (plain[changed] == sign).all() and (got[changed] == 0).all()


def _bytes(dst):
    return {"bf16": 2, "f16": 2, "e4m3": 1, "e2m1": 1}[dst]
