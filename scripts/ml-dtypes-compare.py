#!/usr/bin/env python3
"""gpucvt's bulk f32 -> FP8/FP6/FP4 kernels against ml_dtypes (numpy `astype`), in one run.

Usage (from anywhere in the repository; needs `pip install numpy ml_dtypes` and cargo):

    python3 scripts/ml-dtypes-compare.py            # 1 Mi and 64 Mi elements
    python3 scripts/ml-dtypes-compare.py --small    # 1 Mi elements only
    python3 scripts/ml-dtypes-compare.py --json     # also print the numbers as JSON
    python3 scripts/ml-dtypes-compare.py --check    # also check bit agreement (see below)
    python3 scripts/ml-dtypes-compare.py --no-bench # Python side only (and --check)

What it measures, per size (1 Mi elements, in cache; 64 Mi, in memory):

- ml_dtypes: `x.astype(ml_dtypes.<type>)` of an f32 array for float8_e4m3fn, float8_e5m2,
  float6_e2m3fn, float6_e3m2fn and float4_e2m1fn, best (smallest) of several
  repetitions timed with time.perf_counter; its baseline is `np.copyto` of the same f32
  bytes into a preallocated array (numpy's memcpy).
- gpucvt: the criterion benchmark `cargo bench -p gpucvt-kernels --bench bulk` filtered to
  `memcpy` and the kernels `e4m3-rn e5m2-rn e2m3-rn e3m2-rn e2m1-rn`
  (`gpucvt_kernels::Kernel::convert`, one thread, `.satfinite`), read back from
  criterion's estimates (median time per pass) in $CRITERION_HOME, else
  $CARGO_TARGET_DIR/criterion, else target/criterion. `GPUCVT_BENCH_LARGE=0` is set for
  --small.

The Python timing is the best of its repetitions and criterion's is a median, which if
anything favours ml_dtypes. The inputs are generated with the benchmark's formula (sign and
mantissa random, biased exponent 100 + (r >> 24) % 50, so |x| from 2^-27 to 2^23: subnormal,
normal and overflowing results for every narrow format), from numpy's PCG64 instead of the
benchmark's xorshift: the same distribution, not the same bits. Both memcpy baselines are
printed so that a reader can see the state of the (shared, noisy) machine; compare ratios
measured in the same run only.

Semantics: both sides round to nearest even once per element, so the speed comparison is of
the same work; they differ on overflow. The benchmarked gpucvt kernels are the PTX
`.satfinite` conversions (overflow gives the largest finite value, NaN gives NaN where the
format has one). ml_dtypes has no satfinite: float8_e4m3fn overflows to NaN, float8_e5m2 to
Inf, and float6_e2m3fn / float6_e3m2fn / float4_e2m1fn (no Inf, no NaN) saturate to the
largest finite value; the script prints what the installed version does. Storage:
ml_dtypes stores one element per byte for FP6 and FP4 too (itemsize 1, no packing), and the
gpucvt kernels benchmarked here also write one element per byte (`Kernel::convert` into a
`u8` slice): the same bytes are read and written on both sides. The PTX x2 forms
(`cvt.rn.satfinite.e2m1x2.f32` etc.) pack two such lanes into a 16-bit word (FP8, FP6 in
the low 6 bits of each byte) or into one byte (FP4, two nibbles); that packing
(`gpucvt::ptx::slices::CvtKernel`) is not part of this comparison.

--check: for a few thousand random finite in-range f32 values per format, plus every tie
(midpoint between neighbouring finite values) and its two f32 neighbours, compares ml_dtypes'
bytes with `gpucvt eval --batch` on `cvt.rn.satfinite.<fmt>x2.f32 0x<a> 0x<b>` lines (lane
a is the high byte / high nibble of the result). Overflowing inputs are left out, where the
two differ by design. It uses $CARGO_TARGET_DIR/release/gpucvt (or target/release/gpucvt),
building it with `cargo build --release -p gpucvt-cli` if it is missing, or --gpucvt PATH.
Exits with status 1 if any value disagrees.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import ml_dtypes

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (gpucvt format name, ml_dtypes type name)
FORMATS = [
    ("e4m3", "float8_e4m3fn"),
    ("e5m2", "float8_e5m2"),
    ("e2m3", "float6_e2m3fn"),
    ("e3m2", "float6_e3m2fn"),
    ("e2m1", "float4_e2m1fn"),
]


def target_dir():
    return os.environ.get("CARGO_TARGET_DIR") or os.path.join(ROOT, "target")


def criterion_dir():
    return os.environ.get("CRITERION_HOME") or os.path.join(target_dir(), "criterion")


def inputs(n, seed=0x1234_5678_9ABC_DEF0):
    """`n` f32 values with the bulk benchmark's distribution (benches/common/mod.rs)."""
    r = np.random.default_rng(seed).integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    exp = np.uint32(100) + (r >> np.uint32(24)) % np.uint32(50)
    bits = (r & np.uint32(0x8000_0000)) | (exp << np.uint32(23)) | (r & np.uint32(0x007F_FFFF))
    return bits.view(np.float32)


