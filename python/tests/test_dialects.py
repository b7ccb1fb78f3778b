"""gpucvt.cvt, mov and tile against `gpucvt eval --batch`; IllegalInstruction; bad input."""

import doctest
import pickle
import subprocess

import numpy as np
import pytest

import gpucvt
import gpucvt._dialects
from gpucvt import _gpucvt
from conftest import gpucvt_bin, ml_dtypes

ROWS = 64


def batch(lines, *args):
    """`gpucvt eval --batch ARGS` on `lines`: one output line per input line."""
    exe = gpucvt_bin()
    if exe is None:
        pytest.skip("no gpucvt binary (set GPUCVT_BIN)")
    r = subprocess.run(
        [exe, "eval", "--batch", *args],
        input="".join(line + "\n" for line in lines),
        capture_output=True,
        text=True,
        check=True,
    )
    out = r.stdout.splitlines()
    assert len(out) == len(lines)
    return out


def container(bits):
    return np.dtype(f"uint{max(8, 1 << (bits - 1).bit_length())}")


#: Patterns every float operand meets: zeros, ones, infinities, NaNs, the extremes.
SPECIAL_F32 = [0, 0x80000000, 0x3F800000, 0xBF800000, 0x7F800000, 0xFF800000, 0x7FC00000,
               0x7F7FFFFF, 0x00000001, 0x00800000, 0x43960000, 0x477FF000]


def random_words(rng, bits, fmt, n):
    w = rng.integers(0, 1 << 64, size=n, dtype=np.uint64, endpoint=False)
    if bits < 64:
        w &= np.uint64((1 << bits) - 1)
    if fmt == "f32" and n >= len(SPECIAL_F32):
        w[: len(SPECIAL_F32)] = SPECIAL_F32
    elif fmt is not None and bits <= 64:
        # Small values too, not only random patterns (integers near zero, floats near one).
        w[:4] = [0, 1, (1 << bits) - 1, 1 << (bits - 1)]
    return w.astype(container(bits))


def operands_of(instr, rng, n=ROWS):
    return [random_words(rng, bits, fmt, n) for (_, bits, fmt, _) in instr.operands()]


def hexes(ops, i):
    return " ".join(f"0x{int(o[i]):x}" for o in ops)


def test_every_legal_ptx_form_equals_eval_batch():
    rng = np.random.default_rng(30)
    forms = gpucvt.cvt_forms("sm_100a")
    assert len(forms) > 200 and "cvt.rn.satfinite.e4m3x2.f32" in forms
    lines, want_of = [], []
    results = {}
    for form in forms:
        instr = _gpucvt.instruction("ptx", form, target="sm_100a")
        ops = operands_of(instr, rng)
        got = gpucvt.cvt(form, *ops, target="sm_100a")
        assert got.shape == (ROWS,), form
        assert got.dtype == container(instr.result_shape()[0]), form
        results[form] = got
        for i in range(ROWS):
            lines.append(f"{form} {hexes(ops, i)}")
            want_of.append((form, i))
    out = batch(lines, "--target", "sm_100a")
    bad = [(f, i, line, hex(int(results[f][i])))
           for (f, i), line in zip(want_of, out) if line.startswith("error") or int(line, 16) != int(results[f][i])]
    assert not bad, bad[:5]


def test_forms_of_older_targets_and_versions():
    sm80 = gpucvt.cvt_forms("sm_80")
    assert "cvt.rn.satfinite.e4m3x2.f32" not in sm80
    assert set(sm80) < set(gpucvt.cvt_forms("sm_100a"))
    assert len(gpucvt.cvt_forms("sm_90", ptx_version="7.8")) < len(gpucvt.cvt_forms("sm_90"))


VISA_TYPES = ["ud", "d", "uw", "w", "ub", "b", "df", "f", "v", "vf", "bool", "uq", "uv", "q", "hf", "bf"]


