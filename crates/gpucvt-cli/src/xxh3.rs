//! XXH3-64 (seed 0, the default secret) of a stream of bytes, the hash `gpucvt sweep --hash`
//! prints: the same value as `twox_hash::XxHash3_64` and `xxhsum -H3`, computed with the
//! stripe loop compiled for AVX-512 where the CPU has it (through
//! [`gpucvt::core::bulk::vectorized`]). The `twox-hash` crate picks AVX2 at most; the hash of
//! the 32 GiB of a 64-bit sweep was then about a third of its processor time.
//!
//! Only streams longer than 240 bytes take this path (XXH3's "long" inputs, which every sweep
//! of an 8-bit or wider source is); shorter ones are hashed by `twox-hash` at the end. The
//! tests compare both ways with `twox-hash` over every length up to a few blocks, split at
//! many points, and over long random streams.
//!
//! The algorithm, from the XXH3 specification: eight 64-bit accumulators take 64-byte
//! stripes, each with its 64-byte window of the secret (moving 8 bytes per stripe); after
//! every 16 stripes (a block) they are scrambled. A stripe is taken only when at least one
//! more byte follows it: the last 64 bytes of the input are always taken at the end, as the
//! "last stripe", with a window of their own. The accumulators are then merged and mixed with
//! the length.

use gpucvt::core::bulk::{vectorized, Vectorizable};

/// XXH3's default secret (`kSecret` of the specification), 192 bytes.
const SECRET: [u8; 192] = [
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
    0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
    0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
    0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
    0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
    0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
    0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
    0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
    0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
    0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
    0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
];

const PRIME32_1: u64 = 0x9E37_79B1;
const PRIME32_2: u64 = 0x85EB_CA77;
const PRIME32_3: u64 = 0xC2B2_AE3D;
const PRIME64_1: u64 = 0x9E37_79B1_85EB_CA87;
const PRIME64_2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const PRIME64_3: u64 = 0x1656_67B1_9E37_79F9;
const PRIME64_4: u64 = 0x85EB_CA77_C2B2_AE63;
const PRIME64_5: u64 = 0x27D4_EB2F_1656_67C5;
/// The multiplier of XXH3's final avalanche.
const PRIME_MX1: u64 = 0x1656_6791_9E37_79F9;

/// Inputs up to this many bytes have XXH3's "short" hashes (left to `twox-hash`).
const CUTOFF: usize = 240;
/// Bytes per stripe, and stripes per block (`(192 − 64) / 8`).
const STRIPE: usize = 64;
const STRIPES_PER_BLOCK: usize = 16;
/// Where the last stripe's window and the merge's words start in the secret.
const LAST_STRIPE_AT: usize = SECRET.len() - STRIPE - 7;
const MERGE_AT: usize = 11;

/// The streaming hasher: [`Xxh3::write`] the bytes in any pieces, then [`Xxh3::finish`].
pub struct Xxh3 {
    acc: [u64; 8],
    /// Stripes taken in the current block.
    stripes: usize,
    /// Bytes written.
    len: u64,
    /// The bytes not taken yet: 1 to 64 once anything is written (a whole stripe waits
    /// here until a byte follows it).
    pending: Vec<u8>,
    /// The last 64 bytes written (the last stripe, once `len` ≥ 64).
    last: [u8; STRIPE],
    /// The first bytes, while there are at most [`CUTOFF`].
    short: Vec<u8>,
}

impl Default for Xxh3 {
    fn default() -> Self {
        Xxh3::new()
    }
}

impl Xxh3 {
    /// A hasher of the empty stream.
    pub fn new() -> Xxh3 {
        Xxh3 {
            acc: [
                PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3, PRIME64_4, PRIME32_2, PRIME64_5,
                PRIME32_1,
            ],
            stripes: 0,
            len: 0,
            pending: Vec::with_capacity(STRIPE),
            last: [0; STRIPE],
            short: Vec::with_capacity(CUTOFF),
        }
    }

