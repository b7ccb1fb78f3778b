"""The silicon harness on the CPU: its statements check clean, and its driver (chunking,
hashing, sampled inputs, mismatch search) agrees with `gpucvt sweep` through a NumPy stand-in
for the GPU, and finds differences that are planted in it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import harness  # noqa: E402
from standin import NumpyBackend  # noqa: E402

REPO = HERE.parent.parent
xxhash = pytest.importorskip("xxhash")


def _binary():
    b = os.environ.get("GPUCVT_BIN")
    if b:
        return b
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    for profile in ("release", "debug"):
        p = target / profile / "gpucvt"
        if p.exists():
            return str(p)
    pytest.skip("no gpucvt binary (set GPUCVT_BIN)")


@pytest.fixture(scope="module")
def gpucvt():
    return harness.Gpucvt(_binary(), threads=2)


@pytest.fixture(scope="module")
def sm90(gpucvt):
    return gpucvt.catalogue("sm_90", "9.0")


@pytest.fixture()
def scratch(tmp_path):
    return tmp_path


def shape(cat, form):
    (s,) = [s for s in cat.shapes if s.form == form]
    return s


def test_the_catalogue_is_gpucvts_legality_table(gpucvt, sm90):
    # The forms are gpucvt's own list for the target, each with a layout.
    forms = [s.form for s in sm90.shapes]
    assert len(forms) == len(set(forms)) > 500
    assert "cvt.rn.satfinite.e4m3x2.f32" in forms
    # Not legal on sm_90: FP4/FP6 and .rs arrive with sm_100a.
    assert not any(".e2m1x2" in f or f.startswith("cvt.rs.") for f in forms)
    newer = {s.form for s in gpucvt.catalogue("sm_100a").shapes}
    assert "cvt.rn.satfinite.e2m1x2.f32" in newer
    pairs = shape(sm90, "cvt.rn.f16x2.f32")
    assert pairs.units_per_instruction == 2
    # a (the high half) is the second unit of each pair in memory order.
    assert [(o.role, o.unit) for o in pairs.operands] == [("a", 1), ("b", 0)]


def test_every_generated_statement_checks_clean(gpucvt, sm90, scratch):
    assert harness.check_module(gpucvt, sm90, sm90.shapes, scratch) == []
    text = harness.ptx_module(sm90, sm90.shapes)
    assert text.count("\n    // cvt") == len(sm90.shapes)
    # 8-bit operands get .b8 registers of their own.
    assert "    cvt.rn.bf16.u8 %h0, b8_1;" in text.splitlines()


def test_a_wrong_statement_is_caught_by_the_check(gpucvt, sm90, scratch):
    # The check can fail: a form with a register too narrow for its source, and a form that
    # sm_90 does not have.
    bad = harness.Shape("cvt.rn.f16.f32", 16, 16, 2, 32, 1, (harness.Operand("a", 16, "unit", 0),), 1 << 32)
    newer = harness.Shape("cvt.rn.satfinite.e2m1x2.f32", 8, 8, 1, 32, 2,
                          (harness.Operand("a", 32, "unit", 1), harness.Operand("b", 32, "unit", 0)), 1 << 31)
    diags = harness.check_module(gpucvt, sm90, [bad, newer], scratch)
    lines = sorted({d["line"] for d in diags if d["severity"] == "error"})
    assert len(lines) == 2, diags


def test_nvidias_compilers_accept_every_generated_kernel(sm90, tmp_path):
    # NVRTC compiles the kernels of every sm_90 form and ptxas assembles them for sm_90:
    # NVIDIA's own verdict on each inline statement, short of running it. A kernel with a
    # form sm_90 lacks is refused, so the test can fail.
    import nvidia_tools

    tools = nvidia_tools.find()
    if tools is None:
        pytest.skip("NVIDIA's compiler packages are not installed (tests/requirements.lock)")
    lib, ptxas = tools
    shapes = harness.informative_order(sm90.shapes)
    status, log, ptx = nvidia_tools.nvrtc_ptx(lib, harness.cuda_source(shapes), "compute_90")
    assert status == 0, log
    assert ptx.count(".entry silicon_form_") == len(shapes)
    p = nvidia_tools.ptxas(ptxas, ptx, "sm_90", tmp_path)
    assert p.returncode == 0, p.stderr[:3000]

    newer = harness.Shape("cvt.rn.satfinite.e2m1x2.f32", 8, 8, 1, 32, 2,
                          (harness.Operand("a", 32, "unit", 1), harness.Operand("b", 32, "unit", 0)), 1 << 31)
    status, log, ptx = nvidia_tools.nvrtc_ptx(lib, harness.cuda_source([shapes[0], newer]), "compute_90")
    assert status == 0, log
    p = nvidia_tools.ptxas(ptxas, ptx, "sm_90", tmp_path)
    assert p.returncode != 0 and "e2m1x2" in p.stderr, p.stderr


def test_cuda_kernels_wire_operands_as_the_layout_says(sm90):
    src = harness.cuda_source([shape(sm90, "cvt.rn.f16x2.f32"), shape(sm90, "cvt.pack.sat.s8.s32.b32")])
    assert src.count('extern "C" __global__') == 2
    k0 = src[src.index("silicon_form_0"):src.index("silicon_form_1")]
    assert 'asm volatile("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(d) : "r"(s0), "r"(s1));' in k0
    assert "units[i * 2ull + 1ull] : ins * 2ull + 1ull" in k0.split("s0 =")[1].split(";")[0]
    k1 = src[src.index("silicon_form_1"):]
    # c is fixed at the value gpucvt's sweep uses; d is the whole .b32 register.
    assert "unsigned int s2 = (unsigned int)(0ull);" in k1
    assert "out[i] = (unsigned int)((unsigned long long)d & 4294967295ull);" in k1


def test_splitmix_words_are_gpucvts_stream(gpucvt, sm90, scratch):
    # A sampled 32-bit source's unit i is word i of the stream seeded with seed ^ 0xface.
    s = shape(sm90, "cvt.rn.f16.f32")
    units = gpucvt.units(s, harness.Inputs(seed=9, sample=5000), scratch)
    assert units.size == 5000
    assert np.array_equal(units, harness.splitmix_words(9 ^ 0xFACE, 0, 5000).astype(np.uint64))


@pytest.mark.parametrize("chunk", [1000, 4096, 1 << 16])
def test_exhaustive_16_bit_form_agrees_whatever_the_chunk(gpucvt, sm90, scratch, chunk):
    s = shape(sm90, "cvt.f32.f16")
    backend = NumpyBackend()
    d = harness.Driver(gpucvt, backend, scratch, chunk=chunk)
    r = d.run_form(0, s, harness.Inputs())
    assert r.agree and r.instructions == 1 << 16 and r.coverage == "exhaustive"
    # Every instruction ran once, in order, in chunks of at most `chunk`.
    firsts = [f for _, f, _ in backend.calls]
    assert firsts == list(range(0, 1 << 16, chunk))
    assert r.gpu_hash == gpucvt.sweep_hash(s, harness.Inputs())


@pytest.mark.parametrize(
    "form", ["cvt.rn.f16.f32", "cvt.rzi.s32.f32", "cvt.rn.f16x2.f32", "cvt.rn.f32.f64"]
)
def test_sampled_forms_agree(gpucvt, sm90, scratch, form):
    s = shape(sm90, form)
    d = harness.Driver(gpucvt, NumpyBackend(), scratch, chunk=3000)
    r = d.run_form(0, s, harness.Inputs(seed=4, sample=20_000))
    assert r.agree, r
    assert r.coverage.startswith("sampled")
    if form.endswith("f64"):
        # The boundary-dense set comes first, then the random units.
        assert r.instructions > 20_000
    else:
        assert r.instructions == 20_000 // s.units_per_instruction


def test_a_range_of_a_32_bit_sweep_agrees(gpucvt, sm90, scratch):
    # Part of an exhaustive 32-bit sweep (the whole is for the GPU): the instructions around
    # the f32 infinities and NaNs.
    s = shape(sm90, "cvt.rn.f16x2.f32")
    d = harness.Driver(gpucvt, NumpyBackend(), scratch, chunk=1 << 15)
    first = 0x7F7F0000 // 2
    assert d.gpu_hash(0, s, harness.Inputs(), first, 1 << 17) == gpucvt.sweep_hash(
        s, harness.Inputs(), first, 1 << 17
    )


def test_planted_differences_are_found_and_reported(gpucvt, sm90, scratch):
    s = shape(sm90, "cvt.rn.f16.f32")
    plan = harness.Inputs(seed=1, sample=50_000)
    faults = {3: 0x1, 20_000: 0x8000, 20_001: 0x4, 49_999: 0x10}
    d = harness.Driver(gpucvt, NumpyBackend(faults), scratch, chunk=7000, max_examples=3)
    r = d.run_form(0, s, plan)
    assert not r.agree
    # Three examples (the limit), the first differing instructions in order, with both
    # sides' bits and the inputs that produced them.
    assert [e.instruction for e in r.examples] == [3, 20_000, 20_001]
    units = gpucvt.units(s, plan, scratch)
    truth = NumpyBackend().run(0, s, 0, 50_000, 1, units)
    for e in r.examples:
        assert e.units == [int(units[e.instruction])]
        assert e.gpucvt == int(truth[e.instruction])
        assert e.gpu == int(truth[e.instruction]) ^ faults[e.instruction]
    # The search stopped once it had its examples: 49_999 was not reached.
    assert r.searched < 50_000 and r.differences == 3

    md = harness.report_markdown([r], {"device": "stand-in"})
    assert "**differ**" in md and "| 20000 |" in md
    j = json.loads(harness.results_json([r], {}))
    assert j["forms"][0]["agree"] is False and len(j["forms"][0]["examples"]) == 3


def test_every_difference_is_counted_without_a_limit(gpucvt, sm90, scratch):
    s = shape(sm90, "cvt.f32.f16")
    faults = {k: 1 << (k % 32) for k in range(0, 1 << 16, 4099)}
    d = harness.Driver(gpucvt, NumpyBackend(faults), scratch, chunk=5000)
    r = d.run_form(0, s, harness.Inputs())
    assert r.differences == len(faults) and r.searched == 1 << 16
    assert [e.instruction for e in r.examples] == sorted(faults)
    assert all(e.units == [e.instruction] for e in r.examples)


def test_a_backend_returning_the_wrong_count_is_an_error(gpucvt, sm90, scratch):
    class Short(NumpyBackend):
        def run(self, *a):
            return super().run(*a)[:-1]

    d = harness.Driver(gpucvt, Short(), scratch)
    with pytest.raises(harness.HarnessError, match="returned"):
        d.run_form(0, shape(sm90, "cvt.f32.f16"), harness.Inputs())


def simulate(shapes, budget_s, rate, per_sample=0.01):
    """A schedule run against a clock that advances by each form's modelled time."""
    now = [0.0]
    sched = harness.Schedule(shapes, budget_s, rate, seconds_per_sample=per_sample, clock=lambda: now[0])
    plan = []
    for s, inputs in sched:
        plan.append((s, inputs))
        now[0] += per_sample if inputs.sample is not None else s.every_input * rate
    return plan, now[0]


