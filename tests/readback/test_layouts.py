"""`gpucvt convert --layout` on a checkpoint folder, read back as each serving stack reads it.

The readers here are written from each stack's source (cited per reader; the facts are in
docs/reference/stack-layouts.md), with numpy, ml_dtypes and the `safetensors` package; they
share no code with gpucvt. For every layout and recipe they check:

- the folder: every shard read by `safetensors`, the index's `weight_map` naming every
  tensor in the shard that holds it and `total_size` the sum of the tensors' bytes, the
  non-weight files copied, `config.json` with the stack's `quantization_config`;
- each linear layer stored under the stack's names, dtypes and shapes;
- the stored bytes a re-encoding of gpucvt's own layout of the same recipe (whose numbers
  the other read-back tests and the big-rational reference check): the same element codes
  and scales, compressed-tensors' global scale the f32 reciprocal of gpucvt's second level;
- the weights dequantized by the stack's formula, in numpy, equal to the exact products of
  gpucvt's own layout (bit for bit where the stack's formula rounds once);
- every other tensor copied byte for byte.

The compressed-tensors package itself (which needs PyTorch) reads the same folders in
tests/stacks/, run where that package is installed.
"""

import json
import shutil

import ml_dtypes
import numpy as np
import pytest

from conftest import as_values, gpucvt, read_safetensors, write_safetensors

