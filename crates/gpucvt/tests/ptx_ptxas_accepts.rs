//! PTX that ptxas 13.5 accepts and the reader once rejected (issue 28): vector register
//! declarations, directives written without a space (`.reg.u32`), `.reg` parameters of
//! `.func`, PTX 2.x prototypes without a body or `;`, and `\r` line ends. Plus the operand
//! count of every legal `cvt` form.

use std::collections::BTreeSet;

use gpucvt::diag::{Diagnostic, Severity};
use gpucvt::ptx::check::{
    check_form, check_source, legal_forms, takes_optional_scale, OperandShape, ShapeOperand,
};
use gpucvt::ptx::parse::parse_file;
use gpucvt::ptx::target::Target;

fn errors(src: &str) -> Vec<Diagnostic> {
    check_source(src, None, None)
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .collect()
}

fn assert_clean(src: &str) {
    let e = errors(src);
    assert!(e.is_empty(), "{src}\n{e:#?}");
}

fn module(body: &str) -> String {
    format!(".version 8.0\n.target sm_90\n.address_size 64\n{body}")
}

#[test]
fn vector_register_declarations() {
    // Was: "'.v4.u16' is not a register type".
    let src = module(
        ".visible .entry k()\n{\n\
         .reg .v4.u16 foo;\n\
         .reg .v2.f32 %v<2>;\n\
         .reg .v4 .b32 %q;\n\
         .reg .v2.b64 %w;\n\
         .reg .f32 %f;\n\
         cvt.rn.f32.u16 %f, foo.z;\n\
         ret;\n}\n",
    );
    assert_clean(&src);
    let file = parse_file(&src);
    let regs = &file.functions[0].body.as_ref().unwrap().regs;
    assert_eq!((regs[0].lanes, regs[0].ty.name()), (4, "u16"));
    assert_eq!(regs[0].names[0].name, "foo");
    // Element .w of a .v2 is still caught.
    let bad = module(".entry k()\n{\n.reg .v2.u16 a;\n.reg .f32 %f;\ncvt.rn.f32.u16 %f, a.w;\n}\n");
    let e = errors(&bad);
    assert_eq!(e.len(), 1, "{e:#?}");
    assert_eq!((e[0].rule, e[0].span.line), ("ptx.register-vector", 8));
    // A vector of more than 128 bits is still refused, pointing at the .v4.
    let e = errors(&module(".entry k()\n{\n.reg .v4.f64 %d;\n}\n"));
    assert_eq!(
        (e[0].rule, e[0].span.line, e[0].span.col),
        ("ptx.reg-vector", 6, 6)
    );
}

#[test]
fn directives_without_a_space() {
    // Was: the declaration silently dropped, and every use "not declared".
    let src = module(
        ".visible.entry k(.param.u64 p, .param.align 4 .b8 q[8])\n{\n\
         .reg.u32 input_<4>;\n\
         .reg.b32 %r;\n\
         .reg.pred %p;\n\
         .reg.f32 %f<2>;\n\
         cvt.rn.f32.u32 %f0, input_3;\n\
         cvt.rzi.u32.f32 %r, %f0;\n\
         ret;\n}\n",
    );
    assert_clean(&src);
    let file = parse_file(&src);
    let f = &file.functions[0];
    assert_eq!(f.params.len(), 2);
    assert_eq!(f.params[0].ty.map(|t| t.name()), Some("u64"));
    assert_eq!(f.body.as_ref().unwrap().regs.len(), 4);
    // An index past the declared range is still caught.
    let e = errors(&module(
        ".entry k()\n{\n.reg.u32 input_<4>;\n.reg.f32 %f;\ncvt.rn.f32.u32 %f, input_4;\n}\n",
    ));
    assert_eq!(e.len(), 1, "{e:#?}");
    assert_eq!(e[0].rule, "ptx.register-undeclared");
}

#[test]
fn reg_parameters_are_registers_of_the_function() {
    // Was: "register result is not declared", "register a is not declared".
    let src = module(
        ".visible .func (.reg .u32 result) f (.reg .u16 a) { cvt.u32.u16 result, a; ret; }\n\
         .func (.reg .v2.f32 r) g (.reg .b32 x, .reg .f32 y)\n{\n\
         .reg .f32 %t;\n\
         cvt.rn.f32.s32 %t, x;\n\
         cvt.f32.f32 r.x, y;\n\
         ret;\n}\n",
    );
    assert_clean(&src);
    // The parameter's type is checked like a declaration's.
    let e = errors(&module(
        ".func (.reg .u32 result) f (.reg .u16 a) { cvt.rn.f16.f32 result, a; ret; }\n",
    ));
    assert!(e.iter().any(|d| d.rule == "ptx.register-type"), "{e:#?}");
    assert!(
        e.iter().all(|d| d.rule != "ptx.register-undeclared"),
        "{e:#?}"
    );
}

