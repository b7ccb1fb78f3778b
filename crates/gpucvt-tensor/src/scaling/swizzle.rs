//! The 128×4 swizzled layout of block scales that cuBLASLt and CUTLASS block-scaled GEMMs
//! read for MX and NVFP4 (cuBLAS documentation, "1D Block Scaling Factors Layout"): the scale
//! matrix (rows × scale columns) padded with zeros to whole tiles of 128 rows × 4 columns;
//! the tiles in row-major order, 512 scales each; inside a tile, the scale of row `r`,
//! column `c` at `(r % 32) * 16 + (r / 32) * 4 + c`.

/// Where the scale of row `r`, column `c` of a `rows` × `cols` scale matrix goes in the
/// swizzled layout.
///
/// ```
/// use gpucvt_tensor::scaling::swizzled_index;
/// assert_eq!(swizzled_index(0, 3, 8), 3);
/// assert_eq!(swizzled_index(1, 0, 8), 16);
/// assert_eq!(swizzled_index(32, 0, 8), 4);
/// assert_eq!(swizzled_index(0, 4, 8), 512); // the next tile to the right
/// assert_eq!(swizzled_index(128, 0, 8), 1024); // the first tile of the next band
/// ```
pub fn swizzled_index(r: u64, c: u64, cols: u64) -> u64 {
    let col_tiles = cols.div_ceil(4);
    let tile = (r / 128) * col_tiles + c / 4;
    tile * 512 + (r % 32) * 16 + ((r % 128) / 32) * 4 + c % 4
}

/// The number of scales of a `rows` × `cols` scale matrix in the swizzled layout (with its
/// padding).
pub fn swizzled_len(rows: u64, cols: u64) -> u64 {
    rows.div_ceil(128) * 128 * cols.div_ceil(4) * 4
}

/// The scales `s` (`batches` matrices of `rows` × `cols`, row-major) in the swizzled layout,
/// each matrix on its own, padding zero.
pub fn swizzle<T: Copy + Default>(s: &[T], batches: u64, rows: u64, cols: u64) -> Vec<T> {
    let per = swizzled_len(rows, cols) as usize;
    let mut out = vec![T::default(); per * batches as usize];
    for b in 0..batches as usize {
        let (src, dst) = (
            &s[b * (rows * cols) as usize..][..(rows * cols) as usize],
            &mut out[b * per..][..per],
        );
        for r in 0..rows {
            for c in 0..cols {
                dst[swizzled_index(r, c, cols) as usize] = src[(r * cols + c) as usize];
            }
        }
    }
    out
}

/// The row-major scales of a swizzled layout ([`swizzle`] undone, padding dropped).
pub fn unswizzle<T: Copy + Default>(s: &[T], batches: u64, rows: u64, cols: u64) -> Vec<T> {
    let per = swizzled_len(rows, cols) as usize;
    let mut out = Vec::with_capacity((batches * rows * cols) as usize);
    for b in 0..batches as usize {
        let src = &s[b * per..][..per];
        for r in 0..rows {
            for c in 0..cols {
                out.push(src[swizzled_index(r, c, cols) as usize]);
            }
        }
    }
    out
}
