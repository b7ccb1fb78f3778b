#!/usr/bin/env python3
"""Reference vectors for gpucvt's quantization recipes, computed by torchao itself.

Writes crates/gpucvt-tensor/tests/data/torchao-vectors.json: for each case the f32 input
(bit patterns), what torchao produced for it (element codes, scale bits, per-tensor scale,
swizzled scale bytes) and which torchao function produced it. The arithmetic behind each
function, and where the stacks differ, is in docs/quantization-stacks.md.

Regenerate (CPU only; the versions below are the ones the committed JSON came from):

    python3 -m venv /tmp/venv-torchao
    /tmp/venv-torchao/bin/pip install torch==2.15.0 torchao==0.18.0 numpy==2.4.6 ml_dtypes==0.6.0
    /tmp/venv-torchao/bin/python scripts/torchao-vectors.py

The output is deterministic for those versions (fixed seed, eager CPU code paths only).
Before writing, two NumPy/ml_dtypes-only checks run on every case, and a failure stops the
script without writing anything:

- check_case decodes the case independently of torchao (element codes through ml_dtypes,
  scales from their bits) and requires the dequantized values to be close to the input on
  finite blocks, the FP4 nibble order to be the one the docs state, and torchao's swizzled
  scales to equal the cuBLAS 128x4 index formula;
- check_model recomputes every code and scale from the step-by-step formulas in
  docs/quantization-stacks.md and requires them to equal torchao's bit for bit (for NaN
  results only NaN-ness is compared: torch's NaN sign and payload depend on its internal
  loops).
"""

import json
import math
import os
import struct
import sys
import warnings

import ml_dtypes
import numpy as np
import torch

import torchao
from torchao.float8.config import ScalingGranularity
from torchao.float8.float8_scaling_utils import hp_tensor_to_float8_dynamic
from torchao.float8.float8_training_tensor import LinearMMConfig
from torchao.prototype.blockwise_fp8_training.kernels import (
    torch_blockwise_scale_act_quant_lhs,
    torch_blockwise_scale_weight_quant,
)
from torchao.prototype.mx_formats.config import ScaleCalculationMode
from torchao.prototype.mx_formats.constants import DTYPE_FP6_E2M3, DTYPE_FP6_E3M2
from torchao.prototype.mx_formats.kernels import unpack_uint4
from torchao.prototype.mx_formats.mx_tensor import to_mx
from torchao.prototype.mx_formats.nvfp4_tensor import (
    nvfp4_quantize,
    per_tensor_amax_to_scale,
)
from torchao.prototype.mx_formats.utils import to_blocked
from torchao.quantization.granularity import PerBlock, PerRow, PerTensor
from torchao.quantization.quantize_.workflows.float8.float8_tensor import Float8Tensor

warnings.filterwarnings("ignore")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates/gpucvt-tensor/tests/data/torchao-vectors.json")

SEED = 20261128
F32_MAX = float(np.finfo(np.float32).max)

# name -> (torchao dtype, largest finite value, exponent of the largest power of two in
# range (torchao's *_MAX_POW2), mantissa bits, ml_dtypes type used by the check)
ELEMS = {
    "e4m3": (torch.float8_e4m3fn, 448.0, 8, 3, ml_dtypes.float8_e4m3fn),
    "e5m2": (torch.float8_e5m2, 57344.0, 15, 2, ml_dtypes.float8_e5m2),
    "e2m3": (DTYPE_FP6_E2M3, 7.5, 2, 3, ml_dtypes.float6_e2m3fn),
    "e3m2": (DTYPE_FP6_E3M2, 28.0, 4, 2, ml_dtypes.float6_e3m2fn),
    "e2m1": (torch.float4_e2m1fn_x2, 6.0, 2, 1, ml_dtypes.float4_e2m1fn),
}
RULES = {
    "floor": ScaleCalculationMode.FLOOR,
    "rceil": ScaleCalculationMode.RCEIL,
    "ceil": ScaleCalculationMode.CEIL,
    "even": ScaleCalculationMode.EVEN,
}


def f32(x):
    return float(np.float32(x))


def next_up(x):
    return float(np.nextafter(np.float32(x), np.float32(np.inf)))


def next_down(x):
    return float(np.nextafter(np.float32(x), np.float32(0)))


def bits_of(t):
    """u32 bit patterns of an f32 tensor, row-major."""
    return t.detach().contiguous().view(torch.int32).reshape(-1).numpy().view(np.uint32).tolist()


def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def random_block(rng, n, amax, sign=1.0):
    """n normal values rescaled so that the largest magnitude is exactly `amax` (an f32),
    held by element 1 with the given sign."""
    v = rng.standard_normal(n).astype(np.float32)
    v = v / np.float32(np.max(np.abs(v)))  # in [-1, 1]
    v = (v.astype(np.float64) * amax).astype(np.float32)
    # keep every other element strictly below amax so that element 1 alone sets it
    big = np.abs(v) >= np.float32(amax)
    v[big] = np.float32(v[big] * 0.5)
    v[1] = np.float32(sign * amax)
    return v


