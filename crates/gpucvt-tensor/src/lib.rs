//! # gpucvt-tensor
//!
//! Converts whole tensor files — `.npy`, `.safetensors` and raw little-endian binary — with
//! gpucvt's bit-exact conversions, streaming: memory stays bounded (a few chunks of 8 MiB in
//! flight) whatever the file size, chunks are converted in parallel on a rayon pool, and
//! reading, converting and writing overlap.
//!
//! ## Layers
//!
//! A tower, each folder using only those below it:
//!
//! - [`options`]: what the user asked ([`Options`], with its [`Recipe`]), and
//!   [`ConvertRequest`]/[`ScalingRequest`]: the options as text, checked and built into
//!   them, for every front end.
//! - `convert.rs`: the entry points [`convert_file`], [`plan_file`], [`dequantize_file`] and
//!   the checks before anything is read; `summary.rs`: [`Summary`], [`Stats`], [`FilePlan`].
//! - `files/`: by file kind. A conversion reads the input's header into a layout (what
//!   happens to each tensor; also what [`plan_file`] reports), then writes the output from
//!   it: `safetensors/{header,layout,write}.rs`, `single.rs` (`.npy` and raw: one tensor,
//!   scales in sidecars, with [`npy`] and `raw.rs`), `unit.rs` (an output and its sidecars
//!   as one unit), `selfcheck.rs` (every output read back before it is kept), `output.rs`
//!   (temporaries, [`OutputFile`]), `checkpoint/` (the serving stacks' layouts as data,
//!   their quantization configs, checkpoint folders of shards: [`options::Layout`]).
//! - `dequantize/`: the exact products of block-scaled tensors, for both kinds.
//! - `stream/`: one tensor streamed chunk by chunk: workers convert, a writer thread writes.
//! - [`chunk`]: one chunk converted: `Plan` (element-wise, and MX's fused fast path),
//!   [`chunk::Quantizer`] (every other block scaling), packing, decoding, the error
//!   statistics, stochastic rounding's random values.
//! - [`scaling`]: the one rule set: scale rules and formats, block shapes, the second
//!   level, the swizzled layout, the named recipes.
//! - [`dtype`]: dtype names of each file kind ↔ gpucvt formats, and packings.
//!
//! ## Behaviour
//!
//! - **Output**: written to a temporary file in the destination folder and renamed at the
//!   end; on any error the temporary is removed and nothing is left. An output that is the
//!   input (same path or same file) is refused. A replaced output keeps its mode (and owner,
//!   where the process may); a read-only one is refused unless [`Options::force`]. A `.npy`
//!   or raw output and its sidecars (scales, second-level scale, the metadata
//!   [`metadata_path`]) are one unit: renamed into place together under a lock, the
//!   sidecars a run does not write removed (`files/unit.rs`).
//! - **Packing** (`.safetensors` and raw): `e2m1` (`F4`) two elements per byte, the first
//!   in the low nibble; `e2m3`/`e3m2` (`F6_E2M3`/`F6_E3M2`) four elements per three bytes as
//!   a little-endian bit stream (element `i` in bits `6i…6i+5`), which is the dense 6-bit
//!   layout the safetensors format's sizes imply; everything else one element per
//!   little-endian container of 1, 2, 4 or 8 bytes. In `.npy` files every element has its
//!   own container (`bf16` as `<u2`, FP8/FP6/FP4/`ue8m0` as `|u1`).
//! - **Selection** (`.safetensors`): every tensor, or the named ones; tensors not selected are
//!   copied unchanged (same dtype and bytes), so the output is a complete file.
//! - **MX block scaling**: one `ue8m0` scale per block of consecutive elements along the last
//!   axis (the last dimension must be a multiple of the block size); see [`ScaleRule`]. The
//!   scales of tensor `NAME` are written as the tensor `NAME_scale` (dtype `F8_E8M0`, shape
//!   of `NAME` with the last dimension divided by the block size), right after it; for
//!   `.npy` and raw outputs as a sidecar file `OUTPUT_scale.npy` (`|u1`) or `OUTPUT_scale.bin`
//!   (raw bytes) — the output name with `_scale` before its extension.
//! - **Stochastic rounding**: the random word of element `i` of the `t`-th tensor (0-based,
//!   in the input's data order; 0 for `.npy` and raw) is the low 32 bits of the `i`-th output
//!   of SplitMix64 seeded with `splitmix64(seed + t)` ([`chunk::random_word`]); the
//!   conversion uses its low `width` bits.
//!
//! ## Example
//!
//! An `f32` `.npy` file converted to `e4m3` with `.satfinite`:
//!
//! ```
//! use gpucvt_core::{format::E4M3, Conversion, Policy, Rounding};
//! use gpucvt_tensor::{convert_file, npy, Options};
//! let dir = tempfile::tempdir().unwrap();
//! let (input, output) = (dir.path().join("x.npy"), dir.path().join("x-fp8.npy"));
//! let mut bytes = npy::header_bytes("<f4", false, &[4]);
//! for v in [1.0f32, -0.5, 500.0, f32::NAN] {
//!     bytes.extend_from_slice(&v.to_le_bytes());
//! }
//! std::fs::write(&input, bytes).unwrap();
//!
//! let opts = Options::new(Box::new(|src| {
//!     let satfinite = Policy { satfinite: true, ..Policy::default() };
//!     Ok(Conversion::new(*src, E4M3, Rounding::RN, satfinite))
//! }));
//! let summary = convert_file(&input, &output, &opts, &mut |_done, _total| {})?;
//! assert_eq!(summary.total.elements, 4);
//! assert_eq!(summary.total.saturated, 1); // 500 became 448, e4m3's largest finite value
//! let out = std::fs::read(&output).unwrap();
//! let data = &out[out.len() - 4..];
//! assert_eq!(data, [0x38, 0xb0, 0x7e, 0x7f]);
//! # Ok::<(), gpucvt_tensor::Error>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod chunk;
mod convert;
mod dequantize;
pub mod dtype;
mod error;
mod files;
pub mod options;
pub mod scaling;
mod stream;
mod summary;

pub use convert::{
    convert_file, dequantize_file, metadata_path, plan_file, scale_2_path, scale_path, Kind,
};
pub use dequantize::DequantizeOptions;
pub use error::{Error, Result};
pub use files::npy;
pub use files::output::{
    register_temporary, remove_temporaries, resolve_output, unregister_temporary, OutputFile,
};
pub use options::{lookup_format, Built, ConvertRequest, Options, Recipe, ScalingRequest};
pub use scaling::{BlockScaling, ScaleRule};
pub use summary::{FilePlan, Kept, PlannedTensor, Stats, Summary, TensorSummary};

pub(crate) use options::check_cancel;
