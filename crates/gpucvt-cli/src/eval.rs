//! `gpucvt eval`: evaluate one conversion instruction (PTX `cvt`/`cvt.pack`, vISA `mov`,
//! CUDA Tile IR conversion op) on operand values, or a stream of them with `--batch`.
//!
//! A Tile IR op's operand is its whole source tile: one value per element (row-major), given
//! as separate words or as one bracketed list (`[1.0, 2.5]`, nested brackets for 2-d tiles
//! are flattened); a single value is splatted to every element. The result shows every
//! element, or `undefined` with the reason where the `spec` semantics leaves it undefined.

use crate::args::{PtxTarget, TileOptions};
use crate::common::{class_name, compact, fail, CliError};
use crate::output::to_json;
use gpucvt::batch::Batch;
use gpucvt::core::convert::{convert, Conversion, Event, Flags, Policy};
use gpucvt::core::format::Format;
use gpucvt::core::round::{Rounding, Why};
use gpucvt::core::value::Value;
use gpucvt::instr::shorten;
use gpucvt::instr::{Instr, OperandSpec, Options, Output};
use gpucvt::text::{
    format_bits, parse_bits_named, parse_number, ptx_float_literal, to_decimal, Parsed,
};
use gpucvt::visa::cr0::Cr0;
use serde::Serialize;

/// Options of `gpucvt eval`.
#[derive(clap::Args, Debug)]
#[command(
    // An instruction on the command line, or --batch (instructions from stdin).
    group(clap::ArgGroup::new("input").args(["args", "batch"]).required(true)),
    mut_arg("target", |a| a.help(
        "PTX target whose legality rules apply (sm_80, sm_90a, sm_100f, …). Without it, every \
         form that is legal on some target is evaluated. For an AMD instruction, the AMD target \
         (required): gfx942 (FNUZ fp8), gfx950, gfx1200 or gfx1201 (OCP fp8)"
    )),
    mut_arg("ptx_version", |a| a.help(
        "PTX ISA version for the legality check (default: the newest, 9.5)"
    )),
    mut_arg("semantics", |a| a.help(
        "Tile IR: the semantics, `tileiras` (default: the PTX NVIDIA's compiler emits, for \
         --target, default sm_100a) or `spec` (the specification text: single roundings, \
         undefined results marked)"
    )),
    mut_arg("tile_version", |a| a.help(
        "Tile IR specification version the op is verified at: 13.1, 13.2, 13.3 or 13.4 \
         (default)"
    )),
)]
pub struct Args {
    /// The instruction without operands — a PTX form (`cvt.rn.satfinite.e4m3x2.f32`), a
    /// vISA move (`'mov.sat hf <- f'`) or an AMD instruction with its registers
    /// (`'v_cvt_pk_fp8_f32 v1, v2, v3'`: the values of its source registers follow) — then
    /// the source operands in instruction order:
    /// decimals (1.5, -2), hexadecimal floats (0x1.8p3), raw bit patterns (0x3f800000), or
    /// for packed operands a comma list of lane values, most significant lane first
    /// (1.0,-2); a leading `-` is a sign (-1e-8, -inf, -0x1p0). Omit them with --batch.
    #[arg(value_name = "INSTRUCTION OPERAND")]
    pub args: Vec<String>,
    /// Read `<instruction> <0x operand>...` lines from stdin and write one result line per
    /// input line (`0x…` or `error: …`).
    #[arg(long, conflicts_with_all = ["explain", "json"])]
    pub batch: bool,
    #[command(flatten)]
    pub ptx: PtxTarget,
    /// vISA control register: a raw value (0x4C0), a preset (0: kernel entry, opencl: 0x4C0)
    /// or a rounding mode name (rne, ru, rd, rtz).
    #[arg(long, value_name = "CR0", value_parser = Cr0::parse)]
    pub cr0: Option<Cr0>,
    #[command(flatten)]
    pub tile: TileOptions,
    #[command(flatten)]
    pub amd: AmdArgs,
    /// Show each lane's conversion: the exact input, its neighbours and why one was chosen.
    /// For a Tile IR op: the PTX sequence it lowers to, each element through it, and where
    /// the spec and tileiras semantics differ.
    #[arg(long)]
    pub explain: bool,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

fn options(a: &Args) -> Options {
    let mut o = a.ptx.instr_options(a.cr0);
    o.semantics = a.tile.semantics();
    o.tile_version = a.tile.version.tile_version;
    a.amd.apply(&mut o);
    o
}

/// The AMD options of `eval`: the MODE register, the destination's old value and the named
/// readings (`docs/guide/amd.md`).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct AmdArgs {
    /// AMD: MODE.FP16_OVFL, 0 (default: overflows and infinities give NaN in fp8, infinity in
    /// bf8) or 1 (the largest finite value of their sign).
    #[arg(long = "mode-fp16-ovfl", value_name = "0|1", value_parser = ["0", "1"], conflicts_with = "mode")]
    pub fp16_ovfl: Option<String>,
    /// AMD: the whole MODE register in hex (0x800000 sets FP16_OVFL, bit 23; the other bits do
    /// not change these conversions).
    #[arg(long, value_name = "MODE", value_parser = gpucvt::amd::Mode::parse)]
    pub mode: Option<gpucvt::amd::Mode>,
    /// AMD: the destination register's old value, which `v_cvt_pk_*` (16 bits) and
    /// `v_cvt_sr_*` (24 bits) keep (default 0).
    #[arg(long = "old-dst", value_name = "0xBITS", value_parser = old_dst)]
    pub old_dst: Option<u64>,
    /// AMD: ±inf under FP16_OVFL=1: `table` (default: ±max, the ISA's FP8 table) or `keep-inf`
    /// (NaN in fp8, ±inf in bf8: the MODE field's description, L613).
    #[arg(long = "inf-reading", value_name = "READING", value_parser = ["table", "keep-inf"])]
    pub inf: Option<String>,
    /// AMD: the NaN byte on OCP targets: `all-ones` (default: 0x7f with the sign kept) or
    /// `quiet` (e5m2 0x7e, as ml_dtypes).
    #[arg(long = "nan-reading", value_name = "READING", value_parser = ["all-ones", "quiet"])]
    pub nan: Option<String>,
    /// AMD: the seed rule of v_cvt_sr_*: `prose` (default: the seed's high bits added, then
    /// truncated), `pseudocode` (added to the mantissa field modulo 2^23, then rounded to
    /// nearest) or `host-low-bits` (HIP/CK host code: the seed's low bits).
    #[arg(long = "sr-reading", value_name = "READING", value_parser = ["prose", "pseudocode", "host-low-bits"])]
    pub sr: Option<String>,
}

