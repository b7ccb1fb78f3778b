//! Block-scaled quantization as the GPU stacks define it: the scale rules, scale formats,
//! block shapes, the NVFP4 second level, the swizzled scale layout, and dequantization.
//!
//! A tensor is cut into blocks ([`Block`]: N consecutive elements along an axis, R×C tiles
//! over the last two axes, whole rows, or the whole tensor). Each block gets one scale in
//! [`ScaleFormat`] from its largest magnitude `amax`:
//!
//! - **`ue8m0`** (a power of two, OCP MX): by [`ScaleRule`]; the elements are multiplied by
//!   2^−shared exactly before they are rounded (one rounding).
//! - **`f32`, `bf16`**: `s = amax / max` in `f32` (round to nearest), then rounded to the
//!   scale format (`bf16`: to nearest even); never below the format's smallest normal, so an
//!   all-zero block gets that and no block divides by zero. Elements are `RN_f32(x / s)`,
//!   then rounded to the element format (torchao's `quantize_affine_float8` and DeepSeek's
//!   FP8 block quantization divide the same way).
//! - **`ue4m3`** (NVFP4): `s = amax / max` in `f32`, with a second level divided by the
//!   per-tensor scale `s2` in `f32`, clamped to [2^−6, 448] and rounded to `e4m3`; elements
//!   are `RN_f32(x × r)` with the rounded reciprocal `r = RN_f32(1 / s)` (one level) or
//!   `r = RN_f32(RN_f32(1 / s2) / s)` (two levels), as torchao's `nvfp4_quantize`. The
//!   per-tensor scale is `s2 = RN_f32(amax_t / (448 × 6))` (`amax_t` over the blocks without
//!   NaN or infinity), ModelOpt's `weight_scale_2`, but never below 2^-121
//!   ([`SECOND_LEVEL_MIN`]: so that `r ≤ 2^127` stays finite); an all-zero tensor gets
//!   `s2 = 0`, every block scale 0 and zero elements (TransformerEngine's rule).
//!
//! A block holding a NaN or an infinity gets the scale format's NaN (`0xff`, `0x7f`, the
//! canonical `f32`/`bf16` NaN) and its elements are converted unscaled; they all read back as
//! NaN (the statistics count them so). No element factor is infinite or NaN. Dequantization
//! is the exact product `q × s (× s2)`, rounded once to the output format.
//!
//! This module is the one rule set; it converts nothing itself (that is `chunk/`):
//! `geometry.rs` maps a shape and a block to tiles over matrices, `rule.rs` computes each
//! block's scale (every format and rule, for the MX fast path too), `swizzle.rs` is the
//! swizzled layout, `recipes.rs` the named recipes.

mod geometry;
pub(crate) mod recipes;
pub(crate) mod rule;
mod swizzle;

pub use geometry::{scale_shape, Geometry};
pub use recipes::{Recipe, RECIPES};
pub use rule::{
    block_scale, divisor, scale_bits, scale_value, second_level_scale, ue8m0_shared, Divisor,
    Element, SECOND_LEVEL_MIN,
};
pub use swizzle::{swizzle, swizzled_index, swizzled_len, unswizzle};

use crate::error::{Error, Result};
use gpucvt_core::format::{Format, BF16, E4M3, F32, UE8M0};
use serde::Serialize;

/// How a `ue8m0` (power-of-two) block scale is chosen from the block's largest magnitude
/// `amax`; torchao's `ScaleCalculationMode` names, with gpucvt's older names as aliases.
/// `emax` is the exponent of the element format's largest power of two (8 for e4m3, 15 for
/// e5m2, 2 for e2m3 and e2m1, 4 for e3m2); the shared exponent is clamped to [−127, 127].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScaleRule {
    /// OCP MX v1.0 §6.3 (alias `ocp`): floor(log2(amax)) − emax; an all-zero block gets
    /// −127. Elements above the element format's range after scaling saturate or overflow
    /// as the element conversion says.
    #[default]
    Floor,
    /// NVIDIA's (cuBLAS's block-scaling recipe; alias `rp`): the smallest power of two not
    /// below `amax / max` (the quotient in `f32`), i.e. `cvt.rp.satfinite.ue8m0x2.f32` of it:
    /// no element saturates.
    Rceil,
    /// ceil(log2(amax)) − emax.
    Ceil,
    /// floor(log2(amax′)) − emax, amax′ being amax rounded to the element format's mantissa
    /// bits (half an element ulp added to the `f32` encoding, the lower bits dropped), as
    /// torchao's `EVEN`.
    Even,
}

