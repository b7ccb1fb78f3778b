//! What the `bulk` and `bulk_icount` benchmarks share: the inputs, the cases and the roofline
//! loops.

use gpucvt_core::format::*;
use gpucvt_core::{Policy, Rounding};
use gpucvt_kernels::{vectorized, Vectorizable, Word};

/// `n` deterministic f32 bit patterns.
pub fn inputs(n: usize) -> Vec<u32> {
    // Values spread over the useful range of every destination (|x| from 2^-27 to 2^22, so
    // subnormal, normal and overflowing results for the narrow formats), with both signs,
    // deterministic.
    let mut s = 0x1234_5678_9abc_def0u64;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let r = s as u32;
            let exp = 100 + (r >> 24) % 50;
            (r & 0x8000_0000) | exp << 23 | (r & 0x007f_ffff)
        })
        .collect()
}

fn satfinite() -> Policy {
    Policy {
        satfinite: true,
        ..Policy::default()
    }
}

/// The gpucvt cases: name, destination, rounding, policy.
pub fn cases() -> Vec<(&'static str, Format, Rounding, Policy)> {
    let none = Policy::default();
    let sf = satfinite();
    let (relu, relu_sf) = (Policy { relu: true, ..none }, Policy { relu: true, ..sf });
    vec![
        ("f16-rn", F16, Rounding::RN, none),
        ("f16-rz", F16, Rounding::RZ, none),
        ("f16-rs", F16, Rounding::stochastic(0, 13), none),
        ("bf16-rn", BF16, Rounding::RN, none),
        ("bf16-rz", BF16, Rounding::RZ, none),
        ("bf16-rs", BF16, Rounding::stochastic(0, 16), none),
        ("tf32-rna", TF32, Rounding::RNA, none),
        ("tf32-rn", TF32, Rounding::RN, none),
        ("tf32-rz", TF32, Rounding::RZ, none),
        ("e4m3-rn", E4M3, Rounding::RN, sf),
        ("e4m3-rz", E4M3, Rounding::RZ, sf),
        ("e4m3-rs", E4M3, Rounding::stochastic(0, 8), sf),
        ("e5m2-rn", E5M2, Rounding::RN, sf),
        ("e5m2-rz", E5M2, Rounding::RZ, sf),
        ("e5m2-rs", E5M2, Rounding::stochastic(0, 8), sf),
        ("e2m3-rn", E2M3, Rounding::RN, sf),
        ("e2m3-rz", E2M3, Rounding::RZ, sf),
        ("e2m3-rs", E2M3, Rounding::stochastic(0, 8), sf),
        ("e3m2-rn", E3M2, Rounding::RN, sf),
        ("e3m2-rz", E3M2, Rounding::RZ, sf),
        ("e3m2-rs", E3M2, Rounding::stochastic(0, 8), sf),
        ("e2m1-rn", E2M1, Rounding::RN, sf),
        ("e2m1-rz", E2M1, Rounding::RZ, sf),
        ("e2m1-rs", E2M1, Rounding::stochastic(0, 8), sf),
        ("ue8m0-rz", UE8M0, Rounding::RZ, sf),
        ("ue8m0-rp", UE8M0, Rounding::RP, sf),
        ("e4m3-relu-rn", E4M3, Rounding::RN, relu_sf),
        ("e5m2-relu-rn", E5M2, Rounding::RN, relu_sf),
        ("e2m1-relu-rn", E2M1, Rounding::RN, relu_sf),
        ("e4m3-relu-rs", E4M3, Rounding::stochastic(0, 8), relu_sf),
        ("e5m2-relu-rs", E5M2, Rounding::stochastic(0, 8), relu_sf),
        ("e2m1-relu-rz", E2M1, Rounding::RZ, relu_sf),
        ("f16-relu-rn", F16, Rounding::RN, relu),
        ("f16-relu-rs", F16, Rounding::stochastic(0, 13), relu),
        ("bf16-relu-rn", BF16, Rounding::RN, relu),
    ]
}

/// The inputs of one size, the random values in three widths and the output buffers.
pub struct Data {
    pub src: Vec<u32>,
    pub random: Vec<u32>,
    pub random16: Vec<u16>,
    pub random8: Vec<u8>,
    pub dst32: Vec<u32>,
    pub dst16: Vec<u16>,
    pub dst8: Vec<u8>,
}

