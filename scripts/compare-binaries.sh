#!/usr/bin/env bash
# Compares two gpucvt binaries' machine outputs byte for byte, for a refactoring that must
# not change behaviour: `eval --batch` over 100,000 mixed lines (every PTX form in the ptxas
# legality data with random operands, vISA moves, Tile IR ops; with and without --target),
# `check` and `check --json` of every example and test-data file, and `sweep --hash` of 21
# forms covering every kernel family (and five of them again with GPUCVT_ISA=avx2).
#
#   scripts/compare-binaries.sh OLD_BINARY NEW_BINARY [WORK_DIR]
#
# Exit code 0 when every output is identical, 1 otherwise (the differences are printed).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
old=$1; new=$2; work=${3:-$(mktemp -d)}
mkdir -p "$work"
python3 - "$root" "$work/batch.txt" <<'PY'
import gzip, random, sys
root, out = sys.argv[1], sys.argv[2]
r = random.Random(7)
forms = sorted({l.split('\t')[0].split()[0]
                for l in gzip.open(f'{root}/crates/gpucvt/tests/data/ptxas-cvt-legality.tsv.gz', 'rt')
                if l.startswith('cvt')})
visa = ['ub', 'b', 'uw', 'w', 'ud', 'd', 'uq', 'q', 'hf', 'f', 'df', 'bf', 'v', 'uv', 'vf']
tile = [('ftof %x : tile<f32> -> tile<f16>', 1, 32), ('ftof %x rounding<zero> : tile<f32> -> tile<bf16>', 1, 32),
        ('itof %x signed : tile<i32> -> tile<f8E5M2>', 1, 32), ('ftoi %x signed : tile<f32> -> tile<i8>', 1, 32),
        ('ftof %x : tile<2xf32> -> tile<2xf8E4M3FN>', 2, 32), ('ftoi %x unsigned saturating : tile<f16> -> tile<i16>', 1, 16)]
def word(bits):
    k = r.random()
    return '0x0' if k < 0.1 else hex((1 << bits) - 1) if k < 0.2 else hex(r.getrandbits(bits))
lines = []
for _ in range(100000):
    k = r.random()
    if k < 0.8:
        lines.append(r.choice(forms) + ' ' + ' '.join(word(r.choice([16, 32, 32, 64])) for _ in range(r.choice([1, 1, 2, 3]))))
    elif k < 0.93:
        lines.append(f"mov{'.sat' if r.random() < 0.3 else ''} {r.choice(visa)} <- {r.choice(visa)} {word(32)}")
    else:
        t, n, bits = r.choice(tile)
        lines.append(t + ' ' + ' '.join(word(bits) for _ in range(n)))
open(out, 'w').write('\n'.join(lines) + '\n')
PY
run() {
  local b=$1 o=$2
  mkdir -p "$o"
  "$b" eval --batch < "$work/batch.txt" > "$o/batch.txt" 2>&1 || true
  "$b" eval --batch --target sm_90 < "$work/batch.txt" > "$o/batch-sm90.txt" 2>&1 || true
  : > "$o/check.txt"; : > "$o/check-text.txt"
  find "$root/examples" "$root/crates/gpucvt/tests/data" \( -name '*.ptx' -o -name '*.mlir' -o -name '*.visaasm' \) | sort |
  while read -r f; do
    echo "== ${f#$root/}" >> "$o/check.txt"
    { "$b" check --json "$f" || echo "rc=$?"; } >> "$o/check.txt" 2>&1
    { "$b" check "$f" || echo "rc=$?"; } >> "$o/check-text.txt" 2>&1
  done
  : > "$o/sweep.txt"
  for f in cvt.rn.f16.f32 cvt.rz.f16.f32 cvt.rn.bf16.f32 cvt.rz.bf16.f32 cvt.rna.tf32.f32 \
    cvt.rn.satfinite.e4m3x2.f32 cvt.rn.satfinite.e5m2x2.f32 cvt.rn.satfinite.e2m1x2.f32 \
    cvt.rn.satfinite.e2m3x2.f32 cvt.rn.satfinite.e3m2x2.f32 cvt.rz.satfinite.ue8m0x2.f32 \
    cvt.rp.satfinite.ue8m0x2.f32 cvt.rs.satfinite.e4m3x4.f32 cvt.rs.satfinite.e2m1x4.f32 \
    cvt.rs.f16x2.f32 cvt.rni.s32.f32 cvt.rzi.u16.f32 cvt.rn.bf16x2.f32 cvt.f32.f16 \
    cvt.rn.relu.f16.f32 cvt.f32.bf16; do
    echo "$f $("$b" sweep "$f" --hash 2>&1 | head -1)" >> "$o/sweep.txt"
  done
  for f in cvt.rn.f16.f32 cvt.rn.satfinite.e4m3x2.f32 cvt.rs.satfinite.e2m1x4.f32 cvt.rn.bf16x2.f32 \
    cvt.rz.satfinite.ue8m0x2.f32; do
    echo "avx2 $f $(GPUCVT_ISA=avx2 "$b" sweep "$f" --hash 2>&1 | head -1)" >> "$o/sweep.txt"
  done
}
run "$old" "$work/old"
run "$new" "$work/new"
status=0
for f in batch.txt batch-sm90.txt check.txt check-text.txt sweep.txt; do
  if cmp -s "$work/old/$f" "$work/new/$f"; then
    echo "$f: identical ($(wc -l < "$work/new/$f") lines)"
  else
    echo "$f: DIFFERS"; diff "$work/old/$f" "$work/new/$f" | head -20; status=1
  fi
done
exit $status