fn old_dst(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let hex = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X"));
    match hex.map_or_else(
        || t.parse::<u64>().ok(),
        |h| u64::from_str_radix(h, 16).ok(),
    ) {
        Some(v) if v >> 32 == 0 => Ok(v),
        // A register pair's old value is not needed: the pair is written whole.
        _ => Err(format!("{t:?} is not a 32-bit value (0xaabbccdd)")),
    }
}

impl AmdArgs {
    fn apply(&self, o: &mut Options) {
        use gpucvt::amd::types::{InfReading, NanReading, SrReading};
        if let Some(m) = self.mode {
            o.amd_mode = m;
        }
        if let Some(b) = &self.fp16_ovfl {
            o.amd_mode = o.amd_mode.with_fp16_ovfl(b == "1");
        }
        if let Some(v) = self.old_dst {
            o.amd_old = v;
        }
        let r = &mut o.amd_readings;
        match self.inf.as_deref() {
            Some("keep-inf") => r.inf = InfReading::KeepInf,
            Some(_) => r.inf = InfReading::Table,
            None => {}
        }
        match self.nan.as_deref() {
            Some("quiet") => r.nan = NanReading::SignedQuiet,
            Some(_) => r.nan = NanReading::SignedAllOnes,
            None => {}
        }
        match self.sr.as_deref() {
            Some("pseudocode") => r.sr = SrReading::Pseudocode,
            Some("host-low-bits") => r.sr = SrReading::HostLowBits,
            Some(_) => r.sr = SrReading::Prose,
            None => {}
        }
    }
}

