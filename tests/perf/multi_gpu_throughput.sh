#!/usr/bin/env bash
# How much faster does a queue drain when one kiln-harness serves two GPUs instead of one? N
# submissions at once (the tuned RMSNorm on perf_rmsnorm_h4096, batch 2048 and 14509, official
# mode), first to a harness started with --gpus 0, then to a fresh one with --gpus 0,1. Each
# phase primes its harness first (the reference compiled and timed, the candidate compiled), so
# the N submissions are compile-cache hits and the wall time is device time: with two slots it
# should approach half (KILN_DISTINCT_SOURCES=1: N distinct sources, compiles included).
#
# Reports per phase the wall time from the first submission to the last verdict, the verdicts,
# the sums of the runs' verify_s and timing_s, and which GPU each run landed on (its run record's
# device_index); then the ratio wall(--gpus 0) / wall(--gpus 0,1).
#
# Usage: tests/perf/multi_gpu_throughput.sh BUNDLE_DIR OUT_DIR [N=8]
# Needs 2 GPUs. Writes OUT_DIR/summary.txt (also report.md) and OUT_DIR/details.tar.gz; exits 1
# when it could not measure (a harness did not start, a submission failed, phase 1 used another
# GPU than 0, phase 2 did not use both). Bounded by KILN_PERF_BUDGET_S (default 1200 s).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/multi_gpu_common.sh"
count="${3:-8}"
budget_s=${KILN_PERF_BUDGET_S:-1200}
def=perf_rmsnorm_h4096

report_body() { multi_gpu_report "## kiln multi-GPU throughput: $count submissions of $def, --gpus 0 vs --gpus 0,1"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

gpus=$(timeout 20 nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
((gpus >= 2)) || { note "nvidia-smi lists $gpus GPU(s); this benchmark needs 2"; exit 1; }
wl="$tmp/workloads.jsonl"
grep -E '"batch_size": (2048|14509)\}' "$gpu_dir/defs/$def.jsonl" >"$wl"
[[ $(wc -l <"$wl") == 2 ]] || { note "expected 2 workloads, found $(wc -l <"$wl")"; exit 1; }
for i in $(seq "$count"); do
  tag=""
  [[ "${KILN_DISTINCT_SOURCES:-0}" == 1 ]] && tag="q$i"
  variant rmsnorm_h4096_tuned "$def" "$tag" "$tmp/sub$i.json"
done

phase() {  # NAME GPUS: N submissions at once to a fresh harness on GPUS
  local name=$1 gpus=$2
  start_gpu_harness "$name" "$gpus" || return 1
  check_served "$name" "${gpus//,/ }" || return 1
  local addr=${h_addr[$name]}
  timeout 60 "$kiln" --server "$addr" defs add "$gpu_dir/defs/$def.json" \
    --workloads "$gpu_dir/defs/$def.jsonl" >"$details/defs_$name.txt" 2>&1 ||
    { note "$name: defs add failed"; return 1; }
  log "$name: priming"
  timeout 300 "$kiln" --server "$addr" submit --definition "$def" --solution "$tmp/sub1.json" \
    --workloads "$wl" --backend cuda --mode official --json >"$details/${name}_prime.json" \
    2>"$details/${name}_prime.err" ||
    { note "$name: priming submission: exit $?, $($results status "$details/${name}_prime.json")"; return 1; }
  local limit=$(($(remaining) - 60))
  ((limit < 60)) && limit=60
  log "$name: $count submissions at once (at most ${limit}s)"
  local sub_pids=()
  for i in $(seq "$count"); do
    (
      t0=$(now)
      timeout "$limit" "$kiln" --server "$addr" submit --definition "$def" \
        --solution "$tmp/sub$i.json" --workloads "$wl" --backend cuda --mode official --json \
        --timeout-s "$limit" >"$details/${name}_$i.json" 2>"$details/${name}_$i.err"
      echo "$t0 $(now) $?" >"$details/${name}_$i.time"
    ) &
    sub_pids+=($!)
  done
  for p in "${sub_pids[@]}"; do wait "$p"; done
  for i in $(seq "$count"); do
    echo "$i $(run_device "$addr" "$details/${name}_$i.json" "$details/${name}_$i.run.json")" \
      >>"$details/${name}_devices.txt"
  done
  stop_gpu_harness "$name"
}

phase one 0 || exit 1
phase two 0,1 || exit 1

PYTHONPATH="$gpu_dir" python3 - "$details" "$count" >"$tmp/analysis.txt" 2>>"$notes" <<'PY'
import os, sys
from kiln_results import load
details, count = sys.argv[1], int(sys.argv[2])
fail = lambda msg: print(msg, file=sys.stderr)

walls = {}
print(f"{'harness':<14} {'wall s':>8} {'sum verify_s':>12} {'sum timing_s':>12} "
      f"{'verdicts':<16} runs per GPU")
for name, gpus in (("one", "0"), ("two", "0,1")):
    spans, verdicts = [], {}
    for i in range(1, count + 1):
        try:
            t0, t1, rc = open(os.path.join(details, f"{name}_{i}.time")).read().split()
            spans.append((float(t0), float(t1)))
            if int(rc) != 0:
                fail(f"--gpus {gpus}: submission {i} exited {rc}; see {name}_{i}.err")
        except (OSError, ValueError):
            fail(f"--gpus {gpus}: submission {i} has no timing")
        doc = load(os.path.join(details, f"{name}_{i}.json")) or {}
        s = doc.get("status", "NO_JSON")
        verdicts[s] = verdicts.get(s, 0) + 1
    per_gpu = {}
    for line in open(os.path.join(details, f"{name}_devices.txt")):
        _, dev, _bus = line.split()
        per_gpu[dev] = per_gpu.get(dev, 0) + 1
    sums = {"verify_s": 0.0, "timing_s": 0.0}
    for i in range(1, count + 1):
        run = load(os.path.join(details, f"{name}_{i}.run.json")) or {}
        for k in sums:
            sums[k] += float(run.get(k) or 0)
    if not spans:
        fail(f"--gpus {gpus}: nothing finished")
        continue
    walls[name] = max(t1 for _, t1 in spans) - min(t0 for t0, _ in spans)
    print(f"--gpus {gpus:<7} {walls[name]:8.2f} {sums['verify_s']:12.2f} {sums['timing_s']:12.2f} "
          f"{', '.join(f'{k} {v}' for k, v in sorted(verdicts.items())):<16} "
          f"{', '.join(f'GPU {k}: {v}' for k, v in sorted(per_gpu.items()))}")
    if name == "one" and set(per_gpu) != {"0"}:
        fail(f"--gpus 0: runs landed on {sorted(per_gpu)}, expected only GPU 0")
    if name == "two" and not {"0", "1"} <= set(per_gpu):
        fail(f"--gpus 0,1: runs landed on {sorted(per_gpu)}, expected both GPU 0 and GPU 1")
    if set(verdicts) != {"PASSED"}:
        fail(f"--gpus {gpus}: not every submission PASSED ({verdicts})")
print()
if "one" in walls and "two" in walls and walls["two"] > 0:
    print(f"wall(--gpus 0) / wall(--gpus 0,1) = {walls['one'] / walls['two']:.2f} "
          f"(2.00 would be perfect scaling)")
else:
    fail("no ratio: a phase did not finish")
PY
[[ -s "$tmp/analysis.txt" ]] || note "analysis produced nothing"
[[ ! -s "$notes" ]]  # the exit status: 1 if anything above failed
