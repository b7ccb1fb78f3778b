"""`gpucvt convert` on multi-tensor files, read back with independent readers.

Every output is read with the `safetensors` package, and each converted tensor's bytes must
equal (1) what gpucvt gives for that tensor converted alone, in a file of its own, and (2)
where ml_dtypes defines the same operation (round to nearest even; MX block scaling written
out here from the OCP formula), ml_dtypes' bits, NaN compared as a class.
"""

import json
import math

import ml_dtypes
import numpy as np
import pytest

from conftest import (
    ST_DTYPES,
    as_values,
    gpucvt,
    read_safetensors,
    unpack_codes,
    write_safetensors,
)

# gpucvt's destination name -> (safetensors dtype, ml_dtypes type, largest finite, has NaN)
DESTS = {
    "e4m3": ("F8_E4M3", ml_dtypes.float8_e4m3fn, 448.0, True),
    "e5m2": ("F8_E5M2", ml_dtypes.float8_e5m2, 57344.0, True),
    "e2m3": ("F6_E2M3", ml_dtypes.float6_e2m3fn, 7.5, False),
    "e3m2": ("F6_E3M2", ml_dtypes.float6_e3m2fn, 28.0, False),
    "e2m1": ("F4", ml_dtypes.float4_e2m1fn, 6.0, False),
    "f16": ("F16", np.float16, 65504.0, True),
    "bf16": ("BF16", ml_dtypes.bfloat16, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max), True),
}
NARROW = ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1"]