/// Runs `gpucvt eval`.
pub fn run(a: &Args) -> Result<String, CliError> {
    let opts = options(a);
    // clap keeps instructions, --explain and --json away from --batch.
    if a.batch {
        let stdin = std::io::stdin();
        let stdout = std::io::stdout();
        // The answers are flushed each time the input buffer runs dry: a buffer as large as
        // a pipe's keeps that to one flush per 64 KiB of a stream.
        let input = std::io::BufReader::with_capacity(1 << 16, stdin.lock());
        Batch::new(opts)
            .run(input, std::io::BufWriter::new(stdout.lock()))
            .map_err(|e| CliError(format!("cannot read stdin or write stdout: {e}")))?;
        return Ok(String::new());
    }
    // clap requires an instruction or --batch.
    let Some((text, operands)) = a.args.split_first() else {
        return fail(
            "give an instruction (cvt.rn.f16.f32 1.5, or 'mov.sat hf <- f' 1.5), or --batch",
        );
    };
    let instr = Instr::parse(text, &opts)?;
    if let Instr::Tile(t) = &instr {
        return crate::tile::eval(t, operands, a.explain, a.json);
    }
    let specs = instr.operands();
    if specs.len() != operands.len() {
        let names: Vec<&str> = specs.iter().map(|s| s.name).collect();
        return fail(format!(
            "{} takes {} source operand(s) ({}), got {}",
            instr.spelling(),
            specs.len(),
            names.join(", "),
            operands.len()
        ));
    }
    let mut ops = Vec::new();
    let mut inputs = Vec::new();
    for (spec, tok) in specs.iter().zip(operands) {
        let (bits, note) = operand(spec, tok)?;
        ops.push(bits);
        inputs.push(OperandJson {
            name: spec.name,
            text: tok.clone(),
            bits: format_bits(bits, spec.bits),
            note,
        });
    }
    let out = instr.eval(&ops)?;
    let report = report(&instr, inputs, &out, a.explain);
    if a.json {
        to_json(&report)
    } else {
        Ok(text_report(&report))
    }
}

pub(crate) fn is_raw_bits(tok: &str) -> bool {
    let t = tok.strip_prefix('+').unwrap_or(tok);
    let lower = t.to_ascii_lowercase();
    (lower.starts_with("0x") && !lower.contains('.') && !lower.contains('p'))
        || (lower.starts_with("0b") && !lower.contains('.') && !lower.contains('p'))
}

/// One operand's bits, and a note when a number was not exact in the operand's format.
pub(crate) fn operand(spec: &OperandSpec, tok: &str) -> Result<(u64, Option<String>), CliError> {
    let Some(f) = spec.format else {
        let b = parse_bits_named(tok, spec.bits, spec.name)
            .map_err(|e| CliError(format!("operand {}: {e}", spec.name)))?;
        return Ok((b, None));
    };
    if is_raw_bits(tok) {
        let b = parse_bits_named(tok, spec.bits, spec.name)
            .map_err(|e| CliError(format!("operand {}: {e}", spec.name)))?;
        return Ok((b, None));
    }
    let parts: Vec<&str> = tok.split(',').collect();
    if parts.len() as u32 != spec.lanes {
        return fail(format!(
            "operand {} packs {} {} lanes: give a raw bit pattern (0x…) or {} comma-separated values, most significant lane first",
            spec.name, spec.lanes, f.name, spec.lanes
        ));
    }
    let lane_bits = spec.bits / spec.lanes;
    let mut bits = 0u64;
    let mut notes = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        let (b, note) = number_in(p, &f, spec.name)?;
        bits |= b << (lane_bits * (spec.lanes - 1 - i as u32));
        notes.extend(note);
    }
    Ok((bits, (!notes.is_empty()).then(|| notes.join("; "))))
}

/// A number as an operand of format `f`: rounded to nearest for floats, exact for integers.
pub(crate) fn number_in(
    tok: &str,
    f: &Format,
    name: &str,
) -> Result<(u64, Option<String>), CliError> {
    let t = tok.trim();
    if let Some(rest) = t.strip_prefix('-') {
        if is_raw_bits(rest) || ptx_float_literal(rest).is_some() {
            return fail(format!(
                "operand {name} = {}: a negative sign on raw bits: {} is a bit pattern, not a number, and has no negative; write a negative number as a decimal or a hex float (-1.5, -0x1.8p0), or give the pattern with its sign bit set",
                shorten(t),
                shorten(rest)
            ));
        }
    }
    let parsed = match ptx_float_literal(t) {
        Some(lit) => {
            let (bits, lf) = lit.map_err(|e| CliError(format!("operand {name}: {e}")))?;
            // The literal's own format: its bits as they are (NaN payloads included).
            if lf == *f {
                return Ok((bits, None));
            }
            Parsed {
                value: lf.decode(bits),
                exact: true,
            }
        }
        None => parse_number(t).map_err(|e| {
            CliError(format!(
                "operand {name}: {}; or give raw bits as 0x…",
                shorten(&e.to_string())
            ))
        })?,
    };
    let out = convert(&parsed.value, f, Rounding::RN, &Policy::default());
    let changed = !parsed.exact
        || out.flags.contains(Flags::INEXACT)
        || out.flags.contains(Flags::OVERFLOW)
        || out.flags.contains(Flags::INVALID);
    if !f.is_float() && changed {
        return fail(format!(
            "operand {name} = {} is not a {} value (range and integrality); give it exactly, or as raw bits",
            shorten(tok),
            f.name
        ));
    }
    let note = changed.then(|| {
        format!(
            "{} is not exact in {}: rounded to nearest, {}",
            shorten(tok),
            f.name,
            to_decimal(&f.decode(out.bits))
        )
    });
    Ok((out.bits, note))
}