impl Data {
    /// `n` inputs, `n` random values (the low 16 and 8 bits of the same `u32` values in the
    /// narrow words) and zeroed outputs.
    pub fn new(n: usize) -> Data {
        let src = inputs(n);
        let random: Vec<u32> = src.iter().map(|x| x.rotate_left(7) ^ 0x9e37_79b9).collect();
        Data {
            random16: random.iter().map(|&r| r as u16).collect(),
            random8: random.iter().map(|&r| r as u8).collect(),
            random,
            src,
            dst32: vec![0; n],
            dst16: vec![0; n],
            dst8: vec![0; n],
        }
    }
}

/// The roofline loops: a plain shift-truncate of `f32` bit patterns that reads and writes the
/// bytes of a conversion but does no rounding (`-16`, `-8`: into 16- or 8-bit words; `-32`: a
/// mask to the tf32 bits), `-rs-16`, `-rs-8` the same combined with one `u32` random value per
/// element (the bytes of `Kernel::convert_stochastic`), `-rs-16w`, `-rs-8w` with one random
/// value in the output word (`u16`, `u8`: the bytes of `Kernel::convert_stochastic_words`).
/// Every loop depends on all it reads, and is compiled for the instruction set the kernels
/// use (through `gpucvt_kernels::vectorized`).
pub const ROOFLINES: [&str; 8] = [
    "roofline-16",
    "roofline-8",
    "roofline-32",
    "roofline-rs-16",
    "roofline-rs-8",
    "roofline-rs-16w",
    "roofline-rs-8w",
    "roofline-8-2s",
];

/// `dst[i] = f(src[i], rnd[i])` over the common length (`rnd` empty: `f(src[i], 0)`),
/// compiled for the instruction set the kernels use.
struct Map<'a, R, D, F> {
    src: &'a [u32],
    rnd: &'a [R],
    dst: &'a mut [D],
    f: F,
}

impl<R: Word, D: Word, F: Fn(u32, R) -> D> Vectorizable for Map<'_, R, D, F> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        if self.rnd.is_empty() {
            for (d, &s) in self.dst.iter_mut().zip(self.src) {
                *d = (self.f)(s, R::from_u32(0));
            }
        } else {
            for ((d, &s), &r) in self.dst.iter_mut().zip(self.src).zip(self.rnd) {
                *d = (self.f)(s, r);
            }
        }
    }
}

fn map<R: Word, D: Word>(src: &[u32], rnd: &[R], dst: &mut [D], f: impl Fn(u32, R) -> D) {
    vectorized(Map { src, rnd, dst, f });
}

/// Runs the roofline loop `name` (one of [`ROOFLINES`]) once over `d`.
pub fn roofline(name: &str, d: &mut Data) {
    let src = std::hint::black_box(&d.src[..]);
    let none: &[u32] = &[];
    match name {
        "roofline-16" => map(src, none, &mut d.dst16, |s, _| (s >> 16) as u16),
        "roofline-8" => map(src, none, &mut d.dst8, |s, _| (s >> 24) as u8),
        "roofline-32" => map(src, none, &mut d.dst32, |s, _| s & 0xffff_e000),
        "roofline-rs-16" => map(src, &d.random, &mut d.dst16, |s, r| ((s ^ r) >> 16) as u16),
        "roofline-rs-8" => map(src, &d.random, &mut d.dst8, |s, r| ((s ^ r) >> 24) as u8),
        "roofline-rs-16w" => map(src, &d.random16, &mut d.dst16, |s, r| (s >> 16) as u16 ^ r),
        "roofline-rs-8w" => map(src, &d.random8, &mut d.dst8, |s, r| (s >> 24) as u8 ^ r),
        // The 8-bit roofline in the order the kernels take long slices: two streams, the
        // first half and the second, 512 elements of each in turn (for comparison only).
        "roofline-8-2s" => {
            let half = src.len() / 2 / 512 * 512;
            let (s0, s1) = src.split_at(half);
            let (d0, d1) = d.dst8.split_at_mut(half);
            let pairs = s0.chunks(512).zip(d0.chunks_mut(512));
            for ((a, da), (b, db)) in pairs.zip(s1.chunks(512).zip(d1.chunks_mut(512))) {
                map(a, none, da, |s, _| (s >> 24) as u8);
                map(b, none, db, |s, _| (s >> 24) as u8);
            }
            map(&s1[half..], none, &mut d1[half..], |s, _| (s >> 24) as u8);
        }
        _ => panic!("no roofline {name}"),
    }
}
