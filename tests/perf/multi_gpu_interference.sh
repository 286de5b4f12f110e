#!/usr/bin/env bash
# Does a heavy run on one GPU disturb the timing of a run on another GPU of the same node? Two
# kiln-harness processes pin the placement: A serves only GPU 0 (--gpus 0), B only GPU 1
# (--gpus 1). The probe is the tuned RMSNorm (tests/gpu/solutions/rmsnorm_h4096_tuned) on
# perf_rmsnorm_h4096 (batch 2048 and 14509, official mode), submitted to A; the load is the naive
# GEMM (gemm_n4096_k4096_naive, M=4096) submitted to B over and over (KILN_LOAD=copy: the
# vectorised 1 GiB copy of perf_copy_f32 instead). REPEATS rounds, each timing the probe alone
# and with the load running, in alternating order (ABBA), all in this one run of the script.
#
# Reports per workload the probe's latency alone and with load (median, min, max), the spread
# of the alone repeats, and whether the loaded median lies within it; the GPU each run was timed
# on (from its run record: device_index, PCI bus id); GPU 1's sampled utilisation while the
# loaded probes ran (nvidia-smi), so a load that never ran shows.
#
# Usage: tests/perf/multi_gpu_interference.sh BUNDLE_DIR OUT_DIR [REPEATS=5]
# Needs 2 GPUs. Writes OUT_DIR/summary.txt (also report.md) and OUT_DIR/details.tar.gz; exits 1
# when it could not measure (a harness did not start, a probe did not pass, a run landed on the
# wrong GPU, or the load never reached GPU 1). Bounded by KILN_PERF_BUDGET_S (default 1500 s).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/gpu_common.sh"
source "$(dirname "${BASH_SOURCE[0]}")/multi_gpu_common.sh"
repeats="${3:-5}"
budget_s=${KILN_PERF_BUDGET_S:-1500}
probe_def=perf_rmsnorm_h4096
if [[ "${KILN_LOAD:-gemm}" == copy ]]; then
  load_def=perf_copy_f32 load_sol=copy_f32_vectorised
else
  load_def=perf_gemm_n4096_k4096 load_sol=gemm_n4096_k4096_naive
fi

