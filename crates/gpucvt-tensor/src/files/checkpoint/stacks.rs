//! How each serving stack stores a quantized linear layer `P` (whose weight is `P.weight`):
//! the names, dtypes and shapes of its tensors, as data. The facts and their sources are in
//! `docs/reference/stack-layouts.md`.

use crate::options::{msg, Layout, Message, Opt};
use crate::scaling::{Block, BlockScaling, ScaleFormat, ScaleLayout};
use gpucvt_core::format::Format;
use safetensors::Dtype;

/// A quantization the stacks name, recognised from the element format and the block
/// scaling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Scheme {
    /// e2m1 in blocks of 16 with `ue4m3` scales and a per-tensor second level.
    Nvfp4,
    /// e2m1 in blocks of 32 with `ue8m0` scales.
    Mxfp4,
    /// e4m3 in blocks of 32 with `ue8m0` scales.
    Mxfp8,
    /// e4m3 with one `f32` scale.
    Fp8Tensor,
    /// e4m3 with an `f32` scale per row (output channel).
    Fp8Row,
    /// e4m3 with an `f32` scale per 128×128 tile.
    Fp8Block128,
}

impl Scheme {
    /// The scheme of elements `dst` scaled by `b`, if the stacks name it.
    pub(crate) fn of(dst: &Format, b: Option<&BlockScaling>) -> Option<Scheme> {
        let b = b?;
        if b.axis != -1 || b.layout != ScaleLayout::Rows {
            return None;
        }
        use ScaleFormat::*;
        Some(match (dst.name, b.block, b.format, b.second_level) {
            ("e2m1", Block::Len(16), Ue4m3, true) => Scheme::Nvfp4,
            ("e2m1", Block::Len(32), Ue8m0, false) => Scheme::Mxfp4,
            ("e4m3", Block::Len(32), Ue8m0, false) => Scheme::Mxfp8,
            ("e4m3", Block::Tensor, F32, false) => Scheme::Fp8Tensor,
            ("e4m3", Block::Row, F32, false) => Scheme::Fp8Row,
            ("e4m3", Block::Tile(128, 128), F32, false) => Scheme::Fp8Block128,
            _ => return None,
        })
    }

    /// The recipe that gives it.
    pub(crate) fn recipe(self) -> &'static str {
        match self {
            Scheme::Nvfp4 => "nvfp4",
            Scheme::Mxfp4 => "mxfp4",
            Scheme::Mxfp8 => "mxfp8",
            Scheme::Fp8Tensor => "fp8-tensor",
            Scheme::Fp8Row => "fp8-row",
            Scheme::Fp8Block128 => "fp8-block128",
        }
    }
}

/// The shape a scale tensor is stored in, from gpucvt's row-major scale shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScaleShape {
    /// As gpucvt writes it (`[out, in/block]`, `[out, 1]`, tiles `[⌈out/128⌉, ⌈in/128⌉]`).
    AsWritten,
    /// One value per row, `[out]` (ModelOpt's per-channel FP8).
    PerRow,
    /// A one-element vector `[1]` (compressed-tensors' per-tensor scales).
    One,
    /// Tiles as `[⌈out/128⌉, 1, ⌈in/128⌉, 1]` (ModelOpt's `FP8_PB_WO`).
    Tiles4d,
}

impl ScaleShape {
    pub(crate) fn apply(self, written: &[u64]) -> Vec<u64> {
        match (self, written) {
            (ScaleShape::AsWritten, _) => written.to_vec(),
            (ScaleShape::PerRow, [rows, 1]) => vec![*rows],
            (ScaleShape::One, _) => vec![1],
            (ScaleShape::Tiles4d, [r, c]) => vec![*r, 1, *c, 1],
            _ => written.to_vec(),
        }
    }
}

/// How the per-tensor second level is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Second {
    /// `s2` itself, an `f32` of shape `[]` (ModelOpt's `weight_scale_2`, multiplied).
    Scalar,
    /// `RN_f32(1 / s2)`, an `f32` of shape `[1]` (compressed-tensors' `weight_global_scale`,
    /// divided by). It is the factor gpucvt's quantizer multiplies by, so nothing is lost;
    /// an all-zero tensor's `s2 = 0` is stored as 1, as compressed-tensors does.
    Reciprocal,
}

