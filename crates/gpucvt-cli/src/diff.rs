//! `gpucvt diff INSTR_A INSTR_B`: where two single-input conversions (of two ISAs, or of
//! one) disagree, over every input of their source width (a sample for 64-bit sources),
//! grouped into classes with examples.

use crate::args::PtxTarget;
use crate::common::{compact, fail, CliError};
use crate::output::{group, progress_bar, table, to_json, Counting};
use gpucvt::core::format::Format;
use gpucvt::core::value::Value;
use gpucvt::diff::{Comparison, Report, Sweep, DEFAULT_SAMPLE};
use gpucvt::instr::Instr;
use gpucvt::text::to_decimal;
use gpucvt::visa::cr0::Cr0;
use serde::Serialize;

/// Options of `gpucvt diff`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The first instruction, without operands: a PTX form (`cvt.rn.f16.f32`) or a vISA move
    /// (`'mov hf <- f'`).
    #[arg(value_name = "INSTR_A")]
    pub a: String,
    /// The second instruction.
    #[arg(value_name = "INSTR_B")]
    pub b: String,
    /// vISA control register for the vISA instruction(s): a raw value (0x4C0), a preset (0:
    /// kernel entry, opencl: 0x4C0) or a rounding mode name (rne, ru, rd, rtz).
    #[arg(long = "visa-cr0", visible_alias = "cr0", value_name = "CR0", value_parser = Cr0::parse)]
    pub cr0: Option<Cr0>,
    #[command(flatten)]
    pub ptx: PtxTarget,
    /// Compare N inputs (boundary-dense set, then seeded random patterns) instead of every
    /// input. 64-bit sources are always sampled (default 1,000,000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub sample: Option<u64>,
    /// Seed of the random part of a sample.
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Examples shown per class.
    #[arg(long, value_name = "K", default_value_t = 5, value_parser = clap::value_parser!(u16).range(..=1000))]
    pub examples: u16,
    /// Machine-readable output.
    #[arg(long)]
    pub json: bool,
}

/// Most inputs a sample may have (the inputs are held in memory: 8 bytes each).
const MAX_SAMPLE: u64 = 1 << 30;

