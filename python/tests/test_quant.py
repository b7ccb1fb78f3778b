"""gpucvt.mx_quantize / mx_dequantize / dequantize_file against an independent NumPy +
ml_dtypes reference of the block-scaling rules, against torchao's real output, and through
files."""

import json
import math

import numpy as np
import pytest
import safetensors

import gpucvt
from conftest import REPO, ml_dtypes, words

safetensors_numpy = pytest.importorskip("safetensors.numpy")

# --- The reference: the formulas of crates/gpucvt-tensor/src/quant/mod.rs and
# docs/quantization-stacks.md, in NumPy and ml_dtypes, without gpucvt. ---

ELEMS = {
    # dtype, largest finite value, emax, mantissa bits, the code a NaN becomes
    "e4m3": (ml_dtypes.float8_e4m3fn, 448.0, 8, 3, 0x7F),
    "e5m2": (ml_dtypes.float8_e5m2, 57344.0, 15, 2, 0x7F),
    "e2m3": (ml_dtypes.float6_e2m3fn, 7.5, 2, 3, 0x1F),
    "e3m2": (ml_dtypes.float6_e3m2fn, 28.0, 4, 2, 0x1F),
    "e2m1": (ml_dtypes.float4_e2m1fn, 6.0, 2, 1, 0x7),
}
F32_MIN_NORMAL = np.float32(2.0**-126)
# The least non-zero NVFP4 second level: 2^121 / 2^-6 (the element factor) is still an f32.
SECOND_LEVEL_MIN = np.float32(2.0**-121)
SCALE_NAN = {"ue8m0": 0xFF, "ue4m3": 0x7F, "f32": 0x7FC00000, "bf16": 0x7FC0}


def ref_elements(y, elem):
    """Element codes of the exact values `y` (float64; each is an f32 times a power of two,
    or an f32), rounded once to nearest even, saturating (as .satfinite)."""
    dt, mx, _, _, nan = ELEMS[elem]
    y = np.asarray(y, dtype=np.float64)
    # Clamping first is the same as saturating after rounding; the clamped values fit f32
    # (exactly, or far below the element's smallest subnormal).
    c = np.clip(y, -mx, mx).astype(np.float32)
    codes = c.astype(dt).view(np.uint8).copy()
    codes[np.isnan(y)] = nan
    return codes


def floor_log2(v):
    m, e = math.frexp(v)
    return e - 1


def ceil_log2(v):
    m, e = math.frexp(v)
    return e - 1 if m == 0.5 else e


def ue8m0_shared(rule, amax, elem):
    _, mx, emax, mbits, _ = ELEMS[elem]
    a = float(amax)
    if rule == "floor":
        s = -127 if a == 0 else floor_log2(a) - emax
    elif rule == "ceil":
        s = -127 if a == 0 else ceil_log2(a) - emax
    elif rule == "even":
        # amax rounded half up to the element's mantissa bits, in its f32 encoding.
        b = int(np.float32(amax).view(np.uint32))
        r = (b + (1 << (22 - mbits))) & 0x7F800000
        s = (r >> 23) - 127 - emax
    elif rule == "rceil":
        q = float(np.float32(amax) / np.float32(mx))
        s = -127 if q == 0 else ceil_log2(q)
    else:
        raise AssertionError(rule)
    return max(-127, min(127, s))


def e4m3_byte(v):
    return int(np.float32(v).astype(ml_dtypes.float8_e4m3fn).view(np.uint8))


def e4m3_val(b):
    return float(np.uint8(b).view(ml_dtypes.float8_e4m3fn))


