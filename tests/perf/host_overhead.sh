#!/usr/bin/env bash
# Host-backend benchmarks of kiln's own overhead. Prints a report (markdown) to stdout.
#
#   (a) `kiln submit` to verdict for a trivial solution on one workload, warm compile cache,
#       next to the bare cost of the work it does, measured in-process by bare_cost (cache-hit
#       compiles + the reference's checked calls + the candidate's checked calls and timing
#       protocol). Overhead = submit wall time - bare cost.
#   (b) The same with a cold compile cache (a new source each time), next to the compiler's own
#       time for the same source and flags.
#   (c) `kiln runs list` against a harness whose archive holds 100 000 runs.
#
# Usage: tests/perf/host_overhead.sh [BUILD_DIR] [REPEATS] [ARCHIVE_RUNS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
repeats="${2:-7}"
archive_runs="${3:-100000}"
bin="$build/bin"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/kiln-perf-XXXXXX")"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

now() { date +%s.%N; }
median() { python3 -c 'import statistics,sys; print("%.4f" % statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

start_harness() {  # DATA_DIR -> prints HOST:PORT
  local out="$tmp/harness-$RANDOM.out"
  "$bin/kiln-harness" --listen 127.0.0.1:0 --data-dir "$1" --quiet >"$out" 2>&1 &
  pids+=($!)
  for _ in $(seq 100); do
    if grep -q "listening on" "$out"; then awk '/listening on/ {print $4}' "$out"; return; fi
    sleep 0.1
  done
  echo "kiln-harness did not start:" >&2; cat "$out" >&2; exit 1
}

# The trivial solution: vector_add_f32's own reference, under another name; one workload.
python3 - "$root" "$tmp" <<'EOF'
import json, sys
root, tmp = sys.argv[1], sys.argv[2]
d = json.load(open(f"{root}/harness/definitions/vector_add_f32.json"))
s = d["native_reference"]; s["name"] = "vector_add_trivial"
json.dump(s, open(f"{tmp}/solution.json", "w"))
line = open(f"{root}/harness/definitions/vector_add_f32.jsonl").readline()
open(f"{tmp}/one.jsonl", "w").write(line)
open(f"{tmp}/kernel.cc", "w").write(s["sources"][0]["content"])
EOF

addr="$(start_harness "$tmp/data")"
submit() {  # SOLUTION.json
  "$bin/kiln" --server "$addr" submit --definition vector_add_f32 --solution "$1" \
    --workloads "$tmp/one.jsonl" --json >"$tmp/last.json" 2>"$tmp/last.err"
}

echo "kiln host-backend overhead, $(date -u +%Y-%m-%d), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores" >&2
echo "(a) warm compile cache" >&2
submit "$tmp/solution.json"  # fills the compile cache and the reference-latency cache
warm=()
for _ in $(seq "$repeats"); do
  t0=$(now); submit "$tmp/solution.json"; t1=$(now)
  warm+=("$(python3 -c "print($t1 - $t0)")")
done
bare_json="$("$bin/bare_cost" vector_add_f32 0 "$tmp/solution.json" official "$repeats")"
read -r hit ref_verify cand compiler_cold < <(python3 -c '
import json,sys; b=json.loads(sys.argv[1])
print(b["compile_hit_s"], b["reference_verify_s"], b["candidate_s"], b["compile_cold_s"])' "$bare_json")
warm_med="$(median "${warm[@]}")"
bare_warm="$(python3 -c "print('%.4f' % (2 * $hit + $ref_verify + $cand))")"

echo "(b) cold compile cache" >&2
cold=()
gxx=()
for i in $(seq "$repeats"); do
  python3 - "$tmp" "$i" <<'EOF'
import json, sys
tmp, i = sys.argv[1], sys.argv[2]
s = json.load(open(f"{tmp}/solution.json"))
s["name"] = f"vector_add_cold_{i}"
s["sources"][0]["content"] += f"\n// variant {i}\n"
json.dump(s, open(f"{tmp}/cold.json", "w"))
open(f"{tmp}/kernel_{i}.cc", "w").write(s["sources"][0]["content"])
EOF
  t0=$(now); submit "$tmp/cold.json"; t1=$(now)
  cold+=("$(python3 -c "print($t1 - $t0)")")
  t0=$(now)
  g++ -O3 -march=native -shared -fPIC -std=c++17 -I"$root/harness/include" \
    "$tmp/kernel_$i.cc" -o "$tmp/k_$i.so"
  t1=$(now)
  gxx+=("$(python3 -c "print($t1 - $t0)")")
done
cold_med="$(median "${cold[@]}")"
gxx_med="$(median "${gxx[@]}")"
bare_cold="$(python3 -c "print('%.4f' % ($gxx_med + $hit + $ref_verify + $cand))")"

echo "(c) runs list over $archive_runs archived runs" >&2
"$bin/populate_archive" "$tmp/big" "$archive_runs" >&2
big="$(start_harness "$tmp/big")"
list_times=()
def_times=()
status_times=()
"$bin/kiln" --server "$big" runs list >/dev/null  # first touch of the database pages
for _ in $(seq "$repeats"); do
  t0=$(now); "$bin/kiln" --server "$big" runs list >/dev/null; t1=$(now)
  list_times+=("$(python3 -c "print($t1 - $t0)")")
  t0=$(now); "$bin/kiln" --server "$big" runs list --definition gemm_n4096_k4096 --limit 50 >/dev/null; t1=$(now)
  def_times+=("$(python3 -c "print($t1 - $t0)")")
  t0=$(now); "$bin/kiln" --server "$big" runs list --status INCORRECT_NUMERICAL >/dev/null; t1=$(now)
  status_times+=("$(python3 -c "print($t1 - $t0)")")
done
true_times=()
for _ in $(seq "$repeats"); do
  t0=$(now); "$bin/kiln" --help >/dev/null; t1=$(now)
  true_times+=("$(python3 -c "print($t1 - $t0)")")
done

ms() { python3 -c "print('%.1f' % (1000 * $1))"; }
cat <<EOF
| measurement (median of $repeats) | seconds |
|---|---|
| (a) submit → verdict, warm cache | $warm_med |
| (a) bare cost in-process: 2 cache-hit compiles + reference checked calls + candidate calls and official protocol | $bare_warm |
| (a) **overhead** | $(python3 -c "print('%.4f' % ($warm_med - $bare_warm))") |
| (b) submit → verdict, cold cache | $cold_med |
| (b) g++ alone on the same source and flags | $gxx_med |
| (b) bare cost with the compile (g++ + the rest of (a)'s bare cost) | $bare_cold |
| (b) **overhead** | $(python3 -c "print('%.4f' % ($cold_med - $bare_cold))") |
| (c) \`kiln runs list\` (50 newest) over $archive_runs runs | $(median "${list_times[@]}") |
| (c) \`kiln runs list --definition gemm_n4096_k4096\` | $(median "${def_times[@]}") |
| (c) \`kiln runs list --status INCORRECT_NUMERICAL\` | $(median "${status_times[@]}") |
| (c) \`kiln --help\` (process start, no RPC) for comparison | $(median "${true_times[@]}") |
EOF
