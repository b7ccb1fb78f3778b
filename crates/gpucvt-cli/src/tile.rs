//! CUDA Tile IR in the command line: `gpucvt eval` on a Tile IR op (with `--explain`: its
//! PTX lowering and where the `spec` and `tileiras` semantics differ) and `gpucvt run
//! FILE.mlir` (an entry evaluated over `--arg` values and constants).
//!
//! A tile value is written as one value per element, row-major: separate words, a comma
//! list, or a bracketed list (`[1.0, 2.5]`; nested brackets of 2-d tiles are flattened). A
//! single value is splatted to every element. Each value is a decimal, a hexadecimal float
//! (`0x1.8p3`) or a raw bit pattern (`0x3fc00000`, `0b…`), or `true`/`false` for `i1`.
//! Where the `spec` semantics leaves an element undefined, the output says `undefined` and
//! why, never a number.

use crate::common::{compact, fail, CliError, Done};
use crate::eval::{is_raw_bits, number_in};
use crate::output::{table, to_json, NoteJson, UnknownJson};
use gpucvt::core::format::Format;
use gpucvt::instr::{tile_words, TileInstr};
use gpucvt::ptx::Target;
use gpucvt::text::{format_bits, parse_bits_named, to_decimal};
use gpucvt::tile::eval::{
    difference, lowering, Difference, ElementResult, EvalError, Lowering, Semantics, Step,
    DEFAULT_TARGET,
};
use gpucvt::tile::parse::{parse_file, parse_tile_type, Op, TileFile};
use gpucvt::tile::run::{read_type, run_entry_given, Given, RunOptions};
use gpucvt::tile::types::TileType;
use gpucvt::tile::types::{Element, OpKind, Signedness, SpecVersion};
use serde::Serialize;
use std::collections::HashMap;

/// The most elements a tile value given or printed on the command line may have.
const MAX_SHOWN: u64 = 1 << 16;

/// The values of a tile of `n` elements from its words (a single word is splatted); notes
/// for numbers that were not exact in the element format.
fn read_tile(
    words: &[&str],
    n: u64,
    format: Option<Format>,
    bits: u32,
    what: &str,
) -> Result<(Vec<u64>, Vec<String>), CliError> {
    if n > MAX_SHOWN {
        return fail(format!(
            "{what} has {n} elements; gpucvt evaluates tiles of at most {MAX_SHOWN} elements on the command line"
        ));
    }
    if words.len() as u64 != n && words.len() != 1 {
        return fail(format!(
            "{what} needs {n} element value(s) (or 1 to splat), got {}: give them as separate words or a list [a, b, …]",
            words.len()
        ));
    }
    let mut values = Vec::with_capacity(words.len());
    let mut notes = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let name = if words.len() == 1 {
            what.to_string()
        } else {
            format!("{what}[{i}]")
        };
        let bool_word = match (bits, w.to_ascii_lowercase().as_str()) {
            (1, "true") => Some(1),
            (1, "false") => Some(0),
            _ => None,
        };
        let v = match (bool_word, format) {
            (Some(b), _) => b,
            (None, Some(f)) if !is_raw_bits(w) => {
                let (b, note) = number_in(w, &f, &name)?;
                notes.extend(note.map(|n| format!("{name}: {n}")));
                b
            }
            _ => parse_bits_named(w, bits, "element")
                .map_err(|e| CliError(format!("{name}: {e}")))?,
        };
        values.push(v);
    }
    if values.len() == 1 && n != 1 {
        values = vec![values[0]; n as usize];
    }
    Ok((values, notes))
}

/// A bit pattern, its exact value in `format` and the value in short (raw bits for
/// pointers).
fn describe(bits: u64, width: u32, format: Option<Format>) -> (String, String, String) {
    let hex = format_bits(bits, width);
    match format {
        Some(f) => {
            let v = f.decode(bits);
            (hex, to_decimal(&v), compact(&v))
        }
        None => (hex.clone(), hex.clone(), hex),
    }
}

