//! The `gpucvt` command-line tool: a thin layer over the `gpucvt` library.
//!
//! - `gpucvt formats [--json]`: the catalogue;
//! - `gpucvt values <FORMAT> [--json]`: every encoding of a format of at most 16 bits;
//! - `gpucvt round <NUMBER> --to <FMT> [options]`: one conversion, optionally explained;
//! - `gpucvt eval <INSTRUCTION> <OPERAND>...` / `gpucvt eval --batch`: evaluate instructions;
//! - `gpucvt diff INSTR_A INSTR_B`: where two single-input conversions differ, by class;
//! - `gpucvt check FILE`: diagnostics for a `.ptx`, `.visaasm` or `.mlir` file (exit code 1
//!   on errors);
//! - `gpucvt run FILE`: execute the conversions of a PTX entry, a vISA kernel or a Tile IR
//!   entry (`.mlir`, `--arg`);
//! - `gpucvt verify INSTR`, `gpucvt sweep INSTR --out FILE|--hash`: a form's fast slice kernel
//!   over every input, against the exact model or written out;
//! - `gpucvt table ptx|visa|tile`: the conversion tables computed from the implementation;
//! - `gpucvt vectors INSTR -o FILE`, `gpucvt conform FILE --impl CMD`: test vectors for
//!   other implementations, and their answers checked and classified;
//! - `gpucvt convert INPUT -o OUTPUT`: whole tensor files (.npy, .safetensors, raw), streaming.
//!
//! Output goes to stdout. A problem with the input (an unknown name, a malformed number, a
//! pattern too wide, options that exclude each other) is one line on stderr starting with
//! `error: ` and exit code 2, whether clap or the subcommand finds it. The JSON printed by
//! `--json` is described in `docs/json.md` at the root of the repository.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod args;
mod check;
mod common;
mod conform;
mod convert;
mod diff;
mod eval;
mod formats;
mod input;
mod output;
mod round;
mod run;
mod sweep;
mod table;
mod tile;
mod values;
mod vectors;
mod verify;

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser, Subcommand};
use common::Done;
use std::io::Write;
use std::process::ExitCode;

/// Bit-exact GPU number formats and conversions (NVIDIA PTX, Intel vISA, CUDA Tile IR).
#[derive(Parser, Debug)]
#[command(name = "gpucvt", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// The catalogue of formats: layout, bias, extreme values, special values.
    Formats(formats::Args),
    /// Every encoding of a format of at most 16 bits: bits, class, exact value.
    Values(values::Args),
    /// Convert a number (or a bit pattern) to a format, bit-exactly.
    #[command(after_help = ROUND_HELP)]
    Round(Box<round::Args>),
    /// Evaluate a conversion instruction (PTX cvt/cvt.pack, vISA mov, Tile IR op) on operand
    /// values, or a stream of them with --batch.
    #[command(after_help = EVAL_HELP)]
    Eval(Box<eval::Args>),
    /// Check a PTX module (.ptx), a vISA assembly file (.visaasm) or a CUDA Tile IR file
    /// (.mlir): compiler-style diagnostics; exit code 1 if any is an error.
    Check(check::Args),
    /// Run the straight-line mov/cvt/cvt.pack statements of a PTX entry, the movs of a vISA
    /// kernel, or the conversions of a Tile IR entry, and print every value written.
    #[command(after_help = RUN_HELP)]
    Run(Box<run::Args>),
    /// Conversion tables computed from the implementation: `ptx` (the ISA's Tables 15 and 16),
    /// `visa` (the mov rule of every type pair) or `tile` (the legal Tile IR conversions).
    Table(table::Args),
    /// Compare two single-input conversions (PTX cvt, vISA mov) over every input of their
    /// source width and sort the inputs where they differ into classes, with examples.
    #[command(after_help = DIFF_HELP)]
    Diff(Box<diff::Args>),
    /// Run a PTX cvt form's fast slice kernel over every input of its source type (a
    /// boundary-dense and random sample for 64-bit sources) and compare each result with
    /// the exact model; exit code 1 if any differs.
    #[command(after_help = VERIFY_HELP)]
    Verify(Box<verify::VerifyArgs>),
    /// Write a PTX cvt form's result for every input of a source of at most 32 bits, in
    /// input order, as raw little-endian words (--out FILE), or print their hash (--hash).
    #[command(after_help = VERIFY_HELP)]
    Sweep(Box<sweep::Args>),
    /// Write test vectors for another implementation: a form's boundary cases (every
    /// encoding for sources of at most 16 bits) and seeded random ones, with the model's
    /// answers, as text or .npz, and a manifest; --suite: every form legal on a target.
    #[command(after_help = VECTORS_HELP)]
    Vectors(Box<vectors::Args>),
    /// Check another implementation's answers to a vectors file (run it with --impl, or
    /// read --answers): agreement counts and each disagreement classified; exit code 1 on a
    /// disagreement outside the --allow classes.
    #[command(after_help = CONFORM_HELP)]
    Conform(Box<conform::Args>),
    /// Convert a whole tensor file (.npy, .safetensors, raw) element by element, streaming,
    /// optionally with MX block scales; prints counts and error statistics.
    #[command(after_help = CONVERT_HELP)]
    Convert(Box<convert::Args>),
}

