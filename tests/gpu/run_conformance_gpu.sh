#!/usr/bin/env bash
# The conformance corpus (tests/conformance/) on a GPU node, in one bounded run: every case, CPU
# ones included, on the cuda backend with the node's python3, four submissions in flight (the
# harness compiles their load_inline builds in parallel). Writes to OUT_DIR: steps.log,
# node.txt, conformance.txt (the table), results.json, summary.md (the rows for
# docs/conformance.md) and details.tar.gz (every CLI output and the harness log).
#
# Usage: tests/gpu/run_conformance_gpu.sh BUNDLE_TAR_XZ OUT_DIR [BUDGET_S [RUN_CONFORMANCE_ARGS...]]
#   RUN_CONFORMANCE_ARGS go to run_conformance.py after the defaults (`--only kiln/ --only
#   pygpubench/` for a part of the corpus, `--jobs 2`, `--case-timeout-s 400`).
#   BUNDLE_TAR_XZ: deploy/bundle's folder as kiln/ in a .tar.xz. The KernelBench problems come
#   from KILN_KERNELBENCH_DIR (level folders), the flashinfer-trace definitions from
#   KILN_FLASHINFER_DIR; each defaults to the shared datasets beside the checkout, and a case
#   whose dataset is missing fails naming it.
set -uo pipefail
tarball="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
mkdir -p "$2"; out="$(cd "$2" && pwd)"
budget="${3:-420}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/kiln-conformance-gpu-XXXXXX")"
log() { echo "[$(date +%T)] $*" | tee -a "$out/steps.log"; }

log "unpacking the bundle"
tar -C "$work" -xJf "$tarball" || exit 2
bundle="$work/kiln"
export KILN_INCLUDE_DIR="$bundle/include" PATH="$bundle/bin:$PATH"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, triton.__version__)"
  nproc; command -v nvcc c++
} >"$out/node.txt" 2>&1
log "node: $(tr '\n' ' ' <"$out/node.txt")"
log "run_conformance.py (budget ${budget} s)"
timeout $((budget + 60)) python3 "$here/../conformance/run_conformance.py" \
  --bin "$bundle/bin" --python "$(command -v python3)" --backend cuda --needs gpu --jobs 4 \
  --budget-s "$budget" --case-timeout-s 300 --out "$out/run" \
  --machine "$(head -1 "$out/node.txt" | cut -d, -f1)" "${@:4}" >"$out/conformance.txt" 2>&1
rc=$?
log "run_conformance.py rc=$rc: $(tail -1 "$out/conformance.txt")"
cp "$out/run/results.json" "$out/run/summary.md" "$out/" 2>/dev/null
tar -C "$out/run" -czf "$out/details.tar.gz" logs 2>/dev/null
rm -rf "$out/run" "$work"
log "done"
exit $rc