fn result_words(r: ElementResult, width: u32, format: Option<Format>) -> (String, String, String) {
    match r {
        ElementResult::Bits(b) => describe(b, width, format),
        ElementResult::Undefined(why) => {
            ("undefined".to_string(), why.to_string(), why.to_string())
        }
    }
}

#[derive(Serialize)]
struct InJson {
    index: usize,
    bits: String,
    value: String,
    #[serde(skip)]
    short: String,
}

#[derive(Serialize)]
struct OutJson {
    index: usize,
    /// `null` when undefined.
    bits: Option<String>,
    value: String,
    #[serde(skip)]
    short: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    undefined: Option<&'static str>,
}

#[derive(Serialize)]
struct StepJson {
    step: String,
    bits: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<String>,
    #[serde(skip)]
    short: Option<String>,
}

#[derive(Serialize)]
struct TraceJson {
    index: usize,
    steps: Vec<StepJson>,
}

#[derive(Serialize)]
struct CompareJson {
    index: usize,
    spec: String,
    tileiras: String,
    differ: bool,
}

#[derive(Serialize)]
struct ExplainJson {
    /// The PTX sequence of one element, or why tileiras does not compile the op.
    lowering: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lowering_error: Option<String>,
    trace: Vec<TraceJson>,
    comparison: Vec<CompareJson>,
    differ: usize,
}

#[derive(Serialize)]
struct EvalJson {
    instruction: String,
    dialect: &'static str,
    semantics: &'static str,
    target: String,
    source_type: String,
    result_type: String,
    operands: Vec<InJson>,
    elements: Vec<OutJson>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    explain: Option<ExplainJson>,
}

fn outs(results: &[ElementResult], width: u32, format: Option<Format>) -> Vec<OutJson> {
    results
        .iter()
        .enumerate()
        .map(|(index, &r)| {
            let (bits, value, short) = result_words(r, width, format);
            OutJson {
                index,
                bits: r.bits().map(|_| bits),
                value,
                short,
                undefined: match r {
                    ElementResult::Undefined(why) => Some(why),
                    ElementResult::Bits(_) => None,
                },
            }
        })
        .collect()
}

/// The result of one step of a lowering, in the step's destination format when it is a
/// `cvt`.
fn step_json(step: &Step, bits: u64, last: bool, dst: (u32, Option<Format>)) -> StepJson {
    let (width, format) = match step {
        _ if last => dst,
        Step::Cvt(f) => (f.dtype.lane_bits(), f.dtype.lane_format()),
        Step::Other(_) => (0, None),
    };
    let (hex, value, short) = if width == 0 {
        (format!("{bits:#x}"), None, None)
    } else {
        let (h, v, sh) = describe(bits, width, format);
        (h, format.map(|_| v), format.map(|_| sh))
    };
    StepJson {
        step: step.spelling(),
        bits: hex,
        value,
        short,
    }
}