const CONVERT_HELP: &str = "\
Examples:
  gpucvt convert model.safetensors -o model-fp8.safetensors --to e4m3 --satfinite
  gpucvt convert model.safetensors -o out.safetensors --cvt 'cvt.rn.satfinite.e4m3x2.f32' --tensor lm_head.weight
  gpucvt convert w.npy -o w-mxfp4.npy --to e2m1 --satfinite --block 32 --scale ue8m0
  gpucvt convert x.bin --from f32 -o x.bf16 --to bf16 --mode rs --seed 1

Outputs have the input's kind. .safetensors: dtypes F8_E4M3 F8_E5M2 F6_E2M3 F6_E3M2 F4
F8_E8M0 BF16 F16 F32 …; F4 two per byte (first element in the low nibble), F6 four per three
bytes (little-endian bit stream); unselected tensors are copied unchanged; block scales as
the tensor NAME_scale (F8_E8M0). .npy: bf16 as <u2, FP8/FP6/FP4/ue8m0 as |u1 (one per byte);
block scales in OUTPUT_scale.npy. Raw: packed as .safetensors, scales in OUTPUT_scale.EXT.";

const VECTORS_HELP: &str = "\
Examples:
  gpucvt vectors cvt.rn.satfinite.e4m3x2.f32 -o e4m3x2.txt
  gpucvt vectors cvt.rs.satfinite.e2m1x4.f32 --level 2 --seed 7 --count 100000 -o e2m1x4.npz
  gpucvt vectors 'mov.sat hf <- f' --cr0 rtz -o hf.txt
  gpucvt vectors --suite --target sm_100a --level 2 -o suite/

Each case is an eval --batch input line and its answer: INSTRUCTION 0xOPERAND... -> 0xEXPECTED.
The text file starts with `# key: value` lines (the instruction and options); the .npz holds
operands (cases x operand words) and expected (cases x answer words, 64-bit pieces least
significant first; one per element for Tile IR), both uint64. FILE.manifest.json gives the
version, options, counts and SHA-256 of the file and of the case lines.";

const CONFORM_HELP: &str = "\
Examples:
  gpucvt conform e4m3x2.txt --impl 'gpucvt eval --batch'
  gpucvt conform e4m3x2.txt --impl './my-cvt' --allow nan-encoding,saturation --show 5
  gpucvt conform e4m3x2.txt --answers answers.txt --json

The program gets each case's input line on stdin and prints one answer line per input line.
Classes: rbits (.rs forms: the random bits read from other bits; the rule is inferred),
nan-encoding, saturation, sign-of-zero, subnormal, rounding, other.";

