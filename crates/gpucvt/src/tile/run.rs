//! Running a Tile IR entry: its conversion ops in order, over the values given for its
//! arguments (and, for values an unmodelled op defines, given with `--arg`), each evaluated by
//! [`super::eval`].

use super::eval::{eval_op, mask, ElementResult, EvalError, Semantics, DEFAULT_TARGET};
use super::parse::{Function, Op, TileFile};
use super::types::TileType;
use crate::diag::Diagnostic;
use crate::ptx::Target;
use crate::unknown::{skipped_note, Supply, Unknown};
use std::collections::HashMap;

/// Options of [`run_entry`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// The semantics.
    pub semantics: Semantics,
    /// The PTX target of the `tileiras` semantics.
    pub target: Target,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            semantics: Semantics::Tileiras,
            target: DEFAULT_TARGET,
        }
    }
}

/// The value of one SSA name after running an entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueResult {
    /// The name without `%`.
    pub name: String,
    /// Its type.
    pub ty: TileType,
    /// Its elements, row-major.
    pub elements: Vec<ElementResult>,
}

/// A value supplied for an SSA name that a skipped op defines (`--arg %y=…` for `%y = addf
/// …`): it stands in for the op's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Given {
    /// The name without `%`.
    pub name: String,
    /// Its type (see [`read_type`]).
    pub ty: TileType,
    /// Its elements, row-major (one element splats).
    pub elements: Vec<u64>,
}

/// What [`run_entry_given`] computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryRun {
    /// The values in definition order: arguments, then constants, conversion results and
    /// supplied ([`Given`]) values.
    pub values: Vec<ValueResult>,
    /// The values skipped ops defined and nothing supplied, in order ([`Unknown::name`] with
    /// its `%`).
    pub unknown: Vec<Unknown>,
    /// A note per skipped op (rule `tile.run-skipped`) and per supplied value no skipped op
    /// defines (`tile.run-unused`: a conversion or constant computes it, or nothing does).
    pub notes: Vec<Diagnostic>,
}

/// The type a conversion of `f` reads `name` at (its source type): what a value supplied
/// for `name` is read as.
pub fn read_type(f: &Function, name: &str) -> Option<TileType> {
    let name = name.strip_prefix('%').unwrap_or(name);
    f.body.iter().find_map(|s| match &s.op {
        Op::Convert(c) if c.operand.as_ref().is_some_and(|o| o.value == name) => {
            Some(c.src.value.clone())
        }
        _ => None,
    })
}

/// A tile's elements from one element list (one element splats).
fn tile_elements(name: &str, ty: &TileType, given: &[u64]) -> Result<Vec<u64>, EvalError> {
    let n = ty.num_elements();
    let els: Vec<u64> = if given.len() as u64 == n {
        given.to_vec()
    } else if given.len() == 1 {
        vec![given[0]; n as usize]
    } else {
        return Err(EvalError::ArgLength {
            name: name.to_string(),
            ty: ty.to_string(),
            expected: n,
            got: given.len(),
        });
    };
    let bits = ty.elem.bits();
    if let Some((index, &value)) = els.iter().enumerate().find(|(_, &v)| v & !mask(bits) != 0) {
        return Err(EvalError::InputTooWide { index, value, bits });
    }
    Ok(els)
}

/// Runs the entry (or `testing$func`) `entry` of a file: arguments first (one element list
/// per argument; a single element is splatted), then every constant and conversion in order.
/// Skipped ops produce unknown values; a conversion that reads one is an error
/// ([`EvalError::Stopped`]). An undefined input element gives an undefined result element.
/// Returns the values in definition order (arguments first). [`run_entry_given`] also takes
/// values for skipped ops' results.
pub fn run_entry(
    file: &TileFile,
    entry: &str,
    args: &[Vec<u64>],
    options: &RunOptions,
) -> Result<Vec<ValueResult>, EvalError> {
    run_entry_given(file, "", entry, args, &[], options).map(|r| r.values)
}