def best_time(fn, min_reps, budget_s):
    """Smallest of at least `min_reps` timed calls, more while within `budget_s` seconds."""
    times = []
    start = time.perf_counter()
    while len(times) < min_reps or time.perf_counter() - start < budget_s:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
        if len(times) >= 1000:
            break
    return min(times), len(times)


def time_ml_dtypes(n):
    x = inputs(n)
    large = n > 1 << 20
    min_reps, budget = (3, 3.0) if large else (10, 1.0)
    res = {}
    dst = np.empty_like(x)
    np.copyto(dst, x)  # touch the pages once
    t, reps = best_time(lambda: np.copyto(dst, x), min_reps * 3, budget)
    res["memcpy"] = {"ns_per_elem": t * 1e9 / n, "reps": reps}
    del dst
    for fmt, name in FORMATS:
        dt = getattr(ml_dtypes, name)
        x.astype(dt)  # warm up
        t, reps = best_time(lambda: x.astype(dt), min_reps, budget)
        res[fmt] = {"ns_per_elem": t * 1e9 / n, "reps": reps}
    return res


def run_criterion(sizes):
    """Runs the filtered bulk benchmark; returns {n: {name: ns per element}}."""
    env = dict(os.environ)
    if sizes == [1 << 20]:
        env["GPUCVT_BENCH_LARGE"] = "0"
    else:
        env.pop("GPUCVT_BENCH_LARGE", None)
    env.pop("GPUCVT_BENCH_ONLY", None)
    kernels = "|".join(f for f, _ in FORMATS)
    filt = rf"^f32x[0-9]+Mi/(memcpy|gpucvt/({kernels})-rn)$"
    cmd = ["cargo", "bench", "-p", "gpucvt-core", "--bench", "bulk", "--", filt]
    print("running: " + " ".join(cmd[:-1]) + f" '{filt}'"
          + ("  (GPUCVT_BENCH_LARGE=0)" if "GPUCVT_BENCH_LARGE" in env else ""),
          file=sys.stderr)
    started = time.time()
    subprocess.run(cmd, cwd=ROOT, env=env, check=True, stdout=sys.stderr)
    root = criterion_dir()
    out = {}
    for n in sizes:
        g = os.path.join(root, f"f32x{n >> 20}Mi")
        out[n] = {}
        for name in ["memcpy"] + [f"gpucvt/{f}-rn" for f, _ in FORMATS]:
            path = os.path.join(g, name, "new", "estimates.json")
            if not os.path.exists(path) or os.path.getmtime(path) < started - 1:
                sys.exit(f"criterion did not write a fresh {path}")
            with open(path) as f:
                median = json.load(f)["median"]["point_estimate"]
            key = name.split("/")[-1].removesuffix("-rn")
            out[n][key] = median / n
    return out


