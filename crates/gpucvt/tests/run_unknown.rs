//! `run` in every dialect under one rule for instructions gpucvt does not model
//! (`gpucvt::unknown`): a skipped instruction gives a note, what it writes is unknown, and a
//! conversion that reads an unknown value stops with an error naming the instruction and the
//! option that supplies the value.

use gpucvt::diag::Severity;
use gpucvt::ptx::parse::parse_file;
use gpucvt::ptx::run::{run, RunError, RunInput, RunOptions};
use gpucvt::tile::eval::EvalError;
use gpucvt::tile::run::{run_entry, run_entry_given, Given, RunOptions as TileOptions};
use gpucvt::tile::types::{ElemType, TileType};
use gpucvt::visa::parse::parse as parse_visa;
use gpucvt::visa::run::{execute, initial_value, ExecOptions};

const PTX: &str = "\
.version 8.6
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .f32 %f<3>;
    .reg .b16 %h;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [p];
    ld.global.f32 %f1, [%rd1];
    cvt.rn.f16.f32 %h, %f1;
    ret;
}
";

fn ptx(sets: &[(&str, &str)]) -> Result<gpucvt::ptx::run::RunResult, RunError> {
    let inputs: Vec<RunInput> = sets
        .iter()
        .map(|(n, v)| RunInput {
            name: n.to_string(),
            value: v.to_string(),
        })
        .collect();
    run(&parse_file(PTX), &inputs, &RunOptions::default())
}

#[test]
fn ptx_cvt_of_a_loaded_register_names_the_load() {
    let Err(RunError::Stopped(d)) = ptx(&[]) else {
        panic!("expected a stop")
    };
    assert_eq!(d.rule, "ptx.run-unknown");
    assert_eq!((d.span.line, d.span.col), (11, 24), "at the cvt's operand");
    assert!(
        d.message
            .starts_with("%f1 is unknown: `ld.global.f32 %f1, [%rd1]` at 10:5"),
        "{}",
        d.message
    );
    assert!(d.message.ends_with("--set %f1=…"), "{}", d.message);

    // With --set the load keeps the value and the cvt runs: 1.5 -> f16 0x3e00.
    let r = ptx(&[("%f1", "1.5")]).unwrap();
    assert_eq!(r.get("%h"), Some(0x3e00));
    // %rd1 is never read by a conversion: it stays unknown, listed as such, no error.
    let rd1 = r.written.iter().find(|v| v.name == "%rd1").unwrap();
    assert_eq!(rd1.describe(), "unknown (ld.param.u64 at 9:5)");
    assert_eq!(r.get("%rd1"), None);
    let skipped: Vec<&str> = r
        .notes
        .iter()
        .filter(|n| n.rule == "ptx.run-skipped")
        .map(|n| n.message.as_str())
        .collect();
    assert_eq!(
        skipped,
        [
            "ld.param.u64 not executed: only mov, cvt and cvt.pack run; %rd1 is unknown",
            "ld.global.f32 not executed: only mov, cvt and cvt.pack run; %f1 keeps the --set value"
        ]
    );
}

const VISA_READ: &str = "\
.decl V32 v_type=G type=f num_elts=16
.decl V33 v_type=G type=f num_elts=16
.decl H v_type=G type=hf num_elts=16
add (M1, 16) V33(0,0)<1> V32(0,0)<1;1,0> 0x3f800000:f
mov (M1, 16) H(0,0)<1> V33(0,0)<1;1,0>
ret (M1, 1)
";

