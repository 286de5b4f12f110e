#!/usr/bin/env bash
# KernelBench on a GPU node, in one bounded run (every step under `timeout`, logs written to
# OUT_DIR as it goes): tests/gpu/kernelbench_gpu.py (verdicts of ModelNew files, time to verdict,
# torch's own load_inline build timed step by step, the dry-run import of levels 1-3).
#
# Usage: tests/gpu/run_kernelbench_gpu.sh BUNDLE_TAR_XZ KERNELBENCH_DIR OUT_DIR [BUDGET_S]
#   BUNDLE_TAR_XZ: deploy/bundle's folder as kiln/ in a .tar.xz; KERNELBENCH_DIR: KernelBench's
#   level folders (level1/, level2/, level3/).
set -uo pipefail
tarball="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
kb="$(cd "$2" && pwd)"
mkdir -p "$3"; out="$(cd "$3" && pwd)"
budget="${4:-420}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/kiln-kernelbench-gpu-XXXXXX")"
log() { echo "[$(date +%T)] $*" | tee -a "$out/steps.log"; }

log "unpacking the bundle"
tar -C "$work" -xJf "$tarball" || exit 2
bundle="$work/kiln"
export KILN_INCLUDE_DIR="$bundle/include" PATH="$bundle/bin:$PATH"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, triton.__version__)"
  nproc; command -v ninja nvcc c++
} >"$out/node.txt" 2>&1
log "node: $(tr '\n' ' ' <"$out/node.txt")"
log "kernelbench_gpu.py"
timeout $((budget + 30)) python3 "$here/kernelbench_gpu.py" "$bundle" "$out/kb" "$kb" \
  --budget-s "$budget" >"$out/kernelbench.txt" 2>&1
log "kernelbench_gpu.py rc=$? $(tail -1 "$out/kernelbench.txt")"
cp "$out/kb/results.json" "$out/kb/summary.md" "$out/" 2>/dev/null
tar -C "$out/kb" -czf "$out/kb_details.tar.gz" details 2>/dev/null
rm -rf "$out/kb" "$work"
log "done"