BF16 = ml_dtypes.bfloat16
H, INTER, VOCAB = 128, 256, 96
LINEARS = [
    ("self_attn.q_proj", (H, H)),
    ("self_attn.k_proj", (H // 2, H)),
    ("self_attn.v_proj", (H // 2, H)),
    ("self_attn.o_proj", (H, H)),
    ("mlp.gate_proj", (INTER, H)),
    ("mlp.up_proj", (INTER, H)),
    ("mlp.down_proj", (H, INTER)),
]
SPECIALS = [0.0, -0.0, 1e-40, -3e-39, 1e-30, 5.0, -448.0, 2.0**-20]


def llama_tensors(rng):
    """A two-layer Llama-shaped model in bf16, zeros, subnormals and outliers in its
    weights, one linear weight all zero."""
    t = {"model.embed_tokens.weight": rng.normal(0, 0.02, (VOCAB, H)).astype(BF16)}
    for layer in range(2):
        p = f"model.layers.{layer}."
        for name, shape in LINEARS:
            w = rng.normal(0, 0.02, shape).astype(np.float32)
            w.flat[: len(SPECIALS)] = SPECIALS
            t[p + name + ".weight"] = w.astype(BF16)
        t[p + "input_layernorm.weight"] = np.ones(H, BF16)
        t[p + "post_attention_layernorm.weight"] = np.ones(H, BF16)
    t["model.layers.1.self_attn.v_proj.weight"][:] = 0
    t["model.norm.weight"] = np.ones(H, BF16)
    t["lm_head.weight"] = rng.normal(0, 0.02, (VOCAB, H)).astype(BF16)
    return t


CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": H,
    "intermediate_size": INTER,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "num_hidden_layers": 2,
    "vocab_size": VOCAB,
    "rms_norm_eps": 1e-05,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The model as a Hugging Face folder of three shards (the last holding only the head
    and the final norm: nothing in it is converted), its index, config and tokenizer."""
    t = llama_tensors(np.random.default_rng(11))
    names = list(t)
    parts = [names[:12], names[12:-2], names[-2:]]
    d = tmp_path_factory.mktemp("llama")
    weight_map, total = {}, 0
    for i, part in enumerate(parts):
        shard = f"model-{i + 1:05d}-of-{len(parts):05d}.safetensors"
        write_safetensors(d / shard, {n: t[n] for n in part}, metadata={"format": "pt"})
        for n in part:
            weight_map[n] = shard
            total += t[n].nbytes
    index = {"metadata": {"total_size": total}, "weight_map": weight_map}
    (d / "model.safetensors.index.json").write_text(json.dumps(index, indent=2))
    (d / "config.json").write_text(json.dumps(CONFIG, indent=2))
    (d / "tokenizer.json").write_text('{"version": "1.0"}')
    return d, t


def read_folder(d):
    """{name: (dtype, shape, bytes)} of every shard the index names, and the index."""
    index = json.loads((d / "model.safetensors.index.json").read_text())
    tensors, total = {}, 0
    for shard in sorted(set(index["weight_map"].values())):
        for name, v in read_safetensors(d / shard).items():
            assert index["weight_map"][name] == shard
            tensors[name] = v
            total += len(v[2])
    assert set(index["weight_map"]) == set(tensors)
    assert index["metadata"]["total_size"] == total
    return tensors, index


def convert(src, out, *args):
    if out.exists():
        shutil.rmtree(out)
    stdout, _ = gpucvt("convert", src, "-o", out, "--json", *args)
    return json.loads(stdout)


def vals(t):
    """A (dtype, shape, bytes) tensor as an array of its numpy/ml_dtypes type."""
    dtype, shape, data = t
    return as_values(dtype, data, shape)


def f32(t):
    return vals(t).astype(np.float32)


# The element codes of gpucvt's own layout (F4 packed, F8_E4M3) and its scales.
def own(tensors, module):
    w = tensors[module + ".weight"]
    s = tensors[module + ".weight_scale"]
    s2 = tensors.get(module + ".weight_scale_2")
    return w, s, s2


def exact(w, s, s2):
    """gpucvt's own layout dequantized exactly (float64): each element times its block's
    scale (and the second level)."""
    q = vals(w).astype(np.float64)
    scale = vals(s).astype(np.float64)
    rows, cols = q.shape
    if scale.ndim == 0:
        full = np.full(q.shape, float(scale))
    elif scale.shape == (rows, 1):
        full = np.repeat(scale, cols, axis=1)
    elif scale.shape == (rows, cols // 16) or scale.shape == (rows, cols // 32):
        full = np.repeat(scale, cols // scale.shape[1], axis=1)
    else:  # 128x128 tiles
        full = np.repeat(np.repeat(scale, 128, axis=0), 128, axis=1)[:rows, :cols]
    out = q * full
    if s2 is not None:
        out = out * float(vals(s2))
    return out


def dequant_modelopt(tensors, module, recipe):
    """ModelOpt's weights read as vLLM's loader reads them (vllm modelopt.py:
    ModelOptNvFp4LinearMethod / ModelOptFp8PcPtLinearMethod / ModelOptFp8PbWoLinearMethod;
    ModelOpt nvfp4_tensor.py NVFP4QTensor.dequantize): NVFP4 `weight` U8 [out, in/2] (element
    2k in the low nibble), `weight_scale` e4m3 [out, in/16] and `weight_scale_2` f32 [] both
    multiplied; FP8 `weight_scale` f32 [out] or [out/128, 1, in/128, 1], multiplied."""
    w = tensors[module + ".weight"]
    s = tensors[module + ".weight_scale"]
    if recipe == "nvfp4":
        assert w[0] == "U8" and s[0] == "F8_E4M3"
        s2 = tensors[module + ".weight_scale_2"]
        assert s2[0] == "F32" and s2[1] == []
        codes = np.frombuffer(w[2], np.uint8).reshape(w[1])
        nib = np.stack([codes & 0xF, codes >> 4], axis=-1).reshape(w[1][0], -1)
        q = nib.view(ml_dtypes.float4_e2m1fn).astype(np.float32)
        scale = f32(s).repeat(16, axis=1)
        return q * scale * np.frombuffer(s2[2], np.float32)[0]
    assert w[0] == "F8_E4M3" and s[0] == "F32"
    q = f32(w)
    rows, cols = q.shape
    if recipe == "fp8-row":
        assert s[1] == [rows]
        return q * f32(s)[:, None]
    ob, ib = -(-rows // 128), -(-cols // 128)
    assert s[1] == [ob, 1, ib, 1]
    tiles = f32(s).reshape(ob, ib)
    return q * np.repeat(np.repeat(tiles, 128, 0), 128, 1)[:rows, :cols]


def dequant_compressed_tensors(tensors, module, recipe):
    """compressed-tensors' decompression (compressors/nvfp4/base.py
    NVFP4PackedCompressor.decompress, mxfp4/base.py, mxfp8/base.py,
    naive_quantized/base.py; quantization/lifecycle/forward.py dequantize): packed FP4
    `weight_packed` U8 [out, in/2]; NVFP4 scales e4m3 divided by the f32 [1]
    `weight_global_scale`; MX scales U8 biased exponents, 2^(e-127); FP8 `weight` e4m3 times
    `weight_scale` ([1], [out, 1] or tiles)."""
    if recipe in ("nvfp4", "mxfp4"):
        w = tensors[module + ".weight_packed"]
        assert w[0] == "U8"
        codes = np.frombuffer(w[2], np.uint8).reshape(w[1])
        nib = np.stack([codes & 0xF, codes >> 4], axis=-1).reshape(w[1][0], -1)
        q = nib.view(ml_dtypes.float4_e2m1fn).astype(np.float32)
    else:
        w = tensors[module + ".weight"]
        assert w[0] == "F8_E4M3"
        q = f32(w)
    s = tensors[module + ".weight_scale"]
    rows, cols = q.shape
    if recipe == "nvfp4":
        g = tensors[module + ".weight_global_scale"]
        assert s[0] == "F8_E4M3" and g[0] == "F32" and g[1] == [1]
        scale = f32(s) / np.frombuffer(g[2], np.float32)[0]
        return q * scale.repeat(16, axis=1)
    if recipe in ("mxfp4", "mxfp8"):
        assert s[0] == "U8" and s[1] == [rows, cols // 32]
        e = np.frombuffer(s[2], np.uint8).reshape(s[1]).astype(np.int32)
        return q * np.ldexp(np.float32(1), e - 127).astype(np.float32).repeat(32, axis=1)
    assert s[0] == "F32"
    if recipe == "fp8-tensor":
        assert s[1] == [1]
        return q * f32(s)[0]
    if recipe == "fp8-row":
        assert s[1] == [rows, 1]
        return q * f32(s)
    assert s[1] == [-(-rows // 128), -(-cols // 128)]
    return q * np.repeat(np.repeat(f32(s), 128, 0), 128, 1)[:rows, :cols]


def dequant_deepseek(tensors, module, recipe):
    """DeepSeek-V3's FP8 (inference/kernel.py weight_dequant: `y = x * s`, one f32
    `weight_scale_inv` per 128x128 block, [ceil(out/128), ceil(in/128)])."""
    w = tensors[module + ".weight"]
    s = tensors[module + ".weight_scale_inv"]
    assert w[0] == "F8_E4M3" and s[0] == "F32"
    q = f32(w)
    rows, cols = q.shape
    assert s[1] == [-(-rows // 128), -(-cols // 128)]
    return q * np.repeat(np.repeat(f32(s), 128, 0), 128, 1)[:rows, :cols]


READERS = {
    "modelopt": dequant_modelopt,
    "compressed-tensors": dequant_compressed_tensors,
    "deepseek": dequant_deepseek,
}

PAIRS = [
    ("modelopt", "nvfp4"),
    ("modelopt", "fp8-row"),
    ("modelopt", "fp8-block128"),
    ("compressed-tensors", "nvfp4"),
    ("compressed-tensors", "mxfp4"),
    ("compressed-tensors", "mxfp8"),
    ("compressed-tensors", "fp8-tensor"),
    ("compressed-tensors", "fp8-row"),
    ("compressed-tensors", "fp8-block128"),
    ("deepseek", "fp8-block128"),
]


def stored_names(layout, recipe, module):
    """The tensor names a stack stores a quantized layer under."""
    if layout == "modelopt":
        extra = [".weight_scale_2"] if recipe == "nvfp4" else []
        return [module + x for x in [".weight", ".weight_scale", *extra]]
    if layout == "compressed-tensors":
        weight = ".weight_packed" if recipe in ("nvfp4", "mxfp4") else ".weight"
        extra = [".weight_global_scale"] if recipe == "nvfp4" else []
        return [module + x for x in [weight, ".weight_scale", *extra]]
    return [module + ".weight", module + ".weight_scale_inv"]


def check_config(layout, recipe, d):
    config = json.loads((d / "config.json").read_text())
    q = config.pop("quantization_config")
    assert config == CONFIG
    ignored = ["lm_head", "model.embed_tokens"]
    if layout == "compressed-tensors":
        # compressed_tensors QuantizationConfig / vLLM CompressedTensorsConfig.
        assert q["quant_method"] == "compressed-tensors"
        assert q["quantization_status"] == "compressed"
        assert q["ignore"] == ignored
        fmt = {
            "nvfp4": "nvfp4-pack-quantized",
            "mxfp4": "mxfp4-pack-quantized",
            "mxfp8": "mxfp8-quantized",
        }.get(recipe, "float-quantized")
        assert q["format"] == fmt
        g = q["config_groups"]["group_0"]
        assert g["targets"] == ["Linear"]
        w = g["weights"]
        assert (w["num_bits"], w["type"], w["symmetric"], w["dynamic"]) == (
            8 if recipe not in ("nvfp4", "mxfp4") else 4,
            "float",
            True,
            False,
        )
        strategy = {
            "nvfp4": "tensor_group",
            "mxfp4": "group",
            "mxfp8": "group",
            "fp8-tensor": "tensor",
            "fp8-row": "channel",
            "fp8-block128": "block",
        }[recipe]
        assert w["strategy"] == strategy
        if recipe.startswith("fp8"):
            # Static weight-only FP8 would be "naive-quantized"; these have dynamic
            # activations, which "float-quantized" requires.
            assert g["input_activations"]["dynamic"] is True
        else:
            assert g["input_activations"] is None
    elif layout == "modelopt":
        hf = json.loads((d / "hf_quant_config.json").read_text())["quantization"]
        algo = {"nvfp4": "W4A16_NVFP4", "fp8-row": "FP8_PER_CHANNEL_PER_TOKEN",
                "fp8-block128": "FP8_PB_WO"}[recipe]
        # vLLM ModelOptNvFp4Config needs all of group_size, kv_cache_quant_algo and
        # exclude_modules in hf_quant_config.json.
        assert hf["quant_algo"] == algo and "kv_cache_quant_algo" in hf
        assert hf["exclude_modules"] == ignored
        assert hf.get("group_size") == (16 if recipe == "nvfp4" else None)
        assert q["quant_method"] == "modelopt" and q["quant_algo"] == algo
    else:
        assert q == {
            "activation_scheme": "dynamic",
            "fmt": "e4m3",
            "quant_method": "fp8",
            "weight_block_size": [128, 128],
            "ignored_layers": ignored,
            "modules_to_not_convert": ignored,
        }


@pytest.mark.parametrize("layout,recipe", PAIRS)
def test_stack_reads_the_folder(tmp_path, folder, layout, recipe):
    src, t = folder
    summary = convert(src, tmp_path / "out", "--recipe", recipe, "--layout", layout)
    assert summary["kind"] == "checkpoint"
    own_summary = convert(src, tmp_path / "own", "--recipe", recipe)
    assert [x["stats"] for x in summary["tensors"]] == [x["stats"] for x in own_summary["tensors"]]
    got, _ = read_folder(tmp_path / "out")
    mine, _ = read_folder(tmp_path / "own")
    assert (tmp_path / "out" / "tokenizer.json").read_bytes() == (src / "tokenizer.json").read_bytes()
    check_config(layout, recipe, tmp_path / "out")
    expected = set()
    for name, a in t.items():
        module = name[: -len(".weight")]
        linear = any(name.endswith(n + ".weight") for n, _ in LINEARS)
        if not linear:
            expected.add(name)
            assert got[name][2] == a.tobytes(), name
            continue
        names = stored_names(layout, recipe, module)
        expected.update(names)
        w, s, s2 = own(mine, module)
        # The same codes and scales as gpucvt's own layout.
        assert got[names[0]][2] == w[2]
        assert got[names[1]][2] == s[2]
        if s2 is not None:
            g = np.frombuffer(got[names[2]][2], np.float32)[0]
            s2v = np.frombuffer(s2[2], np.float32)[0]
            if layout == "compressed-tensors":
                assert g == (np.float32(1) if s2v == 0 else np.float32(1) / s2v)
            else:
                assert g == s2v
        values = READERS[layout](got, module, recipe)
        want = exact(w, s, s2)
        if recipe == "nvfp4":
            # Two roundings in the stack's formula: within two f32 ulps of the exact value.
            np.testing.assert_allclose(values, want, rtol=2.0**-22, atol=0)
        else:
            np.testing.assert_array_equal(values, want.astype(np.float32))
        # The reference is not vacuous: the weights are not all zero but one.
        assert np.any(values != 0) or module == "model.layers.1.self_attn.v_proj"
    assert set(got) == expected


def test_single_file_gets_the_tensors_and_a_note(tmp_path, folder):
    src, t = folder
    shard = src / "model-00001-of-00003.safetensors"
    stdout, _ = gpucvt("convert", shard, "-o", tmp_path / "x.safetensors", "--recipe", "nvfp4",
                       "--layout", "compressed-tensors", "--json")
    s = json.loads(stdout)
    assert any("checkpoint folder" in n for n in s["notes"])
    got = read_safetensors(tmp_path / "x.safetensors")
    assert "model.layers.0.self_attn.q_proj.weight_packed" in got
    assert got["model.layers.0.self_attn.q_proj.weight_global_scale"][:2] == ("F32", [1])


@pytest.mark.parametrize(
    "layout,recipe,words",
    [
        ("modelopt", "fp8-tensor", "input_scale"),
        ("modelopt", "mxfp8", "compressed-tensors layout has it"),
        ("deepseek", "nvfp4", "128x128 blocks only"),
    ],
)
def test_schemes_a_stack_lacks_are_refused(tmp_path, folder, layout, recipe, words):
    src, _ = folder
    _, err = gpucvt("convert", src, "-o", tmp_path / "o", "--recipe", recipe, "--layout", layout,
                    expect=2)
    assert words in err
    assert not (tmp_path / "o").exists()
    assert not any(tmp_path.iterdir())


def test_output_folder_rules(tmp_path, folder):
    src, _ = folder
    out = tmp_path / "out"
    out.mkdir()
    (out / "old.txt").write_text("old")
    _, err = gpucvt("convert", src, "-o", out, "--recipe", "fp8-row", expect=2)
    assert "exists and is not empty" in err and "--force" in err
    assert (out / "old.txt").read_text() == "old"
    gpucvt("convert", src, "-o", out, "--recipe", "fp8-row", "--force")
    assert not (out / "old.txt").exists() and (out / "config.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    _, err = gpucvt("convert", src, "-o", src / "inside", "--recipe", "fp8-row", expect=2)
    assert "one inside the other" in err


def test_quantized_input_is_refused(tmp_path, folder):
    src, _ = folder
    gpucvt("convert", src, "-o", tmp_path / "q", "--recipe", "fp8-row", "--layout", "modelopt")
    _, err = gpucvt("convert", tmp_path / "q", "-o", tmp_path / "q2", "--recipe", "fp8-row",
                    "--layout", "compressed-tensors", expect=2)
    assert "quantized already" in err


def test_index_must_match_the_shards(tmp_path, folder):
    src, _ = folder
    bad = tmp_path / "bad"
    shutil.copytree(src, bad)
    index = json.loads((bad / "model.safetensors.index.json").read_text())
    index["weight_map"]["model.norm.weight"] = "model-00001-of-00003.safetensors"
    (bad / "model.safetensors.index.json").write_text(json.dumps(index))
    _, err = gpucvt("convert", bad, "-o", tmp_path / "o", "--recipe", "fp8-row", expect=2)
    assert "model.norm.weight" in err and "model-00003-of-00003.safetensors" in err
