//! The cargo-fuzz targets of `fuzz/` on stable: each target's body (shared with the fuzz
//! crate through `fuzz/src/targets.rs`) runs on a few thousand deterministic inputs —
//! random bytes, random printable text, token soup, and seeds with random edits and splices.
//! None may panic (and the batch target checks its one-line-out-per-line-in invariant).

#[path = "../../../fuzz/src/targets.rs"]
#[allow(dead_code)]
mod targets;

use gpucvt_reference::Rng;

/// What these inputs draw from the suites' seeded generator.
trait Draw {
    /// An index below `n` (0 when `n` is 0).
    fn index(&mut self, n: usize) -> usize;

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.index(items.len())]
    }
}

impl Draw for Rng {
    fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }
}

const PTX_SEEDS: &[&str] = &[
    "cvt.rn.f16.f32 %f16_d, %f32_a;",
    "cvt.rn.satfinite.e4m3x2.f32 %b16_d, %f32_a, %f32_b;",
    "cvt.rs.relu.satfinite.e2m1x4.f32 %b16_d, {%f32_a, %f32_b, %f32_e, %f32_f}, %b32_rbits;",
    "cvt.rn.satfinite.relu.scaled::n2::ue8m0.s2f6x2.f32 %b16_d, %f32_a, %f32_b, %b16_scale;",
    "@!%p cvt.pack.sat.u8.s32.b32 %b32_d, %s32_a, -1, 0x7f;",
    "cvt.rni.ftz.sat.s32.f32 %s32_d, 0f3F800000;",
    "cvt.f64.f32 %f64_d, 1.5e-3;",
    "cvt.rn.satfinite.e2m1x2.bf16x2 %b8_d, {%b32_a, %b32_b};",
    "cvt.rp.satfinite.ue8m0x2.f32",
    "cvt.rn.f16x2.e4m3x2",
    "cvt.rs.satfinite.bf16x2.f32",
];

const PTX_FILE: &str = "\
.version 9.5
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 k_p0)
{
    .reg .pred %p<3>;
    .reg .f32 %f<8>;
    .reg .b16 %h<4>;
    .reg .b32 %r<4>;
    mov.f32 %f1, 0f3F800000;
$L__BB0_1:
    @%p1 bra $L__BB0_1;
    cvt.rn.satfinite.e4m3x2.f32 %h1, %f1, %f2;
    cvt.rn.f16.f32 %h2, %f3;
    cvt.rzi.s32.f32 %r1, %f4;
    ret;
}
";

const VISA_FILE: &str = "\
.version 3.6
.kernel \"f_to_hf\"
.decl vector331 v_type=G type=f num_elts=32 align=GRF
.decl vectorized_cast v_type=G type=hf num_elts=32 align=GRF
.decl b0 v_type=G type=ub num_elts=16
.kernel_attr Target=3d
mov (M1, 16) vectorized_cast(0,0)<1> vector331(0,0)<1;1,0>
mov.sat (M1, 8) b0(0,0)<1> vector331(1,0)<1;1,0>
mov (M1, 1) vector331(0,0)<1> 0x3f800000:f
ret (M1, 1)
";

const BATCH_SEEDS: &[&str] = &[
    "cvt.rn.f16.f32 0x3f800000",
    "cvt.rn.satfinite.e4m3x2.f32 0x3f800000 0x43960000",
    "cvt.rn.satfinite.e2m1x2.f32 0x3f800000 0xc0c00000",
    "cvt.pack.sat.u8.s32.b32 0x100 0xffffffff 0x1234",
    "cvt.rs.satfinite.bf16x2.f32 0x3f808000 0x3f808000 0x80007fff",
    "mov.sat ub <- f 0x43960000",
    "mov hf<-f 0x1",
    "mov f <- vf 0x3830",
    "cvt.rn.f16.f32 1.0",
];

const TILE_FILE: &str = "\
cuda_tile.module @m {
  entry @k(%a: tile<4xf32>, %n: tile<4xi32>, %p: tile<ptr<f32>>) {
    %c = constant <f64: [1.0625, 2.5, -0.0, 0x7FF0000000000000]> : tile<4xf64>
    %h = ftof %c rounding<zero> : tile<4xf64> -> tile<4xf16>
    %q = ftof %a : tile<4xf32> -> tile<4xf8E4M3FN>
    %i = ftoi %a signed saturating : !cuda_tile.tile<4xf32> -> tile<4xi8>
    %j = exti %i signed : tile<4xi8> -> tile<4xi32>
    %t = trunci %n overflow<no_wrap> : tile<4xi32> -> tile<4xi4>
    %f = itof %n unsigned : tile<4xi32> -> tile<4xtf32>
    %b = bitcast %n : tile<4xi32> -> tile<4xf32>
    %g = get_global @x : tile<ptr<f32>>
    %r = ptr_to_int %p : tile<ptr<f32>> -> tile<i64>
    return
  }
}
";