#[test]
fn visa_mov_of_an_unmodelled_result_stops_instead_of_reading_zeros() {
    let (k, d) = parse_visa(VISA_READ);
    assert!(d.is_empty(), "{d:?}");
    let e = execute(&k, &[], &ExecOptions::default()).unwrap_err();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].rule, "visa.run-unknown");
    assert_eq!(e[0].severity, Severity::Error);
    assert_eq!(
        (e[0].span.line, e[0].span.col),
        (5, 24),
        "at the mov's source"
    );
    assert!(
        e[0].message.starts_with(
            "element 0 of V33 is unknown: `add (M1, 16) V33(0,0)<1> V32(0,0)<1;1,0> 0x3f800000:f` at 4:1"
        ),
        "{}",
        e[0].message
    );
    assert!(e[0].message.ends_with("--set V33=…"), "{}", e[0].message);

    // Given only element 0 of V33, the mov stops at element 1.
    let init = vec![initial_value(&k, "V33", "2.0").unwrap()];
    let e = execute(&k, &init, &ExecOptions::default()).unwrap_err();
    assert!(e[0].message.starts_with("element 1 of V33 is unknown"));
    // Given V33, the add keeps it and the mov converts it: 2.0 -> hf 0x4000.
    let init = vec![initial_value(&k, "V33", &["2.0"; 16].join(",")).unwrap()];
    let r = execute(&k, &init, &ExecOptions::default()).unwrap();
    assert_eq!(r.get("H").unwrap()[0], 0x4000);
    assert!(r.warnings.iter().any(|w| w.rule == "visa.run-skipped"
        && w.message == "add not executed: only mov runs; V33 keeps the --set value"));
}

#[test]
fn visa_unread_unmodelled_results_are_unknown_elements_with_a_note() {
    let text = "\
.decl V32 v_type=G type=f num_elts=16
.decl V33 v_type=G type=f num_elts=16 alias=<V32, 0>
.decl M v_type=G type=d num_elts=16
.decl H v_type=G type=hf num_elts=16
.decl P1 v_type=P num_elts=16
add (M1, 8) M(0,0)<1> V32(0,0)<1;1,0> 0x1:d
cmp.lt (M1, 16) P1 V32(0,0)<1;1,0> 0x0:f
raw_sends.15.1.0.1 (M1, 16) 0x0:ud 0x2000000:ud V32.0 %null.0 V33.0
mov (M1, 16) H(0,0)<1> V32(0,0)<1;1,0>
";
    let (k, d) = parse_visa(text);
    assert!(d.is_empty(), "{d:?}");
    // The send writes V33, an alias of V32: the mov's reads of V32 are unknown too.
    let e = execute(&k, &[], &ExecOptions::default()).unwrap_err();
    assert!(
        e[0].message.contains("`raw_sends.15.1.0.1") && e[0].message.ends_with("--set V33=…"),
        "{}",
        e[0].message
    );
    let without_send = text.replace(
        "raw_sends.15.1.0.1 (M1, 16) 0x0:ud 0x2000000:ud V32.0 %null.0 V33.0\n",
        "",
    );
    let (k, _) = parse_visa(&without_send);
    let r = execute(&k, &[], &ExecOptions::default()).unwrap();
    // The add wrote M's first 8 elements (unknown); the other 8 are known zeros.
    let m = r.values.iter().find(|w| w.name == "M").unwrap();
    assert!(m.unknown[..8].iter().all(Option::is_some));
    assert!(m.unknown[8..].iter().all(Option::is_none));
    assert_eq!(
        m.unknown[0].as_ref().unwrap().describe(),
        "unknown (add at 6:1)"
    );
    // cmp writes the predicate P1: all of it unknown.
    let p = r.values.iter().find(|w| w.name == "P1").unwrap();
    assert!(p.unknown.iter().all(Option::is_some));
    let notes: Vec<&str> = r
        .warnings
        .iter()
        .filter(|w| w.rule == "visa.run-skipped")
        .map(|w| w.message.as_str())
        .collect();
    assert_eq!(
        notes,
        [
            "add not executed: only mov runs; M is unknown",
            "cmp.lt not executed: only mov runs; P1 is unknown"
        ]
    );
    // A mov predicated by the unknown P1 stops.
    let pred = format!("{without_send}(P1) mov (M1, 16) H(0,0)<1> V32(0,0)<1;1,0>\n");
    let (k, _) = parse_visa(&pred);
    let e = execute(&k, &[], &ExecOptions::default()).unwrap_err();
    assert!(
        e[0].message
            .starts_with("element 0 of P1 is unknown: `cmp.lt"),
        "{}",
        e[0].message
    );
}

