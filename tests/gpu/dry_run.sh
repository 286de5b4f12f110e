#!/usr/bin/env bash
# Exercises the GPU scripts' control flow on a machine without a GPU: builds a bundle from the
# stand-ins in tests/gpu/fake_bundle/bin (a kiln CLI, kiln-harness and nvidia-smi that answer
# like the real ones) and runs run_gpu_suite.sh and the tests/perf/gpu_* benchmarks against it,
# asserting what each must report. It proves the scripts parse, time-box, tabulate, pack their
# details and fail when a verdict is wrong; it says nothing about kiln or the kernels.
#
# The multi-GPU benchmarks (tests/perf/multi_gpu_*.sh) run against a fake node of two GPUs.
#
# Usage: tests/gpu/dry_run.sh [DATASET_DIR=../shared/datasets/flashinfer-trace beside the repository]
set -uo pipefail
gpu_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$gpu_dir/../.." && pwd)"
dataset_src="${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/shared/datasets/flashinfer-trace}"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/kiln-gpu-dry-XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
failures=0

bundle="$tmp/bundle"
mkdir -p "$bundle/bin" "$bundle/include" "$bundle/share/kiln"
cp "$gpu_dir"/fake_bundle/bin/* "$bundle/bin/"
cp -r "$root/harness/include/kiln" "$bundle/include/"
rsync -a --exclude fake_bundle "$gpu_dir/" "$bundle/share/kiln/gpu/" 2>/dev/null ||
  cp -r "$gpu_dir" "$bundle/share/kiln/gpu"
bash "$gpu_dir/stage_dataset.sh" "$tmp/dataset" "$dataset_src" >/dev/null

expect() {  # NAME CONDITION-EXIT-STATUS DETAIL
  if [[ "$2" == 0 ]]; then
    echo "ok   $1"
  else
    echo "FAIL $1: $3"
    failures=$((failures + 1))
  fi
}
contains() { grep -qE -- "$2" "$1" 2>/dev/null; }
# Whether summary FILE has the table row CHECK | EXPECTED | GOT | OK (ERE fragments).
row() { contains "$1" "^$2 +\| $3 +\| $4 +\| $5"; }

suite() {  # NAME EXPECTED_RC DATASET [ENV...]: runs the suite; leaves OUT in $tmp/NAME
  local name=$1 want=$2 ds=$3 rc
  shift 3
  # From the bundle's copy, in the repository root, as on a GPU node.
  (cd "$root" && env KILN_FAKE_STATE="$tmp/$name.state" "$@" \
    bash "$bundle/share/kiln/gpu/run_gpu_suite.sh" "$bundle" "$tmp/$name" "$ds") \
    >"$tmp/$name.log" 2>&1
  rc=$?
  [[ $rc == "$want" ]]
  expect "suite $name exits $want" $? "exit $rc; see the log below"
  [[ $rc == "$want" ]] || tail -40 "$tmp/$name.log"
  [[ -s "$tmp/$name/summary.txt" && -s "$tmp/$name/details.tar.gz" ]]
  expect "suite $name writes summary.txt and details.tar.gz" $? "missing"
}

suite attached 0 "$tmp/dataset" KILN_FAKE_ATTACH=1
row "$tmp/attached/summary.txt" "vector_add endless kernel" "TIMEOUT / exit 1" \
  "TIMEOUT / exit 1" ok
expect "endless kernel row reads TIMEOUT ok" $? "row missing"
contains "$tmp/attached/summary.txt" "gemm_n4096_k4096_tuned +M=256 +PASSED"
expect "speed table lists the gemm workloads" $? "row missing"
[[ $(tar -tzf "$tmp/attached/details.tar.gz" | grep -c '\.json$') -ge 20 ]]
expect "details.tar.gz holds the --json outputs" $? "too few .json files"

suite not_attached 1 "$tmp/dataset"
row "$tmp/not_attached/summary.txt" \
  "harness attaches the shipped native reference \(rmsnorm_h4096\)" yes \
  "no \(embedding it instead\)" FAIL
expect "a missing native reference is a failed check" $? "row missing"
row "$tmp/not_attached/summary.txt" "rmsnorm_h4096 tuned \(official, 4 workloads\)" \
  "PASSED / exit 0" "PASSED / exit 0" ok
expect "the embedded fallback still evaluates the dataset definitions" $? "row missing"

suite wrong_passes 1 "$tmp/dataset" KILN_FAKE_ATTACH=1 KILN_FAKE_BREAK=vector_add_wrong
row "$tmp/wrong_passes/summary.txt" "vector_add wrong \(\+1\)" \
  "INCORRECT_NUMERICAL / exit 1" "PASSED / exit 0" FAIL
expect "a wrong solution that passes fails the suite" $? "row missing"

suite no_dataset 1 "$tmp/nowhere" KILN_FAKE_ATTACH=1
contains "$tmp/no_dataset/summary.txt" "dataset files for gemm_n4096_k4096 .*FAIL"
expect "a missing dataset is reported" $? "row missing"

t0=$(date +%s)
suite slow 1 "$tmp/dataset" KILN_FAKE_ATTACH=1 KILN_FAKE_SLEEP=4 KILN_SUITE_BUDGET_S=50
[[ $(($(date +%s) - t0)) -le 60 ]]
expect "the suite keeps to its time budget" $? "took $(($(date +%s) - t0)) s for a 50 s budget"
contains "$tmp/slow/summary.txt" "skipped \(time budget\) +\| FAIL"
expect "steps past the budget are reported as skipped" $? "row missing"

KILN_FAKE_STATE="$tmp/t.state" python3 "$root/tests/perf/gpu_timing_agreement.py" "$bundle" \
  "$tmp/timing" --budget-s 120 >"$tmp/timing.log" 2>&1
contains "$tmp/timing/report.md" "^\| copy 1 GiB \| [0-9.]+ \(3 runs\)"
expect "timing agreement reports 3 kiln runs per kernel" $? "$(tail -5 "$tmp/timing.log")"

KILN_FAKE_STATE="$tmp/v.state" bash "$root/tests/perf/gpu_time_to_verdict.sh" "$bundle" \
  "$tmp/ttv" 2 >"$tmp/ttv.log" 2>&1
contains "$tmp/ttv/report.md" "^\| kiln submit → verdict, warm compile cache \| [0-9.]+ \| 2 \|"
expect "time to verdict reports warm submissions" $? "$(tail -5 "$tmp/ttv.log")"

KILN_FAKE_STATE="$tmp/s.state" bash "$root/tests/perf/gpu_slot_utilisation.sh" "$bundle" \
  "$tmp/slot" 4 >"$tmp/slot.log" 2>&1
contains "$tmp/slot/report.md" \
  "^\| GPU samples with utilisation > 0 while the queue is non-empty \(kiln node polls\) \| [0-9.]+ %"
expect "slot utilisation reports sampled utilisation" $? "$(tail -5 "$tmp/slot.log")"

KILN_FAKE_STATE="$tmp/i.state" KILN_FAKE_SLEEP=1 bash "$root/tests/perf/multi_gpu_interference.sh" \
  "$bundle" "$tmp/interference" 2 >"$tmp/interference.log" 2>&1
rc=$?
[[ $rc == 0 ]] && contains "$tmp/interference/summary.txt" "^batch_size=2048 .* (yes|NO)$"
expect "multi-GPU interference reports alone vs loaded latencies" $? \
  "exit $rc; $(tail -5 "$tmp/interference.log")"

KILN_FAKE_STATE="$tmp/m.state" bash "$root/tests/perf/multi_gpu_throughput.sh" "$bundle" \
  "$tmp/throughput" 4 >"$tmp/throughput.log" 2>&1
rc=$?
[[ $rc == 0 ]] && contains "$tmp/throughput/summary.txt" "^wall\(--gpus 0\) / wall\(--gpus 0,1\) = [0-9.]+"
expect "multi-GPU throughput reports the wall-time ratio" $? \
  "exit $rc; $(tail -5 "$tmp/throughput.log")"

echo
if ((failures)); then echo "dry run: $failures failure(s)"; exit 1; fi
echo "dry run: all ok"
