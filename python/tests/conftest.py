"""Shared helpers of the Python package's tests."""

import os
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]

ml_dtypes = pytest.importorskip("ml_dtypes")

#: The float formats gpucvt and ml_dtypes/NumPy both have.
FLOATS = {
    "f64": np.float64,
    "f32": np.float32,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "e4m3": ml_dtypes.float8_e4m3fn,
    "e5m2": ml_dtypes.float8_e5m2,
    "e4m3ieee": ml_dtypes.float8_e4m3,
    "e3m4": ml_dtypes.float8_e3m4,
    "e4m3fnuz": ml_dtypes.float8_e4m3fnuz,
    "e5m2fnuz": ml_dtypes.float8_e5m2fnuz,
    "e4m3b11fnuz": ml_dtypes.float8_e4m3b11fnuz,
    "e2m3": ml_dtypes.float6_e2m3fn,
    "e3m2": ml_dtypes.float6_e3m2fn,
    "e2m1": ml_dtypes.float4_e2m1fn,
    "ue8m0": ml_dtypes.float8_e8m0fnu,
}


def words(a):
    """The bit patterns of an array, as unsigned integers of its item size."""
    a = np.asarray(a)
    return a.view(np.dtype(f"uint{a.dtype.itemsize * 8}"))


def gpucvt_bin():
    """The gpucvt binary: $GPUCVT_BIN, or one built under the target folder; None if none."""
    b = os.environ.get("GPUCVT_BIN")
    if b:
        return b
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    for profile in ("release", "debug"):
        p = target / profile / "gpucvt"
        if p.exists():
            return str(p)
    return None
