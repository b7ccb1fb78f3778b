"""Shared helpers of the read-back tests: run the gpucvt binary, write inputs, read outputs.

The outputs are read with the `safetensors` package (its Rust parser, through
`safetensors.deserialize`), numpy and ml_dtypes: readers that share no code with gpucvt.
The inputs are written here by hand (a JSON header and the bytes), so that bf16 and FP8
inputs need no framework.
"""

import json
import os
import struct
import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import safetensors

REPO = Path(__file__).resolve().parents[2]


def gpucvt_bin() -> str:
    b = os.environ.get("GPUCVT_BIN")
    if b:
        return b
    for profile in ("release", "debug"):
        p = REPO / "target" / profile / "gpucvt"
        if p.exists():
            return str(p)
    pytest.exit("no gpucvt binary: build it (cargo build --release) or set GPUCVT_BIN", 2)


def gpucvt(*args, expect=0):
    """Runs gpucvt; returns (stdout, stderr). Fails the test on an unexpected exit code."""
    r = subprocess.run([gpucvt_bin(), *map(str, args)], capture_output=True, text=True)
    assert r.returncode == expect, (
        f"gpucvt {' '.join(map(str, args))} exited {r.returncode}, expected {expect}\n"
        f"stdout: {r.stdout}\nstderr: {r.stderr}"
    )
    return r.stdout, r.stderr


# safetensors dtype name -> (numpy dtype of one element's container, bits per element)
ST_DTYPES = {
    "F64": (np.float64, 64),
    "F32": (np.float32, 32),
    "F16": (np.float16, 16),
    "BF16": (ml_dtypes.bfloat16, 16),
    "I64": (np.int64, 64),
    "I32": (np.int32, 32),
    "I8": (np.int8, 8),
    "U8": (np.uint8, 8),
    "F8_E4M3": (ml_dtypes.float8_e4m3fn, 8),
    "F8_E5M2": (ml_dtypes.float8_e5m2, 8),
    "F8_E8M0": (ml_dtypes.float8_e8m0fnu, 8),
    "F6_E2M3": (ml_dtypes.float6_e2m3fn, 6),
    "F6_E3M2": (ml_dtypes.float6_e3m2fn, 6),
    "F4": (ml_dtypes.float4_e2m1fn, 4),
}


def write_safetensors(path, tensors, metadata=None):
    """Writes `tensors` ({name: numpy array}, in order) as a .safetensors file."""
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    blobs = []
    at = 0
    for name, a in tensors.items():
        dt = next(k for k, (d, _) in ST_DTYPES.items() if np.dtype(d) == a.dtype)
        data = np.ascontiguousarray(a).tobytes()
        header[name] = {"dtype": dt, "shape": list(a.shape), "data_offsets": [at, at + len(data)]}
        blobs.append(data)
        at += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    """{name: (dtype, shape, bytes)} as the safetensors package reads the file."""
    with open(path, "rb") as f:
        raw = f.read()
    out = {}
    for name, t in safetensors.deserialize(raw):
        out[name] = (t["dtype"], list(t["shape"]), bytes(t["data"]))
    return out


def unpack_codes(dtype, data, count):
    """The element encodings of a tensor's bytes as uint8/16/32/64 codes (FP4 two per byte,
    low nibble first; FP6 four per three bytes as a little-endian bit stream)."""
    bits = ST_DTYPES[dtype][1]
    buf = np.frombuffer(data, dtype=np.uint8)
    if bits == 4:
        codes = np.empty(buf.size * 2, dtype=np.uint8)
        codes[0::2] = buf & 0xF
        codes[1::2] = buf >> 4
        return codes[:count]
    if bits == 6:
        g = buf.reshape(-1, 3).astype(np.uint32)
        word = g[:, 0] | (g[:, 1] << 8) | (g[:, 2] << 16)
        codes = np.stack([(word >> (6 * k)) & 0x3F for k in range(4)], axis=1).reshape(-1)
        return codes[:count].astype(np.uint8)
    return np.frombuffer(data, dtype={8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits])


def as_values(dtype, data, shape):
    """The tensor as an array of its ml_dtypes/numpy dtype."""
    count = int(np.prod(shape, dtype=np.int64))
    codes = unpack_codes(dtype, data, count)
    d = ST_DTYPES[dtype][0]
    if ST_DTYPES[dtype][1] < 8:
        return codes.view(np.uint8).view(d).reshape(shape)
    return codes.view(d).reshape(shape)
