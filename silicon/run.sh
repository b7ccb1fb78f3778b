#!/usr/bin/env bash
# Every PTX cvt form legal on sm_90, on this machine's GPU and in gpucvt: docs/silicon.md.
#   silicon/run.sh OUTDIR
# Needs: the release gpucvt binary (target/release/gpucvt, or $GPUCVT_BIN), python3 with
# CuPy, NumPy and xxhash, and an NVIDIA GPU. Budgeted to finish within 8 minutes on an H100.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: silicon/run.sh OUTDIR}"
mkdir -p "$out"
exec python3 "$here/run.py" "$out" --target sm_90 "${@:2}"
