#!/usr/bin/env bash
# kiln's end-to-end check of the CUDA backend on a GPU node, from a relocatable bundle:
#
#   BUNDLE_DIR/bin/{kiln,kiln-harness,kiln-worker,unit_cuda_*}  BUNDLE_DIR/include/kiln/abi.h
#   BUNDLE_DIR/share/kiln/gpu  (a copy of tests/gpu; the copy beside this script is used too)
#
# 1. prints nvidia-smi and nvcc versions; runs unit_cuda_compile (and, at the end,
#    unit_cuda_gpu) when the bundle has them (else: skip); checks the test kernels alone
#    against torch (check_kernels.py), so a wrong verdict below can be told from a wrong kernel;
# 2. starts kiln-harness --backend cuda --worker-timeout-s 20, registers vector_add_cuda and
#    submits the failure solutions, asserting the verdict and exit code of each (and the
#    compiler's kernel.cu line, the word "illegal");
# 3. restarts the harness (same data dir; 120 s worker limit for the naive kernels), registers
#    the flashinfer-trace definitions rmsnorm_h4096 and gemm_n4096_k4096 from DATASET_DIR as
#    they are (no native_reference: the harness attaches the one it ships) with their workloads,
#    submits the naive and the tuned solution of each in official mode on the first 4 workloads
#    (KILN_SUITE_WORKLOADS), and records latencies and speedups; rmsnorm_h4096 also gets a
#    solution written against TVM-FFI (kiln's compatibility headers), expected to pass;
# 4. prints "check | expected | got | ok" and exits 1 if any check failed.
#
# OUT_DIR gets summary.txt and details.tar.gz (every log and --json output). Bounded by
# KILN_SUITE_BUDGET_S (default 450 s); a step that would overrun it is reported as skipped.
#
# Usage: run_gpu_suite.sh BUNDLE_DIR OUT_DIR DATASET_DIR
#   DATASET_DIR holds rmsnorm_h4096.json/.jsonl and gemm_n4096_k4096.json/.jsonl anywhere below
#   it (tests/gpu/stage_dataset.sh DEST copies them). If the harness does not attach a native
#   reference, the suite says so (a failed check) and embeds the shipped one to go on; it looks
#   for it in $KILN_NATIVE_REFERENCES, the bundle's share/kiln, then harness/definitions/.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUNDLE_DIR OUT_DIR DATASET_DIR" >&2
  exit 2
fi
started=$(date +%s)
budget=${KILN_SUITE_BUDGET_S:-450}
bundle="$(cd "$1" && pwd)" || exit 2
mkdir -p "$2" && out="$(cd "$2" && pwd)" || exit 2
dataset="${3:-}"
gpu_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ -d "$gpu_dir/solutions" ]] || gpu_dir="$bundle/share/kiln/gpu"
bin="$bundle/bin"
kiln="$bin/kiln"
sol="$gpu_dir/solutions"
results="python3 $gpu_dir/kiln_results.py"
export PATH="$bin:$PATH"  # a bwrap carried in the bundle is found first

tmp="$(mktemp -d "${TMPDIR:-/tmp}/kiln-gpu-suite-XXXXXX")"
details="$tmp/details"
mkdir -p "$details"
checks="$tmp/checks.tsv"
speed="$tmp/speed.tsv"
: >"$checks"
: >"$speed"
harness_pid=""
addr=""