@pytest.mark.parametrize("cr0", [0, 0x4C0, "rtz", "ru", "rd", 0x1000])
def test_every_visa_mov_equals_eval_batch(cr0):
    rng = np.random.default_rng(7)
    lines, expect = [], []
    for dst in VISA_TYPES:
        for src in VISA_TYPES:
            for sat in ["", ".sat"]:
                text = f"mov{sat} {dst} <- {src}"
                try:
                    instr = _gpucvt.instruction("visa", text, cr0=str(cr0))
                except gpucvt.IllegalInstruction as e:
                    assert e.diagnostics and e.diagnostics[0].rule.startswith("visa."), text
                    lines.append(f"{text} 0x0")
                    expect.append(("error", str(e)))
                    continue
                (_, bits, fmt, _), = instr.operands()
                x = random_words(rng, bits, fmt, 16)
                got = gpucvt.mov(text, x, cr0=cr0)
                dbits, k = instr.result_shape()
                for i in range(16):
                    lines.append(f"{text} 0x{int(x[i]):x}")
                    if k > 1:
                        assert got.shape == (16, k)
                        v = sum(int(e) << (dbits * j) for j, e in enumerate(got[i]))
                    else:
                        assert got.shape == (16,)
                        v = int(got[i])
                    expect.append(("bits", v))
    out = batch(lines, "--cr0", str(cr0))
    for line, text, (kind, v) in zip(out, lines, expect):
        if kind == "error":
            assert line == f"error: {v}", text
        else:
            assert not line.startswith("error") and int(line, 16) == v, (text, line, hex(v))


def amd_instructions():
    """Every instruction llvm-mc 22 assembled for gfx942, gfx950 and gfx1200 (the AMD
    dialect's test data), without llvm-mc's remarks."""
    import re
    from pathlib import Path

    data = Path(__file__).resolve().parents[2] / "crates/gpucvt/tests/data/amd"
    out = []
    for target in ["gfx942", "gfx950", "gfx1200"]:
        for line in (data / f"enum_{target}.txt").read_text().splitlines():
            text = re.sub(r"/\*.*?\*/", "", line.split(";")[0]).strip()
            if text and text not in out:
                out.append(text)
    return out


@pytest.mark.parametrize("target", ["gfx942", "gfx950", "gfx1200"])
@pytest.mark.parametrize("fp16_ovfl", [False, True])
def test_every_amd_instruction_equals_eval_batch(target, fp16_ovfl):
    rng = np.random.default_rng(11)
    lines, expect = [], []
    evaluated = 0
    for text in amd_instructions():
        try:
            instr = _gpucvt.instruction("amd", text, target=target)
        except ValueError as e:
            lines.append(f"{text} 0x0")
            expect.append(("error", str(e)))
            continue
        ops = operands_of(instr, rng, 16)
        got = gpucvt.amd(text, *ops, target=target, fp16_ovfl=fp16_ovfl, old=0x12345678)
        assert got.shape == (16,)
        evaluated += 1
        for i in range(16):
            lines.append(f"{text} {hexes(ops, i)}")
            expect.append(("bits", int(got[i])))
    assert evaluated >= 6  # gfx942 has six of them, the others more
    out = batch(lines, "--target", target, "--mode-fp16-ovfl", str(int(fp16_ovfl)),
                "--old-dst", "0x12345678")
    for line, text, (kind, v) in zip(out, lines, expect):
        if kind == "error":
            assert line.startswith("error: "), (text, line)
        else:
            assert not line.startswith("error") and int(line, 16) == v, (text, line, hex(v))


def test_amd_needs_a_target_and_checks_its_state():
    with pytest.raises(TypeError, match="target must be a str"):
        gpucvt.amd("v_cvt_pk_fp8_f32 v1, v2, v3", 1.0, 0.0, target=None)
    with pytest.raises(ValueError, match="unknown AMD target \"gfx9000\""):
        gpucvt.amd("v_cvt_pk_fp8_f32 v1, v2, v3", 1.0, 0.0, target="gfx9000")
    with pytest.raises(ValueError, match="old must be a 32-bit value"):
        gpucvt.amd("v_cvt_pk_fp8_f32 v1, v2, v3", 1.0, 0.0, target="gfx950", old=1 << 32)
    with pytest.raises(ValueError, match="is not an AMD conversion instruction"):
        gpucvt.amd("cvt.rn.f16.f32", 1.0, target="gfx950")
    # FP16_OVFL: an overflow saturates instead of giving NaN.
    big = np.float32(1e6)
    nan = gpucvt.amd("v_cvt_pk_fp8_f32 v1, v2, v3", big, np.float32(0), target="gfx950")
    sat = gpucvt.amd("v_cvt_pk_fp8_f32 v1, v2, v3", big, np.float32(0), target="gfx950", fp16_ovfl=True)
    assert int(nan) & 0xFF != int(sat) & 0xFF and int(sat) & 0xFF == 0x7E