report_body() { multi_gpu_report "## kiln multi-GPU interference: $probe_def on GPU 0, $load_sol on GPU 1 ($repeats rounds)"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

gpus=$(timeout 20 nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
((gpus >= 2)) || note "nvidia-smi lists $gpus GPU(s); this benchmark needs 2"

probe_wl="$tmp/probe.jsonl"
grep -E '"batch_size": (2048|14509)\}' "$gpu_dir/defs/$probe_def.jsonl" >"$probe_wl"
[[ $(wc -l <"$probe_wl") == 2 ]] || note "expected 2 probe workloads, found $(wc -l <"$probe_wl")"
load_wl="$tmp/load.jsonl"
# The largest workload of the load's definition (the last line: M=4096 / the 1 GiB copy).
grep -v '^\s*$' "$gpu_dir/defs/$load_def.jsonl" | tail -1 >"$load_wl"

[[ -s "$notes" ]] && exit 1
start_gpu_harness A 0 || exit 1
start_gpu_harness B 1 || exit 1
check_served A "0" && check_served B "1" || exit 1
timeout 60 "$kiln" --server "${h_addr[A]}" defs add "$gpu_dir/defs/$probe_def.json" \
  --workloads "$gpu_dir/defs/$probe_def.jsonl" >"$details/defs_A.txt" 2>&1 ||
  note "defs add $probe_def on A failed"
timeout 60 "$kiln" --server "${h_addr[B]}" defs add "$gpu_dir/defs/$load_def.json" \
  --workloads "$gpu_dir/defs/$load_def.jsonl" >"$details/defs_B.txt" 2>&1 ||
  note "defs add $load_def on B failed"
variant rmsnorm_h4096_tuned "$probe_def" "" "$tmp/probe.json"
variant "$load_sol" "$load_def" "" "$tmp/load.json"

probe() {  # TAG: one probe submission on A; its verdict, latencies and device in details
  timeout 300 "$kiln" --server "${h_addr[A]}" submit --definition "$probe_def" \
    --solution "$tmp/probe.json" --workloads "$probe_wl" --backend cuda --mode official --json \
    >"$details/probe_$1.json" 2>"$details/probe_$1.err"
  echo "$1 $? $(run_device "${h_addr[A]}" "$details/probe_$1.json" "$details/probe_$1.run.json")" \
    >>"$details/probes.txt"
  echo "$1 $(date +%s.%N)" >>"$details/probe_windows.txt"
}

# The load: B evaluates the heavy solution back to back until $tmp/load.stop exists.
load_pid=""
start_load() {
  rm -f "$tmp/load.stop"
  (
    i=0
    while [[ ! -e "$tmp/load.stop" ]]; do
      i=$((i + 1))
      timeout 600 "$kiln" --server "${h_addr[B]}" submit --definition "$load_def" \
        --solution "$tmp/load.json" --workloads "$load_wl" --backend cuda --mode official \
        --json >"$details/load_$1_$i.json" 2>"$details/load_$1_$i.err"
      echo "$1 $i $? $(run_device "${h_addr[B]}" "$details/load_$1_$i.json" \
        "$details/load_$1_$i.run.json")" >>"$details/loads.txt"
    done
  ) &
  load_pid=$!
  pids+=("$load_pid")
  # Wait until GPU 1 is busy (the load's first workers are running), at most 120 s.
  for _ in $(seq 240); do
    u=$(timeout 10 nvidia-smi -i 1 --query-gpu=utilization.gpu --format=csv,noheader,nounits \
      2>/dev/null | head -1 | tr -dc 0-9)
    [[ -n "$u" && "$u" -gt 50 ]] && return 0
    sleep 0.5
  done
  note "round $1: GPU 1 never went above 50 % utilisation after the load started"
}
stop_load() {
  touch "$tmp/load.stop"
  # The submission in flight finishes (a cancelled one would leave GPU 1 mid-run).
  [[ -n "$load_pid" ]] && wait "$load_pid" 2>/dev/null
  load_pid=""
}

log "priming: compiles, the reference's timing, one load run"
timeout 300 "$kiln" --server "${h_addr[A]}" submit --definition "$probe_def" \
  --solution "$tmp/probe.json" --workloads "$probe_wl" --backend cuda --mode official --json \
  >"$details/prime_probe.json" 2>"$details/prime_probe.err" ||
  note "priming probe: exit $?, $($results status "$details/prime_probe.json")"
timeout 600 "$kiln" --server "${h_addr[B]}" submit --definition "$load_def" \
  --solution "$tmp/load.json" --workloads "$load_wl" --backend cuda --mode official --json \
  >"$details/prime_load.json" 2>"$details/prime_load.err" ||
  note "priming load: exit $?, $($results status "$details/prime_load.json")"
[[ -s "$notes" ]] && exit 1

nvidia-smi --query-gpu=index,timestamp,utilization.gpu --format=csv,noheader,nounits -lms 200 \
  >"$details/gpu_samples.csv" 2>"$details/gpu_samples.err" &
pids+=($!)

for r in $(seq "$repeats"); do
  if (($(remaining) < 120)); then
    note "time budget reached after $((r - 1)) of $repeats rounds"
    break
  fi
  log "round $r/$repeats"
  # ABBA: odd rounds alone first, even rounds loaded first (drift cancels out).
  for phase in $( ((r % 2)) && echo "alone loaded" || echo "loaded alone"); do
    if [[ $phase == loaded ]]; then
      start_load "$r"
      echo "loaded_$r $(date +%s.%N)" >>"$details/probe_windows.txt"
      probe "loaded_$r"
      stop_load
    else
      echo "alone_$r $(date +%s.%N)" >>"$details/probe_windows.txt"
      probe "alone_$r"
    fi
  done
done
stop_load

PYTHONPATH="$gpu_dir" python3 - "$details" >"$tmp/analysis.txt" 2>>"$notes" <<'PY'
import datetime, os, statistics, sys, time
from kiln_results import load
details = sys.argv[1]
fail = lambda msg: print(msg, file=sys.stderr)

probes = {}  # tag -> (rc, device_index, bus)
for line in open(os.path.join(details, "probes.txt")):
    tag, rc, dev, bus = line.split()
    probes[tag] = (int(rc), dev, bus)
windows = {}  # tag -> [start, end]
for line in open(os.path.join(details, "probe_windows.txt")):
    tag, t = line.split()
    windows.setdefault(tag, []).append(float(t))

lat = {"alone": {}, "loaded": {}}  # kind -> workload label -> [latency_ms]
for tag, (rc, dev, bus) in sorted(probes.items()):
    kind = tag.split("_")[0]
    if rc != 0:
        fail(f"probe {tag} did not pass (exit {rc}); see probe_{tag}.err")
        continue
    if dev != "0":
        fail(f"probe {tag} ran on GPU {dev}, not GPU 0 (run record device_index)")
        continue
    doc = load(os.path.join(details, f"probe_{tag}.json")) or {}
    for t in doc.get("traces", []):
        axes = (t.get("workload") or {}).get("axes") or {}
        label = ",".join(f"{k}={v}" for k, v in sorted(axes.items())) or "?"
        perf = (t.get("evaluation") or {}).get("performance") or {}
        if perf.get("latency_ms"):
            lat[kind].setdefault(label, []).append(float(perf["latency_ms"]))

loads = [l.split() for l in open(os.path.join(details, "loads.txt"))] \
    if os.path.exists(os.path.join(details, "loads.txt")) else []
wrong = [l for l in loads if len(l) >= 4 and l[3] != "1"]
if wrong:
    fail(f"{len(wrong)} load run(s) were not timed on GPU 1 (device_index {wrong[0][3]})")

# GPU 1's utilisation while each loaded probe ran.
samples = []
for line in open(os.path.join(details, "gpu_samples.csv")):
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != 3:
        continue
    try:
        stamp = datetime.datetime.strptime(parts[1], "%Y/%m/%d %H:%M:%S.%f")
        samples.append((int(parts[0]), time.mktime(stamp.timetuple()) + stamp.microsecond / 1e6,
                        float(parts[2])))
    except ValueError:
        continue
def util(gpu, kind):
    xs = [u for g, t, u in samples if g == gpu and any(
        k.startswith(kind) and len(w) == 2 and w[0] <= t <= w[1] for k, w in windows.items())]
    return (statistics.mean(xs), len(xs)) if xs else (None, 0)

print(f"probe runs: {sum(len(v) for v in lat['alone'].values())} alone / "
      f"{sum(len(v) for v in lat['loaded'].values())} loaded workload latencies; "
      f"load runs on GPU 1: {len(loads)}")
for gpu in (0, 1):
    for kind in ("alone", "loaded"):
        mean, n = util(gpu, kind)
        print(f"GPU {gpu} mean utilisation while the {kind} probes ran: "
              f"{'%.0f %%' % mean if mean is not None else 'n/a'} ({n} samples)")
mean1, n1 = util(1, "loaded")
if mean1 is None or mean1 < 50:
    fail("GPU 1 was not kept busy while the loaded probes ran: the comparison is inconclusive")
print()
print(f"{'workload':<22} {'alone median':>12} {'min':>9} {'max':>9} {'spread':>7} "
      f"{'loaded median':>13} {'min':>9} {'max':>9} {'delta':>7}  within spread?")
measured = 0
for label in sorted(set(lat["alone"]) | set(lat["loaded"])):
    a, l = lat["alone"].get(label, []), lat["loaded"].get(label, [])
    if len(a) < 2 or not l:
        fail(f"{label}: too few repeats (alone {len(a)}, loaded {len(l)})")
        continue
    measured += 1
    am, lm = statistics.median(a), statistics.median(l)
    spread = (max(a) - min(a)) / am * 100
    delta = (lm - am) / am * 100
    within = "yes" if min(a) <= lm <= max(a) else "NO"
    print(f"{label:<22} {am:12.4f} {min(a):9.4f} {max(a):9.4f} {spread:6.1f}% "
          f"{lm:13.4f} {min(l):9.4f} {max(l):9.4f} {delta:+6.1f}%  {within}")
print("(latency_ms; spread = (max - min) / median of the alone repeats; delta = loaded median "
      "vs alone median)")
if measured == 0:
    fail("no workload was measured both alone and with load")
PY
[[ -s "$tmp/analysis.txt" ]] || note "analysis produced nothing"
[[ ! -s "$notes" ]]  # the exit status: 1 if anything above failed