elapsed() { echo $(($(date +%s) - started)); }
remaining() { echo $((budget - $(elapsed))); }
log() { echo "[$(elapsed)s] $*" >&2; }
ok_if() { if "$@"; then echo ok; else echo FAIL; fi; }
check() {  # NAME EXPECTED GOT ok|FAIL|skip
  printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$checks"
  log "check: $1: expected [$2] got [$3] -> $4"
}
# A step's limit: at most $1 seconds, less when the budget is nearly spent (0: no time left).
limit() {
  local want=$1 left
  left=$(($(remaining) - 25))
  ((left < want)) && want=$left
  ((want < 0)) && want=0
  echo "$want"
}
nvcc_bin() { command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc"; }

stop_harness() {
  [[ -n "$harness_pid" ]] || return 0
  kill -TERM "$harness_pid" 2>/dev/null
  for _ in $(seq 100); do kill -0 "$harness_pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$harness_pid" 2>/dev/null
  wait "$harness_pid" 2>/dev/null
  harness_pid=""
}

summary() {
  echo "kiln GPU suite, $(date -u +%Y-%m-%dT%H:%M:%SZ), $(elapsed) s"
  echo "bundle: $bundle"
  echo "gpu: $(timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total \
    --format=csv,noheader 2>/dev/null | head -1)"
  echo "nvcc: $("$(nvcc_bin)" --version 2>/dev/null | tail -1)"
  echo
  $results table "$checks"
  if [[ -s "$speed" ]]; then
    echo
    echo "official mode, per workload:"
    {
      printf 'solution\taxes\tstatus\tlatency_ms\treference_latency_ms\tspeedup\n'
      cat "$speed"
    } | { column -t -s $'\t' 2>/dev/null || cat; }
  fi
}

finish() {
  local rc=$?
  stop_harness
  summary >"$out/summary.txt" 2>&1
  cp "$checks" "$speed" "$details/" 2>/dev/null
  tar -czf "$out/details.tar.gz" -C "$tmp" details 2>/dev/null || echo "tar of details failed" >&2
  cat "$out/summary.txt"
  $results table "$checks" >/dev/null 2>&1 || rc=1
  rm -rf "$tmp"
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT TERM

# --- 1. environment, unit tests, kernels alone ---------------------------------------------------
{
  echo "== nvidia-smi"; timeout 20 nvidia-smi 2>&1
  echo "== nvcc"; "$(nvcc_bin)" --version 2>&1
  echo "== bundle"; ls -la "$bin" "$bundle/include/kiln" 2>&1
  for b in kiln kiln-harness kiln-worker; do echo "== ldd $b"; ldd "$bin/$b" 2>&1; done
} >"$details/environment.txt"
timeout 20 nvidia-smi 2>&1 | head -20
echo "$(nvcc_bin): $("$(nvcc_bin)" --version 2>&1 | tail -2 | tr '\n' ' ')"
missing=$(for b in kiln kiln-harness kiln-worker; do ldd "$bin/$b" 2>&1; done |
  awk '/not found/ {print $1}' | sort -u | tr '\n' ' ')
check "bundle libraries resolve (ldd)" "none missing" "${missing:-none missing}" \
  "$(ok_if test -z "$missing")"

native_dir() {  # the folder holding the shipped native references, or nothing
  local d
  for d in "${KILN_NATIVE_REFERENCES:-}" "$bundle/share/kiln/native_references" \
    "$bundle/share/kiln/definitions/native_references" \
    "$gpu_dir/../../harness/definitions/native_references" \
    "$PWD/harness/definitions/native_references"; do
    [[ -n "$d" && -d "$d" ]] && { (cd "$d" && pwd); return; }
  done
}

run_unit() {  # NAME MAX_SECONDS
  local name=$1 t rc got
  if [[ ! -x "$bin/$name" ]]; then
    check "$name" "exit 0" "not in the bundle" skip
    return
  fi
  t=$(limit "$2")
  if ((t < 10)); then check "$name" "exit 0" "skipped (time budget)" FAIL; return; fi
  log "running $name (at most ${t}s)"
  KILN_INCLUDE_DIR="$bundle/include" KILN_WORKER="$bin/kiln-worker" \
    timeout -k 5 "$t" "$bin/$name" --durations yes >"$details/$name.log" 2>&1
  rc=$?
  tail -3 "$details/$name.log" >&2
  got="exit $rc"
  ((rc == 124 || rc == 137)) && got="timed out after ${t}s"
  ((rc == 77)) && got="exit 77 (skipped: no GPU seen)"
  check "$name" "exit 0" "$got" "$(ok_if test "$rc" = 0)"
}

check_kernels() {
  local t rc native
  if ! timeout 120 python3 -c "import torch; assert torch.cuda.is_available()" >/dev/null 2>&1
  then
    check "kernels against torch (check_kernels.py)" "run" "not run: no torch with CUDA" skip
    return
  fi
  t=$(limit 150)
  native=$(native_dir)
  log "check_kernels.py (at most ${t}s)"
  timeout -k 5 "$t" python3 "$gpu_dir/check_kernels.py" --tsv --include "$bundle/include" \
    ${native:+--native-dir "$native"} --budget-s $((t > 20 ? t - 10 : 10)) \
    >"$details/check_kernels.tsv" 2>"$details/check_kernels.err"
  rc=$?
  # Only the failures join the table; every row is in details/check_kernels.tsv.
  awk -F'\t' 'NF == 4 && $4 != "ok" {printf "kernel: %s\t%s\t%s\t%s\n", $1, $2, $3, $4}' \
    "$details/check_kernels.tsv" >>"$checks"
  check "kernels against torch (check_kernels.py)" "exit 0, all ok" \
    "exit $rc, $(awk -F'\t' 'NF == 4 {n++; if ($4 == "ok") k++} END {print k + 0 " of " n + 0}' \
    "$details/check_kernels.tsv") ok" "$(ok_if test "$rc" = 0)"
}

run_unit unit_cuda_compile 90
check_kernels

# --- 2. harness + failure solutions --------------------------------------------------------------
start_harness() {  # WORKER_TIMEOUT_S LOG_NAME -> sets addr and harness_pid; 1 if not started
  local hlog="$details/$2"
  "$bin/kiln-harness" --listen 127.0.0.1:0 --data-dir "$tmp/data" --backend cuda \
    --worker-timeout-s "$1" >"$hlog" 2>&1 &
  harness_pid=$!
  addr=""
  for _ in $(seq 300); do
    if grep -q "listening on" "$hlog"; then
      addr=$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$hlog" | head -1)
      log "kiln-harness listening on $addr (worker timeout $1 s)"
      return 0
    fi
    kill -0 "$harness_pid" 2>/dev/null || break
    sleep 0.1
  done
  log "kiln-harness did not start:"
  tail -20 "$hlog" >&2
  stop_harness
  return 1
}

# submit TAG DEFINITION SOLUTION WORKLOADS MAX_SECONDS: writes $details/TAG.{json,err,rc,run.json}
submit() {
  local tag=$1 t rc run_id
  t=$(limit "$5")
  if ((t < 15)); then echo "skipped" >"$details/$tag.rc"; return; fi
  log "submit $tag (at most ${t}s)"
  timeout -k 10 $((t + 20)) "$kiln" --server "$addr" submit --definition "$2" --solution "$3" \
    --workloads "$4" --backend cuda --mode official --json --timeout-s "$t" \
    >"$details/$tag.json" 2>"$details/$tag.err"
  rc=$?
  echo "$rc" >"$details/$tag.rc"
  run_id=$($results field "$details/$tag.json" run_id)
  [[ -z "$run_id" ]] && run_id=$(sed -n 's/.*run \([0-9a-f]\{8,\}\) admitted.*/\1/p' \
    "$details/$tag.err" | head -1)
  if [[ -n "$run_id" ]]; then
    timeout 30 "$kiln" --server "$addr" runs show "$run_id" --json >"$details/$tag.run.json" \
      2>>"$details/$tag.err"
  fi
  log "  -> $($results status "$details/$tag.json") exit $rc"
}

# expect TAG LABEL STATUS EXIT_CODE [REGEX REGEX_LABEL]: STATUS "!PASSED" is anything but PASSED;
# REGEX must occur (case-insensitive) in the --json output, the run's record or the CLI's stderr.
expect() {
  local tag=$1 label=$2 want=$3 want_rc=$4 regex=${5:-} regex_label=${6:-} rc got ok=ok
  local wanted="$3 / exit $4"
  rc=$(cat "$details/$tag.rc" 2>/dev/null || echo "?")
  if [[ "$rc" == skipped ]]; then
    check "$label" "$wanted" "skipped (time budget)" FAIL
    return
  fi
  got=$($results status "$details/$tag.json")
  [[ "$got" == NO_JSON ]] && got="NO_JSON ($(tail -1 "$details/$tag.err" | cut -c1-100))"
  if [[ "$want" == '!PASSED' ]]; then
    [[ "$got" != PASSED && "$got" != NO_JSON* && "$got" != NO_STATUS ]] || ok=FAIL
  else
    [[ "$got" == "$want" ]] || ok=FAIL
  fi
  [[ "$rc" == "$want_rc" ]] || ok=FAIL
  got+=" / exit $rc"
  if [[ -n "$regex" ]]; then
    wanted+=" / log has $regex_label"
    if $results match "$regex" "$details/$tag.json" "$details/$tag.run.json" \
      "$details/$tag.err"; then
      got+=" / log has $regex_label"
    else
      got+=" / log lacks $regex_label"
      ok=FAIL
    fi
  fi
  check "$label" "$wanted" "$got" "$ok"
}

defs_add() {  # LABEL DEF_JSON WORKLOADS_JSONL
  local rc got
  timeout 60 "$kiln" --server "$addr" defs add "$2" --workloads "$3" \
    >"$details/defs_add_$1.txt" 2>&1
  rc=$?
  got="exit $rc"
  ((rc != 0)) && got+=": $(tail -1 "$details/defs_add_$1.txt" | cut -c1-100)"
  check "defs add $1" "exit 0" "$got" "$(ok_if test "$rc" = 0)"
  return $rc
}

failure_solutions() {
  local all="$gpu_dir/defs/vector_add_cuda.jsonl" one="$tmp/vector_add_cuda_first.jsonl"
  local def=vector_add_cuda backends
  $results head-jsonl "$all" "$one" 1 >/dev/null
  timeout 30 "$kiln" --server "$addr" node --json >"$details/node.json" 2>&1
  backends=$($results field "$details/node.json" backends)
  check "node reports the cuda backend" "cuda listed" "$backends" \
    "$(ok_if test "${backends/cuda/}" != "$backends")"
  defs_add $def "$gpu_dir/defs/$def.json" "$all" || return

  submit va_correct $def "$sol/vector_add_correct" "$all" 150
  expect va_correct "vector_add correct (3 workloads)" PASSED 0
  submit va_wrong $def "$sol/vector_add_wrong" "$all" 120
  expect va_wrong "vector_add wrong (+1)" INCORRECT_NUMERICAL 1
  submit va_compile $def "$sol/vector_add_compile_error" "$one" 90
  # nvcc's front end writes "kernel.cu(9): error", the host compiler "kernel.cu:9:5: error".
  expect va_compile "vector_add compile error" COMPILE_ERROR 1 \
    'kernel\.cu(:[0-9]+|\([0-9]+\))' "kernel.cu:LINE"
  submit va_illegal $def "$sol/vector_add_illegal_address" "$one" 90
  expect va_illegal "vector_add illegal address" RUNTIME_ERROR 1 'illegal' "'illegal'"
  submit va_endless $def "$sol/vector_add_endless" "$one" 120
  expect va_endless "vector_add endless kernel" TIMEOUT 1
  submit va_correct_again $def "$sol/vector_add_correct" "$all" 120
  expect va_correct_again "vector_add correct after the timeout" PASSED 0
  submit va_no_launch $def "$sol/vector_add_no_launch" "$one" 90
  expect va_no_launch "vector_add no launch" '!PASSED' 1
}

if start_harness 20 harness_phase1.log; then
  check "kiln-harness starts (cuda backend)" "listening" "listening on $addr" ok
  failure_solutions
  stop_harness
else
  check "kiln-harness starts (cuda backend)" "listening" \
    "did not start: $(tail -1 "$details/harness_phase1.log" | cut -c1-100)" FAIL
fi

# --- 3. flashinfer-trace definitions -------------------------------------------------------------
find_dataset_file() {  # NAME.json|NAME.jsonl
  [[ -n "$dataset" && -d "$dataset" ]] || return 0
  find -L "$dataset" -type f -name "$1" 2>/dev/null | sort | head -1
}

# NAME: registers the definition with all its workloads and writes $tmp/NAME.first4.jsonl, the
# ones the solutions are submitted on; 0 iff usable.
dataset_definition() {
  local name=$1 def jsonl native has label
  def=$(find_dataset_file "$name.json")
  jsonl=$(find_dataset_file "$name.jsonl")
  if [[ -z "$def" || -z "$jsonl" ]]; then
    check "dataset files for $name" "found under DATASET_DIR" "missing (DATASET_DIR='$dataset')" \
      FAIL
    return 1
  fi
  $results head-jsonl "$jsonl" "$tmp/$name.first4.jsonl" "${KILN_SUITE_WORKLOADS:-4}" >/dev/null
  defs_add "$name" "$def" "$jsonl" || return 1
  timeout 30 "$kiln" --server "$addr" defs list --json >"$details/defs_list_$name.json" 2>&1
  has=$($results has-native "$details/defs_list_$name.json" "$name")
  label="harness attaches the shipped native reference ($name)"
  if [[ "$has" == yes ]]; then
    check "$label" "yes" "yes" ok
    return 0
  fi
  check "$label" "yes" "$has (embedding it instead)" FAIL
  native=$(native_dir)
  if [[ -z "$native" || ! -f "$native/$name.json" ]]; then
    check "native reference file for $name" "found" "not found (set KILN_NATIVE_REFERENCES)" FAIL
    return 1
  fi
  $results merge-native "$def" "$native/$name.json" "$tmp/$name.with_native.json" &&
    defs_add "${name}_embedded" "$tmp/$name.with_native.json" "$jsonl"
}

compare_speed() {  # NAME NAIVE_TAG TUNED_TAG
  local naive tuned
  naive=$($results mean-latency "$details/$2.json")
  tuned=$($results mean-latency "$details/$3.json")
  python3 - "$naive" "$tuned" "$1" >>"$checks" <<'EOF'
import math, sys
naive, tuned, name = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
if math.isnan(naive) or math.isnan(tuned) or tuned <= 0:
    got, ok = f"n/a (naive {naive:.4g} ms, tuned {tuned:.4g} ms)", "FAIL"
else:
    got = f"{naive / tuned:.2f}x (naive {naive:.4g} ms, tuned {tuned:.4g} ms)"
    ok = "ok" if tuned < naive else "FAIL"
print(f"{name} tuned faster than naive (mean latency)\t> 1x\t{got}\t{ok}")
EOF
  log "check: $(tail -1 "$checks" | tr '\t' ' ')"
}

if (($(remaining) > 60)) && start_harness 120 harness_phase2.log; then
  for name in rmsnorm_h4096 gemm_n4096_k4096; do
    dataset_definition "$name" || continue
    wl="$tmp/$name.first4.jsonl"
    submit "${name}_naive" "$name" "$sol/${name}_naive" "$wl" 200
    expect "${name}_naive" "$name naive (official, 4 workloads)" PASSED 0
    submit "${name}_tuned" "$name" "$sol/${name}_tuned" "$wl" 150
    expect "${name}_tuned" "$name tuned (official, 4 workloads)" PASSED 0
    $results traces "$details/${name}_naive.json" "${name}_naive" >>"$speed"
    $results traces "$details/${name}_tuned.json" "${name}_tuned" >>"$speed"
    compare_speed "$name" "${name}_naive" "${name}_tuned"
    if [[ -d "$sol/${name}_tvm_ffi" ]]; then  # written against TVM-FFI, compiled unchanged
      submit "${name}_tvm_ffi" "$name" "$sol/${name}_tvm_ffi" "$wl" 150
      expect "${name}_tvm_ffi" "$name TVM-FFI solution (official, 4 workloads)" PASSED 0
      $results traces "$details/${name}_tvm_ffi.json" "${name}_tvm_ffi" >>"$speed"
    fi
  done
  stop_harness
else
  check "kiln-harness restarts for the dataset definitions" "listening" \
    "not started: $(tail -1 "$details/harness_phase2.log" 2>/dev/null | cut -c1-100)" FAIL
fi

# --- 4. GPU unit tests, with what is left of the budget ------------------------------------------
run_unit unit_cuda_gpu 150
