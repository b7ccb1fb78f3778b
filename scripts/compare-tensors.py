#!/usr/bin/env python3
"""Compares two gpucvt binaries' tensor-file outputs byte for byte, for a rebuild of the
tensor crate that must not change behaviour.

    scripts/compare-tensors.py OLD_BINARY NEW_BINARY [WORK_DIR]

Every run of `gpucvt convert` below is made with both binaries on the same inputs; what is
compared is the exit code, stdout and stderr (text and `--json`), and every file the run
left in its output folder (data, sidecars, metadata), by SHA-256. The runs cover every
recipe, scale rule, scale layout, scale format, block shape (N, RxC, row, tensor, along
either axis), the second level, stochastic rounding, the PTX modifiers, `--cvt`, tensor
selection, `--strict`, `--dry-run`, thread counts, and dequantization of each quantized
output, on the three file kinds (.safetensors, .npy, raw) with zeros, subnormals,
infinities, NaN, -inf masks, scalars, 1-d and odd shapes in the inputs.

Only the standard library is used, so that it runs wherever the binaries do. Exit code 0 when
everything is identical, 1 otherwise (the differing runs are listed).
"""
import hashlib
import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys


def f32_values(rng, n, kind):
    """`n` f32 values of a given character, specials included."""
    specials = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-45, -1e-45, 1.1754942e-38,
                3.4028235e38, -3.4028235e38, 448.0, 449.0, 464.0, 57344.0, 6.0, 7.0, 0.25, 0.125]
    out = []
    for i in range(n):
        if kind == "zeros":
            out.append(0.0)
        elif kind == "mask":
            out.append(-math.inf if i % 3 == 0 else rng.gauss(0, 1))
        elif kind == "tiny":
            out.append(rng.choice([1, -1]) * rng.random() * 2.0 ** rng.randint(-149, -120))
        elif kind == "wide":
            out.append(rng.choice([1, -1]) * rng.random() * 2.0 ** rng.randint(-30, 30))
        else:
            k = rng.random()
            if k < 0.03:
                v = rng.choice(specials)
                out.append(v if kind != "finite" or math.isfinite(v) else 0.0)
            elif k < 0.06:
                out.append(rng.gauss(0, 1) * 2.0 ** rng.randint(-140, -100))
            else:
                out.append(rng.gauss(0, 0.05) * (10.0 if i % 97 == 0 else 1.0))
    return out


def pack(dtype, values):
    """Little-endian bytes of `values` as F32, F16 or BF16 (bf16 by truncation of f32 bits
    plus round-half-even: only the bytes matter here, both binaries read the same file)."""
    if dtype == "F32":
        return struct.pack(f"<{len(values)}f", *values)
    if dtype == "F16":
        clipped = [v if not math.isfinite(v) or abs(v) < 65504 else math.copysign(65504, v)
                   for v in values]
        return struct.pack(f"<{len(values)}e", *clipped)
    words = struct.unpack(f"<{len(values)}I", struct.pack(f"<{len(values)}f", *values))
    out = []
    for w in words:
        if (w & 0x7F800000) == 0x7F800000 and w & 0x7FFFFF:
            out.append(0x7FC0)
        else:
            r = ((w + 0x7FFF + ((w >> 16) & 1)) >> 16) & 0xFFFF
            if (w & 0x7F800000) != 0x7F800000 and (r & 0x7F80) == 0x7F80:
                r = (r & 0x8000) | 0x7F7F  # a finite f32 stays finite (its largest bf16)
            out.append(r)
    return struct.pack(f"<{len(out)}H", *out)


def write_safetensors(path, tensors):
    header, blobs, at = {}, [], 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + len(data)]}
        blobs.append(data)
        at += len(data)
    header["__metadata__"] = {"made_by": "compare-tensors.py"}
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def write_npy(path, descr, shape, data):
    dims = "(" + "".join(f"{d}, " if len(shape) == 1 else f"{d}," for d in shape).rstrip(",") + ")"
    if len(shape) > 1:
        dims = "(" + ", ".join(str(d) for d in shape) + ")"
    text = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}"
    pad = 64 - (10 + len(text) + 1) % 64
    text = text + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode() + data)


