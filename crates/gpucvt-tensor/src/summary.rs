//! What a conversion did ([`Summary`], [`Stats`]) and would do ([`FilePlan`]).

use serde::Serialize;

/// Counts and error statistics of converted elements.
///
/// Classified from each (input, output) pair, both decoded exactly to `f64` (inputs scaled by
/// their block scale first): `saturated` — saturation really changed the element: the
/// input, rounded with the destination's exponent range unbounded, is beyond its range
/// (largest finite magnitude; [0, 1] with `.sat`; an integer type's range), or it is
/// infinite, and the output is finite (449 into e4m3 rounds to 448 anyway and is not
/// counted; under `.rs` every input beyond the range is, the random bits not being known); `overflow_to_inf` — a finite input became ±∞; `flushed_to_zero` — a
/// non-zero finite input became zero (flushed or underflowed; `.relu` zeroing negatives is not
/// counted); `nan` — the value read back is NaN: the output is NaN, or its block's scale is
/// (every element of a block that holds a NaN or an infinity is NaN, whatever its code);
/// `nan_to_number` — a NaN input became a number. The absolute error `|output × scale −
/// input|` is taken over the elements where input and output are both finite (NaN and
/// infinite elements, and the blocks of a NaN scale, are left out).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Elements converted.
    pub elements: u64,
    /// Elements that saturation changed (see above: not those that round to the largest
    /// finite value anyway).
    pub saturated: u64,
    /// Finite inputs that became infinities.
    pub overflow_to_inf: u64,
    /// Non-zero inputs that became zero.
    pub flushed_to_zero: u64,
    /// Elements whose value is NaN: NaN outputs, and every element of a block whose scale is
    /// NaN.
    pub nan: u64,
    /// NaN inputs that became numbers.
    pub nan_to_number: u64,
    /// Blocks scaled (block scaling only).
    pub blocks: u64,
    /// Blocks that got the NaN scale (`0xff`, or the scale format's NaN: they held a NaN or
    /// an infinity).
    pub nan_blocks: u64,
    /// Elements in the error statistics.
    pub error_elements: u64,
    /// Largest absolute error.
    pub max_abs_error: f64,
    /// Mean absolute error.
    pub mean_abs_error: f64,
    /// Sum of the absolute errors.
    #[serde(skip)]
    pub sum_abs_error: f64,
    /// Signal-to-quantization-noise ratio in dB, `10 log10(Σ input² / Σ error²)` over the
    /// elements in the error statistics; `None` where there is no error (every element
    /// exact, or none counted).
    pub sqnr_db: Option<f64>,
    /// Largest relative error `|output × scale − input| / |input|` over the non-zero inputs
    /// in the error statistics.
    pub max_rel_error: f64,
    /// Sum of the squared errors.
    #[serde(skip)]
    pub sum_sq_error: f64,
    /// Sum of the squared inputs.
    #[serde(skip)]
    pub sum_sq_input: f64,
}

impl Stats {
    /// Adds the counts of `o`.
    pub fn merge(&mut self, o: &Stats) {
        self.elements += o.elements;
        self.saturated += o.saturated;
        self.overflow_to_inf += o.overflow_to_inf;
        self.flushed_to_zero += o.flushed_to_zero;
        self.nan += o.nan;
        self.nan_to_number += o.nan_to_number;
        self.blocks += o.blocks;
        self.nan_blocks += o.nan_blocks;
        self.error_elements += o.error_elements;
        self.sum_abs_error += o.sum_abs_error;
        self.max_abs_error = self.max_abs_error.max(o.max_abs_error);
        self.sum_sq_error += o.sum_sq_error;
        self.sum_sq_input += o.sum_sq_input;
        self.max_rel_error = self.max_rel_error.max(o.max_rel_error);
        self.derive();
    }