fn explain(t: &TileInstr, inputs: &[u64]) -> ExplainJson {
    let dst = (t.op.dst.value.elem.bits(), t.result_format());
    let (low, lowering_error) = match &t.lowering {
        Some(l) => (l.clone(), None),
        None => match lowering(&t.op, t.target) {
            Ok(l) => (l, None),
            Err(e) => (Lowering::default(), Some(e.to_string())),
        },
    };
    let mut trace = Vec::new();
    if lowering_error.is_none() {
        for (index, &x) in inputs.iter().enumerate() {
            let mut v = x;
            let mut steps = Vec::new();
            for (k, s) in low.steps.iter().enumerate() {
                let one = Lowering { steps: vec![*s] };
                match one.apply(v) {
                    Ok(b) => v = b,
                    Err(e) => {
                        steps.push(StepJson {
                            step: s.spelling(),
                            bits: format!("error: {e}"),
                            value: None,
                            short: None,
                        });
                        break;
                    }
                }
                let last = k + 1 == low.steps.len();
                if last && dst.0 < 64 {
                    v &= (1u64 << dst.0) - 1;
                }
                steps.push(step_json(s, v, last, dst));
            }
            trace.push(TraceJson { index, steps });
        }
    }
    let mut comparison = Vec::new();
    if lowering_error.is_none() {
        for (index, &x) in inputs.iter().enumerate() {
            let word = |r: ElementResult| match r {
                ElementResult::Bits(_) => {
                    let (h, _, v) = result_words(r, dst.0, dst.1);
                    if dst.1.is_some() {
                        format!("{h} ({v})")
                    } else {
                        h
                    }
                }
                ElementResult::Undefined(why) => format!("undefined ({why})"),
            };
            match difference(&t.op, t.target, x) {
                Ok(Difference::Same(b)) => comparison.push(CompareJson {
                    index,
                    spec: word(ElementResult::Bits(b)),
                    tileiras: word(ElementResult::Bits(b)),
                    differ: false,
                }),
                Ok(Difference::Differ { spec, tileiras }) => comparison.push(CompareJson {
                    index,
                    spec: word(spec),
                    tileiras: word(tileiras),
                    differ: true,
                }),
                Err(e) => comparison.push(CompareJson {
                    index,
                    spec: format!("error: {e}"),
                    tileiras: format!("error: {e}"),
                    differ: false,
                }),
            }
        }
    }
    let differ = comparison.iter().filter(|c| c.differ).count();
    ExplainJson {
        lowering: low.spellings(),
        lowering_error,
        trace,
        comparison,
        differ,
    }
}

/// `gpucvt eval` on a Tile IR op: `operands` are the words giving the source tile.
pub fn eval(
    t: &TileInstr,
    operands: &[String],
    with_explain: bool,
    json: bool,
) -> Result<String, CliError> {
    let words: Vec<&str> = operands.iter().flat_map(|o| tile_words(o)).collect();
    let n = t.elements();
    let src = &t.op.src.value;
    if words.is_empty() {
        return fail(format!(
            "{} takes one operand, a {src} tile: give {n} value(s) (or one to splat), e.g. {}",
            t.op.kind.name(),
            if n == 1 {
                "0x3f800000"
            } else {
                "[1.0, 2.5, …]"
            }
        ));
    }
    let sbits = src.elem.bits();
    let (inputs, notes) = read_tile(&words, n, t.source_format(), sbits, "x")?;
    let results = t.eval_elements(&inputs)?;
    let dbits = t.op.dst.value.elem.bits();
    let report = EvalJson {
        instruction: t.op.to_text(),
        dialect: "tile",
        semantics: t.semantics.name(),
        target: t.target.to_string(),
        source_type: src.to_string(),
        result_type: t.op.dst.value.to_string(),
        operands: inputs
            .iter()
            .enumerate()
            .map(|(index, &x)| {
                let (bits, value, short) = describe(x, sbits, t.source_format());
                InJson {
                    index,
                    bits,
                    value,
                    short,
                }
            })
            .collect(),
        elements: outs(&results, dbits, t.result_format()),
        notes,
        explain: with_explain.then(|| explain(t, &inputs)),
    };
    if json {
        return to_json(&report);
    }
    Ok(text_report(&report, t))
}