def inputs(work):
    rng = random.Random(11)
    n = lambda shape: math.prod(shape) if shape else 1
    st = [
        ("layers.0.mlp.up_proj.weight", "F32", [256, 256], None),
        ("layers.0.mlp.down_proj.weight", "BF16", [128, 256], None),
        ("layers.0.attn.q_proj.weight", "F16", [64, 128], None),
        ("layers.0.norm.weight", "F32", [256], None),
        ("logit_scale", "F32", [], None),
        ("attn_mask", "F32", [32, 64], "mask"),
        ("zeros.weight", "F32", [64, 64], "zeros"),
        ("tiny.weight", "F32", [32, 32], "tiny"),
        ("wide.weight", "F32", [32, 128], "wide"),
        ("experts.weight", "F32", [3, 128, 256], None),
        ("odd.weight", "F32", [7, 33], None),
        ("ids", "I64", [16], "ints"),
    ]
    tensors = []
    for name, dtype, shape, kind in st:
        if kind == "ints":
            data = struct.pack("<16q", *range(16))
        else:
            data = pack(dtype, f32_values(rng, n(shape), kind or "normal"))
        tensors.append((name, dtype, shape, data))
    files = {"model.safetensors": os.path.join(work, "in", "model.safetensors")}
    os.makedirs(os.path.join(work, "in"), exist_ok=True)
    write_safetensors(files["model.safetensors"], tensors)
    for name, kind in [("w.npy", "normal"), ("mask.npy", "mask"), ("tiny.npy", "tiny"),
                       ("fin.npy", "finite")]:
        files[name] = os.path.join(work, "in", name)
        write_npy(files[name], "<f4", [256, 128], pack("F32", f32_values(rng, 256 * 128, kind)))
    files["h.npy"] = os.path.join(work, "in", "h.npy")
    write_npy(files["h.npy"], "<f2", [64, 64], pack("F16", f32_values(rng, 64 * 64, "normal")))
    files["b.npy"] = os.path.join(work, "in", "b.npy")
    write_npy(files["b.npy"], "<u2", [128, 64], pack("BF16", f32_values(rng, 128 * 64, "normal")))
    files["x.bin"] = os.path.join(work, "in", "x.bin")
    with open(files["x.bin"], "wb") as f:
        f.write(pack("F32", f32_values(rng, 8192, "normal")))
    files["xf.bin"] = os.path.join(work, "in", "xf.bin")
    with open(files["xf.bin"], "wb") as f:
        f.write(pack("F32", f32_values(rng, 8192, "finite")))
    files["bf.npy"] = os.path.join(work, "in", "bf.npy")
    write_npy(files["bf.npy"], "<u2", [128, 64], pack("BF16", f32_values(rng, 128 * 64, "finite")))
    return files


