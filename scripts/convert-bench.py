#!/usr/bin/env python3
"""`gpucvt convert` of a 1 GiB f32 .safetensors file against `cp` of the same file, as
ratios measured in one run (alternating, so that both see the same machine).

    python3 scripts/convert-bench.py [--gib 1] [--runs 5] [--bin target/release/gpucvt]
        [--shards N [--layout LAYOUT]]

Each run removes the previous outputs and syncs first, so that `cp` and gpucvt both write
a new file from the page cache. Prints the median seconds of each command and its ratio to
`cp`'s median. The conversions are the guide's (docs/speed.md): e4m3, bf16, MXFP4, MXFP8, and every
`--recipe` (every conversion includes the writer's read-back self-check); `--only NAME`
(repeatable) runs some of them. `--shards N`: the same tensors as a checkpoint folder of N
shards (with its index and config.json), converted as a folder against `cp -r` of it;
`--layout` adds a stack's layout to the recipes that have it.
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


def make_input(path, gib, tensors=range(8), count=8):
    """`count` f32 tensors of normal-ish values, `gib` GiB in all (written in pieces); the
    file holds those of `tensors`."""
    n_total = int(gib * (1 << 30)) // 4
    per = n_total // count // 4096 * 4096
    header = {}
    at = 0
    for t in tensors:
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


def make_folder(d, gib, shards):
    """A checkpoint folder: 8 tensors per shard, `shards` shards, an index and a config."""
    os.makedirs(d)
    count = 8 * shards
    weight_map = {}
    for k in range(shards):
        name = f"model-{k + 1:05d}-of-{shards:05d}.safetensors"
        tensors = range(8 * k, 8 * k + 8)
        make_input(os.path.join(d, name), gib, tensors, count)
        weight_map.update({f"layers.{t}.weight": name for t in tensors})
    with open(os.path.join(d, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump({"model_type": "llama"}, f)


LAYOUTS = {
    "modelopt": ["nvfp4", "fp8-row", "fp8-block128"],
    "compressed-tensors": ["nvfp4", "mxfp4", "mxfp8", "fp8-tensor", "fp8-row", "fp8-block128"],
    "deepseek": ["fp8-block128"],
}


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
    ap.add_argument("--shards", type=int, default=0, help="a checkpoint folder of this many shards")
    ap.add_argument("--layout", choices=sorted(LAYOUTS), help="with --shards: a stack's layout")
    a = ap.parse_args()
    recipes = dict(RECIPES)
    if a.layout:
        recipes = {f"--recipe {r} --layout {a.layout}": ["--recipe", r, "--layout", a.layout] for r in LAYOUTS[a.layout]}
    with tempfile.TemporaryDirectory(dir=".") as d:
        if a.shards:
            src = os.path.join(d, "in")
            make_folder(src, a.gib, a.shards)
            out = os.path.join(d, "out")
            what = f"a folder of {a.shards} shards"
        else:
            src = os.path.join(d, "in.safetensors")
            make_input(src, a.gib)
            out = os.path.join(d, "out.safetensors")
            what = "one file"
        times = {"cp": []}
        times.update({k: [] for k in recipes if not a.only or k in a.only})
        for _ in range(a.runs):
            for name in times:
                subprocess.run(["rm", "-rf", out], check=True)
                subprocess.run(["sync"])
                if name == "cp":
                    times[name].append(timed(["cp", "-r", src, out]))
                else:
                    cmd = [a.bin, "convert", src, "-o", out, "--threads", str(a.threads), *recipes[name]]
                    times[name].append(timed(cmd))
        base = statistics.median(times["cp"])
        width = max(map(len, times))
        print(f"{'command':<{width}} {'median s':>9} {'x cp':>6}   ({a.gib} GiB f32 as {what}, {a.runs} alternating runs, {a.threads} threads)")
        for name, ts in times.items():
            m = statistics.median(ts)
            print(f"{name:<{width}} {m:9.3f} {m / base:6.2f}")


if __name__ == "__main__":
    sys.exit(main())