    /// Appends `data` to the stream.
    pub fn write(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        if self.len + data.len() as u64 <= CUTOFF as u64 {
            self.short.extend_from_slice(data);
        }
        self.len += data.len() as u64;
        // The last 64 bytes.
        if data.len() >= STRIPE {
            self.last.copy_from_slice(&data[data.len() - STRIPE..]);
        } else {
            self.last.copy_within(data.len().., 0);
            self.last[STRIPE - data.len()..].copy_from_slice(data);
        }
        let mut rest = data;
        // Complete the pending stripe; take it if a byte follows it.
        if !self.pending.is_empty() {
            let fill = (STRIPE - self.pending.len()).min(rest.len());
            self.pending.extend_from_slice(&rest[..fill]);
            rest = &rest[fill..];
            if rest.is_empty() {
                return;
            }
            take(&mut self.acc, &mut self.stripes, &self.pending);
            self.pending.clear();
        }
        // Every whole stripe that a byte follows, then the rest waits.
        let n = (rest.len() - 1) / STRIPE * STRIPE;
        take(&mut self.acc, &mut self.stripes, &rest[..n]);
        self.pending.extend_from_slice(&rest[n..]);
    }

    /// The hash of the stream written so far.
    pub fn finish(&self) -> u64 {
        if self.len <= CUTOFF as u64 {
            return twox_hash::XxHash3_64::oneshot(&self.short);
        }
        let mut acc = self.acc;
        accumulate(&mut acc, &self.last, window(LAST_STRIPE_AT));
        let mut h = self.len.wrapping_mul(PRIME64_1);
        for i in 0..4 {
            let a = acc[2 * i] ^ le64(&SECRET[MERGE_AT + 16 * i..]);
            let b = acc[2 * i + 1] ^ le64(&SECRET[MERGE_AT + 16 * i + 8..]);
            let p = a as u128 * b as u128;
            h = h.wrapping_add(p as u64 ^ (p >> 64) as u64);
        }
        h ^= h >> 37;
        h = h.wrapping_mul(PRIME_MX1);
        h ^ (h >> 32)
    }
}

/// Takes the whole stripes of `data` (a multiple of 64 bytes) into the accumulators `acc`,
/// `stripes` of whose block are taken.
fn take(acc: &mut [u64; 8], stripes: &mut usize, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    (*acc, *stripes) = vectorized(Stripes {
        acc: *acc,
        stripes: *stripes,
        data,
    });
}

/// The little-endian word at the start of `b`.
#[inline(always)]
fn le64(b: &[u8]) -> u64 {
    u64::from_le_bytes(b[..8].try_into().expect("8 bytes"))
}

/// The 64 bytes of the secret from `at`.
#[inline(always)]
fn window(at: usize) -> &'static [u8; STRIPE] {
    SECRET[at..at + STRIPE].try_into().expect("64 bytes")
}

/// One stripe into the accumulators, with the secret window `key`.
#[inline(always)]
fn accumulate(acc: &mut [u64; 8], stripe: &[u8; STRIPE], key: &[u8; STRIPE]) {
    let mut data = [0u64; 8];
    let mut mixed = [0u64; 8];
    for i in 0..8 {
        data[i] = le64(&stripe[8 * i..]);
        let k = data[i] ^ le64(&key[8 * i..]);
        mixed[i] = (k & 0xffff_ffff) * (k >> 32);
    }
    for i in 0..8 {
        acc[i] = acc[i].wrapping_add(data[i ^ 1]).wrapping_add(mixed[i]);
    }
}

/// The 16 stripes of a whole block into the accumulators (without the scrambling): the same
/// sums as [`accumulate`] stripe after stripe (additions modulo 2^64 in any order), the even
/// and odd stripes in two sets of accumulators, so that the additions of one stripe do not
/// wait for those of the stripe before.
#[inline(always)]
fn accumulate_block(acc: &mut [u64; 8], block: &[u8]) {
    let mut odd = [0u64; 8];
    // Written out pair by pair, not as a loop: a loop over the pairs is vectorized across
    // pairs (with gathers), not across the eight lanes of a stripe.
    macro_rules! pair {
        ($($j:literal)*) => {$(
            let a = &block[128 * $j..128 * $j + 64];
            let b = &block[128 * $j + 64..128 * $j + 128];
            accumulate(acc, a.try_into().expect("64 bytes"), window(16 * $j));
            accumulate(&mut odd, b.try_into().expect("64 bytes"), window(16 * $j + 8));
        )*};
    }
    pair!(0 1 2 3 4 5 6 7);
    for (a, o) in acc.iter_mut().zip(odd) {
        *a = a.wrapping_add(o);
    }
}

