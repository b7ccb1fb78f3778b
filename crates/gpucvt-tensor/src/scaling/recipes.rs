//! Named quantization recipes: presets of the element format and the block scaling, each
//! following one stack's definition.

use crate::options::{Message, Opt, Piece};
use crate::scaling::{Block, BlockScaling, ScaleFormat, ScaleLayout, ScaleRule};

/// A named recipe: what `--recipe NAME` expands to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Recipe {
    /// Its name (`mxfp8`, `nvfp4`, …).
    pub name: &'static str,
    /// The element format.
    pub to: &'static str,
    /// Elements saturate to the largest finite value (`.satfinite`), as every stack's
    /// quantizer clamps.
    pub satfinite: bool,
    /// The block scaling.
    pub scaling: BlockScaling,
    /// Whose definition it follows.
    pub follows: &'static str,
}

const fn scaling(block: Block, format: ScaleFormat, second_level: bool) -> BlockScaling {
    BlockScaling {
        block,
        axis: -1,
        format,
        rule: ScaleRule::Floor,
        second_level,
        layout: ScaleLayout::Rows,
    }
}

/// Every recipe.
pub const RECIPES: [Recipe; 7] = [
    Recipe {
        name: "mxfp8",
        to: "e4m3",
        satfinite: true,
        scaling: scaling(Block::Len(32), ScaleFormat::Ue8m0, false),
        follows: "OCP MX v1.0 (MXFP8 E4M3), scale rule floor as torchao's MXTensor default",
    },
    Recipe {
        name: "mxfp6",
        to: "e2m3",
        satfinite: true,
        scaling: scaling(Block::Len(32), ScaleFormat::Ue8m0, false),
        follows: "OCP MX v1.0 (MXFP6 E2M3), scale rule floor",
    },
    Recipe {
        name: "mxfp4",
        to: "e2m1",
        satfinite: true,
        scaling: scaling(Block::Len(32), ScaleFormat::Ue8m0, false),
        follows: "OCP MX v1.0 (MXFP4 E2M1), scale rule floor",
    },
    Recipe {
        name: "nvfp4",
        to: "e2m1",
        satfinite: true,
        scaling: scaling(Block::Len(16), ScaleFormat::Ue4m3, true),
        follows: "NVIDIA NVFP4 (TransformerEngine / ModelOpt: weight_scale, weight_scale_2); block scales as torchao's nvfp4_quantize",
    },
    Recipe {
        name: "fp8-block128",
        to: "e4m3",
        satfinite: true,
        scaling: scaling(Block::Tile(128, 128), ScaleFormat::F32, false),
        follows: "DeepSeek-V3 FP8 weights: 128x128 tiles, f32 scale amax/448 (their weight_scale_inv)",
    },
    Recipe {
        name: "fp8-tensor",
        to: "e4m3",
        satfinite: true,
        scaling: scaling(Block::Tensor, ScaleFormat::F32, false),
        follows: "per-tensor FP8 (torchao float8 tensorwise): f32 scale amax/448",
    },
    Recipe {
        name: "fp8-row",
        to: "e4m3",
        satfinite: true,
        scaling: scaling(Block::Row, ScaleFormat::F32, false),
        follows: "per-row FP8 (torchao float8 rowwise): f32 scale amax/448 per row",
    },
];

impl Recipe {
    /// The recipe of a name.
    ///
    /// ```
    /// let r = gpucvt_tensor::scaling::Recipe::named("nvfp4").unwrap();
    /// assert_eq!(r.expansion().command_line(), "--to e2m1 --satfinite --block 16 --scale ue4m3 --scale-2");
    /// assert_eq!(r.expansion().to_string(),
    ///            "to=\"e2m1\" satfinite=True block=16 scale=\"ue4m3\" scale_2=True");
    /// ```
    pub fn named(name: &str) -> Option<&'static Recipe> {
        RECIPES.iter().find(|r| r.name == name)
    }

    /// The names of every recipe.
    pub fn names() -> impl Iterator<Item = &'static str> {
        RECIPES.iter().map(|r| r.name)
    }

    /// The options it stands for, separated by spaces (each front end spells them:
    /// [`Message::render`]).
    pub fn expansion(&self) -> Message {
        spell(self.to, self.satfinite, &self.scaling)
    }
}

/// The options for elements `to` (with `satfinite`) scaled by `b`, separated by spaces.
pub(crate) fn spell(to: &str, satfinite: bool, b: &BlockScaling) -> Message {
    let mut p = vec![Piece::Set(Opt::To, to.to_string())];
    if satfinite {
        p.push(Piece::On(Opt::Satfinite));
    }
    p.push(Piece::Set(Opt::Block, b.block.text()));
    p.push(Piece::Set(Opt::Scale, b.format.name().to_string()));
    if b.format == ScaleFormat::Ue8m0 {
        p.push(Piece::Set(Opt::ScaleRule, b.rule.name().to_string()));
    }
    if b.second_level {
        p.push(Piece::On(Opt::Scale2));
    }
    if b.axis != -1 {
        p.push(Piece::Set(Opt::Axis, b.axis.to_string()));
    }
    if b.layout == ScaleLayout::Swizzled {
        p.push(Piece::Set(Opt::ScaleLayout, "swizzled".to_string()));
    }
    Message::new(spaced(p))
}

/// The pieces with a space between each two.
pub(crate) fn spaced(p: Vec<Piece>) -> Vec<Piece> {
    let mut out = Vec::with_capacity(2 * p.len());
    for (i, x) in p.into_iter().enumerate() {
        if i > 0 {
            out.push(Piece::Text(" ".into()));
        }
        out.push(x);
    }
    out
}
