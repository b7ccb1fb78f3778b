//! What the test suites share besides the reference: one seeded random generator, and a
//! `.npy` writer written from NumPy's format description (not gpucvt's), to feed gpucvt's
//! reader files it did not write.

/// SplitMix64: a small seeded generator for test inputs (reproducible from its seed, the
/// tuple's field).
///
/// ```
/// use gpucvt_reference::Rng;
/// let (mut a, mut b) = (Rng(7), Rng(7));
/// assert_eq!(a.next_u64(), b.next_u64());
/// assert!(a.below(10) < 10);
/// ```
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// The next 32 random bits (the high half of [`Self::next_u64`]).
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// A `.npy` file (format version 1.0) of `data` with NumPy type string `descr` (`<f4`, `|u1`,
/// ...) and shape `shape` (`[]` for a 0-d array), C order, as NumPy writes it: the magic
/// string, the header length, a Python dictionary literal padded with spaces and a newline so
/// that the data starts at a multiple of 64 bytes.
///
/// ```
/// let b = gpucvt_reference::npy_bytes("<f4", &[2, 3], &[0; 24]);
/// assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
/// let header_len = u16::from_le_bytes([b[8], b[9]]) as usize;
/// assert_eq!((10 + header_len) % 64, 0);
/// assert!(std::str::from_utf8(&b[10..10 + header_len]).unwrap().contains("'shape': (2, 3), "));
/// ```
pub fn npy_bytes(descr: &str, shape: &[u64], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    // A Python tuple: `()`, `(n,)`, `(a, b)`.
    let tuple = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple}, }}");
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    b.extend_from_slice(dict.as_bytes());
    b.extend_from_slice(data);
    b
}