/// How a stack stores one quantized linear layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Storage {
    /// The weight's last name part (`weight`, compressed-tensors' packed FP4 `weight_packed`).
    pub(crate) weight: &'static str,
    /// FP4 weights as `U8`, two elements a byte (the last dimension halved).
    pub(crate) fp4_as_u8: bool,
    /// The block scales' last name part.
    pub(crate) scale: &'static str,
    /// `ue8m0` scales as `U8` instead of `F8_E8M0`.
    pub(crate) e8m0_as_u8: bool,
    pub(crate) scale_shape: ScaleShape,
    /// The second level's last name part and storage.
    pub(crate) second: Option<(&'static str, Second)>,
}

const fn plain(scale: &'static str, scale_shape: ScaleShape) -> Storage {
    Storage {
        weight: "weight",
        fp4_as_u8: false,
        scale,
        e8m0_as_u8: false,
        scale_shape,
        second: None,
    }
}

/// How `layout` stores a layer quantized by `scheme`, or why it has no such layer (a
/// message for the user).
pub(crate) fn storage(layout: Layout, scheme: Scheme) -> Result<Storage, Message> {
    use ScaleShape::*;
    use Scheme::*;
    let ok = match (layout, scheme) {
        (Layout::Gpucvt, _) => None,
        (Layout::Modelopt, Nvfp4) => Some(Storage {
            fp4_as_u8: true,
            second: Some(("weight_scale_2", Second::Scalar)),
            ..plain("weight_scale", AsWritten)
        }),
        (Layout::Modelopt, Fp8Row) => Some(plain("weight_scale", PerRow)),
        (Layout::Modelopt, Fp8Block128) => Some(plain("weight_scale", Tiles4d)),
        (Layout::Modelopt, Fp8Tensor) => {
            return Err(msg![
                "ModelOpt's per-tensor FP8 (quant_algo FP8) quantizes activations with static \
                 scales (input_scale), which need calibration data gpucvt does not have; its \
                 variants with dynamic activations are per-row (",
                (Opt::Recipe, "fp8-row"),
                ", FP8_PER_CHANNEL_PER_TOKEN) and 128x128 blocks (",
                (Opt::Recipe, "fp8-block128"),
                ", FP8_PB_WO)"
            ])
        }
        (Layout::CompressedTensors, Nvfp4) => Some(Storage {
            weight: "weight_packed",
            fp4_as_u8: true,
            second: Some(("weight_global_scale", Second::Reciprocal)),
            ..plain("weight_scale", AsWritten)
        }),
        (Layout::CompressedTensors, Mxfp4) => Some(Storage {
            weight: "weight_packed",
            fp4_as_u8: true,
            e8m0_as_u8: true,
            ..plain("weight_scale", AsWritten)
        }),
        (Layout::CompressedTensors, Mxfp8) => Some(Storage {
            e8m0_as_u8: true,
            ..plain("weight_scale", AsWritten)
        }),
        (Layout::CompressedTensors, Fp8Tensor) => Some(plain("weight_scale", One)),
        (Layout::CompressedTensors, Fp8Row | Fp8Block128) => Some(plain("weight_scale", AsWritten)),
        (Layout::Deepseek, Fp8Block128) => Some(plain("weight_scale_inv", AsWritten)),
        (Layout::Deepseek, _) => {
            return Err(msg![
                "DeepSeek's checkpoints hold FP8 in 128x128 blocks only (",
                (Opt::Recipe, "fp8-block128"),
                ")"
            ])
        }
        (Layout::Modelopt, Mxfp4 | Mxfp8) => {
            return Err(msg![format!(
                "gpucvt does not write ModelOpt's {} (its export of MX formats is not \
                 documented in docs/reference/stack-layouts.md); the compressed-tensors layout \
                 has it",
                scheme.recipe()
            )])
        }
    };
    ok.ok_or_else(|| msg!["gpucvt's own layout has no stack storage"])
}

/// The safetensors dtype and shape a stored weight of gpucvt dtype `dtype` and shape
/// `shape` gets.
pub(crate) fn weight_stored(s: &Storage, dtype: Dtype, shape: &[usize]) -> (Dtype, Vec<usize>) {
    if s.fp4_as_u8 && dtype == Dtype::F4 {
        let mut shape = shape.to_vec();
        if let Some(last) = shape.last_mut() {
            *last /= 2;
        }
        return (Dtype::U8, shape);
    }
    (dtype, shape.to_vec())
}

/// The stored dtype of a scale tensor of gpucvt dtype `dtype`.
pub(crate) fn scale_dtype(s: &Storage, dtype: Dtype) -> Dtype {
    match dtype {
        Dtype::F8_E8M0 if s.e8m0_as_u8 => Dtype::U8,
        d => d,
    }
}

