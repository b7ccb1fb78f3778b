#!/usr/bin/env python3
"""Regenerates crates/gpucvt/tests/data/amd/mc22_verdicts.tsv: llvm-mc 22's verdict on every
form of the AMD dialect's modelled instructions, per modelled target.

The forms are generated here (mnemonic x encoding suffix x operand kinds x source modifiers x
trailing modifiers); each is assembled with `llvm-mc-22 -arch=amdgcn -mcpu=TARGET
-show-encoding` (Debian's llvm-22, 1:22.1.8: `apt-get install llvm-22`). A form is accepted
when llvm-mc prints an encoding and no error. The test `amd::legality` checks that
`gpucvt`'s checker gives the same verdict on every line.

Usage: scripts/amd-legality.py [LLVM_MC]   (default llvm-mc-22)
"""

import itertools
import subprocess
import sys
from pathlib import Path

TARGETS = ["gfx942", "gfx950", "gfx1200", "gfx1201"]
OUT = Path(__file__).resolve().parent.parent / "crates/gpucvt/tests/data/amd/mc22_verdicts.tsv"

SOURCES = ["v2", "s2", "1.0", "-4.0", "7", "0x1234", "1.5"]


def forms():
    out = []
    for m in ["v_cvt_pk_fp8_f32", "v_cvt_pk_bf8_f32", "v_cvt_pk_bf16_f32"]:
        for suffix in ["", "_e64", "_e32", "_sdwa"]:
            out.append(f"{m}{suffix} v1, v2, v3")
        for a, b in itertools.product(SOURCES, ["v3", "s3", "2.0", "0x5678"]):
            out.append(f"{m} v1, {a}, {b}")
        for a in ["-v2", "|v2|", "-|v2|", "abs(v2)", "neg(v2)"]:
            out.append(f"{m} v1, {a}, v3")
            out.append(f"{m} v1, v3, {a}")
        for mod in ["op_sel:[0,0,1]", "op_sel:[0,0,0]", "op_sel:[1,0,0]", "op_sel:[0,1,0]",
                    "op_sel:[0,0,1,0]", "op_sel:[0,0,0,1]", "op_sel:[0,0]", "op_sel:[1]",
                    "op_sel:[0,0,1,1]", "byte_sel:1", "clamp", "mul:2", "op_sel_hi:[0,0,0]"]:
            out.append(f"{m} v1, v2, v3 {mod}")
        out.append(f"{m} s1, v2, v3")
        out.append(f"{m} v[1:2], v2, v3")
        out.append(f"{m} v1, v[2:3], v3")
    for m in ["v_cvt_sr_fp8_f32", "v_cvt_sr_bf8_f32"]:
        for suffix in ["", "_e64", "_e32", "_sdwa"]:
            out.append(f"{m}{suffix} v1, v2, v3")
        for a, b in itertools.product(SOURCES, ["v3", "s3", "7", "0x5678", "2.0"]):
            out.append(f"{m} v1, {a}, {b}")
        for a in ["-v2", "|v2|", "-|v2|"]:
            out.append(f"{m} v1, {a}, v3")
            out.append(f"{m} v1, v2, {a.replace('v2', 'v3')}")
        for mod in ["op_sel:[0,0,0,0]", "op_sel:[0,0,1,0]", "op_sel:[0,0,0,1]", "op_sel:[0,0,1,1]",
                    "op_sel:[0,0,1]", "op_sel:[1,0,0,0]", "op_sel:[0,1,0,0]", "byte_sel:0",
                    "byte_sel:1", "byte_sel:2", "byte_sel:3", "byte_sel:4", "clamp",
                    "op_sel:[0,0,1,1] clamp", "byte_sel:1 op_sel:[0,0,1,1]"]:
            out.append(f"{m} v1, v2, v3 {mod}")
        out.append(f"{m} s1, v2, v3")
    for m in ["v_cvt_f32_fp8", "v_cvt_f32_bf8"]:
        for suffix in ["", "_e32", "_e64", "_sdwa"]:
            for src in ["v2", "s2", "1.0", "7", "0x1234"]:
                out.append(f"{m}{suffix} v1, {src}")
            out.append(f"{m}{suffix} v1, -v2")
            out.append(f"{m}{suffix} v1, |v2|")
            out.append(f"{m}{suffix} v1, v2 clamp")
        for b in range(5):
            out.append(f"{m}_e64 v1, v2 byte_sel:{b}")
            out.append(f"{m} v1, v2 byte_sel:{b}")
        for sel in ["BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD"]:
            out.append(f"{m}_sdwa v1, v2 src0_sel:{sel}")
        out.append(f"{m}_sdwa v1, v2 src0_sel:BYTE_1 dst_sel:DWORD")
        out.append(f"{m}_sdwa v1, v2 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_2")
        out.append(f"{m}_e64 v1, v2 op_sel:[0,0]")
        out.append(f"{m}_e64 v1, v2 op_sel:[1,0]")
        out.append(f"{m}_e64 v1, v2 op_sel:[1,1]")
        out.append(f"{m} s1, v2")
        out.append(f"{m} v[1:2], v2")
    for m in ["v_cvt_pk_f32_fp8", "v_cvt_pk_f32_bf8"]:
        for suffix in ["", "_e32", "_e64", "_sdwa"]:
            for src in ["v1", "s1", "1.0", "7", "0x1234"]:
                out.append(f"{m}{suffix} v[2:3], {src}")
            out.append(f"{m}{suffix} v[2:3], -v1")
            out.append(f"{m}{suffix} v[2:3], v1 clamp")
        for mod in ["op_sel:[0,0]", "op_sel:[1,0]", "op_sel:[0,1]", "op_sel:[1,1]", "op_sel:[1]",
                    "op_sel:[1,0,0]", "byte_sel:1"]:
            out.append(f"{m}_e64 v[2:3], v1 {mod}")
            out.append(f"{m} v[2:3], v1 {mod}")
        for sel in ["BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3", "WORD_0", "WORD_1", "DWORD"]:
            out.append(f"{m}_sdwa v[2:3], v1 src0_sel:{sel}")
        out.append(f"{m} v[3:4], v1")
        out.append(f"{m} v2, v1")
        out.append(f"{m} v[2:4], v1")
        out.append(f"{m} s[2:3], v1")
    for m in ["v_prng_b32"]:
        for suffix in ["", "_e32", "_e64", "_sdwa"]:
            for src in ["v2", "s2", "7", "1.0", "0x1234", "-v2"]:
                out.append(f"{m}{suffix} v1, {src}")
        out.append(f"{m}_e64 v1, v2 clamp")
        out.append(f"{m}_e64 v1, v2 op_sel:[1,0]")
        out.append(f"{m}_sdwa v1, v2 src0_sel:BYTE_1")
    return list(dict.fromkeys(out))


def verdict(mc, target, form):
    r = subprocess.run([mc, "-arch=amdgcn", f"-mcpu={target}", "-show-encoding"], input=form + "\n",
                       capture_output=True, text=True)
    text = r.stdout + r.stderr
    for line in text.splitlines():
        if "error:" in line:
            return "reject", line.split("error:", 1)[1].strip()
    if "encoding:" in text and r.returncode == 0:
        return "accept", ""
    return "reject", "no encoding"


def main():
    mc = sys.argv[1] if len(sys.argv) > 1 else "llvm-mc-22"
    version = subprocess.run([mc, "--version"], capture_output=True, text=True).stdout
    version = next((l.strip() for l in version.splitlines() if "version" in l), "?")
    rows = [f"# llvm-mc verdicts ({version}); regenerate with scripts/amd-legality.py",
            "# target\tform\tverdict\tllvm-mc message"]
    for form in forms():
        for t in TARGETS:
            v, msg = verdict(mc, t, form)
            rows.append(f"{t}\t{form}\t{v}\t{msg}")
    OUT.write_text("\n".join(rows) + "\n")
    print(f"{len(rows) - 2} verdicts written to {OUT}")


if __name__ == "__main__":
    main()