def scale_index(shape, block, axis):
    """For each element (row-major) the row-major index of its block's scale, and the
    scale shape."""
    nd = len(shape)
    idx = [i.reshape(-1) for i in np.indices(shape)]
    a = axis % nd if nd else 0
    s = list(shape)
    if block == "tensor":
        return np.zeros(int(np.prod(shape)), dtype=np.int64), ()
    if block == "row":
        idx[a] = idx[a] * 0
        s[a] = 1
    elif isinstance(block, tuple):
        r, c = block
        idx[-2] = idx[-2] // r
        idx[-1] = idx[-1] // c
        s[-2] = -(-s[-2] // r)
        s[-1] = -(-s[-1] // c)
    else:
        idx[a] = idx[a] // block
        s[a] //= block
    return np.ravel_multi_index(idx, s), tuple(s)


def ref_quantize(x, elem, block=32, axis=-1, scale="ue8m0", rule="floor", scale_2=False):
    """(codes, scale bits, s2) by the documented formulas."""
    x = np.asarray(x, dtype=np.float32)
    flat = x.reshape(-1)
    sidx, sshape = scale_index(x.shape, block, axis)
    nb = int(np.prod(sshape))
    absbits = flat.view(np.uint32) & np.uint32(0x7FFFFFFF)
    amaxbits = np.zeros(nb, dtype=np.uint32)
    np.maximum.at(amaxbits, sidx, absbits)
    amax = amaxbits.view(np.float32)
    _, mx, _, _, _ = ELEMS[elem]
    s2 = None
    if scale_2:
        # Over the blocks without NaN or infinity.
        fin = amaxbits[amaxbits < 0x7F800000]
        t = fin.max().view(np.float32) if fin.size else np.float32(0)
        s2 = (np.float32(0) if t == 0
              else max(np.float32(t / np.float32(448.0 * mx)), SECOND_LEVEL_MIN))
    bits = np.zeros(nb, dtype=np.uint32)
    y = np.zeros(flat.size, dtype=np.float64)
    for b in range(nb):
        sel = sidx == b
        xb = flat[sel]
        if amaxbits[b] >= 0x7F800000:
            bits[b] = SCALE_NAN[scale]
            y[sel] = xb
            continue
        if scale == "ue8m0":
            sh = ue8m0_shared(rule, amax[b], elem)
            bits[b] = sh + 127
            y[sel] = xb.astype(np.float64) * 2.0 ** (-sh)
        elif scale == "f32":
            s = max(np.float32(amax[b] / np.float32(mx)), F32_MIN_NORMAL)
            bits[b] = s.view(np.uint32)
            y[sel] = xb / s
        elif scale == "bf16":
            s = max(np.float32(amax[b] / np.float32(mx)), F32_MIN_NORMAL)
            sb = np.float32(s).astype(ml_dtypes.bfloat16)
            bits[b] = int(sb.view(np.uint16))
            y[sel] = xb / np.float32(sb)
        elif scale == "ue4m3" and s2 is not None and s2 == 0:
            # An all-zero tensor: every block's scale is 0 and its elements are ±0.
            bits[b] = 0
            y[sel] = xb * 0.0
        elif scale == "ue4m3":
            q = np.float32(amax[b] / np.float32(mx))
            if s2 is not None:
                q = np.float32(q / s2)
            byte = e4m3_byte(min(max(q, np.float32(2.0**-6)), np.float32(448)))
            s = np.float32(e4m3_val(byte))
            r = np.float32(np.float32(1) / s2) / s if s2 is not None else np.float32(1) / s
            bits[b] = byte
            y[sel] = xb * np.float32(r)
        else:
            raise AssertionError(scale)
    codes = ref_elements(y, elem).reshape(x.shape)
    return codes, bits.reshape(sshape), s2


def ref_swizzle(s):
    """Row-major scales (..., R, C) in the 128x4 layout: zero-padded to 128-row x 4-column
    tiles; tiles in row-major order; inside one, row r and column c at
    (r % 32) * 16 + (r // 32) * 4 + c."""
    s = np.asarray(s)
    if s.ndim == 1:
        s = s[None, :]
        lead = ()
    else:
        lead = s.shape[:-2]
    rows, cols = s.shape[-2:]
    rp, cp = -(-rows // 128) * 128, -(-cols // 4) * 4
    b = s.reshape(-1, rows, cols)
    pad = np.zeros((b.shape[0], rp, cp), dtype=s.dtype)
    pad[:, :rows, :cols] = b
    t = pad.reshape(b.shape[0], rp // 128, 4, 32, cp // 4, 4)  # (B, rb, i, j, cb, c)
    t = t.transpose(0, 1, 4, 3, 2, 5)  # (B, rb, cb, j, i, c)
    return t.reshape(lead + (rp * cp,))


def scale_words(s):
    return words(s).astype(np.uint32)


def edge_data(shape, rng, specials=True):
    """Random f32 with edge values: zero/NaN/Inf blocks, powers of two, element maxima,
    subnormal amax."""
    n = int(np.prod(shape))
    x = (rng.standard_normal(n) * np.exp2(rng.integers(-20, 20, n))).astype(np.float32)
    if specials and n >= 96:
        x[0:32] = 0.0
        x[32:64] = rng.standard_normal(32).astype(np.float32) * np.float32(1e-39)  # subnormal
        x[64:72] = [448.0, 57344.0, 7.5, 28.0, 6.0, 2.0**-10, 2.0**20, -(2.0**5)]
        x[72] = np.nextafter(np.float32(448.0), np.float32(np.inf))
        if n >= 200:
            x[130] = np.nan
            x[170] = -np.inf
    return x.reshape(shape)


def finite_for(x, scale):
    """`x` for a file quantized with `scale`: without NaN and infinities (zeros instead)
    unless the scale is ue8m0, since files keep a tensor holding them unquantized under
    the other scales (test_non_finite_tensors_are_kept)."""
    if scale == "ue8m0":
        return x
    return np.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0)


RULES = ["floor", "rceil", "ceil", "even"]
LAYOUTS = [
    # shape, block, axis
    ((8, 96), 32, -1),
    ((7, 3, 64), 16, -1),
    ((64, 5), 32, 0),
    ((4, 64, 3), 32, 1),
    ((150, 200), (128, 128), -1),
    ((2, 37, 45), (16, 32), -1),
    ((9, 33), "row", -1),
    ((9, 33), "row", 0),
    ((5, 41), "tensor", -1),
    ((96,), 32, -1),
]


@pytest.mark.parametrize("elem", list(ELEMS))
@pytest.mark.parametrize("rule", RULES)
def test_ue8m0_rules_match_the_reference(elem, rule):
    rng = np.random.default_rng(hash((elem, rule)) % 2**32)
    for shape, block, axis in LAYOUTS:
        x = edge_data(shape, rng)
        q, s = gpucvt.mx_quantize(x, elem, block=block, axis=axis, scale_rule=rule)
        rq, rs, _ = ref_quantize(x, elem, block, axis, "ue8m0", rule)
        assert s.shape == rs.shape, (shape, block, axis)
        assert s.dtype == np.dtype(ml_dtypes.float8_e8m0fnu)
        np.testing.assert_array_equal(scale_words(s), rs, err_msg=f"{shape} {block} {axis}")
        assert q.dtype == np.dtype(ELEMS[elem][0])
        np.testing.assert_array_equal(words(q), rq, err_msg=f"{shape} {block} {axis}")


@pytest.mark.parametrize("scale", ["f32", "bf16", "ue4m3"])
@pytest.mark.parametrize("elem", ["e4m3", "e5m2", "e2m1", "e2m3"])
def test_amax_scales_match_the_reference(scale, elem):
    rng = np.random.default_rng(7)
    for shape, block, axis in LAYOUTS:
        x = edge_data(shape, rng)
        q, s = gpucvt.mx_quantize(x, elem, block=block, axis=axis, scale=scale)
        rq, rs, _ = ref_quantize(x, elem, block, axis, scale)
        assert s.shape == rs.shape
        np.testing.assert_array_equal(scale_words(s), rs, err_msg=f"{shape} {block} {axis}")
        np.testing.assert_array_equal(words(q), rq, err_msg=f"{shape} {block} {axis}")
    assert s.dtype == {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "ue4m3": np.uint8}[scale]


@pytest.mark.parametrize("shape", [(4, 64), (3, 5, 32), (130, 48)])
def test_nvfp4_two_levels_match_the_reference(shape):
    rng = np.random.default_rng(3)
    x = edge_data(shape, rng)
    q, s, s2 = gpucvt.mx_quantize(x, "e2m1", block=16, scale="ue4m3", scale_2=True)
    rq, rs, rs2 = ref_quantize(x, "e2m1", 16, -1, "ue4m3", scale_2=True)
    assert isinstance(s2, np.float32) and s2 == rs2
    np.testing.assert_array_equal(words(s), rs)
    np.testing.assert_array_equal(words(q), rq)
    # The recipe is the same thing.
    q2, sr, s22 = gpucvt.mx_quantize(x, recipe="nvfp4")
    np.testing.assert_array_equal(words(q2), words(q))
    np.testing.assert_array_equal(sr, s)
    assert s22 == s2


def test_nvfp4_near_zero():
    """Issue 41 §3: an all-zero tensor (s2 = 0, scales 0, elements 0: TransformerEngine's
    rule), all-subnormal bf16 with negative zeros and an all-subnormal f32 tensor (s2 =
    2^-121, so every factor is finite), a zero block beside an infinite one; the reference's
    bytes, hand-computed codes, and the exact dequantized values (0 for zero blocks)."""
    m = np.array([0x0000, 0x8000, 0x0001, 0x8001, 0x0010, 0x8010, 0x0020, 0x8020, 0x0030,
                  0x8030, 0x0040, 0x8040, 0x0060, 0x8060, 0x007F, 0x807F], np.uint16)
    bf = m.view(ml_dtypes.bfloat16).reshape(1, 16)
    tiny = (np.arange(1, 17) * 1e-42).astype(np.float32).reshape(1, 16)
    zero_inf = np.float32([[0.0] * 16 + [-np.inf] * 16])
    cases = {
        "zeros": (np.zeros((1, 16), np.float32), [0] * 16, [0], 0.0),
        # A subnormal m x 2^-133 times the factor 2^127 is m / 64, rounded ties to even.
        "bf16": (bf, [0, 8, 0, 8, 0, 8, 1, 9, 2, 10, 2, 10, 3, 11, 4, 12], [8], 2.0**-121),
        "f32": (tiny, [0] * 16, [8], 2.0**-121),
        "zero and -inf": (zero_inf, [0] * 16 + [15] * 16, [0, 0x7F], 0.0),
    }
    for name, (x, codes, scales, s2) in cases.items():
        q, s, t = gpucvt.mx_quantize(x, recipe="nvfp4")
        x32 = np.asarray(x, dtype=np.float32)
        rq, rs, rs2 = ref_quantize(x32, "e2m1", 16, -1, "ue4m3", scale_2=True)
        assert t == rs2 == np.float32(s2), name
        np.testing.assert_array_equal(words(s).reshape(-1), rs.reshape(-1), err_msg=name)
        np.testing.assert_array_equal(words(q).reshape(-1), rq.reshape(-1), err_msg=name)
        assert words(q).reshape(-1).tolist() == codes, name
        assert words(s).reshape(-1).tolist() == scales, name
        back = gpucvt.mx_dequantize(q, s, recipe="nvfp4", scale_2=t, dtype=np.float64)
        want = ref_dequantize(q, s, "e2m1", 16, -1, "ue4m3", t).astype(np.float64)
        np.testing.assert_array_equal(back.astype(np.float32), want, err_msg=name)
        finite = np.repeat(words(s).reshape(-1) != 0x7F, 16)
        assert np.isfinite(back.reshape(-1)[finite]).all(), name
        assert np.isnan(back.reshape(-1)[~finite]).all(), name
        assert (back.reshape(-1)[finite & (x32.reshape(-1) == 0)] == 0).all(), name
    # One level: the zeros get the smallest normal scale 0x08, elements 0.
    q, s = gpucvt.mx_quantize(np.zeros((1, 16), np.float32), "e2m1", block=16, scale="ue4m3")
    assert words(s).tolist() == [[8]] and not words(q).any()


def test_inputs_widen_exactly_from_bf16_and_f16():
    rng = np.random.default_rng(5)
    x = edge_data((6, 64), rng, specials=False)
    for dt in (ml_dtypes.bfloat16, np.float16):
        xs = x.astype(dt)
        q, s = gpucvt.mx_quantize(xs, "e4m3", scale_rule="even")
        rq, rs, _ = ref_quantize(xs.astype(np.float32), "e4m3", 32, -1, "ue8m0", "even")
        np.testing.assert_array_equal(words(q), rq)
        np.testing.assert_array_equal(scale_words(s), rs)
    # A list of float32 scalars, and a non-contiguous view.
    q, s = gpucvt.mx_quantize(x[:, ::2], "e2m1")
    rq, rs, _ = ref_quantize(np.ascontiguousarray(x[:, ::2]), "e2m1")
    np.testing.assert_array_equal(words(q), rq)


def ref_dequantize(q, s, elem, block, axis, scale, s2=None):
    dt = ELEMS[elem][0]
    v = np.asarray(q).view(dt).astype(np.float64).reshape(-1)
    sidx, _ = scale_index(q.shape, block, axis)
    sw = scale_words(s).reshape(-1)
    if scale == "ue8m0":
        sv = np.where(sw == 0xFF, np.nan, np.exp2(sw.astype(np.float64) - 127))
    elif scale == "ue4m3":
        sv = np.array([np.nan if b & 0x7F == 0x7F else e4m3_val(b) for b in sw])
    elif scale == "f32":
        sv = sw.astype(np.uint32).view(np.float32).astype(np.float64)
    else:
        sv = (sw.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    out = v * sv[sidx] * (1.0 if s2 is None else float(s2))
    return out.reshape(q.shape).astype(np.float32)


@pytest.mark.parametrize("scale", ["ue8m0", "f32", "bf16", "ue4m3"])
def test_dequantize_is_the_exact_product_rounded_once(scale):
    rng = np.random.default_rng(11)
    for shape, block, axis in LAYOUTS:
        for elem in ("e4m3", "e2m1"):
            x = edge_data(shape, rng)
            q, s = gpucvt.mx_quantize(x, elem, block=block, axis=axis, scale=scale)
            back = gpucvt.mx_dequantize(q, s, elem, block=block, axis=axis, scale=scale)
            assert back.dtype == np.float32 and back.shape == x.shape
            want = ref_dequantize(q, s, elem, block, axis, scale)
            np.testing.assert_array_equal(words(back), words(want))
            b64 = gpucvt.mx_dequantize(q, s, elem, block=block, axis=axis, scale=scale,
                                       dtype=np.float64)
            assert b64.dtype == np.float64
            np.testing.assert_array_equal(b64.astype(np.float32), back)
    x = edge_data((4, 64), rng, specials=False)
    q, s, s2 = gpucvt.mx_quantize(x, recipe="nvfp4")
    back = gpucvt.mx_dequantize(q, s, recipe="nvfp4", scale_2=s2)
    np.testing.assert_array_equal(back, ref_dequantize(q, s, "e2m1", 16, -1, "ue4m3", s2))


# --- Packing and the swizzled layout. ---


def test_packed_fp4_and_fp6_are_the_files_layout():
    rng = np.random.default_rng(2)
    x = edge_data((4, 64), rng)
    for elem in ("e2m1", "e2m3", "e3m2"):
        q, s = gpucvt.mx_quantize(x, elem)
        p, ps = gpucvt.mx_quantize(x, elem, packed=True)
        np.testing.assert_array_equal(words(ps), words(s))
        c = words(q).astype(np.uint32).reshape(4, -1)
        if elem == "e2m1":
            want = (c[:, 0::2] | (c[:, 1::2] << 4)).astype(np.uint8)
        else:
            w = c[:, 0::4] | c[:, 1::4] << 6 | c[:, 2::4] << 12 | c[:, 3::4] << 18
            want = np.stack([w & 0xFF, (w >> 8) & 0xFF, w >> 16], axis=-1).reshape(4, -1)
        assert p.dtype == np.uint8
        np.testing.assert_array_equal(p, want.astype(np.uint8))
        back = gpucvt.mx_dequantize(p, s, elem, packed=True)
        np.testing.assert_array_equal(back, gpucvt.mx_dequantize(q, s, elem))
    with pytest.raises(ValueError, match="not a multiple of 4"):
        gpucvt.mx_quantize(np.ones((2, 34), np.float32), "e2m3", block=2, packed=True)


@pytest.mark.parametrize("shape,block", [((130, 64), 32), ((3, 40, 96), 16), ((1, 32), 32),
                                          ((257, 160), 32)])
def test_swizzled_scales_unswizzle_to_the_rows(shape, block):
    rng = np.random.default_rng(4)
    x = edge_data(shape, rng)
    for scale in ("ue8m0", "ue4m3"):
        _, s = gpucvt.mx_quantize(x, "e2m1", block=block, scale=scale)
        _, z = gpucvt.mx_quantize(x, "e2m1", block=block, scale=scale, layout="swizzled")
        rows, cols = s.shape[-2], s.shape[-1]
        rp, cp = -(-rows // 128) * 128, -(-cols // 4) * 4
        assert z.shape == s.shape[:-2] + (rp * cp,)
        # Undo it by hand: (B, rb, cb, r%32, (r%128)//32, c%4) back to (B, R', C').
        t = words(z).reshape(-1, rp // 128, cp // 4, 32, 4, 4).transpose(0, 1, 4, 3, 2, 5)
        full = t.reshape(-1, rp, cp)
        np.testing.assert_array_equal(full[:, :rows, :cols], words(s).reshape(-1, rows, cols))
        assert not full[:, rows:, :].any() and not full[:, :, cols:].any()
        np.testing.assert_array_equal(words(z), ref_swizzle(words(s)))
        back = gpucvt.mx_dequantize(*gpucvt.mx_quantize(x, "e2m1", block=block, scale=scale,
                                                        layout="swizzled"),
                                    "e2m1", block=block, scale=scale, layout="swizzled")
        np.testing.assert_array_equal(
            back, gpucvt.mx_dequantize(*gpucvt.mx_quantize(x, "e2m1", block=block, scale=scale),
                                       "e2m1", block=block, scale=scale))


# --- torchao's output (crates/gpucvt-tensor/tests/data/torchao-vectors.json). ---

VECTORS = REPO / "crates/gpucvt-tensor/tests/data/torchao-vectors.json"


def load_cases():
    with open(VECTORS) as f:
        return json.load(f)["cases"]


def parse(v):
    return json.loads(v) if isinstance(v, str) else v


def torchao_call(case):
    """The mx_quantize keywords for a case gpucvt has, and whether its scale bits follow the
    element (+1 for torchao's quirks to skip); None for the cases it has not."""
    r = case["recipe"]
    kind = r["kind"]
    if kind == "mx":
        return dict(elem=r["elem"], block=r["block"], scale_rule=r["rule"])
    if kind == "nvfp4":
        return dict(elem="e2m1", block=16, scale="ue4m3", scale_2=r["two_level"])
    if "inference" not in case.get("recipe", {}).get("stack", ""):
        return None  # the training paths store the multiplier, not the dequant scale
    if kind == "float8_tensorwise":
        return dict(elem="e4m3", block="tensor", scale="f32")
    if kind == "float8_rowwise":
        return dict(elem="e4m3", block="row", scale="f32")
    if kind == "float8_block":
        return dict(elem="e4m3", block=tuple(r["block"]), scale="f32")
    return None


def is_nan_code(elem, c):
    return elem in ("e4m3", "e5m2") and (c & 0x7F) == 0x7F


def test_torchao_vectors():
    compared = {"mx": 0, "nvfp4": 0, "float8": 0}
    for case in load_cases():
        kw = torchao_call(case)
        if kw is None:
            continue
        name = case["name"]
        shape = tuple(case["shape"])
        x = np.array(parse(case["input"]), dtype=np.uint32).view(np.float32).reshape(shape)
        tq = np.array(parse(case["q"]), dtype=np.uint32).reshape(-1)
        ts = np.array(parse(case["scales"]), dtype=np.uint64).reshape(-1)
        elem = kw["elem"]
        kind = case["recipe"]["kind"]
        if kind == "nvfp4" and kw["scale_2"]:
            t2 = case["scale_2"]
            if t2 in (0, 0xFFFFFFFF) or (t2 & 0x7F800000) == 0x7F800000:
                # Surprise 10: torchao's per-tensor scale of an all-zero tensor is 0, and then
                # every block is NaN; gpucvt's is 0 too, with scales 0 and zero elements (as
                # TransformerEngine). Of a tensor holding NaN torchao's is NaN; gpucvt's is
                # over the finite elements. test_nvfp4_near_zero checks gpucvt's.
                continue
        out = gpucvt.mx_quantize(x, **kw)
        q, s = out[0], out[1]
        if len(out) == 3:
            assert int(np.float32(out[2]).view(np.uint32)) == case["scale_2"], name
        qw = words(q).astype(np.uint32).reshape(-1)
        sw = scale_words(s).reshape(-1)
        sidx, _ = scale_index(shape, kw["block"], -1)
        absbits = x.reshape(-1).view(np.uint32) & 0x7FFFFFFF
        amax = np.zeros(sw.size, dtype=np.uint32)
        np.maximum.at(amax, sidx, absbits)
        skip_elems = np.zeros(sw.size, dtype=bool)
        for b in range(sw.size):
            a = amax[b]
            if a > 0x7F800000:
                # A NaN block: both give the NaN scale (NVFP4: 0x7F or torch's 0xFF,
                # Surprise 6); the elements differ (Surprise 4, the float8 NaN codes).
                assert (sw[b] == SCALE_NAN[kw.get("scale", "ue8m0")]), (name, b)
                skip_elems[b] = True
                continue
            if a == 0x7F800000:
                # An infinite block: torchao gives it a finite scale (Surprise 5, and NVFP4
                # 448, and float8 +Inf); gpucvt the NaN scale and the elements unscaled.
                assert sw[b] == SCALE_NAN[kw.get("scale", "ue8m0")], (name, b)
                skip_elems[b] = True
                continue
            if kind == "mx" and ts[b] == 0:
                # Byte 0: torchao divides by 2^-126 (FLOOR/CEIL/EVEN) or multiplies by 1
                # (RCEIL) where the byte means 2^-127 (Surprise 3).
                assert sw[b] == 0, (name, b)
                skip_elems[b] = True
                continue
            if kind == "mx" and kw["scale_rule"] == "rceil" and sw[b] == ts[b] + 1:
                # Surprise 1: torchao's ceil of an f32 log2 misses quotients a few ulps
                # above a power of two.
                q = float(np.float32(a.view(np.float32)) / np.float32(ELEMS[elem][1]))
                m, _ = math.frexp(q)
                assert m - 0.5 < 2.0**-16, (name, b)
                skip_elems[b] = True
                continue
            if kind.startswith("float8") and ts[b] < 0x00800000:
                # Surprise 10 and the f32 minimum: torchao's scale of a zero (or tiny)
                # block is 0 (or subnormal); gpucvt's is never below 2^-126.
                assert sw[b] == 0x00800000, (name, b)
                skip_elems[b] = True
                continue
            assert sw[b] == ts[b], (name, b, hex(int(sw[b])), hex(int(ts[b])))
        keep = ~skip_elems[sidx] & ~np.isnan(x.reshape(-1))
        nan_both = np.array([is_nan_code(elem, int(c)) for c in tq]) & np.array(
            [is_nan_code(elem, int(c)) for c in qw])
        keep &= ~nan_both
        bad = np.nonzero(keep & (qw != tq))[0]
        assert bad.size == 0, (name, bad[:5], qw[bad[:5]], tq[bad[:5]])
        if case["swizzled"] is not None:
            tz = np.array(parse(case["swizzled"]), dtype=np.uint32).reshape(-1)
            # torchao's layout is this reshape of its own row scales...
            np.testing.assert_array_equal(
                ref_swizzle(ts.astype(np.uint32).reshape(s.shape)).reshape(-1), tz)
            # ...and gpucvt's swizzled scales are the same bytes.
            _, z = gpucvt.mx_quantize(x, **kw, layout="swizzled")[:2]
            np.testing.assert_array_equal(scale_words(z).reshape(-1), tz)
        compared["float8" if kind.startswith("float8") else kind] += 1
    assert compared["mx"] == 62 and compared["nvfp4"] >= 7 and compared["float8"] == 7, compared


# --- Files: convert_file(recipe=...) and dequantize_file against the functions. ---


def raw_tensors(path):
    """Every tensor's (dtype, shape, bytes) of a .safetensors file, read by the safetensors
    package's own parser (its NumPy loader has no FP8/FP4 dtypes, `deserialize` gives the
    bytes)."""
    return {k: (v["dtype"], v["shape"], bytes(v["data"]))
            for k, v in safetensors.deserialize(path.read_bytes())}


# recipe: (elem, block, scale, scale_2, safetensors dtype of the scales)
RECIPES = {
    "mxfp8": ("e4m3", 32, "ue8m0", False, "F8_E8M0"),
    "mxfp6": ("e2m3", 32, "ue8m0", False, "F8_E8M0"),
    "mxfp4": ("e2m1", 32, "ue8m0", False, "F8_E8M0"),
    "nvfp4": ("e2m1", 16, "ue4m3", True, "F8_E4M3"),
    "fp8-block128": ("e4m3", (128, 128), "f32", False, "F32"),
    "fp8-row": ("e4m3", "row", "f32", False, "F32"),
    "fp8-tensor": ("e4m3", "tensor", "f32", False, "F32"),
}


def ref_file_bytes(x, recipe):
    """The reference's element bytes as the files pack them (FP4 two per byte, low nibble
    first; FP6 four per three bytes), its scale bytes, and the second level's."""
    elem, block, scale, second, _ = RECIPES[recipe]
    codes, bits, s2 = ref_quantize(x, elem, block=block, scale=scale, rule="floor",
                                   scale_2=second)
    c = np.asarray(codes, dtype=np.uint32).reshape(-1)
    if elem == "e2m1":
        data = (c[0::2] | (c[1::2] << 4)).astype(np.uint8)
    elif elem in ("e2m3", "e3m2"):
        w = c[0::4] | c[1::4] << 6 | c[2::4] << 12 | c[3::4] << 18
        data = np.stack([w & 0xFF, (w >> 8) & 0xFF, w >> 16], axis=-1).astype(np.uint8)
    else:
        data = c.astype(np.uint8)
    word = {"ue8m0": "<u1", "ue4m3": "<u1", "f32": "<u4", "bf16": "<u2"}[scale]
    sbytes = np.asarray(bits).astype(word).tobytes()
    return data.tobytes(), sbytes, None if s2 is None else np.float32(s2).tobytes()


def test_convert_file_recipes_and_dequantize_file(tmp_path):
    rng = np.random.default_rng(9)
    tensors = {
        # With a NaN (element [1, 34]) and a -inf.
        "a.weight": edge_data((64, 96), rng),
        "b.weight": np.nan_to_num(edge_data((3, 32, 64), rng), nan=0.0, posinf=0.0,
                                  neginf=0.0).astype(ml_dtypes.bfloat16),
        "norm": rng.standard_normal(64).astype(np.float32),
        "ids": np.arange(10, dtype=np.int64),
    }
    src = tmp_path / "m.safetensors"
    safetensors_numpy.save_file(tensors, str(src))
    for recipe in ("mxfp8", "mxfp4", "mxfp6", "nvfp4", "fp8-block128", "fp8-row",
                   "fp8-tensor"):
        dst = tmp_path / f"m-{recipe}.safetensors"
        summary = gpucvt.convert_file(src, dst, recipe=recipe, tensor="*.weight")
        assert summary.conversion.startswith(f"recipe {recipe}: to=\"")
        out = raw_tensors(dst)
        for name in ("norm", "ids"):
            assert out[name][2] == tensors[name].tobytes()
        converted = ["a.weight", "b.weight"]
        if RECIPES[recipe][2] == "ue8m0":
            # MX: the NaN scale for the blocks holding the NaN and the -inf, named in a note.
            assert summary.kept == []
            assert summary.notes == [
                "a.weight: 2 of its 192 blocks hold a NaN or an infinity and got the NaN "
                "scale, so they read back as NaN (64 of its 6144 elements are NaN)"]
        else:
            # Any other scale would be NaN: a.weight is kept, unchanged, saying why.
            ((name, reason),) = summary.kept
            assert name == "a.weight" and reason.startswith("element [1, 34] is NaN: the ")
            assert out["a.weight"][2] == tensors["a.weight"].tobytes()
            assert "a.weight_scale" not in out and summary.notes == []
            converted = ["b.weight"]
        for name in converted:
            res = gpucvt.mx_quantize(tensors[name], recipe=recipe, packed=True)
            assert out[name][2] == res[0].tobytes(), (recipe, name)
            assert out[name + "_scale"][2] == res[1].tobytes(), (recipe, name)
            if len(res) == 3:
                assert out[name + "_scale_2"][2] == res[2].tobytes()
            # The same bytes by the independent reference.
            data, sbytes, s2 = ref_file_bytes(np.asarray(tensors[name], np.float32), recipe)
            assert out[name][2] == data, (recipe, name)
            assert out[name + "_scale"][0] == RECIPES[recipe][4]
            assert out[name + "_scale"][2] == sbytes, (recipe, name)
            if s2 is not None:
                assert out[name + "_scale_2"][:2] == ("F32", [])
                assert out[name + "_scale_2"][2] == s2
        back = tmp_path / f"m-{recipe}-back.safetensors"
        d = gpucvt.dequantize_file(dst, back)
        assert d.conversion == "dequantize to f32"
        deq = safetensors_numpy.load_file(str(back))
        assert sorted(deq) == sorted(tensors)
        for name in converted:
            res = gpucvt.mx_quantize(tensors[name], recipe=recipe)
            kw = {"scale_2": res[2]} if len(res) == 3 else {}
            want = gpucvt.mx_dequantize(res[0], res[1], recipe=recipe, **kw)
            np.testing.assert_array_equal(words(deq[name]), words(want), err_msg=recipe)
        np.testing.assert_array_equal(deq["ids"], tensors["ids"])


@pytest.mark.parametrize("recipe", ["nvfp4", "fp8-row", "mxfp4"])
def test_npy_sidecars_read_back_with_numpy(tmp_path, recipe):
    """A .npy input: the output and its `_scale` / `_scale_2` sidecars, read by numpy."""
    rng = np.random.default_rng(12)
    x = finite_for(edge_data((6, 64), rng), RECIPES[recipe][2])
    src, dst = tmp_path / "w.npy", tmp_path / "q.npy"
    np.save(src, x)
    gpucvt.convert_file(src, dst, recipe=recipe)
    elem, block, scale, second, _ = RECIPES[recipe]
    codes, bits, s2 = ref_quantize(x, elem, block=block, scale=scale, scale_2=second)
    q = np.load(dst)
    assert q.dtype == np.uint8 and q.shape == x.shape
    np.testing.assert_array_equal(q, np.asarray(codes, dtype=np.uint8))
    sc = np.load(tmp_path / "q_scale.npy")
    want = np.asarray(bits).astype({"ue8m0": "|u1", "ue4m3": "|u1", "f32": "<u4"}[scale])
    assert sc.shape == want.shape
    assert sc.tobytes() == want.tobytes()
    side2 = tmp_path / "q_scale_2.npy"
    if second:
        t = np.load(side2)
        assert t.dtype == np.float32 and t.shape == ()
        assert t.tobytes() == np.float32(s2).tobytes()
    else:
        assert not side2.exists()


def test_convert_file_block_options(tmp_path):
    rng = np.random.default_rng(10)
    x = finite_for(edge_data((40, 64), rng), "bf16")
    src = tmp_path / "x.safetensors"
    safetensors_numpy.save_file({"w": x}, str(src))
    dst = tmp_path / "y.safetensors"
    gpucvt.convert_file(src, dst, to="e4m3", satfinite=True, block=(16, 32), scale="bf16", all=True)
    q, s = gpucvt.mx_quantize(x, "e4m3", block="16x32", scale="bf16")
    out = raw_tensors(dst)
    assert out["w"][2] == q.tobytes() and out["w_scale"][2] == s.tobytes()
    gpucvt.convert_file(src, dst, to="e2m1", satfinite=True, block=16, scale_rule="rp",
                        scale_layout="swizzled", all=True)
    q, s = gpucvt.mx_quantize(x, "e2m1", block=16, scale_rule="rceil", layout="swizzled",
                              packed=True)
    out = raw_tensors(dst)
    assert out["w"][2] == q.tobytes() and out["w_scale"][2] == s.tobytes()
    gpucvt.convert_file(src, dst, to="e4m3", satfinite=True, block=8, axis=0, scale_rule="even", all=True)
    q, s = gpucvt.mx_quantize(x, "e4m3", block=8, axis=0, scale_rule="even")
    out = raw_tensors(dst)
    assert out["w_scale"][2] == s.tobytes() and out["w"][2] == q.tobytes()
    d = gpucvt.dequantize_file(dst, tmp_path / "z.safetensors", to="f64")
    back = safetensors_numpy.load_file(str(tmp_path / "z.safetensors"))["w"]
    np.testing.assert_array_equal(
        back, gpucvt.mx_dequantize(q, s, "e4m3", block=8, axis=0, dtype=np.float64))
    assert d.conversion == "dequantize to f64"


# --- Bad input. ---


@pytest.mark.parametrize(
    "args,kw,exc,match",
    [
        ((np.ones((2, 32)),), {"elem": "e4m3"}, ValueError, "x is float64"),
        ((np.ones((2, 32), np.int32),), {"elem": "e4m3"}, TypeError, "float32, bfloat16"),
        ((np.ones((0, 32), np.float32),), {"elem": "e4m3"}, ValueError, "no elements"),
        ((np.float32(1.0),), {"elem": "e4m3"}, ValueError, "scalar cannot be block-scaled"),
        ((np.ones((2, 33), np.float32),), {"elem": "e4m3"}, ValueError,
         "not a multiple of the block size 32"),
        ((np.ones((2, 32), np.float32),), {"elem": "e4m3", "axis": 2}, ValueError,
         "axis 2 is out of range"),
        ((np.ones(32, np.float32),), {"elem": "e4m3", "block": (4, 4)}, ValueError,
         "need at least two axes"),
        ((np.ones((2, 32), np.float32),), {"elem": "e9m9"}, ValueError, "unknown format"),
        ((np.ones((2, 32), np.float32),), {"elem": "e4m3", "scale": "ue5m3"}, ValueError,
         "unknown scale format"),
        ((np.ones((2, 32), np.float32),), {"elem": "e4m3", "scale_rule": "max"}, ValueError,
         "unknown scale rule"),
        ((np.ones((2, 32), np.float32),), {"elem": "e4m3", "scale": "f32", "scale_rule": "ceil"},
         ValueError, "scale_rule chooses ue8m0"),
        ((np.ones((2, 32), np.float32),), {"elem": "e4m3", "layout": "cols"}, ValueError,
         "unknown scale layout"),
        ((np.ones((2, 32), np.float32),), {"elem": "e4m3", "block": "row",
                                           "layout": "swizzled"}, ValueError,
         "swizzled scale layout is for blocks of N"),
        ((np.ones((2, 32), np.float32),), {"elem": "e4m3", "scale_2": True}, ValueError,
         "second-level"),
        ((np.ones((2, 32), np.float32),), {"recipe": "mxfp9"}, ValueError, "unknown recipe"),
        ((np.ones((2, 32), np.float32),), {"elem": "e4m3", "recipe": "nvfp4"}, ValueError,
         "quantizes to e2m1"),
        ((np.ones((2, 32), np.float32),), {}, ValueError, "say what to quantize to"),
        ((np.ones((2, 32), np.float32),), {"elem": "e4m3", "block": 0}, ValueError,
         "expected N, RxC"),
        ((np.ones((2, 32), np.float32),), {"elem": "e4m3", "block": 1.5}, TypeError, "block"),
        ((np.ones((2, 32), np.float32),), {"elem": "s8"}, ValueError,
         "float format of at most 16 bits"),
        ((np.ones((2, 32), np.float32),), {"elem": "e4m3", "mode": "rq"}, ValueError,
         "invalid mode"),
        ((np.ones((2, 32), np.float32),), {"elem": "e4m3", "threads": 0}, ValueError,
         "threads must be at least 1"),
    ],
)
def test_bad_quantize_input(args, kw, exc, match):
    with pytest.raises(exc, match=match):
        gpucvt.mx_quantize(*args, **kw)


def test_bad_dequantize_input():
    x = np.ones((2, 32), np.float32)
    q, s = gpucvt.mx_quantize(x, "e4m3")
    with pytest.raises(ValueError, match=r"2 scales were given where shape \[2, 2\] needs 4"):
        gpucvt.mx_dequantize(q, s, "e4m3", block=16)
    with pytest.raises(ValueError, match="scales were given"):
        gpucvt.mx_dequantize(q, np.zeros(3, np.uint8), "e4m3")
    with pytest.raises(TypeError, match="1-byte words"):
        gpucvt.mx_dequantize(q, s.astype(np.float32), "e4m3")
    with pytest.raises(TypeError, match="one e4m3 code per 1-byte"):
        gpucvt.mx_dequantize(q.astype(np.float32), s, "e4m3")
    with pytest.raises(ValueError, match="element 3 of q is 0x10, not a e2m1 code"):
        codes = np.zeros((2, 32), np.uint8)
        codes[0, 3] = 0x10
        gpucvt.mx_dequantize(codes, s, "e2m1")
    q4, s4, s2 = gpucvt.mx_quantize(x, recipe="nvfp4")
    with pytest.raises(ValueError, match="pass its scale_2"):
        gpucvt.mx_dequantize(q4, s4, recipe="nvfp4")
    with pytest.raises(ValueError, match="a second-level .* scale goes with ue4m3"):
        gpucvt.mx_dequantize(q, s, "e4m3", scale_2=1.0)
    with pytest.raises(ValueError, match="float32 value"):
        gpucvt.mx_dequantize(q4, s4, recipe="nvfp4", scale_2=0.1)
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        gpucvt.mx_dequantize(q, s, "e4m3", dtype=np.float16)
    with pytest.raises(ValueError, match="no elements"):
        gpucvt.mx_dequantize(q[:0], s[:0], "e4m3")


def test_bad_file_options(tmp_path):
    src = tmp_path / "x.safetensors"
    safetensors_numpy.save_file({"w": np.ones((2, 32), np.float32)}, str(src))
    with pytest.raises(ValueError, match="unknown recipe"):
        gpucvt.convert_file(src, tmp_path / "y.safetensors", recipe="mxfp9")
    with pytest.raises(ValueError, match="axis needs block or recipe"):
        gpucvt.convert_file(src, tmp_path / "y.safetensors", to="e4m3", axis=0)
    with pytest.raises(ValueError, match="converts to e2m1, not e4m3"):
        gpucvt.convert_file(src, tmp_path / "y.safetensors", to="e4m3", recipe="nvfp4")
    with pytest.raises(ValueError, match="dequantize to f32, bf16, f16 or f64"):
        gpucvt.dequantize_file(src, tmp_path / "y.safetensors", to="e4m3")
    with pytest.raises(ValueError, match="give scale_rule or its old name"), pytest.warns(
        DeprecationWarning, match="scale_method= is the old name of scale_rule="
    ):
        gpucvt.convert_file(src, tmp_path / "y.safetensors", to="e4m3", block=32,
                            scale_rule="rp", scale_method="ocp")


def test_old_keyword_names_still_work_with_a_warning(tmp_path):
    x = np.linspace(-20, 500, 64, dtype=np.float32).reshape(2, 32)
    new = gpucvt.mx_quantize(x, "e4m3", scale_rule="rceil")
    # rceil's scale of the second block (amax 500) is 2^1, floor's 2^0: the keyword is used.
    assert new[1].view(np.uint8)[1, 0] == gpucvt.mx_quantize(x, "e4m3")[1].view(np.uint8)[1, 0] + 1
    with pytest.warns(DeprecationWarning, match="method= is the old name of scale_rule="):
        old = gpucvt.mx_quantize(x, "e4m3", method="rceil")
    assert all((a.view(np.uint8) == b.view(np.uint8)).all() for a, b in zip(new, old))
    with pytest.warns(DeprecationWarning):
        back = gpucvt.mx_dequantize(*old, "e4m3", method="rceil")
    assert (back == gpucvt.mx_dequantize(*new, "e4m3", scale_rule="rceil")).all()
    src = tmp_path / "x.npy"
    np.save(src, x)
    gpucvt.convert_file(src, tmp_path / "a.npy", to="e4m3", block=32, scale_rule="rp")
    with pytest.warns(DeprecationWarning):
        gpucvt.convert_file(src, tmp_path / "b.npy", to="e4m3", block=32, scale_method="rp")
    assert np.load(tmp_path / "a_scale.npy").tobytes() == np.load(tmp_path / "b_scale.npy").tobytes()


# --- .npy and raw files dequantized with their sidecars. ---


@pytest.mark.parametrize("recipe", list(RECIPES))
def test_npy_dequantize_file_reads_back_with_numpy(tmp_path, recipe):
    """convert_file(recipe=...) on a .npy file, then dequantize_file on its output and
    sidecars: numpy reads the result, and it is the reference's q × s (× s2) rounded once
    to float32, whether the recipe or only the element format (the blocking then read off
    the scale array) is given."""
    rng = np.random.default_rng(21)
    x = finite_for(edge_data((6, 64), rng), RECIPES[recipe][2])
    src, q = tmp_path / "w.npy", tmp_path / "q.npy"
    np.save(src, x)
    gpucvt.convert_file(src, q, recipe=recipe)
    elem, block, scale, second, _ = RECIPES[recipe]
    codes, bits, s2 = ref_quantize(x, elem, block=block, scale=scale, scale_2=second)
    want = ref_dequantize(np.asarray(codes, dtype=np.uint8).reshape(x.shape),
                          np.asarray(bits), elem, block, -1, scale, s2)
    for k, kw in enumerate([{"recipe": recipe}, {"from_": elem}]):
        back = tmp_path / f"back{k}.npy"
        d = gpucvt.dequantize_file(q, back, **kw)
        assert d.kind == "npy" and d.conversion == "dequantize to f32"
        assert d.tensors[0].scale == str(tmp_path / "q_scale.npy")
        got = np.load(back)
        assert got.dtype == np.float32 and got.shape == x.shape
        np.testing.assert_array_equal(got, want, err_msg=f"{recipe} {kw}")
    # f64 holds every product exactly.
    back = tmp_path / "back64.npy"
    gpucvt.dequantize_file(q, back, recipe=recipe, to="f64")
    exact = np.load(back)
    assert exact.dtype == np.float64
    np.testing.assert_array_equal(exact.astype(np.float32), want)


def test_raw_dequantize_file_and_errors(tmp_path):
    rng = np.random.default_rng(22)
    x = edge_data((256,), rng, specials=False)
    src, q = tmp_path / "w.bin", tmp_path / "q.bin"
    x.tofile(src)
    gpucvt.convert_file(src, q, from_="f32", recipe="nvfp4")
    codes, bits, s2 = ref_quantize(x, "e2m1", block=16, scale="ue4m3", scale_2=True)
    want = ref_dequantize(np.asarray(codes, dtype=np.uint8).reshape(x.shape),
                          np.asarray(bits), "e2m1", 16, -1, "ue4m3", s2)
    back = tmp_path / "back.bin"
    gpucvt.dequantize_file(q, back, recipe="nvfp4")
    np.testing.assert_array_equal(np.fromfile(back, dtype=np.float32), want)
    gpucvt.dequantize_file(q, back, from_="float4_e2m1fn", block=16, scale="ue4m3",
                           scale_2=True)
    np.testing.assert_array_equal(np.fromfile(back, dtype=np.float32), want)
    # The metadata written beside it says everything; without it (another program's file)
    # raw data needs the format and the blocking.
    gpucvt.dequantize_file(q, back)
    np.testing.assert_array_equal(np.fromfile(back, dtype=np.float32), want)
    (tmp_path / "q.bin.gpucvt.json").unlink()
    with pytest.raises(ValueError, match="records neither its shape nor how it was blocked"):
        gpucvt.dequantize_file(q, tmp_path / "e.bin", from_="e2m1")
    with pytest.raises(ValueError, match="give the format of its elements with from_"):
        gpucvt.dequantize_file(q, tmp_path / "e.bin", block=16, scale="ue4m3", scale_2=True)
    (tmp_path / "q_scale.bin").unlink()
    with pytest.raises(ValueError, match="its block scales .*q_scale.bin are missing"):
        gpucvt.dequantize_file(q, tmp_path / "e.bin", recipe="nvfp4")
    assert not (tmp_path / "e.bin").exists()


# --- mx_quantize(mode="rs"): the seed's stream, or given random words. ---

G = 0x9E3779B97F4A7C15
M64 = (1 << 64) - 1


def splitmix64(x):
    z = (x + G) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def stream_words(seed, n):
    """The README's random words of a single-tensor file: word i is the low 32 bits of
    splitmix64(s + i·G), s = splitmix64(seed)."""
    s = splitmix64(seed)
    return np.array([splitmix64((s + i * G) & M64) & 0xFFFFFFFF for i in range(n)],
                    dtype=np.uint32)


@pytest.mark.parametrize("recipe", list(RECIPES))
def test_mx_quantize_rs_words(tmp_path, recipe):
    rng = np.random.default_rng(23)
    x = finite_for(edge_data((6, 64), rng), RECIPES[recipe][2])
    n = x.size
    rz = gpucvt.mx_quantize(x, recipe=recipe, mode="rz")
    # All-zero words round toward zero.
    zero = gpucvt.mx_quantize(x, recipe=recipe, mode="rs", rbits=np.zeros(n, np.uint32))
    for a, b in zip(rz, zero):
        np.testing.assert_array_equal(words(a), words(b), err_msg=recipe)
    # Words with every used bit set round away from zero somewhere.
    ones = gpucvt.mx_quantize(x, recipe=recipe, mode="rs",
                              rbits=np.full(x.shape, 0xFF, np.uint8))
    assert (words(ones[0]) != words(rz[0])).any()
    # The seed's stream, given as words, is the seed path; and the seed path is what
    # convert_file(mode="rs", seed=...) writes for a .npy file.
    seeded = gpucvt.mx_quantize(x, recipe=recipe, mode="rs", seed=77)
    given = gpucvt.mx_quantize(x, recipe=recipe, mode="rs", rbits=stream_words(77, n))
    for a, b in zip(seeded, given):
        np.testing.assert_array_equal(words(a), words(b), err_msg=recipe)
    assert (words(seeded[0]) != words(rz[0])).any()
    src, q = tmp_path / "w.npy", tmp_path / "q.npy"
    np.save(src, x)
    gpucvt.convert_file(src, q, recipe=recipe, mode="rs", seed=77)
    np.testing.assert_array_equal(np.load(q), words(seeded[0]).astype(np.uint8))
    assert np.load(tmp_path / "q_scale.npy").tobytes() == seeded[1].tobytes()


def test_mx_quantize_rbits_width_and_checks():
    x = (np.arange(1, 65, dtype=np.float32) * np.float32(1.03)).reshape(2, 32)
    w = np.full(x.size, 0xFFFFFF00, np.uint32)
    # Only the low rbits_width bits are used: 0x00 at width 8, all ones at width 32.
    np.testing.assert_array_equal(
        words(gpucvt.mx_quantize(x, "e4m3", mode="rs", rbits=w)[0]),
        words(gpucvt.mx_quantize(x, "e4m3", mode="rz")[0]))
    wide = gpucvt.mx_quantize(x, "e4m3", mode="rs", rbits=w, rbits_width=32)[0]
    assert (words(wide) != words(gpucvt.mx_quantize(x, "e4m3", mode="rz")[0])).any()
    with pytest.raises(ValueError, match='rbits is only valid with mode="rs"'):
        gpucvt.mx_quantize(x, "e4m3", rbits=w)
    with pytest.raises(ValueError, match="one word per element: 64 elements, 63 words"):
        gpucvt.mx_quantize(x, "e4m3", mode="rs", rbits=w[:63])
    with pytest.raises(TypeError, match="rbits must be an array of unsigned integers"):
        gpucvt.mx_quantize(x, "e4m3", mode="rs", rbits=w.astype(np.float32))
    with pytest.raises(ValueError, match="rbits must not be negative"):
        gpucvt.mx_quantize(x, "e4m3", mode="rs", rbits=-np.ones(64, np.int32))
    with pytest.raises(ValueError, match="rbits_width must be 1 to 32"):
        gpucvt.mx_quantize(x, "e4m3", mode="rs", rbits=w, rbits_width=33)
    with pytest.raises(ValueError, match='rbits_width is only valid with mode="rs"'):
        gpucvt.mx_quantize(x, "e4m3", rbits_width=8)


@pytest.mark.parametrize("recipe", ["nvfp4", "fp8-block128"])
def test_tensors_of_many_chunks_read_back_with_safetensors(tmp_path, recipe):
    """Tensors larger than the quantizer's chunks (about 1 Mi elements of whole tiles; the
    tensor read twice for a second level or one scale per tensor): the file's bytes, read
    by the safetensors package, are the independent reference's."""
    rng = np.random.default_rng(21)
    # Rows of 896 elements: pieces of parallel work (64 Ki elements) start inside rows.
    x = (rng.standard_normal((1200, 896)) * np.exp2(rng.integers(-6, 6, (1200, 1)))).astype(
        np.float32)
    x[5, 7], x[1100, 3] = 0.0, -0.0
    src, dst = tmp_path / "big.safetensors", tmp_path / "big-q.safetensors"
    safetensors_numpy.save_file({"w": x}, str(src))
    gpucvt.convert_file(src, dst, recipe=recipe, threads=2, all=True)
    out = raw_tensors(dst)
    data, sbytes, s2 = ref_file_bytes(x, recipe)
    assert out["w"][2] == data, recipe
    assert out["w_scale"][2] == sbytes, recipe
    if s2 is not None:
        assert out["w_scale_2"][2] == s2


@pytest.mark.parametrize("shape", [(8, 64), (1200, 896)])
def test_sixteen_bit_elements_with_block_scales_read_back(tmp_path, shape):
    """f16 elements with f32 block scales (codes of 16 bits, packed and written by the same
    streamed writer as the recipes; one chunk, and more than one): the file's bytes, read by
    the safetensors package, are NumPy's: each block's scale f32(amax / 65504), each element
    f32(x / scale) rounded to f16 by NumPy."""
    rng = np.random.default_rng(23)
    x = (rng.standard_normal(shape) * np.exp2(rng.integers(-20, 20, (shape[0], 1)))).astype(
        np.float32)
    x[0, :32] = 0.0
    src, dst = tmp_path / "x.safetensors", tmp_path / "q.safetensors"
    safetensors_numpy.save_file({"w": x}, str(src))
    gpucvt.convert_file(src, dst, to="f16", satfinite=True, block=32, scale="f32", threads=2, all=True)
    out = raw_tensors(dst)
    blocks = x.reshape(-1, 32)
    amax = np.abs(blocks).max(axis=1)
    s = np.maximum((amax / np.float32(65504.0)).astype(np.float32), F32_MIN_NORMAL)
    codes = (blocks / s[:, None]).astype(np.float32).astype(np.float16)
    assert out["w"][:2] == ("F16", list(shape))
    assert out["w"][2] == codes.tobytes()
    assert out["w_scale"][2] == s.astype("<f4").tobytes()


def test_non_finite_tensors_are_kept(tmp_path):
    """Issue 41 §4: a -inf mask under f32 and ue4m3 scales is kept unquantized, with the
    element and why, while the other tensors are quantized; strict=True and a .npy input
    make it an error. MX quantizes it with the NaN scale and a note."""
    mask = np.zeros((4, 32), np.float32)
    mask[1, 3] = -np.inf
    rng = np.random.default_rng(31)
    w = finite_for(edge_data((4, 64), rng), "f32")
    src = tmp_path / "m.safetensors"
    safetensors_numpy.save_file({"mask": mask, "w": w}, str(src))
    for recipe, scope in [
        ("nvfp4", "the ue4m3 scale of its block of 16 would be NaN"),
        ("fp8-tensor", "the tensor's one f32 scale would be NaN"),
        ("fp8-row", "the f32 scale of its row would be NaN"),
        ("fp8-block128", "the f32 scale of its 128x128 tile would be NaN"),
    ]:
        dst = tmp_path / f"k-{recipe}.safetensors"
        summary = gpucvt.convert_file(src, dst, recipe=recipe, all=True)
        ((name, reason),) = summary.kept
        assert name == "mask" and reason.startswith(f"element [1, 3] is -inf: {scope}")
        assert [t.name for t in summary.tensors] == ["w"] and summary.total.nan == 0
        out = raw_tensors(dst)
        assert out["mask"] == ("F32", [4, 32], mask.tobytes())
        assert "mask_scale" not in out and "w_scale" in out
        with pytest.raises(ValueError, match=r"element \[1, 3\] is -inf"):
            gpucvt.convert_file(src, tmp_path / "e.safetensors", recipe=recipe, strict=True, all=True)
    np.save(tmp_path / "mask.npy", mask)
    with pytest.raises(ValueError, match=r"mask.npy: element \[1, 3\] is -inf: the f32"):
        gpucvt.convert_file(tmp_path / "mask.npy", tmp_path / "e.npy", recipe="fp8-row")
    assert not (tmp_path / "e.npy").exists()
    summary = gpucvt.convert_file(src, tmp_path / "x.safetensors", recipe="mxfp8", all=True)
    assert summary.kept == [] and summary.tensors[0].stats.nan == 32
    assert summary.notes == [
        "mask: 1 of its 4 blocks hold a NaN or an infinity and got the NaN scale, so they "
        "read back as NaN (32 of its 128 elements are NaN)"]


def test_zero_size_tensors_are_kept(tmp_path):
    """Issue 41 §6: a tensor without elements is kept unchanged by every recipe."""
    src = tmp_path / "m.safetensors"
    rng = np.random.default_rng(32)
    safetensors_numpy.save_file({"e": np.zeros((16, 0), np.float32),
                                 "w": finite_for(edge_data((4, 64), rng), "f32")}, str(src))
    for recipe in RECIPES:
        summary = gpucvt.convert_file(src, tmp_path / "k.safetensors", recipe=recipe, all=True)
        assert summary.kept == [
            ("e", "it has no elements (shape [16, 0]): there is nothing to block-scale")]
        assert raw_tensors(tmp_path / "k.safetensors")["e"] == ("F32", [16, 0], b"")
    with pytest.raises(ValueError, match="no elements"):
        gpucvt.mx_quantize(np.zeros((0, 32), np.float32), recipe="fp8-row")