/// The bytes of a stored second level from gpucvt's `s2` (little-endian `f32`).
pub(crate) fn second_bytes(how: Second, s2: [u8; 4]) -> [u8; 4] {
    match how {
        Second::Scalar => s2,
        Second::Reciprocal => {
            let s = f32::from_le_bytes(s2);
            let g = if s == 0.0 { 1.0 } else { 1.0 / s };
            g.to_le_bytes()
        }
    }
}

/// The module of a linear layer's weight `P.weight`, if the name is one.
pub(crate) fn module_of(name: &str) -> Option<&str> {
    name.strip_suffix(".weight")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scaling::Recipe;
    use gpucvt_core::format::Format;

    fn scheme(recipe: &str) -> Option<Scheme> {
        let r = Recipe::named(recipe).unwrap();
        Scheme::of(Format::from_name(r.to).unwrap(), Some(&r.scaling))
    }

    #[test]
    fn every_recipe_but_mxfp6_is_a_scheme_and_other_scalings_are_none() {
        for r in crate::scaling::recipes::RECIPES {
            assert_eq!(
                scheme(r.name).map(|s| s.recipe()),
                (r.name != "mxfp6").then_some(r.name)
            );
        }
        let mut nvfp4 = Recipe::named("nvfp4").unwrap().scaling;
        nvfp4.layout = ScaleLayout::Swizzled;
        let e2m1 = Format::from_name("e2m1").unwrap();
        assert_eq!(Scheme::of(e2m1, Some(&nvfp4)), None);
        assert_eq!(Scheme::of(e2m1, None), None);
    }

    #[test]
    fn storage_follows_each_stack() {
        let ct = storage(Layout::CompressedTensors, Scheme::Nvfp4).unwrap();
        assert_eq!((ct.weight, ct.fp4_as_u8), ("weight_packed", true));
        assert_eq!(ct.second, Some(("weight_global_scale", Second::Reciprocal)));
        let mo = storage(Layout::Modelopt, Scheme::Nvfp4).unwrap();
        assert_eq!(mo.second, Some(("weight_scale_2", Second::Scalar)));
        assert_eq!(
            storage(Layout::Deepseek, Scheme::Fp8Block128)
                .unwrap()
                .scale,
            "weight_scale_inv"
        );
        assert!(storage(Layout::Modelopt, Scheme::Fp8Tensor)
            .unwrap_err()
            .to_string()
            .contains("input_scale"));
        assert!(storage(Layout::Deepseek, Scheme::Mxfp8).is_err());
        assert!(storage(Layout::Gpucvt, Scheme::Mxfp8).is_err());
    }

    #[test]
    fn shapes_dtypes_and_second_levels() {
        assert_eq!(ScaleShape::PerRow.apply(&[7, 1]), vec![7]);
        assert_eq!(ScaleShape::One.apply(&[]), vec![1]);
        assert_eq!(ScaleShape::Tiles4d.apply(&[2, 3]), vec![2, 1, 3, 1]);
        assert_eq!(ScaleShape::AsWritten.apply(&[4, 2]), vec![4, 2]);
        let ct = storage(Layout::CompressedTensors, Scheme::Mxfp4).unwrap();
        assert_eq!(
            weight_stored(&ct, Dtype::F4, &[8, 64]),
            (Dtype::U8, vec![8, 32])
        );
        assert_eq!(scale_dtype(&ct, Dtype::F8_E8M0), Dtype::U8);
        let mo = storage(Layout::Modelopt, Scheme::Fp8Row).unwrap();
        assert_eq!(
            weight_stored(&mo, Dtype::F8_E4M3, &[8, 64]),
            (Dtype::F8_E4M3, vec![8, 64])
        );
        let s2 = 7.75f32 / 2688.0;
        let g = f32::from_le_bytes(second_bytes(Second::Reciprocal, s2.to_le_bytes()));
        assert_eq!(g, 1.0 / s2);
        assert_eq!(
            second_bytes(Second::Reciprocal, 0f32.to_le_bytes()),
            1f32.to_le_bytes()
        );
        assert_eq!(
            second_bytes(Second::Scalar, s2.to_le_bytes()),
            s2.to_le_bytes()
        );
        assert_eq!(module_of("a.b.weight"), Some("a.b"));
        assert_eq!(module_of("a.b.bias"), None);
    }
}