RECIPES = ["mxfp8", "mxfp6", "mxfp4", "nvfp4", "fp8-block128", "fp8-tensor", "fp8-row"]
PLAIN = [
    ["--to", "f16"], ["--to", "bf16"], ["--to", "bf16", "--mode", "rz"],
    ["--to", "e4m3", "--satfinite"], ["--to", "e4m3"], ["--to", "e5m2", "--mode", "rn"],
    ["--to", "e2m1", "--satfinite"], ["--to", "e2m3", "--satfinite"],
    ["--to", "e3m2", "--satfinite"], ["--to", "ue8m0", "--mode", "rp", "--satfinite"],
    ["--to", "f16", "--relu"], ["--to", "f16", "--ftz"], ["--to", "bf16", "--pzo"],
    ["--to", "f16", "--mode", "rs", "--seed", "3"],
    ["--to", "e4m3", "--satfinite", "--mode", "rs", "--seed", "5", "--rbits-width", "5"],
    ["--to", "e2m1", "--satfinite", "--mode", "rs", "--seed", "7"],
    ["--to", "f64"], ["--to", "tf32", "--mode", "rna"],
]
SCALED = [
    ["--to", "e4m3", "--satfinite", "--block", "32"],
    ["--to", "e4m3", "--satfinite", "--block", "32", "--axis", "0"],
    ["--to", "e2m1", "--satfinite", "--block", "16", "--scale", "ue4m3"],
    ["--to", "e2m1", "--satfinite", "--block", "16", "--scale", "ue4m3", "--scale-2"],
    ["--to", "e2m1", "--satfinite", "--block", "16", "--scale", "f32"],
    ["--to", "e2m1", "--satfinite", "--block", "32", "--scale", "bf16"],
    ["--to", "e4m3", "--satfinite", "--block", "64", "--scale", "f32"],
    ["--to", "e4m3", "--satfinite", "--block", "128x128", "--scale", "f32"],
    ["--to", "e4m3", "--satfinite", "--block", "32x32", "--scale", "ue8m0"],
    ["--to", "e4m3", "--satfinite", "--block", "row", "--scale", "f32"],
    ["--to", "e4m3", "--satfinite", "--block", "row", "--axis", "0", "--scale", "bf16"],
    ["--to", "e4m3", "--satfinite", "--block", "tensor", "--scale", "f32"],
    ["--to", "e5m2", "--block", "32", "--scale-rule", "rceil"],
    ["--to", "e2m3", "--satfinite", "--block", "32", "--scale-layout", "swizzled"],
    ["--to", "e4m3", "--satfinite", "--block", "32", "--mode", "rs", "--seed", "9"],
    ["--to", "e2m1", "--satfinite", "--block", "16", "--scale", "ue4m3", "--scale-2",
     "--mode", "rs", "--seed", "2"],
]


def runs(files):
    """(name, input, output name, arguments) of every run, and (name, of, arguments) of
    every dequantization of a run's output."""
    out, deq = [], []
    kinds = {"st": "model.safetensors", "npy": "w.npy", "mask": "mask.npy", "tiny": "tiny.npy",
             "h": "h.npy", "b": "b.npy", "raw": "x.bin", "fin": "fin.npy", "bf": "bf.npy",
             "rawf": "xf.bin"}
    extra = {"b": ["--from", "bf16"], "bf": ["--from", "bf16"], "raw": ["--from", "f32"],
             "rawf": ["--from", "f32"]}
    ext = {"st": ".safetensors", "raw": ".bin", "rawf": ".bin"}
    for k, f in kinds.items():
        e = ext.get(k, ".npy")
        base = extra.get(k, [])
        for i, a in enumerate(PLAIN):
            out.append((f"{k}-plain{i}", files[f], "out" + e, base + a))
        for r in RECIPES:
            rules = ["floor", "rceil", "ceil", "even"] if r.startswith("mx") else [None]
            for rule in rules:
                for layout in ["rows", "swizzled"]:
                    a = base + ["--recipe", r, "--scale-layout", layout]
                    if rule:
                        a += ["--scale-rule", rule]
                    name = f"{k}-{r}-{rule}-{layout}"
                    out.append((name, files[f], "out" + e, a))
                    deq.append((name, ["--recipe", r, "--scale-layout", layout]))
        for i, a in enumerate(SCALED):
            name = f"{k}-scaled{i}"
            out.append((name, files[f], "out" + e, base + a))
            d = [x for x in a if x not in ("--satfinite",)]
            d = strip(d, ["--mode", "--seed", "--scale-rule", "--to"])
            fmt = a[a.index("--to") + 1]
            deq.append((name, ["--from", fmt] + d))
    st = files["model.safetensors"]
    for name, a in [
        ("sel-tensor", ["--recipe", "mxfp8", "--tensor", "*.weight"]),
        ("sel-exclude", ["--recipe", "nvfp4", "--exclude", "*norm*", "--exclude", "experts*"]),
        ("sel-strict", ["--recipe", "mxfp4", "--strict"]),
        ("sel-strict-ok", ["--recipe", "mxfp4", "--strict", "--tensor", "layers.*"]),
        ("cvt-e4m3x2", ["--cvt", "cvt.rn.satfinite.e4m3x2.f32"]),
        ("cvt-bf16", ["--cvt", "cvt.rn.bf16.f32"]),
        ("dry-run", ["--recipe", "nvfp4", "--dry-run"]),
        ("dry-run-json", ["--recipe", "fp8-block128", "--dry-run", "--json"]),
        ("json", ["--recipe", "nvfp4", "--json"]),
        ("threads1", ["--recipe", "nvfp4", "--threads", "1"]),
        ("threads2", ["--recipe", "mxfp4", "--threads", "2"]),
        ("threads3-rs", ["--to", "e4m3", "--mode", "rs", "--threads", "3", "--block", "32"]),
        ("bad-block", ["--to", "e4m3", "--block", "7x"]),
        ("bad-to", ["--to", "e9m9"]),
        ("bad-axis", ["--to", "e4m3", "--block", "32", "--axis", "5"]),
    ]:
        out.append((name, st, "out.safetensors", a))
    return out, deq