#[test]
fn ptx2_prototypes_end_at_the_line_end() {
    // As nvopencc 3.1 writes them: no body, no `;`, then other declarations.
    let src = ".version 2.2\n.target sm_20\n\
        .visible .func _Z10sortColorsPKfPi (.param .u64 p1, .param .u64 p2)\n\
        .visible .func (.param .s32 __cudaretf__Z3maxii) _Z3maxii (.param .s32 a, .param .s32 b)\n\
        .global .u32 counter;\n\
        .entry k (.param .u64 p)\n{\n.reg .u32 %r<2>;\n.reg .f32 %f1;\n\
        cvt.rn.f32.u32 %f1, %r1;\nexit;\n}\n\
        .func last (.param .u32 x)\n";
    assert_clean(src);
    let file = parse_file(src);
    let names: Vec<&str> = file.functions.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["_Z10sortColorsPKfPi", "_Z3maxii", "k", "last"]);
    assert!(file.functions[0].body.is_none() && file.functions[0].params.len() == 2);
    // An .entry still needs its body.
    let e = errors(".version 2.2\n.target sm_20\n.entry k (.param .u64 p)\n.global .u32 c;\n");
    assert_eq!(e[0].rule, "syntax.function", "{e:#?}");
}

#[test]
fn carriage_returns_end_lines() {
    let lf =
        module(".entry k()\n{\n.reg .f32 %f;\n.reg .b16 %h;\n// note\ncvt.f16.f32 %h, %f;\n}\n");
    for ending in ["\r", "\r\n", "\n"] {
        let src = lf.replace('\n', ending);
        let d = check_source(&src, None, None);
        // Was, with `\r` alone: "no .version directive".
        assert_eq!(d.len(), 1, "{ending:?}: {d:#?}");
        assert_eq!(
            (d[0].rule, d[0].span.line, d[0].span.col),
            ("ptx.rounding-required", 9, 1),
            "{ending:?}"
        );
    }
    // Mixed line ends count each once.
    let mixed = ".version 8.0\r.target sm_90\r\n.entry k()\n{\r.reg .f32 %f;\r\n.reg .b16 %h;\ncvt.f16.f32 %h, %f;\r}\r";
    let d = check_source(mixed, None, None);
    assert_eq!((d.len(), d[0].span.line), (1, 7), "{d:#?}");
}

/// ptxas 13.5 on sm_107a accepts a third, `.b8` operand of the ue5m3x2 forms from f16x2 and
/// bf16x2 without `.scaled::n1::ue8m0`, and rejects a `.b16` one (issue 41 §2; issue 28 had
/// said any third operand was an error).
#[test]
fn ue5m3x2_takes_an_optional_b8_third_operand() {
    for src_ty in ["f16x2", "bf16x2"] {
        let text = format!(
            ".version 9.4\n.target sm_107a\n.entry k()\n{{\n.reg .b16 %d;\n.reg .b32 %a;\n.reg .b8 %x;\n\
             .reg .b16 %y;\n\
             cvt.rn.satfinite.ue5m3x2.{src_ty} %d, %a, %x;\n\
             cvt.rz.ue5m3x2.{src_ty} %d, %a, %x;\n\
             cvt.rn.satfinite.ue5m3x2.{src_ty} %d, %a;\n\
             cvt.rn.satfinite.ue5m3x2.{src_ty} %d, %a, %y;\n}}\n"
        );
        let e = errors(&text);
        assert_eq!(e.len(), 1, "{e:#?}");
        assert_eq!(
            (e[0].rule, e[0].span.line, e[0].span.col),
            ("ptx.register-type", 12, 35 + src_ty.len() as u32),
            "{e:#?}"
        );
    }
}

/// Every legal form on every target, with one operand too many and one too few: both are
/// rejected with `ptx.operand-count` (ptxas: "Arguments mismatch for instruction 'cvt'").
#[test]
fn every_legal_form_rejects_wrong_operand_counts() {
    let mut seen = BTreeSet::new();
    let mut checked = 0;
    for t in Target::all() {
        let v = t.max_version();
        for form in legal_forms(t, v) {
            if !seen.insert(form.spelling()) {
                continue;
            }
            let natural = OperandShape::natural(&form).expect("a legal form has a shape");
            assert!(
                check_form(&form, &natural, t, v).is_ok(),
                "{}",
                form.spelling()
            );
            let mut more = natural.0.clone();
            more.push(ShapeOperand::Scalar);
            let mut fewer = natural.0.clone();
            fewer.pop();
            let mut shapes = vec![fewer];
            if takes_optional_scale(&form) {
                // One more is the optional scale operand: two more is the error.
                assert!(check_form(&form, &OperandShape(more.clone()), t, v).is_ok());
                more.push(ShapeOperand::Scalar);
            }
            shapes.push(more);
            for shape in shapes {
                let n = shape.len();
                match check_form(&form, &OperandShape(shape), t, v) {
                    Err(d) => assert_eq!(
                        d.rule,
                        "ptx.operand-count",
                        "{} with {n} operands: {}",
                        form.spelling(),
                        d.message
                    ),
                    Ok(()) => panic!("{} accepted with {n} operands", form.spelling()),
                }
            }
            checked += 1;
        }
    }
    assert!(checked > 900, "only {checked} forms");
}