@pytest.mark.parametrize("semantics", ["tileiras", "spec"])
def test_every_tile_op_equals_eval_batch(semantics):
    rng = np.random.default_rng(11)
    ops = gpucvt.tile_ops()
    assert len(ops) > 100
    lines, expect = [], []
    n = 48
    for op in ops:
        try:
            instr = _gpucvt.instruction("tile", op, semantics=semantics)
        except gpucvt.IllegalInstruction as e:  # tileiras does not compile it for sm_100a
            lines.append(f"{op} 0x0 0x0")
            expect.append(("error", str(e)))
            continue
        (_, bits, fmt, _), = instr.operands()
        x = random_words(rng, bits, fmt, 2 * n).reshape(n, 2)
        try:
            got = gpucvt.tile(op, x, semantics=semantics)
            rows = [("bits", list(map(int, r))) for r in got]
        except ValueError:  # an undefined element: row by row
            rows = []
            for r in x:
                try:
                    rows.append(("bits", list(map(int, gpucvt.tile(op, r, semantics=semantics)))))
                except ValueError as e:
                    assert not isinstance(e, gpucvt.IllegalInstruction)
                    rows.append(("error", str(e).split(": ", 1)[1]))
        for r, want in zip(x, rows):
            lines.append(f"{op} 0x{int(r[0]):x} 0x{int(r[1]):x}")
            expect.append(want)
    out = batch(lines, "--semantics", semantics)
    w = {}
    for line, text, (kind, v) in zip(out, lines, expect):
        if kind == "error":
            assert line == f"error: {v}", text
        else:
            assert [int(t, 16) for t in line.split()] == v, (text, line, v)
        w[kind] = w.get(kind, 0) + 1
    assert w["bits"] > 1000


@pytest.mark.parametrize("op", [
    "ftof : tile<f16> -> tile<f8E4M3FN>",
    "ftof rounding<zero> : tile<f16> -> tile<bf16>",
    "ftof : tile<bf16> -> tile<f8E5M2>",
    "ftof rounding<zero> : tile<f16> -> tile<f8E8M0FNU>",
    "ftof : tile<f16> -> tile<f32>",
    "ftoi signed : tile<bf16> -> tile<i8>",
    "itof unsigned : tile<i16> -> tile<f16>",
])
def test_tile_ops_on_every_16_bit_input_equal_eval_batch(op):
    # Every source pattern: the kernels that run such lowerings against the exact evaluator.
    x = np.arange(1 << 16, dtype=np.uint16)
    got = gpucvt.tile(op, x)
    out = batch([f"{op} 0x{v:x}" for v in range(1 << 16)])
    assert [int(w, 16) for w in out] == got.tolist()


