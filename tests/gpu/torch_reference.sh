#!/usr/bin/env bash
# Python/torch references and baselines on a GPU node, from a bundle:
#
# 1. kiln-harness --backend cuda with the node's python3 (torch): registers the flashinfer-trace
#    definitions rmsnorm_h4096 and gemm_n4096_k4096 as they are (the harness attaches the
#    native_reference it ships; the Python reference is preferred) with a few workloads;
# 2. submits kiln's tuned solution of each with --baseline torch_eager --baseline torch_compile:
#    the reference is the definition's run() under torch, timed by kiln's CUPTI protocol;
# 3. the same reference timed by flashinfer-bench's protocol written with torch CUDA events
#    (tests/perf/torch_events_reference.py), same workloads, for comparison;
# 4. the harness again with --python none: the same submission falls back to the native
#    reference and says so.
#
# Usage: torch_reference.sh BUNDLE_DIR OUT_DIR DATASET_DIR   (OUT_DIR gets every log and JSON)
set -uo pipefail
bundle="$(cd "$1" && pwd)"; mkdir -p "$2"; out="$(cd "$2" && pwd)"; dataset="$(cd "$3" && pwd)"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin="$bundle/bin"; kiln="$bin/kiln"
# Workload lines (small and large batches): rmsnorm batch 7, 14418, 11832, 14509; gemm M = 256,
# 2053, 8192.
declare -A lines=([rmsnorm_h4096]="1p;5p;6p;13p" [gemm_n4096_k4096]="1p;40p;41p")
defs="${KILN_TORCH_DEFS:-rmsnorm_h4096 gemm_n4096_k4096}"
export PATH="$bin:$PATH"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/kiln-torch-XXXXXX")"
pid=""
start_harness() {  # LOG [flags...]
  local log=$1; shift
  # --scratch-dir= keeps the job folders in the data dir, copied for the record at the end.
  "$bin/kiln-harness" --listen 127.0.0.1:0 --data-dir "$tmp/data" --backend cuda \
    --worker-timeout-s 300 --scratch-dir= "$@" >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do
    grep -q "listening on" "$log" && break
    sleep 0.2
  done
  addr=$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$log" | head -1)
  echo "harness on $addr: $(grep -m1 'Python references' "$log")"
}
stop_harness() { [[ -n "$pid" ]] && kill -TERM "$pid" && wait "$pid"; pid=""; }
trap 'stop_harness; rm -rf "$tmp"' EXIT

for def in $defs; do
  d=$(find "$dataset" -name "$def.json" | head -1)
  w=$(find "$dataset" -name "$def.jsonl" | head -1)
  sed -n "${lines[$def]}" "$w" >"$out/$def.workloads.jsonl"
  cp "$d" "$out/$def.json"
done

start_harness "$out/harness_python.log"
for def in $defs; do
  "$kiln" --server "$addr" defs add "$out/$def.json" --workloads "$out/$def.workloads.jsonl" \
    >"$out/$def.defs_add.txt" 2>&1
  echo "== $def: kiln submit ${def}_tuned --baseline torch_eager --baseline torch_compile"
  /usr/bin/time -f "%e s wall" "$kiln" --server "$addr" submit --definition "$def" \
    --solution "$here/solutions/${def}_tuned" --baseline torch_eager --baseline torch_compile \
    --timeout-s 1500 >"$out/$def.submit.txt" 2>"$out/$def.submit.err"
  cat "$out/$def.submit.txt"; tail -1 "$out/$def.submit.err"
  run_id=$(sed -n 's/^run \([^:]*\):.*/\1/p' "$out/$def.submit.txt" | head -1)
  "$kiln" --server "$addr" runs show "$run_id" --json >"$out/$def.run.json" 2>&1
done
stop_harness

for def in $defs; do
  echo "== $def: flashinfer-bench protocol with torch CUDA events"
  python3 "$here/../perf/torch_events_reference.py" "$out/$def.json" "$out/$def.workloads.jsonl" \
    --json "$out/$def.events.json" 2>&1 | tee "$out/$def.events.txt"
done

start_harness "$out/harness_native.log" --python none
echo "== rmsnorm_h4096 with --python none (native reference fallback)"
"$kiln" --server "$addr" submit --definition rmsnorm_h4096 \
  --solution "$here/solutions/rmsnorm_h4096_tuned" --workloads "$out/rmsnorm_h4096.workloads.jsonl" \
  >"$out/native_fallback.txt" 2>&1
cat "$out/native_fallback.txt"
"$kiln" --server "$addr" submit --definition rmsnorm_h4096 \
  --solution "$here/solutions/rmsnorm_h4096_tuned" --baseline torch_compile \
  >"$out/native_fallback_baseline.txt" 2>&1
echo "torch_compile without torch: $(cat "$out/native_fallback_baseline.txt" | head -3)"
stop_harness
cp -r "$tmp/data/jobs" "$out/" 2>/dev/null
true