def edge_blocks(rng, n, elem_max, mbits):
    """Blocks of n f32 values, each exercising one edge of the scale rules. Returns a list
    of (label, values)."""
    out = []
    out.append(("all zero", np.zeros(n, np.float32)))
    b = random_block(rng, n, 3.0)
    b[3] = np.nan
    out.append(("NaN at 3", b))
    b = random_block(rng, n, 3.0)
    b[5] = np.inf
    out.append(("+Inf at 5", b))
    b = random_block(rng, n, 3.0)
    b[6] = -np.inf
    out.append(("-Inf at 6", b))
    out.append(("amax 2^5", random_block(rng, n, 32.0)))
    out.append(("amax -2^-3 (negative)", random_block(rng, n, 0.125, sign=-1.0)))
    for k in (-12, 0, 3):
        m = f32(elem_max * 2.0**k)
        out.append((f"amax max*2^{k}", random_block(rng, n, m)))
        out.append((f"amax max*2^{k} + ulp", random_block(rng, n, next_up(m))))
        out.append((f"amax max*2^{k} - ulp", random_block(rng, n, next_down(m))))
    # descale = amax / max lands one ulp above a power of two for these (ceil(log2) in f32)
    for k in (-20, 10):
        m = next_up(f32(elem_max * 2.0**k))
        out.append((f"amax (max*2^{k})+ulp, rceil log2 precision", random_block(rng, n, m)))
    out.append(("amax 2^7 - ulp (mantissa all ones)", random_block(rng, n, next_down(128.0))))
    # EVEN adds half an element-ulp to amax's bits: this is the smallest amax that carries
    # into the next power of two, and the largest that does not
    even_pt = f32(2.0**4 * (2.0 - 2.0 ** -(mbits + 1)))
    out.append(("amax at EVEN carry point", random_block(rng, n, even_pt)))
    out.append(("amax one ulp below EVEN carry point", random_block(rng, n, next_down(even_pt))))
    # normal, but at most max * 2^-127: the scale exponent clamps to -127
    out.append(("amax 1e-37 (normal, below max*2^-127)", random_block(rng, n, f32(1.0e-37))))
    out.append(("amax f32 subnormal", random_block(rng, n, f32(3.0e-40))))
    out.append(("amax smallest subnormal", np.where(np.arange(n) % 3 == 0, np.float32(1.4e-45), np.float32(0)).astype(np.float32)))
    out.append(("amax f32 max", random_block(rng, n, F32_MAX)))
    out.append(("amax 3e38", random_block(rng, n, f32(3.0e38), sign=-1.0)))
    return out


def random_scaled_blocks(rng, count, n):
    out = []
    for _ in range(count):
        e = int(rng.integers(-30, 31))
        v = (rng.standard_normal(n) * 2.0**e).astype(np.float32)
        out.append((f"normal*2^{e}", v))
    return out


def as_tensor(blocks, shape):
    flat = np.concatenate([b for _, b in blocks]).astype(np.float32)
    assert flat.size == math.prod(shape), (flat.size, shape)
    return torch.from_numpy(flat.reshape(shape).copy())


def pad_blocks(rng, blocks, n, multiple):
    while len(blocks) % multiple:
        blocks = blocks + random_scaled_blocks(rng, 1, n)
    return blocks


# ---------------------------------------------------------------- MX


def mx_case(name, x, elem, rule, swizzle=False, labels=None):
    dtype = ELEMS[elem][0]
    s, d = to_mx(x, dtype, 32, RULES[rule])
    if elem == "e2m1":
        q = unpack_uint4(d.contiguous().view(torch.uint8))
        # low nibble first: check against the bytes directly
        packed = d.contiguous().view(torch.uint8).reshape(-1).numpy()
        qn = q.reshape(-1).numpy()
        assert np.array_equal(qn[0::2], packed & 0xF) and np.array_equal(qn[1::2], packed >> 4)
    else:
        q = d.view(torch.uint8)  # FP8 bytes, or FP6 codes already one per byte
    scales = s.view(torch.uint8)
    case = {
        "name": name,
        "recipe": {"kind": "mx", "elem": elem, "block": 32, "rule": rule},
        "function": f"torchao.prototype.mx_formats.mx_tensor.to_mx(x, {dtype if isinstance(dtype, str) else str(dtype)}, 32, scaling_mode=ScaleCalculationMode.{rule.upper()})",
        "shape": list(x.shape),
        "input": bits_of(x),
        "q": q.reshape(-1).tolist(),
        "scale_format": "ue8m0",
        "scale_meaning": "dequant: x ~ value(q) * 2^(scale - 127)",
        "scales": scales.reshape(-1).tolist(),
        "scale_shape": list(scales.shape),
        "scale_2": None,
        "swizzled": None,
    }
    if labels is not None:
        case["block_labels"] = labels
    if swizzle:
        s2, d2 = to_mx(x, dtype, 32, RULES[rule], is_swizzled_scales=True)
        assert torch.equal(d2.view(torch.uint8), d.view(torch.uint8))
        case["swizzled"] = s2.view(torch.uint8).reshape(-1).tolist()
        case["function"] += " and again with is_swizzled_scales=True"
    return case