def test_tile_shapes_broadcast_and_batch():
    op = "ftof : tile<2xf32> -> tile<2xf16>"
    assert gpucvt.tile(op, 1.0).tolist() == [0x3C00, 0x3C00]  # a scalar fills the tile
    x = np.float32([[1.0, 2.0], [3.0, 4.0], [0.5, -1.0]])
    got = gpucvt.tile(op, x)
    assert got.shape == (3, 2) and got.dtype == np.uint16
    assert got.view(np.float16).tolist() == x.tolist()
    with pytest.raises(ValueError, match="does not fit the tile of shape"):
        gpucvt.tile(op, np.float32([1.0, 2.0, 3.0]))
    # A 0-d tile: elementwise over any array.
    s = gpucvt.tile("ftof : tile<f32> -> tile<bf16>", np.float32([[1.0], [2.0]]))
    assert s.shape == (2, 1) and s.tolist() == [[0x3F80], [0x4000]]
    # spec: the CLI's message for the tile of the undefined element.
    with pytest.raises(ValueError, match=r"undefined \(spec semantics\): element 1: ftoi: NaN input; results: 0x01 undefined"):
        gpucvt.tile("ftoi signed : tile<2xf32> -> tile<2xi8>", np.float32([[1, 1], [1, np.nan]]), semantics="spec")
    # undefined="mask": the undefined elements masked, the others as with "raise".
    x = np.float32([[1, 1], [1, np.nan], [300, -2], [-0.5, 127.9]])
    op2 = "ftoi signed : tile<2xf32> -> tile<2xi8>"
    m = gpucvt.tile(op2, x, semantics="spec", undefined="mask")
    assert isinstance(m, np.ma.MaskedArray) and m.shape == (4, 2)
    assert m.mask.tolist() == [[False, False], [False, True], [True, False], [False, False]]
    assert m.data.tolist() == [[1, 1], [1, 0], [0, 0xFE], [0, 127]]
    assert (gpucvt.tile(op2, x[3], semantics="spec") == m.data[3]).all()
    assert not gpucvt.tile(op2, x, undefined="mask").mask.any()  # tileiras defines every element
    big = np.tile(x, (1 << 15, 1))
    mb = gpucvt.tile(op2, big, semantics="spec", undefined="mask", threads=4)
    assert (mb.mask == np.tile(m.mask, (1 << 15, 1))).all() and (mb.data == np.tile(m.data, (1 << 15, 1))).all()
    with pytest.raises(ValueError, match="undefined must be"):
        gpucvt.tile(op2, x, undefined="nan")
    # tileiras on an older target.
    with pytest.raises(gpucvt.IllegalInstruction) as e:
        gpucvt.tile("ftof : tile<f32> -> tile<f8E5M2>", 1.0, target="sm_80")
    assert e.value.diagnostics
    with pytest.raises(ValueError, match="invalid semantics"):
        gpucvt.tile(op, 1.0, semantics="exact")
    with pytest.raises(ValueError, match="invalid tile_version"):
        gpucvt.tile(op, 1.0, tile_version="12.0")


def test_illegal_forms_raise_with_diagnostics():
    with pytest.raises(gpucvt.IllegalInstruction) as e:
        gpucvt.cvt("cvt.rn.f32.f16", np.uint16(0))
    d = e.value.diagnostics
    assert isinstance(e.value, ValueError)
    assert d[0].rule == "ptx.rounding-illegal" and (d[0].line, d[0].column) == (1, 4)
    assert d[0].severity == "error" and ".rn" in d[0].message
    with pytest.raises(gpucvt.IllegalInstruction) as e:
        gpucvt.cvt("cvt.rn.satfinite.e2m1x2.f32", 1.0, 1.0, target="sm_90")
    assert e.value.diagnostics[0].rule == "ptx.target"
    # Located in the form's text, as the file checker locates it: at `.e2m1x2`.
    assert (e.value.diagnostics[0].line, e.value.diagnostics[0].column) == (1, 17)
    # The same message as the CLI's.
    assert batch(["cvt.rn.satfinite.e2m1x2.f32 0x0 0x0"], "--target", "sm_90")[0] == f"error: {e.value}"
    with pytest.raises(gpucvt.IllegalInstruction) as e:
        gpucvt.cvt("@%p cvt.rs.f16x2.f32", 1.0, 1.0, 0, target="sm_90")
    assert e.value.diagnostics[0][:4] == (1, 4, "error", "ptx.target")
    with pytest.raises(gpucvt.IllegalInstruction):
        gpucvt.cvt("cvt.rs.satfinite.e2m1x4.f32", 1, 1, 1, 1, 0, target="sm_100a", ptx_version="8.6")
    with pytest.raises(gpucvt.IllegalInstruction) as e:
        gpucvt.mov("mov v <- f", np.float32(1))
    assert e.value.diagnostics[0].rule == "visa.type-pair"
    with pytest.raises(gpucvt.IllegalInstruction) as e:
        gpucvt.tile("ftof : tile<f32> -> tile<f32>", 1.0)
    assert "no-op" in str(e.value) and e.value.diagnostics
    # Pickles with its diagnostics.
    p = pickle.loads(pickle.dumps(e.value))
    assert p.diagnostics == e.value.diagnostics and str(p) == str(e.value)


