//! Streaming a tensor through the chunk engine: read a chunk, convert it (workers in
//! parallel), write it behind while the next is read.
//!
//! - `pipeline`: the element-wise and MX path ([`crate::chunk::Plan`]): chunks read in
//!   order, converted by the pool, written by a writer thread.
//! - `quantized`: tensors of every other block scaling ([`crate::chunk::Quantizer`]), in
//!   chunks of whole tiles, and their scales.

pub(crate) mod pipeline;
pub(crate) mod quantized;