def mx_cases(rng):
    cases = []
    for elem, (_, emax_val, _, mbits, _) in ELEMS.items():
        edges = edge_blocks(rng, 32, emax_val, mbits)
        edges = pad_blocks(rng, edges, 32, 2)
        x_edge = as_tensor(edges, [len(edges) // 2, 64])
        x_rand = as_tensor(random_scaled_blocks(rng, 9, 32), [3, 96])
        x_3d = as_tensor(random_scaled_blocks(rng, 6, 32), [2, 3, 32])
        labels = [lbl for lbl, _ in edges]
        for rule in RULES:
            cases.append(mx_case(f"mx-{elem}-{rule}-edges", x_edge, elem, rule, labels=labels))
            cases.append(mx_case(f"mx-{elem}-{rule}-random-3x96", x_rand, elem, rule))
            cases.append(mx_case(f"mx-{elem}-{rule}-random-2x3x32", x_3d, elem, rule))
    # the 128x4 swizzle with padding: 130 rows (pad to 256), 2 scale columns (pad to 4)
    x_sw = as_tensor(random_scaled_blocks(rng, 260, 32), [130, 64])
    cases.append(mx_case("mx-e4m3-floor-swizzle-130x64", x_sw, "e4m3", "floor", swizzle=True))
    cases.append(mx_case("mx-e2m1-rceil-swizzle-130x64", x_sw, "e2m1", "rceil", swizzle=True))
    return cases


# ---------------------------------------------------------------- NVFP4


def nvfp4_case(name, x, two_level, swizzle=False, labels=None):
    pts = None
    call = "nvfp4_quantize(x, 16, None)"
    if two_level:
        pts = per_tensor_amax_to_scale(torch.max(torch.abs(x)))
        call = "nvfp4_quantize(x, 16, per_tensor_amax_to_scale(torch.max(torch.abs(x))))"
    s, d = nvfp4_quantize(x, 16, pts)
    q = unpack_uint4(d.contiguous().view(torch.uint8))
    packed = d.contiguous().view(torch.uint8).reshape(-1).numpy()
    qn = q.reshape(-1).numpy()
    assert np.array_equal(qn[0::2], packed & 0xF) and np.array_equal(qn[1::2], packed >> 4)
    scales = s.view(torch.uint8)
    case = {
        "name": name,
        "recipe": {"kind": "nvfp4", "elem": "e2m1", "block": 16, "two_level": two_level},
        "function": "torchao.prototype.mx_formats.nvfp4_tensor." + call,
        "shape": list(x.shape),
        "input": bits_of(x),
        "q": qn.tolist(),
        "scale_format": "e4m3",
        "scale_meaning": "dequant: x ~ value(q) * e4m3(scale) * scale_2 (scale_2 = 1 when null)",
        "scales": scales.reshape(-1).tolist(),
        "scale_shape": list(scales.shape),
        "scale_2": None if pts is None else f32_bits(float(pts)),
        "swizzled": None,
    }
    if labels is not None:
        case["block_labels"] = labels
    if swizzle:
        case["swizzled"] = to_blocked(scales.reshape(-1, x.shape[-1] // 16)).reshape(-1).tolist()
        case["function"] += "; swizzled = torchao.prototype.mx_formats.utils.to_blocked(scales)"
    return case


def reciprocal_blocks():
    """Blocks whose e4m3 scale s is exact (amax / 6) and whose other elements x make x / s
    an exact e2m1 rounding tie: torchao's x * f32(1 / s) is not always x / s there."""
    out = []
    for s in (0.029296875, 3.5):
        xs = [f32(6.0 * s)]
        for b in (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0):
            t = f32(b * s)
            xs += [t, next_down(t)]
        xs = xs[:16]
        xs += [0.0] * (16 - len(xs))
        v = np.array(xs, np.float32)
        v[9:] = -v[9:]
        out.append((f"x/s ties, s={s}", v))
    return out


def nvfp4_cases(rng):
    cases = []
    edges = pad_blocks(rng, edge_blocks(rng, 16, 6.0, 1) + reciprocal_blocks(), 16, 4)
    labels = [lbl for lbl, _ in edges]
    x_edge = as_tensor(edges, [len(edges) // 4, 64])
    cases.append(nvfp4_case("nvfp4-single-edges", x_edge, False, labels=labels))
    # two-level: a tensor amax that is finite and not dominated by the huge blocks
    finite = [(lbl, b) for lbl, b in edge_blocks(rng, 16, 6.0, 1)
              if not any(w in lbl for w in ("NaN", "Inf", "f32 max", "3e38"))]
    finite = pad_blocks(rng, finite, 16, 4)
    x_fin = as_tensor(finite, [len(finite) // 4, 64])
    cases.append(nvfp4_case("nvfp4-two-level-finite-edges", x_fin, True, labels=[lbl for lbl, _ in finite]))
    cases.append(nvfp4_case("nvfp4-two-level-edges-with-nan-inf-huge", x_edge, True, labels=labels))
    x_rand = as_tensor(random_scaled_blocks(rng, 18, 16), [3, 96])
    cases.append(nvfp4_case("nvfp4-single-random-3x96", x_rand, False))
    cases.append(nvfp4_case("nvfp4-two-level-random-3x96", x_rand, True))
    x_3d = as_tensor(random_scaled_blocks(rng, 12, 16), [2, 3, 32])
    cases.append(nvfp4_case("nvfp4-single-random-2x3x32", x_3d, False))
    cases.append(nvfp4_case("nvfp4-two-level-random-2x3x32", x_3d, True))
    x_zero = torch.zeros(2, 32)
    cases.append(nvfp4_case("nvfp4-two-level-all-zero-tensor", x_zero, True))
    x_sw = torch.from_numpy((rng.standard_normal((130, 64)) * 3.0).astype(np.float32))
    cases.append(nvfp4_case("nvfp4-single-swizzle-130x64", x_sw, False, swizzle=True))
    cases.append(nvfp4_case("nvfp4-two-level-swizzle-130x64", x_sw, True, swizzle=True))
    return cases


# ---------------------------------------------------------------- float8


def f8_case(name, x, recipe, function, q, scales, meaning):
    return {
        "name": name,
        "recipe": recipe,
        "function": function,
        "shape": list(x.shape),
        "input": bits_of(x),
        "q": q.contiguous().view(torch.uint8).reshape(-1).tolist(),
        "scale_format": "f32",
        "scale_meaning": meaning,
        "scales": bits_of(scales.to(torch.float32)),
        "scale_shape": list(scales.shape),
        "scale_2": None,
        "swizzled": None,
    }


MUL = "multiplier: q = e4m3(sat(x * scale)); x ~ value(q) / scale"
DEQ = "dequant: q = e4m3(sat(x / scale)); x ~ value(q) * scale"
RECIP = "dequant: q = e4m3(sat(x * s)) with s = f32(448 / max(amax, 1e-12)); stored scale = f32(1 / s); x ~ value(q) * scale"


def row_edges(rng, n):
    return edge_blocks(rng, n, 448.0, 3)


def float8_cases(rng):
    cases = []
    cfg = LinearMMConfig()
    rows = row_edges(rng, 64)
    labels = [lbl for lbl, _ in rows]
    x_rows = as_tensor(rows, [len(rows), 64])
    x_rand = as_tensor(random_scaled_blocks(rng, 4, 64), [4, 64])

    # training: tensorwise and rowwise (the multiplier is stored)
    for nm, x in (("random-4x64", x_rand), ("subnormal-tensor", torch.tensor([[3.0e-40, -1.0e-41, 0.0, 2.0e-39]])),
                  ("huge-tensor", torch.tensor([[F32_MAX, -1.0, 3.0e38, 1e-30]])), ("zero-tensor", torch.zeros(2, 4)),
                  ("amax-448-tensor", torch.tensor([[448.0, -3.0, 0.1, 1e-3]]))):
        t = hp_tensor_to_float8_dynamic(x, torch.float8_e4m3fn, cfg, scaling_granularity=ScalingGranularity.TENSORWISE)
        cases.append(f8_case(f"float8-training-tensorwise-{nm}", x, {"kind": "float8_tensorwise", "elem": "e4m3", "stack": "torchao.float8 (training)"},
                             "torchao.float8.float8_scaling_utils.hp_tensor_to_float8_dynamic(x, torch.float8_e4m3fn, LinearMMConfig(), scaling_granularity=TENSORWISE)",
                             t._data, t._scale, MUL))
    for pow2 in (False, True):
        for nm, x, lab in (("edges", x_rows, labels), ("random-4x64", x_rand, None)):
            t = hp_tensor_to_float8_dynamic(x, torch.float8_e4m3fn, cfg, scaling_granularity=ScalingGranularity.AXISWISE,
                                            axiswise_dim=-1, round_scales_to_power_of_2=pow2)
            c = f8_case(f"float8-training-rowwise{'-pow2' if pow2 else ''}-{nm}", x,
                        {"kind": "float8_rowwise", "elem": "e4m3", "stack": "torchao.float8 (training)", "round_scales_to_power_of_2": pow2},
                        f"torchao.float8.float8_scaling_utils.hp_tensor_to_float8_dynamic(x, torch.float8_e4m3fn, LinearMMConfig(), scaling_granularity=AXISWISE, axiswise_dim=-1, round_scales_to_power_of_2={pow2})",
                        t._data, t._scale, MUL)
            if lab:
                c["block_labels"] = lab
            cases.append(c)

    # inference: Float8Tensor (the dequant scale amax/448 is stored)
    for nm, x, lab in (("edges", x_rows, labels), ("random-4x64", x_rand, None)):
        t = Float8Tensor.from_hp(x, torch.float8_e4m3fn, PerRow())
        c = f8_case(f"float8-inference-rowwise-{nm}", x, {"kind": "float8_rowwise", "elem": "e4m3", "stack": "torchao.quantization Float8Tensor (inference)"},
                    "torchao.quantization.Float8Tensor.from_hp(x, torch.float8_e4m3fn, PerRow())", t.qdata, t.scale, DEQ)
        if lab:
            c["block_labels"] = lab
        cases.append(c)
    for nm, x in (("random-4x64", x_rand), ("zero-tensor", torch.zeros(2, 4)), ("subnormal-tensor", torch.tensor([[3.0e-40, -1.0e-41, 0.0, 2.0e-39]]))):
        t = Float8Tensor.from_hp(x, torch.float8_e4m3fn, PerTensor())
        cases.append(f8_case(f"float8-inference-tensorwise-{nm}", x, {"kind": "float8_tensorwise", "elem": "e4m3", "stack": "torchao.quantization Float8Tensor (inference)"},
                             "torchao.quantization.Float8Tensor.from_hp(x, torch.float8_e4m3fn, PerTensor())", t.qdata, t.scale, DEQ))

    # blockwise 128x128 (DeepSeek-V3 weight layout) and 1x128 (its activations)
    b0 = (rng.standard_normal((128, 128)) * 2.0**-3).astype(np.float32)
    b1 = (rng.standard_normal((128, 128)) * 2.0**9).astype(np.float32)
    b1[5, 7] = -f32(448.0 * 2.0**10)
    x_blk = torch.from_numpy(np.concatenate([b0, b1]))
    t = Float8Tensor.from_hp(x_blk, torch.float8_e4m3fn, PerBlock([128, 128]))
    cases.append(f8_case("float8-inference-block128x128-256x128", x_blk, {"kind": "float8_block", "elem": "e4m3", "block": [128, 128], "stack": "torchao.quantization Float8Tensor (inference)"},
                         "torchao.quantization.Float8Tensor.from_hp(x, torch.float8_e4m3fn, PerBlock([128, 128]))", t.qdata, t.scale, DEQ))
    q, s = torch_blockwise_scale_weight_quant(x_blk, 128)
    cases.append(f8_case("float8-training-block128x128-256x128", x_blk, {"kind": "float8_block", "elem": "e4m3", "block": [128, 128], "stack": "torchao.prototype.blockwise_fp8_training"},
                         "torchao.prototype.blockwise_fp8_training.kernels.torch_blockwise_scale_weight_quant(x, 128)", q, s, RECIP))
    rows128 = row_edges(rng, 128)
    lab128 = [lbl for lbl, _ in rows128]
    x128 = as_tensor(rows128, [len(rows128), 128])
    t = Float8Tensor.from_hp(x128, torch.float8_e4m3fn, PerBlock([1, 128]))
    c = f8_case("float8-inference-block1x128-edges", x128, {"kind": "float8_block", "elem": "e4m3", "block": [1, 128], "stack": "torchao.quantization Float8Tensor (inference)"},
                "torchao.quantization.Float8Tensor.from_hp(x, torch.float8_e4m3fn, PerBlock([1, 128]))", t.qdata, t.scale, DEQ)
    c["block_labels"] = lab128
    cases.append(c)
    q, s = torch_blockwise_scale_act_quant_lhs(x128, 128)
    c = f8_case("float8-training-block1x128-edges", x128, {"kind": "float8_block", "elem": "e4m3", "block": [1, 128], "stack": "torchao.prototype.blockwise_fp8_training"},
                "torchao.prototype.blockwise_fp8_training.kernels.torch_blockwise_scale_act_quant_lhs(x, 128)", q, s, RECIP)
    c["block_labels"] = lab128
    cases.append(c)
    return cases


# ---------------------------------------------------------------- independent check


def decode_elems(case):
    fmt = case["recipe"].get("elem", "e4m3")
    q = np.array(case["q"], dtype=np.uint8)
    return q.view(ELEMS[fmt][4]).astype(np.float64)


def swizzle_reference(scales, rows, cols):
    """The cuBLAS 128x4 layout, from its index formula rather than torchao's reshapes."""
    col_tiles = -(-cols // 4)
    row_tiles = -(-rows // 128)
    out = np.zeros(row_tiles * col_tiles * 512, np.uint8)
    for r in range(rows):
        for c in range(cols):
            tile = (r // 128) * col_tiles + c // 4
            off = tile * 512 + (r % 32) * 16 + ((r % 128) // 32) * 4 + (c % 4)
            out[off] = scales[r * cols + c]
    return out


def check_case(case):
    x = np.array(case["input"], dtype=np.uint32).view(np.float32).astype(np.float64)
    shape = case["shape"]
    v = decode_elems(case)
    assert v.size == x.size == math.prod(shape), case["name"]
    kind = case["recipe"]["kind"]
    s_raw = np.array(case["scales"], dtype=np.uint32)
    if kind == "mx" or kind == "nvfp4":
        bs = case["recipe"]["block"]
        min_sub = float(np.array([1], np.uint8).view(ELEMS[case["recipe"]["elem"]][4])[0])
        xb = x.reshape(-1, bs)
        vb = v.reshape(-1, bs)
        if kind == "mx":
            sv = np.where(s_raw == 255, np.nan, np.exp2(s_raw.astype(np.float64) - 127))
        else:
            sv = s_raw.astype(np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
            if case["scale_2"] is not None:
                sv = sv * float(np.array([case["scale_2"]], np.uint32).view(np.float32)[0])
        assert sv.size == xb.shape[0], case["name"]
        for i in range(xb.shape[0]):
            amax = np.max(np.abs(xb[i]))
            if not np.all(np.isfinite(xb[i])) or not np.isfinite(sv[i]) or amax < 2.0**-126:
                continue
            if kind == "mx" and s_raw[i] == 0 and amax > 0:
                # byte 0 (2^-127) is not the factor torchao applied: FLOOR/CEIL/EVEN divide
                # by F32_MIN_NORMAL (2^-126), RCEIL multiplies by 1.0
                fmt = case["recipe"]["elem"]
                factor = 1.0 if case["recipe"]["rule"] == "rceil" else 2.0**126
                mx = ELEMS[fmt][1]
                want = np.clip(xb[i] * factor, -mx, mx).astype(np.float32).astype(ELEMS[fmt][4]).view(np.uint8)
                got = np.array(case["q"], np.uint8).reshape(-1, bs)[i]
                assert np.array_equal(want, got), (case["name"], i)
                continue
            if kind == "nvfp4" and s_raw[i] == 0x7E and amax > 6.0 * sv[i]:
                continue  # block scale clamped to 448: the block saturates (documented)
            deq = vb[i] * sv[i]
            err = np.max(np.abs(deq - xb[i]))
            # half the block's amax (FLOOR saturates up to 2x the element max), or half the
            # smallest scaled step when the scale was clamped up (NVFP4's E4M3_EPS floor)
            assert err <= 0.5 * amax + 0.5 * min_sub * sv[i], (case["name"], i, err, amax)
        if case["swizzled"] is not None:
            cols = shape[-1] // bs
            rows = x.size // shape[-1]
            ref = swizzle_reference(s_raw.astype(np.uint8), rows, cols)
            assert np.array_equal(ref, np.array(case["swizzled"], np.uint8)), case["name"]
    else:
        sv = s_raw.view(np.float32).astype(np.float64)
        xs = x.reshape(shape)
        vs = v.reshape(shape)
        # broadcast the scale over its block
        sshape = [1] * (len(shape) - len(case["scale_shape"])) + case["scale_shape"]
        blk = [shape[i] // sshape[i] for i in range(len(shape))]
        sfull = sv.reshape(sshape)
        for ax, b in enumerate(blk):
            sfull = np.repeat(sfull, b, axis=ax)
        deq = vs / sfull if case["scale_meaning"].startswith("multiplier") else vs * sfull
        ok = np.isfinite(deq) & np.isfinite(xs) & (sfull > 0) & np.isfinite(sfull)
        # within a block the error is at most an e4m3 step at the block's amax, or half the
        # smallest subnormal step when amax was clamped (to 1e-12) or flushed
        ax = np.where(np.isfinite(xs), np.abs(xs), 0).reshape([d for i in range(len(shape)) for d in (sshape[i], blk[i])])
        bmax = ax.max(axis=tuple(range(1, 2 * len(shape), 2)))
        for a, b in enumerate(blk):
            bmax = np.repeat(bmax, b, axis=a)
        step = 1.0 / sfull if case["scale_meaning"].startswith("multiplier") else sfull
        bound = 2.0**-3 * bmax + 2.0**-10 * np.abs(step)
        assert np.all((np.abs(deq - xs) <= bound)[ok]), case["name"]


# ---------------------------------------------------------------- the documented formulas
#
# docs/quantization-stacks.md describes each torchao function as f32 arithmetic. This is
# that description written out in NumPy (no torch), and main() requires it to reproduce
# every code and scale bit of every case, so the document and the vectors cannot drift.

F32 = np.float32
EBITS = {"e2m3": 2, "e3m2": 3, "e2m1": 2}
MBITS = {"e4m3": 3, "e5m2": 2, "e2m3": 3, "e3m2": 2, "e2m1": 1}


def f32_log2(v):
    """log2 rounded to f32 (from the f64 logarithm)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log2(v.astype(np.float64)).astype(F32)


def elem_codes(y, fmt):
    """Element codes of f32 values y as torchao produces them: saturate to +-max, round to
    nearest even; FP8 NaN -> 0x7f with the NaN's sign; FP6/FP4 NaN -> the normal-path bit
    arithmetic on its payload."""
    y = np.asarray(y, F32)
    mx = F32(ELEMS[fmt][1])
    nan = np.isnan(y)
    out = np.clip(np.where(nan, F32(0), y), -mx, mx).astype(ELEMS[fmt][4]).view(np.uint8).copy()
    bits = y.view(np.uint32).astype(np.int64)
    sign = bits >> 31
    if fmt in ("e4m3", "e5m2"):
        out[nan] = (0x7F | (sign << 7))[nan]
    else:
        m, e = MBITS[fmt], EBITS[fmt]
        bias = (1 << (e - 1)) - 1
        mag = bits & 0x7FFFFFFF
        code = ((mag + ((bias - 127) << 23) + (1 << (22 - m)) - 1 + ((mag >> (23 - m)) & 1)) >> (23 - m)) & 0xFF
        out[nan] = ((code | (sign << (e + m))) & 0xFF)[nan]
    return out


def model_mx(x, fmt, rule):
    _, mx, emax, mbits, _ = ELEMS[fmt]
    xb = x.reshape(-1, 32)
    amax = np.max(np.abs(xb), axis=1).astype(F32)
    nan = np.isnan(amax)
    if rule == "rceil":
        with np.errstate(invalid="ignore", over="ignore"):
            descale = (amax / F32(mx)).astype(F32)
        L = f32_log2(descale)
        with np.errstate(invalid="ignore"):
            b = (np.clip(np.ceil(np.where(np.isfinite(L), L, -1000.0)), -127, 127) + 127).astype(np.int64)
        b = np.where(np.isinf(descale), 254, b)
        b = np.where(np.isnan(descale), 255, b)
        r = np.where(b == 0, F32(1), np.exp2(127.0 - b).astype(F32)).astype(F32)
        r = np.where(b == 254, F32(2.0**-127), r)
        r = np.where(b == 255, descale, r).astype(F32)
        with np.errstate(invalid="ignore"):
            y = (xb * r[:, None]).astype(F32)
    else:
        a = amax.copy()
        if rule == "even":
            a = ((a.view(np.uint32).astype(np.int64) + (1 << (22 - mbits))) & 0xFF800000).astype(np.uint32).view(F32)
            a = np.where(nan, F32(np.nan), a)
        ab = a.view(np.uint32).astype(np.int64)
        e = ((ab >> 23) & 0xFF) - 127
        if rule == "ceil":
            e = e + ((ab & 0x7FFFFF) != 0)
        b = np.clip(e - emax, -127, 128) + 127
        b = np.where(nan, 255, b)
        d = (b.astype(np.uint32) << 23).view(F32)
        d = np.maximum(d, F32(2.0**-126))
        with np.errstate(invalid="ignore"):
            y = (xb / d[:, None]).astype(F32)
    return elem_codes(y, fmt).reshape(-1), np.isnan(y).reshape(-1), b.astype(np.int64)


def model_nvfp4(x, two_level):
    xb = x.reshape(-1, 16)
    amax = np.max(np.abs(xb), axis=1).astype(F32)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        b = (amax / F32(6)).astype(F32)
        p = None
        if two_level:
            p = (F32(np.max(np.abs(x))) / F32(2688)).astype(F32)
            b = (b / p).astype(F32)
        s8 = np.clip(b, F32(2.0**-6), F32(448)).astype(ml_dtypes.float8_e4m3fn)
        sf = s8.astype(F32)
        if two_level:
            r = ((F32(1) / p).astype(F32) / sf).astype(F32)
        else:
            r = (F32(1) / sf).astype(F32)
        y = np.clip((xb * r[:, None]).astype(F32), F32(-6), F32(6))
    return elem_codes(y, "e2m1").reshape(-1), np.isnan(y).reshape(-1), s8.view(np.uint8).astype(np.int64), p


def block_view(xs, sshape):
    """(blocks..., elements) view of xs for a scale of shape sshape (same rank)."""
    blk = [xs.shape[i] // sshape[i] for i in range(xs.ndim)]
    v = xs.reshape([d for i in range(xs.ndim) for d in (sshape[i], blk[i])])
    order = list(range(0, 2 * xs.ndim, 2)) + list(range(1, 2 * xs.ndim, 2))
    return v.transpose(order).reshape(list(sshape) + [-1]), blk


def model_float8(xs, sshape, meaning, pow2):
    xv, blk = block_view(xs, sshape)
    amax = np.max(np.abs(xv), axis=-1)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        if meaning.startswith("dequant: q = e4m3(sat(x / scale))"):
            scale = (amax.astype(F32) / F32(448)).astype(F32)
            stored = scale
        else:
            s = (448.0 / np.maximum(amax.astype(np.float64), 1e-12)).astype(F32)
            if pow2:
                s = np.exp2(np.floor(f32_log2(s)).astype(np.float64)).astype(F32)
            stored = s if meaning.startswith("multiplier") else (F32(1) / s).astype(F32)
        full = stored if meaning.startswith("dequant: q = e4m3(sat(x / scale))") else s
        for a, b in enumerate(blk):
            full = np.repeat(full, b, axis=a)
        if meaning.startswith("dequant: q = e4m3(sat(x / scale))"):
            y = (xs / full).astype(F32)
        else:
            y = (xs * full).astype(F32)
    stored = stored.astype(F32).reshape(-1)
    return elem_codes(y, "e4m3").reshape(-1), np.isnan(y).reshape(-1), stored.view(np.uint32).astype(np.int64)


def check_model(case):
    x = np.array(case["input"], dtype=np.uint32).view(F32).reshape(case["shape"])
    rec = case["recipe"]
    p = None
    if rec["kind"] == "mx":
        q, qnan, sc = model_mx(x, rec["elem"], rec["rule"])
        snan = sc == 255
    elif rec["kind"] == "nvfp4":
        q, qnan, sc, p = model_nvfp4(x, rec["two_level"])
        snan = (sc & 0x7F) == 0x7F
    else:
        sshape = [1] * (x.ndim - len(case["scale_shape"])) + case["scale_shape"]
        q, qnan, sc = model_float8(x, sshape, case["scale_meaning"], rec.get("round_scales_to_power_of_2", False))
        snan = np.isnan(sc.astype(np.uint32).view(F32))
    got_q = np.array(case["q"])
    got_s = np.array(case["scales"])
    # Exact everywhere except the sign and payload of NaNs, which depend on torch's
    # internal code paths (vectorized or scalar loops): there only NaN-ness is compared.
    assert np.array_equal(q[~qnan], got_q[~qnan]), ("codes", case["name"], np.nonzero((q != got_q) & ~qnan)[0][:8])
    if rec.get("elem", "e4m3") in ("e4m3", "e5m2"):
        assert np.all((got_q[qnan] & 0x7F) == 0x7F), ("NaN codes", case["name"])
    assert np.array_equal(sc[~snan], got_s[~snan]), ("scales", case["name"])
    if rec["kind"] == "mx":
        assert np.all(got_s[snan] == 255), ("NaN scales", case["name"])
    elif rec["kind"] == "nvfp4":
        assert np.all((got_s[snan] & 0x7F) == 0x7F), ("NaN scales", case["name"])
    else:
        assert np.all(np.isnan(got_s[snan].astype(np.uint32).view(F32))), ("NaN scales", case["name"])
    if p is not None:
        want = int(np.array(p, F32).view(np.uint32))
        assert want == case["scale_2"] or (np.isnan(p) and np.isnan(np.array([case["scale_2"]], np.uint32).view(F32)[0])), ("scale_2", case["name"])


def main():
    rng = np.random.default_rng(SEED)
    torch.manual_seed(SEED)
    cases = mx_cases(rng) + nvfp4_cases(rng) + float8_cases(rng)
    for c in cases:
        check_case(c)
        check_model(c)
    names = [c["name"] for c in cases]
    assert len(set(names)) == len(names)
    doc = {
        "generator": "scripts/torchao-vectors.py",
        "torch": torch.__version__.split("+")[0],
        "torchao": torchao.__version__,
        "numpy": np.__version__,
        "ml_dtypes": ml_dtypes.__version__,
        "notes": "input: u32 bits of the f32 input, row-major. q: one element code per element "
                 "(FP4: unpacked; torchao packs element 2i in the low nibble and 2i+1 in the high "
                 "nibble of byte i; FP6: the 6-bit code in the low bits of a byte). scales: raw bits "
                 "(ue8m0 byte, e4m3 byte, f32 as u32), row-major in scale_shape. scale_2: u32 bits "
                 "of the NVFP4 per-tensor f32 scale. swizzled: scale bytes after torchao's to_blocked "
                 "(cuBLAS 128x4 layout, zero padding). See docs/quantization-stacks.md.",
        "cases": cases,
    }
    text = json.dumps(doc, separators=(",", ":"))
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write(text)
        f.write("\n")
    print(f"{OUT}: {len(cases)} cases, {len(text)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
