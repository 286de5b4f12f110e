#!/usr/bin/env bash
# Does kiln keep the GPU busy while runs are queued? Submits N solutions at once (the tuned
# RMSNorm with N distinct comments, so each compiles on its own) against perf_rmsnorm_h4096
# (batch 2048 and 14509, official mode), while sampling
#   nvidia-smi --query-gpu=timestamp,utilization.gpu -lms 100     (GPU busy, every 100 ms)
#   kiln node --json                                              (queue depth + running)
# and reports the fraction of GPU samples with utilisation > 0 while the queue is non-empty,
# and the wall time from the first submission to the last verdict next to the sum of the runs'
# own stage times (kiln runs show --json: compile_s, verify_s, timing_s). A device slot that is
# never idle gives wall ~ sum(verify_s + timing_s), with the compiles hidden behind it.
#
# One priming submission first compiles the native reference and caches its latency.
#
# Usage: tests/perf/gpu_slot_utilisation.sh BUNDLE_DIR OUT_DIR [N=8]
# Writes OUT_DIR/report.md and OUT_DIR/details.tar.gz; bounded by ~4 minutes.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
count="${3:-8}"
budget_s=${KILN_PERF_BUDGET_S:-225}
def=perf_rmsnorm_h4096
notes="$tmp/notes.txt"
: >"$notes"
note() { echo "- $*" >>"$notes"; log "$*"; }