def overflow_behaviour():
    """What the installed ml_dtypes gives for 1e9 and NaN, per type."""
    res = {}
    for fmt, name in FORMATS:
        dt = getattr(ml_dtypes, name)
        o, q = np.array([1e9, np.nan], np.float32).astype(dt)
        fin = ml_dtypes.finfo(dt)
        bits = np.array([o], dt).view(np.uint8)[0]
        kind = ("NaN" if np.isnan(float(o)) else "Inf" if np.isinf(float(o))
                else "max finite" if float(o) == float(fin.max) else repr(float(o)))
        res[fmt] = f"{kind} (0x{bits:02x})"
    return res


# ---- --check ---------------------------------------------------------------------------

def gpucvt_binary(path):
    if path:
        return path
    exe = os.path.join(target_dir(), "release", "gpucvt")
    if not os.path.exists(exe):
        print("building gpucvt (cargo build --release -p gpucvt-cli)", file=sys.stderr)
        subprocess.run(["cargo", "build", "--release", "-p", "gpucvt-cli"], cwd=ROOT,
                       check=True, stdout=sys.stderr)
    return exe


def check_values(dt, count, rng):
    """Random in-range f32 values plus every tie between finite values and its neighbours."""
    fin = ml_dtypes.finfo(dt)
    top = float(fin.max)
    x = inputs(count * 4, seed=int(rng.integers(1 << 62)))
    x = x[np.abs(x) <= top][:count]
    # every finite non-negative value of the format, in order
    width = int(np.dtype(dt).name.removeprefix("float")[0])  # 8, 6 or 4 bits
    codes = np.arange(1 << width, dtype=np.uint8)
    vals = np.unique(np.array([float(v) for v in codes.view(dt)
                               if np.isfinite(float(v)) and float(v) >= 0], np.float64))
    mids = ((vals[:-1] + vals[1:]) / 2).astype(np.float32)  # exact in f32
    ties = np.concatenate([mids, np.nextafter(mids, np.float32(0)),
                           np.nextafter(mids, np.float32(np.inf)), vals.astype(np.float32)])
    ties = np.concatenate([ties, -ties])
    ties = ties[np.abs(ties) <= top]
    allx = np.concatenate([x, ties]).astype(np.float32)
    if len(allx) % 2:
        allx = np.append(allx, np.float32(1.0))
    return allx


def run_check(exe, count):
    rng = np.random.default_rng(2026)
    failures = 0
    summary = {}
    for fmt, name in FORMATS:
        dt = getattr(ml_dtypes, name)
        x = check_values(dt, count, rng)
        want = x.astype(dt).view(np.uint8)
        bits = x.view(np.uint32)
        lines = "".join(f"cvt.rn.satfinite.{fmt}x2.f32 0x{a:08x} 0x{b:08x}\n"
                        for a, b in zip(bits[0::2], bits[1::2]))
        out = subprocess.run([exe, "eval", "--batch"], input=lines, capture_output=True,
                             text=True, check=True).stdout.split()
        got = []
        for word in out:
            if not word.startswith("0x"):
                sys.exit(f"gpucvt eval --batch: unexpected output {word!r}")
            d = int(word, 16)
            if fmt == "e2m1":
                got += [d >> 4 & 0xF, d & 0xF]
            else:
                got += [d >> 8 & 0xFF, d & 0xFF]
        got = np.array(got, np.uint8)
        bad = np.nonzero(got != want)[0]
        summary[fmt] = {"values": len(x), "disagree": len(bad)}
        print(f"check {fmt} ({name}): {len(x)} values, {len(bad)} disagree", file=sys.stderr)
        for i in bad[:5]:
            print(f"  f32 0x{bits[i]:08x} ({x[i]!r}): ml_dtypes 0x{want[i]:02x}, "
                  f"gpucvt 0x{got[i]:02x}", file=sys.stderr)
        failures += len(bad)
    return failures, summary


