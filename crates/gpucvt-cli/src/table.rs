//! `gpucvt table ptx|visa|tile`: conversion tables computed from the implementation.
//!
//! - `ptx`: the ISA's Table 15 (integer and classic float types) and Table 16 (alternate
//!   formats, with the implementation's extra formats as extra rows and columns), from the
//!   legality rules ([`gpucvt::ptx::table`]): rows are sources, columns destinations;
//! - `visa`: the `mov` rule of every type pair ([`gpucvt::visa::eval::rule_text`]), as a list;
//! - `tile`: every legal Tile IR conversion op, element-type pair and rounding mode.

use crate::args::TargetArg;
use crate::common::CliError;
use crate::output::to_json;
use gpucvt::ptx::table::{method_table, TABLE_15_TYPES, TABLE_16_TYPES};
use gpucvt::ptx::PtxType;
use gpucvt::visa::eval::rule_text;
use gpucvt::visa::types::VisaType;
use serde::Serialize;

/// Which table.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// PTX Tables 15 and 16 (cvt methods per source × destination).
    Ptx,
    /// vISA mov conversion rules for every type pair.
    Visa,
    /// CUDA Tile IR: which op and rounding mode is legal for each element-type pair.
    Tile,
}

/// Options of `gpucvt table`.
#[derive(clap::Args, Debug)]
#[command(mut_arg("target", |a| a.help(
    "PTX: only forms legal on this target (sm_80, sm_100a, …); default: legal on some target"
)))]
pub struct Args {
    /// The dialect.
    #[arg(value_enum)]
    pub which: Which,
    #[command(flatten)]
    pub target: TargetArg,
    /// Machine-readable output (see docs/json.md).
    #[arg(long)]
    pub json: bool,
}

/// `table ptx --json`: one of the two tables.
#[derive(Serialize)]
struct PtxTableJson {
    number: u32,
    types: Vec<&'static str>,
    /// `cells[i][j]`: the method converting `types[i]` to `types[j]`, or null.
    cells: Vec<Vec<Option<&'static str>>>,
}

/// `table visa --json`: one type pair.
#[derive(Serialize)]
struct VisaRuleJson {
    dst: &'static str,
    src: &'static str,
    rule: String,
}

/// `table tile --json`: one element-type pair of one op.
#[derive(Serialize)]
struct TileEntryJson {
    op: String,
    source: String,
    result: String,
    rounding_modes: Vec<&'static str>,
    saturating: bool,
}

fn ptx_json(number: u32, types: &[PtxType], target: Option<gpucvt::ptx::Target>) -> PtxTableJson {
    PtxTableJson {
        number,
        types: types.iter().map(|t| t.name()).collect(),
        cells: method_table(types, types, target)
            .into_iter()
            .map(|row| row.into_iter().map(|c| (c != "–").then_some(c)).collect())
            .collect(),
    }
}

