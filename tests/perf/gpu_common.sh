# Shared by the tests/perf/gpu_*.sh benchmarks (sourced, not run). Expects BUNDLE_DIR and OUT_DIR
# as $1 and $2 of the caller and sets: bundle, out, bin, kiln, gpu_dir, results, tmp, details.
# Every benchmark writes OUT_DIR/report.md and OUT_DIR/details.tar.gz and is bounded by its own
# budget (budget_s, seconds); cleanup() stops what it started.

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUNDLE_DIR OUT_DIR [options]" >&2
  exit 2
fi
started=$(date +%s)
bundle="$(cd "$1" && pwd)" || exit 2
mkdir -p "$2" && out="$(cd "$2" && pwd)" || exit 2
bin="$bundle/bin"
kiln="$bin/kiln"
perf_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
gpu_dir="$perf_dir/../gpu"
[[ -d "$gpu_dir/solutions" ]] || gpu_dir="$bundle/share/kiln/gpu"
gpu_dir="$(cd "$gpu_dir" && pwd)" || { echo "tests/gpu not found" >&2; exit 2; }
results="python3 $gpu_dir/kiln_results.py"
export PATH="$bin:$PATH"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/kiln-gpu-perf-XXXXXX")"
details="$tmp/details"
mkdir -p "$details"
pids=()
harness_pid=""
addr=""

now() { date +%s.%N; }
elapsed() { echo $(($(date +%s) - started)); }
remaining() { echo $((budget_s - $(elapsed))); }
log() { echo "[$(elapsed)s] $*" >&2; }
median() {  # VALUES... -> the median with 3 decimals, or n/a
  python3 -c 'import statistics, sys
v = [float(x) for x in sys.argv[1:]]
print("%.3f" % statistics.median(v) if v else "n/a")' "$@"
}
seconds_between() {  # START END (epoch seconds) -> END - START
  python3 -c "import sys; print('%.3f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$1" "$2"
}

start_harness() {  # WORKER_TIMEOUT_S -> sets addr and harness_pid; 1 if it did not start
  local hlog="$details/harness.log"
  # shellcheck disable=SC2086  # HARNESS_EXTRA_FLAGS: more flags, split on spaces
  "$bin/kiln-harness" --listen 127.0.0.1:0 --data-dir "$tmp/data" --backend cuda \
    --worker-timeout-s "$1" ${HARNESS_EXTRA_FLAGS:-} >"$hlog" 2>&1 &
  harness_pid=$!
  for _ in $(seq 300); do
    if grep -q "listening on" "$hlog"; then
      addr=$(sed -n 's/.*listening on \([^ ]*\).*/\1/p' "$hlog" | head -1)
      log "kiln-harness on $addr"
      return 0
    fi
    kill -0 "$harness_pid" 2>/dev/null || break
    sleep 0.1
  done
  log "kiln-harness did not start:"
  tail -20 "$hlog" >&2
  return 1
}

stop_pid() {
  kill -TERM "$1" 2>/dev/null || return 0
  for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}

# Writes the report and the details, stops everything this script started. The caller's EXIT
# trap runs it; report_body (a function the caller defines) prints the report.
cleanup() {
  local rc=$?
  for p in "${pids[@]}"; do stop_pid "$p"; done
  [[ -n "$harness_pid" ]] && stop_pid "$harness_pid"
  {
    report_body 2>&1
    echo
    echo "($(elapsed) s, $(date -u +%Y-%m-%dT%H:%M:%SZ))"
  } >"$out/report.md"
  tar -czf "$out/details.tar.gz" -C "$tmp" details 2>/dev/null || echo "tar of details failed" >&2
  cat "$out/report.md"
  rm -rf "$tmp"
  exit "$rc"
}

# A solution.json of tests/gpu/solutions/NAME retargeted to DEFINITION, renamed, with a comment
# line appended so its sources hash differently for each TAG ("" keeps the source unchanged).
variant() {  # NAME DEFINITION TAG OUT.json
  python3 - "$gpu_dir/solutions/$1/solution.json" "$2" "$3" "$4" <<'EOF'
import json, sys
src, definition, tag, out = sys.argv[1:]
doc = json.load(open(src))
doc["definition"] = definition
doc["name"] = f"{doc['name']}_{tag}" if tag else doc["name"]
if tag:
    doc["sources"][0]["content"] += f"\n// variant {tag}\n"
json.dump(doc, open(out, "w"), indent=1)
EOF
}