# ---- main ------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--small", action="store_true", help="1 Mi elements only (skip 64 Mi)")
    ap.add_argument("--json", action="store_true", help="also print the results as JSON")
    ap.add_argument("--check", action="store_true",
                    help="check bit agreement with `gpucvt eval --batch`")
    ap.add_argument("--check-count", type=int, default=4000,
                    help="random values per format for --check (default 4000)")
    ap.add_argument("--gpucvt", help="the gpucvt binary for --check")
    ap.add_argument("--no-bench", action="store_true",
                    help="skip the cargo benchmark (ml_dtypes timings only)")
    args = ap.parse_args()

    sizes = [1 << 20] if args.small else [1 << 20, 64 << 20]
    result = {"numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__,
              "sizes": {}, "ml_dtypes_overflow": overflow_behaviour()}

    check_failures = 0
    if args.check:
        check_failures, result["check"] = run_check(gpucvt_binary(args.gpucvt),
                                                    args.check_count)

    py = {}
    for n in sizes:
        print(f"timing ml_dtypes at {n >> 20} Mi elements", file=sys.stderr)
        py[n] = time_ml_dtypes(n)
    rs = None if args.no_bench else run_criterion(sizes)

    print(f"\nnumpy {np.__version__}, ml_dtypes {ml_dtypes.__version__}; "
          "ns per element, one thread; speedup = ml_dtypes time / gpucvt time\n")
    for n in sizes:
        p = py[n]
        r = rs[n] if rs else {}
        entry = {"elements": n, "ml_dtypes": p, "gpucvt": r, "speedup": {}}
        print(f"### f32 → narrow, {n >> 20} Mi elements\n")
        mem_py = p["memcpy"]["ns_per_elem"]
        mem_rs = r.get("memcpy")
        print("memcpy baselines (the same f32 bytes): numpy np.copyto "
              f"{mem_py:.4f} ns/element ({4 / mem_py:.1f} GB/s), Rust copy_from_slice "
              + (f"{mem_rs:.4f} ns/element ({4 / mem_rs:.1f} GB/s)" if mem_rs else "not run")
              + "\n")
        print("| format | ml_dtypes type | ml_dtypes ns/elem | gpucvt ns/elem | speedup | "
              "ml_dtypes × its memcpy | gpucvt × its memcpy |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for fmt, name in FORMATS:
            a = p[fmt]["ns_per_elem"]
            b = r.get(fmt)
            sp = a / b if b else None
            entry["speedup"][fmt] = sp
            print(f"| {fmt} | {name} | {a:.3f} | " + (f"{b:.4f}" if b else "–") + " | "
                  + (f"{sp:.0f}×" if sp else "–") + f" | {a / mem_py:.1f} | "
                  + (f"{b / mem_rs:.2f}" if b and mem_rs else "–") + " |")
        print()
        result["sizes"][str(n)] = entry
    print("Semantics: both round to nearest even, one rounding per element. gpucvt's kernels "
          "are the PTX .satfinite forms (overflow → largest finite); ml_dtypes has no "
          "satfinite. Overflow (1e9) in this ml_dtypes: " + ", ".join(
              f"{f} {v}" for f, v in result["ml_dtypes_overflow"].items()) + ".")
    print("Storage: ml_dtypes keeps one FP6/FP4 element per byte (no packing); the gpucvt "
          "kernels measured write one element per byte too (the PTX x2 packing is not "
          "measured here).")
    if args.check:
        total = sum(v["values"] for v in result["check"].values())
        print(f"Bit check against `gpucvt eval --batch`: {total} in-range values, "
              f"{check_failures} disagree.")
    if args.json:
        print(json.dumps(result, indent=2))
    sys.exit(1 if check_failures else 0)


if __name__ == "__main__":
    main()