impl ScaleRule {
    /// Every rule, in documentation order.
    pub const ALL: [ScaleRule; 4] = [
        ScaleRule::Floor,
        ScaleRule::Rceil,
        ScaleRule::Ceil,
        ScaleRule::Even,
    ];

    /// The rule's name.
    pub fn name(self) -> &'static str {
        match self {
            ScaleRule::Floor => "floor",
            ScaleRule::Rceil => "rceil",
            ScaleRule::Ceil => "ceil",
            ScaleRule::Even => "even",
        }
    }

    /// The rule of a name or alias (`ocp` = `floor`, `rp` = `rceil`).
    ///
    /// ```
    /// use gpucvt_tensor::scaling::ScaleRule;
    /// assert_eq!(ScaleRule::from_name("ocp"), Some(ScaleRule::Floor));
    /// assert_eq!(ScaleRule::from_name("rceil"), Some(ScaleRule::Rceil));
    /// ```
    pub fn from_name(s: &str) -> Option<ScaleRule> {
        Some(match s {
            "floor" | "ocp" => ScaleRule::Floor,
            "rceil" | "rp" => ScaleRule::Rceil,
            "ceil" => ScaleRule::Ceil,
            "even" => ScaleRule::Even,
            _ => return None,
        })
    }
}

/// The format of the block scales.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScaleFormat {
    /// A power of two 2^(b − 127), `0xff` NaN (OCP MX; safetensors `F8_E8M0`).
    #[default]
    Ue8m0,
    /// An `e4m3` byte with the sign clear (NVFP4; safetensors `F8_E4M3`).
    Ue4m3,
    /// `f32`.
    F32,
    /// `bf16`.
    Bf16,
}

impl ScaleFormat {
    /// Every scale format.
    pub const ALL: [ScaleFormat; 4] = [
        ScaleFormat::Ue8m0,
        ScaleFormat::Ue4m3,
        ScaleFormat::F32,
        ScaleFormat::Bf16,
    ];

    /// The format's name.
    pub fn name(self) -> &'static str {
        match self {
            ScaleFormat::Ue8m0 => "ue8m0",
            ScaleFormat::Ue4m3 => "ue4m3",
            ScaleFormat::F32 => "f32",
            ScaleFormat::Bf16 => "bf16",
        }
    }

    /// The scale format of a name.
    pub fn from_name(s: &str) -> Option<ScaleFormat> {
        ScaleFormat::ALL.into_iter().find(|f| f.name() == s)
    }

    /// The catalogue format its bits are stored as (`ue4m3` as an `e4m3` byte).
    pub fn storage(self) -> &'static Format {
        match self {
            ScaleFormat::Ue8m0 => &UE8M0,
            ScaleFormat::Ue4m3 => &E4M3,
            ScaleFormat::F32 => &F32,
            ScaleFormat::Bf16 => &BF16,
        }
    }

    /// Bytes per scale.
    pub fn bytes(self) -> usize {
        match self {
            ScaleFormat::Ue8m0 | ScaleFormat::Ue4m3 => 1,
            ScaleFormat::Bf16 => 2,
            ScaleFormat::F32 => 4,
        }
    }
}

/// Which elements share a scale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Block {
    /// N consecutive elements along the blocked axis (which must be a multiple of N).
    Len(u64),
    /// R×C tiles over the last two axes (the last tile of a row or column may be smaller).
    Tile(u64, u64),
    /// Every element of a slice along the blocked axis (one scale per row, or per channel).
    Row,
    /// The whole tensor.
    Tensor,
}