const TILE: &str = "cuda_tile.module @m {
  entry @k(%x: tile<2xf32>) {
    %y = addf %x, %x : tile<2xf32>
    %h = ftof %y : tile<2xf32> -> tile<2xf16>
    return
  }
}
";

#[test]
fn tile_conversion_of_an_unmodelled_result_suggests_arg() {
    let file = gpucvt::tile::parse::parse_file(TILE);
    let opts = TileOptions::default();
    let args = [vec![0x3f80_0000]];
    let e = run_entry_given(&file, TILE, "k", &args, &[], &opts).unwrap_err();
    let EvalError::Stopped(d) = e else {
        panic!("{e:?}")
    };
    assert_eq!(d.rule, "tile.run-unknown");
    assert_eq!((d.span.line, d.span.col), (4, 15), "at ftof's operand");
    assert!(
        d.message
            .starts_with("%y is unknown: `%y = addf %x, %x : tile<2xf32>` at 3:5"),
        "{}",
        d.message
    );
    assert!(d.message.ends_with("--arg %y=…"), "{}", d.message);
    // run_entry (without the source) stops the same way.
    assert!(matches!(
        run_entry(&file, "k", &args, &opts),
        Err(EvalError::Stopped(_))
    ));

    // Given %y, ftof runs: [2.0, -1.0] -> f16 [0x4000, 0xbc00].
    let y = Given {
        name: "y".into(),
        ty: TileType::new(&[2], ElemType::F32),
        elements: vec![0x4000_0000, 0xbf80_0000],
    };
    let r = run_entry_given(&file, TILE, "k", &args, &[y], &opts).unwrap();
    let h = r.values.iter().find(|v| v.name == "h").unwrap();
    let bits: Vec<Option<u64>> = h.elements.iter().map(|e| e.bits()).collect();
    assert_eq!(bits, [Some(0x4000), Some(0xbc00)]);
    assert!(r.unknown.is_empty());
    assert_eq!(
        r.notes[0].message,
        "addf not evaluated: only constants and conversion ops run; %y keeps the --arg value"
    );
    // A value given for %h, which ftof computes, is not used.
    let h_given = Given {
        name: "h".into(),
        ty: TileType::new(&[2], ElemType::F16),
        elements: vec![0],
    };
    let y = Given {
        name: "y".into(),
        ty: TileType::new(&[2], ElemType::F32),
        elements: vec![0x4000_0000],
    };
    let r = run_entry_given(&file, TILE, "k", &args, &[y, h_given], &opts).unwrap();
    assert!(r
        .notes
        .iter()
        .any(|n| n.rule == "tile.run-unused" && n.message.starts_with("--arg %h is not used")));
    let h = r.values.iter().find(|v| v.name == "h").unwrap();
    assert_eq!(h.elements[1].bits(), Some(0x4000));
}

#[test]
fn tile_unread_unmodelled_results_stay_unknown() {
    let src = TILE.replace(
        "    %h = ftof %y : tile<2xf32> -> tile<2xf16>\n",
        "    %h = ftof %x : tile<2xf32> -> tile<2xf16>\n",
    );
    let file = gpucvt::tile::parse::parse_file(&src);
    let r = run_entry_given(
        &file,
        &src,
        "k",
        &[vec![0x3f80_0000]],
        &[],
        &TileOptions::default(),
    )
    .unwrap();
    assert_eq!(r.unknown.len(), 1);
    assert_eq!(r.unknown[0].name, "%y");
    assert_eq!(r.unknown[0].describe(), "unknown (addf at 3:5)");
    assert_eq!(
        r.notes[0].message,
        "addf not evaluated: only constants and conversion ops run; %y is unknown"
    );
}

/// The reproduction: Triton's masked load, `mov.u32 %r1, 0x0` (the `other` value)
/// then `@%p1 ld.global.b32 %r1, […]`. A `--set %r1=…` stands for what the load writes,
/// also after the mov replaced it; the notes say when a `--set` value is replaced, and by
/// what, and so does an error about such a register.
const TRITON: &str = "\
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p)
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    .reg .b16 %rs<3>;
    .reg .b64 %rd<2>;
    ld.param.b64 %rd1, [p];
    mov.u32 %r1, 0x0;
    @%p1 ld.global.b32 %r1, [%rd1+0];
    mov.b32 {%rs1, %rs2}, %r1;
    cvt.f32.f16 %r2, %rs2;
}
";

