#!/usr/bin/env bash
# Python and Triton solutions on a GPU node, in one bounded run (every step under `timeout`,
# logs written to OUT_DIR as it goes):
#   1. tests/gpu/python_solutions.py: verdicts, solution baseline, time to verdict, and the
#      Triton kernels' kiln latency against an independent CUPTI span;
#   2. the Python adversaries of unit_adversarial_cuda (torch and Triton on GPU 0).
#
# Usage: tests/gpu/run_python_gpu.sh BUNDLE_TAR_XZ DATASET_DIR OUT_DIR
#   BUNDLE_TAR_XZ: `deploy/bundle --with-tests`'s folder as kiln/ in a .tar.xz; DATASET_DIR:
#   tests/gpu/stage_dataset.sh's.
set -uo pipefail
tarball="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
dataset="$(cd "$2" && pwd)"
mkdir -p "$3"; out="$(cd "$3" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/kiln-python-gpu-XXXXXX")"
log() { echo "[$(date +%T)] $*" | tee -a "$out/steps.log"; }

log "unpacking the bundle"
tar -C "$work" -xJf "$tarball" || exit 2
bundle="$work/kiln"
export KILN_INCLUDE_DIR="$bundle/include" PATH="$bundle/bin:$PATH"
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  python3 -c "import sys, torch, triton; print(sys.version.split()[0], torch.__version__, triton.__version__)"
} >"$out/node.txt" 2>&1
log "node: $(tr '\n' ' ' <"$out/node.txt")"

log "python_solutions.py"
timeout 400 python3 "$here/python_solutions.py" "$bundle" "$out/suite" "$dataset" --budget-s 380 \
  >"$out/python_solutions.txt" 2>&1
log "python_solutions.py rc=$? $(tail -1 "$out/python_solutions.txt")"
tar -C "$out/suite" -czf "$out/suite_details.tar.gz" details work 2>/dev/null
rm -rf "$out/suite/details" "$out/suite/work"
log "unit_adversarial_cuda: Python adversaries"
timeout 150 "$bundle/bin/unit_adversarial_cuda" "python*" --durations yes \
  >"$out/adversarial_python.txt" 2>&1
log "unit_adversarial_cuda rc=$? $(tail -2 "$out/adversarial_python.txt" | tr '\n' ' ')"

rm -rf "$work"
log "done"
