"""gpucvt's checkpoint layouts read back by the stacks' own Python code on a CPU.

compressed-tensors (the library vLLM and llm-compressor use) parses the folder's
`quantization_config`, and transformers' `from_pretrained` loads the folder through it and
decompresses every layer; transformers' fine-grained FP8 loader (`quant_method` "fp8")
loads the DeepSeek layout and dequantizes it. The weights must equal, bit for bit, the numpy
readers of test_layouts.py (written from the stacks' source), and every other tensor the
input.

These packages need PyTorch (about 3 GB of CUDA wheels even for a CPU), so they are not in
tests/requirements.lock: `scripts/test --stacks` installs tests/stacks/requirements.lock into
its own environment and runs this file. Elsewhere it is skipped.
"""

import json
import shutil

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")
ct = pytest.importorskip("compressed_tensors")
transformers = pytest.importorskip("transformers")

from conftest import gpucvt  # noqa: E402
from test_layouts import (  # noqa: E402,F401
    LINEARS,
    dequant_compressed_tensors,
    dequant_deepseek,
    folder,
    read_folder,
)

CT_RECIPES = ["nvfp4", "mxfp4", "mxfp8", "fp8-tensor", "fp8-row", "fp8-block128"]


def test_versions_are_the_locked_ones():
    # The layout follows compressed-tensors 0.20.1; a different version here would test
    # something else.
    assert ct.__version__.startswith("0.20.1")


@pytest.mark.parametrize("recipe", CT_RECIPES)
def test_compressed_tensors_loads_and_decompresses(tmp_path, folder, recipe):
    src, t = folder
    out = tmp_path / "out"
    gpucvt("convert", src, "-o", out, "--recipe", recipe, "--layout", "compressed-tensors")
    # The library's own parsers of the configuration: as transformers hands it over, and as
    # vLLM validates each group's arguments (QuantizationArgs forbids unknown keys).
    from compressed_tensors.compressors import ModelCompressor
    from compressed_tensors.quantization import QuantizationArgs

    q = json.loads((out / "config.json").read_text())["quantization_config"]
    hf = transformers.CompressedTensorsConfig.from_dict(q)
    compressor = ModelCompressor.from_compression_config(hf)
    assert compressor.quantization_config.format == q["format"]
    for group in q["config_groups"].values():
        for part in ("weights", "input_activations"):
            if group[part] is not None:
                QuantizationArgs.model_validate(group[part])
    # transformers loads it through compressed-tensors, decompressing every layer.
    model, info = transformers.AutoModelForCausalLM.from_pretrained(
        str(out),
        dtype=torch.float32,
        output_loading_info=True,
        quantization_config=transformers.CompressedTensorsConfig(run_compressed=False),
    )
    assert not any(info.values()), info
    state = model.state_dict()
    stored, _ = read_folder(out)
    linear = 0
    for name, a in t.items():
        got = state[name].detach().numpy()
        if any(name.endswith(n + ".weight") for n, _ in LINEARS):
            want = dequant_compressed_tensors(stored, name[: -len(".weight")], recipe)
            if recipe == "nvfp4":
                # compressed-tensors unpacks FP4 into bfloat16 (nvfp4/helpers.py
                # unpack_fp4_from_uint8's default dtype) and casts its f32 products back to
                # it (forward_helpers.py _dequantize): one more rounding, RN_bf16.
                want = want.astype(ml_dtypes.bfloat16).astype(np.float32)
            linear += 1
        else:
            want = a.astype(np.float32)
        assert got.dtype == np.float32 and got.shape == want.shape, name
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32), err_msg=name)
    assert linear == 2 * len(LINEARS)
    shutil.rmtree(out)


def test_transformers_loads_the_deepseek_layout(tmp_path, folder):
    src, t = folder
    out = tmp_path / "out"
    gpucvt("convert", src, "-o", out, "--recipe", "fp8-block128", "--layout", "deepseek")
    # Without a GPU, transformers' FineGrainedFP8 quantizer dequantizes while loading
    # (quantizer_finegrained_fp8.py validate_environment; Fp8Dequantize: q x s in f32).
    model, info = transformers.AutoModelForCausalLM.from_pretrained(
        str(out), dtype=torch.float32, output_loading_info=True
    )
    assert not any(info.values()), info
    q = transformers.AutoConfig.from_pretrained(str(out)).quantization_config
    parsed = transformers.FineGrainedFP8Config.from_dict(q)
    assert parsed.weight_block_size == (128, 128) or parsed.weight_block_size == [128, 128]
    assert parsed.activation_scheme == "dynamic"
    state = model.state_dict()
    stored, _ = read_folder(out)
    for name, a in t.items():
        got = state[name].detach().numpy()
        if any(name.endswith(n + ".weight") for n, _ in LINEARS):
            want = dequant_deepseek(stored, name[: -len(".weight")], "fp8-block128")
        else:
            want = a.astype(np.float32)
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32), err_msg=name)
