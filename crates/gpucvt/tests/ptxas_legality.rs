//! gpucvt's legality checker against ptxas 13.5's verdicts on ~450,000 `cvt`/`cvt.pack`
//! instructions (`tests/data/ptxas-cvt-legality.tsv.gz`, see `/work/shared/data/README.md`):
//! every row must be accepted exactly when ptxas accepts it, and where a row gives the smallest
//! accepted `.version`, gpucvt must accept it at that version and reject it one version below
//! (when that is still at least the target's own minimum).

use std::collections::BTreeMap;
use std::io::Read;

use gpucvt::ptx::check::check;
use gpucvt::ptx::parse::parse_instruction;
use gpucvt::ptx::target::{PtxVersion, Target};
use gpucvt::ptx::types::{PtxType, RegType};

const DATA: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/ptxas-cvt-legality.tsv.gz"
);

/// The sweep names registers `%<type>_<role>`: `%f16x2_d` is a `.reg .f16x2`.
fn regs(name: &str) -> Option<RegType> {
    let ty = name.strip_prefix('%')?.split('_').next()?;
    PtxType::from_name(ty).map(RegType::scalar)
}

#[derive(Default)]
struct Tally {
    rows: usize,
    mismatches: usize,
    version_rows: usize,
    version_mismatches: usize,
}

#[test]
fn every_row_matches_ptxas() {
    let mut gz = Vec::new();
    std::fs::File::open(DATA)
        .expect("test data present")
        .read_to_end(&mut gz)
        .expect("read test data");
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut text)
        .expect("gunzip test data");

    let mut tally: BTreeMap<String, Tally> = BTreeMap::new();
    let mut shown = 0;
    let latest = PtxVersion::new(9, 5);
    let mut lines = text.lines();
    let header = lines.next().expect("header");
    assert!(header.starts_with("instruction\ttarget\taccepted"));
    for line in lines {
        let cols: Vec<&str> = line.split('\t').collect();
        assert!(cols.len() >= 5, "bad row: {line}");
        let (instr, target, accepted, error, family) =
            (cols[0], cols[1], cols[2], cols[3], cols[4]);
        let min_version = cols.get(5).copied().unwrap_or("");
        let target: Target = target.parse().expect("target");
        let want = accepted == "yes";
        let t = tally.entry(family.to_string()).or_default();
        t.rows += 1;

        let verdict = |v: PtxVersion| -> (bool, String) {
            match parse_instruction(instr) {
                Ok(i) => {
                    let d = check(&i, &regs, target, v);
                    let msg = d
                        .iter()
                        .map(|d| format!("[{}] {}", d.rule, d.message))
                        .collect::<Vec<_>>()
                        .join(" | ");
                    (d.is_empty(), msg)
                }
                Err(d) => (
                    false,
                    d.iter()
                        .map(|d| format!("parse [{}] {}", d.rule, d.message))
                        .collect::<Vec<_>>()
                        .join(" | "),
                ),
            }
        };

        let (got, msg) = verdict(latest);
        if got != want {
            t.mismatches += 1;
            if shown < 50 {
                shown += 1;
                eprintln!(
                    "MISMATCH {family} {target}: {instr}\n    ptxas: {} {error}\n    gpucvt: {}",
                    accepted, msg
                );
            }
        }
        if !min_version.is_empty() {
            let mv: PtxVersion = min_version.parse().expect("min version");
            t.version_rows += 1;
            let (at, msg_at) = verdict(mv);
            let below = mv.prev().filter(|p| *p >= target.min_version());
            let (under, msg_under) = match below {
                Some(p) => verdict(p),
                None => (false, String::new()),
            };
            if !at || under {
                t.version_mismatches += 1;
                if shown < 50 {
                    shown += 1;
                    eprintln!(
                        "VERSION MISMATCH {family} {target}: {instr}\n    ptxas: min .version {mv}\n    gpucvt at {mv}: {}  {msg_at}\n    gpucvt below: {}  {msg_under}",
                        if at { "accepted" } else { "rejected" },
                        if under { "accepted" } else { "rejected" },
                    );
                }
            }
        }
    }
    let mut total = 0;
    eprintln!("family      rows  mismatches  version-rows  version-mismatches");
    for (family, t) in &tally {
        eprintln!(
            "{family:<8} {:>7} {:>11} {:>13} {:>19}",
            t.rows, t.mismatches, t.version_rows, t.version_mismatches
        );
        total += t.mismatches + t.version_mismatches;
    }
    assert_eq!(
        total, 0,
        "{total} rows disagree with ptxas (first 50 listed above)"
    );
}
