"""Speed of ``gpucvt.astype`` as ratios measured in one run (the machines are shared and
noisy, so absolute times are not compared across runs).

    python python/benchmarks/astype.py [--n 67108864] [--small 4194304] [--reps 5]
    python python/benchmarks/astype.py --threads [--reps 5]

Prints, for f32 -> e4m3, e5m2, e2m1 and bf16 (round to nearest even):
- one thread, ``n`` elements: gpucvt against ``x.astype(ml_dtypes type)`` (the issue's target:
  at least 20x); against the Rust slice kernel (``Kernel::convert``) on the same data, timed
  inside Rust into a preallocated buffer (target: at most 1.3x: ``astype`` adds its result's
  allocation and the call); and against a plain copy of the same input bytes (``np.copyto``);
- one thread, ``n`` elements, into a reused buffer: ``astype(..., out=buf)`` against the same
  Rust slice kernel into a reused buffer (both write memory already touched, so the ratio is
  the cost of the call and the checks: target about 1x);
- ``small`` elements: two threads against one (target: at least 1.6x), beside a two-thread
  copy of the same bytes against a one-thread copy, the limit memory bandwidth sets;
- one element: gpucvt's call against ml_dtypes' one-element ``astype`` (target: at most 3x).
Each figure is the best of ``reps`` runs.

``--threads`` prints instead, for sizes 2^16 to 2^24 and conversions of each kernel cost
(f32 -> bf16, e4m3, e2m1 by the f32 kernels; f32 -> e4m3 with ``mode="rs"``; f64 -> bf16 by
the exact core), the time with ``threads=2`` and with the default (every core) as ratios to
one thread: ``astype`` splits an array only where a part is large enough to pay for its
thread, so no ratio should be far below 1 (more threads never slower).
"""

from __future__ import annotations

import argparse
import threading
import time

import ml_dtypes
import numpy as np

import gpucvt
from gpucvt import _gpucvt

TARGETS = [("e4m3", ml_dtypes.float8_e4m3fn), ("e5m2", ml_dtypes.float8_e5m2),
           ("e2m1", ml_dtypes.float4_e2m1fn), ("bf16", ml_dtypes.bfloat16)]


def best(f, reps):
    t = float("inf")
    for _ in range(reps):
        s = time.perf_counter()
        f()
        t = min(t, time.perf_counter() - s)
    return t


def copy_threads(src, dst, threads):
    """A copy of src into dst split over `threads` threads (NumPy releases the GIL)."""
    parts = np.array_split(np.arange(src.size), threads)
    def work(p):
        np.copyto(dst[p[0]:p[-1] + 1], src[p[0]:p[-1] + 1])
    ts = [threading.Thread(target=work, args=(p,)) for p in parts]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


