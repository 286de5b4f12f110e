#!/usr/bin/env bash
# Load test: CLIENTS concurrent clients x RUNS submissions each (default 8 x 50) against one
# kiln-harness on loopback (host backend, a C++ vector_add_f32 solution, one workload). Checks
# that no run is lost (every submission ends with a final PASSED Run, and the archive holds
# exactly CLIENTS x RUNS finished runs), that the harness survives, and samples its RSS every
# 0.5 s. Prints a markdown report; exits non-zero on any lost run, crash or RSS above
# MAX_RSS_MB (default 1024).
#
#   tests/perf/load_test.sh [BUILD_DIR] [CLIENTS] [RUNS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
clients="${2:-8}"
runs="${3:-50}"
max_rss_mb="${MAX_RSS_MB:-1024}"
bin="$build/bin"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/kiln-load-XXXXXX")"
harness_pid=""
sampler_pid=""
cleanup() {
  [[ -n "$sampler_pid" ]] && kill "$sampler_pid" 2>/dev/null || true
  [[ -n "$harness_pid" ]] && kill "$harness_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

"$bin/kiln-harness" --listen 127.0.0.1:0 --data-dir "$tmp/data" --backend host \
  --mode kernelbench --max-queue 64 --metrics-listen 127.0.0.1:0 >"$tmp/harness.out" \
  2>"$tmp/harness.err" &
harness_pid=$!
for _ in $(seq 300); do
  grep -q "listening on" "$tmp/harness.out" && break
  sleep 0.1
done
address="$(awk '/listening on/ {print $4}' "$tmp/harness.out")"
[[ -n "$address" ]] || { echo "kiln-harness did not start:"; cat "$tmp/harness.err"; exit 1; }
metrics="$(grep -o 'metrics=[0-9.:]*' "$tmp/harness.err" | head -1 | cut -d= -f2)"

rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$harness_pid/status" 2>/dev/null || echo 0; }
rss_start_kb="$(rss_kb)"
( while kill -0 "$harness_pid" 2>/dev/null; do rss_kb; sleep 0.5; done ) >"$tmp/rss.txt" &
sampler_pid=$!

set +e
"$bin/load_client" --server "$address" --clients "$clients" --runs "$runs" >"$tmp/client.txt"
client_rc=$?
set -e
alive=yes
kill -0 "$harness_pid" 2>/dev/null || alive=no
rss_end_kb="$(rss_kb)"
kill "$sampler_pid" 2>/dev/null || true
sampler_pid=""

archived="$("$bin/kiln" --server "$address" runs list --json --limit 1000 |
  python3 -c 'import json,sys; r=json.load(sys.stdin).get("runs",[]); print(len(r), sum(x["state"]=="RUN_DONE" for x in r))')"
scrape=""
if [[ -n "$metrics" ]]; then
  scrape="$(python3 -c 'import sys,urllib.request; print(urllib.request.urlopen("http://"+sys.argv[1]+"/metrics").read().decode())' "$metrics" |
    grep -E '^kiln_(runs_finished_total|queue_depth|runs_refused_total)' || true)"
fi
peak_kb="$(sort -n "$tmp/rss.txt" | tail -1)"
peak_kb="${peak_kb:-0}"

cat <<REPORT
## kiln-harness load test

- date: $(date -u +%Y-%m-%dT%H:%MZ)
- machine: $(nproc) CPU cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))
- command: tests/perf/load_test.sh BUILD_DIR $clients $runs
- load: $clients concurrent clients x $runs submissions, host backend, kernelbench mode,
  vector_add_f32 (n = 4096), one workload per run

| measure | value |
|---|---|
| client | $(cat "$tmp/client.txt" | head -1) |
| archived runs (total, DONE) | $archived |
| harness alive after the load | $alive |
| harness RSS at start | $((rss_start_kb / 1024)) MiB |
| harness RSS peak (0.5 s samples) | $((peak_kb / 1024)) MiB |
| harness RSS at end | $((rss_end_kb / 1024)) MiB |

\`\`\`
$(tail -n +2 "$tmp/client.txt")
$scrape
\`\`\`
REPORT

expected="$((clients * runs)) $((clients * runs))"
if [[ $client_rc -ne 0 || "$alive" != yes || "$archived" != "$expected" ||
      $((peak_kb / 1024)) -gt $max_rss_mb ]]; then
  echo "LOAD TEST FAILED (client rc $client_rc, alive $alive, archived '$archived', expected '$expected')"
  exit 1
fi
echo "load test passed"
