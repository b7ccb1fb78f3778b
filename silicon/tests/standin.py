"""A NumPy stand-in for the GPU: a few `cvt` forms computed with NumPy's own conversions.

It knows nothing of gpucvt: it reads the operands the way the generated CUDA kernels do (the
layout in each form's shape) and converts them with NumPy, so that agreeing with `gpucvt
sweep --hash` through the driver shows that the chunking, the operand wiring, the hashing
and the sample all line up. ``faults`` flips bits of chosen instructions' results, to show
that a difference is found and reported exactly.
"""

from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from harness import Backend, Shape


def _f32_to_f16_rn(x: np.ndarray) -> np.ndarray:
    """f32 words -> f16 words, round to nearest even; NaN -> the canonical 0x7fff."""
    f = x.astype(np.uint32).view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        h = f.astype(np.float16).view(np.uint16).copy()
    h[np.isnan(f)] = 0x7FFF
    return h


def _f16_to_f32(x: np.ndarray) -> np.ndarray:
    h = x.astype(np.uint16).view(np.float16)
    w = h.astype(np.float32).view(np.uint32).copy()
    w[np.isnan(h)] = 0x7FFFFFFF
    return w


def _f32_to_s32_rzi(x: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):  # signalling NaNs widen quietly
        f = x.astype(np.uint32).view(np.float32).astype(np.float64)
    t = np.trunc(np.where(np.isnan(f), 0.0, f))
    return np.clip(t, -(2.0**31), 2.0**31 - 1).astype(np.int64).astype(np.uint32)


def _f64_to_f32_rn(x: np.ndarray) -> np.ndarray:
    f = x.astype(np.uint64).view(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        w = f.astype(np.float32).view(np.uint32).copy()
    w[np.isnan(f)] = 0x7FFFFFFF
    return w


class NumpyBackend(Backend):
    """Computes the forms it knows; ``faults`` maps instruction index -> XOR mask."""

    name = "numpy stand-in"

    FORMS = {
        "cvt.rn.f16.f32": lambda ops: _f32_to_f16_rn(ops[0]),
        "cvt.f32.f16": lambda ops: _f16_to_f32(ops[0]),
        "cvt.rzi.s32.f32": lambda ops: _f32_to_s32_rzi(ops[0]),
        "cvt.rn.f32.f64": lambda ops: _f64_to_f32_rn(ops[0]),
        # d = {a -> high half, b -> low half}.
        "cvt.rn.f16x2.f32": lambda ops: (_f32_to_f16_rn(ops[0]).astype(np.uint32) << np.uint32(16))
        | _f32_to_f16_rn(ops[1]).astype(np.uint32),
    }

    def __init__(self, faults: Optional[Dict[int, int]] = None):
        self.faults = faults or {}
        self.calls = []

    def run(self, index: int, shape: Shape, first: int, n: int, seed: int,
            units: Optional[np.ndarray]) -> np.ndarray:
        self.calls.append((shape.form, first, n))
        per = shape.units_per_instruction
        ins = np.arange(first, first + n, dtype=np.uint64)
        ops = []
        for o in shape.operands:
            assert o.feed == "unit", "the stand-in knows no rbits or fixed operands"
            if units is None:
                ops.append(ins * np.uint64(per) + np.uint64(o.unit))
            else:
                ops.append(units.reshape(n, per)[:, o.unit])
        words = self.FORMS[shape.form](ops).astype(shape.result_dtype)
        for i, mask in self.faults.items():
            if first <= i < first + n:
                words[i - first] ^= shape.result_dtype(mask)
        return words