fn triton(sets: &[(&str, &str)]) -> Result<gpucvt::ptx::run::RunResult, RunError> {
    let inputs: Vec<RunInput> = sets
        .iter()
        .map(|(n, v)| RunInput {
            name: n.to_string(),
            value: v.to_string(),
        })
        .collect();
    run(&parse_file(TRITON), &inputs, &RunOptions::default())
}

#[test]
fn ptx_set_stands_for_a_masked_load_after_its_default() {
    // The high half 0x3c00 is f16 1.0: %r2 = f32 1.0.
    let r = triton(&[("%r1", "0x3c004000")]).unwrap();
    assert_eq!(r.get("%r2"), Some(0x3f80_0000));
    assert_eq!(r.get("%r1"), Some(0x3c00_4000));
    let notes: Vec<(&str, &str)> = r
        .notes
        .iter()
        .map(|n| (n.rule, n.message.as_str()))
        .collect();
    assert!(
        notes.contains(&(
            "ptx.run-set-replaced",
            "%r1 is written by `mov.u32 %r1, 0` at 11:5, which replaces its --set value; a skipped instruction that writes %r1 later gives it the --set value again"
        )),
        "{notes:?}"
    );
    assert!(
        notes.contains(&(
            "ptx.run-skipped",
            "ld.global.b32 not executed: only mov, cvt and cvt.pack run; %r1 takes the --set value again"
        )),
        "{notes:?}"
    );
    // The mask off (%p1 = 0): the load writes nothing, %r1 is the mov's 0.
    let r = triton(&[("%r1", "0x3c004000"), ("%p1", "0")]).unwrap();
    assert_eq!(r.get("%r2"), Some(0));
    // Without the value: the error names the load and asks for %r1.
    let Err(RunError::Stopped(d)) = triton(&[]) else {
        panic!("expected a stop")
    };
    assert!(
        d.message
            .starts_with("%rs2 is unknown (from %r1): `@%p1 ld.global.b32 %r1, [%rd1+0]` at 12:5")
            && d.message.ends_with("--set %r1=…"),
        "{}",
        d.message
    );
    // A value given for %rs2 is replaced by the unpacking mov: the error says so, and by
    // what.
    let Err(RunError::Stopped(d)) = triton(&[("%rs2", "1.0")]) else {
        panic!("expected a stop")
    };
    assert!(
        d.message.ends_with(
            "--set %r1=… (the --set %rs2 value was replaced by `mov.b32 {%rs1, %rs2}, %r1` at 13:5)"
        ),
        "{}",
        d.message
    );
}

/// The same rule for vISA: an initial value stands for every skipped write of its
/// elements, also after a mov replaced it (with a note).
#[test]
fn visa_initial_values_stand_for_every_skipped_write() {
    let text = "\
.decl V v_type=G type=f num_elts=8
.decl H v_type=G type=hf num_elts=8
mov (M1, 8) V(0,0)<1> 0x0:f
send (M1, 8) 0x0:ud 0x0:ud V(0,0)
mov (M1, 8) H(0,0)<1> V(0,0)<1;1,0>
";
    let (k, d) = parse_visa(text);
    assert!(d.is_empty(), "{d:?}");
    let init = vec![initial_value(&k, "V", &["2.0"; 8].join(",")).unwrap()];
    let r = execute(&k, &init, &ExecOptions::default()).unwrap();
    assert_eq!(r.get("H").unwrap(), &[0x4000; 8]);
    let msgs: Vec<&str> = r.warnings.iter().map(|w| w.message.as_str()).collect();
    assert!(msgs.contains(
        &"this mov writes 8 elements from 0 to 7 of V, replacing their --set value; a skipped instruction that writes them later gives them the --set value again"
    ), "{msgs:?}");
    assert!(
        msgs.contains(&"send not executed: only mov runs; V takes the --set value again"),
        "{msgs:?}"
    );
}