const TILE_SEEDS: &[&str] = &[
    "ftof %x rounding<zero> : tile<f32> -> tile<f16> 0x3f800000",
    "cuda_tile.itof signed : tile<2xi32> -> tile<2xf8E5M2> [0x1201, 0x1]",
    "%r = ftoi %x unsigned : tile<f64> -> tile<i1> 0x8000000000000000",
    "int_to_ptr %v : tile<i64> -> tile<ptr<f16>> 0x10",
    "module @m { testing$func @f(%arg0: tile<2xi1>) { %0 = exti %arg0 signed : tile<2xi1> -> tile<2xi8>\n \"x.y\"(%0) : (tile<2xi8>) -> () } }",
    "constant <i1: true> : tile<4xi1>",
];

const TOKENS: &[&str] = &[
    "cvt",
    "mov",
    "mov.sat",
    ".rn",
    ".rz",
    ".rs",
    ".rna",
    ".rni",
    ".sat",
    ".ftz",
    ".relu",
    ".satfinite",
    ".pack",
    ".f16",
    ".f32",
    ".f64",
    ".bf16x2",
    ".e4m3x2",
    ".e2m1x4",
    ".s2f6x2",
    ".ue8m0x2",
    ".s32",
    ".u8",
    ".b32",
    ".scaled::n1::ue8m0",
    " ",
    ",",
    ";",
    "{",
    "}",
    "%r1",
    "0x",
    "0x3f800000",
    "0xffffffffffffffff",
    "-1",
    "0f7F800000",
    "<-",
    "hf",
    "f",
    "df",
    "ub",
    "vf",
    "(M1, 16)",
    "(0,0)<1>",
    "<1;1,0>",
    ".decl",
    "type=",
    "num_elts=",
    "\n",
    ".version",
    ".target",
    "sm_90a",
    ".reg",
    "@%p",
    "\u{e9}",
    "\0",
];

/// One input: random bytes, printable text, token soup, or a mutated seed.
fn input(rng: &mut Rng, seeds: &[&str]) -> Vec<u8> {
    match rng.index(5) {
        0 => (0..rng.index(200)).map(|_| rng.next_u64() as u8).collect(),
        1 => {
            const CHARS: &[u8] = b" -~\n\t.%{},;<0123456789abcdefx";
            (0..rng.index(200))
                .map(|_| CHARS[rng.index(CHARS.len())])
                .collect()
        }
        2 => {
            let mut s = String::new();
            for _ in 0..rng.index(40) {
                s.push_str(rng.pick(TOKENS));
            }
            s.into_bytes()
        }
        _ => {
            let mut v = rng.pick(seeds).as_bytes().to_vec();
            for _ in 0..1 + rng.index(4) {
                mutate(rng, &mut v, seeds);
            }
            v
        }
    }
}

fn mutate(rng: &mut Rng, v: &mut Vec<u8>, seeds: &[&str]) {
    let at = rng.index(v.len() + 1);
    match rng.index(6) {
        0 if !v.is_empty() => {
            let end = (at + 1 + rng.index(8)).min(v.len());
            v.drain(at.min(end)..end);
        }
        1 => {
            let t = rng.pick(TOKENS).as_bytes().to_vec();
            v.splice(at..at, t);
        }
        2 if at < v.len() => v[at] ^= 1 << rng.index(8),
        3 => v.insert(at, rng.next_u64() as u8),
        4 => {
            // Splice in part of another seed.
            let other = rng.pick(seeds).as_bytes();
            let from = rng.index(other.len());
            let to = (from + rng.index(40)).min(other.len());
            v.splice(at..at, other[from..to].iter().copied());
        }
        _ => {
            // Duplicate a stretch.
            let end = (at + rng.index(16)).min(v.len());
            let dup = v[at.min(end)..end].to_vec();
            v.splice(end..end, dup);
        }
    }
}

fn drive(seed: u64, count: usize, seeds: &[&str], target: fn(&[u8])) {
    let mut rng = Rng(seed);
    for s in seeds {
        target(s.as_bytes());
    }
    for _ in 0..count {
        let data = input(&mut rng, seeds);
        target(&data);
    }
}

#[test]
fn ptx_instruction() {
    drive(1, 4000, PTX_SEEDS, targets::ptx_instruction);
}

#[test]
fn ptx_file() {
    let mut seeds: Vec<&str> = vec![PTX_FILE];
    seeds.extend(PTX_SEEDS);
    drive(2, 1500, &seeds, targets::ptx_file);
}

#[test]
fn batch_line() {
    let joined = BATCH_SEEDS.join("\n");
    let mut seeds: Vec<&str> = BATCH_SEEDS.to_vec();
    seeds.push(&joined);
    drive(3, 4000, &seeds, targets::batch_line);
}

#[test]
fn visa_asm() {
    drive(4, 2000, &[VISA_FILE], targets::visa_asm);
}

#[test]
fn tile_file() {
    let mut seeds: Vec<&str> = vec![TILE_FILE];
    seeds.extend(TILE_SEEDS);
    let joined = TILE_SEEDS.join("\n");
    seeds.push(&joined);
    drive(5, 1500, &seeds, targets::tile_file);
}