def threads_by_size(reps):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(1 << 24) * 8).astype(np.float32)
    x64 = x.astype(np.float64)
    cases = [("f32 -> bf16", x, "bf16", {}), ("f32 -> e4m3", x, "e4m3", {}),
             ("f32 -> e2m1", x, "e2m1", {}), ("f32 -> e4m3 rs", x, "e4m3", {"mode": "rs"}),
             ("f64 -> bf16 (exact core)", x64, "bf16", {})]
    print(f"time with 2 threads and with the default, against 1 thread (best of {reps}; "
          "above 1: faster)")
    print("| conversion | elements | 1 thread ms | 2 threads | default |")
    print("| --- | --- | --- | --- | --- |")
    for label, src, dst, kw in cases:
        for k in (16, 18, 20, 22, 23, 24):
            if label.startswith("f64") and k > 22:
                continue
            xs = src[: 1 << k]
            t1 = best(lambda: gpucvt.astype(xs, dst, threads=1, **kw), reps)
            t2 = best(lambda: gpucvt.astype(xs, dst, threads=2, **kw), reps)
            td = best(lambda: gpucvt.astype(xs, dst, **kw), reps)
            print(f"| {label} | 2^{k} | {t1 * 1e3:.3f} | {t1 / t2:.2f}x | {t1 / td:.2f}x |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 26)
    ap.add_argument("--small", type=int, default=1 << 22)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", action="store_true")
    a = ap.parse_args()
    if a.threads:
        threads_by_size(a.reps * 4)
        return
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(a.n) * 8).astype(np.float32)
    out = np.empty_like(x)
    t_copy = best(lambda: np.copyto(out, x), a.reps)
    print(f"one thread, {a.n} elements (best of {a.reps}); copy of the input {t_copy * 1e3:.1f} ms")
    print("| f32 -> | gpucvt ms | ml_dtypes ms | gpucvt / ml_dtypes speed | Rust kernel ms "
          "| gpucvt time / kernel time | gpucvt time / copy time |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, ml in TARGETS:
        t_g = best(lambda: gpucvt.astype(x, name, threads=1), a.reps)
        t_m = best(lambda: x.astype(ml), max(1, a.reps // 2))
        scratch = np.empty(a.n, dtype=np.uint16 if name == "bf16" else np.uint8)
        t_k = _gpucvt._bench_kernel(x, scratch, "f32", name, a.reps)
        del scratch
        print(f"| {name} | {t_g * 1e3:.1f} | {t_m * 1e3:.1f} | {t_m / t_g:.1f}x | {t_k * 1e3:.1f} "
              f"| {t_g / t_k:.2f} | {t_g / t_copy:.2f} |")

    print(f"\none thread, {a.n} elements, into a reused buffer (best of {a.reps})")
    print("| f32 -> | astype(out=) ms | Rust kernel ms | astype(out=) time / kernel time "
          "| astype (fresh result) time / astype(out=) time |")
    print("| --- | --- | --- | --- | --- |")
    for name, _ in TARGETS:
        buf = np.empty(a.n, dtype=np.uint16 if name == "bf16" else np.uint8)
        gpucvt.astype(x, name, threads=1, out=buf)  # touch the buffer's pages once
        t_o = best(lambda: gpucvt.astype(x, name, threads=1, out=buf), a.reps)
        t_k = _gpucvt._bench_kernel(x, buf, "f32", name, a.reps)
        t_g = best(lambda: gpucvt.astype(x, name, threads=1), a.reps)
        del buf
        print(f"| {name} | {t_o * 1e3:.1f} | {t_k * 1e3:.1f} | {t_o / t_k:.2f} | {t_g / t_o:.2f} |")

    xs = x[: a.small]
    outs = np.empty_like(xs)
    c1 = best(lambda: copy_threads(xs, outs, 1), a.reps * 4)
    c2 = best(lambda: copy_threads(xs, outs, 2), a.reps * 4)
    print(f"\n{a.small} elements: two threads against one (copy of the same bytes: {c1 / c2:.2f}x)")
    print("| f32 -> | 1 thread ms | 2 threads ms | speed-up |")
    print("| --- | --- | --- | --- |")
    for name, _ in TARGETS:
        t1 = best(lambda: gpucvt.astype(xs, name, threads=1), a.reps * 4)
        t2 = best(lambda: gpucvt.astype(xs, name, threads=2), a.reps * 4)
        print(f"| {name} | {t1 * 1e3:.2f} | {t2 * 1e3:.2f} | {t1 / t2:.2f}x |")

    one = np.float32([1.5])
    print("\none element (best of 20 batches of 1000 calls)")
    print("| f32 -> | gpucvt us | ml_dtypes us | ratio |")
    print("| --- | --- | --- | --- |")
    for name, ml in TARGETS:
        def calls(f):
            return best(lambda: [f() for _ in range(1000)], 20) / 1000
        g = calls(lambda: gpucvt.astype(one, name))
        m = calls(lambda: one.astype(ml))
        print(f"| {name} | {g * 1e6:.2f} | {m * 1e6:.2f} | {g / m:.1f}x |")


if __name__ == "__main__":
    main()
