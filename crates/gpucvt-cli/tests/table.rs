//! `gpucvt table`: a snapshot of the printed PTX tables, and a cell-by-cell comparison of the
//! tables computed from the legality rules with the ISA's Tables 15 and 16 as seed 002 gives
//! them (a copy is in `tests/data/`). The differences must be exactly the ones
//! `ptx-cvt.md` §6.0 lists, where ptxas 13.5 accepts more than the table says.

use crate::common::run as gpucvt;

use gpucvt::ptx::table::{method_table, TABLE_15_TYPES, TABLE_16_TYPES};
use gpucvt::ptx::PtxType;
use std::collections::BTreeMap;

const SEED: &str = include_str!("data/seed002_ptx_cvt_tables.txt");

/// (source, destination) → cell.
type Cells = BTreeMap<(String, String), String>;

/// One table of the seed: (source, destination) → cell, footnote marks removed.
fn seed_table(section: &str) -> Cells {
    let clean = |c: &str| c.trim().trim_matches('*').trim().to_string();
    let rows: Vec<Vec<String>> = section
        .lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| {
            l.trim()
                .trim_matches('|')
                .split('|')
                .map(clean)
                .collect::<Vec<_>>()
        })
        .collect();
    let is_type = |c: &String| PtxType::from_name(c).is_some();
    let header = rows
        .iter()
        .find(|r| !r.is_empty() && r.iter().all(is_type))
        .expect("a header row of type names")
        .clone();
    let mut out = BTreeMap::new();
    for r in &rows {
        let mut cells: &[String] = r;
        if cells.first().map(String::as_str) == Some("Source Format") {
            cells = &cells[1..];
        }
        let Some((src, vals)) = cells.split_first() else {
            continue;
        };
        if !is_type(src) || vals.len() != header.len() || *r == header {
            continue;
        }
        for (dst, v) in header.iter().zip(vals) {
            let v = v.trim_end_matches(|c: char| c.is_ascii_digit()).to_string();
            out.insert((src.clone(), dst.clone()), v);
        }
    }
    out
}

fn seed_tables() -> (Cells, Cells) {
    let at = SEED.find("Table 16 Convert").expect("Table 16 in the seed");
    (seed_table(&SEED[..at]), seed_table(&SEED[at..]))
}

/// (source, destination, seed cell, computed cell) of every cell that differs.
fn differences(seed: &Cells, types: &[PtxType]) -> Vec<(String, String, String, String)> {
    let computed = method_table(types, types, None);
    let mut out = Vec::new();
    let mut compared = 0;
    for (i, s) in types.iter().enumerate() {
        for (j, d) in types.iter().enumerate() {
            let key = (s.name().to_string(), d.name().to_string());
            // The implementation's extra formats (ue5m3, s2f6) are not in the seed.
            let Some(want) = seed.get(&key) else { continue };
            compared += 1;
            if want != computed[i][j] {
                out.push((key.0, key.1, want.clone(), computed[i][j].to_string()));
            }
        }
    }
    assert!(compared > 0);
    out
}

#[test]
fn seed_tables_parse_completely() {
    let (t15, t16) = seed_tables();
    assert_eq!(t15.len(), 13 * 13);
    assert_eq!(t16.len(), 9 * 9);
    assert_eq!(t15[&("s16".into(), "s8".into())], "chop");
    assert_eq!(t16[&("ue8m0".into(), "bf16".into())], "f2f");
}

#[test]
fn table_15_matches_the_isa_exactly() {
    let (t15, _) = seed_tables();
    assert_eq!(differences(&t15, &TABLE_15_TYPES), vec![]);
}

#[test]
fn table_16_differs_exactly_where_ptx_cvt_md_6_0_says() {
    let (_, t16) = seed_tables();
    // ptx-cvt.md §6.0: ptxas 13.5 accepts these although Table 16 has `–`:
    // - f16 → e2m3 / e3m2 / e2m1 (`.{e2m3x2,e3m2x2,e2m1x2}.f16x2`, PTX 9.1);
    // - bf16 → e4m3 / e5m2 / e2m3 / e3m2 / e2m1 (a `.bf16x2` source, PTX 9.1);
    // - e4m3 … e2m1 → bf16 (`.bf16x2.<narrow>x2`, since PTX 9.2).
    let mut expected: Vec<(String, String, String, String)> = Vec::new();
    let mut add = |s: &str, d: &str| {
        expected.push((s.into(), d.into(), "–".into(), "f2f".into()));
    };
    for d in ["e2m3", "e3m2", "e2m1"] {
        add("f16", d);
    }
    for d in ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1"] {
        add("bf16", d);
    }
    for s in ["e4m3", "e5m2", "e2m3", "e3m2", "e2m1"] {
        add(s, "bf16");
    }
    expected.sort();
    let mut got = differences(&t16, &TABLE_16_TYPES);
    got.sort();
    assert_eq!(got, expected);
}

#[test]
fn table_ptx_snapshot() {
    let (code, out, err) = gpucvt(&["table", "ptx"]);
    assert_eq!(code, 0, "{err}");
    insta::assert_snapshot!("table_ptx", out);
}

#[test]
fn table_ptx_on_a_target() {
    // sm_80 has no FP8: the alternate-format rows of Table 16 are empty but for f16/f32/bf16.
    let (code, out, _) = gpucvt(&["table", "ptx", "--target", "sm_80"]);
    assert_eq!(code, 0);
    let row = out
        .lines()
        .rev()
        .find(|l| l.starts_with("e4m3 "))
        .expect("an e4m3 row");
    assert!(row.split_whitespace().skip(1).all(|c| c == "–"), "{row}");
    let (code, _, err) = gpucvt(&["table", "ptx", "--target", "sm_1"]);
    assert_eq!(code, 2);
    assert!(
        err.starts_with("error: invalid value 'sm_1' for '--target <SM>': "),
        "{err}"
    );
}

#[test]
fn table_visa_lists_every_pair() {
    let (code, out, _) = gpucvt(&["table", "visa"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 16 * 16);
    assert!(out.lines().any(|l| l.starts_with("B <- DF: two movs")));
    assert!(out.lines().any(|l| l.starts_with("V <- D: illegal")));
}
