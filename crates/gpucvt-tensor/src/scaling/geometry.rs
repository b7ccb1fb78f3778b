//! Where the blocks of a tensor are: every block shape is a tile of `r` rows and `c` columns
//! over a batch of matrices (`outer` of them, `m` × `k` each) that the tensor is viewed as.

use crate::error::{Error, Result};
use crate::files::shape_text;
use crate::scaling::Block;

/// A tensor seen as `outer` matrices of `m` × `k` elements (row-major, the matrices one after
/// another), cut into tiles of `r` × `c` (the last tile of a row or column may be smaller).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    /// Matrices.
    pub outer: u64,
    /// Rows per matrix.
    pub m: u64,
    /// Columns per matrix (the elements of a row are consecutive).
    pub k: u64,
    /// Rows per tile.
    pub r: u64,
    /// Columns per tile.
    pub c: u64,
}

impl Geometry {
    /// The tiles of `block` over a tensor of `shape`, blocked along `axis` (negative: from
    /// the end) for [`Block::Len`] and [`Block::Row`]; [`Block::Tile`] covers the last two
    /// axes and [`Block::Tensor`] everything. A shape the block does not fit is
    /// [`Error::Invalid`] saying why.
    pub fn new(shape: &[u64], block: Block, axis: i64) -> Result<Geometry> {
        let n: u64 = shape.iter().product();
        let nd = shape.len() as i64;
        let text = shape_text(shape);
        let axis_at = || -> Result<usize> {
            if nd == 0 {
                return Err(Error::Invalid("a scalar cannot be block-scaled".into()));
            }
            let a = if axis < 0 { nd + axis } else { axis };
            if !(0..nd).contains(&a) {
                return Err(Error::Invalid(format!(
                    "axis {axis} is out of range for shape {text} ({nd} axes)"
                )));
            }
            Ok(a as usize)
        };
        let around = |a: usize| -> (u64, u64, u64) {
            (
                shape[..a].iter().product(),
                shape[a],
                shape[a + 1..].iter().product(),
            )
        };
        Ok(match block {
            Block::Tensor => Geometry {
                outer: 1,
                m: 1,
                k: n,
                r: 1,
                c: n.max(1),
            },
            Block::Row => {
                let a = axis_at()?;
                let (outer, len, inner) = around(a);
                if inner == 1 {
                    Geometry {
                        outer: 1,
                        m: outer,
                        k: len,
                        r: 1,
                        c: len.max(1),
                    }
                } else {
                    Geometry {
                        outer,
                        m: len,
                        k: inner,
                        r: len.max(1),
                        c: 1,
                    }
                }
            }
            Block::Len(size) => {
                let a = axis_at()?;
                let (outer, len, inner) = around(a);
                if !len.is_multiple_of(size) {
                    let which = if a + 1 == shape.len() {
                        "the last dimension".to_string()
                    } else {
                        format!("dimension {a}")
                    };
                    return Err(Error::Invalid(format!(
                        "{which} {len} (shape {text}) is not a multiple of the block size {size}"
                    )));
                }
                if inner == 1 {
                    Geometry {
                        outer: 1,
                        m: outer,
                        k: len,
                        r: 1,
                        c: size,
                    }
                } else {
                    Geometry {
                        outer,
                        m: len,
                        k: inner,
                        r: size,
                        c: 1,
                    }
                }
            }
            Block::Tile(r, c) => {
                if shape.len() < 2 {
                    return Err(Error::Invalid(format!(
                        "{r}x{c} tiles need at least two axes; the shape is {text}"
                    )));
                }
                let k = shape[shape.len() - 1];
                let m = shape[shape.len() - 2];
                Geometry {
                    outer: n / (m * k).max(1),
                    m,
                    k,
                    r,
                    c,
                }
            }
        })
    }

    /// Tiles per column of tiles (the last one may be short).
    pub fn row_tiles(&self) -> u64 {
        self.m.div_ceil(self.r)
    }

    /// Tiles per row of tiles.
    pub fn col_tiles(&self) -> u64 {
        self.k.div_ceil(self.c)
    }

    /// The number of scales.
    pub fn scales(&self) -> u64 {
        self.outer * self.row_tiles() * self.col_tiles()
    }

    /// Elements in all.
    pub fn elements(&self) -> u64 {
        self.outer * self.m * self.k
    }
}

/// The shape of the scales of a tensor of `shape` (row-major, one per block): the blocked
/// axis divided by the block ([`Block::Len`]), the last two by the tile's sides, rounded up
/// ([`Block::Tile`]), the blocked axis made 1 ([`Block::Row`]), or a scalar
/// ([`Block::Tensor`]).
pub fn scale_shape(shape: &[u64], block: Block, axis: i64) -> Vec<u64> {
    let nd = shape.len() as i64;
    let a = if axis < 0 { nd + axis } else { axis }.clamp(0, (nd - 1).max(0)) as usize;
    let mut s = shape.to_vec();
    match block {
        Block::Tensor => s.clear(),
        Block::Row => {
            if let Some(d) = s.get_mut(a) {
                *d = 1;
            }
        }
        Block::Len(size) => {
            if let Some(d) = s.get_mut(a) {
                *d /= size;
            }
        }
        Block::Tile(r, c) => {
            let l = s.len();
            if l >= 2 {
                s[l - 2] = s[l - 2].div_ceil(r);
                s[l - 1] = s[l - 1].div_ceil(c);
            }
        }
    }
    s
}