    /// Sets the figures derived from the sums: the mean error and the SQNR.
    pub fn derive(&mut self) {
        self.mean_abs_error = if self.error_elements == 0 {
            0.0
        } else {
            self.sum_abs_error / self.error_elements as f64
        };
        self.sqnr_db = (self.sum_sq_error > 0.0)
            .then(|| 10.0 * (self.sum_sq_input / self.sum_sq_error).log10());
    }
}

/// One converted tensor.
#[derive(Clone, Debug, Serialize)]
pub struct TensorSummary {
    /// Its name (`.npy` and raw: the input file name).
    pub name: String,
    /// Source format.
    pub from: String,
    /// Destination format.
    pub to: String,
    /// The dtype written (`F8_E4M3`, `<u2`, …).
    pub dtype: String,
    /// The shape.
    pub shape: Vec<u64>,
    /// The scale tensor's name or sidecar file, with block scaling.
    pub scale: Option<String>,
    /// The second-level (per-tensor) scale's tensor or sidecar file (NVFP4).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale_2: Option<String>,
    /// Its statistics.
    pub stats: Stats,
}

/// What a conversion did.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// `npy`, `safetensors` or `raw`.
    pub kind: &'static str,
    /// The converted tensors, in data order.
    pub tensors: Vec<TensorSummary>,
    /// Tensors copied unchanged (not selected).
    pub copied: Vec<String>,
    /// Tensors copied unchanged with a reason: left out by the default choice of tensors, or
    /// selected but not something the conversion can take.
    pub kept: Vec<Kept>,
    /// Things the caller should know (a thread count lowered, a tensor whose blocks got the
    /// NaN scale, …).
    pub notes: Vec<String>,
    /// The statistics of all converted tensors together.
    pub total: Stats,
}

/// A tensor copied unchanged with a reason: not a linear layer's weight where the tensors
/// were chosen by default ([`Kept::by_default`], see
/// [`not_a_linear_weight`](crate::options::not_a_linear_weight)), or selected but not
/// something the conversion can take: a dtype with no gpucvt format, an integer tensor (see [`Options::integers`](crate::Options::integers)), a scalar or a
/// last dimension that does not divide into blocks, a tensor without elements (with block
/// scales), a NaN or an infinity under `f32`, `bf16` or `ue4m3` block scales (its block's
/// scale would be NaN), an element count that does not fill the packed bytes of FP4/FP6, or
/// a dtype the conversion does not accept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Kept {
    /// The tensor's name.
    pub name: String,
    /// Why it was not converted.
    pub reason: String,
    /// Whether the default choice of tensors left it out (it is not a linear layer's
    /// weight), rather than the conversion refusing it.
    pub by_default: bool,
}

/// What [`plan_file`](crate::plan_file) finds that a conversion would do to one tensor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlannedTensor {
    /// The tensor's name (`.npy` and raw: the input file name).
    pub name: String,
    /// `convert`, `keep` (left out by the default choice of tensors, or selected but not
    /// something the conversion can take: see `reason`) or `copy` (not selected).
    pub action: &'static str,
    /// Why a kept tensor is kept.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The input dtype (`F32`, `<f4`, `raw f32`, …).
    pub input_dtype: String,
    /// The output dtype.
    pub dtype: String,
    /// The shape.
    pub shape: Vec<u64>,
    /// Bytes of the output tensor (its scale tensor not included).
    pub bytes: u64,
    /// The scale tensor's name or sidecar file, with block scaling.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<String>,
    /// Bytes of the scale tensor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale_bytes: Option<u64>,
}

/// The plan of a conversion, without converting: [`plan_file`](crate::plan_file).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FilePlan {
    /// `npy`, `safetensors` or `raw`.
    pub kind: &'static str,
    /// Every tensor, in data order (scale tensors are named in their tensor's entry).
    pub tensors: Vec<PlannedTensor>,
    /// The size of the output file in bytes (sidecar scale file not included).
    pub output_bytes: u64,
    /// The size of the sidecar scale file of a `.npy` or raw output.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale_file_bytes: Option<u64>,
}