def test_the_schedule_runs_the_informative_forms_first_and_samples_what_does_not_fit(sm90):
    plan, spent = simulate(sm90.shapes, budget_s=10.0, rate=1e-9)
    assert sorted(s.form for s, _ in plan) == sorted(s.form for s in sm90.shapes)
    assert spent <= 10.0
    # Wide sources are always sampled; 10 s at 1 ns an instruction fits two 2^32 sweeps.
    for s, inputs in plan:
        if s.every_input is None:
            assert inputs.sample is not None
    big = [s for s, i in plan if i.sample is None and s.every_input >= 1 << 31]
    assert 1 <= len(big) <= 2
    # The first forms cover distinct (destination, modifiers) pairs, and they went first.
    head = plan[:50]
    keys = [(s.dest_type, s.modifiers()) for s, _ in head]
    assert len(set(keys)) == len(keys)
    assert all(i.sample is None for s, i in plan[:2] if s.every_input)
    # With time for everything, every form that can be is exhaustive.
    plan, _ = simulate(sm90.shapes, budget_s=1e9, rate=1e-9)
    assert all((i.sample is None) == (s.every_input is not None) for s, i in plan)


def test_the_schedule_learns_the_measured_rate(sm90):
    sched = harness.Schedule(sm90.shapes, 100.0, 1e-12, clock=lambda: 0.0)
    r = harness.FormResult("f", 1 << 32, "exhaustive", "", "", 4.0)
    for _ in range(20):
        sched.measured(r, harness.Inputs())
    assert abs(sched.rate - 4.0 / (1 << 32)) < 1e-12


