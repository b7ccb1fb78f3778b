//! Checkpoints the serving stacks load: how each stack stores a quantized linear layer
//! ([`stacks`], used by the `.safetensors` layout), the quantization configuration it reads
//! ([`config`]), and checkpoint folders of shards converted as a whole ([`dir`]).

pub(crate) mod config;
pub(crate) mod dir;
pub(crate) mod stacks;