/// The scrambling of the accumulators after each block.
#[inline(always)]
fn scramble(acc: &mut [u64; 8]) {
    let key = window(SECRET.len() - STRIPE);
    for (i, a) in acc.iter_mut().enumerate() {
        let mut x = *a;
        x ^= x >> 47;
        x ^= le64(&key[8 * i..]);
        *a = x.wrapping_mul(PRIME32_1);
    }
}

/// Whole stripes into the accumulators, as work for [`vectorized`]: the accumulators and the
/// stripe count of the block after them.
struct Stripes<'a> {
    acc: [u64; 8],
    stripes: usize,
    data: &'a [u8],
}

impl Vectorizable for Stripes<'_> {
    type Output = ([u64; 8], usize);

    #[inline(always)]
    fn run(self) -> ([u64; 8], usize) {
        let Stripes {
            mut acc,
            mut stripes,
            data,
        } = self;
        let one = |acc: &mut [u64; 8], stripe: &[u8], stripes: &mut usize| {
            accumulate(
                acc,
                stripe.try_into().expect("64 bytes"),
                window(8 * *stripes),
            );
            *stripes += 1;
            if *stripes == STRIPES_PER_BLOCK {
                scramble(acc);
                *stripes = 0;
            }
        };
        // The rest of a block begun before, stripe by stripe; then whole blocks; then the
        // stripes of a last block.
        let head = if stripes == 0 {
            0
        } else {
            ((STRIPES_PER_BLOCK - stripes) * STRIPE).min(data.len())
        };
        let (first, data) = data.split_at(head);
        for stripe in first.chunks_exact(STRIPE) {
            one(&mut acc, stripe, &mut stripes);
        }
        let blocks = data.chunks_exact(STRIPES_PER_BLOCK * STRIPE);
        let rest = blocks.remainder();
        for block in blocks {
            accumulate_block(&mut acc, block);
            scramble(&mut acc);
        }
        for stripe in rest.chunks_exact(STRIPE) {
            one(&mut acc, stripe, &mut stripes);
        }
        (acc, stripes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic bytes that are not a simple pattern.
    fn bytes(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 56) as u8
            })
            .collect()
    }

    fn reference(data: &[u8]) -> u64 {
        twox_hash::XxHash3_64::oneshot(data)
    }

    #[test]
    fn every_length_up_to_several_blocks_in_one_write_and_in_two() {
        let data = bytes(3 * 1024 + 200, 1);
        for n in 0..=data.len() {
            let want = reference(&data[..n]);
            let mut h = Xxh3::new();
            h.write(&data[..n]);
            assert_eq!(h.finish(), want, "length {n}");
            // Split at a few places around stripe and block boundaries.
            for cut in [1, 63, 64, 65, 240, 241, 1023, 1024, 1025, n / 2] {
                if cut <= n {
                    let mut h = Xxh3::new();
                    h.write(&data[..cut]);
                    h.write(&data[cut..n]);
                    assert_eq!(h.finish(), want, "length {n} split at {cut}");
                }
            }
        }
    }

    #[test]
    fn long_streams_in_pieces_of_every_size() {
        let data = bytes((1 << 20) + 4321, 2);
        let want = reference(&data);
        for piece in [1, 7, 63, 64, 65, 1000, 1024, 4096, 65_537] {
            let mut h = Xxh3::new();
            for p in data.chunks(piece) {
                h.write(p);
            }
            assert_eq!(h.finish(), want, "pieces of {piece}");
        }
        // Pieces of varying sizes, with empty ones.
        let mut h = Xxh3::new();
        let (mut at, mut k) = (0, 0usize);
        while at < data.len() {
            let m = (k * 37 % 300).min(data.len() - at);
            h.write(&data[at..at + m]);
            at += m;
            k += 1;
        }
        assert_eq!(h.finish(), want);
    }

    #[test]
    fn the_hash_depends_on_every_byte() {
        let mut data = bytes(5000, 3);
        let h0 = {
            let mut h = Xxh3::new();
            h.write(&data);
            h.finish()
        };
        for i in [0, 63, 64, 1023, 1024, 4935, 4999] {
            data[i] ^= 1;
            let mut h = Xxh3::new();
            h.write(&data);
            assert_ne!(h.finish(), h0, "byte {i}");
            assert_eq!(h.finish(), reference(&data));
            data[i] ^= 1;
        }
    }
}
