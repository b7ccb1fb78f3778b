"""gpucvt.round against `gpucvt round --json`."""

import json
import math
import subprocess

import numpy as np
import pytest

import gpucvt
from conftest import gpucvt_bin


def cli(*args):
    exe = gpucvt_bin()
    if exe is None:
        pytest.skip("no gpucvt binary (scripts/test builds one and sets GPUCVT_BIN)")
    return subprocess.run([exe, "round", *args], capture_output=True, text=True)


def cli_json(*args):
    r = cli(*args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


NUMBERS = ["0", "-0", "1", "0.1", "-0.1", "3.14159", "1e-3", "-1e-9", "448", "464", "500",
           "65504", "65520", "1e39", "-1e39", "0x1.8p3", "-0x.8p-2", "0b1.1p-3", "inf", "-inf",
           "nan", "2.5", "-3.5", "1e-45", "0.017578125", "123456789.123456789", "5.877e-39"]
FORMATS = ["f32", "tf32", "f16", "bf16", "e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "ue8m0",
           "ue4m3", "s8", "u8", "s32", "u16", "s4"]
MODES = ["rn", "rna", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi"]


@pytest.mark.parametrize("to", FORMATS)
def test_round_equals_the_cli_on_many_values_and_modes(to):
    exe = gpucvt_bin()
    if exe is None:
        pytest.skip("no gpucvt binary")
    for n in NUMBERS:
        for mode in MODES:
            for policy, flags in [({}, []), ({"satfinite": True}, ["--satfinite"])]:
                r = subprocess.run([exe, "round", n, "--to", to, "--mode", mode, *flags, "--json"],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    with pytest.raises(ValueError) as e:
                        gpucvt.round(n, to, mode=mode, **policy)
                    assert str(e.value) in r.stderr
                    continue
                want = json.loads(r.stdout)
                got = gpucvt.round(n, to, mode=mode, **policy)
                assert got.to_dict() == want, (n, to, mode, policy)
                assert got.hex_bits == want["result"]["bits"]
                assert got.bits == int(want["result"]["bits"], 16)
                assert got.value == want["result"]["value"]
                assert got.flags == set(want["result"]["flags"])
                assert got.cls == want["result"]["class"]


@pytest.mark.parametrize(
    "args,kw",
    [
        (["0.3", "--to", "e4m3", "--from", "bf16"], {"from_": "bf16"}),
        (["--bits", "0x3f81", "--from", "bf16", "--to", "e4m3", "--mode", "rz"],
         {"bits": 0x3F81, "from_": "bf16", "mode": "rz"}),
        (["--bits", "0b0111_1110", "--from", "e4m3", "--to", "e2m1"],
         {"bits": "0b0111_1110", "from_": "float8_e4m3fn"}),
        (["1.3", "--to", "bf16", "--mode", "rs", "--rbits", "0x8000", "--rbits-width", "16"],
         {"mode": "rs", "rbits": 0x8000, "rbits_width": 16}),
        (["1.3", "--to", "e4m3", "--mode", "rs", "--rbits", "0xffffffff"],
         {"mode": "rs", "rbits": "0xffffffff"}),
        (["-0.7", "--to", "f16", "--relu"], {"relu": True}),
        (["1e-40", "--to", "f32", "--ftz"], {"ftz": True}),
        (["1e-40", "--from", "f32", "--to", "f16", "--ftz"], {"from_": "f32", "ftz": True}),
        (["-0", "--to", "bf16", "--pzo"], {"pzo": True}),
        (["1.5", "--to", "f16", "--sat"], {"sat": True}),
        (["1e6", "--to", "f16", "--overflow", "saturate"], {"overflow": "saturate"}),
        (["--bits", "0x7fc01234", "--from", "f32", "--to", "f16", "--nan", "payload"],
         {"bits": 0x7FC01234, "from_": "f32", "nan": "payload"}),
        (["nan", "--to", "s32", "--int-nan", "highbit"], {"int_nan": "highbit"}),
        (["300", "--to", "s8", "--wrap"], {"wrap": True}),
        (["3", "--to", "e4m3", "--scale", "-4"], {"scale": -4}),
        (["-2", "--to", "ue8m0"], {}),
    ],
)
def test_options_equal_the_cli(args, kw):
    want = cli_json(*args)
    number = None if args[0].startswith("--") else args[0]
    to = args[args.index("--to") + 1]
    got = gpucvt.round(number, to, **kw)
    assert got.to_dict() == want


def test_python_numbers_are_taken_exactly():
    for x in [0.1, -0.0, 1e-320, 3.0, 1e308, float("inf"), -float("inf"), np.float32(0.1),
              np.float64(2.5), 7, -(2**70), np.int16(-3)]:
        want = cli_json(float(x).hex() if not isinstance(x, (int, np.integer)) else str(int(x)),
                        "--to", "bf16")
        got = gpucvt.round(x, "bf16")
        assert got.to_dict()["result"] == want["result"], x
        assert got.to_dict()["input"]["value"] == want["input"]["value"], x
    r = gpucvt.round(float("nan"), "e4m3")
    assert r.cls == "nan" and math.isnan(r.float)
    assert gpucvt.round(0.1, "f64").value == "0.1000000000000000055511151231257827021181583404541015625"


def test_attributes_and_repr():
    r = gpucvt.round("500", "e4m3", satfinite=True)
    assert (r.bits, r.value, r.float, r.cls, r.format, r.mode) == (0x7E, "448", 448.0, "normal", "e4m3", "rn")
    assert r.flags == {"inexact", "overflow", "saturated"}
    assert isinstance(r.flags, frozenset)
    assert repr(r) == "Rounded(e4m3 0x7e = 448, normal, mode=rn, flags: inexact, overflow, saturated)"
    assert r.explanation is None
    assert int(r) == 0x7E and float(r) == 448.0
    assert r == gpucvt.round(500, "float8_e4m3fn", satfinite=True)


def test_explain():
    r = gpucvt.round("0.3", "e4m3", explain=True)
    e = r.explanation
    assert "neighbour toward zero     0x29 = 0.28125" in e
    assert "neighbour away from zero  0x2a = 0.3125" in e
    assert "because it is nearer" in e
    assert "the value was rounded in e4m3" in e
    assert str(r) == e
    r = gpucvt.round("1e9", "e4m3", explain=True, satfinite=True)
    assert "largest finite value" in r.explanation
    r = gpucvt.round("1.3", "bf16", mode="rs", rbits=0xFFFF, rbits_width=16, explain=True)
    assert "carry out of 16 bits" in r.explanation
    r = gpucvt.round("nan", "e2m1", explain=True)
    assert "no rounding step" in r.explanation


@pytest.mark.parametrize(
    "call,cli_args",
    [
        (lambda: gpucvt.round("1", "e9m9"), ["1", "--to", "e9m9"]),
        (lambda: gpucvt.round("1", "e4m3", from_="bf17"), None),
        (lambda: gpucvt.round("1.2.3", "e4m3"), ["1.2.3", "--to", "e4m3"]),
        (lambda: gpucvt.round("", "e4m3"), None),
        (lambda: gpucvt.round("1", "e4m3", mode="rq"), None),
        (lambda: gpucvt.round("1", "e4m3", mode="rs"), None),
        (lambda: gpucvt.round("1", "e4m3", rbits=3), None),
        (lambda: gpucvt.round("1", "e4m3", mode="rs", rbits="0x1ff", rbits_width=8),
         ["1", "--to", "e4m3", "--mode", "rs", "--rbits", "0x1ff", "--rbits-width", "8"]),
        (lambda: gpucvt.round("1", "e4m3", wrap=True), None),
        (lambda: gpucvt.round("1", "s8", relu=True), None),
        (lambda: gpucvt.round("1", "e4m3", sat=True, satfinite=True), None),
        (lambda: gpucvt.round("1", "e4m3", overflow="clamp"), None),
        (lambda: gpucvt.round(None, "e4m3", bits=3), None),
        (lambda: gpucvt.round(None, "e4m3", bits="0x1ff", from_="e5m2"),
         ["--bits", "0x1ff", "--from", "e5m2", "--to", "e4m3"]),
        (lambda: gpucvt.round("1", "e4m3", scale=10**6), None),
    ],
)
def test_bad_values_raise_value_error_with_the_cli_message(call, cli_args):
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value)
    if cli_args is not None:
        r = cli(*cli_args)
        assert r.returncode == 2
        assert r.stderr == f"error: {e.value}\n"


def test_bad_types_raise_type_error():
    with pytest.raises(TypeError):
        gpucvt.round(1, "e4m3", frobnicate=True)
    with pytest.raises(TypeError):
        gpucvt.round([1.0], "e4m3")
    with pytest.raises(TypeError):
        gpucvt.round(1.0, "e4m3", mode=1)


def test_docstring_examples():
    import doctest

    import gpucvt._round

    r = doctest.testmod(gpucvt._round, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert r.attempted >= 5 and r.failed == 0


# ---- Rounded.explanation is the text `gpucvt round --explain` prints, byte for byte ----

#: CLI argument lists: every kind of rounding decision and policy event, --from and --bits.
_EXPLAIN_CASES = [
    ["0.3", "--to", "e4m3"],
    ["0.1", "--to", "f64"],
    ["500", "--to", "e4m3", "--satfinite"],
    ["1e9", "--to", "e5m2", "--mode", "rz"],
    ["-1e9", "--to", "f16", "--overflow", "saturate"],
    ["5", "--to", "e2m1", "--mode", "rna"],
    ["-2.5", "--to", "e2m1", "--mode", "rm"],
    ["1.1", "--to", "e2m1", "--mode", "rs", "--rbits", "0x80000000"],
    ["1.1", "--to", "e2m1", "--mode", "rs", "--rbits", "0x1", "--rbits-width", "4"],
    ["1.3", "--to", "bf16", "--mode", "rs", "--rbits", "0xffff", "--rbits-width", "16"],
    ["-1.3", "--to", "bf16", "--mode", "rs", "--rbits", "7", "--rbits-width", "3"],
    ["2.5", "--to", "s8", "--mode", "rni"],
    ["300", "--to", "s8", "--wrap"],
    ["-300", "--to", "u8", "--sat"],
    ["nan", "--to", "s32", "--int-nan", "highbit"],
    ["-nan", "--to", "f16", "--nan", "payload"],
    ["nan", "--to", "f16", "--sat"],
    ["-inf", "--to", "e4m3", "--satfinite"],
    ["inf", "--to", "e2m1"],
    ["1.7", "--to", "f16", "--sat"],
    ["-1.7", "--to", "bf16", "--relu"],
    ["-0", "--to", "f16", "--pzo"],
    ["1e-6", "--to", "f16", "--ftz"],
    ["1e-50", "--to", "ue8m0"],
    ["-3", "--to", "ue8m0"],
    ["1e40", "--to", "e4m3"],
    ["3", "--to", "e4m3", "--scale", "-3"],
    ["3", "--to", "s16", "--scale", "10"],
    ["0.7", "--to", "s2f6"],
    ["0b1.1p-3", "--to", "ue4m3"],
    ["3.14159", "--from", "f64", "--to", "f32"],
    ["3.14159", "--from", "bf16", "--to", "e4m3", "--mode", "rz"],
    ["1e-40", "--from", "f32", "--to", "f16", "--ftz"],
    ["--bits", "0x3f800001", "--from", "f32", "--to", "f16"],
    ["--bits", "0x7fc00001", "--from", "f32", "--to", "bf16", "--nan", "payload"],
    ["--bits", "0xff", "--from", "e5m2", "--to", "e4m3", "--satfinite"],
    ["--bits", "0b101", "--from", "e2m1", "--to", "s8"],
    ["0.1000000000000000000000000000000000000000001", "--to", "f64"],
    ["-0x1.fffffep127", "--to", "bf16", "--mode", "rp"],
]
# A grid of numbers, formats and modes on top.
_EXPLAIN_CASES += [
    [n, "--to", to, "--mode", mode]
    for n in ["0.3", "-2.5", "1e-6", "500", "nan", "-inf", "0x1p-130", "1e40", "-0", "7"]
    for to in ["e4m3", "e5m2", "e2m1", "e3m2", "bf16", "f16", "tf32", "s8", "u8", "s2f6", "ue8m0"]
    for mode in ["rn", "rna", "rz", "rm", "rp", "rni"]
]


def _python_call(args):
    """The gpucvt.round call of a `gpucvt round` argument list."""
    number, kw, i = None, {}, 0
    options = {"--to": "to", "--from": "from_", "--bits": "bits", "--mode": "mode",
               "--overflow": "overflow", "--nan": "nan", "--int-nan": "int_nan",
               "--rbits": "rbits", "--scale": "scale", "--rbits-width": "rbits_width"}
    while i < len(args):
        a = args[i]
        if a in options:
            v = args[i + 1]
            kw[options[a]] = int(v) if a in ("--scale", "--rbits-width") else v
            i += 2
        elif a.startswith("--"):
            kw[a[2:].replace("-", "_")] = True
            i += 1
        else:
            number = a
            i += 1
    to = kw.pop("to")
    return lambda: gpucvt.round(number, to, explain=True, **kw)


def test_explanation_is_the_cli_explain_text():
    exe = gpucvt_bin()
    if exe is None:
        pytest.skip("no gpucvt binary")
    for args in _EXPLAIN_CASES:
        r = subprocess.run([exe, "round", *args, "--explain"], capture_output=True, text=True)
        if r.returncode != 0:
            # A combination the CLI refuses: the same message.
            with pytest.raises(ValueError) as e:
                _python_call(args)()
            assert r.stderr == f"error: {e.value}\n", args
            continue
        got = _python_call(args)()
        assert got.explanation == r.stdout, args
        j = subprocess.run([exe, "round", *args, "--json"], capture_output=True, text=True)
        assert got.to_dict() == json.loads(j.stdout), args


def test_explanation_of_a_python_float_is_the_cli_text_of_its_hex_form():
    exe = gpucvt_bin()
    if exe is None:
        pytest.skip("no gpucvt binary")
    r = gpucvt.round(0.1, "e4m3", explain=True)
    cli_out = subprocess.run([exe, "round", (0.1).hex(), "--to", "e4m3", "--explain"],
                             capture_output=True, text=True).stdout
    assert r.explanation == cli_out
    assert r.explanation.startswith("input    0x1.999999999999ap-4\n")
    assert r.explanation.endswith("flags  inexact\n")