/// Runs `gpucvt table`.
pub fn run(a: &Args) -> Result<String, CliError> {
    match a.which {
        Which::Ptx => {
            let target = a.target.ptx("table ptx")?;
            if a.json {
                return to_json(&serde_json::json!({
                    "table": "ptx",
                    "target": target.map(|t| t.to_string()),
                    "tables": [
                        ptx_json(15, &TABLE_15_TYPES, target),
                        ptx_json(16, &TABLE_16_TYPES, target),
                    ],
                }));
            }
            let on = match target {
                Some(t) => format!("legal on {t} at PTX ISA {}", t.max_version()),
                None => "legal on some target".to_string(),
            };
            let mut s = format!(
                "Table 15: integer and float conversions (rows: source, columns: destination; a method where a cvt {on})\n\n"
            );
            s.push_str(&matrix(&TABLE_15_TYPES, target));
            s.push_str(&format!(
                "\nTable 16: alternate floating-point formats (ue5m3 and s2f6 are beyond the ISA's table; a method where a cvt {on})\n\n"
            ));
            s.push_str(&matrix(&TABLE_16_TYPES, target));
            s.push_str(
                "\nsext = sign-extend; zext = zero-extend; chop = keep only the low bits that fit;\n\
                 s2f = signed-to-float; f2s = float-to-signed; u2f = unsigned-to-float;\n\
                 f2u = float-to-unsigned; f2f = float-to-float; – = no cvt converts the pair.\n",
            );
            Ok(s)
        }
        Which::Visa => {
            if a.target.target.is_some() {
                return Err(CliError("--target applies to `table ptx` only".to_string()));
            }
            if a.json {
                let mut rules = Vec::new();
                for dst in VisaType::ALL {
                    for src in VisaType::ALL {
                        rules.push(VisaRuleJson {
                            dst: dst.name(),
                            src: src.name(),
                            rule: rule_text(dst, src),
                        });
                    }
                }
                return to_json(&serde_json::json!({"table": "visa", "rules": rules}));
            }
            let mut s = String::new();
            for dst in VisaType::ALL {
                for src in VisaType::ALL {
                    s.push_str(&rule_text(dst, src));
                    s.push('\n');
                }
            }
            Ok(s)
        }
        Which::Tile => {
            if a.target.target.is_some() {
                return Err(CliError("--target applies to `table ptx` only".to_string()));
            }
            let v = gpucvt::tile::types::SpecVersion::LATEST;
            if a.json {
                let entries: Vec<TileEntryJson> = gpucvt::tile::check::legal_table(v)
                    .into_iter()
                    .map(|e| TileEntryJson {
                        op: format!("{:?}", e.op).to_lowercase(),
                        source: element(e.src),
                        result: element(e.dst),
                        rounding_modes: e.modes.iter().map(|m| m.name()).collect(),
                        saturating: e.saturating,
                    })
                    .collect();
                return to_json(&serde_json::json!({
                    "table": "tile",
                    "version": v.name(),
                    "entries": entries,
                }));
            }
            let mut rows = Vec::new();
            for e in gpucvt::tile::check::legal_table(v) {
                let modes: Vec<String> = e.modes.iter().map(|m| m.name().to_string()).collect();
                rows.push(vec![
                    format!("{:?}", e.op).to_lowercase(),
                    element(e.src),
                    element(e.dst),
                    if modes.is_empty() {
                        "-".to_string()
                    } else {
                        modes.join(" ")
                    },
                    if e.saturating { "yes" } else { "-" }.to_string(),
                ]);
            }
            let mut s = format!(
                "CUDA Tile IR {v}: legal conversions (the first rounding mode is the default)\n\n"
            );
            s.push_str(&crate::output::table(
                &["op", "source", "result", "rounding modes", "saturating"],
                &rows,
            ));
            Ok(s)
        }
    }
}

/// A square matrix over `types`, columns padded to the widest cell.
fn matrix(types: &[PtxType], target: Option<gpucvt::ptx::Target>) -> String {
    let cells = method_table(types, types, target);
    let mut rows: Vec<Vec<String>> = vec![std::iter::once("src \\ dst".to_string())
        .chain(types.iter().map(|t| t.name().to_string()))
        .collect()];
    for (t, row) in types.iter().zip(&cells) {
        rows.push(
            std::iter::once(t.name().to_string())
                .chain(row.iter().map(|c| c.to_string()))
                .collect(),
        );
    }
    let width = rows
        .iter()
        .flat_map(|r| &r[1..])
        .map(|c| c.chars().count())
        .max()
        .unwrap_or(0);
    let first = rows.iter().map(|r| r[0].chars().count()).max().unwrap_or(0);
    let mut s = String::new();
    for r in &rows {
        let mut line = format!("{:<first$}", r[0]);
        for c in &r[1..] {
            line.push_str(&format!("  {c:<width$}"));
        }
        s.push_str(line.trim_end());
        s.push('\n');
    }
    s
}

/// A Tile IR element type in MLIR spelling (`f32`, `ptr<f32>`).
fn element(e: gpucvt::tile::Element) -> String {
    match e {
        gpucvt::tile::Element::Num(t) => t.to_string(),
        gpucvt::tile::Element::Ptr(t) => format!("ptr<{t}>"),
    }
}
