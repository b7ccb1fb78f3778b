//! Which serving stack's checkpoint layout a `.safetensors` output follows.

use crate::options::{msg, Opt};
use crate::{Error, Result};

/// The layout of a `.safetensors` output: gpucvt's own (every format under its safetensors
/// dtype, scales as `NAME_scale`), or the one a serving stack loads. The stacks' names,
/// dtypes, packing and configuration are described in `docs/reference/stack-layouts.md`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Layout {
    /// gpucvt's own: the tensor keeps its name and shape, FP4 is `F4`, MX scales `F8_E8M0`,
    /// the scales are `NAME_scale` (and `NAME_scale_2`).
    #[default]
    Gpucvt,
    /// NVIDIA ModelOpt's Hugging Face export (TensorRT-LLM, vLLM, SGLang): NVFP4 as
    /// `W4A16_NVFP4`, per-row FP8 as `FP8_PER_CHANNEL_PER_TOKEN`, 128×128 FP8 as `FP8_PB_WO`.
    Modelopt,
    /// compressed-tensors (llm-compressor, vLLM): `nvfp4-pack-quantized`,
    /// `mxfp4-pack-quantized`, `mxfp8-quantized`, and FP8 with dynamic activations.
    CompressedTensors,
    /// DeepSeek-V3's FP8: 128×128 blocks with `weight_scale_inv`.
    Deepseek,
}

impl Layout {
    /// Every layout.
    pub const ALL: [Layout; 4] = [
        Layout::Gpucvt,
        Layout::Modelopt,
        Layout::CompressedTensors,
        Layout::Deepseek,
    ];

    /// Its name, as the options give it.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Gpucvt => "gpucvt",
            Layout::Modelopt => "modelopt",
            Layout::CompressedTensors => "compressed-tensors",
            Layout::Deepseek => "deepseek",
        }
    }

    /// The layout of a name (any case; `compressed_tensors` too); an unknown name is
    /// [`Error::Option`] listing the names.
    ///
    /// ```
    /// use gpucvt_tensor::options::Layout;
    /// assert_eq!(Layout::named("ModelOpt")?, Layout::Modelopt);
    /// assert_eq!(Layout::named("compressed_tensors")?, Layout::CompressedTensors);
    /// assert!(Layout::named("gguf").unwrap_err().to_string().contains("accepted: gpucvt, modelopt"));
    /// # Ok::<(), gpucvt_tensor::Error>(())
    /// ```
    pub fn named(name: &str) -> Result<Layout> {
        let want = name.to_ascii_lowercase().replace('_', "-");
        Layout::ALL
            .into_iter()
            .find(|l| l.name() == want)
            .ok_or_else(|| {
                let names: Vec<&str> = Layout::ALL.iter().map(|l| l.name()).collect();
                Error::Option(msg![
                    format!("unknown layout {name:?} for "),
                    Opt::Layout,
                    format!("; accepted: {}", names.join(", "))
                ])
            })
    }
}