const VERIFY_HELP: &str = "\
Examples:
  gpucvt verify cvt.rn.satfinite.e4m3x2.f32
  gpucvt verify cvt.rs.satfinite.e2m1x4.f32 --seed 7 --json
  gpucvt verify cvt.rn.f32.f64 --sample 100000000
  gpucvt sweep cvt.rn.f16.f32 --hash
  gpucvt sweep cvt.rn.satfinite.e4m3x2.f32 --out e4m3.bin

Inputs: one source word per input (a packed f16x2 word is one input); forms with several
scalar sources (d, a, b) take consecutive inputs in memory order (the first input is the last
operand, so the results stored little-endian are in input order). .rs forms take rbits for
instruction i from splitmix64(seed + (i+1)·0x9e3779b97f4a7c15), low 32 bits. A sweep writes
one word of the destination type's width (rounded up to 1, 2, 4 or 8 bytes) per instruction.";

const EVAL_HELP: &str = "\
Examples:
  gpucvt eval cvt.rn.satfinite.e4m3x2.f32 1.0 300
  gpucvt eval cvt.rn.f16x2.e4m3x2 0x3879 --explain
  gpucvt eval 'mov.sat ub <- f' 300.5 --cr0 rtz
  printf 'cvt.rn.f16.f32 0x3f800000\\n' | gpucvt eval --batch --target sm_90
  gpucvt eval 'ftof %x : tile<f64> -> tile<bf16>' 0x3ff0100000000001 --target sm_80 --explain
  gpucvt eval 'ftoi %x signed : tile<4xf32> -> tile<4xi8>' '[200.0, nan, -1.5, 1e9]' --semantics spec

Batch lines are <instruction> <operand>..., operands as 0x hex bit patterns of their natural
widths in instruction order (d, a, b: a then b; x4 forms: a b e f rbits; cvt.pack with c:
a b c). Each input line gives exactly one output line: the destination as 0x hex padded to
the destination type's width, or error: <message>.

Tile IR ops (ftof, ftoi, itof, exti, trunci, bitcast, int_to_ptr, ptr_to_int, ptr_to_ptr; the
cuda_tile. prefix and the operand name are optional) take their source tile as one value per
element, row-major: separate words or a list [a, b, …]; one value splats. In batch lines the
op text runs up to its result type, then one 0x pattern per element; the output line is the
result elements, 0x… padded to the element width, separated by spaces. Under --semantics spec
an undefined element gives `error: undefined (spec semantics): element K: <reason>`.";

const DIFF_HELP: &str = "\
Examples:
  gpucvt diff cvt.rn.f16.f32 'mov hf <- f' --visa-cr0 0x4C0
  gpucvt diff cvt.rn.f16.f32 'mov hf <- f' --visa-cr0 rtz --examples 3
  gpucvt diff cvt.rn.f32.f64 'mov f <- df' --sample 200000 --seed 1 --json

Sources of at most 32 bits are swept exhaustively (2^32 inputs take some seconds in a
release build); 64-bit sources are sampled. Classes, tested in this order: nan-encoding,
nan-vs-number, overflow, subnormal, sign-of-zero, rounding, other.";

const RUN_HELP: &str = "\
Examples:
  gpucvt run examples/ptx/quantize_fp8.ptx --set %f1=1.0 --set %f2=300
  gpucvt run kernel.ptx --entry k --set %p=1 --json
  gpucvt run examples/visa/f_to_hf.visaasm --set vector331=[1.0,2.5,65520] --cr0 rtz
  gpucvt run examples/tile/quantize.mlir --arg %x=[1.0,300,-0.3,nan] --arg %n=[7,-1,200,0x10000]

PTX: registers start without a value; reading one that was never written nor set is an
error. Guards are honoured (@%p runs when %p is 1: set it with --set %p=1). Labels, branches
and other instructions are skipped with a note; branches are never taken.
vISA: variables start at 0.
Tile IR: every argument needs --arg (one value splats); --semantics spec|tileiras, --target
(the tileiras lowering, default sm_100a), --tile-version; other ops are skipped with a note.";

