//! The Intel vISA dialect: types, the control register, MOV conversion semantics, and the
//! `.visaasm` text subset that conversion code uses (`visa.md`).
//!
//! - [`types`]: the sixteen vISA types with their codes and names; the packed immediates
//!   V, UV and VF;
//! - [`cr0`]: the control register as a value (rounding mode, float → int rounding, denormal
//!   and ALT bits);
//! - [`eval`]: what `mov` does for every source/destination type pair, as plans of core
//!   conversions, with the documented [`eval::CHOICES`];
//! - [`parse`]: a reader for `.visaasm` (`.version`, `.kernel`, `.decl`, `mov`);
//! - [`check`]: declarations, types, regions and type pairs, with diagnostics;
//! - [`run`]: runs a kernel's movs over whole regions.
//!
//! ```
//! use gpucvt::visa::{check, cr0::Cr0, parse, run};
//! let text = "\
//! .version 3.6
//! .kernel \"k\"
//! .decl S v_type=G type=f num_elts=2
//! .decl D v_type=G type=hf num_elts=2
//! mov (M1_NM, 2) D(0,0)<1> S(0,0)<1;1,0>
//! ";
//! let (kernel, diags) = parse::parse(text);
//! assert!(diags.is_empty());
//! assert!(check::check(&kernel, &check::CheckOptions::default()).is_empty());
//! let opts = run::ExecOptions { cr0: Cr0::OPENCL, ..Default::default() };
//! let init = [("S".to_string(), vec![0x3f80_0000, 0x4780_0000])]; // 1.0, 65536.0
//! let out = run::execute(&kernel, &init, &opts).unwrap();
//! assert_eq!(out.get("D"), Some(&[0x3c00, 0x7c00][..])); // 1.0, +inf
//! ```

pub mod check;
pub mod cr0;
pub mod eval;
pub mod parse;
pub mod run;
pub mod types;

pub use cr0::{Cr0, RoundingMode};
pub use eval::{eval_mov, mov_plan, mov_plan_with, rule_text, MovOptions, Plan};
pub use types::VisaType;