report_body() {
  echo "## kiln device-slot utilisation, CUDA backend ($count submissions at once, $def)"
  echo
  timeout 20 nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null |
    head -1
  echo
  if [[ -s "$tmp/analysis.md" ]]; then cat "$tmp/analysis.md"; else echo "(no analysis)"; fi
  [[ -s "$notes" ]] && { echo; cat "$notes"; }
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wl="$tmp/workloads.jsonl"
grep -E '"batch_size": (2048|14509)\}' "$gpu_dir/defs/$def.jsonl" >"$wl"
[[ $(wc -l <"$wl") == 2 ]] || note "expected 2 workloads in $wl, found $(wc -l <"$wl")"

metrics_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
HARNESS_EXTRA_FLAGS="--metrics-listen 127.0.0.1:$metrics_port"
if ! start_harness 60; then
  note "kiln-harness did not start: $(tail -1 "$details/harness.log")"
  exit 1
fi
timeout 60 "$kiln" --server "$addr" defs add "$gpu_dir/defs/$def.json" \
  --workloads "$gpu_dir/defs/$def.jsonl" >"$details/defs_add.txt" 2>&1 || note "defs add failed"

variant rmsnorm_h4096_tuned "$def" prime "$tmp/prime.json"
log "priming (reference compile + reference timing)"
timeout 150 "$kiln" --server "$addr" submit --definition "$def" --solution "$tmp/prime.json" \
  --workloads "$wl" --backend cuda --mode official --json >"$details/prime.json" \
  2>"$details/prime.err" ||
  note "priming submission: exit $?, $($results status "$details/prime.json")"
for i in $(seq "$count"); do variant rmsnorm_h4096_tuned "$def" "slot$i" "$tmp/slot$i.json"; done

# Samplers: nvidia-smi stamps its own lines; the node poller stamps with the epoch.
nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits -lms 100 \
  >"$details/gpu_samples.csv" 2>"$details/gpu_samples.err" &
pids+=($!)
(
  while :; do
    printf '%s ' "$(date +%s.%N)"
    timeout 5 "$kiln" --server "$addr" node --json 2>/dev/null | python3 -c '
import json, sys
try:
    n = json.load(sys.stdin); print(int(n.get("queue_depth", 0)), int(n.get("running", 0)))
except ValueError:
    print("? ?")'
    sleep 0.2
  done
) >"$details/node_samples.txt" 2>&1 &
pids+=($!)
sleep 1  # a baseline before the burst

limit=$(($(remaining) - 30))
((limit < 30)) && limit=30
log "submitting $count solutions at once (at most ${limit}s)"
sub_pids=()
for i in $(seq "$count"); do
  (
    t0=$(now)
    timeout "$limit" "$kiln" --server "$addr" submit --definition "$def" \
      --solution "$tmp/slot$i.json" --workloads "$wl" --backend cuda --mode official --json \
      --timeout-s "$limit" >"$details/slot$i.json" 2>"$details/slot$i.err"
    rc=$?
    echo "$t0 $(now) $rc" >"$details/slot$i.time"
  ) &
  sub_pids+=($!)
done
for p in "${sub_pids[@]}"; do wait "$p"; done
sleep 1  # a tail after the burst
for p in "${pids[@]}"; do stop_pid "$p"; done
pids=()

# The share of the slots' held time that was GPU work of timed calls (/metrics).
python3 -c 'import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=10).read().decode())' \
  "$metrics_port" >"$details/metrics.txt" 2>&1
grep -E '^kiln_device_(busy|gpu_work)' "$details/metrics.txt" | sed 's/^/metrics: /' >>"$notes"
for i in $(seq "$count"); do
  run_id=$($results field "$details/slot$i.json" run_id)
  [[ -n "$run_id" ]] && timeout 30 "$kiln" --server "$addr" runs show "$run_id" --json \
    >"$details/slot$i.run.json" 2>>"$details/slot$i.err"
done

python3 - "$details" "$count" >"$tmp/analysis.md" 2>>"$notes" <<'EOF'
import datetime, json, os, statistics, sys, time
details, count = sys.argv[1], int(sys.argv[2])

def load(path):
    try:
        return json.load(open(path))
    except (OSError, ValueError):
        return None

runs, spans = [], []
for i in range(1, count + 1):
    try:
        t0, t1, rc = open(os.path.join(details, f"slot{i}.time")).read().split()
        spans.append((float(t0), float(t1), int(rc)))
    except (OSError, ValueError):
        spans.append(None)
    runs.append(load(os.path.join(details, f"slot{i}.run.json")) or {})
done = [s for s in spans if s]
if not done:
    print("no submission finished"); sys.exit()
first, last = min(s[0] for s in done), max(s[1] for s in done)
wall = last - first

node = []  # (epoch, queued + running)
for line in open(os.path.join(details, "node_samples.txt")):
    parts = line.split()
    if len(parts) == 3 and parts[1] != "?":
        node.append((float(parts[0]), int(parts[1]) + int(parts[2])))
busy_intervals = []  # where the node reported a non-empty queue (between consecutive polls)
for (ta, na), (tb, _) in zip(node, node[1:]):
    if na > 0:
        busy_intervals.append((ta, tb))
source = "kiln node polls"
if not busy_intervals:
    busy_intervals, source = [(first, last)], "submission window (no node polls)"

gpu = []  # (epoch, utilisation %)
for line in open(os.path.join(details, "gpu_samples.csv")):
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != 2:
        continue
    try:
        stamp = datetime.datetime.strptime(parts[0], "%Y/%m/%d %H:%M:%S.%f")
        gpu.append((time.mktime(stamp.timetuple()) + stamp.microsecond / 1e6, float(parts[1])))
    except ValueError:
        continue
inside = [u for t, u in gpu if any(a <= t < b for a, b in busy_intervals)]
window = [u for t, u in gpu if first <= t <= last]

def total(key):
    values = [float(r[key]) for r in runs if isinstance(r.get(key), (int, float))]
    return sum(values), len(values)

statuses = {}
for i, r in enumerate(runs):
    submitted = load(os.path.join(details, f"slot{i + 1}.json")) or {}
    s = r.get("status") or submitted.get("status", "?")
    statuses[s] = statuses.get(s, 0) + 1
compile_s, n_c = total("compile_s")
verify_s, n_v = total("verify_s")
timing_s, n_t = total("timing_s")
frac = lambda xs: "%.1f %%" % (100.0 * sum(1 for u in xs if u > 0) / len(xs)) if xs else "n/a"
print("| measurement | value |")
print("|---|---|")
print(f"| submissions | {count} ({', '.join(f'{k}: {v}' for k, v in sorted(statuses.items()))}) |")
print(f"| GPU samples with utilisation > 0 while the queue is non-empty ({source}) | "
      f"{frac(inside)} of {len(inside)} samples |")
print(f"| mean GPU utilisation over those samples | "
      f"{'%.1f %%' % statistics.mean(inside) if inside else 'n/a'} |")
print(f"| GPU samples with utilisation > 0, first submission to last verdict | "
      f"{frac(window)} of {len(window)} samples |")
print(f"| wall time, first submission to last verdict | {wall:.2f} s |")
print(f"| sum of timing_s over the runs | {timing_s:.2f} s ({n_t} runs) |")
print(f"| sum of verify_s over the runs | {verify_s:.2f} s ({n_v} runs) |")
print(f"| sum of compile_s over the runs | {compile_s:.2f} s ({n_c} runs) |")
if verify_s + timing_s > 0:
    print(f"| wall / sum(verify_s + timing_s) | {wall / (verify_s + timing_s):.3f} |")
    print(f"| wall / sum(compile_s + verify_s + timing_s) | "
          f"{wall / (compile_s + verify_s + timing_s):.3f} |")
EOF
[[ -s "$tmp/analysis.md" ]] || note "analysis produced nothing"
bad=$(cat "$details"/slot*.time 2>/dev/null | awk '$3 != 0' | wc -l)
((bad > 0)) && note "$bad of $count submissions did not exit 0"
[[ ! -s "$notes" ]]  # the exit status: 1 if anything above failed