#[derive(Serialize)]
struct OperandJson {
    name: &'static str,
    text: String,
    bits: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

#[derive(Serialize)]
struct LaneJson {
    /// `[hi:lo]` of the lane in the destination.
    field: String,
    format: &'static str,
    bits: String,
    value: String,
    class: &'static str,
    input_format: &'static str,
    input: String,
    input_value: String,
    flags: Vec<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    explain: Vec<String>,
}

#[derive(Serialize)]
struct Report {
    instruction: String,
    dialect: &'static str,
    operands: Vec<OperandJson>,
    bits: String,
    width: u32,
    lanes: Vec<LaneJson>,
}

fn report(instr: &Instr, operands: Vec<OperandJson>, out: &Output, explain: bool) -> Report {
    let lanes = out
        .lanes
        .iter()
        .map(|l| {
            let first = l.conversions[0];
            let last = l.conversions[l.conversions.len() - 1];
            let dst = last.dst;
            let hi = l.shift + dst.width() - 1;
            LaneJson {
                field: format!("[{hi}:{}]", l.shift),
                format: dst.name,
                bits: format_bits(l.bits, dst.width()),
                value: compact(&dst.decode(l.bits)),
                class: class_name(&dst, l.bits),
                input_format: first.src.name,
                input: format_bits(l.input, first.src.width()),
                input_value: compact(&first.src.decode(l.input)),
                flags: l.flags.names(),
                explain: if explain {
                    explain_lane(&l.conversions, l.input)
                } else {
                    Vec::new()
                },
            }
        })
        .collect();
    Report {
        instruction: instr.spelling(),
        dialect: match instr {
            Instr::Ptx(_) => "ptx",
            Instr::Visa(_) => "visa",
            Instr::Tile(_) => "tile",
            Instr::Amd(_) => "amd",
        },
        operands,
        // Wider than 64 bits (a vISA move of a packed immediate): every lane, side by side.
        bits: if out.width > 64 {
            out.to_hex()
        } else {
            format_bits(out.bits, out.width)
        },
        width: out.width,
        lanes,
    }
}

fn rounding_words(r: &Rounding) -> String {
    let words = match r.name() {
        "rn" => "to nearest, ties to even",
        "rna" => "to nearest, ties away from zero",
        "rz" => "toward zero",
        "rm" => "toward -inf",
        "rp" => "toward +inf",
        "rs" => "stochastic",
        "rni" => "to an integral value, nearest even",
        "rzi" => "to an integral value, toward zero",
        "rmi" => "to an integral value, toward -inf",
        "rpi" => "to an integral value, toward +inf",
        _ => "",
    };
    format!("{} ({words})", r.name())
}

fn policy_words(p: &Policy) -> String {
    let mut v = Vec::new();
    for (on, name) in [
        (p.flush_inputs, "flush subnormal inputs"),
        (p.flush_outputs, "flush subnormal results"),
        (p.sat, "sat"),
        (p.satfinite, "satfinite"),
        (p.relu, "relu"),
        (p.positive_zero, "pzo"),
    ] {
        if on {
            v.push(name.to_string());
        }
    }
    if p.scale != 0 {
        v.push(format!("scale 2^{}", p.scale));
    }
    if v.is_empty() {
        String::new()
    } else {
        format!(", {}", v.join(", "))
    }
}

fn explain_lane(convs: &[Conversion], input: u64) -> Vec<String> {
    let mut lines = Vec::new();
    let mut bits = input;
    for c in convs {
        let (out, trace) = c.apply_traced(bits);
        lines.push(format!(
            "{} -> {}, {}{}",
            c.src.name,
            c.dst.name,
            rounding_words(&c.rounding),
            policy_words(&c.policy)
        ));
        let v = c.src.decode(bits);
        lines.push(format!(
            "  exact input {} = {}",
            format_bits(bits, c.src.width()),
            to_decimal(&v)
        ));
        if let Some(r) = trace.rounded {
            let neg = v.negative && c.dst.is_signed();
            let show = |m: &gpucvt::core::round::Magnitude| {
                let val = Value::finite(neg, m.m, m.q);
                match c.dst.encode(&val) {
                    Some(b) => format!("{} = {}", format_bits(b, c.dst.width()), to_decimal(&val)),
                    None => format!("{} (no encoding: beyond the range)", to_decimal(&val)),
                }
            };
            match r.why {
                Why::Exact => lines.push("  exact in the destination".to_string()),
                _ => {
                    if let Some(l) = r.lower {
                        lines.push(format!("  neighbour toward zero     {}", show(&l)));
                    } else {
                        lines.push("  nothing representable toward zero".to_string());
                    }
                    lines.push(format!("  neighbour away from zero  {}", show(&r.upper)));
                    let side = if r.took_upper {
                        "away from zero"
                    } else {
                        "toward zero"
                    };
                    let why = match r.why {
                        Why::Nearer => "it is nearer".to_string(),
                        Why::TieEven => "a tie, and its encoding is even".to_string(),
                        Why::TieAway => "a tie, and ties go away from zero".to_string(),
                        Why::Directed => "the rounding direction".to_string(),
                        Why::Stochastic {
                            fraction,
                            random,
                            width,
                        } => format!(
                            "the discarded fraction {fraction:#x} plus the random bits {random:#x} {} out of {width} bits",
                            if r.took_upper { "carry" } else { "do not carry" }
                        ),
                        Why::Forced => "nothing is representable below it".to_string(),
                        Why::Exact => unreachable!(),
                    };
                    lines.push(format!("  chose the neighbour {side}: {why}"));
                }
            }
        }
        for e in &trace.events {
            if let Some(t) = event_words(e) {
                lines.push(format!("  {t}"));
            }
        }
        lines.push(format!(
            "  = {} ({})",
            format_bits(out.bits, c.dst.width()),
            to_decimal(&c.dst.decode(out.bits))
        ));
        bits = out.bits;
    }
    lines
}

fn event_words(e: &Event) -> Option<String> {
    Some(
        match e {
            Event::FlushedInput => "the subnormal input was flushed to zero",
            Event::Scaled(k) => return Some(format!("the input was scaled by 2^{k}")),
            Event::NanResult => "NaN input: the NaN result",
            Event::NanToNumber => "NaN input: the destination's rule gives a number",
            Event::SignDropped => "the destination has no sign: the magnitude was used",
            Event::ClampedUnit => ".sat clamped the value to [0, 1]",
            Event::Relu => ".relu: negative (or -0) became +0",
            Event::Rounded => return None,
            Event::OverflowToMax => "overflow: the largest finite value",
            Event::OverflowToInfinity => "overflow: infinity",
            Event::OverflowToNan => "overflow: NaN (the format has no infinity)",
            Event::ClampedRange => "out of range: clamped to the destination's range",
            Event::Wrapped => "out of range: the low bits were kept",
            Event::FlushedOutput => "the subnormal result was flushed to zero",
            Event::PositiveZero => "-0 became +0",
            Event::NoZero => "the format has no zero: its smallest value",
            Event::Unrepresentable => "no encoding for the value: NaN",
        }
        .to_string(),
    )
}

fn text_report(r: &Report) -> String {
    let mut s = format!("{}\n", r.instruction);
    for o in &r.operands {
        s.push_str(&format!("  {} = {} ({})\n", o.name, o.text, o.bits));
        if let Some(n) = &o.note {
            s.push_str(&format!("      note: {n}\n"));
        }
    }
    s.push_str(&format!("d = {}\n", r.bits));
    for l in &r.lanes {
        s.push_str(&format!(
            "  d{:<8} {:<6} {:<12} {:<24} from {} {}{}\n",
            l.field,
            l.format,
            l.bits,
            l.value,
            l.input_format,
            l.input_value,
            if l.flags.is_empty() {
                String::new()
            } else {
                format!("  [{}]", l.flags.join(", "))
            }
        ));
        for e in &l.explain {
            s.push_str(&format!("      {e}\n"));
        }
    }
    s
}