def test_bad_names_are_value_errors_with_the_cli_message():
    for text, args in [
        ("add.f32", {}),
        ("cvt.rn.f16.f32", {"target": "sm_7"}),
        ("cvt.rn.f16.f32", {"ptx_version": "1.9"}),
    ]:
        with pytest.raises(ValueError) as e:
            gpucvt.cvt(text, 1.0, **args)
        assert not isinstance(e.value, gpucvt.IllegalInstruction)
    assert batch(["add.f32 0x0"])[0] == "error: " + str(pytest.raises(ValueError, gpucvt.cvt, "add.f32", 1).value)
    with pytest.raises(ValueError, match="cr0"):
        gpucvt.mov("mov hf <- f", 1.0, cr0="fast")
    with pytest.raises(ValueError, match="cr0 must be"):
        gpucvt.mov("mov hf <- f", 1.0, cr0=-1)
    with pytest.raises(ValueError, match="is not a PTX cvt"):
        gpucvt.cvt("mov hf <- f", 1.0)
    with pytest.raises(ValueError, match="is not a vISA move"):
        gpucvt.mov("cvt.rn.f16.f32", 1.0)
    with pytest.raises(ValueError, match="is not a Tile IR"):
        gpucvt.tile("cvt.rn.f16.f32", 1.0)
    with pytest.raises(TypeError):
        gpucvt.cvt("cvt.rn.f16.f32", 1.0, target=90)
    with pytest.raises(TypeError):
        gpucvt.mov("mov hf <- f", 1.0, cr0=True)


def test_operand_kinds():
    f = "cvt.rn.f16.f32"
    one = gpucvt.cvt(f, np.uint32(0x3F800000))
    assert one.shape == () and one.dtype == np.uint16 and int(one) == 0x3C00
    assert int(gpucvt.cvt(f, np.float32(1.0))) == 0x3C00
    assert int(gpucvt.cvt(f, 1.0)) == 0x3C00  # float64: rounded into f32 first
    assert int(gpucvt.cvt(f, 0x3F800000)) == 0x3C00  # a Python int: bits
    # Other float dtypes round to nearest even into the operand's type.
    assert int(gpucvt.cvt("cvt.f32.f16", np.float32(65504.0))) == 0x477FE000
    assert int(gpucvt.cvt("cvt.f32.bf16", ml_dtypes.bfloat16(1.5))) == 0x3FC00000
    assert int(gpucvt.cvt("cvt.f64.f32", np.float32(0.1))) == np.float64(np.float32(0.1)).view(np.uint64)
    # Signed integers: two's complement for integer operands only.
    assert gpucvt.cvt("cvt.rn.f32.s8", np.int8([-1, -128, 127])).view(np.float32).tolist() == [-1, -128, 127]
    assert gpucvt.cvt("cvt.rn.f32.s16", np.int64([-5])).view(np.float32).tolist() == [-5]
    assert gpucvt.cvt("cvt.rn.f32.u16", np.uint16([65535])).view(np.float32).tolist() == [65535]
    with pytest.raises(ValueError, match="negative"):
        gpucvt.cvt(f, np.int32(-1))
    with pytest.raises(ValueError, match="does not fit"):
        gpucvt.cvt("cvt.rn.f32.s8", np.int16(-129))
    with pytest.raises(ValueError, match=r"element 1: operand a = 0x100 does not fit in 8 bits"):
        gpucvt.cvt("cvt.rn.f32.u8", np.uint16([1, 256]))
    with pytest.raises(ValueError, match=r"element 5 \(index \(1, 2\)\): operand a = 0x100 does not"):
        gpucvt.cvt("cvt.rn.f32.u8", np.uint16([[1, 2, 3], [4, 5, 256]]))
    with pytest.raises(TypeError, match="unsigned integer bit patterns"):
        gpucvt.cvt("cvt.rn.f16x2.e4m3x2", np.float16(1.0))  # a packed operand
    with pytest.raises(TypeError, match="give integers"):
        gpucvt.cvt("cvt.rn.f32.s32", np.float32(1.0))
    for bad in [np.array([True]), np.array([1 + 2j]), np.array(["x"]), np.array([object()])]:
        with pytest.raises(TypeError):
            gpucvt.cvt(f, bad)


