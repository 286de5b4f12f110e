#!/usr/bin/env bash
# Time to verdict on the CUDA backend: `kiln submit` of the tuned RMSNorm (perf_rmsnorm_h4096,
# one workload, batch 2048, official mode) with a cold compile cache (a new source each time)
# and a warm one (the same source again), next to building the same kernel with nvcc alone and
# with torch.utils.cpp_extension.load_inline in a fresh build folder (what KernelBench-style
# evaluators pay per candidate), and load_inline again in the same folder (its own cache).
#
# One submission first primes the harness: it compiles the native reference and caches the
# reference latency, so "cold" means a cold cache for the candidate only.
#
# Usage: tests/perf/gpu_time_to_verdict.sh BUNDLE_DIR OUT_DIR [REPEATS=3]
# Writes OUT_DIR/report.md and OUT_DIR/details.tar.gz; bounded by ~4 minutes
# (KILN_PERF_BUDGET_S, default 225). Exits 1 if any step failed or was skipped.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
repeats="${3:-3}"
budget_s=${KILN_PERF_BUDGET_S:-225}
def=perf_rmsnorm_h4096
solution_json="$gpu_dir/solutions/rmsnorm_h4096_tuned/solution.json"
cold=()
warm=()
nvcc_times=()
rows="$tmp/rows.md"      # extra table rows
stages="$tmp/stages.md"  # per-submission stage times
notes="$tmp/notes.txt"   # a file, not an array: submit_timed runs in a subshell
: >"$rows"
: >"$stages"
: >"$notes"
note() { echo "- $*" >>"$notes"; log "$*"; }

report_body() {
  echo "## kiln time to verdict, CUDA backend ($def, batch 2048, official mode)"
  echo
  timeout 20 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null |
    head -1
  echo
  echo "| measurement | seconds (median) | runs | notes |"
  echo "|---|---|---|---|"
  echo "| kiln submit → verdict, cold compile cache | $(median "${cold[@]}") | ${#cold[@]}" \
    "| new source each time |"
  echo "| kiln submit → verdict, warm compile cache | $(median "${warm[@]}") | ${#warm[@]}" \
    "| same source again |"
  echo "| nvcc alone, kiln's flags, same source | $(median "${nvcc_times[@]}")" \
    "| ${#nvcc_times[@]} | |"
  cat "$rows"
  if [[ -s "$stages" ]]; then
    echo
    echo "kiln stage times per submission (kiln runs show --json):"
    echo
    echo "| submission | compile_s | compile cache hit | verify_s | timing_s | queued_s |"
    echo "|---|---|---|---|---|---|"
    cat "$stages"
  fi
  [[ -s "$notes" ]] && { echo; cat "$notes"; }
}
trap cleanup EXIT
trap 'exit 130' INT TERM

one_jsonl="$tmp/one.jsonl"
grep '"batch_size": 2048}' "$gpu_dir/defs/$def.jsonl" >"$one_jsonl" ||
  note "no batch 2048 workload in $def.jsonl"

stage_row() {  # LABEL RUN_JSON
  python3 - "$1" "$2" >>"$stages" <<'EOF'
import json, sys
label, path = sys.argv[1:]
try:
    r = json.load(open(path))
except (OSError, ValueError):
    r = {}
f = lambda k: "%.3f" % float(r[k]) if isinstance(r.get(k), (int, float)) else "n/a"
print(f"| {label} | {f('compile_s')} | {r.get('compile_cache_hit', 'n/a')} | {f('verify_s')} "
      f"| {f('timing_s')} | {f('queued_s')} |")
EOF
}