fn text_report(r: &EvalJson, t: &TileInstr) -> String {
    let mut s = format!("{}\n", r.instruction);
    let target_note = match t.semantics {
        Semantics::Tileiras => format!(", target {}", r.target),
        Semantics::Spec => String::new(),
    };
    s.push_str(&format!("  semantics {}{target_note}\n", r.semantics));
    let sname = element_name(t.op.src.value.elem);
    let dname = element_name(t.op.dst.value.elem);
    for o in &r.operands {
        s.push_str(&format!("  x[{}] = {} ({})\n", o.index, o.short, o.bits));
    }
    for n in &r.notes {
        s.push_str(&format!("      note: {n}\n"));
    }
    let words: Vec<&str> = r
        .elements
        .iter()
        .map(|e| e.bits.as_deref().unwrap_or("undefined"))
        .collect();
    if words.len() == 1 {
        s.push_str(&format!("r = {}\n", words[0]));
    } else {
        s.push_str(&format!("r = [{}]\n", words.join(", ")));
    }
    for (e, o) in r.elements.iter().zip(&r.operands) {
        let field = format!("r[{}]", e.index);
        let bits = e.bits.as_deref().unwrap_or("undefined");
        let value = match e.undefined {
            Some(why) => format!("({why})"),
            None => e.short.clone(),
        };
        s.push_str(&format!(
            "  {field:<6} {dname:<8} {bits:<18} {value:<24} from {sname} {}\n",
            o.short
        ));
    }
    if let Some(x) = &r.explain {
        s.push('\n');
        match &x.lowering_error {
            Some(e) => s.push_str(&format!("lowering on {}: {e}\n", r.target)),
            None => {
                s.push_str(&format!(
                    "lowering (tileiras, {}): {}\n",
                    r.target,
                    x.lowering.join(" → ")
                ));
                for tr in &x.trace {
                    s.push_str(&format!(
                        "  x[{}] = {}\n",
                        tr.index, r.operands[tr.index].bits
                    ));
                    let w = tr.steps.iter().map(|st| st.step.len()).max().unwrap_or(0);
                    let b = tr.steps.iter().map(|st| st.bits.len()).max().unwrap_or(0);
                    for st in &tr.steps {
                        s.push_str(&format!(
                            "    {:<w$}  {:<b$}{}\n",
                            st.step,
                            st.bits,
                            st.short
                                .as_ref()
                                .map(|v| format!("  {v}"))
                                .unwrap_or_default()
                        ));
                    }
                }
                s.push_str(&format!(
                    "spec vs tileiras ({}): {}\n",
                    r.target,
                    if x.differ == 0 {
                        format!("the same on all {} element(s)", x.comparison.len())
                    } else {
                        format!(
                            "differ on {} of {} element(s)",
                            x.differ,
                            x.comparison.len()
                        )
                    }
                ));
                let w = x.comparison.iter().map(|c| c.spec.len()).max().unwrap_or(0);
                for c in &x.comparison {
                    let line = format!(
                        "  x[{}]  spec {:<w$}  tileiras {}{}",
                        c.index,
                        c.spec,
                        c.tileiras,
                        if c.differ { "  DIFFER" } else { "" }
                    );
                    s.push_str(line.trim_end());
                    s.push('\n');
                }
            }
        }
    }
    s
}

fn element_name(e: Element) -> String {
    e.num().map_or_else(|| "ptr".to_string(), |t| t.to_string())
}

/// Options of `gpucvt run` for a `.mlir` file.
pub struct RunArgs<'a> {
    /// The file's path as given.
    pub path: &'a str,
    /// The file's text.
    pub text: &'a str,
    /// `--entry`.
    pub entry: Option<&'a str>,
    /// `--arg NAME=VALUES`, already split.
    pub args: Vec<(String, String)>,
    /// `--semantics`.
    pub semantics: Semantics,
    /// `--target`.
    pub target: Option<Target>,
    /// `--tile-version`.
    pub tile_version: Option<SpecVersion>,
    /// `--json`.
    pub json: bool,
}

#[derive(Serialize)]
struct ValueJson {
    name: String,
    #[serde(rename = "type")]
    ty: String,
    /// `argument`, `constant`, the op text, or `--arg (for OP)` for a value supplied for a
    /// skipped op's result.
    from: String,
    elements: Vec<OutJson>,
    /// A skipped op's result that nothing supplied (then `elements` is empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    unknown: Option<UnknownJson>,
}