def test_the_run_writes_its_report(gpucvt, tmp_path, monkeypatch):
    # The whole driver program, on the stand-in: two forms, one exhaustive and one sampled.
    import run

    monkeypatch.setenv("GPUCVT_BIN", gpucvt.binary)
    out = tmp_path / "out"
    code = run.main([str(out), "--backend", "standin", "--only", "cvt.f32.f16,cvt.rn.f32.f64",
                     "--sample", "3000", "--threads", "2"])
    assert code == 0
    j = json.loads((out / "results.json").read_text())
    got = {f["form"]: (f["agree"], f["coverage"]) for f in j["forms"]}
    assert got == {"cvt.f32.f16": (True, "exhaustive"),
                   "cvt.rn.f32.f64": (True, "sampled (3000 random units)")}
    md = (out / "report.md").read_text()
    assert "2 forms: 2 agree, 0 differ." in md and "numpy stand-in" in md
    assert "cvt.f32.f16" in (out / "kernels.cu").read_text()
    assert "every statement checks clean" in (out / "log.txt").read_text()
    # The scratch folder is gone.
    assert sorted(p.name for p in out.iterdir()) == ["forms.ptx", "kernels.cu", "log.txt", "report.md", "results.json"]


def test_run_sh_is_the_one_command(sm90):
    text = (REPO / "silicon" / "run.sh").read_text()
    assert "run.py" in text and "sm_90" in text
    assert os.access(REPO / "silicon" / "run.sh", os.X_OK)
