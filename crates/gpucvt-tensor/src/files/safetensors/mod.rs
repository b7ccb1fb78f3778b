//! `.safetensors` files: the header ([`header`]), what happens to each tensor ([`layout`]),
//! and the writer ([`write`]).

pub(crate) mod header;
pub(crate) mod layout;
pub(crate) mod write;
