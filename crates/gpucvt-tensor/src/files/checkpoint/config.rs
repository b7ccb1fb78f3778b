//! The quantization configuration each stack reads beside the weights: `config.json`'s
//! `quantization_config`, and ModelOpt's `hf_quant_config.json`. The keys and their sources
//! are in `docs/reference/stack-layouts.md`.

use crate::files::checkpoint::stacks::Scheme;
use crate::options::Layout;
use serde_json::{json, Value};

/// The compressed-tensors release whose format (and configuration parser) the
/// compressed-tensors layout follows and is tested against; written as the configuration's
/// `version`, as that library writes its own.
pub(crate) const COMPRESSED_TENSORS_VERSION: &str = "0.20.1";

/// The configuration of a checkpoint whose linear layers are quantized by `scheme`, the
/// modules in `kept` left unquantized: `config.json`'s `quantization_config`, and the
/// contents of `hf_quant_config.json` (ModelOpt only).
pub(crate) fn quantization_config(
    layout: Layout,
    scheme: Scheme,
    kept: &[String],
) -> (Value, Option<Value>) {
    match layout {
        Layout::Modelopt => modelopt(scheme, kept),
        Layout::CompressedTensors => (compressed_tensors(scheme, kept), None),
        Layout::Deepseek => (deepseek(kept), None),
        Layout::Gpucvt => (Value::Null, None),
    }
}

fn producer() -> Value {
    json!({"name": "gpucvt", "version": env!("CARGO_PKG_VERSION")})
}

/// ModelOpt: the `quant_algo` of the weight-only or dynamic-activation variant (vLLM's
/// `modelopt.py` QUANT_ALGOS), in both of the shapes vLLM reads.
fn modelopt(scheme: Scheme, kept: &[String]) -> (Value, Option<Value>) {
    let (algo, weights, inputs) = match scheme {
        Scheme::Nvfp4 => (
            "W4A16_NVFP4",
            json!({"dynamic": false, "num_bits": 4, "type": "float", "group_size": 16}),
            Value::Null,
        ),
        Scheme::Fp8Row => (
            "FP8_PER_CHANNEL_PER_TOKEN",
            json!({"dynamic": false, "num_bits": 8, "type": "float", "strategy": "channel"}),
            json!({"dynamic": true, "num_bits": 8, "type": "float", "strategy": "token"}),
        ),
        _ => (
            "FP8_PB_WO",
            json!({"dynamic": false, "num_bits": 8, "type": "float", "strategy": "block",
                   "block_structure": [128, 128]}),
            json!({"dynamic": true, "num_bits": 8, "type": "float", "strategy": "group",
                   "group_size": 128}),
        ),
    };
    let mut group = json!({"weights": weights, "targets": ["Linear"]});
    if !inputs.is_null() {
        group["input_activations"] = inputs;
    }
    let mut config = json!({
        "config_groups": {"group_0": group},
        "ignore": kept,
        "quant_algo": algo,
        "producer": producer(),
        "quant_method": "modelopt",
    });
    let mut quantization = json!({
        "quant_algo": algo,
        "kv_cache_quant_algo": null,
        "exclude_modules": kept,
    });
    if scheme == Scheme::Nvfp4 {
        config["group_size"] = json!(16);
        quantization["group_size"] = json!(16);
    }
    let hf = json!({"producer": producer(), "quantization": quantization});
    (config, Some(hf))
}

/// compressed-tensors: the weight-only presets (NVFP4A16, MXFP4A16, MXFP8A16) and FP8 with
/// dynamic activations (FP8_DYNAMIC's, FP8_BLOCK's), as `QuantizationConfig` serializes
/// them. `scale_dtype` is given for the MX formats only: compressed-tensors releases
/// before 0.13 reject the key, and NVFP4's default (e4m3) is what is written.
fn compressed_tensors(scheme: Scheme, kept: &[String]) -> Value {
    let float = |bits: u32, strategy: &str, dynamic: bool| {
        json!({"num_bits": bits, "type": "float", "symmetric": true, "strategy": strategy,
               "dynamic": dynamic})
    };
    let token = float(8, "token", true);
    let (format, weights, inputs) = match scheme {
        Scheme::Nvfp4 => {
            let mut w = float(4, "tensor_group", false);
            w["group_size"] = json!(16);
            ("nvfp4-pack-quantized", w, Value::Null)
        }
        Scheme::Mxfp4 | Scheme::Mxfp8 => {
            let bits = if scheme == Scheme::Mxfp4 { 4 } else { 8 };
            let mut w = float(bits, "group", false);
            w["group_size"] = json!(32);
            w["scale_dtype"] = json!("torch.uint8");
            let format = if bits == 4 {
                "mxfp4-pack-quantized"
            } else {
                "mxfp8-quantized"
            };
            (format, w, Value::Null)
        }
        Scheme::Fp8Tensor => ("float-quantized", float(8, "tensor", false), token),
        Scheme::Fp8Row => ("float-quantized", float(8, "channel", false), token),
        Scheme::Fp8Block128 => {
            let mut w = float(8, "block", false);
            w["block_structure"] = json!([128, 128]);
            let mut i = float(8, "group", true);
            i["group_size"] = json!(128);
            ("float-quantized", w, i)
        }
    };
    json!({
        "config_groups": {"group_0": {
            "targets": ["Linear"],
            "weights": weights,
            "input_activations": inputs,
            "output_activations": null,
            "format": null,
        }},
        "format": format,
        "global_compression_ratio": null,
        "ignore": kept,
        "kv_cache_scheme": null,
        "quant_method": "compressed-tensors",
        "quantization_status": "compressed",
        "sparsity_config": {},
        "transform_config": {},
        "version": COMPRESSED_TENSORS_VERSION,
    })
}

/// DeepSeek-V3's `quantization_config` (its README_WEIGHTS.md), with the unquantized linear
/// modules under both names loaders read them by (vLLM's `ignored_layers`, transformers'
/// `modules_to_not_convert`).
fn deepseek(kept: &[String]) -> Value {
    let mut c = json!({
        "activation_scheme": "dynamic",
        "fmt": "e4m3",
        "quant_method": "fp8",
        "weight_block_size": [128, 128],
    });
    if !kept.is_empty() {
        c["ignored_layers"] = json!(kept);
        c["modules_to_not_convert"] = json!(kept);
    }
    c
}
