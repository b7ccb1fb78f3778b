#!/usr/bin/env python3
"""Ratio table of the bulk-conversion benchmark (crates/gpucvt-core/benches/bulk.rs).

Run `cargo bench -p gpucvt-kernels --bench bulk` first, then
`python3 scripts/bulk-bench-table.py [CRITERION_DIR] [--baseline NAME]...`. CRITERION_DIR
defaults to $CRITERION_HOME, else $CARGO_TARGET_DIR/criterion, else target/criterion.

On a noisy machine, run the benchmark several times with criterion baselines
(`cargo bench -p gpucvt-kernels --bench bulk -- --save-baseline r1`, then r2, r3) and pass
`--baseline r1 --baseline r2 --baseline r3`: every time is then the best (smallest) of the
runs' medians. Without `--baseline`, the last run (`new`) is used. Prints one
Markdown table per size: the median time per pass, the input throughput, and the ratios
roofline-time / kernel-time (so 1.0 is roofline speed, higher is faster), memcpy-time /
kernel-time, and the speed-up over `half` and `float8` where they have the same conversion.
The roofline of a kernel is the shift-truncate to its output width (16 bits for f16 and bf16,
8 bits for the narrow formats, a 32-bit mask loop for tf32). Stochastic kernels also show the
ratio to the roofline that reads the same random bytes (`rs roof`): `roofline-rs-16w` and
`roofline-rs-8w` (one random value in the output word, u16 or u8) for the `-rs` kernels,
`roofline-rs-16` and `roofline-rs-8` (one u32 per element) for the `-rs32` kernels.

`× paired` is the ratio to the kernel's own roofline (the plain one for rn/rz/rna/rp, the rs
one for stochastic kernels) measured just before it (`roof/NAME`), seconds apart rather than
the minutes between the group's rooflines and its last kernels: on a machine whose memory
speed drifts, this is the fair ratio for the 0.9× target.
"""
import json
import os
import sys


ARGS = sys.argv[1:]
BASELINES = [ARGS[i + 1] for i, a in enumerate(ARGS) if a == "--baseline"] or ["new"]
POSITIONAL = [a for i, a in enumerate(ARGS)
              if a != "--baseline" and (i == 0 or ARGS[i - 1] != "--baseline")]


def criterion_dir():
    if POSITIONAL:
        return POSITIONAL[0]
    if os.environ.get("CRITERION_HOME"):
        return os.environ["CRITERION_HOME"]
    if os.environ.get("CARGO_TARGET_DIR"):
        return os.path.join(os.environ["CARGO_TARGET_DIR"], "criterion")
    return "target/criterion"


def median_ns(path):
    """The smallest median over the chosen baselines, or None."""
    best = None
    for b in BASELINES:
        try:
            with open(os.path.join(path, b, "estimates.json")) as f:
                m = json.load(f)["median"]["point_estimate"]
        except FileNotFoundError:
            continue
        best = m if best is None else min(best, m)
    return best


def main():
    root = criterion_dir()
    groups = sorted(
        (g for g in os.listdir(root) if g.startswith("f32x")),
        key=lambda g: int(g[4:-2]),
    )
    if not groups:
        sys.exit(f"no f32x* benchmark groups under {root}")
    for g in groups:
        gdir = os.path.join(root, g)
        n = int(g[4:-2]) << 20
        t = {}
        for name in os.listdir(gdir):
            m = median_ns(os.path.join(gdir, name))
            if m is not None:
                t[name] = m
        def cases(sub):
            found = {}
            sdir = os.path.join(gdir, sub)
            if os.path.isdir(sdir):
                for name in os.listdir(sdir):
                    m = median_ns(os.path.join(sdir, name))
                    if m is not None:
                        found[name] = m
            return found

        kernels = cases("gpucvt")
        paired = cases("roof")

        def gbs(ns):
            return 4 * n / ns  # bytes per ns = GB/s of input

        print(f"### {g} ({n:,} elements)\n")
        print("baselines: " + ", ".join(
            f"{k} {gbs(v):.2f} GB/s" for k, v in sorted(t.items())) + "\n")
        print("| kernel | ms | GB/s in | × paired | × roofline | × rs roof | × memcpy | × half "
              "| × float8 |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")

        def order(name):
            fmt = name.split("-")[0]
            fo = ["f16", "bf16", "tf32", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "ue8m0"]
            return (fo.index(fmt) if fmt in fo else 99, name)

        def r(base, v):
            return f"{t[base] / v:.2f}" if base in t else "–"

        for name in sorted(kernels, key=order):
            v = kernels[name]
            fmt = name.split("-")[0]
            roof = {"f16": "roofline-16", "bf16": "roofline-16", "tf32": "roofline-32"}.get(
                fmt, "roofline-8")
            rs_roof = {"f16": "roofline-rs-16", "bf16": "roofline-rs-16"}.get(fmt, "roofline-rs-8")
            if name.endswith("-rs"):
                rs_roof += "w"  # the random values in the output word
            half = {"f16": "half-f16", "bf16": "half-bf16"}.get(fmt)
            f8 = {"e4m3": "float8-e4m3", "e5m2": "float8-e5m2"}.get(fmt)
            print(
                f"| {name} | {v / 1e6:.3f} | {gbs(v):.2f} | "
                f"{f'{paired[name] / v:.2f}' if name in paired else '–'} | {r(roof, v)} | "
                f"{r(rs_roof, v) if name.endswith(('-rs', '-rs32')) else '–'} | {r('memcpy', v)} | "
                f"{r(half, v) if half else '–'} | {r(f8, v) if f8 else '–'} |"
            )
        print()


if __name__ == "__main__":
    main()
