"""gpucvt.testing, the conformance kit, run against implementations nobody on the project
wrote (NumPy's and ml_dtypes' casts) and against deliberately wrong ones written here, each
of which must be caught in its class. Every expected answer comes from the Rust model
(through the kit's own vectors, or gpucvt.cvt's kernels); the counts a test expects are
computed from the cases' inputs, never written down."""

import doctest
import hashlib
import json
import pickle
import re
import subprocess

import numpy as np
import pytest

import gpucvt
from gpucvt import testing
from gpucvt.testing import Mismatch, assert_matches, vectors
from conftest import ml_dtypes, gpucvt_bin
import peers

F16_TINY = np.finfo(np.float16).tiny


def bf16_by_integers(a, ties="even"):
    """f32 -> bf16 round to nearest by integer arithmetic on the bits: add just under half
    an ulp (plus the kept bit's parity, for ties to even) and truncate. ``ties="away"`` adds
    exactly half, which rounds every tie away from zero: the fault under test."""
    u = a.view(np.uint32).astype(np.uint64)
    if ties == "even":
        u = u + 0x7FFF + ((u >> 16) & 1)
    else:
        u = u + 0x8000
    out = (u >> 16).astype(np.uint16)
    # PTX's canonical NaN.
    return np.where(np.isnan(a), np.uint16(0x7FFF), out)


def bf16x2_stochastic(a, b, rbits, swap=False):
    """``cvt.rs.satfinite.bf16x2.f32`` by integer arithmetic: each lane's 16 random bits
    are added below the kept bits of the magnitude, which is then truncated and clamped to
    the largest finite bf16 (``.satfinite``, infinities included). PTX gives lane ``a`` the
    high half of ``rbits``; ``swap=True`` gives it the low half (the fault under test)."""

    def lane(x, r):
        u = x.view(np.uint32)
        mag = u & np.uint32(0x7FFFFFFF)
        y = np.minimum((mag.astype(np.uint64) + r) >> 16, 0x7F7F).astype(np.uint32)
        y |= (u >> 16) & np.uint32(0x8000)
        return np.where(np.isnan(x), np.uint32(0x7FFF), y)

    hi, lo = rbits >> 16, rbits & np.uint32(0xFFFF)
    if swap:
        hi, lo = lo, hi
    return (lane(a, hi) << 16) | lane(b, lo)


def nonzero_classes(report):
    return {c for c, n in report.classes.items() if n}


# --- The vectors: the library's cases, laid out as documented ---------------------------