impl Block {
    /// Parses `N`, `RxC`, `row` or `tensor` (sides 1 to 65,536).
    ///
    /// ```
    /// use gpucvt_tensor::scaling::Block;
    /// assert_eq!(Block::parse("32").unwrap(), Block::Len(32));
    /// assert_eq!(Block::parse("128x128").unwrap(), Block::Tile(128, 128));
    /// assert!(Block::parse("0").is_err());
    /// ```
    pub fn parse(s: &str) -> Result<Block> {
        let side = |t: &str| -> Result<u64> {
            match t.parse::<u64>() {
                Ok(n) if (1..=65536).contains(&n) => Ok(n),
                _ => Err(Error::Option(crate::options::msg![
                    (crate::options::Opt::Block, format!("{s:?}")),
                    ": expected N, RxC (sides 1 to 65536), row or tensor"
                ])),
            }
        };
        Ok(match s {
            "row" => Block::Row,
            "tensor" => Block::Tensor,
            _ => match s.split_once(['x', 'X']) {
                Some((r, c)) => Block::Tile(side(r)?, side(c)?),
                None => Block::Len(side(s)?),
            },
        })
    }

    /// The block as `parse` reads it.
    pub fn text(self) -> String {
        match self {
            Block::Len(n) => n.to_string(),
            Block::Tile(r, c) => format!("{r}x{c}"),
            Block::Row => "row".into(),
            Block::Tensor => "tensor".into(),
        }
    }
}

/// Where the scales go: row-major in the shape [`scale_shape`] gives, or the swizzled
/// layout ([`swizzle`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ScaleLayout {
    /// Row-major.
    #[default]
    Rows,
    /// cuBLASLt/CUTLASS's 128×4 tiles ([`swizzled_index`]).
    Swizzled,
}

/// Block scaling: which elements share a scale, and how the scale is chosen and stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BlockScaling {
    /// Which elements share a scale.
    pub block: Block,
    /// The blocked axis of [`Block::Len`] and [`Block::Row`] (negative: from the end).
    pub axis: i64,
    /// The scale format.
    pub format: ScaleFormat,
    /// How a `ue8m0` scale is chosen (only `ue8m0` scales have rules).
    pub rule: ScaleRule,
    /// A per-tensor `f32` scale above the block scales (NVFP4's two levels; `ue4m3` only).
    pub second_level: bool,
    /// Where the scales go.
    pub layout: ScaleLayout,
}

impl BlockScaling {
    /// OCP MX: `ue8m0` scales of blocks of `size` along the last axis, chosen by `rule`.
    pub fn mx(size: u64, rule: ScaleRule) -> BlockScaling {
        BlockScaling {
            block: Block::Len(size),
            axis: -1,
            format: ScaleFormat::Ue8m0,
            rule,
            second_level: false,
            layout: ScaleLayout::Rows,
        }
    }

    /// Checks the combination: a second level only with `ue4m3` scales, the swizzled layout
    /// only for blocks along the last axis.
    pub fn check(&self) -> Result<()> {
        let sides = match self.block {
            Block::Len(n) => vec![n],
            Block::Tile(r, c) => vec![r, c],
            _ => vec![],
        };
        if let Some(bad) = sides.into_iter().find(|s| !(1..=65536).contains(s)) {
            return Err(Error::Invalid(format!(
                "the block size must be 1 to 65536, not {bad}"
            )));
        }
        if self.second_level && self.format != ScaleFormat::Ue4m3 {
            return Err(Error::Invalid(format!(
                "a second-level (per-tensor) scale goes with ue4m3 block scales (NVFP4), not {}",
                self.format.name()
            )));
        }
        if self.layout == ScaleLayout::Swizzled
            && !(matches!(self.block, Block::Len(_)) && self.axis == -1)
        {
            use crate::options::{msg, Opt};
            let mut m = msg![
                "the swizzled scale layout is for blocks of N along the last axis (MX, NVFP4), not ",
                (Opt::Block, self.block.text())
            ];
            if self.axis != -1 {
                m.0.extend(msg![" ", (Opt::Axis, self.axis)].0);
            }
            return Err(Error::Option(m));
        }
        Ok(())
    }