/// The type a statement's text states for its result: the type after the last `->`, or
/// after the last `:` (`%y = addf %a, %b : tile<4xf32>`).
fn stated_type(text: &str) -> Option<TileType> {
    let tail = match text.rfind("->") {
        Some(i) => &text[i + 2..],
        None => &text[text.rfind(':')? + 1..],
    };
    parse_tile_type(tail.trim()).ok()
}

#[derive(Serialize)]
struct RunJson {
    entry: String,
    semantics: &'static str,
    target: String,
    values: Vec<ValueJson>,
    notes: Vec<NoteJson>,
}

/// `gpucvt run FILE.mlir`.
pub fn run(a: &RunArgs) -> Result<Done, CliError> {
    let semantics = a.semantics;
    let version = a.tile_version.unwrap_or(SpecVersion::LATEST);
    let target = a.target.unwrap_or(DEFAULT_TARGET);
    let file = parse_file(a.text);
    let mut diags = file.diagnostics.clone();
    diags.extend(gpucvt::tile::check::check_file(&file, version));
    diags.retain(|d| d.severity == gpucvt::diag::Severity::Error);
    if !diags.is_empty() {
        diags.sort_by_key(|d| (d.span.line, d.span.col));
        diags.dedup();
        let mut err = crate::output::render_diagnostics(a.path, a.text, &diags, "");
        err.push_str(&format!(
            "{}: the file has errors (see gpucvt check); nothing was run\n",
            a.path
        ));
        return Ok(Done {
            out: String::new(),
            err,
            code: 1,
        });
    }
    let func = pick_entry(&file, a.entry)?;
    // Signedness of each name, from the ops that read or write it, for printing integers.
    let mut signed: HashMap<&str, bool> = HashMap::new();
    for s in &func.body {
        if let Op::Convert(c) = &s.op {
            let sg = c.signedness == Some(Signedness::Signed);
            if matches!(c.kind, OpKind::ItoF | OpKind::ExtI) {
                if let Some(o) = &c.operand {
                    signed.insert(o.value.as_str(), sg);
                }
            }
            if matches!(c.kind, OpKind::FtoI | OpKind::ExtI) {
                if let Some(r) = s.results.first() {
                    signed.insert(r.value.as_str(), sg);
                }
            }
        }
    }
    // Each name an op of the body defines: the statement, and the type it states.
    let defined: HashMap<&str, &gpucvt::tile::parse::Stmt> = func
        .body
        .iter()
        .flat_map(|s| s.results.iter().map(move |r| (r.value.as_str(), s)))
        .collect();
    // The arguments' values, and values for the results of other ops.
    let mut given: HashMap<String, String> = HashMap::new();
    for (name, value) in &a.args {
        let key = name.trim().trim_start_matches('%').to_string();
        if !func.args.iter().any(|x| x.name == key) && !defined.contains_key(key.as_str()) {
            let names: Vec<String> = func.args.iter().map(|x| format!("%{}", x.name)).collect();
            return fail(format!(
                "--arg {name}: @{} has no argument %{key} and no op defines it; its arguments: {}",
                func.name,
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ));
        }
        if given.insert(key.clone(), value.clone()).is_some() {
            return fail(format!("--arg %{key} is given twice"));
        }
    }
    let mut args = Vec::new();
    let mut notes = Vec::new();
    for x in &func.args {
        let what = format!("%{}", x.name);
        let Some(text) = given.get(&x.name) else {
            return fail(format!(
                "@{} needs a value for {what} ({}): give --arg {what}=…",
                func.name, x.ty
            ));
        };
        let words: Vec<&str> = tile_words(text).collect();
        if words.is_empty() {
            return fail(format!("--arg {what}: no value given"));
        }
        let sg = signed.get(x.name.as_str()).copied().unwrap_or(false);
        let fmt =
            x.ty.elem
                .num()
                .map(|t| t.format(if sg { Some(Signedness::Signed) } else { None }));
        let (v, n) = read_tile(&words, x.ty.num_elements(), fmt, x.ty.elem.bits(), &what)?;
        args.push(v);
        notes.extend(n.into_iter().map(|m| NoteJson {
            line: 0,
            column: 0,
            severity: "warning",
            message: m,
            rule: "tile.run-inexact",
        }));
    }
    // Values for names the body defines: read at the type a conversion reads them at, else
    // the type their op states.
    let mut supplied = Vec::new();
    for s in &func.body {
        for r in &s.results {
            let Some(text) = given.get(&r.value) else {
                continue;
            };
            let what = format!("%{}", r.value);
            let ty = match &s.op {
                Op::Constant(c) => Some(c.ty.clone()),
                Op::Convert(c) => Some(c.dst.value.clone()),
                _ => read_type(func, &r.value)
                    .or_else(|| a.text.get(s.span.start..s.span.end).and_then(stated_type)),
            };
            let Some(ty) = ty else {
                return fail(format!(
                    "--arg {what}: the type of {what} is not known (no conversion reads it and its op states none)"
                ));
            };
            if ty.num_elements() > MAX_SHOWN {
                return fail(format!(
                    "--arg {what}: the tile has more than {MAX_SHOWN} elements; gpucvt runs smaller tiles"
                ));
            }
            let words: Vec<&str> = tile_words(text).collect();
            if words.is_empty() {
                return fail(format!("--arg {what}: no value given"));
            }
            let sg = signed.get(r.value.as_str()).copied().unwrap_or(false);
            let fmt = ty
                .elem
                .num()
                .map(|t| t.format(if sg { Some(Signedness::Signed) } else { None }));
            let (v, n) = read_tile(&words, ty.num_elements(), fmt, ty.elem.bits(), &what)?;
            notes.extend(n.into_iter().map(|m| NoteJson {
                line: 0,
                column: 0,
                severity: "warning",
                message: m,
                rule: "tile.run-inexact",
            }));
            supplied.push(Given {
                name: r.value.clone(),
                ty,
                elements: v,
            });
        }
    }
    for s in &func.body {
        let big = match &s.op {
            Op::Constant(c) => c.ty.num_elements() > MAX_SHOWN,
            Op::Convert(c) => c.src.value.num_elements() > MAX_SHOWN,
            _ => false,
        };
        if big {
            return fail(format!(
                "{}:{}:{}: the tile has more than {MAX_SHOWN} elements; gpucvt runs smaller tiles",
                a.path, s.span.line, s.span.col
            ));
        }
    }
    let opts = RunOptions { semantics, target };
    let run = match run_entry_given(&file, a.text, &func.name, &args, &supplied, &opts) {
        Ok(r) => r,
        Err(EvalError::Stopped(d)) => {
            return Ok(Done {
                out: String::new(),
                err: format!(
                    "{}{}: execution stopped\n",
                    d.render(a.path, a.text),
                    a.path
                ),
                code: 1,
            });
        }
        Err(e) => {
            return fail(format!(
                "@{}: {}",
                func.name,
                e.to_string().replace('\n', " ")
            ))
        }
    };
    notes.extend(run.notes.iter().map(NoteJson::of));
    let from: HashMap<&str, String> = func
        .body
        .iter()
        .flat_map(|s| {
            let what = match &s.op {
                Op::Constant(_) => "constant".to_string(),
                Op::Convert(c) => c.to_text(),
                Op::Other(name) => format!("--arg (for {name})"),
                Op::Return(_) => String::new(),
            };
            s.results
                .iter()
                .map(move |r| (r.value.as_str(), what.clone()))
        })
        .collect();
    let mut vals: Vec<ValueJson> = run
        .values
        .iter()
        .map(|v| {
            let sg = signed.get(v.name.as_str()).copied().unwrap_or(false);
            let fmt =
                v.ty.elem
                    .num()
                    .map(|t| t.format(if sg { Some(Signedness::Signed) } else { None }));
            ValueJson {
                name: format!("%{}", v.name),
                ty: v.ty.to_string(),
                from: from
                    .get(v.name.as_str())
                    .cloned()
                    .unwrap_or_else(|| "argument".to_string()),
                elements: outs(&v.elements, v.ty.elem.bits(), fmt),
                unknown: None,
            }
        })
        .collect();
    for u in &run.unknown {
        let name = u.name.trim_start_matches('%');
        let ty = defined
            .get(name)
            .and_then(|s| a.text.get(s.span.start..s.span.end))
            .and_then(stated_type)
            .map_or_else(|| "?".to_string(), |t| t.to_string());
        vals.push(ValueJson {
            name: u.name.clone(),
            ty,
            from: u.opcode().to_string(),
            elements: Vec::new(),
            unknown: Some(UnknownJson::of(u)),
        });
    }
    if a.json {
        return to_json(&RunJson {
            entry: func.name.clone(),
            semantics: semantics.name(),
            target: target.to_string(),
            values: vals,
            notes,
        })
        .map(Done::ok);
    }
    let computed = vals
        .iter()
        .filter(|v| v.from != "argument" && v.unknown.is_none())
        .count();
    let undefined: usize = vals
        .iter()
        .map(|v| v.elements.iter().filter(|e| e.undefined.is_some()).count())
        .sum();
    let mut out = format!(
        "entry @{}: {} value(s) computed, semantics {}{}{}\n",
        func.name,
        computed,
        semantics.name(),
        match semantics {
            Semantics::Tileiras => format!(" (target {target})"),
            Semantics::Spec => String::new(),
        },
        if undefined > 0 {
            format!(", {undefined} undefined element(s)")
        } else {
            String::new()
        }
    );
    for v in &vals {
        if let Some(u) = &v.unknown {
            out.push_str(&format!(
                "\n{} : {}  ({}, not evaluated)\nunknown: written by `{}` at {}:{}; give it with {}\n",
                v.name, v.ty, v.from, u.instruction, u.line, u.column, u.supply
            ));
            continue;
        }
        out.push_str(&format!("\n{} : {}  ({})\n", v.name, v.ty, v.from));
        let rows: Vec<Vec<String>> = v
            .elements
            .iter()
            .map(|e| {
                vec![
                    e.index.to_string(),
                    e.bits.clone().unwrap_or_else(|| "undefined".to_string()),
                    e.short.clone(),
                ]
            })
            .collect();
        out.push_str(&table(&["elt", "bits", "value"], &rows));
    }
    if !notes.is_empty() {
        out.push_str("\nnotes:\n");
        for n in &notes {
            out.push_str(&n.line_text(a.path));
        }
    }
    Ok(Done::ok(out))
}

fn pick_entry<'f>(
    file: &'f TileFile,
    entry: Option<&str>,
) -> Result<&'f gpucvt::tile::parse::Function, CliError> {
    let all: Vec<&gpucvt::tile::parse::Function> = file
        .modules
        .iter()
        .flat_map(|m| m.functions.iter())
        .collect();
    let names = || {
        all.iter()
            .map(|f| format!("@{}", f.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match entry {
        Some(e) => {
            let e = e.strip_prefix('@').unwrap_or(e);
            all.iter().find(|f| f.name == e).copied().ok_or_else(|| {
                CliError(format!(
                    "--entry {e}: no entry of that name; the file has: {}",
                    if all.is_empty() {
                        "none".to_string()
                    } else {
                        names()
                    }
                ))
            })
        }
        None => match all.as_slice() {
            [one] => Ok(one),
            [] => fail("the file has no entry to run"),
            _ => fail(format!(
                "the file has several entries ({}): choose one with --entry NAME",
                names()
            )),
        },
    }
}