def test_float_operands_give_their_bits():
    # A float64 NaN's payload reaches the f64 operand: its bits, not its value.
    words = np.uint64([0x7FF0000000000123, 0x3FF8000000000000, 0x0000000000000001])
    assert (gpucvt.cvt("cvt.rn.f32.f64", words.view(np.float64)) == gpucvt.cvt("cvt.rn.f32.f64", words)).all()
    h = np.uint16([0x7E01, 0x0001, 0x3C00])
    assert (gpucvt.cvt("cvt.f32.f16", h.view(np.float16)) == gpucvt.cvt("cvt.f32.f16", h)).all()
    b = np.uint16([0x7FC1, 0x3F81])
    assert (gpucvt.cvt("cvt.f32.bf16", b.view(ml_dtypes.bfloat16)) == gpucvt.cvt("cvt.f32.bf16", b)).all()
    # ml_dtypes element types of Tile IR ops.
    e = np.array([1.5, 448], dtype=ml_dtypes.float8_e4m3fn)
    assert gpucvt.tile("ftof : tile<f8E4M3FN> -> tile<f32>", e).view(np.float32).tolist() == [1.5, 448]
    i4 = np.array([-1, 7], dtype=ml_dtypes.int4)
    assert gpucvt.tile("exti signed : tile<i4> -> tile<i8>", i4).tolist() == [0xFF, 7]
    assert gpucvt.tile("exti signed : tile<i4> -> tile<i8>", [-8, 7]).tolist() == [0xF8, 7]
    with pytest.raises(ValueError, match="-9 does not fit"):
        gpucvt.tile("exti signed : tile<i4> -> tile<i8>", [-9])
    # float32 into a tf32 operand: rounded to nearest even (1.1 -> 0x3f8cc000).
    assert int(gpucvt.tile("ftof : tile<tf32> -> tile<f32>", np.float32(1.1))) == 0x3F8CC000
    assert gpucvt.cvt("cvt.rn.f16.f32", [[1.0, 2.0]]).tolist() == [[0x3C00, 0x4000]]
    assert gpucvt.cvt("cvt.rn.f16.f32", []).shape == (0,)


def test_broadcasting_layouts_and_sizes():
    f = "cvt.rn.satfinite.e4m3x2.f32"
    a = np.float32([[1.0], [2.0], [448.0]])
    b = np.float32([0.5, 1000.0])
    got = gpucvt.cvt(f, a, b)
    assert got.shape == (3, 2)
    for i in range(3):
        for j in range(2):
            assert got[i, j] == gpucvt.cvt(f, a[i, 0], b[j])
    # Non-contiguous, reversed, big-endian and zero-size arrays.
    x = np.arange(40, dtype=np.float32).reshape(5, 8)[:, ::3]
    assert (gpucvt.cvt("cvt.rn.f16.f32", x).view(np.float16) == x.astype(np.float16)).all()
    assert (gpucvt.cvt("cvt.rn.f16.f32", x.astype(">f4")) == gpucvt.cvt("cvt.rn.f16.f32", x)).all()
    assert (gpucvt.cvt("cvt.rn.f16.f32", x[::-1]) == gpucvt.cvt("cvt.rn.f16.f32", x)[::-1]).all()
    z = gpucvt.cvt(f, np.zeros((0, 3), np.float32), np.float32(1))
    assert z.shape == (0, 3) and z.dtype == np.uint16
    assert gpucvt.cvt(f, np.zeros(0, np.float32), np.zeros((4, 1), np.float32)).shape == (4, 0)
    with pytest.raises(ValueError, match="do not broadcast"):
        gpucvt.cvt(f, np.zeros(3, np.float32), np.zeros(4, np.float32))
    with pytest.raises(ValueError, match=r"takes 2 source operand\(s\) \(a, b\), got 1"):
        gpucvt.cvt(f, 1.0)
    with pytest.raises(ValueError, match="got 3"):
        gpucvt.cvt("cvt.rn.f16.f32", 1.0, 2.0, 3.0)
    # Results do not depend on the thread count; the kernel path and the exact path agree.
    rng = np.random.default_rng(1)
    big = rng.integers(0, 2**32, size=(1 << 17) + 3, dtype=np.uint32)
    r = rng.integers(0, 2**32, size=big.size, dtype=np.uint32)
    one = gpucvt.cvt("cvt.rs.satfinite.bf16x2.f32", big, big[::-1], r, threads=1)
    many = gpucvt.cvt("cvt.rs.satfinite.bf16x2.f32", big, big[::-1], r, threads=7)
    assert (one == many).all()
    with pytest.raises(ValueError, match="threads"):
        gpucvt.cvt("cvt.rn.f16.f32", big, threads=0)