def specials(rng, n, scale):
    """Normal values with NaN, infinities, subnormals (of f32 and of the narrow formats),
    zeros of both signs, outliers and exact midpoints sprinkled in."""
    x = rng.normal(0, scale, n).astype(np.float32)
    pool = np.array(
        [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-40, 3e-39, 1e30, -7e37,
         448.0, 464.0, -480.0, 57344.0, 61440.0, 7.5, 7.75, 28.0, 30.0, 6.0, 5.0, 0.25, 0.75,
         2.0**-9, 2.0**-10, 3 * 2.0**-11, 2.0**-16, 65504.0, 65520.0, 1.5e-5],
        dtype=np.float32,
    )
    idx = rng.choice(n, size=min(n, pool.size * 2), replace=False)
    x[idx] = rng.choice(pool, size=idx.size)
    return x


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A file of eight tensors in three float dtypes plus an integer buffer: 2-d, odd sizes,
    a 0-d scalar, an empty tensor, NaN/inf/subnormals/outliers."""
    rng = np.random.default_rng(7)
    # (Outliers overflow to infinity in f16 on purpose.)
    np.seterr(over="ignore")
    t = {
        "embed.weight": specials(rng, 256 * 96, 0.02).reshape(256, 96),
        "layers.0.attn.q.weight": specials(rng, 64 * 64, 0.05).astype(np.float16).reshape(64, 64),
        "layers.0.norm.weight": (1 + rng.normal(0, 0.1, 96)).astype(np.float32),
        "layers.1.mlp.weight": specials(rng, 32 * 128, 3.0).astype(ml_dtypes.bfloat16).reshape(32, 128),
        "odd": specials(rng, 5 * 7, 100.0).reshape(5, 7),
        "scalar": np.array(1.7, dtype=np.float32),
        "empty": np.zeros((0, 32), dtype=np.float32),
        "position_ids": np.arange(10, dtype=np.int64),
        "lm_head.weight": specials(rng, 8 * 64, 1.0).astype(np.float16).reshape(8, 64),
    }
    d = tmp_path_factory.mktemp("ckpt")
    path = d / "model.safetensors"
    write_safetensors(path, t, metadata={"format": "pt"})
    # The hand-written input is itself read back by the independent reader.
    got = read_safetensors(path)
    assert list(got) == list(t) or set(got) == set(t)
    for name, a in t.items():
        assert got[name][2] == a.tobytes()
    return path, t


def single(tmp, name, array, args, seed_offset):
    """gpucvt's output for one tensor converted alone: a file with that tensor only (its
    random stream: the seed plus its index in the multi-tensor file)."""
    src = tmp / f"alone-{name}.safetensors"
    dst = tmp / f"alone-{name}-out.safetensors"
    write_safetensors(src, {name: array})
    # (Selection options name tensors of the whole file.)
    args = [a for i, a in enumerate(args) if a not in ("--tensor", "--exclude") and (i == 0 or args[i - 1] not in ("--tensor", "--exclude"))]
    seed = 0
    if "--seed" in args:
        i = args.index("--seed")
        seed = int(args[i + 1])
        del args[i : i + 2]
    # (--all: a tensor alone is converted whatever it is; the default choice of linear
    # layers' weights has its own tests.)
    gpucvt("convert", src, "-o", dst, *args, "--all", "--seed", seed + seed_offset)
    return read_safetensors(dst)


def convert(tmp, src, args, tag):
    dst = tmp / f"out-{tag}.safetensors"
    every = [] if "--tensor" in args else ["--all"]
    out, _ = gpucvt("convert", src, "-o", dst, *args, *every, "--json")
    return dst, json.loads(out)


def check_against_alone(tmp, src, tensors, args, tag):
    """Converts the whole file and checks every tensor against its conversion alone, and the
    copied/kept ones against the input bytes. Returns the output as read back."""
    dst, summary = convert(tmp, src, args, tag)
    got = read_safetensors(dst)
    converted = {t["name"] for t in summary["tensors"]}
    kept = {k["name"] for k in summary["kept"]} | set(summary["copied"])
    names = list(tensors)
    assert converted | kept == set(names)
    for i, name in enumerate(names):
        a = tensors[name]
        if name in converted:
            alone = single(tmp, name, a, args, i)
            assert got[name] == alone[name], f"{tag}: tensor {name} differs from its conversion alone"
            if name + "_scale" in alone:
                assert got[name + "_scale"] == alone[name + "_scale"], f"{tag}: {name}_scale"
        else:
            assert got[name][2] == a.tobytes(), f"{tag}: kept tensor {name} changed"
    expected = set(names) | {t["scale"] for t in summary["tensors"] if t.get("scale")}
    assert set(got) == expected
    return got, summary


def ml_reference(x, dest, satfinite):
    """What ml_dtypes gives for round-to-nearest-even into `dest` (`satfinite`: clamped to
    the largest finite value first, which is what .satfinite does to finite inputs and
    infinities)."""
    _, dt, mx, _ = DESTS[dest]
    x = np.asarray(x, dtype=np.float32)
    if satfinite:
        x = np.clip(x, -mx, mx)
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(dt)


def same_bits(got, want, mask):
    """Compares two arrays of one dtype bit for bit where `mask`, NaN as a class."""
    g = got[mask].astype(np.float64)
    w = want[mask].astype(np.float64)
    gn, wn = np.isnan(g), np.isnan(w)
    assert np.array_equal(gn, wn), "NaN in one and not the other"
    keep = ~gn
    gc = got[mask][keep].view(np.uint8 if got.dtype.itemsize == 1 else np.uint16)
    wc = want[mask][keep].view(np.uint8 if want.dtype.itemsize == 1 else np.uint16)
    bad = np.nonzero(gc != wc)[0]
    assert bad.size == 0, (
        f"{bad.size} elements differ, first: gpucvt {gc[bad[0]]:#x} ml_dtypes {wc[bad[0]]:#x} "
        f"for {got[mask][keep][bad[0]]} vs {want[mask][keep][bad[0]]}"
    )


@pytest.mark.parametrize("dest", list(DESTS))
def test_plain_to_every_destination(tmp_path, checkpoint, dest):
    src, tensors = checkpoint
    sat = dest in NARROW
    args = ["--to", dest] + (["--satfinite"] if sat else [])
    got, summary = check_against_alone(tmp_path, src, tensors, args, dest)
    st_dtype, _, _, has_nan = DESTS[dest]
    for t in summary["tensors"]:
        name = t["name"]
        dtype, shape, data = got[name]
        assert dtype == st_dtype and shape == list(tensors[name].shape)
        x = tensors[name].astype(np.float32)
        want = ml_reference(x, dest, sat)
        mine = as_values(dtype, data, shape)
        # Formats without NaN have no defined answer for a NaN input in ml_dtypes.
        mask = np.ones(x.shape, bool) if has_nan else ~np.isnan(x)
        same_bits(mine, want, mask)
    # The integer buffer is kept, never converted.
    assert {k["name"] for k in summary["kept"]} >= {"position_ids"}
    if dest == "e2m1":
        # 35 elements cannot fill FP4 bytes: kept, with the reason.
        assert any(k["name"] == "odd" and "whole bytes" in k["reason"] for k in summary["kept"])


def ocp_scale(amax, emax):
    if amax == 0:
        return -127
    return max(-127, min(127, math.floor(math.log2(amax)) - emax))


def rp_scale(amax, mx):
    q = np.float32(amax) / np.float32(mx)
    if q == 0:
        return -127
    m, e = math.frexp(float(q))
    k = e - 1 if m == 0.5 else e
    return max(-127, min(127, k))


def mx_reference(x, dest, block, method):
    """Scale bytes and element values of MX block scaling, from the formulas (numpy + ml_dtypes)."""
    _, dt, mx, _ = DESTS[dest]
    emax = math.floor(math.log2(mx))
    x = np.asarray(x, dtype=np.float32)
    blocks = x.reshape(-1, block)
    scales = np.empty(blocks.shape[0], np.uint8)
    out = np.empty(blocks.shape, dtype=dt)
    for i, b in enumerate(blocks):
        if not np.all(np.isfinite(b)):
            scales[i] = 0xFF
            out[i] = ml_reference(b, dest, True)
            continue
        amax = float(np.max(np.abs(b.astype(np.float64))))
        k = ocp_scale(amax, emax) if method == "ocp" else rp_scale(amax, mx)
        scales[i] = k + 127
        out[i] = ml_reference((b.astype(np.float64) * 2.0 ** (-k)).astype(np.float32), dest, True)
    return scales.reshape(x.shape[:-1] + (x.shape[-1] // block,)), out.reshape(x.shape)


@pytest.mark.parametrize("method", ["ocp", "rp"])
@pytest.mark.parametrize("dest", NARROW)
def test_mx_block_scaling(tmp_path, checkpoint, dest, method):
    src, tensors = checkpoint
    args = ["--to", dest, "--satfinite", "--block", "32", "--scale", "ue8m0", "--scale-rule", method]
    got, summary = check_against_alone(tmp_path, src, tensors, args, f"mx-{dest}-{method}")
    kept = {k["name"]: k["reason"] for k in summary["kept"]}
    # (FP6 packs four to three bytes, so its first reason for the scalar is the packing.)
    assert any(r in kept["scalar"] for r in ("scalar cannot be block-scaled", "whole bytes"))
    assert any(r in kept["odd"] for r in ("not a multiple of the block size", "whole bytes"))
    checked = 0
    for t in summary["tensors"]:
        name = t["name"]
        x = tensors[name].astype(np.float32)
        if x.size == 0:
            continue
        want_scales, want = mx_reference(x, dest, 32, method)
        sdtype, sshape, sdata = got[name + "_scale"]
        assert sdtype == "F8_E8M0" and sshape == list(want_scales.shape)
        assert np.array_equal(np.frombuffer(sdata, np.uint8).reshape(sshape), want_scales), name
        dtype, shape, data = got[name]
        mine = as_values(dtype, data, shape)
        has_nan = DESTS[dest][3]
        mask = np.ones(x.shape, bool) if has_nan else ~np.isnan(x)
        same_bits(mine, want, mask)
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("dest", ["e4m3", "e2m1", "bf16"])
def test_stochastic_rounding(tmp_path, checkpoint, dest):
    src, tensors = checkpoint
    args = ["--to", dest, "--mode", "rs", "--seed", "11"] + (["--satfinite"] if dest in NARROW else [])
    got, summary = check_against_alone(tmp_path, src, tensors, args, f"rs-{dest}")
    # rs rounds each element to one of its two neighbours: never further than rz's and ru's.
    for t in summary["tensors"]:
        x = tensors[t["name"]].astype(np.float64)
        dtype, shape, data = got[t["name"]]
        y = as_values(dtype, data, shape).astype(np.float64)
        fin = np.isfinite(x) & np.isfinite(y) & (np.abs(x) <= DESTS[dest][2])
        assert np.all(np.sign(y[fin]) * np.sign(x[fin]) >= 0)
    # A different seed gives different bits somewhere.
    dst2, _ = convert(tmp_path, src, ["--to", dest, "--mode", "rs", "--seed", "12"] + (["--satfinite"] if dest in NARROW else []), f"rs2-{dest}")
    other = read_safetensors(dst2)
    assert any(other[n] != got[n] for n in got if n in {t["name"] for t in summary["tensors"]})


def test_selection_by_patterns(tmp_path, checkpoint):
    src, tensors = checkpoint
    args = ["--to", "e4m3", "--satfinite", "--tensor", "*.weight", "--exclude", "*norm*"]
    got, summary = check_against_alone(tmp_path, src, tensors, args, "select")
    converted = {t["name"] for t in summary["tensors"]}
    assert converted == {"embed.weight", "layers.0.attn.q.weight", "layers.1.mlp.weight", "lm_head.weight"}
    assert "layers.0.norm.weight" in summary["copied"]
    # With MX scaling and a selection, the scales land after their own tensors.
    args = ["--to", "e2m1", "--satfinite", "--block", "32", "--tensor", "layers.*", "--tensor", "lm_head.weight"]
    got, summary = check_against_alone(tmp_path, src, tensors, args, "select-mx")
    assert {t["name"] for t in summary["tensors"]} == {"layers.0.attn.q.weight", "layers.1.mlp.weight", "lm_head.weight", "layers.0.norm.weight"}


def test_strict_and_dry_run(tmp_path, checkpoint):
    src, tensors = checkpoint
    dst = tmp_path / "strict.safetensors"
    _, err = gpucvt("convert", src, "-o", dst, "--to", "e2m1", "--satfinite", "--block", "32", "--all", "--strict", expect=2)
    assert "--strict" in err and '"odd"' in err
    assert not dst.exists()
    out, _ = gpucvt("convert", src, "-o", dst, "--to", "e2m1", "--satfinite", "--block", "32", "--all", "--dry-run", "--json")
    plan = json.loads(out)
    assert not dst.exists()
    actions = {t["name"]: t["action"] for t in plan["tensors"]}
    assert actions["scalar"] == "keep" and actions["embed.weight"] == "convert"
    # The planned size is the size of the file a real run writes.
    gpucvt("convert", src, "-o", dst, "--to", "e2m1", "--satfinite", "--block", "32", "--all")
    assert plan["output_bytes"] == dst.stat().st_size


def test_an_attention_mask_under_mx_scales(tmp_path):
    # A -inf mask: its blocks get OCP MX's NaN scale, named in a note; with --strict the
    # tensor is refused and nothing is written.
    mask = np.zeros((4, 64), np.float32)
    mask[:, 40:] = -np.inf
    src = tmp_path / "m.safetensors"
    write_safetensors(src, {"attn.mask": mask, "w.weight": np.ones((4, 64), np.float32)})
    out, err = gpucvt("convert", src, "-o", tmp_path / "o.safetensors", "--recipe", "mxfp8",
                      "--all", "--json")
    assert "attn.mask: 4 of its 8 blocks hold a NaN or an infinity" in json.loads(out)["notes"][-1]
    got = read_safetensors(tmp_path / "o.safetensors")
    scales = np.frombuffer(got["attn.mask_scale"][2], np.uint8).reshape(4, 2)
    assert (scales[:, 0] != 0xFF).all() and (scales[:, 1] == 0xFF).all()
    _, err = gpucvt("convert", src, "-o", tmp_path / "s.safetensors", "--recipe", "mxfp8",
                    "--all", "--strict", expect=2)
    assert "attn.mask: 4 of its 8 blocks hold a NaN or an infinity" in err and "--strict" in err
    assert not (tmp_path / "s.safetensors").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.safetensors", "o.safetensors"]


def test_npy_outputs_read_back_with_numpy(tmp_path):
    rng = np.random.default_rng(3)
    x = specials(rng, 64 * 32, 1.0).reshape(64, 32)
    src = tmp_path / "x.npy"
    np.save(src, x)
    for dest in ["e4m3", "e2m1", "bf16", "f16"]:
        dst = tmp_path / f"x-{dest}.npy"
        sat = ["--satfinite"] if dest in NARROW else []
        gpucvt("convert", src, "-o", dst, "--to", dest, *sat)
        y = np.load(dst)
        assert y.shape == x.shape
        _, dt, _, has_nan = DESTS[dest]
        mine = y.view(np.uint8 if y.itemsize == 1 else np.uint16).view(dt)
        want = ml_reference(x, dest, bool(sat))
        same_bits(mine, want, np.ones(x.shape, bool) if has_nan else ~np.isnan(x))
    dst = tmp_path / "x-mx.npy"
    gpucvt("convert", src, "-o", dst, "--to", "e4m3", "--satfinite", "--block", "32")
    scales = np.load(tmp_path / "x-mx_scale.npy")
    want_scales, want = mx_reference(x, "e4m3", 32, "ocp")
    assert np.array_equal(scales, want_scales)
    same_bits(np.load(dst).view(ml_dtypes.float8_e4m3fn), want, np.ones(x.shape, bool))


def test_stray_bits_in_narrow_containers_are_errors(tmp_path):
    src = tmp_path / "codes.npy"
    np.save(src, np.array([0x01, 0x07, 0x1F, 0x02], dtype=np.uint8))
    for extra in ([], ["--mode", "rs"], ["--block", "2"]):
        dst = tmp_path / "out.npy"
        _, err = gpucvt("convert", src, "-o", dst, "--from", "e2m1", "--to", "f32", *extra, expect=2)
        assert "element 2" in err and "0x1f" in err, err
        assert not dst.exists()


def test_unpack_helper_reads_the_documented_layouts():
    # The helper the tests read FP4/FP6 with, checked on hand-made bytes: FP4 low nibble
    # first; FP6 element i in bits 6i..6i+5 of the little-endian 24-bit word.
    assert list(unpack_codes("F4", bytes([0x21, 0x43]), 4)) == [1, 2, 3, 4]
    word = 1 | (2 << 6) | (3 << 12) | (63 << 18)
    assert list(unpack_codes("F6_E2M3", word.to_bytes(3, "little"), 4)) == [1, 2, 3, 63]
    assert ST_DTYPES["F4"][1] == 4
