#!/usr/bin/env python3
"""`gpucvt convert` of a 1 GiB f32 .safetensors file against `cp` of the same file, as
ratios measured in one run (alternating, so that both see the same machine).

    python3 scripts/convert-bench.py [--gib 1] [--runs 5] [--bin target/release/gpucvt]

Each run removes the previous outputs and syncs first, so that `cp` and gpucvt both write
a new file from the page cache. Prints the median seconds of each command and its ratio to
`cp`'s median. The conversions are the guide's (docs/speed.md): e4m3, bf16, MXFP4, MXFP8, and every
`--recipe` (every conversion includes the writer's read-back self-check); `--only NAME`
(repeatable) runs some of them.
"""

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

RECIPES = {
    "e4m3 --satfinite": ["--to", "e4m3", "--satfinite"],
    "bf16": ["--to", "bf16"],
    "MXFP4": ["--to", "e2m1", "--satfinite", "--block", "32"],
    "MXFP8": ["--to", "e4m3", "--satfinite", "--block", "32"],
}
for _r in ["mxfp8", "mxfp6", "mxfp4", "nvfp4", "fp8-block128", "fp8-tensor", "fp8-row"]:
    RECIPES[f"--recipe {_r}"] = ["--recipe", _r]


def make_input(path, gib):
    """Eight f32 tensors of normal-ish values, `gib` GiB in all (written in pieces)."""
    n_total = int(gib * (1 << 30)) // 4
    per = n_total // 8 // 4096 * 4096
    header = {}
    at = 0
    for t in range(8):
        header[f"layers.{t}.weight"] = {"dtype": "F32", "shape": [per // 4096, 4096], "data_offsets": [at, at + 4 * per]}
        at += 4 * per
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    x = 0x9E3779B9
    chunk = bytearray()
    # A repeating block of pseudo-random moderate values: the content does not change the
    # conversion's speed, and writing 1 GiB from Python stays quick.
    for _ in range(1 << 16):
        x = (x * 1103515245 + 12345) & 0xFFFFFFFF
        chunk += struct.pack("<f", ((x >> 8) / (1 << 24) - 0.5) * 0.1)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        left = at
        while left:
            b = chunk[: min(left, len(chunk))]
            f.write(b)
            left -= len(b)


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--only", action="append", default=[], help="run only these conversions (names as printed)")
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "gpucvt"))
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=".") as d:
        src = os.path.join(d, "in.safetensors")
        make_input(src, a.gib)
        times = {"cp": []}
        times.update({k: [] for k in RECIPES if not a.only or k in a.only})
        for _ in range(a.runs):
            for name in times:
                out = os.path.join(d, "out.safetensors")
                if os.path.exists(out):
                    os.remove(out)
                subprocess.run(["sync"])
                if name == "cp":
                    times[name].append(timed(["cp", src, out]))
                else:
                    cmd = [a.bin, "convert", src, "-o", out, "--threads", str(a.threads), *RECIPES[name]]
                    times[name].append(timed(cmd))
        base = statistics.median(times["cp"])
        print(f"{'command':<18} {'median s':>9} {'x cp':>6}   ({a.gib} GiB f32, {a.runs} alternating runs, {a.threads} threads)")
        for name, ts in times.items():
            m = statistics.median(ts)
            print(f"{name:<18} {m:9.3f} {m / base:6.2f}")


if __name__ == "__main__":
    sys.exit(main())
