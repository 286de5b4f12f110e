#!/usr/bin/env bash
# Everything about kiln's GPU tests that can be checked without a GPU:
#   1. the generated files match their generators (native references, test definitions,
#      solutions);
#   2. every JSON / JSONL file parses;
#   3. every CUDA source (all shipped native references, the test definitions' references, the
#      test solutions) compiles with nvcc for sm_90a and exports `run`; the compile-error
#      solution fails with kernel.cu and its line;
#   4. the scripts pass `bash -n` / `python3 -m py_compile`;
#   5. the scripts' control flow against stand-in binaries (dry_run.sh).
#
# Usage: tests/gpu/check_offline.sh [JOBS=2]
set -uo pipefail
gpu_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$gpu_dir/../.." && pwd)"
jobs="${1:-2}"
failed=()

step() {  # NAME COMMAND...
  local name=$1
  shift
  echo "== $name"
  if "$@"; then echo "-- ok: $name"; else echo "-- FAILED: $name"; failed+=("$name"); fi
}

parse_json() {
  python3 - "$root" <<'EOF'
import glob, json, sys
root = sys.argv[1]
files = (glob.glob(f"{root}/harness/definitions/native_references/*.json") +
         glob.glob(f"{root}/tests/gpu/defs/*.json") +
         glob.glob(f"{root}/tests/gpu/solutions/*/solution.json"))
lines = glob.glob(f"{root}/tests/gpu/defs/*.jsonl")
bad = 0
for f in files:
    try:
        json.load(open(f))
    except ValueError as e:
        print(f"{f}: {e}"); bad += 1
for f in lines:
    for i, line in enumerate(open(f), 1):
        try:
            json.loads(line)
        except ValueError as e:
            print(f"{f}:{i}: {e}"); bad += 1
print(f"{len(files)} JSON files, {len(lines)} JSONL files, {bad} bad")
sys.exit(1 if bad or not files else 0)
EOF
}

syntax() {
  local bad=0 f
  for f in "$gpu_dir"/*.sh "$root"/tests/perf/gpu_*.sh; do bash -n "$f" || bad=1; done
  for f in "$gpu_dir"/*.py "$root"/tests/perf/gpu_*.py "$gpu_dir"/fake_bundle/bin/kiln \
    "$gpu_dir"/fake_bundle/bin/kiln-harness "$gpu_dir"/fake_bundle/bin/nvidia-smi; do
    python3 -c 'import ast,sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])' "$f" || bad=1
  done
  for f in "$gpu_dir"/*.py "$root"/tests/perf/gpu_*.py; do
    python3 -m py_compile "$f" || bad=1
  done
  find "$gpu_dir" "$root/tests/perf" -name __pycache__ -type d -prune -exec rm -rf {} +
  return $bad
}

step "generated native references and definitions are current" \
  python3 "$gpu_dir/make_native_references.py" --check
step "generated solutions are current" python3 "$gpu_dir/make_solutions.py" --check
step "JSON parses" parse_json
step "all CUDA sources compile (nvcc, sm_90a) and export run" \
  python3 "$gpu_dir/check_kernels.py" --compile-only --all-native --jobs "$jobs" --budget-s 1500
step "scripts parse" syntax
step "dry run of the GPU scripts" bash "$gpu_dir/dry_run.sh"

echo
if ((${#failed[@]})); then
  printf 'FAILED: %s\n' "${failed[@]}"
  exit 1
fi
echo "all offline checks ok"