    /// Whether the streaming engine's MX path does this: `ue8m0` scales of blocks along the
    /// last axis, row-major.
    pub fn is_mx(&self) -> bool {
        matches!(self.block, Block::Len(_))
            && self.axis == -1
            && self.format == ScaleFormat::Ue8m0
            && !self.second_level
    }

    /// The shape the scales are written in: [`scale_shape`], or for the swizzled layout
    /// the leading axes and the swizzled length of the last two.
    pub fn written_shape(&self, shape: &[u64]) -> Vec<u64> {
        let s = scale_shape(shape, self.block, self.axis);
        match self.layout {
            ScaleLayout::Rows => s,
            ScaleLayout::Swizzled => {
                let (_, rows, cols) = swizzle_dims(&s);
                let mut out: Vec<u64> = s[..s.len().saturating_sub(2)].to_vec();
                out.push(swizzled_len(rows, cols));
                out
            }
        }
    }
}

/// A row-major scale shape as swizzled matrices: (batches, rows, columns), the last two
/// axes being the matrix (a 1-D scale shape is one row).
pub fn swizzle_dims(s: &[u64]) -> (u64, u64, u64) {
    match s.len() {
        0 => (1, 1, 1),
        1 => (1, 1, s[0]),
        l => (s[..l - 2].iter().product(), s[l - 2], s[l - 1]),
    }
}

/// The `.safetensors` metadata key under which gpucvt records how tensor `name` is
/// block-scaled ([`BlockScaling::describe`]), for `--dequantize`.
pub fn metadata_key(name: &str) -> String {
    format!("gpucvt.scales.{name}")
}

impl BlockScaling {
    /// The block scaling as `block=16 axis=-1 scale=ue4m3 rule=floor second_level=true
    /// layout=swizzled` ([`BlockScaling::from_description`] reads it back).
    pub fn describe(&self) -> String {
        format!(
            "block={} axis={} scale={} rule={} second_level={} layout={}",
            self.block.text(),
            self.axis,
            self.format.name(),
            self.rule.name(),
            self.second_level,
            match self.layout {
                ScaleLayout::Rows => "rows",
                ScaleLayout::Swizzled => "swizzled",
            }
        )
    }

    /// Reads [`BlockScaling::describe`]'s text.
    ///
    /// ```
    /// use gpucvt_tensor::scaling::{BlockScaling, ScaleRule};
    /// let b = BlockScaling::mx(32, ScaleRule::Even);
    /// assert_eq!(BlockScaling::from_description(&b.describe()).unwrap(), b);
    /// ```
    pub fn from_description(text: &str) -> Result<BlockScaling> {
        let bad = |what: &str| Error::Invalid(format!("block scaling {text:?}: {what}"));
        let mut b = BlockScaling::mx(1, ScaleRule::Floor);
        let mut seen_block = false;
        for part in text.split_whitespace() {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| bad("expected key=value"))?;
            match k {
                "block" => {
                    b.block = Block::parse(v)?;
                    seen_block = true;
                }
                "axis" => b.axis = v.parse().map_err(|_| bad("axis"))?,
                "scale" => b.format = ScaleFormat::from_name(v).ok_or_else(|| bad("scale"))?,
                "rule" => b.rule = ScaleRule::from_name(v).ok_or_else(|| bad("rule"))?,
                "second_level" => b.second_level = v.parse().map_err(|_| bad("second_level"))?,
                "layout" => {
                    b.layout = match v {
                        "rows" => ScaleLayout::Rows,
                        "swizzled" => ScaleLayout::Swizzled,
                        _ => return Err(bad("layout")),
                    }
                }
                _ => {}
            }
        }
        if !seen_block {
            return Err(bad("no block"));
        }
        Ok(b)
    }
}