/// [`run_entry`] under the rule of [`crate::unknown`]: each op other than a constant or a
/// conversion is skipped with a note, and its results are unknown unless `given` supplies
/// them; a conversion that reads an unknown value stops with an error naming the op and
/// `--arg`. A value given for a name that a constant or conversion defines is not used (the
/// modelled op computes it; a note says so). `source` is the file's text, to quote skipped
/// ops (`""` quotes them as `%y = addf`).
///
/// ```
/// use gpucvt::tile::{eval::EvalError, parse::parse_file, run::{run_entry_given, Given, RunOptions}};
/// use gpucvt::tile::types::{ElemType, TileType};
/// let src = "cuda_tile.module @m {\n  entry @k(%x: tile<f32>) {\n    %y = addf %x, %x : tile<f32>\n    %h = ftof %y : tile<f32> -> tile<f16>\n    return\n  }\n}\n";
/// let file = parse_file(src);
/// let opts = RunOptions::default();
/// let e = run_entry_given(&file, src, "k", &[vec![0x3f80_0000]], &[], &opts).unwrap_err();
/// let EvalError::Stopped(d) = e else { panic!() };
/// assert!(d.message.contains("`%y = addf %x, %x : tile<f32>` at 3:5"));
/// assert!(d.message.ends_with("--arg %y=…"));
/// let y = Given { name: "y".into(), ty: TileType::new(&[], ElemType::F32), elements: vec![0x4000_0000] };
/// let r = run_entry_given(&file, src, "k", &[vec![0x3f80_0000]], &[y], &opts).unwrap();
/// assert_eq!(r.values.last().unwrap().elements[0].bits(), Some(0x4000)); // 2.0 in f16
/// ```
///
/// # Errors
/// As [`run_entry`]; a given value of the wrong length or width as an argument would be.
pub fn run_entry_given(
    file: &TileFile,
    source: &str,
    entry: &str,
    args: &[Vec<u64>],
    given: &[Given],
    options: &RunOptions,
) -> Result<EntryRun, EvalError> {
    let entry = entry.strip_prefix('@').unwrap_or(entry);
    let f = file
        .modules
        .iter()
        .flat_map(|m| m.functions.iter())
        .find(|f| f.name == entry)
        .ok_or_else(|| EvalError::NoEntry(entry.to_string()))?;
    if f.args.len() != args.len() {
        return Err(EvalError::ArgCount {
            entry: entry.to_string(),
            expected: f.args.len(),
            got: args.len(),
        });
    }
    let mut out: Vec<ValueResult> = Vec::new();
    let mut env: HashMap<String, usize> = HashMap::new();
    let mut unknown: HashMap<String, Unknown> = HashMap::new();
    let mut unknown_order: Vec<String> = Vec::new();
    let mut notes = Vec::new();
    let mut used = vec![false; given.len()];
    for (a, els) in f.args.iter().zip(args) {
        let els = tile_elements(&a.name, &a.ty, els)?;
        env.insert(a.name.clone(), out.len());
        out.push(ValueResult {
            name: a.name.clone(),
            ty: a.ty.clone(),
            elements: els.into_iter().map(ElementResult::Bits).collect(),
        });
    }
    for s in &f.body {
        if let Op::Other(op_name) = &s.op {
            let results: Vec<String> = s.results.iter().map(|r| format!("%{}", r.value)).collect();
            let text = source
                .get(s.span.start..s.span.end)
                .filter(|t| !t.trim().is_empty())
                .map_or_else(
                    || {
                        if results.is_empty() {
                            op_name.clone()
                        } else {
                            format!("{} = {op_name}", results.join(", "))
                        }
                    },
                    str::to_string,
                );
            let (mut now_unknown, mut kept) = (Vec::new(), Vec::new());
            for r in &s.results {
                env.remove(&r.value);
                let shown = format!("%{}", r.value);
                match given.iter().position(|g| g.name == r.value) {
                    Some(k) => {
                        used[k] = true;
                        let g = &given[k];
                        let els = tile_elements(&g.name, &g.ty, &g.elements)?;
                        unknown.remove(&r.value);
                        env.insert(r.value.clone(), out.len());
                        out.push(ValueResult {
                            name: r.value.clone(),
                            ty: g.ty.clone(),
                            elements: els.into_iter().map(ElementResult::Bits).collect(),
                        });
                        kept.push(shown);
                    }
                    None => {
                        unknown.insert(
                            r.value.clone(),
                            Unknown::new(&text, s.span, shown.clone(), Supply::Arg),
                        );
                        unknown_order.retain(|n| *n != r.value);
                        unknown_order.push(r.value.clone());
                        now_unknown.push(shown);
                    }
                }
            }
            notes.push(skipped_note(
                "tile.run-skipped",
                &format!("{op_name} not evaluated: only constants and conversion ops run"),
                &now_unknown,
                &kept,
                &[],
                Supply::Arg,
                s.span,
            ));
            continue;
        }
        let Some(res) = s.results.first() else {
            continue;
        };
        if let Some(k) = given.iter().position(|g| g.name == res.value) {
            used[k] = true;
            notes.push(Diagnostic::warning(
                "tile.run-unused",
                format!(
                    "--arg %{} is not used: this op computes %{}",
                    res.value, res.value
                ),
                s.span,
            ));
        }
        let value = match &s.op {
            Op::Constant(c) => {
                let n = c.ty.num_elements() as usize;
                ValueResult {
                    name: res.value.clone(),
                    ty: c.ty.clone(),
                    elements: (0..n).map(|i| ElementResult::Bits(c.element(i))).collect(),
                }
            }
            Op::Convert(c) => {
                let name = c
                    .operand
                    .as_ref()
                    .map(|o| o.value.clone())
                    .unwrap_or_default();
                if let Some(u) = unknown.get(&name) {
                    let at = c.operand.as_ref().map_or(s.span, |o| o.span);
                    return Err(EvalError::Stopped(u.read_error(
                        "tile.run-unknown",
                        &format!("%{name}"),
                        at,
                    )));
                }
                let idx = *env
                    .get(&name)
                    .ok_or_else(|| EvalError::UnknownValue(name.clone()))?;
                let input = &out[idx];
                if input.ty != c.src.value {
                    return Err(EvalError::TypeMismatch {
                        name,
                        actual: input.ty.to_string(),
                        expected: c.src.value.to_string(),
                    });
                }
                let defined: Vec<u64> = input.elements.iter().filter_map(|e| e.bits()).collect();
                let results = eval_op(c, options.semantics, options.target, &defined)?;
                let mut it = results.into_iter();
                let elements = input
                    .elements
                    .iter()
                    .map(|e| match e {
                        ElementResult::Bits(_) => it
                            .next()
                            .unwrap_or(ElementResult::Undefined("internal: missing result")),
                        ElementResult::Undefined(_) => {
                            ElementResult::Undefined("the operand element is undefined")
                        }
                    })
                    .collect();
                ValueResult {
                    name: res.value.clone(),
                    ty: c.dst.value.clone(),
                    elements,
                }
            }
            Op::Return(_) | Op::Other(_) => continue,
        };
        unknown.remove(&value.name);
        env.insert(value.name.clone(), out.len());
        out.push(value);
    }
    for (g, _) in given.iter().zip(&used).filter(|(_, u)| !**u) {
        notes.push(Diagnostic::warning(
            "tile.run-unused",
            format!(
                "--arg %{} is not used: no op of @{} defines it",
                g.name, f.name
            ),
            f.span,
        ));
    }
    let unknown = unknown_order
        .iter()
        .filter_map(|n| unknown.get(n).cloned())
        .collect();
    Ok(EntryRun {
        values: out,
        unknown,
        notes,
    })
}
