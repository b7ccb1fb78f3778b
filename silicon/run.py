"""Runs every PTX `cvt` form legal on a target on the GPU and in gpucvt, and reports.

    python3 silicon/run.py OUTDIR [--target sm_90] [--budget SECONDS] [--forms N]

Writes OUTDIR/report.md, OUTDIR/results.json, OUTDIR/forms.ptx (the statements checked),
OUTDIR/kernels.cu (what ran) and OUTDIR/log.txt. See docs/silicon.md.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def packages(names):
    """`name version` of each of `names` that is installed, comma-separated."""
    from importlib import metadata

    found = []
    for n in names:
        try:
            found.append(f"{n} {metadata.version(n)}")
        except metadata.PackageNotFoundError:
            pass
    return ", ".join(found) or "none found"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--target", default="sm_90")
    ap.add_argument("--arch", default=None, help="NVRTC architecture (default: the target's, e.g. sm_90)")
    ap.add_argument("--ptx-version", default="9.0", help="PTX ISA version the compiler emits (nvcc 13.0: 9.0)")
    ap.add_argument("--budget", type=float, default=420.0,
                    help="seconds for the whole run, from its start; forms that do not fit are sampled")
    ap.add_argument("--sample", type=int, default=1 << 24)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--forms", type=int, default=None, help="run only the first N forms (in the run order)")
    ap.add_argument("--rate", type=float, default=2.0e-10,
                    help="estimated seconds per instruction, both sides (for the budget)")
    ap.add_argument("--threads", type=int, default=None, help="gpucvt's threads (default: every core)")
    ap.add_argument("--only", default=None, help="comma-separated forms to run (default: every form)")
    ap.add_argument("--backend", choices=["cupy", "standin"], default="cupy",
                    help="standin: the tests' NumPy stand-in for a GPU (a few forms only)")
    a = ap.parse_args(argv)

    out = a.outdir
    out.mkdir(parents=True, exist_ok=True)
    log = open(out / "log.txt", "a")

    def say(msg: str) -> None:
        line = f"[{time.strftime('%H:%M:%S')}] {msg}"
        print(line, flush=True)
        log.write(line + "\n")
        log.flush()

    start = time.monotonic()
    gpucvt = harness.Gpucvt(harness.default_binary(REPO), a.threads)
    cat = gpucvt.catalogue(a.target, a.ptx_version)
    say(f"{len(cat.shapes)} forms legal on {cat.target} at PTX {cat.ptx_version}")
    scratch = harness.scratch_dir(out)

    (out / "forms.ptx").write_text(harness.ptx_module(cat, cat.shapes))
    diags = harness.check_module(gpucvt, cat, cat.shapes, scratch)
    if diags:
        for d in diags[:20]:
            say(f"check: {d}")
        say(f"gpucvt check reports {len(diags)} diagnostics on the generated statements: stopping")
        return 2
    say("every statement checks clean with gpucvt check")

    shapes = harness.informative_order(cat.shapes)
    if a.only:
        wanted = a.only.split(",")
        unknown = sorted(set(wanted) - {s.form for s in shapes})
        if unknown:
            say(f"not legal on {cat.target}: {', '.join(unknown)}")
            return 2
        shapes = [s for s in shapes if s.form in wanted]
    if a.forms is not None:
        shapes = shapes[: a.forms]
    (out / "kernels.cu").write_text(harness.cuda_source(shapes))

    if a.backend == "cupy":
        from cupy_backend import CupyBackend

        backend = CupyBackend(a.arch or a.target)
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))
        from standin import NumpyBackend

        backend = NumpyBackend()
    t = time.monotonic()
    backend.prepare(shapes)
    say(f"compiled {len(shapes)} kernels in {time.monotonic() - t:.1f} s on {backend.device()}")

    driver = harness.Driver(gpucvt, backend, scratch)
    header = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "device": backend.device(),
        "host": f"{platform.node()} ({platform.machine()})",
        "target": f"{cat.target}, PTX {cat.ptx_version}",
        "gpucvt": gpucvt.binary,
        # The device machine's image provides these (nothing is installed there): recorded so
        # that a run names the versions it used.
        "packages": packages(["cupy", "cupy-cuda12x", "cupy-cuda13x", "numpy", "xxhash"]),
        "inputs": f"every input where it fit a {a.budget:.0f} s run, else a seeded sample of {a.sample} units (seed {a.seed}); 64-bit sources always sampled",
    }
    results = []
    # What is left of the budget after the set-up (compiling the kernels above all).
    left = a.budget - (time.monotonic() - start)
    schedule = harness.Schedule(shapes, left, a.rate, a.sample, a.seed)
    try:
        for i, (s, inputs) in enumerate(schedule):
            r = driver.run_form(shapes.index(s), s, inputs)
            schedule.measured(r, inputs)
            results.append(r)
            say(f"{i + 1}/{len(shapes)} {r.form}: {'agree' if r.agree else 'DIFFER'} "
                f"({r.instructions} instructions, {r.coverage}, {r.seconds:.2f} s)")
    finally:
        (out / "report.md").write_text(harness.report_markdown(results, header))
        (out / "results.json").write_text(harness.results_json(results, header))
        for f in scratch.iterdir():
            f.unlink()
        scratch.rmdir()
    differ = sum(not r.agree for r in results)
    say(f"done: {len(results)} forms, {differ} differ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