def test_huge_arrays_fail_cleanly():
    huge = np.broadcast_to(np.float32(1.0), (1 << 40,))
    with pytest.raises(MemoryError):
        gpucvt.cvt("cvt.rn.f16.f32", huge)
    with pytest.raises(MemoryError):
        gpucvt.cvt("cvt.rn.f16x2.e4m3x2", np.broadcast_to(np.uint16(0), (1 << 58,)))


def test_cvt_pack_and_scaled_forms():
    # cvt.pack.sat.u8.s32.b32 d, a, b, c: a and b saturated to u8 into the low half of c.
    got = gpucvt.cvt("cvt.pack.sat.u8.s32.b32", np.int32([0x100, 5]), np.int32([-1, 7]), np.uint32(0x1234))
    assert got.tolist() == [0x1234FF00, 0x12340507]


def test_docstrings():
    r = doctest.testmod(gpucvt._dialects, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert r.attempted >= 12 and r.failed == 0
    for fn in [gpucvt.cvt, gpucvt.mov, gpucvt.tile, gpucvt.check, gpucvt.cvt_forms, gpucvt.tile_ops]:
        assert ">>>" in fn.__doc__


BAD = [
    ("cvt", "cvt.rn.f32.f16", {}, True),
    ("cvt", "cvt.f16.f32", {}, True),
    ("cvt", "cvt.rn.f12.f32", {}, True),
    ("cvt", "cvt.rn.sat.bf16x2.f32", {}, True),
    ("cvt", "cvt.rs.f16x2.f32", {"target": "sm_90"}, True),
    ("cvt", "cvt.rn.f16.f32 %h1, %f1, %f2;", {}, True),
    ("cvt", "@%1 cvt.rn.f16.f32", {}, False),
    ("cvt", "add.f32", {}, False),
    ("mov", "mov v <- f", {}, True),
    ("mov", "mov hf <- zz", {}, False),
    ("mov", "mov.sat b <- bool", {}, True),
    ("tile", "ftof : tile<f16> -> tile<f16>", {}, True),
    ("tile", "ftof : tile<3xf32> -> tile<3xf16>", {}, True),
    ("tile", "itof signed : tile<i32> -> tile<f8E8M0FNU>", {}, True),
    ("tile", "ftof : tile<f32> -> tile<f8E5M2>", {"target": "sm_80"}, True),
]


@pytest.mark.parametrize("fn, text, opts, illegal", BAD)
def test_bad_instructions_give_the_cli_message(fn, text, opts, illegal):
    with pytest.raises(ValueError) as e:
        getattr(gpucvt, fn)(text, 0, **opts)
    assert isinstance(e.value, gpucvt.IllegalInstruction) == illegal
    if illegal:
        d = e.value.diagnostics
        assert d and all(isinstance(x, gpucvt.Diagnostic) and x.line == 1 and x.column >= 1 for x in d)
        assert d[0].severity == "error" and d[0].rule
    args = [f"--{k}" if k != "target" else "--target" for k in opts]
    cli = [a for k, a in zip(opts, args) for a in (a, opts[k])]
    line = text + (" 0x0" if fn != "tile" else " 0x0 0x0 0x0")
    assert batch([line], *cli)[0] == f"error: {e.value}"


def test_stubs_match_the_functions():
    import ast
    import inspect
    from pathlib import Path

    pkg = Path(gpucvt.__file__).parent
    stub = ast.parse((pkg / "_dialects.pyi").read_text())
    funcs = {f.name: f for f in stub.body if isinstance(f, ast.FunctionDef)}
    for name in ["cvt", "mov", "tile", "check", "cvt_forms", "tile_ops"]:
        a = funcs[name].args
        stub_params = [x.arg for x in a.posonlyargs + a.args] + ([a.vararg.arg] if a.vararg else []) + [x.arg for x in a.kwonlyargs]
        assert stub_params == list(inspect.signature(getattr(gpucvt, name)).parameters), name
        assert name in gpucvt.__all__
    init = (pkg / "__init__.pyi").read_text()
    for name in ["cvt", "mov", "tile", "check", "cvt_forms", "tile_ops", "Diagnostic", "IllegalInstruction"]:
        assert f"{name} as {name}" in init and f'"{name}"' in init
