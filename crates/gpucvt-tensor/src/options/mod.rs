//! What the user asked, as values: [`Options`] of a conversion (with its [`Recipe`]), and
//! [`ConvertRequest`] / [`ScalingRequest`], the options as text checked and built into them
//! (one reader for every front end).

mod layout;
mod message;
mod request;
mod select;

pub use layout::Layout;
pub(crate) use message::msg;
pub use message::{Message, Opt, Piece};
pub use request::{
    lookup_format, Built, ConvertRequest, ElementRequest, ElementRule, ScalingRequest,
};
pub use select::not_a_linear_weight;

use crate::error::{Error, Result};
use crate::scaling::BlockScaling;
use gpucvt_core::convert::Conversion;
use gpucvt_core::format::Format;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Chooses the conversion for a tensor from its element format; a format it does not take
/// is an [`Error::Refused`] saying why (for example "cvt.rn.f16.f32 converts f32 elements,
/// but the data is bf16"), whose message becomes the tensor's reason for being kept.
pub type Recipe = Box<dyn Fn(&Format) -> Result<Conversion> + Sync>;

/// What to convert and how.
pub struct Options {
    /// The conversion of each tensor, from its element format.
    pub recipe: Recipe,
    /// The element format of a raw input (required there); for `.npy` input, reinterpret the
    /// integer container (`<u2` as `bf16`, `|u1` as `e4m3`, …).
    pub from: Option<Format>,
    /// `.safetensors`: the tensors to convert, as names or glob patterns (`*.weight`,
    /// `layers.[0-3].*`); the others are copied unchanged. Each must match some tensor.
    /// Empty: the weights of linear layers ([`not_a_linear_weight`]), or every tensor with
    /// [`Options::all`].
    pub tensors: Vec<String>,
    /// `.safetensors` without [`Options::tensors`]: convert every tensor, not only the
    /// weights of linear layers.
    pub all: bool,
    /// `.safetensors`: names or glob patterns of tensors not to convert (copied unchanged),
    /// applied after [`Options::tensors`].
    pub exclude: Vec<String>,
    /// Make a selected tensor that the conversion cannot take an error, instead of keeping it
    /// unchanged (see [`Kept`](crate::Kept)); and a tensor some of whose blocks get the NaN
    /// scale (MX scales: a NaN or an infinity in the block) an error, instead of a note.
    pub strict: bool,
    /// Convert integer and boolean tensors too. By default they (indices, step counters,
    /// masks) are kept unchanged unless named exactly in [`Options::tensors`].
    pub integers: bool,
    /// Worker threads (0: one per core).
    pub threads: usize,
    /// Seed of the random words of stochastic rounding.
    pub seed: u64,
    /// MX block scaling.
    pub block: Option<BlockScaling>,
    /// Replace a read-only output (and remove or replace read-only sidecar files of a
    /// `.npy` or raw output); without it they are an [`Error::ReadOnly`].
    pub force: bool,
    /// A flag another thread may set to stop the conversion: it is polled between chunks
    /// (a few MiB), and a set flag stops it with [`Error::Cancelled`], its temporaries
    /// removed and nothing written.
    pub cancel: Option<Arc<AtomicBool>>,
    /// `.safetensors`: the layout the output follows (gpucvt's own, or a serving stack's).
    pub layout: Layout,
}

impl Options {
    /// Options with a recipe and everything else by default.
    pub fn new(recipe: Recipe) -> Options {
        Options {
            recipe,
            from: None,
            tensors: Vec::new(),
            all: false,
            exclude: Vec::new(),
            strict: false,
            integers: false,
            threads: 0,
            seed: 0,
            block: None,
            force: false,
            cancel: None,
            layout: Layout::Gpucvt,
        }
    }
}

/// [`Error::Cancelled`] if the caller's cancel flag is set.
pub(crate) fn check_cancel(flag: Option<&AtomicBool>) -> Result<()> {
    match flag {
        Some(f) if f.load(Ordering::Relaxed) => Err(Error::Cancelled),
        _ => Ok(()),
    }
}