const ROUND_HELP: &str = "\
Without --from, the number is converted exactly from its text (a decimal that is not a binary
fraction is carried as its round-to-odd at 126 bits, which rounds exactly like the decimal in
every format of at most 64 bits). With --from FMT, the number is first rounded to FMT with rn
and then converted from those bits; --bits PATTERN --from FMT starts from a raw pattern.

Examples:
  gpucvt round 3.14159 --to e4m3 --satfinite
  gpucvt round 5 --to e2m1 --mode rna --explain
  gpucvt round --bits 0x3f800001 --from f32 --to f16 --json
  gpucvt round 1.1 --to bf16 --mode rs --rbits 0x1234 --rbits-width 16";

fn main() -> ExitCode {
    // Operands such as -1e-8, -inf and -0x1p0 are operands, not options.
    let argv = args::hyphen_operands(&Cli::command(), std::env::args_os().collect());
    let cli = match Cli::try_parse_from(argv) {
        Ok(cli) => cli,
        // Usage errors exit with 2, on one line like the subcommands' own errors.
        Err(e)
            if e.use_stderr()
                && e.kind() != ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand =>
        {
            let _ = writeln!(std::io::stderr(), "{}", one_line(&e));
            return ExitCode::from(2);
        }
        // --help and --version exit with 0; `gpucvt` alone prints the help and exits with 2.
        Err(e) => e.exit(),
    };
    // Stopped by SIGINT, SIGTERM or SIGHUP, `convert` and `sweep --out` leave no temporary
    // file behind. (If the handler cannot be installed, the default action still stops the
    // process; only the clean-up is lost.)
    let _ = ctrlc::set_handler(|| {
        gpucvt_tensor::remove_temporaries();
        std::process::exit(130);
    });
    // A ceiling on the kernels' instruction set that names none is refused, not ignored.
    if let Err(e) = gpucvt::kernels::isa_limit() {
        let _ = writeln!(std::io::stderr(), "error: {e}");
        return ExitCode::from(2);
    }
    let result = match &cli.command {
        Command::Formats(a) => formats::run(a).map(Done::ok),
        Command::Values(a) => values::run(a).map(Done::ok),
        Command::Round(a) => round::run(a).map(Done::ok),
        Command::Eval(a) => eval::run(a).map(Done::ok),
        Command::Check(a) => check::run(a),
        Command::Run(a) => run::run(a),
        Command::Table(a) => table::run(a).map(Done::ok),
        Command::Diff(a) => diff::run(a).map(Done::ok),
        Command::Verify(a) => verify::run_verify(a),
        Command::Sweep(a) => sweep::run(a),
        Command::Vectors(a) => vectors::run(a),
        Command::Conform(a) => conform::run(a),
        Command::Convert(a) => convert::run(a),
    };
    match result {
        Ok(done) => match emit(&done.out).and_then(|()| {
            let mut e = std::io::stderr().lock();
            e.write_all(done.err.as_bytes())?;
            e.flush()
        }) {
            Ok(()) => ExitCode::from(done.code),
            // A closed pipe (`gpucvt values f16 | head`) is not an error of ours; the exit
            // code is still the subcommand's (`gpucvt check bad.ptx | head` fails).
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(done.code),
            Err(e) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "error: {:#}",
                    anyhow::Error::from(e).context("cannot write the output")
                );
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::from(2)
        }
    }
}

fn emit(out: &str) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()
}

/// A clap error as one line: its message, then its details (possible values, a tip, the
/// usage) separated by `; `, so that scripts can read every usage error the same way. (The
/// pointer to `--help` is left out: the usage names the subcommand.)
fn one_line(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let mut out = String::new();
    for part in rendered
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
    {
        if !out.is_empty() {
            out.push_str(if out.ends_with(':') { " " } else { "; " });
        }
        match part.strip_prefix("Usage: ") {
            Some(usage) => {
                out.push_str("usage: ");
                out.push_str(usage);
            }
            None => out.push_str(part),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// clap's own consistency checks (names that `conflicts_with`, `requires` and `mut_arg`
    /// refer to exist, no two options share a name, …), which otherwise only run when a
    /// subcommand is used.
    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
