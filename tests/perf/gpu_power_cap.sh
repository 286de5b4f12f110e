#!/usr/bin/env bash
# A KernelBench problem submitted as its own candidate (twice), with the GPU's clocks, power and
# clock-event reasons sampled every 50 ms beside it: whether a self-speedup away from 1x is the
# board capping its clocks while one role was timed. Reads the GPU only (nvidia-smi queries);
# changes no clock or power setting.
#
#   tests/perf/gpu_power_cap.sh BUNDLE_DIR KERNELBENCH_DIR OUT_DIR [DEFINITION]
#
# DEFINITION defaults to kernelbench_l1_11_4D_tensor_matrix_multiplication (a 10 ms fp32 GEMM).
# OUT_DIR gets smi.csv (the samples), floor/ (gpu_kernelbench_floor.py --samples: floor.jsonl
# with each run's slow samples, details/samples/ with the raw ones) and summary.txt: the
# self-speedups, the slow samples of each role, and the intervals during which a power or
# thermal reason was active, with the lowest SM clock in each.
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 BUNDLE_DIR KERNELBENCH_DIR OUT_DIR [DEFINITION]" >&2
  exit 2
fi
bundle="$(cd "$1" && pwd)"
kernelbench="$(cd "$2" && pwd)"
mkdir -p "$3"
out="$(cd "$3" && pwd)"
definition="${4:-kernelbench_l1_11_4D_tensor_matrix_multiplication}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 50 >"$out/smi.csv" 2>&1 &
smi=$!
trap 'kill "$smi" 2>/dev/null || true' EXIT
timeout 300 python3 "$here/gpu_kernelbench_floor.py" "$bundle" "$kernelbench" "$out/floor" \
  --modes kernelbench --budget-s 240 --samples --repeat 2 --only "$definition" \
  >"$out/floor_stdout.txt" 2>&1 || echo "gpu_kernelbench_floor.py exited $?" >>"$out/summary.txt"
kill "$smi" 2>/dev/null || true
wait "$smi" 2>/dev/null || true

python3 - "$out" >>"$out/summary.txt" <<'PY'
import json, os, sys
out = sys.argv[1]
# NVML clock-event reasons that lower the clocks for power or heat.
CAPS = {0x4: "SW power cap", 0x8: "HW slowdown", 0x20: "SW thermal slowdown",
        0x40: "HW thermal slowdown", 0x80: "HW power brake"}
try:
    with open(os.path.join(out, "floor", "floor.jsonl")) as f:
        for line in f:
            e = json.loads(line)
            print(f"{e['definition']} {e.get('status')} speedup {e.get('speedup')}")
            for role, s in (e.get("samples") or {}).items():
                print(f"  {role}: {s['count']} samples, median {s['median_ms']} ms, mean "
                      f"{s['mean_ms']} ms, over 1.05 x median: {s['slow']}")
except OSError as err:
    print(f"no floor.jsonl: {err}")
episodes, current = [], None
with open(os.path.join(out, "smi.csv"), errors="replace") as f:
    for line in f:
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 7 or not cells[6].startswith("0x"):
            continue
        reasons = int(cells[6], 16)
        names = [n for bit, n in CAPS.items() if reasons & bit]
        mhz = int(cells[1].split()[0]) if cells[1].split()[0].isdigit() else None
        if names:
            if current is None:
                current = {"from": cells[0], "to": cells[0], "reasons": set(names), "min_mhz": mhz}
            else:
                current["to"] = cells[0]
                current["reasons"].update(names)
                if mhz is not None and (current["min_mhz"] is None or mhz < current["min_mhz"]):
                    current["min_mhz"] = mhz
        elif current is not None:
            episodes.append(current)
            current = None
if current is not None:
    episodes.append(current)
print(f"{len(episodes)} interval(s) with a power or thermal clock-event reason active:")
for ep in episodes:
    print(f"  {ep['from']} .. {ep['to']}: {', '.join(sorted(ep['reasons']))}; SM clock down to "
          f"{ep['min_mhz']} MHz")
PY
cat "$out/summary.txt"