/// Runs `gpucvt diff`.
pub fn run(a: &Args) -> Result<String, CliError> {
    let opts = a.ptx.instr_options(a.cr0);
    let parse = |text: &str, which: &str| {
        Instr::parse(text, &opts).map_err(|e| CliError(format!("{which} {text:?}: {e}")))
    };
    let ia = parse(&a.a, "INSTR_A")?;
    let ib = parse(&a.b, "INSTR_B")?;
    let cmp = Comparison::new(ia, ib).map_err(CliError::from)?;
    let sweep = match a.sample {
        Some(n) if n > MAX_SAMPLE => {
            return fail(format!(
                "--sample {n} is too large (at most {MAX_SAMPLE}; without --sample a source of at most 32 bits is swept exhaustively)"
            ))
        }
        Some(count) => Sweep::Sample {
            count,
            seed: a.seed,
        },
        None if cmp.source_bits() > 32 => Sweep::Sample {
            count: DEFAULT_SAMPLE,
            seed: a.seed,
        },
        None => Sweep::Exhaustive,
    };
    let (planned, _) = cmp.planned_inputs(&sweep);
    let bar = if planned >= 1 << 24 && !a.json {
        progress_bar("comparing", planned, Counting::Items(" inputs"))
    } else {
        None
    };
    let report = cmp.run(&sweep, usize::from(a.examples), &|n| {
        if let Some(b) = &bar {
            b.inc(n);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let cr0_used = matches!(cmp.instr(0), Instr::Visa(_)) || matches!(cmp.instr(1), Instr::Visa(_));
    if a.json {
        to_json(&json_report(&cmp, &report, cr0_used.then_some(opts.cr0)))
    } else {
        Ok(text_report(&cmp, &report, cr0_used.then_some(opts.cr0)))
    }
}

fn percent(n: u64, of: u64) -> String {
    if of == 0 {
        return "0%".into();
    }
    let p = n as f64 * 100.0 / of as f64;
    if n == 0 {
        "0%".into()
    } else if p < 0.0001 {
        "<0.0001%".into()
    } else {
        format!("{p:.4}%")
    }
}

fn hex(bits: u128, width: u32) -> String {
    let digits = width.div_ceil(4).max(1) as usize;
    format!("0x{bits:0digits$x}")
}

fn values_text(vs: &[Value], show: fn(&Value) -> String) -> String {
    let parts: Vec<String> = vs.iter().map(show).collect();
    if parts.len() == 1 {
        parts.into_iter().next().unwrap_or_default()
    } else {
        format!("[{}]", parts.join(", "))
    }
}

fn formats_text(fs: &[Format]) -> String {
    match fs {
        [one] => one.name.to_string(),
        _ => {
            let names: Vec<&str> = fs.iter().map(|f| f.name).collect();
            if names.windows(2).all(|w| w[0] == w[1]) {
                format!("{}x{}", names[0], names.len())
            } else {
                format!("[{}]", names.join(", "))
            }
        }
    }
}

fn source_text(cmp: &Comparison, i: usize) -> String {
    let n = cmp.source_lanes(i);
    let f = cmp.source_format(i).name;
    if n == 1 {
        f.to_string()
    } else {
        format!("{f}x{n}")
    }
}

fn text_report(cmp: &Comparison, r: &Report, cr0: Option<Cr0>) -> String {
    let mut s = String::new();
    let names = [cmp.instr(0).spelling(), cmp.instr(1).spelling()];
    let wide = names[0].len().max(names[1].len());
    for (i, tag) in ["A", "B"].iter().enumerate() {
        s.push_str(&format!(
            "{tag}: {:wide$}   {} -> {}",
            names[i],
            source_text(cmp, i),
            formats_text(&cmp.result_formats(i))
        ));
        if let (Instr::Visa(_), Some(c)) = (cmp.instr(i), cr0) {
            s.push_str(&format!(
                "   (cr0 {:#x}: {})",
                c.raw(),
                c.rounding_mode().name()
            ));
        }
        s.push('\n');
    }
    let what = if r.exhaustive {
        format!("every {}-bit source pattern", cmp.source_bits())
    } else {
        format!(
            "a sample: boundary-dense set + random patterns, seed {}",
            r.seed.unwrap_or(0)
        )
    };
    s.push_str(&format!("inputs: {} ({what})\n", group(r.inputs)));
    s.push_str(&format!(
        "differ: {} ({})\n",
        group(r.differ),
        percent(r.differ, r.inputs)
    ));
    if r.differ == 0 {
        s.push_str("\nThe two instructions give the same bits on every input compared.\n");
        return s;
    }
    s.push('\n');
    let rows: Vec<Vec<String>> = r
        .classes
        .iter()
        .map(|c| {
            vec![
                c.class.name().to_string(),
                group(c.count),
                percent(c.count, r.inputs),
                c.class.description().to_string(),
            ]
        })
        .collect();
    s.push_str(&table(&["class", "inputs", "share", "meaning"], &rows));
    let width = cmp.result_bits();
    for c in r
        .classes
        .iter()
        .filter(|c| c.count > 0 && !c.examples.is_empty())
    {
        s.push_str(&format!(
            "\n{} ({} inputs; {} of them):\n",
            c.class.name(),
            group(c.count),
            if c.examples.len() as u64 == c.count {
                "all".to_string()
            } else {
                c.examples.len().to_string()
            }
        ));
        let rows: Vec<Vec<String>> = c
            .examples
            .iter()
            .map(|e| {
                vec![
                    hex(e.input as u128, cmp.source_bits()),
                    values_text(&cmp.decode_input(0, e.input), compact),
                    hex(e.a, width),
                    values_text(&cmp.decode_result(0, e.a), compact),
                    hex(e.b, width),
                    values_text(&cmp.decode_result(1, e.b), compact),
                ]
            })
            .collect();
        let t = table(&["input", "value", "A", "A value", "B", "B value"], &rows);
        for line in t.lines() {
            s.push_str("  ");
            s.push_str(line);
            s.push('\n');
        }
    }
    s
}

#[derive(Serialize)]
struct SideJson {
    instruction: String,
    source: String,
    result: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    cr0: Option<String>,
}

#[derive(Serialize)]
struct ExampleJson {
    input: String,
    input_value: String,
    a: String,
    a_value: String,
    b: String,
    b_value: String,
}

#[derive(Serialize)]
struct ClassJson {
    class: &'static str,
    description: &'static str,
    count: u64,
    examples: Vec<ExampleJson>,
}

#[derive(Serialize)]
struct DiffJson {
    a: SideJson,
    b: SideJson,
    source_bits: u32,
    result_bits: u32,
    inputs: u64,
    exhaustive: bool,
    seed: Option<u64>,
    differ: u64,
    classes: Vec<ClassJson>,
}

fn json_report(cmp: &Comparison, r: &Report, cr0: Option<Cr0>) -> DiffJson {
    let side = |i: usize| SideJson {
        instruction: cmp.instr(i).spelling(),
        source: source_text(cmp, i),
        result: formats_text(&cmp.result_formats(i)),
        cr0: match (cmp.instr(i), cr0) {
            (Instr::Visa(_), Some(c)) => Some(format!("{:#x}", c.raw())),
            _ => None,
        },
    };
    let width = cmp.result_bits();
    DiffJson {
        a: side(0),
        b: side(1),
        source_bits: cmp.source_bits(),
        result_bits: width,
        inputs: r.inputs,
        exhaustive: r.exhaustive,
        seed: r.seed,
        differ: r.differ,
        classes: r
            .classes
            .iter()
            .map(|c| ClassJson {
                class: c.class.name(),
                description: c.class.description(),
                count: c.count,
                examples: c
                    .examples
                    .iter()
                    .map(|e| ExampleJson {
                        input: hex(e.input as u128, cmp.source_bits()),
                        input_value: values_text(&cmp.decode_input(0, e.input), to_decimal),
                        a: hex(e.a, width),
                        a_value: values_text(&cmp.decode_result(0, e.a), to_decimal),
                        b: hex(e.b, width),
                        b_value: values_text(&cmp.decode_result(1, e.b), to_decimal),
                    })
                    .collect(),
            })
            .collect(),
    }
}