def strip(args, names):
    out, skip = [], False
    for x in args:
        if skip:
            skip = False
            continue
        if x in names:
            skip = True
            continue
        out.append(x)
    return out


def snapshot(folder):
    return {f: hashlib.sha256(open(os.path.join(folder, f), "rb").read()).hexdigest()
            for f in sorted(os.listdir(folder))}


def run_all(binary, files, plan, work, tag):
    results = {}
    out, deq = plan
    for name, src, oname, args in out:
        folder = os.path.join(work, tag, name)
        os.makedirs(folder, exist_ok=True)
        p = subprocess.run([binary, "convert", src, "-o", os.path.join(folder, oname)] + args,
                           capture_output=True, cwd=folder)
        results[name] = (p.returncode, p.stdout.replace(folder.encode(), b"OUT"),
                         p.stderr.replace(folder.encode(), b"OUT"), snapshot(folder))
    for name, args in deq:
        folder = os.path.join(work, tag, name)
        produced = [f for f in os.listdir(folder) if f.startswith("out.") or f == "out.bin"]
        if not produced:
            continue
        oname = produced[0]
        dfolder = os.path.join(work, tag, name + "-deq")
        os.makedirs(dfolder, exist_ok=True)
        p = subprocess.run([binary, "convert", "--dequantize", os.path.join(folder, oname),
                            "-o", os.path.join(dfolder, "back" + os.path.splitext(oname)[1])] + args,
                           capture_output=True, cwd=dfolder)
        results[name + "-deq"] = (p.returncode, p.stdout.replace(folder.encode(), b"OUT")
                                  .replace(dfolder.encode(), b"DEQ"),
                                  p.stderr.replace(folder.encode(), b"OUT")
                                  .replace(dfolder.encode(), b"DEQ"), snapshot(dfolder))
    return results


def main():
    old, new = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    work = sys.argv[3] if len(sys.argv) > 3 else os.path.join("/tmp", f"compare-tensors-{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    files = inputs(work)
    plan = runs(files)
    a = run_all(old, files, plan, work, "old")
    b = run_all(new, files, plan, work, "new")
    bad = [n for n in a if a[n] != b.get(n)]
    ok = sum(1 for n in a if a[n][0] == 0)
    print(f"{len(a)} runs ({ok} succeeded, {len(a) - ok} refused), "
          f"{sum(len(v[3]) for v in a.values())} output files compared")
    for n in bad:
        print(f"DIFFERS: {n}")
        x, y = a[n], b.get(n, (None, b"", b"", {}))
        if x[0] != y[0]:
            print(f"  exit code {x[0]} -> {y[0]}")
        for what, i in [("stdout", 1), ("stderr", 2)]:
            if x[i] != y[i]:
                print(f"  {what}:\n    old: {x[i][:300]!r}\n    new: {y[i][:300]!r}")
        if x[3] != y[3]:
            print(f"  files: {x[3]} -> {y[3]}")
    if not bad:
        print("identical")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