submit_timed() {  # LABEL SOLUTION_JSON -> prints the seconds to verdict, nothing on failure
  local label=$1 t0 t1 rc run_id
  t0=$(now)
  timeout 120 "$kiln" --server "$addr" submit --definition "$def" --solution "$2" \
    --workloads "$one_jsonl" --backend cuda --mode official --json --timeout-s 100 \
    >"$details/$label.json" 2>"$details/$label.err"
  rc=$?
  t1=$(now)
  run_id=$($results field "$details/$label.json" run_id)
  if [[ -n "$run_id" ]] && timeout 30 "$kiln" --server "$addr" runs show "$run_id" --json \
    >"$details/$label.run.json" 2>>"$details/$label.err"; then
    stage_row "$label" "$details/$label.run.json"
  fi
  if [[ $rc != 0 ]]; then
    note "$label: exit $rc, $($results status "$details/$label.json"):" \
      "$(tail -1 "$details/$label.err")"
    return
  fi
  seconds_between "$t0" "$t1"
}

kiln_submissions() {
  local i s again="$tmp/prime.json"  # the source the warm submissions repeat
  timeout 60 "$kiln" --server "$addr" defs add "$gpu_dir/defs/$def.json" \
    --workloads "$gpu_dir/defs/$def.jsonl" >"$details/defs_add.txt" 2>&1 ||
    note "defs add failed: $(tail -1 "$details/defs_add.txt")"
  variant rmsnorm_h4096_tuned "$def" prime "$tmp/prime.json"
  log "priming (reference compile + reference timing)"
  s=$(submit_timed prime "$tmp/prime.json")
  echo "| (priming submission: includes the reference's compile and timing) | ${s:-failed}" \
    "| 1 | |" >>"$rows"
  for i in $(seq "$repeats"); do
    (($(remaining) < 100)) && { note "cold repeat $i skipped (time budget)"; break; }
    variant rmsnorm_h4096_tuned "$def" "cold$i" "$tmp/cold$i.json"
    again="$tmp/cold$i.json"
    s=$(submit_timed "cold$i" "$again")
    [[ -n "$s" ]] && cold+=("$s")
    log "cold $i: ${s:-failed}"
  done
  for i in $(seq "$repeats"); do
    (($(remaining) < 90)) && { note "warm repeat $i skipped (time budget)"; break; }
    s=$(submit_timed "warm$i" "$again")
    [[ -n "$s" ]] && warm+=("$s")
    log "warm $i: ${s:-failed}"
  done
}

nvcc_alone() {
  local i t0 nvcc
  nvcc=$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")
  for i in $(seq "$repeats"); do
    python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["sources"][0]["content"] + "\n// nvcc %s\n" % sys.argv[2])' \
      "$solution_json" "$i" >"$tmp/nvcc$i.cu"
    t0=$(now)
    if timeout 120 "$nvcc" -O3 -shared -Xcompiler -fPIC -std=c++17 -I"$bundle/include" \
      -Xptxas -v --expt-relaxed-constexpr -gencode arch=compute_90a,code=sm_90a \
      -gencode arch=compute_90,code=compute_90 -cudart shared -o "$tmp/nvcc$i.so" \
      "$tmp/nvcc$i.cu" >"$details/nvcc$i.log" 2>&1; then
      nvcc_times+=("$(seconds_between "$t0" "$(now)")")
    else
      note "nvcc run $i failed: $(tail -1 "$details/nvcc$i.log")"
    fi
  done
}

load_inline() {
  local left=$(($(remaining) - 10)) rc
  if ((left < 30)); then
    note "load_inline skipped (time budget)"
    return
  fi
  log "load_inline (at most ${left}s)"
  KILN_LOAD_INLINE_BUDGET_S=$((left - 5)) timeout -k 5 "$left" \
    python3 "$perf_dir/gpu_load_inline_build.py" "$solution_json" "$bundle/include" \
    "$tmp/torch_ext" >"$details/load_inline.out" 2>"$details/load_inline.err"
  rc=$?
  grep '^|' "$details/load_inline.out" >>"$rows"
  ((rc != 0)) && note "load_inline: exit $rc: $(tail -2 "$details/load_inline.err" | tr '\n' ' ')"
}

if start_harness 60; then
  kiln_submissions
  stop_pid "$harness_pid"
  harness_pid=""
else
  note "kiln-harness did not start: $(tail -1 "$details/harness.log")"
fi
nvcc_alone
load_inline

[[ ! -s "$notes" ]]  # the exit status: 1 if anything above failed or was skipped