@pytest.mark.parametrize(
    "form", ["cvt.rn.satfinite.e4m3x2.f32", "cvt.rs.satfinite.bf16x2.f32", "cvt.rn.f16.f32"]
)
def test_the_arrays_are_the_cases_of_the_text_file(form):
    v = vectors(form)
    assert len(v) == v.cases == len(v.expected) > 0
    words = v.arguments(bits=True)
    assert [w.dtype for w in words] == [np.dtype(np.uint32)] * len(v.operands)
    assert all(w.shape == (v.cases,) for w in words)
    # The model's answers again, through gpucvt.cvt (the slice kernels, not the batch
    # evaluator the vectors come from): the operand and answer arrays line up.
    np.testing.assert_array_equal(gpucvt.cvt(form, *words), v.expected)
    for i in range(0, v.cases, max(1, v.cases // 50)):
        ins = " ".join(f"0x{int(w[i]):08x}" for w in words)
        digits = v.expected.dtype.itemsize * 2
        assert v.line(i) == f"{form} {ins} -> 0x{int(v.expected[i]):0{digits}x}"
    assert (v.rbits is not None) == form.startswith("cvt.rs")


def test_arguments_are_views_in_the_users_dtypes():
    v = vectors("cvt.rs.satfinite.bf16x2.f32")
    a, b, r = v.arguments()
    assert (a.dtype, b.dtype, r.dtype) == (np.float32, np.float32, np.uint32)
    # Views of the words: NaN payloads and signed zeros arrive intact.
    np.testing.assert_array_equal(a.view(np.uint32), v.inputs["a"])
    assert np.isnan(a).any() and np.signbit(a[a == 0]).any()
    assert v.arguments()[2] is v.rbits
    (x,) = vectors("cvt.f32.bf16").arguments()
    assert x.dtype == ml_dtypes.bfloat16
    (x,) = vectors("cvt.f32.bf16").arguments(bits=True)
    assert x.dtype == np.uint16
    # Packed sources have no dtype of their own: their words.
    (x,) = vectors("cvt.rn.f16x2.e4m3x2").arguments()
    assert x.dtype == np.uint16


def test_tile_and_visa_vectors():
    v = vectors("ftof : tile<4xf32> -> tile<4xf16>")
    assert [o.name for o in v.operands] == ["x"]
    assert v.inputs["x"].shape == v.expected.shape == (v.cases, 4)
    assert v.settings["semantics"] == "tileiras"
    np.testing.assert_array_equal(
        gpucvt.tile("ftof : tile<4xf32> -> tile<4xf16>", v.inputs["x"]), v.expected
    )
    assert_matches(v, lambda x: x.astype(np.float16), allow=("nan-encoding",))
    v = vectors("mov hf <- f", cr0="rtz")
    assert v.dialect == "visa" and v.rounding == "rz"
    np.testing.assert_array_equal(gpucvt.mov("mov hf <- f", v.inputs["src"], cr0="rtz"), v.expected)
    # NumPy rounds to nearest: the kit names the rounding the model used instead.
    with pytest.raises(Mismatch) as e:
        assert_matches(v, lambda x: x.astype(np.float16), allow=("nan-encoding", "saturation"))
    assert nonzero_classes(e.value.report) - {"nan-encoding", "saturation"} == {"rounding"}
    assert {d.detail for d in e.value.report.disagreements if d.class_ == "rounding"} == {
        "matches rn"
    }


# --- The manifest ------------------------------------------------------------------------


def test_the_manifest_says_what_made_the_cases():
    v = vectors("cvt.rn.satfinite.e4m3x2.f32", target="sm_100a")
    m = v.manifest
    assert m["gpucvt_version"] == v.gpucvt_version == gpucvt.__version__
    assert m["instruction"] == v.form and m["cases"] == v.cases
    assert (v.target, v.level, v.seed, v.count) == ("sm_100a", 1, 0, 0)
    assert v.rounding == "rn" and v.policy["satfinite"] is True
    assert re.fullmatch("[0-9a-f]{64}", v.sha256) and re.fullmatch("[0-9a-f]{64}", v.cases_sha256)
    assert "file" not in m and "kind" not in m
    # cases_sha256 is the hash of the case lines, as the docs say.
    lines = "".join(v.line(i) + "\n" for i in range(v.cases))
    assert v.cases_sha256 == hashlib.sha256(lines.encode()).hexdigest()
    w = vectors("cvt.rn.satfinite.e4m3x2.f32", level=2, seed=3, count=100)
    assert (w.level, w.seed, w.count, w.cases) == (2, 3, 100, v.cases + 100)


@pytest.mark.parametrize("form", ["cvt.rn.satfinite.e4m3x2.f32", "cvt.rs.satfinite.bf16x2.f32"])
def test_the_hashes_are_stable_across_runs_and_thread_counts(form):
    for level, seed in [(1, 0), (2, 11)]:
        count = 3000 if level == 2 else None
        runs = [
            vectors(form, level=level, seed=seed, count=count, threads=t) for t in (1, 2, None, 1)
        ]
        assert len({(r.sha256, r.cases_sha256) for r in runs}) == 1
        for r in runs[1:]:
            np.testing.assert_array_equal(r.expected, runs[0].expected)
    other = vectors(form, level=2, seed=12, count=3000)
    assert other.cases_sha256 != runs[0].cases_sha256


def test_the_manifest_and_lines_equal_the_clis(tmp_path):
    exe = gpucvt_bin()
    if exe is None:
        pytest.skip("no gpucvt binary (set GPUCVT_BIN)")
    form = "cvt.rs.satfinite.bf16x2.f32"
    out = tmp_path / "v.txt"
    args = ["vectors", form, "--level", "2", "--seed", "5", "--count", "200", "-o", str(out)]
    subprocess.run([exe, *args], check=True, capture_output=True)
    v = vectors(form, level=2, seed=5, count=200)
    cli = json.loads((tmp_path / "v.txt.manifest.json").read_text())
    assert {k: x for k, x in cli.items() if k not in ("file", "kind")} == v.manifest
    assert hashlib.sha256(out.read_bytes()).hexdigest() == v.sha256
    cases = [line for line in out.read_text().splitlines() if not line.startswith("#")]
    assert cases == [v.line(i) for i in range(v.cases)]


# --- NumPy's casts -------------------------------------------------------------------------


def test_numpy_f32_to_f16_is_cvt_rn_f16_f32_but_for_nan_encodings():
    # NumPy keeps a NaN's sign and payload where PTX writes its canonical NaN; every number
    # (ties, subnormals, overflow to infinity) rounds as the GPU rounds it.
    r = assert_matches("cvt.rn.f16.f32", lambda a: a.astype(np.float16), allow=("nan-encoding",))
    assert r.ok and nonzero_classes(r) <= {"nan-encoding"}
    assert r.agree > 0.99 * r.cases


def test_numpy_f16_to_f32_is_cvt_f32_f16_but_for_nan_encodings():
    r = assert_matches("cvt.f32.f16", lambda a: a.astype(np.float32), allow=("nan-encoding",))
    assert nonzero_classes(r) <= {"nan-encoding"}


def test_numpy_overflows_where_satfinite_saturates():
    with pytest.raises(Mismatch) as e:
        assert_matches("cvt.rn.satfinite.f16.f32", lambda a: a.astype(np.float16), max_report=10**6)
    r = e.value.report
    assert nonzero_classes(r) - {"nan-encoding"} == {"saturation"}
    details = {d.detail for d in r.disagreements if d.class_ == "saturation"}
    assert details == {"the model saturates, the answer overflows"}
    assert assert_matches(
        "cvt.rn.satfinite.f16.f32",
        lambda a: a.astype(np.float16),
        allow=("nan-encoding", "saturation"),
    ).ok


# --- ml_dtypes' casts (recorded for the versions peers.py names) ---------------------------


def pack2(dtype, lane_bits):
    """A two-lane packed PTX form from ml_dtypes' scalar cast: ``a`` in the high lane."""

    def fn(a, b):
        hi = a.astype(dtype).view(np.uint8).astype(np.uint16)
        lo = b.astype(dtype).view(np.uint8).astype(np.uint16)
        return (hi << lane_bits) | lo

    return fn


@pytest.mark.parametrize(
    "form, dtype",
    [
        ("cvt.rn.satfinite.e4m3x2.f32", ml_dtypes.float8_e4m3fn),
        ("cvt.rn.satfinite.e5m2x2.f32", ml_dtypes.float8_e5m2),
    ],
)
def test_ml_dtypes_fp8_casts_overflow_where_satfinite_saturates(form, dtype):
    peers.ml_dtypes_kit_recorded()
    fn = pack2(dtype, 8)
    with pytest.raises(Mismatch) as e:
        assert_matches(form, fn, max_report=10**6)
    r = e.value.report
    # Rounds as .rn does; past the largest finite value it overflows (to NaN for e4m3fn,
    # infinity for e5m2), and it keeps the NaN's sign where PTX writes 0x7f.
    assert nonzero_classes(r) == {"saturation", "nan-encoding"}
    assert {d.detail for d in r.disagreements if d.class_ == "saturation"} == {
        "the model saturates, the answer overflows"
    }
    assert assert_matches(form, fn, allow=("saturation", "nan-encoding")).ok


def test_ml_dtypes_e2m1_cast_gives_nan_a_zero():
    peers.ml_dtypes_kit_recorded()
    form = "cvt.rn.satfinite.e2m1x2.f32"
    v = vectors(form)
    a, b = v.arguments()
    fn = pack2(ml_dtypes.float4_e2m1fn, 4)
    r = v.check(fn(a, b).astype(np.uint8), max_report=v.cases)
    # e2m1 has no NaN: PTX's .satfinite writes +6 (its largest value, 0x7), ml_dtypes 0.7 a
    # zero. Nothing else differs: every disagreement is a case with a NaN lane, decided by it.
    nan_cases = np.isnan(a) | np.isnan(b)
    assert nonzero_classes(r) == {"other"} and r.classes["other"] == nan_cases.sum()
    for d in r.disagreements:
        assert np.isnan((a, b)[d.lane][d.case])
        assert int(d.got, 16) >> (4 * (1 - d.lane)) & 0x7 == 0


def test_ml_dtypes_bf16_casts():
    peers.ml_dtypes_kit_recorded()
    v = vectors("cvt.rn.bf16.f32")
    (a,) = v.arguments()
    r = v.check(a.astype(ml_dtypes.bfloat16))
    # Round to nearest even as PTX; a NaN keeps its sign (0x7fc0, 0xffc0) where PTX writes
    # the canonical 0x7fff.
    assert nonzero_classes(r) == {"nan-encoding"} and r.classes["nan-encoding"] == np.isnan(a).sum()
    # The widening is exact, NaN payloads included, on both sides.
    assert_matches("cvt.f32.bf16", lambda x: x.astype(np.float32))


# --- Deliberately wrong implementations: each caught, in its class -----------------------


def test_a_dropped_tie_is_a_rounding_disagreement():
    form = "cvt.rn.bf16.f32"
    # The control: the same arithmetic with ties to even matches bit for bit.
    assert assert_matches(form, bf16_by_integers).disagree == 0
    v = vectors(form)
    with pytest.raises(Mismatch) as e:
        assert_matches(v, lambda a: bf16_by_integers(a, ties="away"), max_report=10**6)
    r = e.value.report
    u = v.inputs["a"]
    # The ties whose even neighbour is the lower one in magnitude: the only cases that move.
    ties = ((u & 0xFFFF) == 0x8000) & ((u >> 16) & 1 == 0) & ~np.isnan(v.arguments()[0])
    assert nonzero_classes(r) == {"rounding"}
    assert r.classes["rounding"] == r.disallowed == ties.sum() > 0
    assert {d.detail for d in r.disagreements} == {"matches rna"}
    assert [d.case for d in r.disagreements] == list(np.flatnonzero(ties))
    assert isinstance(e.value, AssertionError) and "FAIL:" in str(e.value)
    assert "rounding" in str(e.value) and r.text in str(e.value)


def test_the_low_rbits_half_for_lane_a_is_an_rbits_disagreement():
    form = "cvt.rs.satfinite.bf16x2.f32"
    v = vectors(form)
    assert assert_matches(v, bf16x2_stochastic).disagree == 0

    def swapped(a, b, rbits):
        return bf16x2_stochastic(a, b, rbits, swap=True)

    with pytest.raises(Mismatch) as e:
        assert_matches(v, swapped)
    r = e.value.report
    assert nonzero_classes(r) == {"rbits"}
    # The inferred rule is the model's with the two lanes' fields exchanged, and it
    # explains every case.
    model = dict(re.findall(r"(\w+): (rbits\[\d+:\d+\])", r.rbits.model))
    assert r.rbits.rule == f"a: {model['b']}, b: {model['a']}"
    assert r.rbits.explains == r.rbits.cases == v.cases
    assert "rbits: the answers follow" in r.text
    # At level 2 too, with random rbits.
    with pytest.raises(Mismatch) as e:
        assert_matches(form, swapped, level=2, count=2000, seed=9)
    assert nonzero_classes(e.value.report) == {"rbits"}


def test_flushed_subnormal_inputs_are_subnormal_disagreements():
    def flushing(a):
        return np.where(np.abs(a) < F16_TINY, np.copysign(np.float16(0), a), a).astype(np.float32)

    v = vectors("cvt.f32.f16")
    with pytest.raises(Mismatch) as e:
        assert_matches(v, flushing, allow=("nan-encoding",))
    r = e.value.report
    (a,) = v.arguments()
    subnormal = (a != 0) & (np.abs(a) < F16_TINY)
    assert nonzero_classes(r) - {"nan-encoding"} == {"subnormal"}
    assert r.disallowed == r.classes["subnormal"] == subnormal.sum() > 0
    assert all(d.detail == "a subnormal input flushed" for d in r.disagreements)


def test_a_lost_sign_of_zero_is_a_sign_of_zero_disagreement():
    def unsigned_zeros(a):
        y = a.astype(np.float16)
        return np.where(y == 0, np.float16(0), y)

    v = vectors("cvt.rn.f16.f32")
    with pytest.raises(Mismatch) as e:
        assert_matches(v, unsigned_zeros, allow=("nan-encoding",))
    r = e.value.report
    e16 = v.expected.view(np.float16)
    negative_zeros = (e16 == 0) & np.signbit(e16)
    assert nonzero_classes(r) - {"nan-encoding"} == {"sign-of-zero"}
    assert r.disallowed == negative_zeros.sum() > 0


def test_allow_tolerates_a_class_and_returns_the_report():
    def ties_away(a):
        return bf16_by_integers(a, ties="away")

    r = assert_matches("cvt.rn.bf16.f32", ties_away, allow=("rounding",))
    assert r.ok and r.disagree == r.classes["rounding"] > 0 and r.allowed == ("rounding",)
    assert r.to_dict()["ok"] is True and r.to_dict()["classes"]["rounding"] == r.disagree
    # max_report bounds the disagreements kept, not the counts.
    r = assert_matches(
        "cvt.rn.bf16.f32", ties_away, allow="rounding", max_report=2
    )
    assert len(r.disagreements) == 2 and r.classes["rounding"] > 2


def test_the_mismatch_pickles_with_its_report():
    with pytest.raises(Mismatch) as e:
        assert_matches("cvt.rn.bf16.f32", lambda a: bf16_by_integers(a, ties="away"))
    back = pickle.loads(pickle.dumps(e.value))
    assert str(back) == str(e.value) and back.report.classes == e.value.report.classes


def test_results_in_other_dtypes():
    v = vectors("cvt.rn.bf16.f32")
    good = bf16_by_integers(v.arguments()[0])
    for results in [good.astype(np.uint64), good.view(ml_dtypes.bfloat16), good.view(np.int16),
                    good.astype(">u2"), good.astype(np.uint32)]:
        assert v.check(results).disagree == 0, results.dtype
    # Bits above the result's width are the implementation's answer too: not ignored.
    r = testing.check(v, good.astype(np.uint32) | np.uint32(1 << 20))
    assert r.disagree == r.cases and nonzero_classes(r) == {"other"}


# --- Errors ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def f16_vectors():
    return vectors("cvt.rn.f16.f32")


@pytest.mark.parametrize(
    "returned, message",
    [
        (lambda a: list(a.astype(np.float16)), "returned list, not an array"),
        (lambda a: None, "returned NoneType, not an array"),
        (lambda a: 3, "not an array"),
        (lambda a: a.astype(np.float16)[:-1], "need shape"),
        (lambda a: a.astype(np.float16).reshape(-1, 1), "need shape"),
        (lambda a: a, "32-bit encodings, for the 16-bit results"),
        (lambda a: a.astype(np.uint8), "cannot hold the 16-bit results"),
        (lambda a: a.astype(np.complex64), "dtype complex64"),
        (lambda a: a > 0, "dtype bool"),
        (lambda a: a.astype(object), "dtype object"),
    ],
)
def test_bad_results_are_value_errors(f16_vectors, returned, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        assert_matches(f16_vectors, returned)


def test_bad_requests():
    with pytest.raises(gpucvt.IllegalInstruction):
        vectors("cvt.rn.f16.f33")
    with pytest.raises(ValueError, match="level 3"):
        vectors("cvt.rn.f16.f32", level=3)
    with pytest.raises(ValueError, match="level 2 only"):
        vectors("cvt.rn.f16.f32", count=5)
    with pytest.raises(ValueError, match="AMD"):  # not built for AMD yet (nor its options)
        vectors("v_cvt_pk_fp8_f32 v1, v2, v3")
    with pytest.raises(ValueError, match="threads"):
        vectors("cvt.rn.f16.f32", threads=0)
    with pytest.raises(TypeError):
        vectors(b"cvt.rn.f16.f32")
    unknown = 'unknown class "nan" in allow; the classes are nan-encoding'
    with pytest.raises(ValueError, match=unknown):
        assert_matches("cvt.f32.f16", lambda a: a.astype(np.float32), allow=("nan",))
    with pytest.raises(ValueError, match="max_report"):
        assert_matches("cvt.f32.f16", lambda a: a.astype(np.float32), max_report=-1)
    v = vectors("cvt.f32.f16")
    with pytest.raises(ValueError, match="level: options of the cases"):
        assert_matches(v, lambda a: a.astype(np.float32), level=2)
    with pytest.raises(TypeError, match="callable"):
        assert_matches(v, None)
    # The function's own errors are its own.
    with pytest.raises(ZeroDivisionError):
        assert_matches(v, lambda a: 1 / 0)
    with pytest.raises(TypeError):  # one operand, not two
        assert_matches(v, lambda a, b: a)


def test_the_classes_are_the_libraries():
    assert list(testing.CLASSES) == [
        "nan-encoding", "saturation", "sign-of-zero", "subnormal", "rounding", "rbits", "other"
    ]
    r = vectors("cvt.f32.f16").check(vectors("cvt.f32.f16").expected)
    assert list(r.classes) == list(testing.CLASSES) and r.ok and r.disagree == 0


def test_the_docstring_examples_run():
    r = doctest.testmod(testing, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert r.attempted > 0 and r.failed == 0
